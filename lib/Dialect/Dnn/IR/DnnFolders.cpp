//===- DnnFolders.cpp - constant folding of dnn ops -------------*- C++ -*-===//
//
// Folders of the `dnn` ops. They evaluate the small constant computations
// ONNX exporters emit for shapes (Shape -> Gather -> Concat -> Reshape) so
// that the importer sees static shapes, and remove no-op data movement.
// Tensors above kMaxFoldElements are never materialised.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Dialect/Dnn/IR/Dnn.h"

#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/APInt.h"
#include "llvm/ADT/APSInt.h"

using namespace mlir;
using namespace dnnc::dnn;

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

/// Returns `attr` as dense elements when it is foldable into `resultType`.
static DenseElementsAttr getFoldable(Attribute attr, ShapedType resultType) {
  auto dense = dyn_cast_or_null<DenseElementsAttr>(attr);
  if (!dense || resultType.getNumElements() > kMaxFoldElements)
    return nullptr;
  if (!dense.isSplat() && dense.getNumElements() > kMaxFoldElements)
    return nullptr;
  return dense;
}

/// Row-major strides of `shape`.
static SmallVector<int64_t> getStrides(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * shape[i + 1];
  return strides;
}

/// Builds a result by mapping each result index to a source linear index.
static DenseElementsAttr
gatherElements(DenseElementsAttr src, ShapedType resultType,
               function_ref<int64_t(ArrayRef<int64_t>)> sourceIndex) {
  if (src.isSplat())
    return src.resizeSplat(resultType);
  SmallVector<Attribute> values(src.getValues<Attribute>());
  ArrayRef<int64_t> shape = resultType.getShape();
  SmallVector<Attribute> out;
  out.reserve(resultType.getNumElements());
  SmallVector<int64_t> idx(shape.size(), 0);
  for (int64_t n = 0, e = resultType.getNumElements(); n < e; ++n) {
    out.push_back(values[sourceIndex(idx)]);
    for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
      if (++idx[d] < shape[d])
        break;
      idx[d] = 0;
    }
  }
  return DenseElementsAttr::get(resultType, out);
}

/// Combines the elements of `lhs` and `rhs` (read as `T`) pairwise with
/// `fn`; null if `fn` declines any pair.
template <typename T>
static Attribute
combineElements(DenseElementsAttr lhs, DenseElementsAttr rhs,
                ShapedType resultType,
                function_ref<std::optional<T>(const T &, const T &)> fn) {
  SmallVector<T> l(lhs.getValues<T>()), r(rhs.getValues<T>());
  SmallVector<T> out;
  for (int64_t i = 0, n = resultType.getNumElements(); i < n; ++i) {
    std::optional<T> v = fn(l[lhs.isSplat() ? 0 : i], r[rhs.isSplat() ? 0 : i]);
    if (!v)
      return nullptr;
    out.push_back(*v);
  }
  return DenseElementsAttr::get(resultType, out);
}

/// Folds an elementwise binary op on constants; `intFn`/`floatFn` return
/// nullopt when the value cannot be computed (e.g. division by zero).
static Attribute foldBinary(
    Attribute lhsAttr, Attribute rhsAttr, ShapedType resultType,
    function_ref<std::optional<APInt>(const APInt &, const APInt &)> intFn,
    function_ref<std::optional<APFloat>(const APFloat &, const APFloat &)>
        floatFn) {
  auto lhs = getFoldable(lhsAttr, resultType);
  auto rhs = getFoldable(rhsAttr, resultType);
  if (!lhs || !rhs)
    return nullptr;
  Type elt = lhs.getElementType();
  if (isa<IntegerType>(elt) && intFn)
    return combineElements<APInt>(lhs, rhs, resultType, intFn);
  if (isa<FloatType>(elt) && floatFn)
    return combineElements<APFloat>(lhs, rhs, resultType, floatFn);
  return nullptr;
}

/// Whether integers of `type` are unsigned.
static bool isUnsigned(Type type) {
  auto i = dyn_cast<IntegerType>(type);
  return i && i.isUnsigned();
}

//===----------------------------------------------------------------------===//
// Constants and elementwise ops
//===----------------------------------------------------------------------===//

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

OpFoldResult NegOp::fold(FoldAdaptor adaptor) {
  auto type = getType();
  auto in = getFoldable(adaptor.getInput(), type);
  if (!in)
    return nullptr;
  if (isa<IntegerType>(in.getElementType()))
    return in.mapValues(in.getElementType(), [](const APInt &v) { return -v; });
  return in.mapValues(in.getElementType(),
                      [](const APFloat &v) { return (-v).bitcastToAPInt(); });
}

/// The remainder of integers `a` by `b` as `dnn.rem` (truncated) or
/// `dnn.mod` (`floored`) define it: 0 for a zero divisor.
static std::optional<APInt> foldRem(const APInt &a, const APInt &b, bool uns,
                                    bool floored) {
  unsigned width = a.getBitWidth();
  if (b.isZero() || (!uns && b.isAllOnes()))
    return APInt::getZero(width);
  if (uns)
    return a.urem(b);
  APInt r = a.srem(b);
  if (floored && !r.isZero() && r.isNegative() != b.isNegative())
    r += b;
  return r;
}

/// The floating-point remainder of `a` by `b`: `fmod` (exact), plus `b` when
/// `floored` and the signs differ.
static std::optional<APFloat> foldRem(const APFloat &a, const APFloat &b,
                                      bool floored) {
  APFloat r = a;
  r.mod(b);
  if (floored && !r.isZero() && !r.isNaN() && r.isNegative() != b.isNegative())
    r.add(b, APFloat::rmNearestTiesToEven);
  return r;
}

#define DNN_FOLD_BINARY(OP, INT_EXPR, FLOAT_EXPR)                              \
  OpFoldResult OP::fold(FoldAdaptor adaptor) {                                 \
    bool uns = isUnsigned(getType().getElementType());                         \
    (void)uns;                                                                 \
    return foldBinary(                                                         \
        adaptor.getLhs(), adaptor.getRhs(), getType(),                         \
        [&](const APInt &a, const APInt &b) -> std::optional<APInt> {          \
          return INT_EXPR;                                                     \
        },                                                                     \
        [&](const APFloat &a, const APFloat &b) -> std::optional<APFloat> {    \
          return FLOAT_EXPR;                                                   \
        });                                                                    \
  }

// clang-format off
DNN_FOLD_BINARY(AddOp, a + b, a + b)
DNN_FOLD_BINARY(SubOp, a - b, a - b)
DNN_FOLD_BINARY(MulOp, a * b, a * b)
DNN_FOLD_BINARY(DivOp,
                b.isZero() ? std::optional<APInt>()
                           : std::optional<APInt>(uns ? a.udiv(b) : a.sdiv(b)),
                a / b)
DNN_FOLD_BINARY(RemOp, foldRem(a, b, uns, /*floored=*/false),
                foldRem(a, b, /*floored=*/false))
DNN_FOLD_BINARY(ModOp, foldRem(a, b, uns, /*floored=*/true),
                foldRem(a, b, /*floored=*/true))
DNN_FOLD_BINARY(ShiftLeftOp,
                b.uge(a.getBitWidth()) ? APInt::getZero(a.getBitWidth())
                                       : a.shl(b),
                std::nullopt)
DNN_FOLD_BINARY(ShiftRightOp,
                uns ? (b.uge(a.getBitWidth()) ? APInt::getZero(a.getBitWidth())
                                              : a.lshr(b))
                    : a.ashr(b.uge(a.getBitWidth()) ? a.getBitWidth() - 1
                                                    : b.getZExtValue()),
                std::nullopt)
DNN_FOLD_BINARY(MaxOp, (uns ? a.uge(b) : a.sge(b)) ? a : b, llvm::maximum(a, b))
DNN_FOLD_BINARY(MinOp, (uns ? a.ule(b) : a.sle(b)) ? a : b, llvm::minimum(a, b))
DNN_FOLD_BINARY(AndOp, a & b, std::nullopt)
DNN_FOLD_BINARY(OrOp, a | b, std::nullopt)
DNN_FOLD_BINARY(XorOp, a ^ b, std::nullopt)
// clang-format on
#undef DNN_FOLD_BINARY

/// `pow` is not folded: APFloat has no correctly rounded power function, and
/// shape computations do not use it.
OpFoldResult PowOp::fold(FoldAdaptor) { return nullptr; }

/// Folds a comparison; `pred` maps the three-way comparison of two ordered
/// elements (-1, 0 or 1) to the result. Comparisons with NaN are false.
static Attribute foldCompare(Attribute lhsAttr, Attribute rhsAttr,
                             ShapedType resultType,
                             function_ref<bool(int)> pred) {
  auto lhs = getFoldable(lhsAttr, resultType);
  auto rhs = getFoldable(rhsAttr, resultType);
  if (!lhs || !rhs)
    return nullptr;
  Type elt = lhs.getElementType();
  int64_t n = resultType.getNumElements();
  SmallVector<bool> out;
  if (auto intType = dyn_cast<IntegerType>(elt)) {
    SmallVector<APInt> l(lhs.getValues<APInt>()), r(rhs.getValues<APInt>());
    for (int64_t i = 0; i < n; ++i) {
      const APInt &a = l[lhs.isSplat() ? 0 : i], &b = r[rhs.isSplat() ? 0 : i];
      int cmp;
      if (intType.isUnsigned() || intType.getWidth() == 1)
        cmp = a.ult(b) ? -1 : (a == b ? 0 : 1);
      else
        cmp = a.slt(b) ? -1 : (a == b ? 0 : 1);
      out.push_back(pred(cmp));
    }
  } else if (isa<FloatType>(elt)) {
    SmallVector<APFloat> l(lhs.getValues<APFloat>()),
        r(rhs.getValues<APFloat>());
    for (int64_t i = 0; i < n; ++i) {
      APFloat::cmpResult c =
          l[lhs.isSplat() ? 0 : i].compare(r[rhs.isSplat() ? 0 : i]);
      // Every comparison with NaN is false.
      if (c == APFloat::cmpUnordered) {
        out.push_back(false);
        continue;
      }
      out.push_back(pred(
          c == APFloat::cmpLessThan ? -1 : (c == APFloat::cmpEqual ? 0 : 1)));
    }
  } else {
    return nullptr;
  }
  return DenseElementsAttr::get(resultType, out);
}

#define DNN_FOLD_COMPARE(OP, PRED)                                             \
  OpFoldResult OP::fold(FoldAdaptor adaptor) {                                 \
    return foldCompare(adaptor.getLhs(), adaptor.getRhs(), getType(),          \
                       [](int c) { return PRED; });                            \
  }
DNN_FOLD_COMPARE(EqualOp, c == 0)
DNN_FOLD_COMPARE(LessOp, c < 0)
DNN_FOLD_COMPARE(LessEqualOp, c <= 0)
DNN_FOLD_COMPARE(GreaterOp, c > 0)
DNN_FOLD_COMPARE(GreaterEqualOp, c >= 0)
#undef DNN_FOLD_COMPARE

OpFoldResult IsNaNOp::fold(FoldAdaptor adaptor) {
  auto in = getFoldable(adaptor.getInput(), getType());
  if (!in)
    return nullptr;
  return in.mapValues(getType().getElementType(),
                      [](const APFloat &v) { return APInt(1, v.isNaN()); });
}

OpFoldResult SelectOp::fold(FoldAdaptor adaptor) {
  if (getOnTrue() == getOnFalse())
    return getOnTrue();
  // A splat condition picks an operand: nothing is materialised, so the size
  // limit does not apply.
  if (auto splat = dyn_cast_or_null<SplatElementsAttr>(adaptor.getCondition()))
    return splat.getSplatValue<bool>() ? getOnTrue() : getOnFalse();
  auto cond = getFoldable(adaptor.getCondition(), getType());
  if (!cond)
    return nullptr;
  auto t = getFoldable(adaptor.getOnTrue(), getType());
  auto f = getFoldable(adaptor.getOnFalse(), getType());
  if (!t || !f)
    return nullptr;
  SmallVector<bool> c(cond.getValues<bool>());
  SmallVector<Attribute> tv(t.getValues<Attribute>()),
      fv(f.getValues<Attribute>()), out;
  for (int64_t i = 0, e = getType().getNumElements(); i < e; ++i)
    out.push_back(c[i] ? tv[t.isSplat() ? 0 : i] : fv[f.isSplat() ? 0 : i]);
  return DenseElementsAttr::get(getType(), out);
}

/// Converts one constant element `value` of type `from` to type `to`.
static std::optional<Attribute> castElement(Attribute value, Type from,
                                            Type to) {
  if (auto toInt = dyn_cast<IntegerType>(to)) {
    unsigned width = toInt.getWidth();
    if (auto i = dyn_cast<IntegerAttr>(value)) {
      const APInt &v = i.getValue();
      if (width == 1)
        return IntegerAttr::get(to, APInt(1, !v.isZero()));
      return IntegerAttr::get(to, isUnsigned(from) || from.isInteger(1)
                                      ? v.zextOrTrunc(width)
                                      : v.sextOrTrunc(width));
    }
    auto f = cast<FloatAttr>(value).getValue();
    if (width == 1)
      return IntegerAttr::get(to, APInt(1, !f.isZero()));
    if (f.isNaN() || f.isInfinity())
      return std::nullopt;
    // Out-of-range values are undefined in ONNX; leave them to the runtime.
    llvm::APSInt result(width, toInt.isUnsigned());
    bool exact;
    if (f.convertToInteger(result, APFloat::rmTowardZero, &exact) ==
        APFloat::opInvalidOp)
      return std::nullopt;
    return IntegerAttr::get(to, result);
  }
  auto toFloat = cast<FloatType>(to);
  if (auto i = dyn_cast<IntegerAttr>(value)) {
    APFloat f(toFloat.getFloatSemantics());
    f.convertFromAPInt(i.getValue(), !isUnsigned(from) && !from.isInteger(1),
                       APFloat::rmNearestTiesToEven);
    return FloatAttr::get(to, f);
  }
  APFloat f = cast<FloatAttr>(value).getValue();
  bool losesInfo;
  f.convert(toFloat.getFloatSemantics(), APFloat::rmNearestTiesToEven,
            &losesInfo);
  return FloatAttr::get(to, f);
}

OpFoldResult CastOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType())
    return getInput();
  auto in = getFoldable(adaptor.getInput(), getType());
  if (!in)
    return nullptr;
  Type from = in.getElementType(), to = getType().getElementType();
  SmallVector<Attribute> out;
  for (Attribute v : in.isSplat()
                         ? SmallVector<Attribute>{in.getSplatValue<Attribute>()}
                         : SmallVector<Attribute>(in.getValues<Attribute>())) {
    auto c = castElement(v, from, to);
    if (!c)
      return nullptr;
    out.push_back(*c);
  }
  if (in.isSplat())
    return SplatElementsAttr::get(getType(), out.front());
  return DenseElementsAttr::get(getType(), out);
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

OpFoldResult ReshapeOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType())
    return getInput();
  if (auto producer = getInput().getDefiningOp<ReshapeOp>()) {
    getInputMutable().assign(producer.getInput());
    return getResult();
  }
  if (auto in = getFoldable(adaptor.getInput(), getType()))
    return in.reshape(getType());
  return nullptr;
}

OpFoldResult BroadcastInDimOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType())
    return getInput();
  auto in = getFoldable(adaptor.getInput(), getType());
  if (!in ||
      (!in.isSplat() && getType().getNumElements() > kMaxBroadcastFoldElements))
    return nullptr;
  auto inType = getInput().getType();
  SmallVector<int64_t> inStrides = getStrides(inType.getShape());
  ArrayRef<int64_t> dims = getDims();
  return gatherElements(in, getType(), [&](ArrayRef<int64_t> idx) {
    int64_t linear = 0;
    for (auto [i, d] : llvm::enumerate(dims))
      if (inType.getDimSize(i) != 1)
        linear += idx[d] * inStrides[i];
    return linear;
  });
}

OpFoldResult TransposeOp::fold(FoldAdaptor adaptor) {
  ArrayRef<int64_t> perm = getPermutation();
  auto isIdentity = [](ArrayRef<int64_t> p) {
    return llvm::all_of(llvm::enumerate(p), [](auto e) {
      return static_cast<int64_t>(e.index()) == e.value();
    });
  };
  if (isIdentity(perm))
    return getInput();
  // A transpose of a transpose: one permutation (result dim i is the inner
  // input's dim inner[perm[i]]), in place.
  if (auto inner = getInput().getDefiningOp<TransposeOp>()) {
    SmallVector<int64_t> composed;
    for (int64_t p : perm)
      composed.push_back(inner.getPermutation()[p]);
    if (isIdentity(composed))
      return inner.getInput();
    getInputMutable().assign(inner.getInput());
    setPermutation(composed);
    return getResult();
  }
  auto in = getFoldable(adaptor.getInput(), getType());
  if (!in)
    return nullptr;
  SmallVector<int64_t> inStrides = getStrides(getInput().getType().getShape());
  return gatherElements(in, getType(), [&](ArrayRef<int64_t> idx) {
    int64_t linear = 0;
    for (auto [i, p] : llvm::enumerate(perm))
      linear += idx[i] * inStrides[p];
    return linear;
  });
}

OpFoldResult ConcatOp::fold(FoldAdaptor adaptor) {
  if (getInputs().size() == 1)
    return getInputs().front();
  if (getType().getNumElements() > kMaxFoldElements)
    return nullptr;
  SmallVector<DenseElementsAttr> parts;
  for (Attribute a : adaptor.getInputs()) {
    auto d = getFoldable(a, getType());
    if (!d)
      return nullptr;
    parts.push_back(d);
  }
  int64_t axis = static_cast<int64_t>(getAxis());
  ArrayRef<int64_t> shape = getType().getShape();
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d)
    outer *= shape[d];
  for (int64_t d = axis + 1; d < static_cast<int64_t>(shape.size()); ++d)
    inner *= shape[d];
  SmallVector<SmallVector<Attribute>> values;
  for (auto p : parts)
    values.emplace_back(
        p.isSplat() ? SmallVector<Attribute>(p.getType().getNumElements(),
                                             p.getSplatValue<Attribute>())
                    : SmallVector<Attribute>(p.getValues<Attribute>()));
  SmallVector<Attribute> out;
  for (int64_t o = 0; o < outer; ++o)
    for (auto [p, v] : llvm::zip(parts, values)) {
      int64_t chunk = p.getType().getDimSize(axis) * inner;
      out.append(v.begin() + o * chunk, v.begin() + (o + 1) * chunk);
    }
  return DenseElementsAttr::get(getType(), out);
}

OpFoldResult SliceOp::fold(FoldAdaptor adaptor) {
  bool identity = getInput().getType() == getType() &&
                  llvm::all_of(getStarts(), [](int64_t s) { return s == 0; }) &&
                  llvm::all_of(getSteps(), [](int64_t s) { return s == 1; });
  if (identity)
    return getInput();
  auto in = getFoldable(adaptor.getInput(), getType());
  if (!in)
    return nullptr;
  SmallVector<int64_t> inStrides = getStrides(getInput().getType().getShape());
  ArrayRef<int64_t> starts = getStarts(), steps = getSteps();
  return gatherElements(in, getType(), [&](ArrayRef<int64_t> idx) {
    int64_t linear = 0;
    for (size_t d = 0; d < idx.size(); ++d)
      linear += (starts[d] + idx[d] * steps[d]) * inStrides[d];
    return linear;
  });
}

OpFoldResult GatherOp::fold(FoldAdaptor adaptor) {
  auto data = getFoldable(adaptor.getData(), getType());
  auto indices = getFoldable(adaptor.getIndices(), getType());
  if (!data || !indices)
    return nullptr;
  auto dataType = getData().getType();
  int64_t axis = static_cast<int64_t>(getAxis());
  int64_t axisSize = dataType.getDimSize(axis);
  SmallVector<int64_t> idxValues;
  for (const APInt &v : indices.getValues<APInt>()) {
    int64_t i = v.getSExtValue();
    if (i < 0)
      i += axisSize;
    if (i < 0 || i >= axisSize)
      return nullptr; // Out-of-range indices are a runtime error, not folded.
    idxValues.push_back(i);
  }
  int64_t idxRank = getIndices().getType().getRank();
  SmallVector<int64_t> idxStrides =
      getStrides(getIndices().getType().getShape());
  SmallVector<int64_t> dataStrides = getStrides(dataType.getShape());
  return gatherElements(data, getType(), [&](ArrayRef<int64_t> idx) {
    int64_t linear = 0, gatherLinear = 0;
    for (int64_t d = 0; d < axis; ++d)
      linear += idx[d] * dataStrides[d];
    for (int64_t d = 0; d < idxRank; ++d)
      gatherLinear += idx[axis + d] * idxStrides[d];
    linear += idxValues[gatherLinear] * dataStrides[axis];
    for (int64_t d = axis + 1; d < dataType.getRank(); ++d)
      linear += idx[d + idxRank - 1] * dataStrides[d];
    return linear;
  });
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

namespace {
/// The combining step of a reduction being folded.
enum class ReduceKind { Sum, Mean, Max, Min, Prod };
} // namespace

/// Folds a reduction of a constant; returns the input for an empty axis list
/// (which reduces nothing, whatever `keep_dims` says).
template <typename OpT>
static OpFoldResult foldReduce(OpT op, Attribute inputAttr, ReduceKind kind) {
  RankedTensorType inType = op.getInput().getType();
  if (op.getAxes().empty())
    return op.getInput();
  DenseElementsAttr in = getFoldable(inputAttr, inType);
  if (!in)
    return nullptr;
  RankedTensorType resultType = op.getType();
  // Reductions over an empty extent have no accumulator to start from; an
  // empty result needs none.
  if (inType.getNumElements() == 0) {
    if (resultType.getNumElements() != 0)
      return nullptr;
    return DenseElementsAttr::get(resultType, ArrayRef<Attribute>());
  }
  Type elt = in.getElementType();
  bool isInt = isa<IntegerType>(elt);
  if (!isInt && !isa<FloatType>(elt))
    return nullptr;
  if (isInt && (kind == ReduceKind::Mean || elt.isInteger(1)))
    return nullptr;
  bool uns = isUnsigned(elt);
  ArrayRef<int64_t> axes = op.getAxes();
  ArrayRef<int64_t> shape = inType.getShape();
  // Output linear index of each input element.
  SmallVector<int64_t> outShapeKeep;
  for (int64_t d = 0; d < inType.getRank(); ++d)
    outShapeKeep.push_back(llvm::is_contained(axes, d) ? 1 : shape[d]);
  SmallVector<int64_t> outStrides = getStrides(outShapeKeep);
  int64_t outCount = resultType.getNumElements();
  int64_t groupSize = inType.getNumElements() / std::max<int64_t>(outCount, 1);
  SmallVector<int64_t> idx(shape.size(), 0);
  SmallVector<std::optional<APInt>> ints(outCount);
  SmallVector<std::optional<APFloat>> floats(outCount);
  SmallVector<Attribute> values(
      in.isSplat() ? SmallVector<Attribute>(inType.getNumElements(),
                                            in.getSplatValue<Attribute>())
                   : SmallVector<Attribute>(in.getValues<Attribute>()));
  for (int64_t n = 0, e = inType.getNumElements(); n < e; ++n) {
    int64_t o = 0;
    for (size_t d = 0; d < shape.size(); ++d)
      if (!llvm::is_contained(axes, static_cast<int64_t>(d)))
        o += idx[d] * outStrides[d];
    if (isInt) {
      APInt v = cast<IntegerAttr>(values[n]).getValue();
      auto &acc = ints[o];
      if (!acc)
        acc = v;
      else if (kind == ReduceKind::Sum)
        *acc += v;
      else if (kind == ReduceKind::Prod)
        *acc *= v;
      else if (kind == ReduceKind::Max)
        acc = (uns ? v.ugt(*acc) : v.sgt(*acc)) ? v : *acc;
      else
        acc = (uns ? v.ult(*acc) : v.slt(*acc)) ? v : *acc;
    } else {
      APFloat v = cast<FloatAttr>(values[n]).getValue();
      auto &acc = floats[o];
      if (!acc)
        acc = v;
      else if (kind == ReduceKind::Sum || kind == ReduceKind::Mean)
        *acc = *acc + v;
      else if (kind == ReduceKind::Prod)
        *acc = *acc * v;
      else if (kind == ReduceKind::Max)
        acc = llvm::maximum(*acc, v);
      else
        acc = llvm::minimum(*acc, v);
    }
    for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
      if (++idx[d] < shape[d])
        break;
      idx[d] = 0;
    }
  }
  SmallVector<Attribute> out;
  for (int64_t o = 0; o < outCount; ++o) {
    if (isInt) {
      out.push_back(IntegerAttr::get(elt, *ints[o]));
      continue;
    }
    APFloat v = *floats[o];
    if (kind == ReduceKind::Mean) {
      APFloat count(v.getSemantics());
      count.convertFromAPInt(APInt(64, groupSize), false,
                             APFloat::rmNearestTiesToEven);
      v = v / count;
    }
    out.push_back(FloatAttr::get(elt, v));
  }
  return DenseElementsAttr::get(resultType, out);
}

OpFoldResult ReduceSumOp::fold(FoldAdaptor adaptor) {
  return foldReduce(*this, adaptor.getInput(), ReduceKind::Sum);
}
OpFoldResult ReduceMeanOp::fold(FoldAdaptor adaptor) {
  return foldReduce(*this, adaptor.getInput(), ReduceKind::Mean);
}
OpFoldResult ReduceMaxOp::fold(FoldAdaptor adaptor) {
  return foldReduce(*this, adaptor.getInput(), ReduceKind::Max);
}
OpFoldResult ReduceMinOp::fold(FoldAdaptor adaptor) {
  return foldReduce(*this, adaptor.getInput(), ReduceKind::Min);
}
OpFoldResult ReduceProdOp::fold(FoldAdaptor adaptor) {
  return foldReduce(*this, adaptor.getInput(), ReduceKind::Prod);
}

namespace {
/// `transpose(matmul(a, b))` of a 2-D product whose operand is itself a
/// transpose becomes `matmul(transpose(b), transpose(a))`: the transposes
/// of the operand cancel, and the other operand is transposed instead of
/// the product. The weight gradient of a fully connected layer,
/// `transpose(matmul(transpose(x), dy))`, becomes `matmul(transpose(dy),
/// x)`: a transpose of the small activation gradient instead of one of the
/// weight-sized product.
struct SwapTransposedMatmul : public OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(TransposeOp op,
                                PatternRewriter &rewriter) const override {
    auto matmul = op.getInput().getDefiningOp<MatMulOp>();
    if (!matmul || !matmul->hasOneUse() ||
        op.getPermutation() != ArrayRef<int64_t>{1, 0})
      return failure();
    auto lhsType = cast<RankedTensorType>(matmul.getLhs().getType());
    auto rhsType = cast<RankedTensorType>(matmul.getRhs().getType());
    if (lhsType.getRank() != 2 || rhsType.getRank() != 2)
      return failure();
    auto isTranspose = [](Value v) {
      auto t = v.getDefiningOp<TransposeOp>();
      return t && t.getPermutation() == ArrayRef<int64_t>{1, 0};
    };
    if (!isTranspose(matmul.getLhs()) && !isTranspose(matmul.getRhs()))
      return failure();
    // The new ops keep the product's discardable attributes (its pipeline
    // stage, `dist.stage` and `dist.backward`).
    auto inherit = [&](Operation *created) {
      for (NamedAttribute attr : matmul->getDiscardableAttrs())
        created->setAttr(attr.getName(), attr.getValue());
    };
    auto transpose = [&](Value v) -> Value {
      auto type = cast<RankedTensorType>(v.getType());
      auto swapped = type.clone({type.getDimSize(1), type.getDimSize(0)});
      // Folds with a transpose producer (TransposeOp::fold).
      Value result = rewriter.createOrFold<TransposeOp>(
          op.getLoc(), swapped, v, rewriter.getDenseI64ArrayAttr({1, 0}));
      if (auto created = result.getDefiningOp<TransposeOp>();
          created && created.getInput() == v)
        inherit(created);
      return result;
    };
    Value lhs = transpose(matmul.getRhs());
    Value rhs = transpose(matmul.getLhs());
    inherit(
        rewriter.replaceOpWithNewOp<MatMulOp>(op, op.getType(), lhs, rhs));
    return success();
  }
};
} // namespace

void TransposeOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                              MLIRContext *context) {
  patterns.add<SwapTransposedMatmul>(context);
}
