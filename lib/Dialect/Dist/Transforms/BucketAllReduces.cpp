//===- BucketAllReduces.cpp - Fewer, larger all-reduces ---------*- C++ -*-===//
//
// Part of the dnnc project.
//
//===----------------------------------------------------------------------===//
//
// Implements `dist-bucket-all-reduces`: independent all-reduces of a block
// over the same device group become buckets, each one all-reduce of the
// concatenation of its members.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Dialect/Dist/IR/DistOps.h"
#include "dnnc/Dialect/Dist/Transforms/Passes.h"
#include "dnnc/Dialect/Dnn/IR/Dnn.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/MapVector.h"

#include <limits>
#include <tuple>

namespace dnnc::dist {
#define GEN_PASS_DEF_BUCKETALLREDUCESPASS
#include "dnnc/Dialect/Dist/Transforms/Passes.h.inc"
} // namespace dnnc::dist

using namespace mlir;
using namespace dnnc::dist;

namespace {
/// An all-reduce that may join a bucket.
struct Member {
  /// The op.
  AllReduceOp op;
  /// Position in the block of its operand's definition (0: defined before
  /// the block).
  unsigned defined;
  /// Position in the block of the first op that reads its result.
  unsigned firstUse;
  /// Bytes of its operand.
  int64_t bytes;
};

/// Merges the all-reduces of one block; see the pass description.
class BlockBucketer {
public:
  /// Prepares to bucket `block` into buckets of at most `capBytes`.
  BlockBucketer(Block &block, int64_t capBytes)
      : block(block), capBytes(capBytes) {}

  /// Rewrites the block.
  void run();

private:
  /// Replaces the members of `bucket` (two or more) by one all-reduce of
  /// their concatenation, before the first op reading one of them.
  void emit(ArrayRef<Member> bucket);

  Block &block;
  int64_t capBytes;
  /// Position of each op of the block.
  llvm::DenseMap<Operation *, unsigned> position;
  /// The op at each position.
  SmallVector<Operation *> ops;
};
} // namespace

void BlockBucketer::run() {
  for (Operation &op : block) {
    position[&op] = ops.size();
    ops.push_back(&op);
  }
  SmallVector<SmallVector<Member>> buckets;
  // Candidates by device group, kind and element type, in block order.
  using Key = std::tuple<Attribute, Attribute, Attribute, Type>;
  llvm::MapVector<Key, SmallVector<Member>> candidates;
  for (Operation *op : ops) {
    auto reduce = dyn_cast<AllReduceOp>(op);
    if (!reduce)
      continue;
    auto type = cast<RankedTensorType>(reduce.getType());
    if (!type.hasStaticShape())
      continue;
    unsigned defined = 0;
    if (Operation *def = reduce.getInput().getDefiningOp())
      if (Operation *inBlock = block.findAncestorOpInBlock(*def))
        // (The result of another all-reduce counts as known only here:
        // it may join no bucket with the one it reads.)
        defined = isa<AllReduceOp>(inBlock) ? position.lookup(op)
                                             : position.lookup(inBlock);
    unsigned firstUse = std::numeric_limits<unsigned>::max();
    for (Operation *user : reduce->getUsers())
      if (Operation *inBlock = block.findAncestorOpInBlock(*user))
        firstUse = std::min(firstUse, position.lookup(inBlock));
    if (firstUse == std::numeric_limits<unsigned>::max())
      continue;
    int64_t bytes = type.getNumElements() *
                    ((type.getElementTypeBitWidth() + 7) / 8);
    candidates[{reduce.getMeshAttr(), reduce.getAxesAttr(),
                reduce.getKindAttr(), type.getElementType()}]
        .push_back({reduce, defined, firstUse, bytes});
  }
  for (auto &entry : candidates) {
    SmallVector<Member> &members = entry.second;
    // In the order the operands are computed: a bucket is issued once its
    // last operand is known, before its first reader.
    llvm::stable_sort(members, [](const Member &a, const Member &b) {
      return a.defined < b.defined;
    });
    SmallVector<Member> bucket;
    unsigned lastDefined = 0, firstUse = 0;
    int64_t bytes = 0;
    for (const Member &member : members) {
      if (!bucket.empty() &&
          (std::max(lastDefined, member.defined) >=
               std::min(firstUse, member.firstUse) ||
           bytes + member.bytes > capBytes)) {
        if (bucket.size() > 1)
          buckets.push_back(bucket);
        bucket.clear();
      }
      if (bucket.empty()) {
        lastDefined = member.defined;
        firstUse = member.firstUse;
        bytes = 0;
      }
      bucket.push_back(member);
      lastDefined = std::max(lastDefined, member.defined);
      firstUse = std::min(firstUse, member.firstUse);
      bytes += member.bytes;
    }
    if (bucket.size() > 1)
      buckets.push_back(bucket);
  }
  // Built in the order of their places: a bucket placed before an
  // all-reduce of a later bucket reads its members before it goes.
  auto place = [](ArrayRef<Member> bucket) {
    unsigned at = std::numeric_limits<unsigned>::max();
    for (const Member &member : bucket)
      at = std::min(at, member.firstUse);
    return at;
  };
  llvm::stable_sort(buckets, [&](const SmallVector<Member> &a,
                                 const SmallVector<Member> &b) {
    return place(a) < place(b);
  });
  for (const SmallVector<Member> &bucket : buckets)
    emit(bucket);
}

void BlockBucketer::emit(ArrayRef<Member> bucket) {
  unsigned firstUse = std::numeric_limits<unsigned>::max();
  for (const Member &member : bucket)
    firstUse = std::min(firstUse, member.firstUse);
  AllReduceOp first = bucket.front().op;
  OpBuilder b(ops[firstUse]);
  Location loc = first.getLoc();
  Type element = getElementTypeOrSelf(first.getType());
  SmallVector<Value> flat;
  int64_t total = 0;
  for (Member member : bucket) {
    auto type = cast<RankedTensorType>(member.op.getType());
    flat.push_back(dnnc::dnn::ReshapeOp::create(
        b, loc, RankedTensorType::get({type.getNumElements()}, element),
        member.op.getInput()));
    total += type.getNumElements();
  }
  auto whole = RankedTensorType::get({total}, element);
  Value joined = dnnc::dnn::ConcatOp::create(b, loc, whole, flat,
                                             b.getI64IntegerAttr(0));
  Value reduced =
      AllReduceOp::create(b, loc, whole, joined, first.getKindAttr(),
                          first.getMeshAttr(), first.getAxesAttr());
  int64_t offset = 0;
  for (Member member : bucket) {
    auto type = cast<RankedTensorType>(member.op.getType());
    int64_t count = type.getNumElements();
    Value part = dnnc::dnn::SliceOp::create(
        b, loc, RankedTensorType::get({count}, element), reduced,
        b.getDenseI64ArrayAttr({offset}), b.getDenseI64ArrayAttr({1}));
    Value result = dnnc::dnn::ReshapeOp::create(b, loc, type, part);
    member.op.getResult().replaceAllUsesWith(result);
    member.op.erase();
    offset += count;
  }
}

namespace {
/// dist-bucket-all-reduces (see Passes.td).
struct BucketAllReducesPass
    : public dnnc::dist::impl::BucketAllReducesPassBase<BucketAllReducesPass> {
  using Base::Base;

  /// Buckets every block holding two or more all-reduces.
  void runOnOperation() override {
    if (bucketBytes <= 0)
      return;
    SmallVector<Block *> blocks;
    getOperation()->walk([&](Block *block) {
      if (llvm::range_size(block->getOps<AllReduceOp>()) > 1)
        blocks.push_back(block);
    });
    for (Block *block : blocks)
      BlockBucketer(*block, bucketBytes).run();
  }
};
} // namespace
