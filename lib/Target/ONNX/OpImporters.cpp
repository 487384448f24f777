//===- OpImporters.cpp - per-op ONNX handlers ---------------*- C++ -*-===//
//
// One handler per ONNX op type. Each maps the node onto normalised `dnn` ops
// (explicit broadcasts, non-negative sorted axes, explicit pads) and records
// the oldest opset whose semantics it implements.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/FormatVariadic.h"

#include <map>
#include <numeric>

#include <cmath>
#include <limits>

using namespace mlir;
using namespace dnnc;
using namespace dnnc::onnx_import;
namespace dnn = dnnc::dnn;

/// Shape of a value.
static ArrayRef<int64_t> shapeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape();
}
/// Element type of a value.
static Type eltOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getElementType();
}
/// Rank of a value.
static int64_t rankOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getRank();
}
/// Product of `dims`.
static int64_t product(ArrayRef<int64_t> dims) {
  int64_t p = 1;
  for (int64_t d : dims)
    p *= d;
  return p;
}

static LogicalResult checkSize(NodeImporter &n, ArrayRef<int64_t> shape);

/// Normalises a possibly negative `axis` for `rank`; fails with a message.
static FailureOr<int64_t> normAxis(NodeImporter &n, int64_t axis, int64_t rank,
                                   StringRef what = "axis") {
  if (axis < -rank || axis >= rank)
    return n.fail(what + " " + Twine(axis) + " is out of range for rank " +
                  Twine(rank));
  return axis < 0 ? axis + rank : axis;
}

/// Normalises, sorts and checks a list of axes.
static FailureOr<SmallVector<int64_t>>
normAxes(NodeImporter &n, ArrayRef<int64_t> axes, int64_t rank) {
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

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

template <typename OpT> static LogicalResult importUnary(NodeImporter &n) {
  if (failed(n.checkArity(1, 1, 1)))
    return failure();
  Value x = n.input(0);
  return n.setResult(n.build<OpT>(x.getType(), x));
}

template <typename OpT> static LogicalResult importBinary(NodeImporter &n) {
  if (failed(n.checkArity(2, 2, 1)))
    return failure();
  Value lhs = n.input(0), rhs = n.input(1);
  if (failed(n.broadcastPair(lhs, rhs)))
    return failure();
  return n.setResult(n.build<OpT>(lhs.getType(), lhs, rhs));
}

template <typename OpT> static LogicalResult importCompare(NodeImporter &n) {
  if (failed(n.checkArity(2, 2, 1)))
    return failure();
  Value lhs = n.input(0), rhs = n.input(1);
  if (failed(n.broadcastPair(lhs, rhs)))
    return failure();
  return n.setResult(n.build<OpT>(
      RankedTensorType::get(shapeOf(lhs), n.b.getI1Type()), lhs, rhs));
}

/// IsNaN-9 (opset 13 and 20 only add element types).
static LogicalResult importIsNaN(NodeImporter &n) {
  if (failed(n.checkArity(1, 1, 1)))
    return failure();
  Value x = n.input(0);
  if (!isa<FloatType>(eltOf(x)))
    return n.fail("input must be a floating-point tensor");
  return n.setResult(n.build<dnn::IsNaNOp>({}, x));
}

/// Fails unless every input up to numInputs() is present.
static LogicalResult requireAllInputs(NodeImporter &n) {
  for (int i = 0; i < n.numInputs(); ++i)
    if (!n.hasInput(i))
      return n.fail("input " + Twine(i) + " is missing");
  return success();
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

template <typename OpT> static LogicalResult importVariadic(NodeImporter &n) {
  return n.setResult(combineInputs<OpT>(n));
}

/// Pow. The exponent takes the base's type; an integer base is raised in
/// f64 and the result cast back (truncated, as onnxruntime's
/// `static_cast<T>(std::pow(x, y))`).
static LogicalResult importPow(NodeImporter &n) {
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

static LogicalResult importWhere(NodeImporter &n) {
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

static LogicalResult importCast(NodeImporter &n) {
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
static LogicalResult importCastLike(NodeImporter &n) {
  if (failed(n.checkArity(2, 2, 1)))
    return failure();
  Value x = n.input(0);
  return n.setResult(n.build<dnn::CastOp>(
      RankedTensorType::get(shapeOf(x), eltOf(n.input(1))), x));
}

/// Mod-10/13: `fmod = 1` is the truncated remainder (`dnn.rem`), `fmod = 0`
/// the floored one (`dnn.mod`), which ONNX defines for integers only.
static LogicalResult importMod(NodeImporter &n) {
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
static LogicalResult importBitShift(NodeImporter &n) {
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

static LogicalResult importGelu(NodeImporter &n) {
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

static LogicalResult importLeakyRelu(NodeImporter &n) {
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

static LogicalResult importClip(NodeImporter &n) {
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
// Identity-like and constants
//===----------------------------------------------------------------------===//

static LogicalResult importIdentity(NodeImporter &n) {
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

static LogicalResult importDropout(NodeImporter &n) {
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

static LogicalResult importConstant(NodeImporter &n) {
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

static LogicalResult importShape(NodeImporter &n) {
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

static LogicalResult importSize(NodeImporter &n) {
  if (failed(n.checkArity(1, 1, 1)))
    return failure();
  auto type = RankedTensorType::get({}, n.b.getIntegerType(64));
  n.setOutput(0, n.constant(DenseElementsAttr::get(
                     type, product(shapeOf(n.input(0))))));
  return success();
}

static LogicalResult importConstantOfShape(NodeImporter &n) {
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

static LogicalResult importRange(NodeImporter &n) {
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

//===----------------------------------------------------------------------===//
// Shape manipulation
//===----------------------------------------------------------------------===//

static LogicalResult setReshaped(NodeImporter &n, ArrayRef<int64_t> shape) {
  return n.setResult(n.reshape(n.input(0), shape));
}

static LogicalResult importReshape(NodeImporter &n) {
  if (failed(n.checkArity(2, 2, 1)))
    return failure();
  auto target = n.constantInts(1, "shape");
  if (failed(target))
    return failure();
  auto allowZero = n.getInt("allowzero", 0);
  if (failed(allowZero))
    return failure();
  ArrayRef<int64_t> in = shapeOf(n.input(0));
  SmallVector<int64_t> shape;
  int inferIdx = -1;
  for (auto [i, d] : llvm::enumerate(*target)) {
    if (d == 0 && !*allowZero) {
      if (i >= in.size())
        return n.fail("shape entry 0 at index " + Twine(i) +
                      " copies a dimension the input does not have");
      shape.push_back(in[i]);
    } else if (d == -1) {
      if (inferIdx >= 0)
        return n.fail("shape has more than one -1");
      inferIdx = i;
      shape.push_back(1);
    } else if (d < 0) {
      return n.fail("shape has negative dimension " + Twine(d));
    } else {
      shape.push_back(d);
    }
  }
  // The target comes from the model: bound it before multiplying it out.
  if (failed(checkSize(n, shape)))
    return failure();
  int64_t total = product(in), known = product(shape);
  // A re-batched graph (dnnc --batch on a fixed batch): a shape whose first
  // entry states the old batch (or a multiple, as batch x heads) scales
  // with it when the data grew by the batch factor.
  if (n.rebatch.factor > 1 && inferIdx < 0 && !shape.empty() &&
      (*target)[0] > 0 && (*target)[0] % n.rebatch.from == 0 &&
      known != total && known * n.rebatch.factor == total) {
    shape[0] *= n.rebatch.factor;
    known = total;
  }
  if (inferIdx >= 0) {
    if (known == 0 || total % known != 0)
      return n.fail("cannot infer the -1 dimension reshaping " + Twine(total) +
                    " elements");
    shape[inferIdx] = total / known;
  }
  if (product(shape) != total)
    return n.fail("cannot reshape " + Twine(total) + " elements to " +
                  Twine(product(shape)) + " (shape mismatch)");
  return setReshaped(n, shape);
}

static LogicalResult importFlatten(NodeImporter &n) {
  if (failed(n.checkArity(1, 1, 1)))
    return failure();
  ArrayRef<int64_t> in = shapeOf(n.input(0));
  int64_t rank = in.size();
  auto axis = n.getInt("axis", 1);
  if (failed(axis))
    return failure();
  if (*axis < -rank || *axis > rank)
    return n.fail("axis " + Twine(*axis) + " is out of range");
  int64_t a = *axis < 0 ? *axis + rank : *axis;
  return setReshaped(n, {product(in.take_front(a)), product(in.drop_front(a))});
}

/// Reads axes from the attribute (before `inputSince`) or input 1.
static FailureOr<std::optional<SmallVector<int64_t>>>
axesAttrOrInput(NodeImporter &n, int64_t inputSince) {
  if (n.opset < inputSince)
    return n.getInts("axes");
  if (!n.hasInput(1))
    return std::optional<SmallVector<int64_t>>();
  auto v = n.constantInts(1, "axes");
  if (failed(v))
    return failure();
  return std::optional<SmallVector<int64_t>>(*v);
}

static LogicalResult importSqueeze(NodeImporter &n) {
  if (failed(n.checkArity(1, n.opset >= 13 ? 2 : 1, 1)))
    return failure();
  auto axes = axesAttrOrInput(n, 13);
  if (failed(axes))
    return failure();
  ArrayRef<int64_t> in = shapeOf(n.input(0));
  SmallVector<int64_t> drop;
  if (*axes) {
    auto norm = normAxes(n, **axes, in.size());
    if (failed(norm))
      return failure();
    drop = *norm;
    for (int64_t a : drop)
      if (in[a] != 1)
        return n.fail("cannot squeeze dimension " + Twine(a) + " of extent " +
                      Twine(in[a]));
  } else {
    for (auto [i, d] : llvm::enumerate(in))
      if (d == 1)
        drop.push_back(i);
  }
  SmallVector<int64_t> shape;
  for (auto [i, d] : llvm::enumerate(in))
    if (!llvm::is_contained(drop, static_cast<int64_t>(i)))
      shape.push_back(d);
  return setReshaped(n, shape);
}

static LogicalResult importUnsqueeze(NodeImporter &n) {
  if (failed(n.checkArity(1, n.opset >= 13 ? 2 : 1, 1)))
    return failure();
  auto axes = axesAttrOrInput(n, 13);
  if (failed(axes))
    return failure();
  if (!*axes)
    return n.fail("axes are required");
  ArrayRef<int64_t> in = shapeOf(n.input(0));
  int64_t outRank = in.size() + (*axes)->size();
  auto norm = normAxes(n, **axes, outRank);
  if (failed(norm))
    return failure();
  SmallVector<int64_t> shape;
  size_t next = 0;
  for (int64_t i = 0; i < outRank; ++i)
    shape.push_back(llvm::is_contained(*norm, i) ? 1 : in[next++]);
  return setReshaped(n, shape);
}

static LogicalResult importTranspose(NodeImporter &n) {
  if (failed(n.checkArity(1, 1, 1)))
    return failure();
  Value x = n.input(0);
  auto perm = n.getInts("perm");
  if (failed(perm))
    return failure();
  SmallVector<int64_t> p;
  if (*perm)
    p = **perm;
  else
    for (int64_t i = rankOf(x) - 1; i >= 0; --i)
      p.push_back(i);
  return n.setResult(
      n.build<dnn::TransposeOp>({}, x, n.b.getDenseI64ArrayAttr(p)));
}

static LogicalResult importConcat(NodeImporter &n) {
  if (failed(n.checkArity(1, std::numeric_limits<int>::max(), 1)))
    return failure();
  auto axis = n.getInt("axis", std::numeric_limits<int64_t>::min());
  if (failed(axis))
    return failure();
  if (*axis == std::numeric_limits<int64_t>::min())
    return n.fail("required attribute 'axis' is missing");
  SmallVector<Value> inputs;
  for (int i = 0; i < n.numInputs(); ++i)
    if (n.hasInput(i))
      inputs.push_back(n.input(i));
  auto a = normAxis(n, *axis, rankOf(inputs[0]));
  if (failed(a))
    return failure();
  auto r =
      n.build<dnn::ConcatOp>({}, ValueRange(inputs), n.b.getI64IntegerAttr(*a));
  if (failed(r))
    return failure();
  n.setOutput(0, *r);
  return success();
}

/// Emits `dnn.slice` taking [start, start + size * step) along `axis`.
static FailureOr<Value> sliceAxis(NodeImporter &n, Value x, int64_t axis,
                                  int64_t start, int64_t size, int64_t step) {
  SmallVector<int64_t> starts(rankOf(x), 0), steps(rankOf(x), 1);
  SmallVector<int64_t> shape(shapeOf(x));
  starts[axis] = size > 0 ? start : 0;
  steps[axis] = step;
  shape[axis] = size;
  return n.build<dnn::SliceOp>(RankedTensorType::get(shape, eltOf(x)), x,
                               n.b.getDenseI64ArrayAttr(starts),
                               n.b.getDenseI64ArrayAttr(steps));
}

static LogicalResult importSplit(NodeImporter &n) {
  if (failed(n.checkArity(1, n.opset >= 13 ? 2 : 1,
                          std::numeric_limits<int>::max())))
    return failure();
  Value x = n.input(0);
  auto axisAttr = n.getInt("axis", 0);
  if (failed(axisAttr))
    return failure();
  auto axis = normAxis(n, *axisAttr, rankOf(x));
  if (failed(axis))
    return failure();
  int64_t extent = shapeOf(x)[*axis];
  int64_t numOutputs = n.node.output_size();
  SmallVector<int64_t> sizes;
  if (n.opset >= 13 && n.hasInput(1)) {
    auto s = n.constantInts(1, "split");
    if (failed(s))
      return failure();
    sizes = *s;
  } else if (n.opset < 13) {
    auto s = n.getInts("split");
    if (failed(s))
      return failure();
    if (*s)
      sizes = **s;
  }
  if (sizes.empty()) {
    auto num = n.getInt("num_outputs", numOutputs);
    if (failed(num))
      return failure();
    if (*num < 1 || *num != numOutputs)
      return n.fail("num_outputs does not match the number of outputs");
    int64_t chunk = (extent + *num - 1) / *num;
    if (n.opset < 18 && extent % *num != 0)
      return n.fail("dimension of extent " + Twine(extent) +
                    " cannot be split evenly into " + Twine(*num));
    for (int64_t i = 0, left = extent; i < *num; ++i, left -= chunk)
      sizes.push_back(std::max<int64_t>(0, std::min(chunk, left)));
  }
  if (static_cast<int64_t>(sizes.size()) != numOutputs)
    return n.fail("split has " + Twine(sizes.size()) + " sizes for " +
                  Twine(numOutputs) + " outputs");
  if (llvm::any_of(sizes, [](int64_t s) { return s < 0; }) ||
      product(sizes) < 0 ||
      std::accumulate(sizes.begin(), sizes.end(), int64_t(0)) != extent)
    return n.fail("split sizes do not add up to the dimension's extent " +
                  Twine(extent));
  int64_t offset = 0;
  for (int64_t i = 0; i < numOutputs; ++i) {
    auto r = sliceAxis(n, x, *axis, offset, sizes[i], 1);
    if (failed(r))
      return failure();
    n.setOutput(i, *r);
    offset += sizes[i];
  }
  return success();
}

static LogicalResult importSlice(NodeImporter &n) {
  if (failed(n.checkArity(n.opset < 10 ? 1 : 3, n.opset < 10 ? 1 : 5, 1)))
    return failure();
  Value x = n.input(0);
  int64_t rank = rankOf(x);
  SmallVector<int64_t> starts, ends, axes, steps;
  if (n.opset < 10) {
    auto s = n.getRequiredInts("starts");
    auto e = n.getRequiredInts("ends");
    auto a = n.getInts("axes");
    if (failed(s) || failed(e) || failed(a))
      return failure();
    starts = *s;
    ends = *e;
    if (*a)
      axes = **a;
  } else {
    auto s = n.constantInts(1, "starts");
    if (failed(s))
      return failure();
    auto e = n.constantInts(2, "ends");
    if (failed(e))
      return failure();
    starts = *s;
    ends = *e;
    if (n.hasInput(3)) {
      auto a = n.constantInts(3, "axes");
      if (failed(a))
        return failure();
      axes = *a;
    }
    if (n.hasInput(4)) {
      auto st = n.constantInts(4, "steps");
      if (failed(st))
        return failure();
      steps = *st;
    }
  }
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i)
      axes.push_back(i);
  if (steps.empty())
    steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() ||
      steps.size() != starts.size())
    return n.fail("starts, ends, axes and steps differ in length");
  SmallVector<int64_t> outStarts(rank, 0), outSteps(rank, 1);
  SmallVector<int64_t> shape(shapeOf(x));
  SmallVector<bool> seen(rank, false);
  for (size_t i = 0; i < starts.size(); ++i) {
    auto a = normAxis(n, axes[i], rank);
    if (failed(a))
      return failure();
    if (seen[*a])
      return n.fail("axes contain a duplicate");
    seen[*a] = true;
    int64_t dim = shape[*a], step = steps[i];
    if (step == 0)
      return n.fail("step is zero");
    int64_t s = starts[i], e = ends[i];
    if (s < 0)
      s = s < -dim ? -1 : s + dim;
    if (e < 0)
      e = e < -dim ? -1 : e + dim;
    int64_t size;
    if (step > 0) {
      s = std::clamp<int64_t>(s, 0, dim);
      e = std::clamp<int64_t>(e, 0, dim);
      size = e > s ? (e - s + step - 1) / step : 0;
    } else {
      s = std::clamp<int64_t>(s, -1, dim - 1);
      e = std::clamp<int64_t>(e, -1, dim - 1);
      size = s > e ? (s - e + (-step) - 1) / (-step) : 0;
    }
    outStarts[*a] = size > 0 ? s : 0;
    outSteps[*a] = step;
    shape[*a] = size;
  }
  return n.setResult(n.build<dnn::SliceOp>(
      RankedTensorType::get(shape, eltOf(x)), x,
      n.b.getDenseI64ArrayAttr(outStarts), n.b.getDenseI64ArrayAttr(outSteps)));
}

static LogicalResult importGather(NodeImporter &n) {
  if (failed(n.checkArity(2, 2, 1)))
    return failure();
  Value data = n.input(0), indices = n.input(1);
  auto axisAttr = n.getInt("axis", 0);
  if (failed(axisAttr))
    return failure();
  auto axis = normAxis(n, *axisAttr, rankOf(data));
  if (failed(axis))
    return failure();
  if (DenseElementsAttr idx = NodeImporter::getConstant(indices)) {
    int64_t extent = shapeOf(data)[*axis];
    for (const APInt &v : idx.getValues<APInt>())
      if (v.getSExtValue() < -extent || v.getSExtValue() >= extent)
        return n.fail("index " + Twine(v.getSExtValue()) +
                      " is out of range for an axis of extent " +
                      Twine(extent));
  }
  auto r =
      n.build<dnn::GatherOp>({}, data, indices, n.b.getI64IntegerAttr(*axis));
  if (failed(r))
    return failure();
  n.setOutput(0, *r);
  return success();
}

static LogicalResult importExpand(NodeImporter &n) {
  if (failed(n.checkArity(2, 2, 1)))
    return failure();
  auto target = n.constantInts(1, "shape");
  if (failed(target))
    return failure();
  Value x = n.input(0);
  auto shape = dnn::broadcastShapes(shapeOf(x), *target);
  if (failed(shape))
    return n.fail("input shape is not broadcastable to the requested shape");
  return n.setResult(n.broadcastTo(x, *shape));
}

//===----------------------------------------------------------------------===//
// Contractions
//===----------------------------------------------------------------------===//

static LogicalResult importMatMul(NodeImporter &n) {
  if (failed(n.checkArity(2, 2, 1)))
    return failure();
  Value a = n.input(0), b = n.input(1);
  if (eltOf(a) != eltOf(b))
    return n.fail("operand element types differ");
  SmallVector<int64_t> as(shapeOf(a)), bs(shapeOf(b));
  if (as.empty() || bs.empty())
    return n.fail("MatMul operands must have rank >= 1");
  bool aVec = as.size() == 1, bVec = bs.size() == 1;
  if (aVec)
    as.insert(as.begin(), 1);
  if (bVec)
    bs.push_back(1);
  if (as.back() != bs[bs.size() - 2])
    return n.fail("operand shapes are incompatible: contracting dimensions " +
                  Twine(as.back()) + " and " + Twine(bs[bs.size() - 2]) +
                  " differ");
  ArrayRef<int64_t> aBatch = ArrayRef<int64_t>(as).drop_back(2);
  ArrayRef<int64_t> bBatch = ArrayRef<int64_t>(bs).drop_back(2);
  auto batch = dnn::broadcastShapes(aBatch, bBatch);
  if (failed(batch))
    return n.fail("operand shapes are incompatible: batch dimensions are not "
                  "broadcastable");
  auto ra = n.reshape(a, as);
  auto rb = n.reshape(b, bs);
  if (failed(ra) || failed(rb))
    return failure();
  a = *ra;
  b = *rb;
  SmallVector<int64_t> fullA(*batch), fullB(*batch);
  fullA.append({as[as.size() - 2], as.back()});
  fullB.append({bs[bs.size() - 2], bs.back()});
  if (!(bBatch.empty() && ArrayRef<int64_t>(*batch) == aBatch)) {
    auto ba = n.broadcastTo(a, fullA);
    auto bb = n.broadcastTo(b, fullB);
    if (failed(ba) || failed(bb))
      return failure();
    a = *ba;
    b = *bb;
  }
  auto r = n.build<dnn::MatMulOp>({}, a, b);
  if (failed(r))
    return failure();
  SmallVector<int64_t> outShape(*batch);
  if (!aVec)
    outShape.push_back(as[as.size() - 2]);
  if (!bVec)
    outShape.push_back(bs.back());
  return n.setResult(n.reshape(*r, outShape));
}

static LogicalResult importGemm(NodeImporter &n) {
  if (failed(n.checkArity(2, 3, 1)))
    return failure();
  auto transA = n.getInt("transA", 0);
  auto transB = n.getInt("transB", 0);
  auto alpha = n.getFloat("alpha", 1.0f);
  auto beta = n.getFloat("beta", 1.0f);
  if (failed(transA) || failed(transB) || failed(alpha) || failed(beta))
    return failure();
  Value a = n.input(0), b = n.input(1);
  if (rankOf(a) != 2 || rankOf(b) != 2)
    return n.fail("A and B must be matrices");
  auto transpose = [&](Value v) {
    return n.build<dnn::TransposeOp>({}, v, n.b.getDenseI64ArrayAttr({1, 0}));
  };
  if (*transA) {
    auto t = transpose(a);
    if (failed(t))
      return failure();
    a = *t;
  }
  if (*transB) {
    auto t = transpose(b);
    if (failed(t))
      return failure();
    b = *t;
  }
  auto y = n.build<dnn::MatMulOp>({}, a, b);
  if (failed(y))
    return failure();
  auto type = cast<RankedTensorType>(y->getType());
  if (!isa<FloatType>(type.getElementType()) &&
      (*alpha != 1.0f || (n.hasInput(2) && *beta != 1.0f)))
    return n.fail("alpha and beta other than 1 need float operands");
  Value out = *y;
  if (*alpha != 1.0f) {
    auto s = n.build<dnn::MulOp>(type, out, n.splatFloat(type, *alpha));
    if (failed(s))
      return failure();
    out = *s;
  }
  if (n.hasInput(2) && *beta != 0.0f) {
    auto c = n.broadcastTo(n.input(2), type.getShape());
    if (failed(c))
      return failure();
    Value cv = *c;
    if (*beta != 1.0f) {
      auto s = n.build<dnn::MulOp>(type, cv, n.splatFloat(type, *beta));
      if (failed(s))
        return failure();
      cv = *s;
    }
    auto sum = n.build<dnn::AddOp>(type, out, cv);
    if (failed(sum))
      return failure();
    out = *sum;
  }
  n.setOutput(0, out);
  return success();
}

/// Einsum-12: the equation rewritten into the explicit form `dnn.einsum`
/// takes: every label (either case) renamed to a lower-case letter, each
/// operand's ellipsis replaced by labels of its leading dimensions (aligned
/// from the right, as numpy broadcasting), operands broadcast where an
/// ellipsis dimension has extent 1 against a larger one, and the implicit
/// output (`...` then the labels used once, alphabetically) made explicit.
static LogicalResult importEinsum(NodeImporter &n) {
  if (failed(n.checkArity(1, std::numeric_limits<int>::max(), 1)) ||
      failed(requireAllInputs(n)))
    return failure();
  auto eq = n.getString("equation", "");
  if (failed(eq))
    return failure();
  std::string equation;
  for (char c : *eq)
    if (c != ' ')
      equation.push_back(c);
  size_t arrow = equation.find("->");
  std::string lhs = equation.substr(0, arrow);
  std::optional<std::string> rhs;
  if (arrow != std::string::npos)
    rhs = equation.substr(arrow + 2);
  SmallVector<std::string> terms;
  SmallVector<StringRef> parts;
  StringRef(lhs).split(parts, ',');
  for (StringRef term : parts)
    terms.push_back(term.str());
  int numInputs = n.numInputs();
  if (static_cast<int>(terms.size()) != numInputs)
    return n.fail("equation has " + Twine(terms.size()) + " operand terms "
                  "for " + Twine(numInputs) + " inputs");
  // Checks a term: letters and at most one ellipsis; returns its letters.
  auto lettersOf = [&](StringRef term, bool &ellipsis) -> FailureOr<std::string> {
    size_t at = term.find("...");
    ellipsis = at != StringRef::npos;
    std::string letters =
        ellipsis ? (term.take_front(at) + term.drop_front(at + 3)).str()
                 : term.str();
    for (char c : letters)
      if (!std::isalpha(static_cast<unsigned char>(c)))
        return n.fail("equation '" + *eq + "' has an invalid term '" + term +
                      "'");
    return letters;
  };
  // Renames the letters (either case) to lower-case ones, in order of first
  // appearance; ellipsis dimensions get the letters after them.
  std::map<char, char> rename;
  auto renamed = [&](char c) -> FailureOr<char> {
    auto it = rename.find(c);
    if (it != rename.end())
      return it->second;
    if (rename.size() >= 26)
      return n.fail("einsum with more than 26 labels is not supported");
    char to = static_cast<char>('a' + rename.size());
    rename[c] = to;
    return to;
  };
  SmallVector<std::string> letters;
  SmallVector<bool> hasEllipsis;
  SmallVector<int64_t> ellipsisRank;
  int64_t maxEllipsis = 0;
  for (auto [i, term] : llvm::enumerate(terms)) {
    bool ellipsis;
    auto l = lettersOf(term, ellipsis);
    if (failed(l))
      return failure();
    int64_t rank = rankOf(n.input(i));
    int64_t extra = rank - static_cast<int64_t>(l->size());
    if (extra < 0 || (!ellipsis && extra != 0))
      return n.fail("term '" + term + "' does not match input " + Twine(i) +
                    " of rank " + Twine(rank));
    letters.push_back(*l);
    hasEllipsis.push_back(ellipsis);
    ellipsisRank.push_back(extra);
    maxEllipsis = std::max(maxEllipsis, extra);
  }
  std::map<char, int> counts;
  for (const std::string &l : letters)
    for (char c : l) {
      ++counts[c];
      if (failed(renamed(c)))
        return failure();
    }
  if (rhs) {
    bool ellipsis;
    auto l = lettersOf(*rhs, ellipsis);
    if (failed(l))
      return failure();
    for (char c : *l)
      if (!counts.count(c))
        return n.fail("output label '" + Twine(c) +
                      "' is not an operand label");
  }
  if (rename.size() + maxEllipsis > 26)
    return n.fail("einsum with more than 26 labels is not supported");
  std::string ellipsisLabels;
  for (int64_t k = 0; k < maxEllipsis; ++k)
    ellipsisLabels.push_back(static_cast<char>('a' + rename.size() + k));
  // The extent of each ellipsis label: the largest among the operands, which
  // must otherwise have it or 1.
  SmallVector<int64_t> ellipsisExtent(maxEllipsis, 1);
  for (auto [i, extra] : llvm::enumerate(ellipsisRank)) {
    ArrayRef<int64_t> shape = shapeOf(n.input(i));
    size_t at = terms[i].find("...");
    for (int64_t k = 0; k < extra; ++k) {
      int64_t d = shape[at + k], &e = ellipsisExtent[maxEllipsis - extra + k];
      if (d != e && d != 1 && e != 1)
        return n.fail("ellipsis dimensions of extents " + Twine(e) + " and " +
                      Twine(d) + " do not broadcast");
      e = std::max(e, d);
    }
  }
  std::string explicitEq;
  SmallVector<Value> inputs;
  for (auto [i, term] : llvm::enumerate(terms)) {
    Value input = n.input(i);
    std::string out;
    SmallVector<int64_t> target(shapeOf(input));
    size_t at = term.find("...");
    for (size_t pos = 0; pos < term.size();) {
      if (at != std::string::npos && pos == at) {
        for (int64_t k = 0; k < ellipsisRank[i]; ++k) {
          int64_t label = maxEllipsis - ellipsisRank[i] + k;
          out.push_back(ellipsisLabels[label]);
          target[out.size() - 1] = ellipsisExtent[label];
        }
        pos += 3;
        continue;
      }
      out.push_back(rename[term[pos++]]);
    }
    if (target != shapeOf(input)) {
      auto b = n.broadcastTo(input, target);
      if (failed(b))
        return failure();
      input = *b;
    }
    inputs.push_back(input);
    explicitEq += (i ? "," : "") + out;
  }
  explicitEq += "->";
  if (rhs) {
    size_t at = rhs->find("...");
    for (size_t pos = 0; pos < rhs->size();) {
      if (at != std::string::npos && pos == at) {
        explicitEq += ellipsisLabels;
        pos += 3;
        continue;
      }
      explicitEq.push_back(rename[(*rhs)[pos++]]);
    }
  } else {
    // Implicit output: the ellipsis, then the labels used once, in
    // alphabetical order of the original letters.
    explicitEq += ellipsisLabels;
    for (auto [c, k] : counts)
      if (k == 1)
        explicitEq.push_back(rename[c]);
  }
  return n.setResult(n.build<dnn::EinsumOp>({}, ValueRange(inputs),
                                            n.b.getStringAttr(explicitEq)));
}

//===----------------------------------------------------------------------===//
// Convolution and pooling
//===----------------------------------------------------------------------===//

/// Spatial window attributes shared by Conv and the pools.
struct Window {
  SmallVector<int64_t> kernel, strides, pads, dilations;
};

/// Reads kernel/strides/pads/dilations/auto_pad for `numSpatial` dims and
/// resolves auto_pad to explicit pads.
static FailureOr<Window> readWindow(NodeImporter &n, ArrayRef<int64_t> spatial,
                                    ArrayRef<int64_t> kernel) {
  int64_t k = spatial.size();
  Window w;
  w.kernel.assign(kernel.begin(), kernel.end());
  auto strides = n.getInts("strides");
  auto pads = n.getInts("pads");
  auto dilations = n.getInts("dilations");
  auto autoPad = n.getString("auto_pad", "NOTSET");
  if (failed(strides) || failed(pads) || failed(dilations) || failed(autoPad))
    return failure();
  w.strides = *strides ? **strides : SmallVector<int64_t>(k, 1);
  w.dilations = *dilations ? **dilations : SmallVector<int64_t>(k, 1);
  w.pads = *pads ? **pads : SmallVector<int64_t>(2 * k, 0);
  if (static_cast<int64_t>(w.strides.size()) != k ||
      static_cast<int64_t>(w.dilations.size()) != k ||
      static_cast<int64_t>(w.pads.size()) != 2 * k ||
      static_cast<int64_t>(w.kernel.size()) != k)
    return n.fail("kernel_shape, strides, dilations and pads do not match "
                  "the " +
                  Twine(k) + " spatial dimensions");
  if (llvm::any_of(w.strides, [](int64_t s) { return s < 1; }) ||
      llvm::any_of(w.dilations, [](int64_t s) { return s < 1; }) ||
      llvm::any_of(w.kernel, [](int64_t s) { return s < 1; }))
    return n.fail("kernel_shape, strides and dilations must be >= 1");
  if (*autoPad == "SAME_UPPER" || *autoPad == "SAME_LOWER") {
    for (int64_t i = 0; i < k; ++i) {
      int64_t out = (spatial[i] + w.strides[i] - 1) / w.strides[i];
      int64_t eff = (w.kernel[i] - 1) * w.dilations[i] + 1;
      int64_t total =
          std::max<int64_t>(0, (out - 1) * w.strides[i] + eff - spatial[i]);
      int64_t small = total / 2, large = total - small;
      w.pads[i] = *autoPad == "SAME_UPPER" ? small : large;
      w.pads[i + k] = *autoPad == "SAME_UPPER" ? large : small;
    }
  } else if (*autoPad == "VALID") {
    w.pads.assign(2 * k, 0);
  } else if (*autoPad != "NOTSET") {
    return n.fail("unsupported auto_pad '" + *autoPad + "'");
  }
  return w;
}

static LogicalResult importConv(NodeImporter &n) {
  if (failed(n.checkArity(2, 3, 1)))
    return failure();
  Value x = n.input(0), wt = n.input(1);
  if (rankOf(x) < 3 || rankOf(wt) != rankOf(x))
    return n.fail("input must be [N, C, spatial...] and weight of equal rank");
  auto kernelAttr = n.getInts("kernel_shape");
  auto group = n.getInt("group", 1);
  if (failed(kernelAttr) || failed(group))
    return failure();
  ArrayRef<int64_t> kernel = shapeOf(wt).drop_front(2);
  if (*kernelAttr && ArrayRef<int64_t>(**kernelAttr) != kernel)
    return n.fail("kernel_shape does not match the weight's shape");
  auto w = readWindow(n, shapeOf(x).drop_front(2), kernel);
  if (failed(w))
    return failure();
  return n.setResult(n.build<dnn::ConvOp>(
      {}, x, wt, n.hasInput(2) ? n.input(2) : Value(),
      n.b.getDenseI64ArrayAttr(w->strides), n.b.getDenseI64ArrayAttr(w->pads),
      n.b.getDenseI64ArrayAttr(w->dilations), n.b.getI64IntegerAttr(*group)));
}

/// What MaxPool and AveragePool share: the input and its resolved window.
struct PoolWindow {
  Value input;
  Window window;
  bool ceilMode;
};

/// Reads the input, kernel_shape, ceil_mode and window attributes of a pool.
static FailureOr<PoolWindow> readPool(NodeImporter &n) {
  if (failed(n.checkArity(1, 1, 1)))
    return failure();
  Value x = n.input(0);
  if (rankOf(x) < 3)
    return n.fail("input must be [N, C, spatial...]");
  auto kernel = n.getRequiredInts("kernel_shape");
  auto ceil = n.getInt("ceil_mode", 0);
  if (failed(kernel) || failed(ceil))
    return failure();
  auto w = readWindow(n, shapeOf(x).drop_front(2), *kernel);
  if (failed(w))
    return failure();
  return PoolWindow{x, *w, *ceil != 0};
}

/// MaxPool: integer inputs (uint8 images, int8) are pooled in float32 (up
/// to 16 bits) or float64, which hold them exactly.
static LogicalResult importMaxPool(NodeImporter &n) {
  auto p = readPool(n);
  if (failed(p) || failed(n.getInt("storage_order", 0)))
    return failure();
  const Window &w = p->window;
  Value x = p->input;
  Type elt = eltOf(x);
  auto intType = dyn_cast<IntegerType>(elt);
  if (intType && intType.getWidth() == 1)
    return n.fail("input must be numeric, not bool");
  if (intType) {
    Type f = intType.getWidth() <= 16 ? Type(n.b.getF32Type())
                                      : Type(n.b.getF64Type());
    auto cast = n.build<dnn::CastOp>(RankedTensorType::get(shapeOf(x), f), x);
    if (failed(cast))
      return failure();
    x = *cast;
  }
  auto pooled = n.build<dnn::MaxPoolOp>(
      {}, x, n.b.getDenseI64ArrayAttr(w.kernel),
      n.b.getDenseI64ArrayAttr(w.strides), n.b.getDenseI64ArrayAttr(w.pads),
      n.b.getDenseI64ArrayAttr(w.dilations), n.b.getBoolAttr(p->ceilMode));
  if (failed(pooled) || !intType)
    return n.setResult(pooled);
  return n.setResult(n.build<dnn::CastOp>(
      RankedTensorType::get(shapeOf(*pooled), elt), *pooled));
}

static LogicalResult importAveragePool(NodeImporter &n) {
  auto p = readPool(n);
  if (failed(p))
    return failure();
  auto countPad = n.getInt("count_include_pad", 0);
  if (failed(countPad))
    return failure();
  const Window &w = p->window;
  if (llvm::any_of(w.dilations, [](int64_t d) { return d != 1; }))
    return n.fail("dilated average pooling is not supported");
  return n.setResult(n.build<dnn::AvgPoolOp>(
      {}, p->input, n.b.getDenseI64ArrayAttr(w.kernel),
      n.b.getDenseI64ArrayAttr(w.strides), n.b.getDenseI64ArrayAttr(w.pads),
      n.b.getBoolAttr(p->ceilMode), n.b.getBoolAttr(*countPad != 0)));
}

template <typename OpT> static LogicalResult importGlobalPool(NodeImporter &n) {
  if (failed(n.checkArity(1, 1, 1)))
    return failure();
  Value x = n.input(0);
  if (rankOf(x) < 3)
    return n.fail("input must be [N, C, spatial...]");
  SmallVector<int64_t> axes;
  for (int64_t i = 2; i < rankOf(x); ++i)
    axes.push_back(i);
  return n.setResult(n.build<OpT>({}, x, n.b.getDenseI64ArrayAttr(axes),
                                  n.b.getBoolAttr(true)));
}

//===----------------------------------------------------------------------===//
// Normalisation, softmax, reductions
//===----------------------------------------------------------------------===//

template <typename OpT> static LogicalResult importSoftmax(NodeImporter &n) {
  if (failed(n.checkArity(1, 1, 1)))
    return failure();
  Value x = n.input(0);
  int64_t rank = rankOf(x);
  auto axisAttr = n.getInt("axis", n.opset >= 13 ? -1 : 1);
  if (failed(axisAttr))
    return failure();
  auto axis = normAxis(n, *axisAttr, std::max<int64_t>(rank, 1));
  if (failed(axis))
    return failure();
  if (n.opset >= 13) {
    auto r = n.build<OpT>(x.getType(), x, n.b.getI64IntegerAttr(*axis));
    if (failed(r))
      return failure();
    n.setOutput(0, *r);
    return success();
  }
  // Before opset 13 the input is coerced to 2-D around `axis`.
  ArrayRef<int64_t> shape = shapeOf(x);
  SmallVector<int64_t> flat = {product(shape.take_front(*axis)),
                               product(shape.drop_front(*axis))};
  auto f = n.reshape(x, flat);
  if (failed(f))
    return failure();
  auto r = n.build<OpT>(f->getType(), *f, n.b.getI64IntegerAttr(1));
  if (failed(r))
    return failure();
  return n.setResult(n.reshape(*r, shape));
}

static LogicalResult importLayerNorm(NodeImporter &n) {
  if (failed(n.checkArity(2, 3, 3)))
    return failure();
  Value x = n.input(0);
  auto axisAttr = n.getInt("axis", -1);
  auto eps = n.getFloat("epsilon", 1e-5f);
  auto stash = n.getInt("stash_type", 1);
  if (failed(axisAttr) || failed(eps) || failed(stash))
    return failure();
  auto axis = normAxis(n, *axisAttr, rankOf(x));
  if (failed(axis))
    return failure();
  ArrayRef<int64_t> norm = shapeOf(x).drop_front(*axis);
  auto scale = n.broadcastTo(n.input(1), norm);
  if (failed(scale))
    return failure();
  Value bias;
  if (n.hasInput(2)) {
    auto bb = n.broadcastTo(n.input(2), norm);
    if (failed(bb))
      return failure();
    bias = *bb;
  }
  auto results = n.buildOp<dnn::LayerNormOp>({}, x, *scale, bias,
                                             n.b.getI64IntegerAttr(*axis),
                                             n.b.getF32FloatAttr(*eps));
  if (failed(results))
    return failure();
  for (int i = 0; i < 3; ++i)
    n.setOutput(i, (*results)[i]);
  return success();
}

/// Broadcasts a per-channel vector [C] to the shape of `x` ([N, C, ...]).
static FailureOr<Value> perChannel(NodeImporter &n, Value v, Value x) {
  if (rankOf(v) != 1 || shapeOf(v)[0] != shapeOf(x)[1])
    return n.fail("per-channel inputs must be vectors of " +
                  Twine(shapeOf(x)[1]) + " channels");
  return n.build<dnn::BroadcastInDimOp>(
      RankedTensorType::get(shapeOf(x), eltOf(v)), v,
      n.b.getDenseI64ArrayAttr({1}));
}

static LogicalResult importBatchNorm(NodeImporter &n) {
  if (failed(n.checkArity(5, 5, 3)))
    return failure();
  Value x = n.input(0), scale = n.input(1), bias = n.input(2),
        mean = n.input(3), var = n.input(4);
  if (rankOf(x) < 2)
    return n.fail("input must be [N, C, ...]");
  auto eps = n.getFloat("epsilon", 1e-5f);
  auto momentum = n.getFloat("momentum", 0.9f);
  auto trainingMode = n.getInt("training_mode", 0);
  if (failed(eps) || failed(momentum) || failed(trainingMode))
    return failure();
  // Before opset 9: `spatial` (statistics per channel when 1, the only
  // form dnnc takes) and, before 7, `is_test`.
  if (n.opset < 9) {
    auto spatial = n.getInt("spatial", 1);
    auto isTest = n.getInt("is_test", 0);
    if (failed(spatial) || failed(isTest))
      return failure();
    if (*spatial != 1)
      return n.fail("attribute 'spatial' must be 1 (per-channel statistics)");
    if (n.opset < 7 && *isTest == 0)
      return n.fail("training mode (is_test = 0) is supported from opset 14 "
                    "(training_mode = 1)");
  }
  bool training = n.opset >= 14 && *trainingMode != 0;
  if (!training && (n.wantsOutput(1) || n.wantsOutput(2)))
    return n.fail("running mean/var outputs need training_mode = 1");
  auto vecType = cast<RankedTensorType>(scale.getType());
  if (training) {
    SmallVector<int64_t> axes = {0};
    for (int64_t i = 2; i < rankOf(x); ++i)
      axes.push_back(i);
    auto m = n.build<dnn::ReduceMeanOp>({}, x, n.b.getDenseI64ArrayAttr(axes),
                                        n.b.getBoolAttr(false));
    if (failed(m))
      return failure();
    auto mb = perChannel(n, *m, x);
    if (failed(mb))
      return failure();
    auto centered = n.build<dnn::SubOp>(x.getType(), x, *mb);
    if (failed(centered))
      return failure();
    auto sq = n.build<dnn::MulOp>(x.getType(), *centered, *centered);
    if (failed(sq))
      return failure();
    auto v = n.build<dnn::ReduceMeanOp>({}, *sq, n.b.getDenseI64ArrayAttr(axes),
                                        n.b.getBoolAttr(false));
    if (failed(v))
      return failure();
    // Running statistics: input * momentum + batch * (1 - momentum).
    auto running = [&](Value old, Value batch) -> FailureOr<Value> {
      auto a =
          n.build<dnn::MulOp>(vecType, old, n.splatFloat(vecType, *momentum));
      auto c = n.build<dnn::MulOp>(vecType, batch,
                                   n.splatFloat(vecType, 1.0 - *momentum));
      if (failed(a) || failed(c))
        return failure();
      return n.build<dnn::AddOp>(vecType, *a, *c);
    };
    if (n.wantsOutput(1)) {
      auto rm = running(mean, *m);
      if (failed(rm))
        return failure();
      n.setOutput(1, *rm);
    }
    if (n.wantsOutput(2)) {
      auto rv = running(var, *v);
      if (failed(rv))
        return failure();
      n.setOutput(2, *rv);
    }
    mean = *m;
    var = *v;
  }
  // y = x * k + (bias - mean * k), k = scale / sqrt(var + eps).
  auto ve = n.build<dnn::AddOp>(vecType, var, n.splatFloat(vecType, *eps));
  if (failed(ve))
    return failure();
  auto sd = n.build<dnn::SqrtOp>(vecType, *ve);
  if (failed(sd))
    return failure();
  auto k = n.build<dnn::DivOp>(vecType, scale, *sd);
  if (failed(k))
    return failure();
  auto mk = n.build<dnn::MulOp>(vecType, mean, *k);
  if (failed(mk))
    return failure();
  auto shift = n.build<dnn::SubOp>(vecType, bias, *mk);
  if (failed(shift))
    return failure();
  auto kb = perChannel(n, *k, x);
  auto sb = perChannel(n, *shift, x);
  if (failed(kb) || failed(sb))
    return failure();
  auto scaled = n.build<dnn::MulOp>(x.getType(), x, *kb);
  if (failed(scaled))
    return failure();
  return n.setResult(n.build<dnn::AddOp>(x.getType(), *scaled, *sb));
}

/// The axes and keepdims of a Reduce* node (`inputSince`: the opset from
/// which axes is an input), normalised and sorted; no axes with
/// `noop_with_empty_axes` set means "reduce nothing" (an empty list).
struct ReduceAxes {
  /// The reduced axes (empty: none).
  SmallVector<int64_t> axes;
  /// Whether reduced axes stay as extent-1 dimensions.
  bool keepDims;
};
static FailureOr<ReduceAxes> getReduceAxes(NodeImporter &n,
                                           int64_t inputSince) {
  if (failed(n.checkArity(1, n.opset >= inputSince ? 2 : 1, 1)))
    return failure();
  int64_t rank = rankOf(n.input(0));
  auto keepDims = n.getInt("keepdims", 1);
  auto noop = n.getInt("noop_with_empty_axes", 0);
  if (failed(keepDims) || failed(noop))
    return failure();
  auto axes = axesAttrOrInput(n, inputSince);
  if (failed(axes))
    return failure();
  ReduceAxes result{{}, *keepDims != 0};
  if (*axes && !(*axes)->empty()) {
    auto v = normAxes(n, **axes, rank);
    if (failed(v))
      return failure();
    result.axes = *v;
  } else if (!*noop) {
    for (int64_t i = 0; i < rank; ++i)
      result.axes.push_back(i);
  }
  return result;
}

/// Imports Reduce*; `inputSince` is the opset from which axes is an input.
template <typename OpT, int64_t InputSince>
static LogicalResult importReduce(NodeImporter &n) {
  auto r = getReduceAxes(n, InputSince);
  if (failed(r))
    return failure();
  Value x = n.input(0);
  if (r->axes.empty()) {
    n.setOutput(0, x);
    return success();
  }
  return n.setResult(n.build<OpT>({}, x, n.b.getDenseI64ArrayAttr(r->axes),
                                  n.b.getBoolAttr(r->keepDims)));
}

/// The `reduction` attribute of a loss node (default `mean`).
static FailureOr<dnn::LossReduction> getLossReduction(NodeImporter &n) {
  auto reduction = n.getString("reduction", "mean");
  if (failed(reduction))
    return failure();
  auto kind = llvm::StringSwitch<std::optional<dnn::LossReduction>>(*reduction)
                  .Case("none", dnn::LossReduction::None)
                  .Case("sum", dnn::LossReduction::Sum)
                  .Case("mean", dnn::LossReduction::Mean)
                  .Default(std::nullopt);
  if (!kind)
    return n.fail("unsupported reduction '" + *reduction + "'");
  return *kind;
}

/// The `ignore_index` attribute of a loss node, null when absent.
static FailureOr<IntegerAttr> getIgnoreIndex(NodeImporter &n) {
  if (!n.findAttr("ignore_index"))
    return IntegerAttr();
  auto v = n.getInt("ignore_index", 0);
  if (failed(v))
    return failure();
  return n.b.getI64IntegerAttr(*v);
}

static LogicalResult importSoftmaxCrossEntropy(NodeImporter &n) {
  if (failed(n.checkArity(2, 3, 2)))
    return failure();
  auto kind = getLossReduction(n);
  auto ignore = getIgnoreIndex(n);
  if (failed(kind) || failed(ignore))
    return failure();
  auto results = n.buildOp<dnn::SoftmaxCrossEntropyOp>(
      {}, n.input(0), n.input(1), n.hasInput(2) ? n.input(2) : Value(),
      dnn::LossReductionAttr::get(n.b.getContext(), *kind), *ignore);
  if (failed(results))
    return failure();
  n.setOutput(0, (*results)[0]);
  n.setOutput(1, (*results)[1]);
  return success();
}

//===----------------------------------------------------------------------===//
// Composite ops: decomposed into dnn ops, so every pass and backend (sharding
// rules, fusion, the cpu and cuda code) handles them with no op of their own
//===----------------------------------------------------------------------===//

namespace {
/// Builds the dnn ops of a decomposed node as straight-line code. The first
/// failed build (its message is the node's error) makes every later call a
/// no-op returning null; `finish` reports it or binds the result.
class Composer {
public:
  /// Composes ops for the node of `n`.
  explicit Composer(NodeImporter &n) : n(n) {}

  /// `OpT` built with result `types` (empty: inferred) from `args`.
  template <typename OpT, typename... Args>
  Value make(TypeRange types, Args &&...args) {
    if (failedBuild)
      return nullptr;
    auto r = n.build<OpT>(types, std::forward<Args>(args)...);
    if (failed(r)) {
      failedBuild = true;
      return nullptr;
    }
    return *r;
  }
  /// Elementwise unary `OpT` of `x`.
  template <typename OpT> Value unary(Value x) {
    return failedBuild ? nullptr : make<OpT>(x.getType(), x);
  }
  /// Elementwise binary `OpT` of operands of one type.
  template <typename OpT> Value binary(Value lhs, Value rhs) {
    return failedBuild ? nullptr : make<OpT>(lhs.getType(), lhs, rhs);
  }
  /// Elementwise comparison `OpT` (an `i1` tensor).
  template <typename OpT> Value compare(Value lhs, Value rhs) {
    if (failedBuild)
      return nullptr;
    return make<OpT>(RankedTensorType::get(shapeOf(lhs), n.b.getI1Type()), lhs,
                     rhs);
  }
  /// Whether each element of `x` is NaN (an `i1` tensor).
  Value isNaN(Value x) {
    if (failedBuild)
      return nullptr;
    return make<dnn::IsNaNOp>(
        RankedTensorType::get(shapeOf(x), n.b.getI1Type()), x);
  }
  /// `condition ? onTrue : onFalse` elementwise.
  Value select(Value condition, Value onTrue, Value onFalse) {
    if (failedBuild)
      return nullptr;
    return make<dnn::SelectOp>(onTrue.getType(), condition, onTrue, onFalse);
  }
  /// A constant of `type` with every element `value`.
  Value fill(RankedTensorType type, double value) {
    if (failedBuild)
      return nullptr;
    if (isa<FloatType>(type.getElementType()))
      return n.splatFloat(type, value);
    return n.constant(DenseElementsAttr::get(
        type,
        IntegerAttr::get(type.getElementType(), static_cast<int64_t>(value))));
  }
  /// A constant of the type of `like` with every element `value`.
  Value splat(Value like, double value) {
    return like ? fill(cast<RankedTensorType>(like.getType()), value) : nullptr;
  }
  /// `x` reshaped to `shape`.
  Value reshape(Value x, ArrayRef<int64_t> shape) {
    return failedBuild ? nullptr : take(n.reshape(x, shape));
  }
  /// `x` broadcast (numpy rules) to `shape`.
  Value broadcastTo(Value x, ArrayRef<int64_t> shape) {
    return failedBuild ? nullptr : take(n.broadcastTo(x, shape));
  }
  /// `x` with its dimensions permuted by `perm`.
  Value transpose(Value x, ArrayRef<int64_t> perm) {
    return make<dnn::TransposeOp>({}, x, n.b.getDenseI64ArrayAttr(perm));
  }
  /// `size` elements of `x` along `axis` from `start`, `step` apart.
  Value slice(Value x, int64_t axis, int64_t start, int64_t size,
              int64_t step = 1) {
    return failedBuild ? nullptr
                       : take(sliceAxis(n, x, axis, start, size, step));
  }
  /// `parts` (null or empty ones skipped) concatenated along `axis`.
  Value concat(ArrayRef<Value> parts, int64_t axis) {
    if (failedBuild)
      return nullptr;
    SmallVector<Value> present;
    for (Value v : parts)
      if (v && shapeOf(v)[axis] != 0)
        present.push_back(v);
    if (present.size() == 1)
      return present.front();
    return make<dnn::ConcatOp>({}, ValueRange(present),
                               n.b.getI64IntegerAttr(axis));
  }
  /// A constant of rank `rank`, extent 1 except `length` at `axis`, holding
  /// `0, step, 2 * step, ...` along `axis` as the integer type `elt`.
  Value ramp(Type elt, int64_t length, int64_t rank, int64_t axis,
             int64_t step = 1) {
    if (failedBuild)
      return nullptr;
    SmallVector<int64_t> shape(rank, 1);
    shape[axis] = length;
    unsigned width = cast<IntegerType>(elt).getWidth();
    SmallVector<APInt> values;
    for (int64_t i = 0; i < length; ++i)
      values.emplace_back(width, i * step, /*isSigned=*/true);
    return n.constant(
        DenseElementsAttr::get(RankedTensorType::get(shape, elt), values));
  }
  /// `x` converted to element type `elt` (`x` itself if already so).
  Value convert(Value x, Type elt) {
    if (failedBuild || eltOf(x) == elt)
      return x;
    return make<dnn::CastOp>(RankedTensorType::get(shapeOf(x), elt), x);
  }
  /// The reduction `OpT` of `x` over `axes` (every axis when empty).
  template <typename OpT>
  Value reduce(Value x, ArrayRef<int64_t> axes, bool keepDims) {
    if (failedBuild)
      return nullptr;
    SmallVector<int64_t> all(axes);
    if (all.empty())
      all = llvm::to_vector(llvm::seq<int64_t>(0, rankOf(x)));
    if (all.empty())
      return x;
    return make<OpT>({}, x, n.b.getDenseI64ArrayAttr(all),
                     n.b.getBoolAttr(keepDims));
  }
  /// The rows of `data` along `axis` picked by the integer tensor `indices`.
  Value gather(Value data, Value indices, int64_t axis) {
    return make<dnn::GatherOp>({}, data, indices,
                               n.b.getI64IntegerAttr(axis));
  }
  /// Integer `indices` into an axis of `extent` with negative ones counted
  /// from the end, as i64.
  Value wrapIndices(Value indices, int64_t extent) {
    Value idx = convert(indices, n.b.getI64Type());
    if (failedBuild)
      return nullptr;
    return select(compare<dnn::LessOp>(idx, splat(idx, 0)),
                  binary<dnn::AddOp>(idx, splat(idx, extent)), idx);
  }
  /// Binds the node's output 0 to `result`, or fails if a build failed.
  LogicalResult finish(Value result) {
    if (failedBuild)
      return failure();
    n.setOutput(0, result);
    return success();
  }

private:
  /// The value of `v`, or null (and the composition failed) on failure.
  Value take(FailureOr<Value> v) {
    if (failed(v)) {
      failedBuild = true;
      return nullptr;
    }
    return *v;
  }

  /// The node's importer.
  NodeImporter &n;
  /// Whether a build failed.
  bool failedBuild = false;
};
} // namespace

/// Fails unless a tensor of `shape` has at most kMaxElements elements.
static LogicalResult checkSize(NodeImporter &n, ArrayRef<int64_t> shape) {
  int64_t count = 1;
  for (int64_t d : shape) {
    if (d != 0 && count > kMaxElements / d)
      return n.fail("the result would have more than 2^40 elements");
    count *= d;
  }
  return success();
}

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

/// Fails unless input 0 of `n` is a floating-point tensor.
static LogicalResult requireFloatInput(NodeImporter &n) {
  if (!isa<FloatType>(eltOf(n.input(0))))
    return n.fail("input must be a floating-point tensor");
  return success();
}

/// Softplus-1: `log(1 + exp(x))`, as `max(x, 0) + log(1 + exp(-|x|))` so
/// that large inputs do not overflow.
static LogicalResult importSoftplus(NodeImporter &n) {
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
static LogicalResult importSoftsign(NodeImporter &n) {
  if (failed(n.checkArity(1, 1, 1)) || failed(requireFloatInput(n)))
    return failure();
  Composer c(n);
  Value x = n.input(0);
  return c.finish(c.binary<dnn::DivOp>(
      x, c.binary<dnn::AddOp>(c.splat(x, 1.0), c.unary<dnn::AbsOp>(x))));
}

/// Elu-6.
static LogicalResult importElu(NodeImporter &n) {
  if (failed(n.checkArity(1, 1, 1)) || failed(requireFloatInput(n)))
    return failure();
  auto alpha = n.getFloat("alpha", 1.0f);
  if (failed(alpha))
    return failure();
  Composer c(n);
  return c.finish(elu(c, n.input(0), *alpha));
}

/// Selu-6: `gamma * elu(x, alpha)`.
static LogicalResult importSelu(NodeImporter &n) {
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
static LogicalResult importHardSigmoid(NodeImporter &n) {
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
static LogicalResult importHardSwish(NodeImporter &n) {
  if (failed(n.checkArity(1, 1, 1)) || failed(requireFloatInput(n)))
    return failure();
  Composer c(n);
  Value x = n.input(0);
  return c.finish(c.binary<dnn::MulOp>(x, hardSigmoid(c, x, 1.0 / 6.0, 0.5)));
}

/// ThresholdedRelu-10: x where x > alpha, else 0.
static LogicalResult importThresholdedRelu(NodeImporter &n) {
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
static LogicalResult importSign(NodeImporter &n) {
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
static LogicalResult importCelu(NodeImporter &n) {
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

/// MeanVarianceNormalization-13, as its ONNX function body: `(x - E[x]) /
/// (sqrt(E[x^2] - E[x]^2) + 1e-9)` over `axes` (default 0, 2, 3).
static LogicalResult importMeanVarianceNormalization(NodeImporter &n) {
  if (failed(n.checkArity(1, 1, 1)) || failed(requireFloatInput(n)))
    return failure();
  Value x = n.input(0);
  auto attr = n.getInts("axes");
  if (failed(attr))
    return failure();
  SmallVector<int64_t> given = *attr ? **attr : SmallVector<int64_t>{0, 2, 3};
  auto axes = normAxes(n, given, rankOf(x));
  if (failed(axes))
    return failure();
  Composer c(n);
  auto mean = [&](Value v) {
    return c.make<dnn::ReduceMeanOp>({}, v, n.b.getDenseI64ArrayAttr(*axes),
                                     n.b.getBoolAttr(true));
  };
  auto full = [&](Value v) { return c.broadcastTo(v, shapeOf(x)); };
  Value mx = mean(x);
  Value variance = c.binary<dnn::SubOp>(mean(c.binary<dnn::MulOp>(x, x)),
                                        c.binary<dnn::MulOp>(mx, mx));
  Value std = c.binary<dnn::AddOp>(c.unary<dnn::SqrtOp>(variance),
                                   c.splat(variance, 1e-9));
  return c.finish(
      c.binary<dnn::DivOp>(c.binary<dnn::SubOp>(x, full(mx)), full(std)));
}

/// EyeLike-9: a constant of the input's 2-D shape, ones on diagonal `k`,
/// of element type `dtype` (default: the input's).
static LogicalResult importEyeLike(NodeImporter &n) {
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

/// NegativeLogLikelihoodLoss-12/13: `loss[n, d...] = -input[n, target[n,
/// d...], d...] * weight[target[n, d...]]`, zero where `target ==
/// ignore_index`; `mean` divides the sum by the sum of the applied weights
/// (the count of counted elements without `weight`). The picked element is a
/// masked sum over the class axis, so no index reaches outside the input.
static LogicalResult importNegativeLogLikelihoodLoss(NodeImporter &n) {
  if (failed(n.checkArity(2, 3, 1)) || failed(requireFloatInput(n)))
    return failure();
  auto kind = getLossReduction(n);
  auto ignore = getIgnoreIndex(n);
  if (failed(kind) || failed(ignore))
    return failure();
  Value x = n.input(0), target = n.input(1);
  Value weight = n.hasInput(2) ? n.input(2) : Value();
  ArrayRef<int64_t> xs = shapeOf(x);
  int64_t rank = xs.size();
  if (rank < 2)
    return n.fail("input must be [N, C, D...], not of rank " + Twine(rank));
  if (!isa<IntegerType>(eltOf(target)))
    return n.fail("target must be an integer tensor");
  SmallVector<int64_t> targetShape(xs);
  targetShape.erase(targetShape.begin() + 1);
  if (shapeOf(target) != ArrayRef<int64_t>(targetShape))
    return n.fail("target must be [N, D...] of the input's shape without "
                  "its class dimension");
  int64_t classes = xs[1];
  if (weight &&
      (shapeOf(weight) != ArrayRef<int64_t>{classes} || eltOf(weight) !=
                                                            eltOf(x)))
    return n.fail("weight must be a 1-D tensor of " + Twine(classes) +
                  " elements of the input's type");
  Composer c(n);
  SmallVector<int64_t> keptShape(xs);
  keptShape[1] = 1;
  Value hit = c.compare<dnn::EqualOp>(
      c.broadcastTo(c.reshape(target, keptShape), xs),
      c.broadcastTo(c.ramp(eltOf(target), classes, rank, 1), xs));
  Value picked = c.reduce<dnn::ReduceSumOp>(
      c.select(hit, x, c.splat(x, 0.0)), {1}, /*keepDims=*/false);
  Value ignored;
  if (*ignore)
    ignored = c.compare<dnn::EqualOp>(
        target, c.splat(target, static_cast<double>(ignore->getInt())));
  Value applied;
  if (weight) {
    Value safe = ignored ? c.select(ignored, c.splat(target, 0.0), target)
                         : target;
    applied = c.gather(weight, safe, 0);
  }
  if (ignored)
    applied = c.select(ignored, c.splat(picked, 0.0),
                       applied ? applied : c.splat(picked, 1.0));
  Value loss = c.unary<dnn::NegOp>(
      weight ? c.binary<dnn::MulOp>(picked, applied) : picked);
  if (ignored)
    loss = c.select(ignored, c.splat(loss, 0.0), loss);
  switch (*kind) {
  case dnn::LossReduction::None:
    return c.finish(loss);
  case dnn::LossReduction::Sum:
    return c.finish(c.reduce<dnn::ReduceSumOp>(loss, {}, false));
  case dnn::LossReduction::Mean:
    if (!applied)
      return c.finish(c.reduce<dnn::ReduceMeanOp>(loss, {}, false));
    return c.finish(
        c.binary<dnn::DivOp>(c.reduce<dnn::ReduceSumOp>(loss, {}, false),
                             c.reduce<dnn::ReduceSumOp>(applied, {}, false)));
  }
  llvm_unreachable("unknown reduction");
}

/// The index (i64) of the first (or, with `last`, the last) largest (or,
/// without `max`, smallest) element of `x` along `axis`. A NaN counts as the
/// extreme when the reduction yields NaN, as in numpy.
static Value argExtreme(Composer &c, NodeImporter &n, Value x, int64_t axis,
                        bool max, bool last, bool keepDims) {
  ArrayRef<int64_t> xs = shapeOf(x);
  int64_t rank = xs.size(), extent = xs[axis];
  Value extreme = max ? c.reduce<dnn::ReduceMaxOp>(x, {axis}, true)
                      : c.reduce<dnn::ReduceMinOp>(x, {axis}, true);
  extreme = c.broadcastTo(extreme, xs);
  Value hit = c.compare<dnn::EqualOp>(x, extreme);
  if (isa<FloatType>(eltOf(x)))
    hit = c.binary<dnn::OrOp>(
        hit, c.binary<dnn::AndOp>(c.isNaN(x), c.isNaN(extreme)));
  Type i64 = n.b.getI64Type();
  Value position = c.broadcastTo(c.ramp(i64, extent, rank, axis), xs);
  Value candidates = c.select(
      hit, position,
      c.fill(RankedTensorType::get(xs, i64), last ? -1.0 : double(extent)));
  return last ? c.reduce<dnn::ReduceMaxOp>(candidates, {axis}, keepDims)
              : c.reduce<dnn::ReduceMinOp>(candidates, {axis}, keepDims);
}

/// ArgMax-13 / ArgMin-13 (and earlier): the index of the extreme element
/// along `axis` as i64, composed as a reduction, a comparison and a minimum
/// (maximum with `select_last_index`) over an index ramp.
template <bool IsMax> static LogicalResult importArgExtreme(NodeImporter &n) {
  if (failed(n.checkArity(1, 1, 1)))
    return failure();
  auto axisAttr = n.getInt("axis", 0);
  auto keepDims = n.getInt("keepdims", 1);
  auto last = n.getInt("select_last_index", 0);
  if (failed(axisAttr) || failed(keepDims) || failed(last))
    return failure();
  Value x = n.input(0);
  if (isa<IntegerType>(eltOf(x)) && eltOf(x).isInteger(1))
    return n.fail("input must be a numeric tensor, not bool");
  auto axis = normAxis(n, *axisAttr, rankOf(x));
  if (failed(axis))
    return failure();
  if (shapeOf(x)[*axis] == 0)
    return n.fail("the reduced axis is empty");
  Composer c(n);
  return c.finish(
      argExtreme(c, n, x, *axis, IsMax, *last != 0, *keepDims != 0));
}

/// Hardmax-13 (and 1-11 on the 2-D coercion of the input at `axis`): one
/// where an element is the first largest along `axis`, zero elsewhere.
static LogicalResult importHardmax(NodeImporter &n) {
  if (failed(n.checkArity(1, 1, 1)) || failed(requireFloatInput(n)))
    return failure();
  auto axisAttr = n.getInt("axis", n.opset >= 13 ? -1 : 1);
  if (failed(axisAttr))
    return failure();
  Value x = n.input(0);
  ArrayRef<int64_t> xs = shapeOf(x);
  int64_t rank = xs.size();
  if (rank == 0)
    return n.fail("input must have rank 1 or more");
  auto axis = normAxis(n, *axisAttr, rank);
  if (failed(axis))
    return failure();
  Composer c(n);
  Value y = x;
  int64_t along = *axis;
  if (n.opset < 13) {
    y = c.reshape(x, {product(xs.take_front(*axis)),
                      product(xs.drop_front(*axis))});
    along = 1;
  }
  if (!y)
    return failure();
  ArrayRef<int64_t> ys = shapeOf(y);
  if (ys[along] == 0)
    return c.finish(x);
  Value index = argExtreme(c, n, y, along, /*max=*/true, /*last=*/false,
                           /*keepDims=*/true);
  Value hit = c.compare<dnn::EqualOp>(
      c.broadcastTo(index, ys),
      c.broadcastTo(c.ramp(n.b.getI64Type(), ys[along], ys.size(), along),
                    ys));
  Value result = c.select(hit, c.splat(y, 1.0), c.splat(y, 0.0));
  return c.finish(c.reshape(result, xs));
}

/// CumSum-11/14: the running sum along the constant `axis`, as log2(extent)
/// shifted additions (a Hillis-Steele scan); `exclusive` shifts the input by
/// one first, `reverse` runs the scan on the reversed axis.
static LogicalResult importCumSum(NodeImporter &n) {
  if (failed(n.checkArity(2, 2, 1)))
    return failure();
  auto axes = n.constantInts(1, "axis");
  auto exclusive = n.getInt("exclusive", 0);
  auto reverse = n.getInt("reverse", 0);
  if (failed(axes) || failed(exclusive) || failed(reverse))
    return failure();
  if (axes->size() != 1)
    return n.fail("axis must hold one value, not " + Twine(axes->size()));
  Value x = n.input(0);
  if (eltOf(x).isInteger(1))
    return n.fail("input must be a numeric tensor, not bool");
  auto axis = normAxis(n, axes->front(), rankOf(x));
  if (failed(axis))
    return failure();
  int64_t extent = shapeOf(x)[*axis];
  if (extent == 0) {
    n.setOutput(0, x);
    return success();
  }
  Composer c(n);
  // `v` moved `by` places up the axis, zeros filling the first places.
  auto shift = [&](Value v, int64_t by) {
    SmallVector<int64_t> zeroShape(shapeOf(x));
    zeroShape[*axis] = by;
    Value zeros = c.fill(RankedTensorType::get(zeroShape, eltOf(x)), 0.0);
    if (by >= extent)
      return c.slice(zeros, *axis, 0, extent);
    return c.concat({zeros, c.slice(v, *axis, 0, extent - by)}, *axis);
  };
  auto flip = [&](Value v) { return c.slice(v, *axis, extent - 1, extent, -1); };
  Value y = *reverse ? flip(x) : x;
  if (*exclusive)
    y = shift(y, 1);
  for (int64_t by = 1; by < extent; by *= 2)
    y = c.binary<dnn::AddOp>(y, shift(y, by));
  return c.finish(*reverse ? flip(y) : y);
}

/// `out[i...] = data[i... with index[i...] at axis]` for the in-range i64
/// `index` of rank data's (extents no larger than data's off the axis): a
/// Gather from the flattened data at the linear offsets of those positions
/// (the index scaled by the axis stride plus ramps of the other dimensions).
static Value gatherAlong(Composer &c, NodeImporter &n, Value data, Value index,
                         int64_t axis) {
  if (!index)
    return nullptr;
  ArrayRef<int64_t> ds = shapeOf(data), is = shapeOf(index);
  int64_t rank = ds.size();
  Type i64 = n.b.getI64Type();
  Value offset = index;
  int64_t stride = product(ds.drop_front(axis + 1));
  if (stride != 1)
    offset = c.binary<dnn::MulOp>(offset, c.splat(offset, stride));
  for (int64_t d = 0; d < rank; ++d) {
    if (d == axis || is[d] == 1)
      continue;
    offset = c.binary<dnn::AddOp>(
        offset, c.broadcastTo(c.ramp(i64, is[d], rank, d,
                                     product(ds.drop_front(d + 1))),
                              is));
  }
  return c.gather(c.reshape(data, {product(ds)}), offset, 0);
}

/// GatherElements-11/13: `out[i...] = data[i... with index[i...] at axis]`,
/// as a Gather from the flattened data at the linear offsets of those
/// positions (the index scaled by the axis stride plus ramps of the other
/// dimensions).
static LogicalResult importGatherElements(NodeImporter &n) {
  if (failed(n.checkArity(2, 2, 1)))
    return failure();
  auto axisAttr = n.getInt("axis", 0);
  if (failed(axisAttr))
    return failure();
  Value data = n.input(0), indices = n.input(1);
  ArrayRef<int64_t> ds = shapeOf(data), is = shapeOf(indices);
  int64_t rank = ds.size();
  if (!isa<IntegerType>(eltOf(indices)))
    return n.fail("indices must be an integer tensor");
  if (static_cast<int64_t>(is.size()) != rank)
    return n.fail("data (rank " + Twine(rank) + ") and indices (rank " +
                  Twine(is.size()) + ") must have the same rank");
  auto axis = normAxis(n, *axisAttr, std::max<int64_t>(rank, 1));
  if (failed(axis))
    return failure();
  for (int64_t d = 0; d < rank; ++d)
    if (d != *axis && is[d] > ds[d])
      return n.fail("indices dimension " + Twine(d) + " (" + Twine(is[d]) +
                    ") exceeds the data's (" + Twine(ds[d]) + ")");
  if (DenseElementsAttr idx = NodeImporter::getConstant(indices)) {
    for (const APInt &v : idx.getValues<APInt>())
      if (v.getSExtValue() < -ds[*axis] || v.getSExtValue() >= ds[*axis])
        return n.fail("index " + Twine(v.getSExtValue()) +
                      " is out of range for an axis of extent " +
                      Twine(ds[*axis]));
  }
  Composer c(n);
  if (product(is) == 0 || rank == 0)
    return c.finish(c.fill(RankedTensorType::get(is, eltOf(data)), 0.0));
  return c.finish(
      gatherAlong(c, n, data, c.wrapIndices(indices, ds[*axis]), *axis));
}

/// GatherND-11/12/13: slices of `data` addressed by the last dimension of
/// `indices` (after `batch_dims` shared leading dimensions), as a Gather from
/// `data` with the batch and addressed dimensions flattened into one, at the
/// linear offsets of the index tuples.
static LogicalResult importGatherND(NodeImporter &n) {
  if (failed(n.checkArity(2, 2, 1)))
    return failure();
  auto batchAttr = n.getInt("batch_dims", 0);
  if (failed(batchAttr))
    return failure();
  Value data = n.input(0), indices = n.input(1);
  ArrayRef<int64_t> ds = shapeOf(data), is = shapeOf(indices);
  int64_t r = ds.size(), q = is.size(), b = *batchAttr;
  if (!isa<IntegerType>(eltOf(indices)))
    return n.fail("indices must be an integer tensor");
  if (r < 1 || q < 1)
    return n.fail("data and indices must have rank 1 or more");
  if (b < 0 || b >= std::min(r, q))
    return n.fail("batch_dims " + Twine(b) + " must be in [0, " +
                  Twine(std::min(r, q)) + ")");
  int64_t k = is.back();
  if (k < 1 || k > r - b)
    return n.fail("the last indices dimension (" + Twine(k) +
                  ") must be in [1, " + Twine(r - b) + "]");
  if (ds.take_front(b) != is.take_front(b))
    return n.fail("the first batch_dims dimensions of data and indices "
                  "differ");
  if (DenseElementsAttr idx = NodeImporter::getConstant(indices)) {
    int64_t i = 0;
    for (const APInt &v : idx.getValues<APInt>()) {
      int64_t extent = ds[b + i++ % k];
      if (v.getSExtValue() < -extent || v.getSExtValue() >= extent)
        return n.fail("index " + Twine(v.getSExtValue()) +
                      " is out of range for an axis of extent " +
                      Twine(extent));
    }
  }
  SmallVector<int64_t> lead(is.drop_back());
  SmallVector<int64_t> resultShape(lead);
  llvm::append_range(resultShape, ds.drop_front(b + k));
  Composer c(n);
  if (product(resultShape) == 0)
    return c.finish(c.fill(RankedTensorType::get(resultShape, eltOf(data)),
                           0.0));
  Type i64 = n.b.getI64Type();
  int64_t leadRank = lead.size();
  Value offset;
  for (int64_t j = 0; j < k; ++j) {
    Value column = c.reshape(c.slice(indices, q - 1, j, 1), lead);
    Value term = c.wrapIndices(column, ds[b + j]);
    int64_t stride = product(ds.slice(b + j + 1, k - j - 1));
    if (stride != 1)
      term = c.binary<dnn::MulOp>(term, c.splat(term, stride));
    offset = offset ? c.binary<dnn::AddOp>(offset, term) : term;
  }
  for (int64_t d = 0; d < b; ++d)
    if (lead[d] != 1)
      offset = c.binary<dnn::AddOp>(
          offset, c.broadcastTo(c.ramp(i64, lead[d], leadRank, d,
                                       product(ds.slice(d + 1, b + k - d - 1))),
                                lead));
  SmallVector<int64_t> flatShape{product(ds.take_front(b + k))};
  llvm::append_range(flatShape, ds.drop_front(b + k));
  return c.finish(c.gather(c.reshape(data, flatShape), offset, 0));
}

namespace {
/// How Resize maps an output coordinate to an input one.
enum class ResizeCoordinates {
  HalfPixel,
  HalfPixelSymmetric,
  PytorchHalfPixel,
  AlignCorners,
  Asymmetric,
  TfHalfPixelForNN,
  TfCropAndResize
};
/// How nearest-neighbour Resize rounds a fractional input coordinate.
enum class ResizeRounding {
  RoundPreferFloor,
  RoundPreferCeil,
  Floor,
  Ceil,
  /// Resize-10 and Upsample: truncation when upsampling, ceiling when
  /// downsampling (onnxruntime's rule for those opsets).
  Simple
};
/// The interpolation of a Resize node.
struct ResizeMode {
  enum { Nearest, Linear, Cubic } kind = Nearest;
  ResizeCoordinates coordinates = ResizeCoordinates::HalfPixel;
  ResizeRounding rounding = ResizeRounding::RoundPreferFloor;
  double cubicA = -0.75;
  bool excludeOutside = false;
  bool antialias = false;
};
/// The input elements and weights one output element of a resized axis
/// combines; `outside` marks a tf_crop_and_resize position past the input,
/// which takes the extrapolation value.
struct ResizeTaps {
  SmallVector<std::pair<int64_t, double>> taps;
  bool outside = false;
};
} // namespace

/// The interpolation weights at distance `ratio` in (0, 1] past the input
/// element left of the sample point, starting `size() / 2 - 1` elements
/// left of it (the ONNX reference's coefficient functions).
static SmallVector<double> resizeCoefficients(const ResizeMode &mode,
                                              double ratio, double scale) {
  SmallVector<double> coeffs;
  if (mode.kind == ResizeMode::Linear && !mode.antialias)
    return {1 - ratio, ratio};
  double a = mode.cubicA;
  auto cubic = [&](double x) {
    x = std::abs(x);
    if (x <= 1)
      return ((a + 2) * x - (a + 3)) * x * x + 1;
    if (x < 2)
      return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
    return 0.0;
  };
  if (!mode.antialias) {
    for (double x : {ratio + 1, ratio, 1 - ratio, 2 - ratio})
      coeffs.push_back(cubic(x));
    return coeffs;
  }
  // Antialiasing stretches the filter by 1 / scale when downsampling.
  double s = std::min(scale, 1.0);
  double support = mode.kind == ResizeMode::Linear ? 1.0 : 2.0;
  int64_t start = static_cast<int64_t>(std::floor(-support / s)) + 1;
  int64_t end = 2 - start;
  double sum = 0;
  for (int64_t i = start; i < end; ++i) {
    double x = s * (i - ratio);
    double c = mode.kind == ResizeMode::Linear
                   ? std::clamp(1 - std::abs(x), 0.0, 1.0)
                   : cubic(x);
    coeffs.push_back(c);
    sum += c;
  }
  for (double &c : coeffs)
    c /= sum;
  return coeffs;
}

/// The taps of each of the `outLen` elements of an axis of `inLen` elements
/// resized by `scale` (`roi` the tf_crop_and_resize window, normalized).
static SmallVector<ResizeTaps> resizeAxisTaps(const ResizeMode &mode,
                                              int64_t inLen, int64_t outLen,
                                              double scale,
                                              std::pair<double, double> roi) {
  SmallVector<ResizeTaps> result(outLen);
  // In float arithmetic, as onnxruntime: that decides the rounding of
  // nearest-neighbour positions that fall on a half.
  float s = static_cast<float>(scale), in = static_cast<float>(inLen),
        out = static_cast<float>(outLen);
  float start = static_cast<float>(roi.first),
        end = static_cast<float>(roi.second);
  // The resized length before rounding down: align_corners and
  // tf_crop_and_resize map the ends of this window, as the ONNX reference
  // (onnxruntime uses the rounded length, which differs when the scale times
  // the extent is not an integer).
  float width = s * in;
  for (int64_t i = 0; i < outLen; ++i) {
    float x = static_cast<float>(i), coord = 0;
    switch (mode.coordinates) {
    case ResizeCoordinates::HalfPixel:
      coord = (x + 0.5f) / s - 0.5f;
      break;
    case ResizeCoordinates::HalfPixelSymmetric: {
      float adjustment = out / width;
      coord = in / 2 * (1 - adjustment) + (x + 0.5f) / s - 0.5f;
      break;
    }
    case ResizeCoordinates::PytorchHalfPixel:
      coord = outLen > 1 ? (x + 0.5f) / s - 0.5f : 0;
      break;
    case ResizeCoordinates::AlignCorners:
      coord = width != 1 ? x * (in - 1) / (width - 1) : 0;
      break;
    case ResizeCoordinates::Asymmetric:
      coord = x / s;
      break;
    case ResizeCoordinates::TfHalfPixelForNN:
      coord = (x + 0.5f) / s;
      break;
    case ResizeCoordinates::TfCropAndResize:
      coord = width != 1 ? start * (in - 1) +
                               x * (end - start) * (in - 1) / (width - 1)
                         : 0.5f * (start + end) * (in - 1);
      if (coord < 0 || coord > in - 1) {
        result[i].outside = true;
        continue;
      }
      break;
    }
    double orig = coord;
    auto clampIndex = [&](int64_t idx) {
      return std::clamp<int64_t>(idx, 0, inLen - 1);
    };
    if (mode.kind == ResizeMode::Nearest) {
      double lower = std::floor(orig);
      double frac = orig - lower;
      bool up = false;
      switch (mode.rounding) {
      case ResizeRounding::RoundPreferFloor:
        up = frac > 0.5;
        break;
      case ResizeRounding::RoundPreferCeil:
        up = frac >= 0.5;
        break;
      case ResizeRounding::Floor:
        break;
      case ResizeRounding::Ceil:
        up = frac > 0;
        break;
      case ResizeRounding::Simple:
        up = scale < 1 ? frac > 0 : (orig < 0 && frac > 0);
        break;
      }
      result[i].taps.push_back(
          {clampIndex(static_cast<int64_t>(lower) + (up ? 1 : 0)), 1.0});
      continue;
    }
    // The element left of the sample point (one further left when the point
    // is an element), and the distance past it in (0, 1].
    double base = std::ceil(orig) - 1;
    SmallVector<double> coeffs =
        resizeCoefficients(mode, orig - base, scale);
    int64_t first = static_cast<int64_t>(base) -
                    static_cast<int64_t>(coeffs.size()) / 2 + 1;
    if (mode.excludeOutside) {
      double sum = 0;
      for (auto [k, c] : llvm::enumerate(coeffs)) {
        int64_t idx = first + static_cast<int64_t>(k);
        if (idx < 0 || idx >= inLen)
          c = 0;
        sum += c;
      }
      if (sum != 0)
        for (double &c : coeffs)
          c /= sum;
    }
    for (auto [k, c] : llvm::enumerate(coeffs)) {
      if (c == 0)
        continue;
      int64_t idx = clampIndex(first + static_cast<int64_t>(k));
      auto *same = llvm::find_if(result[i].taps,
                                 [&](auto &tap) { return tap.first == idx; });
      if (same != result[i].taps.end())
        same->second += c;
      else
        result[i].taps.push_back({idx, c});
    }
  }
  return result;
}

/// Resize-10/11/13/18/19 and Upsample-7/9: separable interpolation, one
/// axis at a time. Each output element of an axis is a weighted sum of a few
/// input elements along it (`taps`, computed here from the constant scales or
/// sizes): a Gather per tap, scaled by a constant weight and summed; nearest
/// mode is a single Gather, exact for every element type. Linear and cubic
/// interpolation of float16/bfloat16 inputs runs in float32.
static LogicalResult importResize(NodeImporter &n) {
  bool upsample = n.node.op_type() == "Upsample";
  bool legacy = upsample || n.opset < 11;
  int maxInputs = upsample ? (n.opset >= 9 ? 2 : 1) : (legacy ? 2 : 4);
  int minInputs = legacy ? maxInputs : 1;
  if (failed(n.checkArity(minInputs, maxInputs, 1)))
    return failure();
  Value x = n.input(0);
  ArrayRef<int64_t> xs = shapeOf(x);
  int64_t rank = xs.size();

  ResizeMode mode;
  auto modeName = n.getString("mode", "nearest");
  auto coordName = n.getString("coordinate_transformation_mode",
                               legacy ? "asymmetric" : "half_pixel");
  auto roundName = n.getString("nearest_mode", "round_prefer_floor");
  auto policyName = n.getString("keep_aspect_ratio_policy", "stretch");
  auto cubicA = n.getFloat("cubic_coeff_a", -0.75f);
  auto exclude = n.getInt("exclude_outside", 0);
  auto antialias = n.getInt("antialias", 0);
  auto extrapolation = n.getFloat("extrapolation_value", 0.0f);
  auto axesAttr = n.getInts("axes");
  if (failed(modeName) || failed(coordName) || failed(roundName) ||
      failed(policyName) || failed(cubicA) || failed(exclude) ||
      failed(antialias) || failed(extrapolation) || failed(axesAttr))
    return failure();
  if (*modeName == "nearest")
    mode.kind = ResizeMode::Nearest;
  else if (*modeName == "linear" || (legacy && *modeName == "bilinear"))
    mode.kind = ResizeMode::Linear;
  else if (*modeName == "cubic" && !legacy)
    mode.kind = ResizeMode::Cubic;
  else
    return n.fail("unsupported mode '" + *modeName + "'");
  auto coordinates =
      llvm::StringSwitch<std::optional<ResizeCoordinates>>(*coordName)
          .Case("half_pixel", ResizeCoordinates::HalfPixel)
          .Case("half_pixel_symmetric", ResizeCoordinates::HalfPixelSymmetric)
          .Case("pytorch_half_pixel", ResizeCoordinates::PytorchHalfPixel)
          .Case("align_corners", ResizeCoordinates::AlignCorners)
          .Case("asymmetric", ResizeCoordinates::Asymmetric)
          .Case("tf_half_pixel_for_nn", ResizeCoordinates::TfHalfPixelForNN)
          .Case("tf_crop_and_resize", ResizeCoordinates::TfCropAndResize)
          .Default(std::nullopt);
  if (!coordinates)
    return n.fail("unsupported coordinate_transformation_mode '" +
                  *coordName + "'");
  mode.coordinates = *coordinates;
  auto rounding = llvm::StringSwitch<std::optional<ResizeRounding>>(*roundName)
                      .Case("round_prefer_floor",
                            ResizeRounding::RoundPreferFloor)
                      .Case("round_prefer_ceil", ResizeRounding::RoundPreferCeil)
                      .Case("floor", ResizeRounding::Floor)
                      .Case("ceil", ResizeRounding::Ceil)
                      .Default(std::nullopt);
  if (!rounding)
    return n.fail("unsupported nearest_mode '" + *roundName + "'");
  mode.rounding = legacy ? ResizeRounding::Simple : *rounding;
  if (*policyName != "stretch" && *policyName != "not_larger" &&
      *policyName != "not_smaller")
    return n.fail("unsupported keep_aspect_ratio_policy '" + *policyName +
                  "'");
  mode.cubicA = *cubicA;
  mode.excludeOutside = *exclude != 0;
  mode.antialias = *antialias != 0 && mode.kind != ResizeMode::Nearest;
  if (mode.kind != ResizeMode::Nearest && !isa<FloatType>(eltOf(x)))
    return n.fail("linear and cubic interpolation need a floating-point "
                  "input");

  // The resized axes: all, or those of `axes` (opset 18).
  SmallVector<int64_t> axes;
  if (*axesAttr) {
    for (int64_t a : **axesAttr) {
      auto v = normAxis(n, a, rank);
      if (failed(v))
        return failure();
      if (llvm::is_contained(axes, *v))
        return n.fail("axes contain a duplicate");
      axes.push_back(*v);
    }
  } else {
    axes = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  }
  int64_t numAxes = axes.size();

  // Scales (an attribute of Upsample-7, else an input) or sizes.
  SmallVector<double> scales;
  std::optional<SmallVector<int64_t>> sizes;
  if (upsample && n.opset < 9) {
    auto attr = n.findAttr("scales");
    if (!attr)
      return n.fail("attribute 'scales' is required");
    for (float f : attr->floats())
      scales.push_back(f);
  } else {
    int scalesInput = legacy ? 1 : 2;
    if (n.hasInput(scalesInput) &&
        product(shapeOf(n.input(scalesInput))) != 0) {
      auto v = n.constantFloats(scalesInput, "scales");
      if (failed(v))
        return failure();
      scales = *v;
    }
    if (!legacy && n.hasInput(3)) {
      auto v = n.constantInts(3, "sizes");
      if (failed(v))
        return failure();
      sizes = *v;
    }
  }
  if (scales.empty() == !sizes)
    return n.fail("exactly one of scales and sizes must be given");
  if (!scales.empty() && static_cast<int64_t>(scales.size()) != numAxes)
    return n.fail("scales has " + Twine(scales.size()) + " values for " +
                  Twine(numAxes) + " resized axes");
  if (sizes && static_cast<int64_t>(sizes->size()) != numAxes)
    return n.fail("sizes has " + Twine(sizes->size()) + " values for " +
                  Twine(numAxes) + " resized axes");

  // The tf_crop_and_resize window: starts then ends, one per resized axis.
  SmallVector<std::pair<double, double>> roi(numAxes, {0.0, 1.0});
  if (mode.coordinates == ResizeCoordinates::TfCropAndResize) {
    if (legacy || !n.hasInput(1))
      return n.fail("tf_crop_and_resize needs the roi input");
    auto v = n.constantFloats(1, "roi");
    if (failed(v))
      return failure();
    int64_t given = v->size() / 2;
    if (static_cast<int64_t>(v->size()) != 2 * numAxes &&
        !(static_cast<int64_t>(v->size()) == 2 * rank && *axesAttr))
      return n.fail("roi has " + Twine(v->size()) + " values for " +
                    Twine(numAxes) + " resized axes");
    for (int64_t i = 0; i < numAxes; ++i) {
      int64_t at = given == numAxes ? i : axes[i];
      roi[i] = {(*v)[at], (*v)[given + at]};
    }
  }

  // The scale and output extent of each resized axis.
  SmallVector<int64_t> outShape(xs);
  SmallVector<double> axisScale(numAxes);
  if (sizes) {
    for (int64_t i = 0; i < numAxes; ++i)
      if ((*sizes)[i] < 0)
        return n.fail("sizes must be non-negative");
    if (*policyName == "stretch") {
      for (int64_t i = 0; i < numAxes; ++i) {
        int64_t in = xs[axes[i]];
        axisScale[i] = in ? static_cast<double>((*sizes)[i]) / in : 1.0;
        outShape[axes[i]] = (*sizes)[i];
      }
    } else {
      bool larger = *policyName == "not_smaller";
      std::optional<double> common;
      for (int64_t i = 0; i < numAxes; ++i) {
        int64_t in = xs[axes[i]];
        if (in == 0)
          continue;
        double s = static_cast<double>((*sizes)[i]) / in;
        common = !common ? s : larger ? std::max(*common, s)
                                      : std::min(*common, s);
      }
      for (int64_t i = 0; i < numAxes; ++i) {
        axisScale[i] = common.value_or(1.0);
        outShape[axes[i]] = static_cast<int64_t>(
            std::floor(axisScale[i] * xs[axes[i]] + 0.5));
      }
    }
  } else {
    for (int64_t i = 0; i < numAxes; ++i) {
      if (!(scales[i] > 0) || !std::isfinite(scales[i]))
        return n.fail("scales must be positive and finite, not " +
                    llvm::formatv("{0}", scales[i]).str());
      axisScale[i] = scales[i];
      // In double, as ONNX shape inference (onnxruntime multiplies in
      // float: 1.8f * 5 is 9 there, 8 here).
      double extent = std::floor(scales[i] * xs[axes[i]]);
      if (extent > static_cast<double>(kMaxElements))
        return n.fail("the result would have more than 2^40 elements");
      outShape[axes[i]] = static_cast<int64_t>(extent);
    }
  }
  if (failed(checkSize(n, outShape)))
    return failure();

  Composer c(n);
  Type elt = eltOf(x);
  if (product(outShape) == 0 || product(xs) == 0)
    return c.finish(c.fill(RankedTensorType::get(outShape, elt), 0.0));
  bool widen = mode.kind != ResizeMode::Nearest &&
               cast<FloatType>(elt).getWidth() < 32;
  Value y = widen ? c.convert(x, Float32Type::get(n.b.getContext())) : x;
  Type computeElt = eltOf(y);
  Type i64 = n.b.getI64Type();
  for (int64_t i = 0; i < numAxes; ++i) {
    int64_t axis = axes[i], inLen = xs[axis], outLen = outShape[axis];
    SmallVector<ResizeTaps> taps =
        resizeAxisTaps(mode, inLen, outLen, axisScale[i], roi[i]);
    bool identity = inLen == outLen;
    bool single = true, anyOutside = false;
    size_t width = 1;
    for (auto [j, t] : llvm::enumerate(taps)) {
      anyOutside |= t.outside;
      width = std::max(width, t.taps.size());
      bool one = t.outside || (t.taps.size() == 1 && t.taps[0].second == 1.0);
      single &= one;
      identity &= !t.outside && t.taps.size() == 1 &&
                  t.taps[0].first == static_cast<int64_t>(j) &&
                  t.taps[0].second == 1.0;
    }
    if (identity)
      continue;
    SmallVector<int64_t> weightShape(rank, 1);
    weightShape[axis] = outLen;
    Value combined;
    for (size_t k = 0; k < (single ? 1 : width); ++k) {
      SmallVector<int64_t> index(outLen);
      SmallVector<double> weight(outLen, 0.0);
      for (int64_t j = 0; j < outLen; ++j) {
        const auto &t = taps[j].taps;
        if (k < t.size()) {
          index[j] = t[k].first;
          weight[j] = t[k].second;
        } else {
          index[j] = t.empty() ? 0 : t.front().first;
        }
      }
      Value gathered = c.gather(
          y,
          n.constant(DenseElementsAttr::get(
              RankedTensorType::get({outLen}, i64), ArrayRef<int64_t>(index))),
          axis);
      if (!gathered)
        return failure();
      if (!single) {
        auto weightType = RankedTensorType::get(weightShape, computeElt);
        DenseElementsAttr weights =
            computeElt.isF64()
                ? DenseElementsAttr::get(weightType, ArrayRef<double>(weight))
                : DenseElementsAttr::get(
                      weightType,
                      ArrayRef<float>(llvm::to_vector(llvm::map_range(
                          weight, [](double w) { return float(w); }))));
        gathered = c.binary<dnn::MulOp>(
            gathered, c.broadcastTo(n.constant(weights), shapeOf(gathered)));
      }
      combined = combined ? c.binary<dnn::AddOp>(combined, gathered) : gathered;
    }
    if (anyOutside && combined) {
      SmallVector<bool> bits;
      for (const ResizeTaps &t : taps)
        bits.push_back(t.outside);
      auto maskType = RankedTensorType::get(weightShape, n.b.getI1Type());
      Value mask = c.broadcastTo(
          n.constant(DenseElementsAttr::get(maskType, ArrayRef<bool>(bits))),
          shapeOf(combined));
      combined = c.select(mask, c.splat(combined, *extrapolation), combined);
    }
    y = combined;
    if (!y)
      return failure();
  }
  return c.finish(widen ? c.convert(y, elt) : y);
}

/// ConvTranspose-1/11: the transpose of a convolution, as one: the input
/// with `stride - 1` zeros between its elements, convolved at stride 1 and
/// the same dilations with the kernel flipped and its two channel dimensions
/// swapped within each group, padded by `dilation * (kernel - 1) - pad`
/// (cropped where that is negative) and `output_padding` more at the end.
/// Explicit `output_shape` or SAME auto_pad fix the pads as the ONNX
/// reference does (the larger half at the end for SAME_UPPER, at the
/// beginning otherwise).
static LogicalResult importConvTranspose(NodeImporter &n) {
  if (failed(n.checkArity(2, 3, 1)))
    return failure();
  Value x = n.input(0), wt = n.input(1);
  int64_t rank = rankOf(x);
  if (rank < 3 || rankOf(wt) != rank)
    return n.fail("input must be [N, C, spatial...] and weight of equal rank");
  int64_t k = rank - 2;
  ArrayRef<int64_t> xs = shapeOf(x), ws = shapeOf(wt);
  auto group = n.getInt("group", 1);
  auto kernelAttr = n.getInts("kernel_shape");
  auto stridesAttr = n.getInts("strides");
  auto dilationsAttr = n.getInts("dilations");
  auto padsAttr = n.getInts("pads");
  auto outPadAttr = n.getInts("output_padding");
  auto outShapeAttr = n.getInts("output_shape");
  auto autoPad = n.getString("auto_pad", "NOTSET");
  if (failed(group) || failed(kernelAttr) || failed(stridesAttr) ||
      failed(dilationsAttr) || failed(padsAttr) || failed(outPadAttr) ||
      failed(outShapeAttr) || failed(autoPad))
    return failure();
  if (*group < 1 || xs[1] % *group != 0)
    return n.fail("group " + Twine(*group) + " must divide the " +
                  Twine(xs[1]) + " input channels");
  if (ws[0] != xs[1])
    return n.fail("weight must be [C, M / group, kernel...] with C = " +
                  Twine(xs[1]) + ", not " + Twine(ws[0]));
  ArrayRef<int64_t> kernel = ws.drop_front(2);
  if (*kernelAttr && ArrayRef<int64_t>(**kernelAttr) != kernel)
    return n.fail("kernel_shape does not match the weight's shape");
  auto orOnes = [&](const std::optional<SmallVector<int64_t>> &v,
                    int64_t size, int64_t fill) {
    return v ? *v : SmallVector<int64_t>(size, fill);
  };
  SmallVector<int64_t> strides = orOnes(*stridesAttr, k, 1);
  SmallVector<int64_t> dilations = orOnes(*dilationsAttr, k, 1);
  SmallVector<int64_t> pads = orOnes(*padsAttr, 2 * k, 0);
  SmallVector<int64_t> outPad = orOnes(*outPadAttr, k, 0);
  if (static_cast<int64_t>(strides.size()) != k ||
      static_cast<int64_t>(dilations.size()) != k ||
      static_cast<int64_t>(pads.size()) != 2 * k ||
      static_cast<int64_t>(outPad.size()) != k)
    return n.fail("strides, dilations, pads and output_padding do not match "
                  "the " +
                  Twine(k) + " spatial dimensions");
  if (llvm::any_of(strides, [](int64_t s) { return s < 1; }) ||
      llvm::any_of(dilations, [](int64_t s) { return s < 1; }) ||
      llvm::any_of(kernel, [](int64_t s) { return s < 1; }))
    return n.fail("kernel_shape, strides and dilations must be >= 1");
  if (llvm::any_of(outPad, [](int64_t s) { return s < 0; }) ||
      llvm::any_of(pads, [](int64_t s) { return s < 0; }))
    return n.fail("pads and output_padding must be >= 0");
  std::optional<SmallVector<int64_t>> outShape = *outShapeAttr;
  if (outShape && static_cast<int64_t>(outShape->size()) == k + 2)
    outShape->erase(outShape->begin(), outShape->begin() + 2);
  if (outShape && static_cast<int64_t>(outShape->size()) != k)
    return n.fail("output_shape must have " + Twine(k) + " spatial extents");
  bool same = *autoPad == "SAME_UPPER" || *autoPad == "SAME_LOWER";
  if (!same && *autoPad != "NOTSET" && *autoPad != "VALID")
    return n.fail("unsupported auto_pad '" + *autoPad + "'");

  SmallVector<int64_t> resultShape{xs[0], ws[1] * *group};
  for (int64_t i = 0; i < k; ++i) {
    int64_t in = xs[2 + i];
    int64_t full = strides[i] * (in - 1) + outPad[i] +
                   (kernel[i] - 1) * dilations[i] + 1;
    if (outShape || same) {
      int64_t want = outShape ? (*outShape)[i] : in * strides[i];
      // Negative when the output is longer: an explicit output_shape grows
      // the end like output_padding (floor division, as the ONNX
      // reference); SAME never pads negatively (the output stays `full`, as
      // ONNX shape inference and onnxruntime have it).
      int64_t total = full - want;
      if (!outShape)
        total = std::max<int64_t>(total, 0);
      int64_t half = llvm::divideFloorSigned(total, 2);
      pads[i] = *autoPad == "SAME_UPPER" ? half : total - half;
      pads[k + i] = total - pads[i];
    } else if (*autoPad == "VALID") {
      pads[i] = pads[k + i] = 0;
    }
    int64_t extent = full - pads[i] - pads[k + i];
    if (extent < 1)
      return n.fail("the pads of spatial dimension " + Twine(i) +
                    " leave no output");
    resultShape.push_back(extent);
  }
  if (failed(checkSize(n, resultShape)))
    return failure();

  Composer c(n);
  // The input with stride - 1 zeros after each element but the last.
  Value y = x;
  for (int64_t i = 0; i < k && y; ++i) {
    int64_t dim = 2 + i, in = shapeOf(y)[dim], s = strides[i];
    if (s == 1 || in <= 1)
      continue;
    SmallVector<int64_t> spread(shapeOf(y));
    spread.insert(spread.begin() + dim + 1, 1);
    SmallVector<int64_t> zeroShape(spread);
    zeroShape[dim + 1] = s - 1;
    Value wide = c.concat(
        {c.reshape(y, spread),
         c.fill(RankedTensorType::get(zeroShape, eltOf(x)), 0.0)},
        dim + 1);
    SmallVector<int64_t> merged(shapeOf(y));
    merged[dim] = in * s;
    y = c.slice(c.reshape(wide, merged), dim, 0, (in - 1) * s + 1);
  }
  // [C, M/g, K...] -> [M, C/g, K...] within each group, kernel flipped.
  int64_t g = *group, cg = xs[1] / g, mg = ws[1];
  SmallVector<int64_t> grouped{g, cg, mg};
  llvm::append_range(grouped, kernel);
  SmallVector<int64_t> perm{0, 2, 1};
  for (int64_t i = 0; i < k; ++i)
    perm.push_back(3 + i);
  SmallVector<int64_t> convWeightShape{g * mg, cg};
  llvm::append_range(convWeightShape, kernel);
  Value w = c.reshape(c.transpose(c.reshape(wt, grouped), perm),
                      convWeightShape);
  for (int64_t i = 0; i < k; ++i)
    if (kernel[i] > 1)
      w = c.slice(w, 2 + i, kernel[i] - 1, kernel[i], -1);
  SmallVector<int64_t> convPads(2 * k), crop(2 * k);
  for (int64_t i = 0; i < k; ++i) {
    int64_t reach = dilations[i] * (kernel[i] - 1);
    int64_t begin = reach - pads[i], end = reach - pads[k + i] + outPad[i];
    convPads[i] = std::max<int64_t>(begin, 0);
    crop[i] = std::max<int64_t>(-begin, 0);
    convPads[k + i] = std::max<int64_t>(end, 0);
    crop[k + i] = std::max<int64_t>(-end, 0);
  }
  Value result = c.make<dnn::ConvOp>(
      {}, y, w, n.hasInput(2) ? n.input(2) : Value(),
      n.b.getDenseI64ArrayAttr(SmallVector<int64_t>(k, 1)),
      n.b.getDenseI64ArrayAttr(convPads), n.b.getDenseI64ArrayAttr(dilations),
      n.b.getI64IntegerAttr(g));
  for (int64_t i = 0; i < k; ++i)
    if (crop[i] || crop[k + i])
      result = c.slice(result, 2 + i, crop[i], resultShape[2 + i]);
  return c.finish(result);
}

/// The scalar integer input `i` (`what` in messages), of any numeric type.
static FailureOr<int64_t> scalarInt(NodeImporter &n, int i, StringRef what) {
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

/// HannWindow-17, HammingWindow-17, BlackmanWindow-17: a constant of the
/// `size` (a compile-time input) window, `output_datatype` elements;
/// `periodic` windows have period `size`, symmetric ones `size - 1`.
static LogicalResult importWindow(NodeImporter &n) {
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

/// OneHot-9/11: `values[1]` where the wrapped (negative ones count from
/// `depth`) index equals the position along the new `axis`, `values[0]`
/// elsewhere; `depth` is a compile-time input.
static LogicalResult importOneHot(NodeImporter &n) {
  if (failed(n.checkArity(3, 3, 1)))
    return failure();
  auto depth = scalarInt(n, 1, "depth");
  auto axisAttr = n.getInt("axis", -1);
  if (failed(depth) || failed(axisAttr))
    return failure();
  Value indices = n.input(0), values = n.input(2);
  if (*depth < 1)
    return n.fail("depth must be positive, not " + Twine(*depth));
  if (shapeOf(values) != ArrayRef<int64_t>{2})
    return n.fail("values must be [off_value, on_value]");
  if (eltOf(indices).isInteger(1))
    return n.fail("indices must be numeric, not bool");
  int64_t rank = rankOf(indices) + 1;
  auto axis = normAxis(n, *axisAttr, rank);
  if (failed(axis))
    return failure();
  SmallVector<int64_t> outShape(shapeOf(indices));
  outShape.insert(outShape.begin() + *axis, *depth);
  if (failed(checkSize(n, outShape)))
    return failure();
  SmallVector<int64_t> kept(shapeOf(indices));
  kept.insert(kept.begin() + *axis, 1);
  Composer c(n);
  Value index = c.wrapIndices(indices, *depth);
  Value hit = c.compare<dnn::EqualOp>(
      c.broadcastTo(c.reshape(index, kept), outShape),
      c.broadcastTo(c.ramp(n.b.getI64Type(), *depth, rank, *axis), outShape));
  auto pick = [&](int64_t k) {
    return c.broadcastTo(c.reshape(c.slice(values, 0, k, 1), {}), outShape);
  };
  return c.finish(c.select(hit, pick(1), pick(0)));
}

/// Compress-11: the slices along `axis` (of the flattened input without
/// one) whose entry of the compile-time `condition` is true, as a Gather.
static LogicalResult importCompress(NodeImporter &n) {
  if (failed(n.checkArity(2, 2, 1)))
    return failure();
  Value x = n.input(0);
  if (!eltOf(n.input(1)).isInteger(1) || rankOf(n.input(1)) != 1)
    return n.fail("condition must be a 1-D bool tensor");
  auto condition = n.constantInts(1, "condition");
  if (failed(condition))
    return failure();
  Composer c(n);
  int64_t axis = 0;
  if (n.findAttr("axis")) {
    auto a = n.getInt("axis", 0);
    if (failed(a))
      return failure();
    auto v = normAxis(n, *a, rankOf(x));
    if (failed(v))
      return failure();
    axis = *v;
  } else {
    x = c.reshape(x, {product(shapeOf(x))});
  }
  if (!x)
    return failure();
  int64_t extent = shapeOf(x)[axis];
  if (static_cast<int64_t>(condition->size()) > extent)
    return n.fail("condition has " + Twine(condition->size()) +
                  " entries for an axis of extent " + Twine(extent));
  SmallVector<int64_t> kept;
  for (auto [i, v] : llvm::enumerate(*condition))
    if (v)
      kept.push_back(static_cast<int64_t>(i));
  return c.finish(c.gather(x, n.constantI64(kept), axis));
}

/// ReverseSequence-10: each batch entry's first `sequence_lens[b]` steps
/// along `time_axis` reversed (the lengths a compile-time input), as a
/// Gather along the time axis with a constant index per (time, batch).
static LogicalResult importReverseSequence(NodeImporter &n) {
  if (failed(n.checkArity(2, 2, 1)))
    return failure();
  auto lens = n.constantInts(1, "sequence_lens");
  auto batchAttr = n.getInt("batch_axis", 1);
  auto timeAttr = n.getInt("time_axis", 0);
  if (failed(lens) || failed(batchAttr) || failed(timeAttr))
    return failure();
  Value x = n.input(0);
  ArrayRef<int64_t> xs = shapeOf(x);
  int64_t rank = xs.size();
  if (rank < 2)
    return n.fail("input must have rank 2 or more");
  int64_t batchAxis = *batchAttr, timeAxis = *timeAttr;
  if (!((batchAxis == 0 && timeAxis == 1) ||
        (batchAxis == 1 && timeAxis == 0)))
    return n.fail("batch_axis and time_axis must be 0 and 1 in some order");
  int64_t batch = xs[batchAxis], time = xs[timeAxis];
  if (static_cast<int64_t>(lens->size()) != batch)
    return n.fail("sequence_lens has " + Twine(lens->size()) +
                  " entries for a batch of " + Twine(batch));
  SmallVector<int64_t> indexShape(rank, 1);
  indexShape[batchAxis] = batch;
  indexShape[timeAxis] = time;
  SmallVector<int64_t> index(batch * time);
  for (int64_t b = 0; b < batch; ++b) {
    int64_t len = (*lens)[b];
    if (len < 0 || len > time)
      return n.fail("sequence_lens[" + Twine(b) + "] = " + Twine(len) +
                    " is outside [0, " + Twine(time) + "]");
    for (int64_t t = 0; t < time; ++t) {
      int64_t at = batchAxis == 0 ? b * time + t : t * batch + b;
      index[at] = t < len ? len - 1 - t : t;
    }
  }
  Composer c(n);
  if (product(xs) == 0)
    return c.finish(x);
  Value indexConst = n.constant(DenseElementsAttr::get(
      RankedTensorType::get(indexShape, n.b.getI64Type()),
      ArrayRef<int64_t>(index)));
  return c.finish(
      gatherAlong(c, n, x, c.broadcastTo(indexConst, xs), timeAxis));
}

/// LRN-13: `x / (bias + alpha / size * sum of x^2 over the channel window
/// [c - floor((size - 1) / 2), c + ceil((size - 1) / 2)])^beta`, the window
/// sum as `size` shifted slices of the zero-padded squares.
static LogicalResult importLRN(NodeImporter &n) {
  if (failed(n.checkArity(1, 1, 1)) || failed(requireFloatInput(n)))
    return failure();
  auto alpha = n.getFloat("alpha", 1e-4f);
  auto beta = n.getFloat("beta", 0.75f);
  auto bias = n.getFloat("bias", 1.0f);
  auto size = n.getInt("size", 0);
  if (failed(alpha) || failed(beta) || failed(bias) || failed(size))
    return failure();
  if (*size < 1)
    return n.fail("attribute 'size' must be positive");
  Value x = n.input(0);
  ArrayRef<int64_t> xs = shapeOf(x);
  if (xs.size() < 2)
    return n.fail("input must be [N, C, ...]");
  int64_t channels = xs[1];
  int64_t before = (*size - 1) / 2, after = *size - 1 - before;
  Composer c(n);
  auto zeros = [&](int64_t count) -> Value {
    if (count == 0)
      return nullptr;
    SmallVector<int64_t> shape(xs);
    shape[1] = count;
    return c.fill(RankedTensorType::get(shape, eltOf(x)), 0.0);
  };
  Value padded =
      c.concat({zeros(before), c.binary<dnn::MulOp>(x, x), zeros(after)}, 1);
  Value sum;
  for (int64_t j = 0; j < *size; ++j) {
    Value part = c.slice(padded, 1, j, channels);
    sum = sum ? c.binary<dnn::AddOp>(sum, part) : part;
  }
  Value base = c.binary<dnn::AddOp>(
      c.splat(x, *bias),
      c.binary<dnn::MulOp>(c.splat(x, *alpha / static_cast<double>(*size)),
                           sum));
  return c.finish(c.binary<dnn::DivOp>(
      x, c.binary<dnn::PowOp>(base, c.splat(x, *beta))));
}

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
static LogicalResult importQuantizeLinear(NodeImporter &n) {
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
static LogicalResult importDequantizeLinear(NodeImporter &n) {
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
static LogicalResult importDynamicQuantizeLinear(NodeImporter &n) {
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

/// How a scatter combines an update with the element it lands on.
enum class ScatterReduction { None, Add, Mul, Max, Min };

/// Reads the `reduction` attribute of ScatterElements/ScatterND.
static FailureOr<ScatterReduction> getScatterReduction(NodeImporter &n) {
  auto name = n.getString("reduction", "none");
  if (failed(name))
    return failure();
  auto kind = llvm::StringSwitch<std::optional<ScatterReduction>>(*name)
                  .Case("none", ScatterReduction::None)
                  .Case("add", ScatterReduction::Add)
                  .Case("mul", ScatterReduction::Mul)
                  .Case("max", ScatterReduction::Max)
                  .Case("min", ScatterReduction::Min)
                  .Default(std::nullopt);
  if (!kind)
    return n.fail("unsupported reduction '" + *name + "'");
  return *kind;
}

/// `data` with update `u` (of the flattened `updates`) combined into the
/// element at linear offset `targets[u]`, in update order: one round per
/// update that lands on an already updated element, each a Gather of the
/// updates at constant positions and a select. Without reduction the last
/// update of an element wins.
static Value scatterComposed(Composer &c, NodeImporter &n, Value data,
                             Value updates, ArrayRef<int64_t> targets,
                             ScatterReduction reduction) {
  ArrayRef<int64_t> ds = shapeOf(data);
  int64_t size = product(ds);
  // The updates of each element, in order.
  SmallVector<SmallVector<int64_t, 1>> landing(size);
  for (auto [u, p] : llvm::enumerate(targets)) {
    if (reduction == ScatterReduction::None)
      landing[p].clear();
    landing[p].push_back(static_cast<int64_t>(u));
  }
  size_t rounds = 0;
  for (const auto &l : landing)
    rounds = std::max(rounds, l.size());
  Value out = c.reshape(data, {size});
  Value flatUpdates = c.reshape(updates, {product(shapeOf(updates))});
  Type i64 = n.b.getI64Type();
  for (size_t r = 0; r < rounds; ++r) {
    SmallVector<int64_t> source(size, 0);
    SmallVector<bool> hit(size, false);
    for (int64_t p = 0; p < size; ++p) {
      if (r < landing[p].size()) {
        source[p] = landing[p][r];
        hit[p] = true;
      }
    }
    Value picked = c.gather(
        flatUpdates,
        n.constant(DenseElementsAttr::get(RankedTensorType::get({size}, i64),
                                          ArrayRef<int64_t>(source))),
        0);
    Value combined = picked;
    switch (reduction) {
    case ScatterReduction::None:
      break;
    case ScatterReduction::Add:
      combined = c.binary<dnn::AddOp>(out, picked);
      break;
    case ScatterReduction::Mul:
      combined = c.binary<dnn::MulOp>(out, picked);
      break;
    case ScatterReduction::Max:
      combined = c.binary<dnn::MaxOp>(out, picked);
      break;
    case ScatterReduction::Min:
      combined = c.binary<dnn::MinOp>(out, picked);
      break;
    }
    Value mask = n.constant(DenseElementsAttr::get(
        RankedTensorType::get({size}, n.b.getI1Type()), ArrayRef<bool>(hit)));
    out = c.select(mask, combined, out);
  }
  return c.reshape(out, ds);
}

/// ScatterElements-11/13/16/18 and Scatter-9: `data` with `updates[j...]`
/// written to (or, with `reduction`, combined into) the element at `j...`
/// with `indices[j...]` along `axis`; the indices are a compile-time input.
static LogicalResult importScatterElements(NodeImporter &n) {
  if (failed(n.checkArity(3, 3, 1)))
    return failure();
  auto reduction = getScatterReduction(n);
  auto axisAttr = n.getInt("axis", 0);
  if (failed(reduction) || failed(axisAttr))
    return failure();
  Value data = n.input(0), indices = n.input(1), updates = n.input(2);
  ArrayRef<int64_t> ds = shapeOf(data), is = shapeOf(indices);
  int64_t rank = ds.size();
  if (static_cast<int64_t>(is.size()) != rank || shapeOf(updates) != is)
    return n.fail("indices and updates must have one shape, of the data's "
                  "rank");
  if (eltOf(updates) != eltOf(data))
    return n.fail("updates must have the data's element type");
  if (rank == 0)
    return n.fail("data must have rank 1 or more");
  auto axis = normAxis(n, *axisAttr, rank);
  if (failed(axis))
    return failure();
  for (int64_t d = 0; d < rank; ++d)
    if (d != *axis && is[d] > ds[d])
      return n.fail("indices dimension " + Twine(d) + " (" + Twine(is[d]) +
                    ") exceeds the data's (" + Twine(ds[d]) + ")");
  auto values = n.constantInts(1, "indices");
  if (failed(values))
    return failure();
  SmallVector<int64_t> targets;
  SmallVector<int64_t> position(rank, 0);
  for (int64_t v : *values) {
    if (v < -ds[*axis] || v >= ds[*axis])
      return n.fail("index " + Twine(v) +
                    " is out of range for an axis of extent " +
                    Twine(ds[*axis]));
    int64_t offset = 0;
    for (int64_t d = 0; d < rank; ++d)
      offset = offset * ds[d] +
               (d == *axis ? (v < 0 ? v + ds[d] : v) : position[d]);
    targets.push_back(offset);
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++position[d] < is[d])
        break;
      position[d] = 0;
    }
  }
  Composer c(n);
  if (targets.empty() || product(ds) == 0)
    return c.finish(data);
  return c.finish(scatterComposed(c, n, data, updates, targets, *reduction));
}

/// ScatterND-11/13/16/18: `data` with the slices `updates[i...]` written to
/// (or combined into) the slices of `data` the tuples `indices[i...]`
/// address; the indices are a compile-time input.
static LogicalResult importScatterND(NodeImporter &n) {
  if (failed(n.checkArity(3, 3, 1)))
    return failure();
  auto reduction = getScatterReduction(n);
  if (failed(reduction))
    return failure();
  Value data = n.input(0), indices = n.input(1), updates = n.input(2);
  ArrayRef<int64_t> ds = shapeOf(data), is = shapeOf(indices);
  int64_t r = ds.size(), q = is.size();
  if (r < 1 || q < 1)
    return n.fail("data and indices must have rank 1 or more");
  int64_t k = is.back();
  if (k < 1 || k > r)
    return n.fail("the last indices dimension (" + Twine(k) +
                  ") must be in [1, " + Twine(r) + "]");
  SmallVector<int64_t> updatesShape(is.drop_back());
  llvm::append_range(updatesShape, ds.drop_front(k));
  if (shapeOf(updates) != ArrayRef<int64_t>(updatesShape))
    return n.fail("updates must be indices.shape[:-1] + data.shape[k:]");
  if (eltOf(updates) != eltOf(data))
    return n.fail("updates must have the data's element type");
  auto values = n.constantInts(1, "indices");
  if (failed(values))
    return failure();
  int64_t slice = product(ds.drop_front(k));
  SmallVector<int64_t> targets;
  for (size_t t = 0; t + k <= values->size(); t += k) {
    int64_t offset = 0;
    for (int64_t j = 0; j < k; ++j) {
      int64_t v = (*values)[t + j], extent = ds[j];
      if (v < -extent || v >= extent)
        return n.fail("index " + Twine(v) +
                      " is out of range for an axis of extent " +
                      Twine(extent));
      offset = offset * extent + (v < 0 ? v + extent : v);
    }
    for (int64_t e = 0; e < slice; ++e)
      targets.push_back(offset * slice + e);
  }
  Composer c(n);
  if (targets.empty() || product(ds) == 0)
    return c.finish(data);
  return c.finish(scatterComposed(c, n, data, updates, targets, *reduction));
}

/// TopK-1/10/11: the `k` (a compile-time input) largest (or smallest)
/// elements along `axis` and their i64 indices, in order, ties by lower
/// index. Composed from pairwise comparisons along the axis: an element's
/// rank counts the elements before it, and output slot `r` sums the element
/// of rank `r`. The pairs take `rows * extent^2` elements, so axes longer
/// than a few thousand are refused.
static LogicalResult importTopK(NodeImporter &n) {
  if (failed(n.checkArity(n.opset >= 10 ? 2 : 1, n.opset >= 10 ? 2 : 1, 2)))
    return failure();
  auto axisAttr = n.getInt("axis", -1);
  auto largest = n.getInt("largest", 1);
  auto sortedAttr = n.getInt("sorted", 1);
  if (failed(axisAttr) || failed(largest) || failed(sortedAttr))
    return failure();
  int64_t k;
  if (n.opset >= 10) {
    auto v = n.constantInts(1, "k");
    if (failed(v))
      return failure();
    if (v->size() != 1)
      return n.fail("k must hold one value");
    k = v->front();
  } else {
    auto v = n.getInt("k", -1);
    if (failed(v))
      return failure();
    k = *v;
  }
  Value x = n.input(0);
  ArrayRef<int64_t> xs = shapeOf(x);
  int64_t rank = xs.size();
  if (rank == 0)
    return n.fail("input must have rank 1 or more");
  if (eltOf(x).isInteger(1))
    return n.fail("input must be numeric, not bool");
  auto axis = normAxis(n, *axisAttr, rank);
  if (failed(axis))
    return failure();
  int64_t extent = xs[*axis];
  if (k < 0 || k > extent)
    return n.fail("k = " + Twine(k) + " is outside [0, " + Twine(extent) +
                  "]");
  int64_t rows = product(xs) / std::max<int64_t>(extent, 1);
  if (static_cast<double>(rows) * extent * extent > double(1 << 26))
    return n.fail("TopK over an axis of " + Twine(extent) + " elements (" +
                  Twine(rows) + " rows) is not supported: the composed "
                  "comparison needs rows * extent^2 elements");
  // Move the axis last: [R..., L].
  SmallVector<int64_t> perm, inverse(rank);
  for (int64_t d = 0; d < rank; ++d)
    if (d != *axis)
      perm.push_back(d);
  perm.push_back(*axis);
  for (int64_t d = 0; d < rank; ++d)
    inverse[perm[d]] = d;
  Composer c(n);
  Value y = *axis == rank - 1 ? x : c.transpose(x, perm);
  if (!y)
    return failure();
  SmallVector<int64_t> lead(shapeOf(y).drop_back());
  auto with = [&](std::initializer_list<int64_t> tail) {
    SmallVector<int64_t> s(lead);
    s.append(tail);
    return s;
  };
  SmallVector<int64_t> pairs = with({extent, extent});
  Type i64 = n.b.getI64Type();
  // [..., i, j]: x_j against x_i.
  Value xi = c.broadcastTo(c.reshape(y, with({extent, 1})), pairs);
  Value xj = c.broadcastTo(c.reshape(y, with({1, extent})), pairs);
  Value beats = *largest ? c.compare<dnn::GreaterOp>(xj, xi)
                         : c.compare<dnn::LessOp>(xj, xi);
  SmallVector<bool> earlier(extent * extent);
  for (int64_t i = 0; i < extent; ++i)
    for (int64_t j = 0; j < i; ++j)
      earlier[i * extent + j] = true;
  Value before = c.broadcastTo(
      n.constant(DenseElementsAttr::get(
          RankedTensorType::get({extent, extent}, n.b.getI1Type()),
          ArrayRef<bool>(earlier))),
      pairs);
  Value ahead = c.binary<dnn::OrOp>(
      beats,
      c.binary<dnn::AndOp>(c.compare<dnn::EqualOp>(xj, xi), before));
  Value rankOfElement = c.reduce<dnn::ReduceSumOp>(
      c.convert(ahead, i64), {static_cast<int64_t>(lead.size()) + 1}, false);
  // [..., r, i]: element i has rank r.
  SmallVector<int64_t> slots = with({k, extent});
  Value hit = c.compare<dnn::EqualOp>(
      c.broadcastTo(c.reshape(rankOfElement, with({1, extent})), slots),
      c.broadcastTo(c.ramp(i64, k, lead.size() + 2, lead.size()), slots));
  int64_t last = lead.size() + 1;
  Value values = c.reduce<dnn::ReduceSumOp>(
      c.select(hit, c.broadcastTo(c.reshape(y, with({1, extent})), slots),
               c.fill(RankedTensorType::get(slots, eltOf(x)), 0.0)),
      {last}, false);
  Value positions = c.reduce<dnn::ReduceSumOp>(
      c.select(hit,
               c.broadcastTo(c.ramp(i64, extent, lead.size() + 2, last),
                             slots),
               c.fill(RankedTensorType::get(slots, i64), 0.0)),
      {last}, false);
  if (*axis != rank - 1) {
    values = c.transpose(values, inverse);
    positions = c.transpose(positions, inverse);
  }
  if (failed(c.finish(values)))
    return failure();
  n.setOutput(1, positions);
  return success();
}

/// RMSNormalization-23: `x / sqrt(mean(x^2 over the axes from axis) +
/// epsilon) * scale`, in float32 for narrower inputs (stash_type 1) and
/// converted back.
static LogicalResult importRMSNormalization(NodeImporter &n) {
  if (failed(n.checkArity(2, 2, 1)) || failed(requireFloatInput(n)))
    return failure();
  auto axisAttr = n.getInt("axis", -1);
  auto eps = n.getFloat("epsilon", 1e-5f);
  auto stash = n.getInt("stash_type", 1);
  if (failed(axisAttr) || failed(eps) || failed(stash))
    return failure();
  Value x = n.input(0), scale = n.input(1);
  ArrayRef<int64_t> xs = shapeOf(x);
  int64_t rank = xs.size();
  if (rank == 0)
    return n.fail("input must have rank 1 or more");
  auto axis = normAxis(n, *axisAttr, rank);
  if (failed(axis))
    return failure();
  if (eltOf(scale) != eltOf(x))
    return n.fail("scale must have the input's element type");
  Type elt = eltOf(x);
  Type compute = cast<FloatType>(elt).getWidth() < 32 && *stash == 1
                     ? Type(n.b.getF32Type())
                     : elt;
  Composer c(n);
  Value xf = c.convert(x, compute);
  Value meanSquare = c.reduce<dnn::ReduceMeanOp>(
      c.binary<dnn::MulOp>(xf, xf),
      llvm::to_vector(llvm::seq<int64_t>(*axis, rank)), /*keepDims=*/true);
  Value rms = c.unary<dnn::SqrtOp>(
      c.binary<dnn::AddOp>(meanSquare, c.splat(meanSquare, *eps)));
  Value y = c.binary<dnn::MulOp>(
      c.binary<dnn::DivOp>(xf, c.broadcastTo(rms, xs)),
      c.broadcastTo(c.convert(scale, compute), xs));
  return c.finish(c.convert(y, elt));
}

/// IsInf-10: `x == +inf` where `detect_positive`, `x == -inf` where
/// `detect_negative` (both by default).
static LogicalResult importIsInf(NodeImporter &n) {
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
static LogicalResult importShrink(NodeImporter &n) {
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
static LogicalResult importPRelu(NodeImporter &n) {
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
static LogicalResult importMean(NodeImporter &n) {
  auto sum = combineInputs<dnn::AddOp>(n);
  if (failed(sum))
    return failure();
  if (!isa<FloatType>(eltOf(*sum)))
    return n.fail("inputs must be floating-point tensors");
  Composer c(n);
  return c.finish(c.binary<dnn::DivOp>(*sum, c.splat(*sum, n.numInputs())));
}

/// Tile-6 (constant repeats): x reshaped to `[1, d0, 1, d1, ...]`, broadcast
/// to `[r0, d0, r1, d1, ...]` and reshaped to `[r0 * d0, r1 * d1, ...]`.
static LogicalResult importTile(NodeImporter &n) {
  if (failed(n.checkArity(2, 2, 1)))
    return failure();
  Value x = n.input(0);
  auto repeats = n.constantInts(1, "repeats");
  if (failed(repeats))
    return failure();
  if ((int64_t)repeats->size() != rankOf(x))
    return n.fail("repeats has " + Twine(repeats->size()) +
                  " values for an input of rank " + Twine(rankOf(x)));
  SmallVector<int64_t> split, spread, result;
  for (auto [d, r] : llvm::zip(shapeOf(x), *repeats)) {
    if (r < 0)
      return n.fail("repeats must be non-negative");
    split.append({1, d});
    spread.append({r, d});
  }
  if (failed(checkSize(n, spread)))
    return failure();
  for (auto [d, r] : llvm::zip(shapeOf(x), *repeats))
    result.push_back(r * d);
  Composer c(n);
  return c.finish(
      c.reshape(c.broadcastTo(c.reshape(x, split), spread), result));
}

/// DepthToSpace-1 (DCR; mode CRD from opset 11) and SpaceToDepth-1: a
/// reshape, a transpose and a reshape of `[N, C, H, W]`.
static LogicalResult importDepthToSpace(NodeImporter &n) {
  if (failed(n.checkArity(1, 1, 1)))
    return failure();
  Value x = n.input(0);
  auto block = n.getInt("blocksize", 0);
  auto mode = n.getString("mode", "DCR");
  if (failed(block) || failed(mode))
    return failure();
  if (rankOf(x) != 4)
    return n.fail("input must be [N, C, H, W]");
  if (*mode != "DCR" && *mode != "CRD")
    return n.fail("attribute 'mode' must be 'DCR' or 'CRD', got '" + *mode +
                  "'");
  int64_t b = *block, N = shapeOf(x)[0], C = shapeOf(x)[1], H = shapeOf(x)[2],
          W = shapeOf(x)[3];
  if (b <= 0 || b > C / b || C % (b * b) != 0)
    return n.fail("blocksize " + Twine(b) + " must be positive and its " +
                  "square must divide the " + Twine(C) + " channels");
  Composer c(n);
  Value split = *mode == "DCR"
                    ? c.transpose(c.reshape(x, {N, b, b, C / (b * b), H, W}),
                                  {0, 3, 4, 1, 5, 2})
                    : c.transpose(c.reshape(x, {N, C / (b * b), b, b, H, W}),
                                  {0, 1, 4, 2, 5, 3});
  return c.finish(c.reshape(split, {N, C / (b * b), H * b, W * b}));
}

static LogicalResult importSpaceToDepth(NodeImporter &n) {
  if (failed(n.checkArity(1, 1, 1)))
    return failure();
  Value x = n.input(0);
  auto block = n.getInt("blocksize", 0);
  if (failed(block))
    return failure();
  if (rankOf(x) != 4)
    return n.fail("input must be [N, C, H, W]");
  int64_t b = *block, N = shapeOf(x)[0], C = shapeOf(x)[1], H = shapeOf(x)[2],
          W = shapeOf(x)[3];
  if (b <= 0 || H % b != 0 || W % b != 0)
    return n.fail("blocksize " + Twine(b) + " must be positive and divide " +
                  "the height " + Twine(H) + " and width " + Twine(W));
  Composer c(n);
  Value split =
      c.transpose(c.reshape(x, {N, C, H / b, b, W / b, b}), {0, 3, 5, 1, 2, 4});
  return c.finish(c.reshape(split, {N, C * b * b, H / b, W / b}));
}

/// Trilu-14 (constant k): x where the diagonal offset `col - row` is
/// `>= k` (upper) or `<= k` (lower) in the last two dimensions, else 0.
static LogicalResult importTrilu(NodeImporter &n) {
  if (failed(n.checkArity(1, 2, 1)))
    return failure();
  Value x = n.input(0);
  if (rankOf(x) < 2)
    return n.fail("input must have rank 2 or more");
  auto upper = n.getInt("upper", 1);
  if (failed(upper))
    return failure();
  int64_t k = 0;
  if (n.hasInput(1)) {
    auto v = n.constantInts(1, "k");
    if (failed(v))
      return failure();
    if (v->size() != 1)
      return n.fail("k must hold one value");
    k = v->front();
  }
  // The offsets from a row index `[rows, 1]` and a column index `[cols]`
  // (no `rows x cols` constant).
  int64_t rows = shapeOf(x)[rankOf(x) - 2], cols = shapeOf(x).back();
  Composer c(n);
  auto index = [&](int64_t extent, ArrayRef<int64_t> shape) {
    SmallVector<int64_t> values(extent);
    std::iota(values.begin(), values.end(), 0);
    return c.broadcastTo(c.reshape(n.constantI64(values), shape), shapeOf(x));
  };
  Value offset =
      c.binary<dnn::SubOp>(index(cols, {cols}), index(rows, {rows, 1}));
  Value bound = c.splat(offset, k);
  Value keep = *upper ? c.compare<dnn::GreaterEqualOp>(offset, bound)
                      : c.compare<dnn::LessEqualOp>(offset, bound);
  return c.finish(c.select(keep, x, c.splat(x, 0.0)));
}

/// InstanceNormalization-6: each `[n, c]` plane normalised by its own mean
/// and variance, then scaled and shifted per channel.
static LogicalResult importInstanceNorm(NodeImporter &n) {
  if (failed(n.checkArity(3, 3, 1)) || failed(requireFloatInput(n)))
    return failure();
  Value x = n.input(0);
  if (rankOf(x) < 3)
    return n.fail("input must be [N, C, D1, ...]");
  auto eps = n.getFloat("epsilon", 1e-5f);
  if (failed(eps))
    return failure();
  auto scale = perChannel(n, n.input(1), x);
  auto bias = perChannel(n, n.input(2), x);
  if (failed(scale) || failed(bias))
    return failure();
  SmallVector<int64_t> spatial;
  for (int64_t i = 2; i < rankOf(x); ++i)
    spatial.push_back(i);
  Composer c(n);
  auto mean = [&](Value v) {
    return c.broadcastTo(
        c.make<dnn::ReduceMeanOp>({}, v, n.b.getDenseI64ArrayAttr(spatial),
                                  n.b.getBoolAttr(true)),
        shapeOf(x));
  };
  Value centered = c.binary<dnn::SubOp>(x, mean(x));
  Value variance = mean(c.binary<dnn::MulOp>(centered, centered));
  Value normalized = c.binary<dnn::DivOp>(
      centered,
      c.unary<dnn::SqrtOp>(c.binary<dnn::AddOp>(variance, c.splat(x, *eps))));
  return c.finish(
      c.binary<dnn::AddOp>(c.binary<dnn::MulOp>(normalized, *scale), *bias));
}

/// Pad-2 (pads as an attribute) and Pad-11 (pads, constant_value and, from
/// opset 18, axes as inputs): per padded axis, the input between the parts
/// that `mode` makes (constant, edge, reflect, wrap), or a slice where a pad
/// is negative.
static LogicalResult importPad(NodeImporter &n) {
  bool asInputs = n.opset >= 11;
  if (failed(n.checkArity(1, asInputs ? 4 : 1, 1)))
    return failure();
  Value x = n.input(0);
  int64_t rank = rankOf(x);
  auto mode = n.getString("mode", "constant");
  if (failed(mode))
    return failure();
  bool wrapAllowed = n.opset >= 19;
  if (*mode != "constant" && *mode != "edge" && *mode != "reflect" &&
      (*mode != "wrap" || !wrapAllowed))
    return n.fail("attribute 'mode' must be constant, edge, reflect" +
                  Twine(wrapAllowed ? " or wrap" : " (wrap from opset 19)") +
                  ", got '" + *mode + "'");
  SmallVector<int64_t> pads;
  // The padding value: `padValue` (Pad-11's input 2) or `value`.
  Value padValue;
  double value = 0;
  SmallVector<int64_t> axes;
  if (asInputs) {
    auto p = n.constantInts(1, "pads");
    if (failed(p))
      return failure();
    pads = *p;
    if (n.hasInput(2)) {
      padValue = n.input(2);
      if (eltOf(padValue) != eltOf(x) || product(shapeOf(padValue)) != 1)
        return n.fail("constant_value (input 2) must be one value of the "
                      "input's element type");
    }
    if (n.hasInput(3)) {
      auto a = n.constantInts(3, "axes");
      if (failed(a))
        return failure();
      for (int64_t axis : *a) {
        auto norm = normAxis(n, axis, rank);
        if (failed(norm))
          return failure();
        axes.push_back(*norm);
      }
    }
  } else {
    auto p = n.getRequiredInts("pads");
    auto v = n.getFloat("value", 0.0f);
    if (failed(p) || failed(v))
      return failure();
    pads = *p;
    value = *v;
  }
  if (axes.empty())
    for (int64_t i = 0; i < rank; ++i)
      axes.push_back(i);
  int64_t count = axes.size();
  if ((int64_t)pads.size() != 2 * count)
    return n.fail("pads has " + Twine(pads.size()) + " values for " +
                  Twine(count) + " axes (it needs 2 per axis)");
  Composer c(n);
  for (int64_t i = 0; i < count; ++i) {
    int64_t axis = axes[i], before = pads[i], after = pads[i + count];
    if (!x)
      break;
    // Negative pads crop.
    int64_t extent = shapeOf(x)[axis];
    if (before < -extent || after < -extent ||
        std::min<int64_t>(before, 0) + std::min<int64_t>(after, 0) < -extent)
      return n.fail("pads crop more elements than the axis extent " +
                    Twine(extent));
    if (before > kMaxElements || after > kMaxElements)
      return n.fail("pads of more than 2^40 elements");
    int64_t cropBefore = std::max<int64_t>(-before, 0);
    int64_t cropAfter = std::max<int64_t>(-after, 0);
    if (cropBefore || cropAfter) {
      x = c.slice(x, axis, cropBefore, extent - cropBefore - cropAfter);
      extent -= cropBefore + cropAfter;
    }
    before = std::max<int64_t>(before, 0);
    after = std::max<int64_t>(after, 0);
    if (!x || (!before && !after))
      continue;
    SmallVector<int64_t> padded(shapeOf(x));
    padded[axis] += before + after;
    if (failed(checkSize(n, padded)))
      return failure();
    if (extent == 0 && *mode != "constant")
      return n.fail("mode '" + *mode + "' cannot pad an empty axis");
    if (*mode == "reflect" && (before >= extent || after >= extent))
      return n.fail("reflect pads must be smaller than the axis extent " +
                    Twine(extent));
    Value lo, hi;
    SmallVector<int64_t> loShape(shapeOf(x)), hiShape(shapeOf(x));
    loShape[axis] = before;
    hiShape[axis] = after;
    if (*mode == "constant") {
      auto fill = [&](ArrayRef<int64_t> shape) {
        return padValue ? c.broadcastTo(c.reshape(padValue, {}), shape)
                        : c.fill(RankedTensorType::get(shape, eltOf(x)), value);
      };
      lo = before ? fill(loShape) : nullptr;
      hi = after ? fill(hiShape) : nullptr;
    } else if (*mode == "edge") {
      lo = before ? c.broadcastTo(c.slice(x, axis, 0, 1), loShape) : nullptr;
      hi = after ? c.broadcastTo(c.slice(x, axis, extent - 1, 1), hiShape)
                 : nullptr;
    } else if (*mode == "reflect") {
      // Elements before..1 and extent-2..extent-1-after (edge not repeated).
      lo = before ? c.slice(x, axis, before, before, -1) : nullptr;
      hi = after ? c.slice(x, axis, extent - 2, after, -1) : nullptr;
    } else {
      // wrap: the last `before` elements first, the first `after` ones last
      // (pads past one period repeat it).
      if (before > extent || after > extent)
        return n.fail("wrap pads must not exceed the axis extent " +
                      Twine(extent));
      lo = before ? c.slice(x, axis, extent - before, before) : nullptr;
      hi = after ? c.slice(x, axis, 0, after) : nullptr;
    }
    x = c.concat({lo, x, hi}, axis);
  }
  return c.finish(x);
}

/// ReduceSumSquare, ReduceL1, ReduceL2, ReduceLogSum and ReduceLogSumExp
/// (axes an input from opset 18): a sum of `x*x`, `|x|`, `x*x` (then sqrt),
/// `x` (then log), or `exp(x - max)` (then `log(.) + max`).
enum class ReduceKind { SumSquare, L1, L2, LogSum, LogSumExp };
template <ReduceKind Kind>
static LogicalResult importReduceComposite(NodeImporter &n) {
  auto r = getReduceAxes(n, 18);
  if (failed(r))
    return failure();
  Value x = n.input(0);
  if (Kind != ReduceKind::SumSquare && Kind != ReduceKind::L1 &&
      failed(requireFloatInput(n)))
    return failure();
  Composer c(n);
  auto axes = n.b.getDenseI64ArrayAttr(r->axes);
  auto keep = [&](bool keepDims) { return n.b.getBoolAttr(keepDims); };
  auto sum = [&](Value v) -> Value {
    if (r->axes.empty())
      return v;
    return c.make<dnn::ReduceSumOp>({}, v, axes, keep(r->keepDims));
  };
  switch (Kind) {
  case ReduceKind::SumSquare:
    return c.finish(sum(c.binary<dnn::MulOp>(x, x)));
  case ReduceKind::L1:
    return c.finish(sum(c.unary<dnn::AbsOp>(x)));
  case ReduceKind::L2:
    return c.finish(c.unary<dnn::SqrtOp>(sum(c.binary<dnn::MulOp>(x, x))));
  case ReduceKind::LogSum:
    return c.finish(c.unary<dnn::LogOp>(sum(x)));
  case ReduceKind::LogSumExp: {
    if (r->axes.empty())
      return c.finish(x);
    // log(sum(exp(x - max))) + max, so that no exp overflows.
    Value max = c.make<dnn::ReduceMaxOp>({}, x, axes, keep(true));
    Value shifted = c.unary<dnn::ExpOp>(
        c.binary<dnn::SubOp>(x, c.broadcastTo(max, shapeOf(x))));
    Value logSum = c.unary<dnn::LogOp>(
        c.make<dnn::ReduceSumOp>({}, shifted, axes, keep(r->keepDims)));
    SmallVector<int64_t> reduced;
    for (auto [i, d] : llvm::enumerate(shapeOf(x)))
      if (!llvm::is_contained(r->axes, (int64_t)i))
        reduced.push_back(d);
    Value shift = r->keepDims ? max : c.reshape(max, reduced);
    return c.finish(c.binary<dnn::AddOp>(logSum, shift));
  }
  }
  llvm_unreachable("unknown reduction");
}

//===----------------------------------------------------------------------===//
// Registry
//===----------------------------------------------------------------------===//

const OpHandlerInfo *dnnc::onnx_import::lookupOpHandler(StringRef opType) {
  static const llvm::StringMap<OpHandlerInfo> registry = {
      // Elementwise.
      {"Relu", {importUnary<dnn::ReluOp>, 6}},
      {"Tanh", {importUnary<dnn::TanhOp>, 6}},
      {"Sigmoid", {importUnary<dnn::SigmoidOp>, 6}},
      {"Erf", {importUnary<dnn::ErfOp>, 9}},
      {"Exp", {importUnary<dnn::ExpOp>, 6}},
      {"Log", {importUnary<dnn::LogOp>, 6}},
      {"Sqrt", {importUnary<dnn::SqrtOp>, 6}},
      {"Reciprocal", {importUnary<dnn::ReciprocalOp>, 6}},
      {"Floor", {importUnary<dnn::FloorOp>, 6}},
      {"Ceil", {importUnary<dnn::CeilOp>, 6}},
      {"Round", {importUnary<dnn::RoundOp>, 11}},
      {"Sin", {importUnary<dnn::SinOp>, 7}},
      {"Cos", {importUnary<dnn::CosOp>, 7}},
      {"Tan", {importUnary<dnn::TanOp>, 7}},
      {"Asin", {importUnary<dnn::AsinOp>, 7}},
      {"Acos", {importUnary<dnn::AcosOp>, 7}},
      {"Atan", {importUnary<dnn::AtanOp>, 7}},
      {"Sinh", {importUnary<dnn::SinhOp>, 9}},
      {"Cosh", {importUnary<dnn::CoshOp>, 9}},
      {"Asinh", {importUnary<dnn::AsinhOp>, 9}},
      {"Acosh", {importUnary<dnn::AcoshOp>, 9}},
      {"Atanh", {importUnary<dnn::AtanhOp>, 9}},
      {"Neg", {importUnary<dnn::NegOp>, 6}},
      {"Abs", {importUnary<dnn::AbsOp>, 6}},
      {"Not", {importUnary<dnn::NotOp>, 1}},
      {"Gelu", {importGelu, 20}},
      {"LeakyRelu", {importLeakyRelu, 6}},
      {"Add", {importBinary<dnn::AddOp>, 1}},
      {"Sub", {importBinary<dnn::SubOp>, 1}},
      {"Mul", {importBinary<dnn::MulOp>, 1}},
      {"Div", {importBinary<dnn::DivOp>, 1}},
      {"Pow", {importPow, 1}},
      {"Mod", {importMod, 10}},
      {"BitShift", {importBitShift, 11}},
      {"And", {importBinary<dnn::AndOp>, 1}},
      {"Or", {importBinary<dnn::OrOp>, 1}},
      {"Xor", {importBinary<dnn::XorOp>, 1}},
      {"Max", {importVariadic<dnn::MaxOp>, 6}},
      {"Min", {importVariadic<dnn::MinOp>, 6}},
      {"Equal", {importCompare<dnn::EqualOp>, 1}},
      {"Less", {importCompare<dnn::LessOp>, 1}},
      {"LessOrEqual", {importCompare<dnn::LessEqualOp>, 12}},
      {"Greater", {importCompare<dnn::GreaterOp>, 1}},
      {"GreaterOrEqual", {importCompare<dnn::GreaterEqualOp>, 12}},
      {"IsNaN", {importIsNaN, 9}},
      {"Where", {importWhere, 9}},
      {"Cast", {importCast, 6}},
      {"CastLike", {importCastLike, 15}},
      {"Clip", {importClip, 6}},
      // Identity-like and constants.
      {"Identity", {importIdentity, 1}},
      {"Dropout", {importDropout, 7}},
      {"Constant", {importConstant, 1}},
      {"Shape", {importShape, 1}},
      {"Size", {importSize, 1}},
      {"ConstantOfShape", {importConstantOfShape, 9}},
      {"Range", {importRange, 11}},
      // Shapes and data movement.
      {"Reshape", {importReshape, 5}},
      {"Flatten", {importFlatten, 1}},
      {"Squeeze", {importSqueeze, 1}},
      {"Unsqueeze", {importUnsqueeze, 1}},
      {"Transpose", {importTranspose, 1}},
      {"Concat", {importConcat, 4}},
      {"Split", {importSplit, 2}},
      {"Slice", {importSlice, 1}},
      {"Gather", {importGather, 1}},
      {"Expand", {importExpand, 8}},
      // Contractions, convolution, pooling.
      {"MatMul", {importMatMul, 1}},
      {"Gemm", {importGemm, 6}},
      {"Einsum", {importEinsum, 12}},
      {"Conv", {importConv, 1}},
      {"MaxPool", {importMaxPool, 1}},
      {"AveragePool", {importAveragePool, 1}},
      {"GlobalAveragePool", {importGlobalPool<dnn::ReduceMeanOp>, 1}},
      {"GlobalMaxPool", {importGlobalPool<dnn::ReduceMaxOp>, 1}},
      // Normalisation, softmax, reductions, losses.
      {"Softmax", {importSoftmax<dnn::SoftmaxOp>, 1}},
      {"LogSoftmax", {importSoftmax<dnn::LogSoftmaxOp>, 1}},
      {"LayerNormalization", {importLayerNorm, 17}},
      {"BatchNormalization", {importBatchNorm, 6}},
      {"ReduceSum", {importReduce<dnn::ReduceSumOp, 13>, 1}},
      {"ReduceMean", {importReduce<dnn::ReduceMeanOp, 18>, 1}},
      {"ReduceMax", {importReduce<dnn::ReduceMaxOp, 18>, 1}},
      {"ReduceMin", {importReduce<dnn::ReduceMinOp, 18>, 1}},
      {"ReduceProd", {importReduce<dnn::ReduceProdOp, 18>, 1}},
      {"SoftmaxCrossEntropyLoss", {importSoftmaxCrossEntropy, 12}},
      // Composite ops.
      {"Softplus", {importSoftplus, 1}},
      {"Softsign", {importSoftsign, 1}},
      {"Elu", {importElu, 6}},
      {"Selu", {importSelu, 6}},
      {"HardSigmoid", {importHardSigmoid, 6}},
      {"HardSwish", {importHardSwish, 14}},
      {"ThresholdedRelu", {importThresholdedRelu, 10}},
      {"Sign", {importSign, 9}},
      {"IsInf", {importIsInf, 10}},
      {"Celu", {importCelu, 12}},
      {"MeanVarianceNormalization", {importMeanVarianceNormalization, 9}},
      {"EyeLike", {importEyeLike, 9}},
      {"NegativeLogLikelihoodLoss", {importNegativeLogLikelihoodLoss, 12}},
      {"ArgMax", {importArgExtreme<true>, 1}},
      {"ArgMin", {importArgExtreme<false>, 1}},
      {"Hardmax", {importHardmax, 1}},
      {"CumSum", {importCumSum, 11}},
      {"GatherElements", {importGatherElements, 11}},
      {"GatherND", {importGatherND, 11}},
      {"Resize", {importResize, 10}},
      {"ConvTranspose", {importConvTranspose, 1}},
      {"HannWindow", {importWindow, 17}},
      {"HammingWindow", {importWindow, 17}},
      {"BlackmanWindow", {importWindow, 17}},
      {"OneHot", {importOneHot, 9}},
      {"Compress", {importCompress, 9}},
      {"ReverseSequence", {importReverseSequence, 10}},
      {"LRN", {importLRN, 1}},
      {"QuantizeLinear", {importQuantizeLinear, 10}},
      {"DequantizeLinear", {importDequantizeLinear, 10}},
      {"DynamicQuantizeLinear", {importDynamicQuantizeLinear, 11}},
      {"ScatterElements", {importScatterElements, 11}},
      {"Scatter", {importScatterElements, 9}},
      {"ScatterND", {importScatterND, 11}},
      {"TopK", {importTopK, 1}},
      {"RMSNormalization", {importRMSNormalization, 23}},
      {"Upsample", {importResize, 7}},
      {"Shrink", {importShrink, 9}},
      {"PRelu", {importPRelu, 6}},
      {"Sum", {importVariadic<dnn::AddOp>, 6}},
      {"Mean", {importMean, 6}},
      {"Tile", {importTile, 6}},
      {"DepthToSpace", {importDepthToSpace, 1}},
      {"SpaceToDepth", {importSpaceToDepth, 1}},
      {"Trilu", {importTrilu, 14}},
      {"InstanceNormalization", {importInstanceNorm, 6}},
      {"Pad", {importPad, 2}},
      {"ReduceSumSquare", {importReduceComposite<ReduceKind::SumSquare>, 1}},
      {"ReduceL1", {importReduceComposite<ReduceKind::L1>, 1}},
      {"ReduceL2", {importReduceComposite<ReduceKind::L2>, 1}},
      {"ReduceLogSum", {importReduceComposite<ReduceKind::LogSum>, 1}},
      {"ReduceLogSumExp", {importReduceComposite<ReduceKind::LogSumExp>, 1}},
  };
  auto it = registry.find(opType);
  return it == registry.end() ? nullptr : &it->second;
}
