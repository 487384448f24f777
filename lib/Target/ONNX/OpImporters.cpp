//===- OpImporters.cpp - per-op ONNX handlers ---------------*- C++ -*-===//
//
// One handler per ONNX op type. Each maps the node onto normalised `dnn` ops
// (explicit broadcasts, non-negative sorted axes, explicit pads) and records
// the oldest opset whose semantics it implements.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

#include "llvm/ADT/StringSwitch.h"

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

/// Max and Min take one or more inputs.
/// Fails unless every input up to numInputs() is present.
static LogicalResult requireAllInputs(NodeImporter &n) {
  for (int i = 0; i < n.numInputs(); ++i)
    if (!n.hasInput(i))
      return n.fail("input " + Twine(i) + " is missing");
  return success();
}

template <typename OpT> static LogicalResult importVariadic(NodeImporter &n) {
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
  n.setOutput(0, acc);
  return success();
}

static LogicalResult importPow(NodeImporter &n) {
  if (failed(n.checkArity(2, 2, 1)))
    return failure();
  Value base = n.input(0), exponent = n.input(1);
  if (eltOf(exponent) != eltOf(base)) {
    auto c = n.build<dnn::CastOp>(
        RankedTensorType::get(shapeOf(exponent), eltOf(base)), exponent);
    if (failed(c))
      return failure();
    exponent = *c;
  }
  if (failed(n.broadcastPair(base, exponent)))
    return failure();
  return n.setResult(n.build<dnn::PowOp>(base.getType(), base, exponent));
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
  DenseElementsAttr s = NodeImporter::getConstant(n.input(0));
  DenseElementsAttr l = NodeImporter::getConstant(n.input(1));
  DenseElementsAttr d = NodeImporter::getConstant(n.input(2));
  if (!s || !l || !d)
    return n.fail("Range needs compile-time constant start, limit and delta");
  Type elt = s.getElementType();
  if (isa<IntegerType>(elt)) {
    int64_t start = s.getValues<APInt>()[0].getSExtValue();
    int64_t limit = l.getValues<APInt>()[0].getSExtValue();
    int64_t delta = d.getValues<APInt>()[0].getSExtValue();
    if (delta == 0)
      return n.fail("delta is zero");
    int64_t count = std::max<int64_t>(
        0, (limit - start + delta + (delta > 0 ? -1 : 1)) / delta);
    if (count > dnn::kMaxFoldElements)
      return n.fail("Range produces too many elements to fold");
    SmallVector<APInt> v;
    for (int64_t i = 0; i < count; ++i)
      v.push_back(APInt(elt.getIntOrFloatBitWidth(), start + i * delta,
                        /*isSigned=*/true, /*implicitTrunc=*/true));
    n.setOutput(0, n.constant(DenseElementsAttr::get(
                       RankedTensorType::get({count}, elt), v)));
    return success();
  }
  double start = s.getValues<APFloat>()[0].convertToDouble();
  double limit = l.getValues<APFloat>()[0].convertToDouble();
  double delta = d.getValues<APFloat>()[0].convertToDouble();
  if (delta == 0)
    return n.fail("delta is zero");
  int64_t count = std::max<int64_t>(
      0, static_cast<int64_t>(std::ceil((limit - start) / delta)));
  if (count > dnn::kMaxFoldElements)
    return n.fail("Range produces too many elements to fold");
  SmallVector<Attribute> v;
  for (int64_t i = 0; i < count; ++i)
    v.push_back(FloatAttr::get(elt, start + i * delta));
  n.setOutput(0, n.constant(DenseElementsAttr::get(
                     RankedTensorType::get({count}, elt), v)));
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
  int64_t total = product(in), known = product(shape);
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
  if (equation.find("...") != std::string::npos)
    return n.fail("einsum ellipsis ('...') is not supported");
  if (equation.find("->") == std::string::npos) {
    // Implicit output: labels that appear once, in alphabetical order.
    std::map<char, int> counts;
    for (char c : equation)
      if (std::isalpha(c))
        ++counts[c];
    equation += "->";
    for (auto [c, k] : counts)
      if (k == 1)
        equation.push_back(c);
  }
  SmallVector<Value> inputs;
  for (int i = 0; i < n.numInputs(); ++i)
    inputs.push_back(n.input(i));
  return n.setResult(n.build<dnn::EinsumOp>({}, ValueRange(inputs),
                                            n.b.getStringAttr(equation)));
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

static LogicalResult importMaxPool(NodeImporter &n) {
  auto p = readPool(n);
  if (failed(p) || failed(n.getInt("storage_order", 0)))
    return failure();
  const Window &w = p->window;
  return n.setResult(n.build<dnn::MaxPoolOp>(
      {}, p->input, n.b.getDenseI64ArrayAttr(w.kernel),
      n.b.getDenseI64ArrayAttr(w.strides), n.b.getDenseI64ArrayAttr(w.pads),
      n.b.getDenseI64ArrayAttr(w.dilations), n.b.getBoolAttr(p->ceilMode)));
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

/// Imports Reduce*; `inputSince` is the opset from which axes is an input.
template <typename OpT, int64_t InputSince>
static LogicalResult importReduce(NodeImporter &n) {
  if (failed(n.checkArity(1, n.opset >= InputSince ? 2 : 1, 1)))
    return failure();
  Value x = n.input(0);
  auto keepDims = n.getInt("keepdims", 1);
  auto noop = n.getInt("noop_with_empty_axes", 0);
  if (failed(keepDims) || failed(noop))
    return failure();
  auto axes = axesAttrOrInput(n, InputSince);
  if (failed(axes))
    return failure();
  SmallVector<int64_t> norm;
  if (*axes && !(*axes)->empty()) {
    auto v = normAxes(n, **axes, rankOf(x));
    if (failed(v))
      return failure();
    norm = *v;
  } else if (*noop) {
    n.setOutput(0, x);
    return success();
  } else {
    for (int64_t i = 0; i < rankOf(x); ++i)
      norm.push_back(i);
  }
  return n.setResult(n.build<OpT>({}, x, n.b.getDenseI64ArrayAttr(norm),
                                  n.b.getBoolAttr(*keepDims != 0)));
}

static LogicalResult importSoftmaxCrossEntropy(NodeImporter &n) {
  if (failed(n.checkArity(2, 3, 2)))
    return failure();
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
  IntegerAttr ignore;
  if (n.findAttr("ignore_index")) {
    auto v = n.getInt("ignore_index", 0);
    if (failed(v))
      return failure();
    ignore = n.b.getI64IntegerAttr(*v);
  }
  auto results = n.buildOp<dnn::SoftmaxCrossEntropyOp>(
      {}, n.input(0), n.input(1), n.hasInput(2) ? n.input(2) : Value(),
      dnn::LossReductionAttr::get(n.b.getContext(), *kind), ignore);
  if (failed(results))
    return failure();
  n.setOutput(0, (*results)[0]);
  n.setOutput(1, (*results)[1]);
  return success();
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
      {"Neg", {importUnary<dnn::NegOp>, 6}},
      {"Abs", {importUnary<dnn::AbsOp>, 6}},
      {"Not", {importUnary<dnn::NotOp>, 1}},
      {"Gelu", {importGelu, 20}},
      {"LeakyRelu", {importLeakyRelu, 6}},
      {"Add", {importBinary<dnn::AddOp>, 7}},
      {"Sub", {importBinary<dnn::SubOp>, 7}},
      {"Mul", {importBinary<dnn::MulOp>, 7}},
      {"Div", {importBinary<dnn::DivOp>, 7}},
      {"Pow", {importPow, 7}},
      {"And", {importBinary<dnn::AndOp>, 7}},
      {"Or", {importBinary<dnn::OrOp>, 7}},
      {"Xor", {importBinary<dnn::XorOp>, 7}},
      {"Max", {importVariadic<dnn::MaxOp>, 8}},
      {"Min", {importVariadic<dnn::MinOp>, 8}},
      {"Equal", {importCompare<dnn::EqualOp>, 7}},
      {"Less", {importCompare<dnn::LessOp>, 7}},
      {"LessOrEqual", {importCompare<dnn::LessEqualOp>, 12}},
      {"Greater", {importCompare<dnn::GreaterOp>, 7}},
      {"GreaterOrEqual", {importCompare<dnn::GreaterEqualOp>, 12}},
      {"IsNaN", {importIsNaN, 9}},
      {"Where", {importWhere, 9}},
      {"Cast", {importCast, 6}},
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
      {"Gemm", {importGemm, 7}},
      {"Einsum", {importEinsum, 12}},
      {"Conv", {importConv, 1}},
      {"MaxPool", {importMaxPool, 8}},
      {"AveragePool", {importAveragePool, 7}},
      {"GlobalAveragePool", {importGlobalPool<dnn::ReduceMeanOp>, 1}},
      {"GlobalMaxPool", {importGlobalPool<dnn::ReduceMaxOp>, 1}},
      // Normalisation, softmax, reductions, losses.
      {"Softmax", {importSoftmax<dnn::SoftmaxOp>, 1}},
      {"LogSoftmax", {importSoftmax<dnn::LogSoftmaxOp>, 1}},
      {"LayerNormalization", {importLayerNorm, 17}},
      {"BatchNormalization", {importBatchNorm, 9}},
      {"ReduceSum", {importReduce<dnn::ReduceSumOp, 13>, 1}},
      {"ReduceMean", {importReduce<dnn::ReduceMeanOp, 18>, 1}},
      {"ReduceMax", {importReduce<dnn::ReduceMaxOp, 18>, 1}},
      {"ReduceMin", {importReduce<dnn::ReduceMinOp, 18>, 1}},
      {"ReduceProd", {importReduce<dnn::ReduceProdOp, 18>, 1}},
      {"SoftmaxCrossEntropyLoss", {importSoftmaxCrossEntropy, 12}},
  };
  auto it = registry.find(opType);
  return it == registry.end() ? nullptr : &it->second;
}
