//===- CollectivesToRuntime.cpp - dist collectives as calls -*- C++ -*-===//
//
// Implements dnn-collectives-to-runtime: per-rank dist collectives become
// calls of the runtime's collective kernels, with buffers handed over through
// bufferization.to_buffer / to_tensor so one-shot bufferization keeps them;
// dist.shard_slice becomes a tensor.extract_slice at offsets computed from
// the rank's group indices (dnnc_rt_group_index).
//
//===----------------------------------------------------------------------===//

#include "dnnc/Dialect/Dist/IR/DistOps.h"
#include "dnnc/Target/Common/Passes.h"
#include "dnnc/Target/Common/RuntimeABI.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/DenseMap.h"

namespace dnnc {
#define GEN_PASS_DEF_COLLECTIVESTORUNTIMEPASS
#include "dnnc/Target/Common/Passes.h.inc"
} // namespace dnnc

using namespace mlir;
namespace dist = dnnc::dist;

namespace {
/// Emits the runtime calls of one module's collectives.
class CollectiveLowering {
public:
  /// Lowers in `module`, calling the collective kernels `<prefix>_all_reduce`,
  /// ... (`dnnc_rt` on cpu, `dnnc_rt_cuda` on cuda).
  CollectiveLowering(ModuleOp module, StringRef prefix)
      : module(module), prefix(prefix.str()) {}

  /// Lowers `op`; emits an error and fails when it cannot.
  LogicalResult lower(Operation *op);

  /// Lowers `op` to a slice at this rank's block offsets; emits an error and
  /// fails when it cannot.
  LogicalResult lowerShardSlice(dist::ShardSliceOp op);

  /// Lowers `op` to the extract_slice of the running micro-batch's block
  /// (`dnnc_rt_microbatch_index`).
  LogicalResult lowerMicrobatchSlice(dist::MicrobatchSliceOp op);

private:
  /// The bit mask of `axes` in `mesh`, or failure (with an error) when
  /// `ordered` is requested and the axes are not in mesh order.
  FailureOr<int64_t> axesMask(Operation *op, dist::MeshOp mesh, ArrayAttr axes,
                              bool ordered);
  /// Declares (once) the runtime kernel `name` with `argTypes` and
  /// `resultTypes`.
  func::FuncOp getKernel(StringRef name, TypeRange argTypes,
                         TypeRange resultTypes = {});
  /// Address of the first element of the buffer `memref`, as an index.
  Value address(OpBuilder &b, Location loc, Value memref);

  ModuleOp module;
  /// Prefix of the collective kernels' names.
  std::string prefix;
  SymbolTableCollection symbols;
};
} // namespace

FailureOr<int64_t> CollectiveLowering::axesMask(Operation *op,
                                                dist::MeshOp mesh,
                                                ArrayAttr axes, bool ordered) {
  int64_t mask = 0;
  int64_t last = -1;
  for (auto name : axes.getAsRange<StringAttr>()) {
    std::optional<unsigned> index = mesh.getAxisIndex(name);
    if (!index)
      return op->emitOpError("axis '")
             << name.getValue() << "' is not an axis of the mesh";
    if (ordered && static_cast<int64_t>(*index) <= last)
      return op->emitOpError("gathers and scatters over several axes must "
                             "list them in mesh order");
    last = *index;
    mask |= int64_t(1) << *index;
  }
  return mask;
}

func::FuncOp CollectiveLowering::getKernel(StringRef name, TypeRange argTypes,
                                           TypeRange resultTypes) {
  return dnnc::getOrDeclareRuntimeKernel(
      module, name,
      FunctionType::get(module.getContext(), argTypes, resultTypes));
}

Value CollectiveLowering::address(OpBuilder &b, Location loc, Value memref) {
  return memref::ExtractAlignedPointerAsIndexOp::create(b, loc, memref);
}

/// Product of `shape[begin, end)`.
static int64_t product(ArrayRef<int64_t> shape, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < end; ++i)
    p *= shape[i];
  return p;
}

LogicalResult CollectiveLowering::lower(Operation *op) {
  auto meshRef = op->getAttrOfType<FlatSymbolRefAttr>("mesh");
  auto axes = op->getAttrOfType<ArrayAttr>("axes");
  auto mesh = symbols.lookupNearestSymbolFrom<dist::MeshOp>(op, meshRef);
  if (!mesh)
    return op->emitOpError("mesh ") << meshRef << " not found";
  Value input = op->getOperand(0);
  auto inType = cast<RankedTensorType>(input.getType());
  auto outType = cast<RankedTensorType>(op->getResult(0).getType());
  if (!inType.hasStaticShape() || !outType.hasStaticShape())
    return op->emitOpError("needs statically shaped tensors");
  int32_t dtype = dnnc::getONNXDataType(inType.getElementType());
  if (dtype < 0)
    return op->emitOpError("element type ")
           << inType.getElementType() << " has no runtime data type code";
  bool ordered =
      isa<dist::AllGatherOp, dist::ReduceScatterOp, dist::AllToAllOp>(op);
  FailureOr<int64_t> mask = axesMask(op, mesh, axes, ordered);
  if (failed(mask))
    return failure();

  OpBuilder b(op);
  Location loc = op->getLoc();
  Type i32 = b.getI32Type(), i64 = b.getI64Type(), index = b.getIndexType();
  auto c64 = [&](int64_t v) -> Value {
    return arith::ConstantIntOp::create(b, loc, v, 64);
  };
  auto c32 = [&](int64_t v) -> Value {
    return arith::ConstantIntOp::create(b, loc, v, 32);
  };
  auto inMemref = MemRefType::get(inType.getShape(), inType.getElementType());
  auto outMemref =
      MemRefType::get(outType.getShape(), outType.getElementType());
  Value inBuf = bufferization::ToBufferOp::create(b, loc, inMemref, input,
                                                  /*read_only=*/true);
  Value outBuf =
      memref::AllocOp::create(b, loc, outMemref, b.getI64IntegerAttr(64));
  Value pin = address(b, loc, inBuf), pout = address(b, loc, outBuf);

  if (auto ar = dyn_cast<dist::AllReduceOp>(op)) {
    auto kernel =
        getKernel(prefix + "_all_reduce", {i64, i32, i32, index, index, i64});
    func::CallOp::create(b, loc, kernel,
                         ValueRange{c64(*mask), c32(dtype),
                                    c32(static_cast<int32_t>(ar.getKind())),
                                    pin, pout, c64(inType.getNumElements())});
  } else if (auto ag = dyn_cast<dist::AllGatherOp>(op)) {
    int64_t dim = ag.getGatherDimAttr().getInt();
    ArrayRef<int64_t> shape = inType.getShape();
    auto kernel =
        getKernel(prefix + "_all_gather", {i64, i32, index, index, i64, i64});
    func::CallOp::create(b, loc, kernel,
                         ValueRange{c64(*mask), c32(dtype), pin, pout,
                                    c64(product(shape, 0, dim)),
                                    c64(product(shape, dim, shape.size()))});
  } else if (auto rs = dyn_cast<dist::ReduceScatterOp>(op)) {
    int64_t dim = rs.getScatterDimAttr().getInt();
    ArrayRef<int64_t> shape = outType.getShape();
    auto kernel = getKernel(prefix + "_reduce_scatter",
                            {i64, i32, i32, index, index, i64, i64});
    func::CallOp::create(b, loc, kernel,
                         ValueRange{c64(*mask), c32(dtype),
                                    c32(static_cast<int32_t>(rs.getKind())),
                                    pin, pout, c64(product(shape, 0, dim)),
                                    c64(product(shape, dim, shape.size()))});
  } else if (auto bc = dyn_cast<dist::BroadcastOp>(op)) {
    // The kernel broadcasts in place: start from a copy of the input.
    memref::CopyOp::create(b, loc, inBuf, outBuf);
    auto kernel = getKernel(prefix + "_broadcast", {i64, i32, index, i64, i64});
    func::CallOp::create(b, loc, kernel,
                         ValueRange{c64(*mask), c32(dtype), pout,
                                    c64(inType.getNumElements()),
                                    c64(bc.getRootAttr().getInt())});
  } else if (auto a2a = dyn_cast<dist::AllToAllOp>(op)) {
    // Blocks of shape T = S with T[split] = S[split] / G (Kernels.h).
    int64_t split = a2a.getSplitDimAttr().getInt();
    int64_t concat = a2a.getConcatDimAttr().getInt();
    ArrayRef<int64_t> shape = inType.getShape();
    SmallVector<int64_t> block(shape);
    block[split] /=
        mesh.getGroupSize(llvm::to_vector(axes.getAsRange<StringAttr>()));
    auto kernel = getKernel(prefix + "_all_to_all",
                            {i64, i32, index, index, i64, i64, i64});
    func::CallOp::create(b, loc, kernel,
                         ValueRange{c64(*mask), c32(dtype), pin, pout,
                                    c64(product(shape, 0, split)),
                                    c64(product(block, split, block.size())),
                                    c64(product(block, concat, block.size()))});
  } else {
    return op->emitOpError("has no runtime lowering yet");
  }
  Value result = bufferization::ToTensorOp::create(
      b, loc, outType, outBuf, /*restrict=*/true, /*writable=*/true);
  op->getResult(0).replaceAllUsesWith(result);
  op->erase();
  return success();
}

/// Replaces `op`'s result with a `tensor.empty` when it is a statically
/// shaped tensor with no elements (a zero extent): every rank has the same
/// local type, so all of them skip the collective together, and there is
/// nothing to send or to slice (`tensor.extract_slice` accepts no static
/// offset into a zero extent, the runtime's kernels no empty block). Returns
/// true when it did.
static bool replaceEmptyResult(Operation *op) {
  auto outType = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  if (!outType || !outType.hasStaticShape() || outType.getNumElements() != 0)
    return false;
  OpBuilder b(op);
  Value empty = tensor::EmptyOp::create(b, op->getLoc(), outType.getShape(),
                                        outType.getElementType());
  op->getResult(0).replaceAllUsesWith(empty);
  op->erase();
  return true;
}

LogicalResult CollectiveLowering::lowerShardSlice(dist::ShardSliceOp op) {
  dist::ShardingAttr sharding = op.getSharding();
  auto mesh =
      symbols.lookupNearestSymbolFrom<dist::MeshOp>(op, sharding.getMesh());
  if (!mesh)
    return op.emitOpError("mesh ") << sharding.getMesh() << " not found";
  RankedTensorType inType = op.getInput().getType();
  RankedTensorType outType = op.getType();
  if (!inType.hasStaticShape() || !outType.hasStaticShape())
    return op.emitOpError("needs statically shaped tensors");

  OpBuilder b(op);
  Location loc = op.getLoc();
  Type i64 = b.getI64Type(), index = b.getIndexType();
  auto cIndex = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  // This rank's coordinate on each mesh axis, queried once per op: its index
  // in the group spanning that axis alone.
  llvm::SmallDenseMap<unsigned, Value> coordinates;
  auto coordinate = [&](unsigned axis) -> Value {
    Value &c = coordinates[axis];
    if (!c) {
      func::FuncOp kernel = getKernel("dnnc_rt_group_index", {i64}, {i64});
      Value mask = arith::ConstantIntOp::create(b, loc, int64_t(1) << axis, 64);
      Value got = func::CallOp::create(b, loc, kernel, mask).getResult(0);
      c = arith::IndexCastOp::create(b, loc, index, got);
    }
    return c;
  };

  SmallVector<OpFoldResult> offsets, sizes, strides;
  for (int64_t dim = 0, rank = inType.getRank(); dim < rank; ++dim) {
    int64_t extent = outType.getDimSize(dim);
    sizes.push_back(b.getIndexAttr(extent));
    strides.push_back(b.getIndexAttr(1));
    // The block number: the coordinates on the dim's axes, row-major with
    // the first listed axis the most significant. Axes of size 1 add
    // nothing (their coordinate is 0).
    Value block;
    for (StringAttr name : sharding.getDimAxes(dim)) {
      std::optional<unsigned> axis = mesh.getAxisIndex(name);
      if (!axis)
        return op.emitOpError("axis '")
               << name.getValue() << "' is not an axis of the mesh";
      int64_t size = mesh.getAxis(*axis).getSize();
      if (size == 1)
        continue;
      Value c = coordinate(*axis);
      block = block ? arith::AddIOp::create(
                          b, loc,
                          arith::MulIOp::create(b, loc, block, cIndex(size)), c)
                    : c;
    }
    if (!block)
      offsets.push_back(b.getIndexAttr(0));
    else if (extent == 1)
      offsets.push_back(block);
    else
      offsets.push_back(
          arith::MulIOp::create(b, loc, block, cIndex(extent)).getResult());
  }
  Value slice = tensor::ExtractSliceOp::create(b, loc, outType, op.getInput(),
                                               offsets, sizes, strides);
  op.getResult().replaceAllUsesWith(slice);
  op.erase();
  return success();
}

LogicalResult
CollectiveLowering::lowerMicrobatchSlice(dist::MicrobatchSliceOp op) {
  RankedTensorType inType = cast<RankedTensorType>(op.getInput().getType());
  RankedTensorType outType = op.getType();
  if (!inType.hasStaticShape() || !outType.hasStaticShape())
    return op.emitOpError("needs statically shaped tensors");
  OpBuilder b(op);
  Location loc = op.getLoc();
  Type i64 = b.getI64Type();
  int64_t dim = op.getDimAttr().getInt();
  func::FuncOp kernel = getKernel("dnnc_rt_microbatch_index", {}, {i64});
  Value index = func::CallOp::create(b, loc, kernel, ValueRange()).getResult(0);
  Value offset = arith::MulIOp::create(
      b, loc, arith::IndexCastOp::create(b, loc, b.getIndexType(), index),
      arith::ConstantIndexOp::create(b, loc, outType.getDimSize(dim)));
  SmallVector<OpFoldResult> offsets(inType.getRank(), b.getIndexAttr(0));
  SmallVector<OpFoldResult> sizes, strides(inType.getRank(), b.getIndexAttr(1));
  offsets[dim] = offset;
  for (int64_t extent : outType.getShape())
    sizes.push_back(b.getIndexAttr(extent));
  Value slice = tensor::ExtractSliceOp::create(b, loc, outType, op.getInput(),
                                               offsets, sizes, strides);
  op.getResult().replaceAllUsesWith(slice);
  op.erase();
  return success();
}

namespace {
struct CollectivesToRuntimePass
    : public dnnc::impl::CollectivesToRuntimePassBase<
          CollectivesToRuntimePass> {
  using CollectivesToRuntimePassBase::CollectivesToRuntimePassBase;

  void runOnOperation() override {
    SmallVector<Operation *> ops;
    getOperation().walk([&](Operation *op) {
      if (isa<dist::AllReduceOp, dist::AllGatherOp, dist::ReduceScatterOp,
              dist::BroadcastOp, dist::AllToAllOp, dist::ShardSliceOp,
              dist::MicrobatchSliceOp>(op))
        ops.push_back(op);
    });
    CollectiveLowering lowering(getOperation(), kernelPrefix);
    for (Operation *op : ops) {
      if (replaceEmptyResult(op))
        continue;
      LogicalResult done = failure();
      if (auto slice = dyn_cast<dist::ShardSliceOp>(op))
        done = lowering.lowerShardSlice(slice);
      else if (auto slice = dyn_cast<dist::MicrobatchSliceOp>(op))
        done = lowering.lowerMicrobatchSlice(slice);
      else
        done = lowering.lower(op);
      if (failed(done))
        return signalPassFailure();
    }
    // The kernels carry the groups as axis masks: the meshes are no longer
    // referenced (the packager recorded them before lowering), nor is the
    // pipeline (the packager wrote its schedule).
    for (auto mesh :
         llvm::make_early_inc_range(getOperation().getOps<dist::MeshOp>()))
      mesh.erase();
    getOperation()->removeAttr(dist::DistDialect::getPipelineAttrName());
  }
};
} // namespace
