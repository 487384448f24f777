//===- SplitFusedProjections.cpp - one projection per slice --*- C++ -*-===//
//
// Implements dnn-split-fused-projections: a matmul by a weight whose result
// (through bias adds, other elementwise ops and reshapes that keep the last
// dimension) is only read by slices of disjoint column ranges becomes one
// matmul per slice, by the weight's columns of that slice.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Dialect/Dnn/IR/Dnn.h"
#include "dnnc/Dialect/Dnn/Transforms/Passes.h"

#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"

#include <cstring>
#include <vector>

namespace dnnc::dnn {
#define GEN_PASS_DEF_SPLITFUSEDPROJECTIONSPASS
#include "dnnc/Dialect/Dnn/Transforms/Passes.h.inc"
} // namespace dnnc::dnn

using namespace mlir;
using namespace dnnc::dnn;

/// Returns `type` with dimension `dim` of extent `size`.
static RankedTensorType withDim(RankedTensorType type, int64_t dim,
                                int64_t size) {
  SmallVector<int64_t> shape(type.getShape());
  shape[dim] = size;
  return type.clone(shape);
}

/// Returns `value`'s elements [start, start + size) along `dim` (null for
/// element types without a whole number of bytes).
static DenseElementsAttr sliceElements(DenseElementsAttr value, int64_t dim,
                                       int64_t start, int64_t size) {
  auto type = cast<RankedTensorType>(value.getType());
  RankedTensorType resultType = withDim(type, dim, size);
  if (value.isSplat())
    return value.resizeSplat(resultType);
  unsigned bits = type.getElementTypeBitWidth();
  if (bits % 8 != 0)
    return nullptr;
  ArrayRef<int64_t> shape = type.getShape();
  int64_t outer = 1, inner = bits / 8;
  for (int64_t d = 0; d < dim; ++d)
    outer *= shape[d];
  for (int64_t d = dim + 1, e = shape.size(); d < e; ++d)
    inner *= shape[d];
  ArrayRef<char> src = value.getRawData();
  std::vector<char> dst(outer * size * inner);
  for (int64_t o = 0; o < outer; ++o)
    std::memcpy(dst.data() + o * size * inner,
                src.data() + (o * shape[dim] + start) * inner, size * inner);
  return DenseElementsAttr::getFromRawBuffer(resultType, dst);
}

namespace {
/// Slices values along one dimension at compile time: constants, weight
/// arguments and broadcasts and transposes of them.
class Slicer {
public:
  explicit Slicer(func::FuncOp func) : func(func) {}

  /// Returns true if `value` can be sliced along `dim` without computing
  /// anything at run time.
  bool canSlice(Value value, int64_t dim);

  /// Returns `value`'s elements [start, start + size) along `dim` (see
  /// canSlice), built before `before`.
  Value slice(Value value, int64_t dim, int64_t start, int64_t size,
              Operation *before);

  /// Erases the constants and weight arguments that slicing left unused.
  void eraseUnused();

private:
  /// The weight argument `value` is, or null.
  BlockArgument getWeight(Value value) {
    auto arg = dyn_cast<BlockArgument>(value);
    if (!arg || arg.getOwner() != &func.getBody().front() ||
        !isWeightArgument(func, arg.getArgNumber()))
      return nullptr;
    return arg;
  }

  func::FuncOp func;
  /// The values sliced: erased by eraseUnused when nothing reads them.
  llvm::SetVector<Value> sources;
  /// The argument made for each slice (argument, dim, start, size) of a
  /// weight argument, reused by every projection that slices it so.
  llvm::DenseMap<std::tuple<Value, int64_t, int64_t, int64_t>, Value>
      argumentSlices;
};
} // namespace

bool Slicer::canSlice(Value value, int64_t dim) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type || !type.hasStaticShape())
    return false;
  if (auto constant = value.getDefiningOp<ConstantOp>()) {
    auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
    return dense && (dense.isSplat() || type.getElementTypeBitWidth() % 8 == 0);
  }
  if (BlockArgument arg = getWeight(value)) {
    auto dense = func.getArgAttrOfType<DenseElementsAttr>(arg.getArgNumber(),
                                                          kWeightAttrName);
    return !dense || dense.isSplat() || type.getElementTypeBitWidth() % 8 == 0;
  }
  if (auto transpose = value.getDefiningOp<TransposeOp>())
    return canSlice(transpose.getInput(), transpose.getPermutation()[dim]);
  if (auto broadcast = value.getDefiningOp<BroadcastInDimOp>()) {
    auto inputType = cast<RankedTensorType>(broadcast.getInput().getType());
    for (auto [i, mapped] : llvm::enumerate(broadcast.getDims()))
      if (mapped == dim && inputType.getDimSize(i) != 1)
        return canSlice(broadcast.getInput(), i);
    return inputType.hasStaticShape();
  }
  return false;
}

Value Slicer::slice(Value value, int64_t dim, int64_t start, int64_t size,
                    Operation *before) {
  auto type = cast<RankedTensorType>(value.getType());
  RankedTensorType resultType = withDim(type, dim, size);
  OpBuilder b(before);
  sources.insert(value);
  // The slice of an ONNX tensor `w` is named `w[start:end]` (its outlined
  // weight, reports and --sharding-spec see that name).
  auto sliceName = [&](StringRef name) {
    return (name + "[" + Twine(start) + ":" + Twine(start + size) + "]").str();
  };
  if (auto constant = value.getDefiningOp<ConstantOp>()) {
    DenseElementsAttr data = sliceElements(
        cast<DenseElementsAttr>(constant.getValue()), dim, start, size);
    Location loc = constant.getLoc();
    if (auto name = dyn_cast<NameLoc>(loc))
      loc = NameLoc::get(b.getStringAttr(sliceName(name.getName())));
    return ConstantOp::create(b, loc, resultType, data);
  }
  if (BlockArgument arg = getWeight(value)) {
    Value &made = argumentSlices[{value, dim, start, size}];
    if (made)
      return made;
    unsigned index = arg.getArgNumber();
    NamedAttrList attrs(func.getArgAttrDict(index));
    auto name = func.getArgAttrOfType<StringAttr>(index, kNameAttrName);
    attrs.set(kNameAttrName,
              b.getStringAttr(sliceName(name ? name.getValue() : "weight")));
    if (auto data =
            func.getArgAttrOfType<DenseElementsAttr>(index, kWeightAttrName))
      attrs.set(kWeightAttrName, sliceElements(data, dim, start, size));
    unsigned newIndex = func.getNumArguments();
    // func.func takes any argument: insertion cannot fail.
    (void)func.insertArgument(newIndex, resultType,
                              attrs.getDictionary(func.getContext()),
                              arg.getLoc());
    made = func.getArgument(newIndex);
    return made;
  }
  if (auto transpose = value.getDefiningOp<TransposeOp>()) {
    Value input = slice(transpose.getInput(), transpose.getPermutation()[dim],
                        start, size, before);
    return TransposeOp::create(b, transpose.getLoc(), input,
                               transpose.getPermutationAttr());
  }
  auto broadcast = value.getDefiningOp<BroadcastInDimOp>();
  Value input = broadcast.getInput();
  auto inputType = cast<RankedTensorType>(input.getType());
  for (auto [i, mapped] : llvm::enumerate(broadcast.getDims()))
    if (mapped == dim && inputType.getDimSize(i) != 1)
      input = slice(input, i, start, size, before);
  return BroadcastInDimOp::create(b, broadcast.getLoc(), resultType, input,
                                  broadcast.getDimsAttr());
}

void Slicer::eraseUnused() {
  llvm::BitVector unusedArgs(func.getNumArguments());
  // Until nothing changes: an op erased may leave its input unused.
  llvm::DenseSet<Value> erased;
  for (bool changed = true; changed;) {
    changed = false;
    for (Value value : sources) {
      if (erased.contains(value) || !value.use_empty())
        continue;
      erased.insert(value);
      changed = true;
      if (auto arg = dyn_cast<BlockArgument>(value))
        unusedArgs.set(arg.getArgNumber());
      else
        value.getDefiningOp()->erase();
    }
  }
  if (unusedArgs.any())
    (void)func.eraseArguments(unusedArgs);
}

/// A matmul whose columns are read only by slices: the ops from the matmul
/// to the sliced value, and the slices.
struct FusedProjection {
  MatMulOp matmul;
  /// Elementwise ops and reshapes, matmul to slices, each the only user of
  /// the value before.
  SmallVector<Operation *> chain;
  SmallVector<SliceOp> slices;
};

/// Returns the fused projection that starts at `matmul`, if it is one: its
/// right operand a [K, N] weight the slicer can cut into columns, and its
/// result, through `chain`, read only by two or more slices of disjoint
/// column ranges that keep every other dimension whole.
static std::optional<FusedProjection> matchProjection(MatMulOp matmul,
                                                      Slicer &slicer) {
  auto weightType = dyn_cast<RankedTensorType>(matmul.getRhs().getType());
  auto resultType = dyn_cast<RankedTensorType>(matmul.getType());
  if (!weightType || weightType.getRank() != 2 || !resultType ||
      !resultType.hasStaticShape() || !slicer.canSlice(matmul.getRhs(), 1))
    return std::nullopt;
  FusedProjection projection{matmul, {}, {}};
  int64_t columns = weightType.getDimSize(1);
  Value current = matmul.getResult();
  while (current.hasOneUse()) {
    Operation *user = *current.getUsers().begin();
    if (isa<SliceOp>(user) || user->getNumResults() != 1)
      break;
    auto userType = dyn_cast<RankedTensorType>(user->getResult(0).getType());
    // A reshape to a scalar has no last dimension to keep.
    if (!userType || !userType.hasStaticShape() || userType.getRank() == 0 ||
        userType.getShape().back() != columns)
      break;
    if (isa<ReshapeOp>(user)) {
      // Row-major: keeping the last extent keeps each element's column.
    } else if (user->hasTrait<OpTrait::Elementwise>() &&
               userType.getShape() ==
                   cast<RankedTensorType>(current.getType()).getShape()) {
      int64_t last = userType.getRank() - 1;
      for (Value operand : user->getOperands())
        if (operand != current && !slicer.canSlice(operand, last))
          return std::nullopt;
    } else {
      break;
    }
    projection.chain.push_back(user);
    current = user->getResult(0);
  }
  auto currentType = cast<RankedTensorType>(current.getType());
  int64_t last = currentType.getRank() - 1;
  SmallVector<std::pair<int64_t, int64_t>> ranges;
  for (Operation *user : current.getUsers()) {
    auto slice = dyn_cast<SliceOp>(user);
    if (!slice)
      return std::nullopt;
    auto sliceType = cast<RankedTensorType>(slice.getType());
    for (int64_t d = 0; d < last; ++d)
      if (slice.getStarts()[d] != 0 || slice.getSteps()[d] != 1 ||
          sliceType.getDimSize(d) != currentType.getDimSize(d))
        return std::nullopt;
    if (slice.getSteps()[last] != 1)
      return std::nullopt;
    ranges.push_back({slice.getStarts()[last], sliceType.getDimSize(last)});
    projection.slices.push_back(slice);
  }
  if (projection.slices.size() < 2)
    return std::nullopt;
  // Left to right: the new matmuls and weights in column order.
  llvm::sort(projection.slices, [&](SliceOp a, SliceOp b) {
    return a.getStarts()[last] < b.getStarts()[last];
  });
  llvm::sort(ranges);
  for (size_t i = 1; i < ranges.size(); ++i)
    if (ranges[i - 1].first + ranges[i - 1].second > ranges[i].first)
      return std::nullopt;
  return projection;
}

/// Rewrites `projection` into one matmul (and chain) per slice.
static void splitProjection(FusedProjection &projection, Slicer &slicer) {
  MatMulOp matmul = projection.matmul;
  for (SliceOp slice : projection.slices) {
    auto sliceType = cast<RankedTensorType>(slice.getType());
    int64_t last = sliceType.getRank() - 1;
    int64_t start = slice.getStarts()[last];
    int64_t size = sliceType.getDimSize(last);
    Value weight = slicer.slice(matmul.getRhs(), 1, start, size, matmul);
    OpBuilder b(matmul);
    Value current =
        MatMulOp::create(b, matmul.getLoc(), matmul.getLhs(), weight);
    Value previous = matmul.getResult();
    for (Operation *op : projection.chain) {
      auto type = cast<RankedTensorType>(op->getResult(0).getType());
      IRMapping mapping;
      mapping.map(previous, current);
      for (Value operand : op->getOperands())
        if (operand != previous)
          mapping.map(operand, slicer.slice(operand, type.getRank() - 1,
                                            start, size, matmul));
      b.setInsertionPoint(op);
      Operation *clone = b.clone(*op, mapping);
      clone->getResult(0).setType(withDim(type, type.getRank() - 1, size));
      previous = op->getResult(0);
      current = clone->getResult(0);
    }
    slice.getResult().replaceAllUsesWith(current);
    slice.erase();
  }
  for (Operation *op : llvm::reverse(projection.chain))
    op->erase();
  matmul.erase();
}

namespace {
struct SplitFusedProjectionsPass
    : public dnnc::dnn::impl::SplitFusedProjectionsPassBase<
          SplitFusedProjectionsPass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      Slicer slicer(func);
      SmallVector<MatMulOp> matmuls;
      func.walk([&](MatMulOp op) { matmuls.push_back(op); });
      for (MatMulOp matmul : matmuls)
        if (std::optional<FusedProjection> projection =
                matchProjection(matmul, slicer))
          splitProjection(*projection, slicer);
      slicer.eraseUnused();
    }
  }
};
} // namespace
