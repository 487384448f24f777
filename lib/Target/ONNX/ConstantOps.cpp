//===- ConstantOps.cpp - identity-like ONNX ops, constants ------*- C++ -*-===//
//
// The identity-like ops (Identity, Dropout outside training) and the ops
// whose result is a constant: Constant, Shape, Size, ConstantOfShape, Range,
// EyeLike and the window functions.
//
//===----------------------------------------------------------------------===//

#include "OpHandlers.h"

#include <cmath>

using namespace mlir;
using namespace dnnc;
using namespace dnnc::onnx_import;
namespace dnn = dnnc::dnn;

LogicalResult dnnc::onnx_import::importIdentity(NodeImporter &n) {
  if (failed(n.checkArity(1, 1, 1)))
    return failure();
  n.setOutput(0, n.input(0));
  return success();
}

/// A splat of all-true booleans with the shape of `v`.
static Value trueMask(NodeImporter &n, Value v) {
  auto type = RankedTensorType::get(shapeOf(v), n.b.getI1Type());
  return n.constant(DenseElementsAttr::get(type, true));
}

LogicalResult dnnc::onnx_import::importDropout(NodeImporter &n) {
  if (failed(n.checkArity(1, n.opset >= 12 ? 3 : 1, 2)))
    return failure();
  Value x = n.input(0);
  bool training = false;
  if (n.opset >= 12 && n.hasInput(2)) {
    DenseElementsAttr mode = NodeImporter::getConstant(n.input(2));
    if (!mode)
      return n.fail("training_mode must be a compile-time constant; bind it "
                    "with --bind");
    training = mode.getValues<bool>()[0];
  }
  auto seed = n.getInt("seed", 0);
  if (failed(seed))
    return failure();
  Value ratio;
  if (training) {
    if (n.hasInput(1)) {
      ratio = n.input(1);
    } else {
      auto type = RankedTensorType::get({}, eltOf(x));
      ratio = n.splatFloat(type, 0.5);
    }
    if (DenseElementsAttr r = NodeImporter::getConstant(ratio))
      if (r.getValues<APFloat>()[0].isZero())
        training = false;
  }
  if (!training) {
    n.setOutput(0, x);
    if (n.wantsOutput(1))
      n.setOutput(1, trueMask(n, x));
    return success();
  }
  if (rankOf(ratio) != 0) {
    auto r = n.reshape(ratio, {});
    if (failed(r))
      return failure();
    ratio = *r;
  }
  auto results =
      n.buildOp<dnn::DropoutOp>({}, x, ratio, n.b.getI64IntegerAttr(*seed));
  if (failed(results))
    return failure();
  n.setOutput(0, (*results)[0]);
  n.setOutput(1, (*results)[1]);
  return success();
}

LogicalResult dnnc::onnx_import::importConstant(NodeImporter &n) {
  if (failed(n.checkArity(0, 0, 1)))
    return failure();
  if (n.node.attribute_size() != 1)
    return n.fail("expects exactly one value attribute");
  const onnx::AttributeProto &a = n.node.attribute(0);
  MLIRContext *ctx = n.b.getContext();
  DenseElementsAttr value;
  if (a.name() == "value") {
    if (a.type() != onnx::AttributeProto::TENSOR)
      return n.fail("attribute 'value' must be TENSOR");
    std::string error;
    value = convertTensor(ctx, a.t(), n.modelDir, error);
    if (!value)
      return n.fail(error);
  } else if (a.name() == "value_float" || a.name() == "value_floats") {
    bool scalar = a.name() == "value_float";
    if (a.type() !=
        (scalar ? onnx::AttributeProto::FLOAT : onnx::AttributeProto::FLOATS))
      return n.fail("attribute '" + a.name() + "' has the wrong type");
    SmallVector<float> v =
        scalar ? SmallVector<float>{a.f()}
               : SmallVector<float>(a.floats().begin(), a.floats().end());
    SmallVector<int64_t> shape;
    if (!scalar)
      shape.push_back(v.size());
    value = DenseElementsAttr::get(
        RankedTensorType::get(shape, n.b.getF32Type()), ArrayRef<float>(v));
  } else if (a.name() == "value_int" || a.name() == "value_ints") {
    bool scalar = a.name() == "value_int";
    if (a.type() !=
        (scalar ? onnx::AttributeProto::INT : onnx::AttributeProto::INTS))
      return n.fail("attribute '" + a.name() + "' has the wrong type");
    SmallVector<int64_t> v =
        scalar ? SmallVector<int64_t>{a.i()}
               : SmallVector<int64_t>(a.ints().begin(), a.ints().end());
    SmallVector<int64_t> shape;
    if (!scalar)
      shape.push_back(v.size());
    value = DenseElementsAttr::get(
        RankedTensorType::get(shape, n.b.getIntegerType(64)),
        ArrayRef<int64_t>(v));
  } else if (a.name() == "value_string" || a.name() == "value_strings") {
    return n.fail("string constants are not supported");
  } else {
    return n.fail("attribute '" + a.name() + "' is not supported");
  }
  n.setOutput(0, n.constant(value));
  return success();
}

LogicalResult dnnc::onnx_import::importShape(NodeImporter &n) {
  if (failed(n.checkArity(1, 1, 1)))
    return failure();
  ArrayRef<int64_t> shape = shapeOf(n.input(0));
  int64_t rank = shape.size();
  auto start = n.getInt("start", 0);
  auto end = n.getInt("end", rank);
  if (failed(start) || failed(end))
    return failure();
  auto clampIdx = [&](int64_t i) {
    if (i < 0)
      i += rank;
    return std::clamp<int64_t>(i, 0, rank);
  };
  int64_t s = clampIdx(*start), e = clampIdx(*end);
  SmallVector<int64_t> dims;
  for (int64_t i = s; i < e; ++i)
    dims.push_back(shape[i]);
  n.setOutput(0, n.constantI64(dims));
  return success();
}

LogicalResult dnnc::onnx_import::importSize(NodeImporter &n) {
  if (failed(n.checkArity(1, 1, 1)))
    return failure();
  auto type = RankedTensorType::get({}, n.b.getIntegerType(64));
  n.setOutput(0, n.constant(DenseElementsAttr::get(
                     type, product(shapeOf(n.input(0))))));
  return success();
}

LogicalResult dnnc::onnx_import::importConstantOfShape(NodeImporter &n) {
  if (failed(n.checkArity(1, 1, 1)))
    return failure();
  auto shape = n.constantInts(0, "shape");
  if (failed(shape))
    return failure();
  if (llvm::any_of(*shape, [](int64_t d) { return d < 0; }))
    return n.fail("shape has a negative dimension");
  Attribute element = FloatAttr::get(n.b.getF32Type(), 0.0);
  Type elt = n.b.getF32Type();
  if (const auto *a = n.findAttr("value")) {
    if (a->type() != onnx::AttributeProto::TENSOR)
      return n.fail("attribute 'value' must be TENSOR");
    std::string error;
    DenseElementsAttr v =
        convertTensor(n.b.getContext(), a->t(), n.modelDir, error);
    if (!v)
      return n.fail(error);
    if (v.getNumElements() != 1)
      return n.fail("attribute 'value' must hold one element");
    elt = v.getElementType();
    element = v.getValues<Attribute>()[0];
  }
  auto type = RankedTensorType::get(*shape, elt);
  n.setOutput(0, n.constant(DenseElementsAttr::get(type, element)));
  return success();
}

LogicalResult dnnc::onnx_import::importRange(NodeImporter &n) {
  if (failed(n.checkArity(3, 3, 1)))
    return failure();
  Type elt = eltOf(n.input(0));
  if (eltOf(n.input(1)) != elt || eltOf(n.input(2)) != elt)
    return n.fail("start, limit and delta must have one element type");
  for (int i = 0; i < 3; ++i)
    if (product(shapeOf(n.input(i))) != 1)
      return n.fail("start, limit and delta must be scalars");
  static const char *const names[] = {"start", "limit", "delta"};
  if (isa<IntegerType>(elt)) {
    SmallVector<int64_t> v;
    for (int i = 0; i < 3; ++i) {
      auto c = n.constantInts(i, names[i]);
      if (failed(c))
        return failure();
      v.push_back(c->front());
    }
    int64_t start = v[0], limit = v[1], delta = v[2];
    if (delta == 0)
      return n.fail("delta is zero");
    int64_t count = std::max<int64_t>(
        0, (limit - start + delta + (delta > 0 ? -1 : 1)) / delta);
    if (count > dnn::kMaxFoldElements)
      return n.fail("Range produces too many elements to fold");
    SmallVector<APInt> values;
    for (int64_t i = 0; i < count; ++i)
      values.push_back(APInt(elt.getIntOrFloatBitWidth(), start + i * delta,
                             /*isSigned=*/true, /*implicitTrunc=*/true));
    n.setOutput(0, n.constant(DenseElementsAttr::get(
                       RankedTensorType::get({count}, elt), values)));
    return success();
  }
  SmallVector<double> v;
  for (int i = 0; i < 3; ++i) {
    auto c = n.constantFloats(i, names[i]);
    if (failed(c))
      return failure();
    v.push_back(c->front());
  }
  double start = v[0], limit = v[1], delta = v[2];
  if (delta == 0)
    return n.fail("delta is zero");
  double steps = std::ceil((limit - start) / delta);
  if (!(steps <= static_cast<double>(dnn::kMaxFoldElements)))
    return n.fail("Range produces too many elements to fold");
  int64_t count = std::max<int64_t>(0, static_cast<int64_t>(steps));
  SmallVector<Attribute> values;
  for (int64_t i = 0; i < count; ++i)
    values.push_back(FloatAttr::get(elt, start + i * delta));
  n.setOutput(0, n.constant(DenseElementsAttr::get(
                     RankedTensorType::get({count}, elt), values)));
  return success();
}

/// EyeLike-9: a constant of the input's 2-D shape, ones on diagonal `k`,
/// of element type `dtype` (default: the input's).
LogicalResult dnnc::onnx_import::importEyeLike(NodeImporter &n) {
  if (failed(n.checkArity(1, 1, 1)))
    return failure();
  Value x = n.input(0);
  if (rankOf(x) != 2)
    return n.fail("input must be 2-D, not of rank " + Twine(rankOf(x)));
  auto k = n.getInt("k", 0);
  auto dtype = n.getInt("dtype", -1);
  if (failed(k) || failed(dtype))
    return failure();
  Type elt = eltOf(x);
  if (*dtype != -1) {
    elt = convertDataType(n.b.getContext(), static_cast<int32_t>(*dtype));
    if (!elt || *dtype == onnx::TensorProto::STRING)
      return n.fail("unsupported dtype " +
                    dataTypeName(static_cast<int32_t>(*dtype)));
  }
  ArrayRef<int64_t> shape = shapeOf(x);
  auto type = RankedTensorType::get(shape, elt);
  Composer c(n);
  Value zero = c.fill(type, 0.0);
  if (std::abs(*k) >= std::max(shape[0], shape[1]))
    return c.finish(zero);
  // Row i holds its one at column i + k: compare an iota of columns with one
  // of rows shifted by k.
  auto i64 = [&](ArrayRef<int64_t> s) {
    return RankedTensorType::get(s, n.b.getI64Type());
  };
  SmallVector<int64_t> rows(shape[0]), cols(shape[1]);
  for (int64_t i = 0; i < shape[0]; ++i)
    rows[i] = i + *k;
  for (int64_t j = 0; j < shape[1]; ++j)
    cols[j] = j;
  Value r = c.broadcastTo(n.constant(DenseElementsAttr::get(
                              i64({shape[0], 1}), ArrayRef<int64_t>(rows))),
                          shape);
  Value col = c.broadcastTo(n.constant(DenseElementsAttr::get(
                                i64({1, shape[1]}), ArrayRef<int64_t>(cols))),
                            shape);
  return c.finish(
      c.select(c.compare<dnn::EqualOp>(r, col), c.fill(type, 1.0), zero));
}

/// HannWindow-17, HammingWindow-17, BlackmanWindow-17: a constant of the
/// `size` (a compile-time input) window, `output_datatype` elements;
/// `periodic` windows have period `size`, symmetric ones `size - 1`.
LogicalResult dnnc::onnx_import::importWindow(NodeImporter &n) {
  if (failed(n.checkArity(1, 1, 1)))
    return failure();
  auto size = scalarInt(n, 0, "size");
  auto periodic = n.getInt("periodic", 1);
  auto dtype = n.getInt("output_datatype", onnx::TensorProto::FLOAT);
  if (failed(size) || failed(periodic) || failed(dtype))
    return failure();
  if (*size < 0 || *size > dnn::kMaxFoldElements)
    return n.fail("size " + Twine(*size) + " is out of range");
  Type elt = convertDataType(n.b.getContext(), static_cast<int32_t>(*dtype));
  if (!elt || *dtype == onnx::TensorProto::STRING)
    return n.fail("unsupported output_datatype " +
                  dataTypeName(static_cast<int32_t>(*dtype)));
  StringRef op = n.node.op_type();
  double period = static_cast<double>(*periodic ? *size : *size - 1);
  SmallVector<Attribute> values;
  for (int64_t i = 0; i < *size; ++i) {
    double x = 2 * M_PI * static_cast<double>(i) / period, w;
    if (op == "HannWindow")
      w = 0.5 - 0.5 * std::cos(x);
    else if (op == "HammingWindow")
      w = 25.0 / 46.0 - (21.0 / 46.0) * std::cos(x);
    else
      w = 0.42 - 0.5 * std::cos(x) + 0.08 * std::cos(2 * x);
    if (auto floatType = dyn_cast<FloatType>(elt))
      values.push_back(FloatAttr::get(floatType, w));
    else
      values.push_back(IntegerAttr::get(elt, static_cast<int64_t>(w)));
  }
  n.setOutput(0, n.constant(DenseElementsAttr::get(
                     RankedTensorType::get({*size}, elt), values)));
  return success();
}
