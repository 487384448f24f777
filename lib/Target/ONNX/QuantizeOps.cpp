//===- QuantizeOps.cpp - ONNX quantization ops ------------------*- C++ -*-===//
//
// QuantizeLinear, DequantizeLinear and DynamicQuantizeLinear, composed of
// elementwise dnn ops and casts (per tensor or per slice along an axis).
//
//===----------------------------------------------------------------------===//

#include "OpHandlers.h"

#include <cmath>

using namespace mlir;
using namespace dnnc;
using namespace dnnc::onnx_import;
namespace dnn = dnnc::dnn;

/// The quantization parameter `v` (a scalar or a 1-D tensor per slice along
/// `axis` of a tensor of `shape`) broadcast to `shape`.
static Value quantParam(Composer &c, NodeImporter &n, Value v,
                        ArrayRef<int64_t> shape, int64_t axis) {
  if (!v || rankOf(v) == 0 || product(shapeOf(v)) == 1)
    return v ? c.broadcastTo(c.reshape(v, {}), shape) : v;
  SmallVector<int64_t> along(shape.size(), 1);
  along[axis] = shapeOf(v)[0];
  return c.broadcastTo(c.reshape(v, along), shape);
}

/// Checks a quantization scale or zero point `v` for an input of `shape`:
/// a scalar, or 1-D with the extent of `axis`.
static LogicalResult checkQuantParam(NodeImporter &n, Value v, StringRef what,
                                     ArrayRef<int64_t> shape, int64_t axis) {
  if (!v || product(shapeOf(v)) == 1)
    return success();
  if (rankOf(v) != 1 || shape.empty() || shapeOf(v)[0] != shape[axis])
    return n.fail(what + " must be a scalar or hold one value per slice "
                         "along axis " +
                  Twine(axis));
  return success();
}

/// The smallest and largest values of the integer type `t`.
static std::pair<double, double> integerRange(IntegerType t) {
  unsigned w = t.getWidth();
  if (t.isUnsigned())
    return {0.0, std::ldexp(1.0, w) - 1};
  return {-std::ldexp(1.0, w - 1), std::ldexp(1.0, w - 1) - 1};
}

/// The axis of the per-slice `scale` and `zeroPoint` of a (de)quantization
/// of `x` (0 when both are per tensor), after checking them (named
/// `prefix` + "scale" and `prefix` + "zero_point" in errors) and refusing
/// blocked quantization.
static FailureOr<int64_t> readQuantAxis(NodeImporter &n, Value x, Value scale,
                                        Value zeroPoint, StringRef prefix) {
  auto axisAttr = n.getInt("axis", 1);
  if (failed(axisAttr))
    return failure();
  if (n.findAttr("block_size"))
    return n.fail("blocked quantization (block_size) is not supported");
  if (!isa<FloatType>(eltOf(scale)))
    return n.fail(prefix + "scale must be a floating-point tensor");
  ArrayRef<int64_t> xs = shapeOf(x);
  int64_t axis = 0;
  if (product(shapeOf(scale)) != 1 ||
      (zeroPoint && product(shapeOf(zeroPoint)) != 1)) {
    auto v = normAxis(n, *axisAttr, xs.size());
    if (failed(v))
      return failure();
    axis = *v;
  }
  if (failed(checkQuantParam(n, scale, (prefix + "scale").str(), xs, axis)) ||
      failed(checkQuantParam(n, zeroPoint, (prefix + "zero_point").str(), xs,
                             axis)))
    return failure();
  return axis;
}

/// `round(x / scale) + zero_point` (half to even), saturated to the range
/// of `target` and converted to it, computed in float32 (float64 for a
/// float64 scale).
static Value quantize(Composer &c, NodeImporter &n, Value x, Value scale,
                      Value zeroPoint, IntegerType target) {
  Type f = eltOf(scale).isF64() ? Type(n.b.getF64Type())
                                : Type(n.b.getF32Type());
  Value q = c.unary<dnn::RoundOp>(
      c.binary<dnn::DivOp>(c.convert(x, f), c.convert(scale, f)));
  if (zeroPoint)
    q = c.binary<dnn::AddOp>(q, c.convert(zeroPoint, f));
  auto [lo, hi] = integerRange(target);
  q = c.binary<dnn::MinOp>(c.binary<dnn::MaxOp>(q, c.splat(q, lo)),
                           c.splat(q, hi));
  return c.convert(q, target);
}

/// QuantizeLinear-10/13/19: `saturate(round(x / y_scale) + y_zero_point)`
/// per tensor or per slice along `axis`, of the zero point's type (uint8
/// without one).
LogicalResult dnnc::onnx_import::importQuantizeLinear(NodeImporter &n) {
  if (failed(n.checkArity(2, 3, 1)))
    return failure();
  Value x = n.input(0), scale = n.input(1);
  Value zeroPoint = n.hasInput(2) ? n.input(2) : Value();
  ArrayRef<int64_t> xs = shapeOf(x);
  Type target = zeroPoint ? eltOf(zeroPoint) : n.b.getIntegerType(8, false);
  auto targetInt = dyn_cast<IntegerType>(target);
  if (!targetInt || targetInt.getWidth() == 1 || targetInt.getWidth() > 32)
    return n.fail("only 8, 16 and 32-bit integer quantization is supported");
  auto axis = readQuantAxis(n, x, scale, zeroPoint, "y_");
  if (failed(axis))
    return failure();
  Composer c(n);
  return c.finish(quantize(c, n, x, quantParam(c, n, scale, xs, *axis),
                           quantParam(c, n, zeroPoint, xs, *axis), targetInt));
}

/// DequantizeLinear-10/13/19: `(x - x_zero_point) * x_scale` per tensor or
/// per slice along `axis`, in the scale's type.
LogicalResult dnnc::onnx_import::importDequantizeLinear(NodeImporter &n) {
  if (failed(n.checkArity(2, 3, 1)))
    return failure();
  Value x = n.input(0), scale = n.input(1);
  Value zeroPoint = n.hasInput(2) ? n.input(2) : Value();
  ArrayRef<int64_t> xs = shapeOf(x);
  if (!isa<IntegerType>(eltOf(x)) || eltOf(x).isInteger(1))
    return n.fail("x must be an integer tensor");
  auto axisOr = readQuantAxis(n, x, scale, zeroPoint, "x_");
  if (failed(axisOr))
    return failure();
  int64_t axis = *axisOr;
  Composer c(n);
  Type f = eltOf(scale);
  Type compute = isa<FloatType>(f) && cast<FloatType>(f).getWidth() < 32
                     ? Type(n.b.getF32Type())
                     : f;
  Value v = c.convert(x, compute);
  if (zeroPoint)
    v = c.binary<dnn::SubOp>(
        v, c.convert(quantParam(c, n, zeroPoint, xs, axis), compute));
  v = c.binary<dnn::MulOp>(
      v, c.convert(quantParam(c, n, scale, xs, axis), compute));
  return c.finish(c.convert(v, f));
}

/// DynamicQuantizeLinear-11: uint8 quantization of a float32 tensor with the
/// scale and zero point of its range widened to include 0:
/// `scale = (max(0, max x) - min(0, min x)) / 255`,
/// `zero_point = saturate(round(-min(0, min x) / scale))`.
LogicalResult dnnc::onnx_import::importDynamicQuantizeLinear(NodeImporter &n) {
  if (failed(n.checkArity(1, 1, 3)) || failed(requireFloatInput(n)))
    return failure();
  Value x = n.input(0);
  if (product(shapeOf(x)) == 0)
    return n.fail("input must not be empty");
  Composer c(n);
  Value xf = c.convert(x, n.b.getF32Type());
  Value hi = c.binary<dnn::MaxOp>(c.reduce<dnn::ReduceMaxOp>(xf, {}, false),
                                  c.fill(RankedTensorType::get(
                                             {}, n.b.getF32Type()),
                                         0.0));
  Value lo = c.binary<dnn::MinOp>(c.reduce<dnn::ReduceMinOp>(xf, {}, false),
                                  c.fill(RankedTensorType::get(
                                             {}, n.b.getF32Type()),
                                         0.0));
  Value scale = c.binary<dnn::DivOp>(c.binary<dnn::SubOp>(hi, lo),
                                     c.splat(hi, 255.0));
  auto u8 = n.b.getIntegerType(8, false);
  Value zeroPoint = c.convert(
      c.binary<dnn::MinOp>(
          c.binary<dnn::MaxOp>(
              c.unary<dnn::RoundOp>(c.binary<dnn::DivOp>(
                  c.unary<dnn::NegOp>(lo), scale)),
              c.splat(lo, 0.0)),
          c.splat(lo, 255.0)),
      u8);
  ArrayRef<int64_t> xs = shapeOf(x);
  Value y = quantize(c, n, xf, c.broadcastTo(scale, xs),
                     c.broadcastTo(zeroPoint, xs), u8);
  if (failed(c.finish(y)))
    return failure();
  n.setOutput(1, scale);
  n.setOutput(2, zeroPoint);
  return success();
}
