//===- ElementwiseOps.cpp - elementwise ONNX ops ----------------*- C++ -*-===//
//
// The elementwise op family: unary and binary math, comparisons, logic,
// variadic Max/Min/Sum/Mean, Pow, Where, casts, Clip, and the activations
// composed of elementwise dnn ops (Softplus, Elu, Selu, HardSwish, ...).
//
//===----------------------------------------------------------------------===//

#include "OpHandlers.h"

#include <limits>

using namespace mlir;
using namespace dnnc;
using namespace dnnc::onnx_import;
namespace dnn = dnnc::dnn;

template <typename OpT>
LogicalResult dnnc::onnx_import::importUnary(NodeImporter &n) {
  if (failed(n.checkArity(1, 1, 1)))
    return failure();
  Value x = n.input(0);
  return n.setResult(n.build<OpT>(x.getType(), x));
}

template <typename OpT>
LogicalResult dnnc::onnx_import::importBinary(NodeImporter &n) {
  if (failed(n.checkArity(2, 2, 1)))
    return failure();
  Value lhs = n.input(0), rhs = n.input(1);
  if (failed(n.broadcastPair(lhs, rhs)))
    return failure();
  return n.setResult(n.build<OpT>(lhs.getType(), lhs, rhs));
}

template <typename OpT>
LogicalResult dnnc::onnx_import::importCompare(NodeImporter &n) {
  if (failed(n.checkArity(2, 2, 1)))
    return failure();
  Value lhs = n.input(0), rhs = n.input(1);
  if (failed(n.broadcastPair(lhs, rhs)))
    return failure();
  return n.setResult(n.build<OpT>(
      RankedTensorType::get(shapeOf(lhs), n.b.getI1Type()), lhs, rhs));
}

/// IsNaN-9 (opset 13 and 20 only add element types).
LogicalResult dnnc::onnx_import::importIsNaN(NodeImporter &n) {
  if (failed(n.checkArity(1, 1, 1)))
    return failure();
  Value x = n.input(0);
  if (!isa<FloatType>(eltOf(x)))
    return n.fail("input must be a floating-point tensor");
  return n.setResult(n.build<dnn::IsNaNOp>({}, x));
}

/// The inputs of a variadic node (Max, Min, Sum, Mean) broadcast and
/// combined left to right by `OpT`.
template <typename OpT> static FailureOr<Value> combineInputs(NodeImporter &n) {
  if (failed(n.checkArity(1, std::numeric_limits<int>::max(), 1)) ||
      failed(requireAllInputs(n)))
    return failure();
  Value acc = n.input(0);
  for (int i = 1; i < n.numInputs(); ++i) {
    Value rhs = n.input(i);
    if (failed(n.broadcastPair(acc, rhs)))
      return failure();
    auto r = n.build<OpT>(acc.getType(), acc, rhs);
    if (failed(r))
      return failure();
    acc = *r;
  }
  return acc;
}

template <typename OpT>
LogicalResult dnnc::onnx_import::importVariadic(NodeImporter &n) {
  return n.setResult(combineInputs<OpT>(n));
}

/// Pow. The exponent takes the base's type; an integer base is raised in
/// f64 and the result cast back (truncated, as onnxruntime's
/// `static_cast<T>(std::pow(x, y))`).
LogicalResult dnnc::onnx_import::importPow(NodeImporter &n) {
  if (failed(n.checkArity(2, 2, 1)))
    return failure();
  Value base = n.input(0), exponent = n.input(1);
  Type resultElt = eltOf(base);
  Type computeElt = isa<FloatType>(resultElt) ? resultElt : n.b.getF64Type();
  auto castTo = [&](Value v, Type elt) -> FailureOr<Value> {
    if (eltOf(v) == elt)
      return v;
    return n.build<dnn::CastOp>(RankedTensorType::get(shapeOf(v), elt), v);
  };
  auto b = castTo(base, computeElt);
  auto e = castTo(exponent, computeElt);
  if (failed(b) || failed(e))
    return failure();
  base = *b;
  exponent = *e;
  if (failed(n.broadcastPair(base, exponent)))
    return failure();
  auto pow = n.build<dnn::PowOp>(base.getType(), base, exponent);
  if (failed(pow))
    return failure();
  return n.setResult(castTo(*pow, resultElt));
}

LogicalResult dnnc::onnx_import::importWhere(NodeImporter &n) {
  if (failed(n.checkArity(3, 3, 1)))
    return failure();
  Value c = n.input(0), x = n.input(1), y = n.input(2);
  if (eltOf(x) != eltOf(y))
    return n.fail("X and Y element types differ");
  auto shape = dnn::broadcastShapes(shapeOf(x), shapeOf(y));
  if (succeeded(shape))
    shape = dnn::broadcastShapes(*shape, shapeOf(c));
  if (failed(shape))
    return n.fail("condition, X and Y shapes are not broadcastable");
  auto bc = n.broadcastTo(c, *shape);
  auto bx = n.broadcastTo(x, *shape);
  auto by = n.broadcastTo(y, *shape);
  if (failed(bc) || failed(bx) || failed(by))
    return failure();
  return n.setResult(n.build<dnn::SelectOp>(
      RankedTensorType::get(*shape, eltOf(x)), *bc, *bx, *by));
}

LogicalResult dnnc::onnx_import::importCast(NodeImporter &n) {
  if (failed(n.checkArity(1, 1, 1)))
    return failure();
  auto to = n.getInt("to", -1);
  if (failed(to))
    return failure();
  if (*to == onnx::TensorProto::STRING)
    return n.fail("casting to string tensors is not supported");
  Type elt = convertDataType(n.b.getContext(), static_cast<int32_t>(*to));
  if (!elt)
    return n.fail("unsupported target type " +
                  dataTypeName(static_cast<int32_t>(*to)));
  Value x = n.input(0);
  return n.setResult(
      n.build<dnn::CastOp>(RankedTensorType::get(shapeOf(x), elt), x));
}

/// CastLike-15: Cast of the first input to the second's element type.
LogicalResult dnnc::onnx_import::importCastLike(NodeImporter &n) {
  if (failed(n.checkArity(2, 2, 1)))
    return failure();
  Value x = n.input(0);
  return n.setResult(n.build<dnn::CastOp>(
      RankedTensorType::get(shapeOf(x), eltOf(n.input(1))), x));
}

/// Mod-10/13: `fmod = 1` is the truncated remainder (`dnn.rem`), `fmod = 0`
/// the floored one (`dnn.mod`), which ONNX defines for integers only.
LogicalResult dnnc::onnx_import::importMod(NodeImporter &n) {
  if (failed(n.checkArity(2, 2, 1)))
    return failure();
  auto fmod = n.getInt("fmod", 0);
  if (failed(fmod))
    return failure();
  if (*fmod != 0 && *fmod != 1)
    return n.fail("attribute 'fmod' must be 0 or 1, not " + Twine(*fmod));
  if (*fmod == 0 && isa<FloatType>(eltOf(n.input(0))))
    return n.fail("floating-point inputs need fmod = 1 (fmod = 0 is defined "
                  "for integers only)");
  return *fmod ? importBinary<dnn::RemOp>(n) : importBinary<dnn::ModOp>(n);
}

/// BitShift-11: `direction` LEFT or RIGHT (logical on the unsigned types
/// ONNX allows).
LogicalResult dnnc::onnx_import::importBitShift(NodeImporter &n) {
  if (failed(n.checkArity(2, 2, 1)))
    return failure();
  auto direction = n.getString("direction", "");
  if (failed(direction))
    return failure();
  if (*direction != "LEFT" && *direction != "RIGHT")
    return n.fail("attribute 'direction' must be LEFT or RIGHT, not '" +
                  *direction + "'");
  return *direction == "LEFT" ? importBinary<dnn::ShiftLeftOp>(n)
                              : importBinary<dnn::ShiftRightOp>(n);
}

LogicalResult dnnc::onnx_import::importGelu(NodeImporter &n) {
  if (failed(n.checkArity(1, 1, 1)))
    return failure();
  auto approx = n.getString("approximate", "none");
  if (failed(approx))
    return failure();
  dnn::GeluApproximation kind;
  if (*approx == "none")
    kind = dnn::GeluApproximation::None;
  else if (*approx == "tanh")
    kind = dnn::GeluApproximation::Tanh;
  else
    return n.fail("attribute 'approximate' must be 'none' or 'tanh', got '" +
                  *approx + "'");
  Value x = n.input(0);
  return n.setResult(n.build<dnn::GeluOp>(
      x.getType(), x, dnn::GeluApproximationAttr::get(n.b.getContext(), kind)));
}

LogicalResult dnnc::onnx_import::importLeakyRelu(NodeImporter &n) {
  if (failed(n.checkArity(1, 1, 1)))
    return failure();
  auto alpha = n.getFloat("alpha", 0.01f);
  if (failed(alpha))
    return failure();
  Value x = n.input(0);
  auto r =
      n.build<dnn::LeakyReluOp>(x.getType(), x, n.b.getF32FloatAttr(*alpha));
  if (failed(r))
    return failure();
  n.setOutput(0, *r);
  return success();
}

LogicalResult dnnc::onnx_import::importClip(NodeImporter &n) {
  if (failed(n.checkArity(1, 3, 1)))
    return failure();
  Value x = n.input(0);
  auto type = cast<RankedTensorType>(x.getType());
  auto clamp = [&](Value bound, bool isMin) -> LogicalResult {
    if (rankOf(bound) != 0 && product(shapeOf(bound)) != 1)
      return n.fail("min and max must be scalars");
    auto bc = n.reshape(bound, {});
    if (failed(bc))
      return failure();
    auto full = n.broadcastTo(*bc, type.getShape());
    if (failed(full))
      return failure();
    auto r = isMin ? n.build<dnn::MaxOp>(type, x, *full)
                   : n.build<dnn::MinOp>(type, x, *full);
    if (failed(r))
      return failure();
    x = *r;
    return success();
  };
  if (n.opset < 11) {
    if (!isa<FloatType>(type.getElementType()))
      return n.fail("Clip before opset 11 needs a float input");
    auto lo = n.getFloat("min", -std::numeric_limits<float>::max());
    auto hi = n.getFloat("max", std::numeric_limits<float>::max());
    if (failed(lo) || failed(hi))
      return failure();
    auto scalar = RankedTensorType::get({}, type.getElementType());
    if (n.findAttr("min") && failed(clamp(n.splatFloat(scalar, *lo), true)))
      return failure();
    if (n.findAttr("max") && failed(clamp(n.splatFloat(scalar, *hi), false)))
      return failure();
  } else {
    if (n.hasInput(1) && failed(clamp(n.input(1), true)))
      return failure();
    if (n.hasInput(2) && failed(clamp(n.input(2), false)))
      return failure();
  }
  n.setOutput(0, x);
  return success();
}

//===----------------------------------------------------------------------===//
// Composite elementwise ops
//===----------------------------------------------------------------------===//

/// `(exp(x) - 1) * alpha` where x <= 0, x elsewhere (Elu, and Selu before
/// its scale).
static Value elu(Composer &c, Value x, double alpha) {
  Value negative = c.binary<dnn::MulOp>(
      c.binary<dnn::SubOp>(c.unary<dnn::ExpOp>(x), c.splat(x, 1.0)),
      c.splat(x, alpha));
  return c.select(c.compare<dnn::GreaterOp>(x, c.splat(x, 0.0)), x, negative);
}

/// `max(0, min(1, alpha * x + beta))`.
static Value hardSigmoid(Composer &c, Value x, double alpha, double beta) {
  Value linear = c.binary<dnn::AddOp>(
      c.binary<dnn::MulOp>(x, c.splat(x, alpha)), c.splat(x, beta));
  return c.binary<dnn::MaxOp>(c.binary<dnn::MinOp>(linear, c.splat(x, 1.0)),
                              c.splat(x, 0.0));
}

/// Softplus-1: `log(1 + exp(x))`, as `max(x, 0) + log(1 + exp(-|x|))` so
/// that large inputs do not overflow.
LogicalResult dnnc::onnx_import::importSoftplus(NodeImporter &n) {
  if (failed(n.checkArity(1, 1, 1)) || failed(requireFloatInput(n)))
    return failure();
  Composer c(n);
  Value x = n.input(0);
  Value tail = c.unary<dnn::LogOp>(c.binary<dnn::AddOp>(
      c.splat(x, 1.0),
      c.unary<dnn::ExpOp>(c.unary<dnn::NegOp>(c.unary<dnn::AbsOp>(x)))));
  return c.finish(
      c.binary<dnn::AddOp>(c.binary<dnn::MaxOp>(x, c.splat(x, 0.0)), tail));
}

/// Softsign-1: `x / (1 + |x|)`.
LogicalResult dnnc::onnx_import::importSoftsign(NodeImporter &n) {
  if (failed(n.checkArity(1, 1, 1)) || failed(requireFloatInput(n)))
    return failure();
  Composer c(n);
  Value x = n.input(0);
  return c.finish(c.binary<dnn::DivOp>(
      x, c.binary<dnn::AddOp>(c.splat(x, 1.0), c.unary<dnn::AbsOp>(x))));
}

/// Elu-6.
LogicalResult dnnc::onnx_import::importElu(NodeImporter &n) {
  if (failed(n.checkArity(1, 1, 1)) || failed(requireFloatInput(n)))
    return failure();
  auto alpha = n.getFloat("alpha", 1.0f);
  if (failed(alpha))
    return failure();
  Composer c(n);
  return c.finish(elu(c, n.input(0), *alpha));
}

/// Selu-6: `gamma * elu(x, alpha)`.
LogicalResult dnnc::onnx_import::importSelu(NodeImporter &n) {
  if (failed(n.checkArity(1, 1, 1)) || failed(requireFloatInput(n)))
    return failure();
  auto alpha = n.getFloat("alpha", 1.67326319217681884765625f);
  auto gamma = n.getFloat("gamma", 1.05070102214813232421875f);
  if (failed(alpha) || failed(gamma))
    return failure();
  Composer c(n);
  Value x = n.input(0);
  return c.finish(c.binary<dnn::MulOp>(elu(c, x, *alpha), c.splat(x, *gamma)));
}

/// HardSigmoid-6.
LogicalResult dnnc::onnx_import::importHardSigmoid(NodeImporter &n) {
  if (failed(n.checkArity(1, 1, 1)) || failed(requireFloatInput(n)))
    return failure();
  auto alpha = n.getFloat("alpha", 0.2f);
  auto beta = n.getFloat("beta", 0.5f);
  if (failed(alpha) || failed(beta))
    return failure();
  Composer c(n);
  return c.finish(hardSigmoid(c, n.input(0), *alpha, *beta));
}

/// HardSwish-14: `x * hard_sigmoid(x, 1/6, 1/2)`.
LogicalResult dnnc::onnx_import::importHardSwish(NodeImporter &n) {
  if (failed(n.checkArity(1, 1, 1)) || failed(requireFloatInput(n)))
    return failure();
  Composer c(n);
  Value x = n.input(0);
  return c.finish(c.binary<dnn::MulOp>(x, hardSigmoid(c, x, 1.0 / 6.0, 0.5)));
}

/// ThresholdedRelu-10: x where x > alpha, else 0.
LogicalResult dnnc::onnx_import::importThresholdedRelu(NodeImporter &n) {
  if (failed(n.checkArity(1, 1, 1)) || failed(requireFloatInput(n)))
    return failure();
  auto alpha = n.getFloat("alpha", 1.0f);
  if (failed(alpha))
    return failure();
  Composer c(n);
  Value x = n.input(0);
  return c.finish(c.select(c.compare<dnn::GreaterOp>(x, c.splat(x, *alpha)), x,
                           c.splat(x, 0.0)));
}

/// Sign-9: 1, -1, or `x * 0` (zero, or NaN for NaN).
LogicalResult dnnc::onnx_import::importSign(NodeImporter &n) {
  if (failed(n.checkArity(1, 1, 1)))
    return failure();
  Value x = n.input(0);
  if (eltOf(x).isInteger(1))
    return n.fail("input must be a numeric tensor");
  Composer c(n);
  Value zero = c.splat(x, 0.0);
  Value rest = c.select(c.compare<dnn::LessOp>(x, zero), c.splat(x, -1.0),
                        c.binary<dnn::MulOp>(x, zero));
  return c.finish(
      c.select(c.compare<dnn::GreaterOp>(x, zero), c.splat(x, 1.0), rest));
}

/// Celu-12: `x > 0 ? x : alpha * (exp(x / alpha) - 1)`.
LogicalResult dnnc::onnx_import::importCelu(NodeImporter &n) {
  if (failed(n.checkArity(1, 1, 1)) || failed(requireFloatInput(n)))
    return failure();
  auto alpha = n.getFloat("alpha", 1.0f);
  if (failed(alpha))
    return failure();
  if (*alpha == 0.0f)
    return n.fail("attribute 'alpha' must be nonzero");
  Composer c(n);
  Value x = n.input(0);
  Value negative = c.binary<dnn::MulOp>(
      c.binary<dnn::SubOp>(
          c.unary<dnn::ExpOp>(c.binary<dnn::DivOp>(x, c.splat(x, *alpha))),
          c.splat(x, 1.0)),
      c.splat(x, *alpha));
  return c.finish(
      c.select(c.compare<dnn::GreaterOp>(x, c.splat(x, 0.0)), x, negative));
}

/// IsInf-10: `x == +inf` where `detect_positive`, `x == -inf` where
/// `detect_negative` (both by default).
LogicalResult dnnc::onnx_import::importIsInf(NodeImporter &n) {
  if (failed(n.checkArity(1, 1, 1)))
    return failure();
  auto positive = n.getInt("detect_positive", 1);
  auto negative = n.getInt("detect_negative", 1);
  if (failed(positive) || failed(negative))
    return failure();
  Value x = n.input(0);
  if (!isa<FloatType>(eltOf(x)))
    return n.fail("input must be a floating-point tensor");
  Composer c(n);
  auto boolType = RankedTensorType::get(shapeOf(x), n.b.getI1Type());
  Value result = c.fill(boolType, 0);
  if (*positive)
    result = c.binary<dnn::OrOp>(
        result, c.compare<dnn::EqualOp>(
                    x, c.splat(x, std::numeric_limits<double>::infinity())));
  if (*negative)
    result = c.binary<dnn::OrOp>(
        result, c.compare<dnn::EqualOp>(
                    x, c.splat(x, -std::numeric_limits<double>::infinity())));
  return c.finish(result);
}

/// Shrink-9: `x < -lambd ? x + bias : x > lambd ? x - bias : 0`. Integers
/// are computed in f64 and truncated back, as onnxruntime's
/// `static_cast<T>` of the float expression.
LogicalResult dnnc::onnx_import::importShrink(NodeImporter &n) {
  if (failed(n.checkArity(1, 1, 1)))
    return failure();
  auto bias = n.getFloat("bias", 0.0f);
  auto lambd = n.getFloat("lambd", 0.5f);
  if (failed(bias) || failed(lambd))
    return failure();
  Value x = n.input(0);
  Type elt = eltOf(x);
  if (elt.isInteger(1))
    return n.fail("input must be a numeric tensor");
  Composer c(n);
  Value v = x;
  if (!isa<FloatType>(elt))
    v = c.make<dnn::CastOp>(RankedTensorType::get(shapeOf(x), n.b.getF64Type()),
                            x);
  Value low = c.binary<dnn::AddOp>(v, c.splat(v, *bias));
  Value high = c.binary<dnn::SubOp>(v, c.splat(v, *bias));
  Value rest = c.select(c.compare<dnn::GreaterOp>(v, c.splat(v, *lambd)), high,
                        c.splat(v, 0.0));
  Value result =
      c.select(c.compare<dnn::LessOp>(v, c.splat(v, -*lambd)), low, rest);
  if (result && !isa<FloatType>(elt))
    result = c.make<dnn::CastOp>(x.getType(), result);
  return c.finish(result);
}

/// PRelu-7 (slope broadcast to x, unidirectionally) and PRelu-6 (a slope of
/// one value per channel, dimension 1): `x * slope` where x < 0, x elsewhere.
LogicalResult dnnc::onnx_import::importPRelu(NodeImporter &n) {
  if (failed(n.checkArity(2, 2, 1)))
    return failure();
  Value x = n.input(0);
  Composer c(n);
  Value slope = n.input(1);
  if (n.opset < 7 && rankOf(x) >= 2 && rankOf(slope) == 1 &&
      shapeOf(slope)[0] == shapeOf(x)[1] && shapeOf(slope)[0] != 1) {
    auto perChannelSlope = perChannel(n, slope, x);
    if (failed(perChannelSlope))
      return failure();
    slope = *perChannelSlope;
  } else {
    slope = c.broadcastTo(slope, shapeOf(x));
  }
  if (slope && eltOf(slope) != eltOf(x))
    return n.fail("X and slope element types differ");
  return c.finish(c.select(c.compare<dnn::LessOp>(x, c.splat(x, 0.0)),
                           c.binary<dnn::MulOp>(x, slope), x));
}

/// Mean-6 (broadcasting from 8): the sum of the inputs divided by their
/// count.
LogicalResult dnnc::onnx_import::importMean(NodeImporter &n) {
  auto sum = combineInputs<dnn::AddOp>(n);
  if (failed(sum))
    return failure();
  if (!isa<FloatType>(eltOf(*sum)))
    return n.fail("inputs must be floating-point tensors");
  Composer c(n);
  return c.finish(c.binary<dnn::DivOp>(*sum, c.splat(*sum, n.numInputs())));
}

//===----------------------------------------------------------------------===//
// The instantiations the registry names
//===----------------------------------------------------------------------===//

namespace dnnc::onnx_import {
template LogicalResult importUnary<dnn::ReluOp>(NodeImporter &);
template LogicalResult importUnary<dnn::TanhOp>(NodeImporter &);
template LogicalResult importUnary<dnn::SigmoidOp>(NodeImporter &);
template LogicalResult importUnary<dnn::ErfOp>(NodeImporter &);
template LogicalResult importUnary<dnn::ExpOp>(NodeImporter &);
template LogicalResult importUnary<dnn::LogOp>(NodeImporter &);
template LogicalResult importUnary<dnn::SqrtOp>(NodeImporter &);
template LogicalResult importUnary<dnn::ReciprocalOp>(NodeImporter &);
template LogicalResult importUnary<dnn::FloorOp>(NodeImporter &);
template LogicalResult importUnary<dnn::CeilOp>(NodeImporter &);
template LogicalResult importUnary<dnn::RoundOp>(NodeImporter &);
template LogicalResult importUnary<dnn::SinOp>(NodeImporter &);
template LogicalResult importUnary<dnn::CosOp>(NodeImporter &);
template LogicalResult importUnary<dnn::TanOp>(NodeImporter &);
template LogicalResult importUnary<dnn::AsinOp>(NodeImporter &);
template LogicalResult importUnary<dnn::AcosOp>(NodeImporter &);
template LogicalResult importUnary<dnn::AtanOp>(NodeImporter &);
template LogicalResult importUnary<dnn::SinhOp>(NodeImporter &);
template LogicalResult importUnary<dnn::CoshOp>(NodeImporter &);
template LogicalResult importUnary<dnn::AsinhOp>(NodeImporter &);
template LogicalResult importUnary<dnn::AcoshOp>(NodeImporter &);
template LogicalResult importUnary<dnn::AtanhOp>(NodeImporter &);
template LogicalResult importUnary<dnn::NegOp>(NodeImporter &);
template LogicalResult importUnary<dnn::AbsOp>(NodeImporter &);
template LogicalResult importUnary<dnn::NotOp>(NodeImporter &);
template LogicalResult importBinary<dnn::AddOp>(NodeImporter &);
template LogicalResult importBinary<dnn::SubOp>(NodeImporter &);
template LogicalResult importBinary<dnn::MulOp>(NodeImporter &);
template LogicalResult importBinary<dnn::DivOp>(NodeImporter &);
template LogicalResult importBinary<dnn::AndOp>(NodeImporter &);
template LogicalResult importBinary<dnn::OrOp>(NodeImporter &);
template LogicalResult importBinary<dnn::XorOp>(NodeImporter &);
template LogicalResult importCompare<dnn::EqualOp>(NodeImporter &);
template LogicalResult importCompare<dnn::LessOp>(NodeImporter &);
template LogicalResult importCompare<dnn::LessEqualOp>(NodeImporter &);
template LogicalResult importCompare<dnn::GreaterOp>(NodeImporter &);
template LogicalResult importCompare<dnn::GreaterEqualOp>(NodeImporter &);
template LogicalResult importVariadic<dnn::MaxOp>(NodeImporter &);
template LogicalResult importVariadic<dnn::MinOp>(NodeImporter &);
template LogicalResult importVariadic<dnn::AddOp>(NodeImporter &);
} // namespace dnnc::onnx_import
