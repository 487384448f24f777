//===- Normalization.cpp - dnn reductions and norms to linalg ---*- C++ -*-===//
//
// Lowers the `dnn` reductions (`reduce_sum`, `reduce_mean`, `reduce_max`,
// `reduce_min`, `reduce_prod`), `softmax`, `log_softmax`, `layer_norm` and
// `softmax_cross_entropy` to linalg on tensors: `linalg.reduce` or
// `linalg.generic` ops with reduction iterators for the statistics,
// elementwise `linalg.generic` ops for what is computed from them, and
// `tensor.expand_shape` for kept unit dims.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Conversion/DnnToLinalg/DnnToLinalg.h"
#include "LoweringUtils.h"
#include "dnnc/Dialect/Dnn/IR/Dnn.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/Transforms/DialectConversion.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/Sequence.h"

using namespace mlir;
using namespace dnnc;
using namespace dnnc::linalg_lowering;

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

/// Returns `shape` without the dims in `dims`.
static SmallVector<int64_t> dropDims(ArrayRef<int64_t> shape,
                                     ArrayRef<int64_t> dims) {
  SmallVector<int64_t> kept;
  for (auto [d, extent] : llvm::enumerate(shape))
    if (!llvm::is_contained(dims, static_cast<int64_t>(d)))
      kept.push_back(extent);
  return kept;
}

/// Returns the map from `rank` loops to the loops not in `dims`.
static AffineMap getDroppingMap(MLIRContext *ctx, int64_t rank,
                                ArrayRef<int64_t> dims) {
  SmallVector<AffineExpr> exprs;
  for (int64_t d = 0; d < rank; ++d)
    if (!llvm::is_contained(dims, d))
      exprs.push_back(getAffineDimExpr(d, ctx));
  return AffineMap::get(rank, 0, exprs, ctx);
}

/// Returns `rank` iterators, reductions for the loops in `reduced`.
static SmallVector<utils::IteratorType>
getIterators(int64_t rank, ArrayRef<int64_t> reduced = {}) {
  SmallVector<utils::IteratorType> iterators;
  for (int64_t d = 0; d < rank; ++d)
    iterators.push_back(llvm::is_contained(reduced, d)
                            ? utils::IteratorType::reduction
                            : utils::IteratorType::parallel);
  return iterators;
}

/// Body of a linalg.generic: gets the block arguments, returns the values to
/// yield.
using BodyFn =
    function_ref<SmallVector<Value>(OpBuilder &, Location, ValueRange)>;

/// Builds a `linalg.generic` with `rank` loops, the loops in `reduced` being
/// reductions and the others parallel; `inputMaps` and `initMaps` index
/// `inputs` and `inits` from the loops, and `body` returns the values to
/// yield from the block arguments. Returns the results.
static ValueRange buildGeneric(OpBuilder &b, Location loc, ValueRange inputs,
                               ArrayRef<AffineMap> inputMaps, ValueRange inits,
                               ArrayRef<AffineMap> initMaps, int64_t rank,
                               ArrayRef<int64_t> reduced, BodyFn body) {
  SmallVector<AffineMap> maps(inputMaps);
  llvm::append_range(maps, initMaps);
  return linalg::GenericOp::create(
             b, loc, inits.getTypes(), inputs, inits, maps,
             getIterators(rank, reduced),
             [&](OpBuilder &b, Location loc, ValueRange args) {
               linalg::YieldOp::create(b, loc, body(b, loc, args));
             })
      .getResults();
}

/// Builds an elementwise `linalg.generic` producing a new tensor of
/// `resultType`; input `i` is read through `inputMaps[i]` (over the result's
/// loops).
static Value
buildMap(OpBuilder &b, Location loc, RankedTensorType resultType,
         ValueRange inputs, ArrayRef<AffineMap> inputMaps,
         function_ref<Value(OpBuilder &, Location, ValueRange)> fn) {
  Value empty = tensor::EmptyOp::create(b, loc, resultType.getShape(),
                                        resultType.getElementType());
  AffineMap identity =
      AffineMap::getMultiDimIdentityMap(resultType.getRank(), b.getContext());
  return buildGeneric(b, loc, inputs, inputMaps, empty, identity,
                      resultType.getRank(), {},
                      [&](OpBuilder &b, Location loc, ValueRange args) {
                        return SmallVector<Value>{fn(b, loc, args)};
                      })[0];
}

/// Reshapes `value` to `type`, which only adds or drops unit dims
/// (`tensor.expand_shape` / `tensor.collapse_shape`).
static Value reshapeUnitDims(OpBuilder &b, Location loc, Value value,
                             RankedTensorType type) {
  auto valueType = cast<RankedTensorType>(value.getType());
  if (valueType == type)
    return value;
  if (valueType.getRank() < type.getRank()) {
    std::optional<SmallVector<ReassociationIndices>> reassociation =
        getReassociationIndicesForReshape(valueType, type);
    assert(reassociation && "only unit dims may differ");
    return tensor::ExpandShapeOp::create(b, loc, type, value, *reassociation);
  }
  std::optional<SmallVector<ReassociationIndices>> reassociation =
      getReassociationIndicesForReshape(type, valueType);
  assert(reassociation && "only unit dims may differ");
  return tensor::CollapseShapeOp::create(b, loc, type, value, *reassociation);
}

/// Returns a float tensor type's -inf or +inf.
static TypedAttr getInfAttr(Builder &b, Type type, bool negative) {
  auto floatType = cast<FloatType>(type);
  return b.getFloatAttr(
      floatType, APFloat::getInf(floatType.getFloatSemantics(), negative));
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

namespace {
/// The combiner of a `dnn.reduce_*` op.
enum class ReduceKind { Sum, Mean, Max, Min, Prod };
} // namespace

/// Returns the identity of `kind` for `elementType` (signless integers are
/// signed, `isUnsigned` selects unsigned integer limits).
static TypedAttr getReduceInit(Builder &b, ReduceKind kind, Type elementType,
                               bool isUnsigned) {
  if (auto floatType = dyn_cast<FloatType>(elementType)) {
    switch (kind) {
    case ReduceKind::Sum:
    case ReduceKind::Mean:
      return b.getFloatAttr(floatType, 0.0);
    case ReduceKind::Prod:
      return b.getFloatAttr(floatType, 1.0);
    case ReduceKind::Max:
      return getInfAttr(b, floatType, /*negative=*/true);
    case ReduceKind::Min:
      return getInfAttr(b, floatType, /*negative=*/false);
    }
  }
  auto intType = cast<IntegerType>(elementType);
  unsigned width = intType.getWidth();
  APInt value;
  switch (kind) {
  case ReduceKind::Sum:
  case ReduceKind::Mean:
    value = APInt::getZero(width);
    break;
  case ReduceKind::Prod:
    value = APInt(width, 1);
    break;
  case ReduceKind::Max:
    value = isUnsigned ? APInt::getMinValue(width)
                       : APInt::getSignedMinValue(width);
    break;
  case ReduceKind::Min:
    value = isUnsigned ? APInt::getMaxValue(width)
                       : APInt::getSignedMaxValue(width);
    break;
  }
  return b.getIntegerAttr(intType, value);
}

/// Combines the accumulator `acc` with `value` by `kind`. Float max/min
/// propagate NaN (as numpy and onnxruntime do).
static Value buildReduceCombine(OpBuilder &b, Location loc, ReduceKind kind,
                                bool isUnsigned, Value acc, Value value) {
  bool isFloat = isa<FloatType>(acc.getType());
  switch (kind) {
  case ReduceKind::Sum:
  case ReduceKind::Mean:
    return isFloat ? arith::AddFOp::create(b, loc, acc, value).getResult()
                   : arith::AddIOp::create(b, loc, acc, value).getResult();
  case ReduceKind::Prod:
    return isFloat ? arith::MulFOp::create(b, loc, acc, value).getResult()
                   : arith::MulIOp::create(b, loc, acc, value).getResult();
  case ReduceKind::Max:
    if (isFloat)
      return arith::MaximumFOp::create(b, loc, acc, value);
    return isUnsigned ? arith::MaxUIOp::create(b, loc, acc, value).getResult()
                      : arith::MaxSIOp::create(b, loc, acc, value).getResult();
  case ReduceKind::Min:
    if (isFloat)
      return arith::MinimumFOp::create(b, loc, acc, value);
    return isUnsigned ? arith::MinUIOp::create(b, loc, acc, value).getResult()
                      : arith::MinSIOp::create(b, loc, acc, value).getResult();
  }
  llvm_unreachable("unknown reduction");
}

namespace {

/// Lowers a `dnn.reduce_*` op to a `linalg.reduce` over its axes into an init
/// holding the combiner's identity (0, 1, -inf/+inf or the integer limits);
/// `reduce_mean` then divides by the number of reduced elements (integer
/// division truncates). Unsigned integers use the unsigned arith ops on
/// signless scalars (see toSignless). `keep_dims` reinserts the
/// unit dims with `tensor.expand_shape`; an empty axis list is the identity.
template <typename OpTy, ReduceKind Kind>
struct ReduceOpLowering : public OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  using OpAdaptor = typename OpConversionPattern<OpTy>::OpAdaptor;

  LogicalResult
  matchAndRewrite(OpTy op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = adaptor.getInput();
    ArrayRef<int64_t> axes = op.getAxes();
    if (axes.empty()) {
      rewriter.replaceOp(op, input);
      return success();
    }
    auto inputType = cast<RankedTensorType>(input.getType());
    auto resultType = cast<RankedTensorType>(op.getType());
    Type elementType = inputType.getElementType();
    Type signlessType = getSignlessType(elementType);
    bool isUnsigned = elementType.isUnsignedInteger();

    auto accType = RankedTensorType::get(dropDims(inputType.getShape(), axes),
                                         elementType);
    Value init = createFilledTensor(
        rewriter, loc, accType,
        getReduceInit(rewriter, Kind, signlessType, isUnsigned));
    Value result =
        linalg::ReduceOp::create(
            rewriter, loc, ValueRange{input}, ValueRange{init}, axes,
            [&](OpBuilder &b, Location loc, ValueRange args) {
              // One statement each: argument evaluation order varies.
              Value in = toSignless(b, loc, args[0]);
              Value acc = toSignless(b, loc, args[1]);
              Value combined =
                  buildReduceCombine(b, loc, Kind, isUnsigned, acc, in);
              linalg::YieldOp::create(
                  b, loc, fromSignless(b, loc, combined, elementType));
            })
            .getResult(0);

    if (Kind == ReduceKind::Mean) {
      int64_t count = 1;
      for (int64_t axis : axes)
        count *= inputType.getDimSize(axis);
      AffineMap identity = rewriter.getMultiDimIdentityMap(accType.getRank());
      result = buildMap(
          rewriter, loc, accType, result, identity,
          [&](OpBuilder &b, Location loc, ValueRange args) -> Value {
            if (isa<FloatType>(elementType))
              return arith::DivFOp::create(
                  b, loc, args[0],
                  createFloatConstant(b, loc, elementType, count));
            Value sum = toSignless(b, loc, args[0]);
            Value divisor = arith::ConstantOp::create(
                b, loc, b.getIntegerAttr(signlessType, count));
            Value mean =
                isUnsigned
                    ? arith::DivUIOp::create(b, loc, sum, divisor).getResult()
                    : arith::DivSIOp::create(b, loc, sum, divisor).getResult();
            return fromSignless(b, loc, mean, elementType);
          });
    }
    result = reshapeUnitDims(rewriter, loc, result, resultType);
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

//===----------------------------------------------------------------------===//
// Softmax
//===----------------------------------------------------------------------===//

namespace {
/// Statistics of a numerically stable softmax along one axis: the maximum and
/// the sum of `exp(x - max)`, both with the axis dropped.
struct SoftmaxStats {
  /// Maximum along the axis.
  Value max;
  /// Sum of `exp(x - max)` along the axis.
  Value sum;
};
} // namespace

/// Computes the SoftmaxStats of `input` along `axis`: two `linalg.generic`
/// reductions, the first into -inf, the second into zero.
static SoftmaxStats buildSoftmaxStats(OpBuilder &b, Location loc, Value input,
                                      int64_t axis) {
  auto type = cast<RankedTensorType>(input.getType());
  int64_t rank = type.getRank();
  Type elementType = type.getElementType();
  auto statType =
      RankedTensorType::get(dropDims(type.getShape(), axis), elementType);
  AffineMap full = b.getMultiDimIdentityMap(rank);
  AffineMap reduced = getDroppingMap(b.getContext(), rank, axis);

  Value maxInit = createFilledTensor(
      b, loc, statType, getInfAttr(b, elementType, /*negative=*/true));
  Value max =
      buildGeneric(b, loc, input, full, maxInit, reduced, rank, axis,
                   [](OpBuilder &b, Location loc, ValueRange args) {
                     return SmallVector<Value>{
                         arith::MaximumFOp::create(b, loc, args[1], args[0])};
                   })[0];
  Value sum = buildGeneric(
      b, loc, ValueRange{input, max}, {full, reduced},
      createZeroTensor(b, loc, statType), reduced, rank, axis,
      [](OpBuilder &b, Location loc, ValueRange args) {
        Value shifted = arith::SubFOp::create(b, loc, args[0], args[1]);
        Value exp = math::ExpOp::create(b, loc, shifted);
        return SmallVector<Value>{arith::AddFOp::create(b, loc, args[2], exp)};
      })[0];
  return {max, sum};
}

/// Builds `log_softmax(input)` along `axis` as `(x - max) - log(sum)`, with
/// `log(sum)` computed once per row.
static Value buildLogSoftmax(OpBuilder &b, Location loc, Value input,
                             int64_t axis) {
  auto type = cast<RankedTensorType>(input.getType());
  SoftmaxStats stats = buildSoftmaxStats(b, loc, input, axis);
  auto statType = cast<RankedTensorType>(stats.sum.getType());
  Value logSum = buildMap(
      b, loc, statType, stats.sum, b.getMultiDimIdentityMap(statType.getRank()),
      [](OpBuilder &b, Location loc, ValueRange args) -> Value {
        return math::LogOp::create(b, loc, args[0]);
      });
  AffineMap reduced = getDroppingMap(b.getContext(), type.getRank(), axis);
  return buildMap(b, loc, type, ValueRange{input, stats.max, logSum},
                  {b.getMultiDimIdentityMap(type.getRank()), reduced, reduced},
                  [](OpBuilder &b, Location loc, ValueRange args) -> Value {
                    Value shifted =
                        arith::SubFOp::create(b, loc, args[0], args[1]);
                    return arith::SubFOp::create(b, loc, shifted, args[2]);
                  });
}

namespace {

/// Lowers `dnn.softmax` to `exp(x - max) / sum(exp(x - max))` along the axis
/// (see buildSoftmaxStats).
struct SoftmaxOpLowering : public OpConversionPattern<dnn::SoftmaxOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(dnn::SoftmaxOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = cast<RankedTensorType>(op.getType());
    int64_t axis = static_cast<int64_t>(op.getAxis());
    SoftmaxStats stats =
        buildSoftmaxStats(rewriter, loc, adaptor.getInput(), axis);
    AffineMap reduced =
        getDroppingMap(rewriter.getContext(), type.getRank(), axis);
    Value result = buildMap(
        rewriter, loc, type,
        ValueRange{adaptor.getInput(), stats.max, stats.sum},
        {rewriter.getMultiDimIdentityMap(type.getRank()), reduced, reduced},
        [](OpBuilder &b, Location loc, ValueRange args) -> Value {
          Value shifted = arith::SubFOp::create(b, loc, args[0], args[1]);
          Value exp = math::ExpOp::create(b, loc, shifted);
          return arith::DivFOp::create(b, loc, exp, args[2]);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// Lowers `dnn.log_softmax` to `(x - max) - log(sum(exp(x - max)))`.
struct LogSoftmaxOpLowering : public OpConversionPattern<dnn::LogSoftmaxOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(dnn::LogSoftmaxOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, buildLogSoftmax(rewriter, op.getLoc(),
                                           adaptor.getInput(),
                                           static_cast<int64_t>(op.getAxis())));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Layer normalisation
//===----------------------------------------------------------------------===//

/// Lowers `dnn.layer_norm` in the statistics type S (f32, or f64 for f64
/// input; narrower inputs are extended): `mean = sum(x) / n`,
/// `inv_std_dev = 1 / sqrt(sum((x - mean)^2) / n + epsilon)` (two passes, the
/// biased variance), then `y = T((x - mean) * inv_std_dev) * scale + bias`
/// in the input type T, as the ONNX function body does. `mean` and
/// `inv_std_dev` get their trailing unit dims with `tensor.expand_shape`.
struct LayerNormOpLowering : public OpConversionPattern<dnn::LayerNormOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(dnn::LayerNormOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    Value input = adaptor.getInput();
    auto type = cast<RankedTensorType>(input.getType());
    Type elementType = type.getElementType();
    auto meanType = cast<RankedTensorType>(op.getMean().getType());
    Type statElementType = meanType.getElementType();
    int64_t rank = type.getRank();
    int64_t axis = static_cast<int64_t>(op.getAxis());
    SmallVector<int64_t> normDims =
        llvm::to_vector(llvm::seq<int64_t>(axis, rank));
    int64_t count = 1;
    for (int64_t d : normDims)
      count *= type.getDimSize(d);
    auto statType = RankedTensorType::get(type.getShape().take_front(axis),
                                          statElementType);
    AffineMap full = rewriter.getMultiDimIdentityMap(rank);
    AffineMap reduced = getDroppingMap(ctx, rank, normDims);
    AffineMap statIdentity = rewriter.getMultiDimIdentityMap(axis);
    auto extend = [&](OpBuilder &b, Location loc, Value x) -> Value {
      if (x.getType() == statElementType)
        return x;
      return arith::ExtFOp::create(b, loc, statElementType, x);
    };

    Value sum = buildGeneric(rewriter, loc, input, full,
                             createZeroTensor(rewriter, loc, statType), reduced,
                             rank, normDims,
                             [&](OpBuilder &b, Location loc, ValueRange args) {
                               return SmallVector<Value>{arith::AddFOp::create(
                                   b, loc, args[1], extend(b, loc, args[0]))};
                             })[0];
    Value mean =
        buildMap(rewriter, loc, statType, sum, statIdentity,
                 [&](OpBuilder &b, Location loc, ValueRange args) -> Value {
                   return arith::DivFOp::create(
                       b, loc, args[0],
                       createFloatConstant(b, loc, statElementType, count));
                 });
    Value squares = buildGeneric(
        rewriter, loc, ValueRange{input, mean}, {full, reduced},
        createZeroTensor(rewriter, loc, statType), reduced, rank, normDims,
        [&](OpBuilder &b, Location loc, ValueRange args) {
          Value dev =
              arith::SubFOp::create(b, loc, extend(b, loc, args[0]), args[1]);
          Value square = arith::MulFOp::create(b, loc, dev, dev);
          return SmallVector<Value>{
              arith::AddFOp::create(b, loc, args[2], square)};
        })[0];
    double epsilon = op.getEpsilon().convertToDouble();
    Value invStdDev = buildMap(
        rewriter, loc, statType, squares, statIdentity,
        [&](OpBuilder &b, Location loc, ValueRange args) -> Value {
          Value var = arith::DivFOp::create(
              b, loc, args[0],
              createFloatConstant(b, loc, statElementType, count));
          Value shifted = arith::AddFOp::create(
              b, loc, var,
              createFloatConstant(b, loc, statElementType, epsilon));
          Value stdDev = math::SqrtOp::create(b, loc, shifted);
          return arith::DivFOp::create(
              b, loc, createFloatConstant(b, loc, statElementType, 1.0),
              stdDev);
        });

    SmallVector<Value> inputs = {input, mean, invStdDev, adaptor.getScale()};
    AffineMap paramMap =
        getDroppingMap(ctx, rank, llvm::to_vector(llvm::seq<int64_t>(0, axis)));
    SmallVector<AffineMap> maps = {full, reduced, reduced, paramMap};
    if (adaptor.getBias()) {
      inputs.push_back(adaptor.getBias());
      maps.push_back(paramMap);
    }
    Value y = buildMap(
        rewriter, loc, type, inputs, maps,
        [&](OpBuilder &b, Location loc, ValueRange args) -> Value {
          Value dev =
              arith::SubFOp::create(b, loc, extend(b, loc, args[0]), args[1]);
          Value normalized = arith::MulFOp::create(b, loc, dev, args[2]);
          if (normalized.getType() != elementType)
            normalized =
                arith::TruncFOp::create(b, loc, elementType, normalized);
          Value scaled = arith::MulFOp::create(b, loc, normalized, args[3]);
          if (args.size() > 5)
            scaled = arith::AddFOp::create(b, loc, scaled, args[4]);
          return scaled;
        });
    rewriter.replaceOp(op,
                       {y, reshapeUnitDims(rewriter, loc, mean, meanType),
                        reshapeUnitDims(rewriter, loc, invStdDev, meanType)});
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Softmax cross-entropy
//===----------------------------------------------------------------------===//

/// Lowers `dnn.softmax_cross_entropy` like ONNX's reference implementation:
/// `log_prob = log_softmax(scores, 1)`; per sample position `p = (n, d...)`
/// with label `l`, `w = weights[l]` (1 without weights) and
/// `loss = -log_prob[n, l, d...] * w`, both 0 where `l == ignore_index`. One
/// `linalg.generic` over the label positions gathers with `tensor.extract`
/// (the class index is clamped into range, so ignored labels never read out
/// of bounds) and either writes `loss` (`none`) or accumulates the loss and
/// weight sums into 0-d tensors (`sum`, and `mean` = loss sum / weight sum).
struct SoftmaxCrossEntropyOpLowering
    : public OpConversionPattern<dnn::SoftmaxCrossEntropyOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(dnn::SoftmaxCrossEntropyOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    Value scores = adaptor.getScores();
    Value labels = adaptor.getLabels();
    Value weights = adaptor.getWeights();
    auto scoresType = cast<RankedTensorType>(scores.getType());
    auto labelsType = cast<RankedTensorType>(labels.getType());
    Type elementType = scoresType.getElementType();
    Type labelType = labelsType.getElementType();
    int64_t numClasses = scoresType.getDimSize(1);
    int64_t rank = labelsType.getRank();
    std::optional<int64_t> ignoreIndex;
    if (std::optional<uint64_t> ignore = op.getIgnoreIndex())
      ignoreIndex = static_cast<int64_t>(*ignore);
    dnn::LossReduction reduction = op.getReduction();

    Value logProb = buildLogSoftmax(rewriter, loc, scores, /*axis=*/1);

    // Computes (loss, weight) at the current label position.
    auto lossAt = [&](OpBuilder &b, Location loc,
                      Value label) -> std::pair<Value, Value> {
      auto indexConst = [&](int64_t v) -> Value {
        return arith::ConstantIndexOp::create(b, loc, v);
      };
      Value cls = arith::IndexCastOp::create(b, loc, b.getIndexType(), label);
      cls = arith::MaxSIOp::create(b, loc, cls, indexConst(0));
      cls = arith::MinSIOp::create(b, loc, cls, indexConst(numClasses - 1));
      SmallVector<Value> indices = {linalg::IndexOp::create(b, loc, 0), cls};
      for (int64_t d = 1; d < rank; ++d)
        indices.push_back(linalg::IndexOp::create(b, loc, d));
      Value lp = tensor::ExtractOp::create(b, loc, logProb, indices);
      Value weight =
          weights ? tensor::ExtractOp::create(b, loc, weights, cls).getResult()
                  : createFloatConstant(b, loc, elementType, 1.0);
      Value loss = arith::MulFOp::create(
          b, loc, arith::NegFOp::create(b, loc, lp), weight);
      if (ignoreIndex) {
        Value ignored = arith::CmpIOp::create(
            b, loc, arith::CmpIPredicate::eq, label,
            arith::ConstantOp::create(
                b, loc, b.getIntegerAttr(labelType, *ignoreIndex)));
        Value zero = createFloatConstant(b, loc, elementType, 0.0);
        loss = arith::SelectOp::create(b, loc, ignored, zero, loss);
        weight = arith::SelectOp::create(b, loc, ignored, zero, weight);
      }
      return {loss, weight};
    };

    AffineMap identity = rewriter.getMultiDimIdentityMap(rank);
    Value loss;
    if (reduction == dnn::LossReduction::None) {
      loss = buildMap(
          rewriter, loc, cast<RankedTensorType>(op.getLoss().getType()), labels,
          identity, [&](OpBuilder &b, Location loc, ValueRange args) {
            return lossAt(b, loc, args[0]).first;
          });
    } else {
      auto scalarType = RankedTensorType::get({}, elementType);
      AffineMap toScalar = AffineMap::get(rank, 0, {}, ctx);
      SmallVector<int64_t> allDims =
          llvm::to_vector(llvm::seq<int64_t>(0, rank));
      ValueRange sums =
          buildGeneric(rewriter, loc, labels, identity,
                       ValueRange{createZeroTensor(rewriter, loc, scalarType),
                                  createZeroTensor(rewriter, loc, scalarType)},
                       {toScalar, toScalar}, rank, allDims,
                       [&](OpBuilder &b, Location loc, ValueRange args) {
                         auto [l, w] = lossAt(b, loc, args[0]);
                         return SmallVector<Value>{
                             arith::AddFOp::create(b, loc, args[1], l),
                             arith::AddFOp::create(b, loc, args[2], w)};
                       });
      loss = sums[0];
      if (reduction == dnn::LossReduction::Mean) {
        AffineMap scalarMap = AffineMap::get(0, 0, {}, ctx);
        loss =
            buildMap(rewriter, loc, scalarType, sums, {scalarMap, scalarMap},
                     [](OpBuilder &b, Location loc, ValueRange args) -> Value {
                       return arith::DivFOp::create(b, loc, args[0], args[1]);
                     });
      }
    }
    rewriter.replaceOp(op, {loss, logProb});
    return success();
  }
};

} // namespace

void dnnc::populateDnnNormalizationToLinalgPatterns(
    RewritePatternSet &patterns) {
  patterns.add<ReduceOpLowering<dnn::ReduceSumOp, ReduceKind::Sum>,
               ReduceOpLowering<dnn::ReduceMeanOp, ReduceKind::Mean>,
               ReduceOpLowering<dnn::ReduceMaxOp, ReduceKind::Max>,
               ReduceOpLowering<dnn::ReduceMinOp, ReduceKind::Min>,
               ReduceOpLowering<dnn::ReduceProdOp, ReduceKind::Prod>,
               SoftmaxOpLowering, LogSoftmaxOpLowering, LayerNormOpLowering,
               SoftmaxCrossEntropyOpLowering>(patterns.getContext());
}
