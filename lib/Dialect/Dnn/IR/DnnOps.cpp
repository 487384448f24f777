//===- DnnOps.cpp - dnn op shape inference and verifiers --------*- C++ -*-===//
//
// Shape inference (InferTypeOpInterface) and verifiers of the `dnn` ops. The
// shape logic lives in free functions that the importer and the cost model
// reuse.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Dialect/Dnn/IR/Dnn.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallSet.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace dnnc::dnn;

//===----------------------------------------------------------------------===//
// Shared shape helpers
//===----------------------------------------------------------------------===//

FailureOr<SmallVector<int64_t>>
dnnc::dnn::broadcastShapes(ArrayRef<int64_t> lhs, ArrayRef<int64_t> rhs) {
  size_t rank = std::max(lhs.size(), rhs.size());
  SmallVector<int64_t> result(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t l = i < rank - lhs.size() ? 1 : lhs[i - (rank - lhs.size())];
    int64_t r = i < rank - rhs.size() ? 1 : rhs[i - (rank - rhs.size())];
    if (l != r && l != 1 && r != 1)
      return failure();
    result[i] = l == 1 ? r : l;
  }
  return result;
}

FailureOr<SmallVector<int64_t>>
dnnc::dnn::inferMatMulShape(ArrayRef<int64_t> lhs, ArrayRef<int64_t> rhs,
                            function_ref<InFlightDiagnostic()> emitError) {
  auto fail = [&](const Twine &msg) -> FailureOr<SmallVector<int64_t>> {
    if (emitError)
      emitError() << msg;
    return failure();
  };
  if (lhs.size() < 2 || rhs.size() < 2)
    return fail("operands must have rank >= 2");
  if (rhs.size() != 2 && rhs.size() != lhs.size())
    return fail("rhs must have rank 2 or the rank of lhs");
  if (lhs.back() != rhs[rhs.size() - 2])
    return fail("contracting dimensions are incompatible (" +
                Twine(lhs.back()) + " vs " + Twine(rhs[rhs.size() - 2]) + ")");
  if (rhs.size() != 2 && lhs.drop_back(2) != rhs.drop_back(2))
    return fail("batch dimensions of lhs and rhs differ");
  SmallVector<int64_t> result(lhs.drop_back());
  result.push_back(rhs.back());
  return result;
}

FailureOr<EinsumEquation>
dnnc::dnn::parseEinsumEquation(StringRef equation,
                               function_ref<InFlightDiagnostic()> emitError) {
  auto fail = [&](const Twine &msg) -> FailureOr<EinsumEquation> {
    if (emitError)
      emitError() << msg;
    return failure();
  };
  std::string eq;
  for (char c : equation)
    if (c != ' ')
      eq.push_back(c);
  size_t arrow = eq.find("->");
  if (arrow == std::string::npos)
    return fail("einsum equation '" + equation + "' has no '->'");
  EinsumEquation result;
  SmallVector<StringRef> parts;
  StringRef(eq).substr(0, arrow).split(parts, ',');
  for (StringRef part : parts)
    result.inputs.push_back(part.str());
  result.output = eq.substr(arrow + 2);
  auto checkLabels = [&](StringRef labels) {
    return llvm::all_of(labels, [](char c) { return llvm::isAlpha(c); });
  };
  for (const std::string &in : result.inputs)
    if (!checkLabels(in))
      return fail("einsum labels must be letters (no ellipsis) in '" +
                  equation + "'");
  if (!checkLabels(result.output))
    return fail("einsum labels must be letters (no ellipsis) in '" + equation +
                "'");
  llvm::SmallSet<char, 16> seen;
  for (char c : result.output)
    if (!seen.insert(c).second)
      return fail("einsum output label '" + Twine(c) + "' repeats");
  return result;
}

int64_t dnnc::dnn::inferWindowedDim(int64_t input, int64_t kernel,
                                    int64_t stride, int64_t padBegin,
                                    int64_t padEnd, int64_t dilation,
                                    bool ceilMode, bool partialWindows) {
  int64_t effectiveKernel, padded, span;
  if (stride <= 0 ||
      llvm::MulOverflow(dilation, kernel - 1, effectiveKernel) ||
      llvm::AddOverflow(effectiveKernel, int64_t(1), effectiveKernel) ||
      llvm::AddOverflow(input, padBegin, padded) ||
      llvm::AddOverflow(padded, padEnd, padded) ||
      llvm::SubOverflow(padded, effectiveKernel, span))
    return 0;
  if (span < 0 && !partialWindows)
    return 0;
  // ONNX: 1 + span / stride, rounded toward zero (C++ division), or up in
  // ceil mode; a negative span in (-stride, 0) still gives one window.
  int64_t out = span / stride + 1;
  if (ceilMode && span > 0 && span % stride != 0) {
    ++out;
    // The last window must start inside the input or its begin padding.
    if ((out - 1) * stride >= padded - padEnd)
      --out;
  }
  return out;
}

/// Normalises `axis` into [0, rank); fails when out of range.
static FailureOr<int64_t> checkAxis(int64_t axis, int64_t rank,
                                    std::optional<Location> loc) {
  if (axis < 0 || axis >= rank) {
    (void)emitOptionalError(loc, "axis ", axis, " is out of range for rank ",
                            rank);
    return failure();
  }
  return axis;
}

//===----------------------------------------------------------------------===//
// IsNaNOp
//===----------------------------------------------------------------------===//

LogicalResult IsNaNOp::inferReturnTypes(MLIRContext *ctx,
                                        std::optional<Location>,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &inferred) {
  auto in = cast<RankedTensorType>(adaptor.getInput().getType());
  inferred.push_back(
      RankedTensorType::get(in.getShape(), IntegerType::get(ctx, 1)));
  return success();
}

//===----------------------------------------------------------------------===//
// ReshapeOp
//===----------------------------------------------------------------------===//

LogicalResult ReshapeOp::verify() {
  auto in = getInput().getType();
  auto out = getResult().getType();
  if (in.getElementType() != out.getElementType())
    return emitOpError("element types differ: ")
           << in.getElementType() << " vs " << out.getElementType();
  if (in.getNumElements() != out.getNumElements())
    return emitOpError("element count changes from ")
           << in.getNumElements() << " to " << out.getNumElements();
  return success();
}

//===----------------------------------------------------------------------===//
// BroadcastInDimOp
//===----------------------------------------------------------------------===//

LogicalResult BroadcastInDimOp::verify() {
  auto in = getInput().getType();
  auto out = getResult().getType();
  if (in.getElementType() != out.getElementType())
    return emitOpError("element types differ");
  ArrayRef<int64_t> dims = getDims();
  if (static_cast<int64_t>(dims.size()) != in.getRank())
    return emitOpError("expects one entry in dims per operand dimension (")
           << in.getRank() << "), got " << dims.size();
  for (auto [i, d] : llvm::enumerate(dims)) {
    if (d < 0 || d >= out.getRank())
      return emitOpError("dims[")
             << i << "] = " << d << " is out of range for the result rank "
             << out.getRank();
    if (i > 0 && d <= dims[i - 1])
      return emitOpError("dims must be strictly increasing");
    int64_t inDim = in.getDimSize(i), outDim = out.getDimSize(d);
    if (inDim != 1 && inDim != outDim)
      return emitOpError("operand dimension ")
             << i << " (" << inDim << ") is not broadcastable to result "
             << "dimension " << d << " (" << outDim << ")";
  }
  return success();
}

//===----------------------------------------------------------------------===//
// TransposeOp
//===----------------------------------------------------------------------===//

LogicalResult TransposeOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &inferred) {
  auto in = cast<RankedTensorType>(adaptor.getInput().getType());
  ArrayRef<int64_t> perm = adaptor.getPermutation();
  if (static_cast<int64_t>(perm.size()) != in.getRank())
    return emitOptionalError(loc, "permutation has ", perm.size(),
                             " entries for a rank-", in.getRank(), " input");
  SmallVector<bool> seen(perm.size(), false);
  SmallVector<int64_t> shape;
  for (int64_t p : perm) {
    if (p < 0 || p >= in.getRank() || seen[p])
      return emitOptionalError(loc, "permutation is not a permutation of [0, ",
                               in.getRank(), ")");
    seen[p] = true;
    shape.push_back(in.getDimSize(p));
  }
  inferred.push_back(RankedTensorType::get(shape, in.getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// ConcatOp
//===----------------------------------------------------------------------===//

LogicalResult ConcatOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &inferred) {
  if (adaptor.getInputs().empty())
    return emitOptionalError(loc, "expects at least one input");
  auto first = cast<RankedTensorType>(adaptor.getInputs()[0].getType());
  FailureOr<int64_t> axis =
      checkAxis(static_cast<int64_t>(adaptor.getAxis()), first.getRank(), loc);
  if (failed(axis))
    return failure();
  SmallVector<int64_t> shape(first.getShape());
  shape[*axis] = 0;
  for (Value v : adaptor.getInputs()) {
    auto t = cast<RankedTensorType>(v.getType());
    if (t.getElementType() != first.getElementType() ||
        t.getRank() != first.getRank())
      return emitOptionalError(loc, "inputs differ in element type or rank");
    for (int64_t d = 0; d < t.getRank(); ++d)
      if (d != *axis && t.getDimSize(d) != first.getDimSize(d))
        return emitOptionalError(loc, "inputs differ in dimension ", d, " (",
                                 first.getDimSize(d), " vs ", t.getDimSize(d),
                                 ")");
    shape[*axis] += t.getDimSize(*axis);
  }
  inferred.push_back(RankedTensorType::get(shape, first.getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// SliceOp
//===----------------------------------------------------------------------===//

LogicalResult SliceOp::verify() {
  auto in = getInput().getType();
  auto out = getResult().getType();
  if (in.getElementType() != out.getElementType())
    return emitOpError("element types differ");
  if (in.getRank() != out.getRank())
    return emitOpError("result rank differs from input rank");
  ArrayRef<int64_t> starts = getStarts(), steps = getSteps();
  if (static_cast<int64_t>(starts.size()) != in.getRank() ||
      static_cast<int64_t>(steps.size()) != in.getRank())
    return emitOpError("expects one start and one step per dimension");
  for (int64_t d = 0; d < in.getRank(); ++d) {
    if (steps[d] == 0)
      return emitOpError("step of dimension ") << d << " is zero";
    int64_t size = out.getDimSize(d);
    if (size == 0)
      continue;
    // The addressed indices run from starts[d] to `last`; checked arithmetic
    // keeps absurd steps from overflowing.
    int64_t last;
    bool overflow = llvm::MulOverflow(size - 1, steps[d], last) ||
                    llvm::AddOverflow(starts[d], last, last);
    if (overflow || starts[d] < 0 || starts[d] >= in.getDimSize(d) ||
        last < 0 || last >= in.getDimSize(d))
      return emitOpError("dimension ") << d << " addresses indices outside [0, "
                                       << in.getDimSize(d) << ")";
  }
  return success();
}

//===----------------------------------------------------------------------===//
// GatherOp
//===----------------------------------------------------------------------===//

LogicalResult GatherOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &inferred) {
  auto data = cast<RankedTensorType>(adaptor.getData().getType());
  auto indices = cast<RankedTensorType>(adaptor.getIndices().getType());
  FailureOr<int64_t> axis =
      checkAxis(static_cast<int64_t>(adaptor.getAxis()), data.getRank(), loc);
  if (failed(axis))
    return failure();
  SmallVector<int64_t> shape(data.getShape().take_front(*axis));
  llvm::append_range(shape, indices.getShape());
  llvm::append_range(shape, data.getShape().drop_front(*axis + 1));
  inferred.push_back(RankedTensorType::get(shape, data.getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// MatMulOp
//===----------------------------------------------------------------------===//

LogicalResult MatMulOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &inferred) {
  auto lhs = cast<RankedTensorType>(adaptor.getLhs().getType());
  auto rhs = cast<RankedTensorType>(adaptor.getRhs().getType());
  if (lhs.getElementType() != rhs.getElementType())
    return emitOptionalError(loc, "operand element types differ");
  auto emit = [&] { return mlir::emitError(*loc); };
  auto shape = inferMatMulShape(lhs.getShape(), rhs.getShape(),
                                loc ? function_ref<InFlightDiagnostic()>(emit)
                                    : nullptr);
  if (failed(shape))
    return failure();
  inferred.push_back(RankedTensorType::get(*shape, lhs.getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// EinsumOp
//===----------------------------------------------------------------------===//

LogicalResult EinsumOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &inferred) {
  if (adaptor.getInputs().empty())
    return emitOptionalError(loc, "expects at least one operand");
  auto emit = [&] { return mlir::emitError(*loc); };
  auto eq = parseEinsumEquation(adaptor.getEquation(),
                                loc ? function_ref<InFlightDiagnostic()>(emit)
                                    : nullptr);
  if (failed(eq))
    return failure();
  if (eq->inputs.size() != adaptor.getInputs().size())
    return emitOptionalError(loc, "equation has ", eq->inputs.size(),
                             " operands but ", adaptor.getInputs().size(),
                             " were given");
  llvm::DenseMap<char, int64_t> extents;
  Type elementType =
      cast<RankedTensorType>(adaptor.getInputs()[0].getType()).getElementType();
  for (auto [labels, value] : llvm::zip(eq->inputs, adaptor.getInputs())) {
    auto t = cast<RankedTensorType>(value.getType());
    if (t.getElementType() != elementType)
      return emitOptionalError(loc, "operand element types differ");
    if (static_cast<int64_t>(labels.size()) != t.getRank())
      return emitOptionalError(loc, "operand labels '", labels,
                               "' do not match its rank ", t.getRank());
    for (auto [c, d] : llvm::zip(labels, t.getShape())) {
      auto [it, inserted] = extents.try_emplace(c, d);
      if (!inserted && it->second != d)
        return emitOptionalError(loc, "label '", StringRef(&c, 1),
                                 "' has extents ", it->second, " and ", d);
    }
  }
  SmallVector<int64_t> shape;
  for (char c : eq->output) {
    auto it = extents.find(c);
    if (it == extents.end())
      return emitOptionalError(loc, "output label '", StringRef(&c, 1),
                               "' appears in no operand");
    shape.push_back(it->second);
  }
  inferred.push_back(RankedTensorType::get(shape, elementType));
  return success();
}

//===----------------------------------------------------------------------===//
// Windowed ops
//===----------------------------------------------------------------------===//

/// Checks that `input` of a windowed op is `[N, C, spatial...]` with at least
/// one spatial dimension.
static LogicalResult checkWindowedInput(std::optional<Location> loc,
                                        RankedTensorType input) {
  if (input.getRank() < 3)
    return emitOptionalError(loc,
                             "input must have rank >= 3 (N, C and at "
                             "least one spatial dimension), got rank ",
                             input.getRank());
  return success();
}

/// Checks the spatial attributes of a windowed op over `numSpatial` dims.
static LogicalResult
checkWindowAttrs(std::optional<Location> loc, int64_t numSpatial,
                 ArrayRef<int64_t> kernel, ArrayRef<int64_t> strides,
                 ArrayRef<int64_t> pads, ArrayRef<int64_t> dilations) {
  if (static_cast<int64_t>(kernel.size()) != numSpatial ||
      static_cast<int64_t>(strides.size()) != numSpatial ||
      static_cast<int64_t>(dilations.size()) != numSpatial ||
      static_cast<int64_t>(pads.size()) != 2 * numSpatial)
    return emitOptionalError(loc, "kernel, strides and dilations need ",
                             numSpatial, " entries and pads ", 2 * numSpatial);
  for (int64_t i = 0; i < numSpatial; ++i)
    if (kernel[i] < 1 || strides[i] < 1 || dilations[i] < 1)
      return emitOptionalError(loc,
                               "kernel, strides and dilations must be >= 1");
  if (llvm::any_of(pads, [](int64_t p) { return p < 0; }))
    return emitOptionalError(loc, "pads must be >= 0");
  return success();
}

/// Infers `[N, channels, spatial...]` for a windowed op whose input passed
/// checkWindowedInput.
static LogicalResult inferWindowed(std::optional<Location> loc,
                                   RankedTensorType in, int64_t channels,
                                   ArrayRef<int64_t> kernel,
                                   ArrayRef<int64_t> strides,
                                   ArrayRef<int64_t> pads,
                                   ArrayRef<int64_t> dilations, bool ceilMode,
                                   bool partialWindows,
                                   SmallVectorImpl<Type> &inferred) {
  int64_t numSpatial = in.getRank() - 2;
  if (failed(
          checkWindowAttrs(loc, numSpatial, kernel, strides, pads, dilations)))
    return failure();
  SmallVector<int64_t> shape = {in.getDimSize(0), channels};
  for (int64_t i = 0; i < numSpatial; ++i) {
    int64_t out =
        inferWindowedDim(in.getDimSize(i + 2), kernel[i], strides[i], pads[i],
                         pads[i + numSpatial], dilations[i], ceilMode,
                         partialWindows);
    if (out <= 0)
      return emitOptionalError(loc, "window does not fit spatial dimension ", i,
                               " (extent ", in.getDimSize(i + 2), ")");
    shape.push_back(out);
  }
  inferred.push_back(RankedTensorType::get(shape, in.getElementType()));
  return success();
}

LogicalResult ConvOp::inferReturnTypes(MLIRContext *,
                                       std::optional<Location> loc,
                                       Adaptor adaptor,
                                       SmallVectorImpl<Type> &inferred) {
  auto in = cast<RankedTensorType>(adaptor.getInput().getType());
  auto w = cast<RankedTensorType>(adaptor.getWeight().getType());
  int64_t group = static_cast<int64_t>(adaptor.getGroup());
  if (in.getElementType() != w.getElementType())
    return emitOptionalError(loc, "input and weight element types differ");
  if (w.getRank() != in.getRank())
    return emitOptionalError(loc, "weight rank ", w.getRank(),
                             " differs from input rank ", in.getRank());
  if (failed(checkWindowedInput(loc, in)))
    return failure();
  if (group < 1)
    return emitOptionalError(loc, "group must be >= 1, got ", group);
  if (in.getDimSize(1) % group != 0 || w.getDimSize(0) % group != 0)
    return emitOptionalError(loc, "group ", group,
                             " must divide input and output channels");
  if (w.getDimSize(1) * group != in.getDimSize(1))
    return emitOptionalError(loc, "weight has ", w.getDimSize(1),
                             " input channels per group; input has ",
                             in.getDimSize(1), " channels in ", group,
                             " groups");
  if (adaptor.getBias()) {
    auto b = cast<RankedTensorType>(adaptor.getBias().getType());
    if (b.getRank() != 1 || b.getDimSize(0) != w.getDimSize(0) ||
        b.getElementType() != in.getElementType())
      return emitOptionalError(loc, "bias must be a vector of ",
                               w.getDimSize(0), " output channels");
  }
  return inferWindowed(loc, in, w.getDimSize(0), w.getShape().drop_front(2),
                       adaptor.getStrides(), adaptor.getPads(),
                       adaptor.getDilations(), /*ceilMode=*/false,
                       /*partialWindows=*/false, inferred);
}

LogicalResult MaxPoolOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &inferred) {
  auto in = cast<RankedTensorType>(adaptor.getInput().getType());
  if (failed(checkWindowedInput(loc, in)))
    return failure();
  return inferWindowed(loc, in, in.getDimSize(1), adaptor.getKernel(),
                       adaptor.getStrides(), adaptor.getPads(),
                       adaptor.getDilations(), adaptor.getCeilMode(),
                       /*partialWindows=*/true, inferred);
}

LogicalResult AvgPoolOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &inferred) {
  auto in = cast<RankedTensorType>(adaptor.getInput().getType());
  if (failed(checkWindowedInput(loc, in)))
    return failure();
  SmallVector<int64_t> dilations(in.getRank() - 2, 1);
  return inferWindowed(loc, in, in.getDimSize(1), adaptor.getKernel(),
                       adaptor.getStrides(), adaptor.getPads(), dilations,
                       adaptor.getCeilMode(), /*partialWindows=*/true,
                       inferred);
}

//===----------------------------------------------------------------------===//
// Softmax, LayerNorm
//===----------------------------------------------------------------------===//

/// Verifies the softmax-like `op`'s `axis` against the rank of its input.
template <typename OpT> static LogicalResult verifySoftmaxAxis(OpT op) {
  int64_t rank = op.getInput().getType().getRank();
  int64_t axis = static_cast<int64_t>(op.getAxis());
  if (axis < 0 || axis >= rank)
    return op.emitOpError("axis ")
           << axis << " is out of range for rank " << rank;
  return success();
}

LogicalResult SoftmaxOp::verify() { return verifySoftmaxAxis(*this); }

LogicalResult LogSoftmaxOp::verify() { return verifySoftmaxAxis(*this); }

LogicalResult LayerNormOp::inferReturnTypes(MLIRContext *ctx,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &inferred) {
  auto in = cast<RankedTensorType>(adaptor.getInput().getType());
  FailureOr<int64_t> axis =
      checkAxis(static_cast<int64_t>(adaptor.getAxis()), in.getRank(), loc);
  if (failed(axis))
    return failure();
  ArrayRef<int64_t> normShape = in.getShape().drop_front(*axis);
  for (Value v : {adaptor.getScale(), adaptor.getBias()}) {
    if (!v)
      continue;
    auto t = cast<RankedTensorType>(v.getType());
    if (t.getShape() != normShape || t.getElementType() != in.getElementType())
      return emitOptionalError(
          loc, "scale and bias must have type ",
          RankedTensorType::get(normShape, in.getElementType()), ", got ", t);
  }
  SmallVector<int64_t> statShape(in.getShape().take_front(*axis));
  statShape.append(in.getRank() - *axis, 1);
  Type statElt = in.getElementType().isF64() ? Type(Float64Type::get(ctx))
                                             : Type(Float32Type::get(ctx));
  auto stat = RankedTensorType::get(statShape, statElt);
  inferred.push_back(in);
  inferred.push_back(stat);
  inferred.push_back(stat);
  return success();
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

/// Infers the result type of a reduction over sorted unique `axes`.
static LogicalResult inferReduce(std::optional<Location> loc,
                                 RankedTensorType in, ArrayRef<int64_t> axes,
                                 bool keepDims,
                                 SmallVectorImpl<Type> &inferred) {
  for (auto [i, a] : llvm::enumerate(axes)) {
    if (a < 0 || a >= in.getRank())
      return emitOptionalError(loc, "reduction axis ", a,
                               " is out of range for rank ", in.getRank());
    if (i > 0 && a <= axes[i - 1])
      return emitOptionalError(loc, "reduction axes must be sorted and unique");
  }
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < in.getRank(); ++d) {
    if (!llvm::is_contained(axes, d))
      shape.push_back(in.getDimSize(d));
    else if (keepDims)
      shape.push_back(1);
  }
  inferred.push_back(RankedTensorType::get(shape, in.getElementType()));
  return success();
}

#define DNN_REDUCE_INFER(OP)                                                   \
  LogicalResult OP::inferReturnTypes(                                          \
      MLIRContext *, std::optional<Location> loc, Adaptor adaptor,             \
      SmallVectorImpl<Type> &inferred) {                                       \
    return inferReduce(loc,                                                    \
                       cast<RankedTensorType>(adaptor.getInput().getType()),   \
                       adaptor.getAxes(), adaptor.getKeepDims(), inferred);    \
  }
DNN_REDUCE_INFER(ReduceSumOp)
DNN_REDUCE_INFER(ReduceMeanOp)
DNN_REDUCE_INFER(ReduceMaxOp)
DNN_REDUCE_INFER(ReduceMinOp)
DNN_REDUCE_INFER(ReduceProdOp)
#undef DNN_REDUCE_INFER

//===----------------------------------------------------------------------===//
// Dropout, SoftmaxCrossEntropy
//===----------------------------------------------------------------------===//

LogicalResult DropoutOp::inferReturnTypes(MLIRContext *ctx,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &inferred) {
  auto in = cast<RankedTensorType>(adaptor.getInput().getType());
  auto ratio = cast<RankedTensorType>(adaptor.getRatio().getType());
  if (ratio.getRank() != 0)
    return emitOptionalError(loc, "ratio must be a scalar tensor");
  inferred.push_back(in);
  inferred.push_back(
      RankedTensorType::get(in.getShape(), IntegerType::get(ctx, 1)));
  return success();
}

LogicalResult SoftmaxCrossEntropyOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &inferred) {
  auto scores = cast<RankedTensorType>(adaptor.getScores().getType());
  auto labels = cast<RankedTensorType>(adaptor.getLabels().getType());
  if (scores.getRank() < 2)
    return emitOptionalError(loc, "scores must be [N, C, D...]");
  SmallVector<int64_t> expected = {scores.getDimSize(0)};
  llvm::append_range(expected, scores.getShape().drop_front(2));
  if (labels.getShape() != ArrayRef<int64_t>(expected))
    return emitOptionalError(loc, "labels shape must be scores' shape "
                                  "without the class dimension");
  if (adaptor.getWeights()) {
    auto w = cast<RankedTensorType>(adaptor.getWeights().getType());
    if (w.getRank() != 1 || w.getDimSize(0) != scores.getDimSize(1) ||
        w.getElementType() != scores.getElementType())
      return emitOptionalError(loc, "weights must be a vector of ",
                               scores.getDimSize(1), " classes");
  }
  if (adaptor.getReduction() == LossReduction::None)
    inferred.push_back(
        RankedTensorType::get(expected, scores.getElementType()));
  else
    inferred.push_back(RankedTensorType::get({}, scores.getElementType()));
  inferred.push_back(scores);
  return success();
}

#define GET_OP_CLASSES
#include "dnnc/Dialect/Dnn/IR/DnnOps.cpp.inc"

//===----------------------------------------------------------------------===//
// Constants
//===----------------------------------------------------------------------===//

std::optional<double> dnnc::dnn::getSplatFloatValue(Value v) {
  Operation *def = v.getDefiningOp();
  if (auto broadcast = dyn_cast_or_null<BroadcastInDimOp>(def))
    return getSplatFloatValue(broadcast.getInput());
  // A constant cast to another float type (dnn-convert-precision): its value
  // rounded to that type.
  if (auto cast = dyn_cast_or_null<CastOp>(def)) {
    auto to = dyn_cast<FloatType>(getElementTypeOrSelf(cast.getType()));
    std::optional<double> value = getSplatFloatValue(cast.getInput());
    if (!to || !value)
      return std::nullopt;
    APFloat rounded(*value);
    bool lost;
    rounded.convert(to.getFloatSemantics(), APFloat::rmNearestTiesToEven,
                    &lost);
    rounded.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven, &lost);
    return rounded.convertToDouble();
  }
  auto constant = dyn_cast_or_null<ConstantOp>(def);
  if (!constant)
    return std::nullopt;
  auto dense = dyn_cast<DenseFPElementsAttr>(constant.getValue());
  if (!dense || !dense.isSplat())
    return std::nullopt;
  return dense.getSplatValue<APFloat>().convertToDouble();
}
