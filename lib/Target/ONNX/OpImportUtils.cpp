//===- OpImportUtils.cpp - helpers of the ONNX op handlers ------*- C++ -*-===//
//
// The shapes, axes and input checks the op handlers of every family share
// (declared in Importer.h).
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

#include <cmath>

using namespace mlir;
using namespace dnnc;
using namespace dnnc::onnx_import;

ArrayRef<int64_t> dnnc::onnx_import::shapeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape();
}

Type dnnc::onnx_import::eltOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getElementType();
}

int64_t dnnc::onnx_import::rankOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getRank();
}

int64_t dnnc::onnx_import::product(ArrayRef<int64_t> dims) {
  int64_t p = 1;
  for (int64_t d : dims)
    p *= d;
  return p;
}

LogicalResult dnnc::onnx_import::checkSize(NodeImporter &n,
                                           ArrayRef<int64_t> shape) {
  int64_t count = 1;
  for (int64_t d : shape) {
    if (d != 0 && count > kMaxElements / d)
      return n.fail("the result would have more than 2^40 elements");
    count *= d;
  }
  return success();
}

FailureOr<int64_t> dnnc::onnx_import::normAxis(NodeImporter &n, int64_t axis,
                                               int64_t rank, StringRef what) {
  if (axis < -rank || axis >= rank)
    return n.fail(what + " " + Twine(axis) + " is out of range for rank " +
                  Twine(rank));
  return axis < 0 ? axis + rank : axis;
}

FailureOr<SmallVector<int64_t>>
dnnc::onnx_import::normAxes(NodeImporter &n, ArrayRef<int64_t> axes,
                            int64_t rank) {
  SmallVector<int64_t> result;
  for (int64_t a : axes) {
    auto v = normAxis(n, a, rank);
    if (failed(v))
      return failure();
    result.push_back(*v);
  }
  llvm::sort(result);
  if (std::adjacent_find(result.begin(), result.end()) != result.end())
    return n.fail("axes contain a duplicate");
  return result;
}

FailureOr<std::optional<SmallVector<int64_t>>>
dnnc::onnx_import::axesAttrOrInput(NodeImporter &n, int64_t inputSince) {
  if (n.opset < inputSince)
    return n.getInts("axes");
  if (!n.hasInput(1))
    return std::optional<SmallVector<int64_t>>();
  auto v = n.constantInts(1, "axes");
  if (failed(v))
    return failure();
  return std::optional<SmallVector<int64_t>>(*v);
}

LogicalResult dnnc::onnx_import::requireAllInputs(NodeImporter &n) {
  for (int i = 0; i < n.numInputs(); ++i)
    if (!n.hasInput(i))
      return n.fail("input " + Twine(i) + " is missing");
  return success();
}

LogicalResult dnnc::onnx_import::requireFloatInput(NodeImporter &n) {
  if (!isa<FloatType>(eltOf(n.input(0))))
    return n.fail("input must be a floating-point tensor");
  return success();
}

FailureOr<int64_t> dnnc::onnx_import::scalarInt(NodeImporter &n, int i,
                                                StringRef what) {
  if (product(shapeOf(n.input(i))) != 1)
    return n.fail(what + " must hold one value");
  if (isa<IntegerType>(eltOf(n.input(i)))) {
    auto v = n.constantInts(i, what);
    if (failed(v))
      return failure();
    return v->front();
  }
  auto v = n.constantFloats(i, what);
  if (failed(v))
    return failure();
  if (!std::isfinite(v->front()) || std::abs(v->front()) > double(1LL << 53))
    return n.fail(what + " is not a finite integer");
  return static_cast<int64_t>(v->front());
}

FailureOr<Value> dnnc::onnx_import::sliceAxis(NodeImporter &n, Value x,
                                               int64_t axis, int64_t start,
                                               int64_t size, int64_t step) {
  SmallVector<int64_t> starts(rankOf(x), 0), steps(rankOf(x), 1);
  SmallVector<int64_t> shape(shapeOf(x));
  starts[axis] = size > 0 ? start : 0;
  steps[axis] = step;
  shape[axis] = size;
  return n.build<dnn::SliceOp>(RankedTensorType::get(shape, eltOf(x)), x,
                               n.b.getDenseI64ArrayAttr(starts),
                               n.b.getDenseI64ArrayAttr(steps));
}

FailureOr<Value> dnnc::onnx_import::perChannel(NodeImporter &n, Value v,
                                                Value x) {
  if (rankOf(v) != 1 || shapeOf(v)[0] != shapeOf(x)[1])
    return n.fail("per-channel inputs must be vectors of " +
                  Twine(shapeOf(x)[1]) + " channels");
  return n.build<dnn::BroadcastInDimOp>(
      RankedTensorType::get(shapeOf(x), eltOf(v)), v,
      n.b.getDenseI64ArrayAttr({1}));
}
