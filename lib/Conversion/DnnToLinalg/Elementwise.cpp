//===- Elementwise.cpp - dnn elementwise ops to linalg ----------*- C++ -*-===//
//
// Lowers `dnn.constant` to `arith.constant` and every elementwise `dnn` op
// (unary and binary arithmetic, activations, comparisons, `is_nan`,
// `select`, `cast`, `dropout`) to one `linalg.generic` on tensors with
// identity indexing maps and parallel iterators, so that
// `linalg-fuse-elementwise-ops` fuses chains of them. The scalar bodies use `arith` and `math`.
//
// `dnn` spells ONNX's unsigned integers `ui8` ... `ui64`; `arith` only works
// on signless integers. The generics keep the tensors' own element types and
// convert unsigned block arguments to signless (and signless results back)
// with `builtin.unrealized_conversion_cast` inside the body; the LLVM type
// converter maps both to the same integer type, so
// `reconcile-unrealized-casts` removes the pairs. Signedness is taken from the
// `dnn` element type: signless integers are ONNX's signed ones, `i1` is bool.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Conversion/DnnToLinalg/DnnToLinalg.h"
#include "LoweringUtils.h"
#include "dnnc/Dialect/Dnn/IR/Dnn.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

#include "llvm/Support/MathExtras.h"

#include <cmath>

#define DEBUG_TYPE "convert-dnn-to-linalg"

using namespace mlir;
using namespace dnnc;
using namespace dnnc::linalg_lowering;

//===----------------------------------------------------------------------===//
// Scalar helpers
//===----------------------------------------------------------------------===//

/// Creates a scalar signless integer constant of `type` from the low bits of
/// `value`.
static Value createIntConstant(OpBuilder &b, Location loc, Type type,
                               uint64_t value) {
  unsigned width = type.getIntOrFloatBitWidth();
  return arith::ConstantOp::create(
      b, loc,
      b.getIntegerAttr(type, APInt(width, value, /*isSigned=*/false,
                                   /*implicitTrunc=*/true)));
}

/// Creates the zero of the `dnn` element type `type`, as a signless scalar.
static Value createZero(OpBuilder &b, Location loc, Type type) {
  if (isa<FloatType>(type))
    return createFloatConstant(b, loc, type, 0.0);
  return createIntConstant(b, loc, getSignlessType(type), 0);
}

/// Converts the signless scalar `value`, holding an element of the `dnn`
/// element type `srcType`, to `dstType` with ONNX Cast semantics: float to
/// integer truncates toward zero, integers extend by the signedness of the
/// source, anything to `i1` is `x != 0`, `i1` to a number is 0 or 1. Returns
/// a signless scalar. Shared by `dnn.cast` and by the mixed-type parts of
/// other bodies (dropout's ratio).
static Value convertScalar(OpBuilder &b, Location loc, Value value,
                           Type srcType, Type dstType) {
  if (srcType == dstType)
    return value;
  Type dst = getSignlessType(dstType);
  if (dstType.isInteger(1)) {
    Value zero = createZero(b, loc, srcType);
    if (isa<FloatType>(srcType))
      return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE, value,
                                   zero);
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, value, zero);
  }
  // f64 to bfloat16 through f32, as onnxruntime converts
  // (`BFloat16(float(x))`); no target then needs __truncdfbf2.
  if (dstType.isBF16() && srcType.isF64()) {
    Type f32 = b.getF32Type();
    return convertScalar(b, loc, convertScalar(b, loc, value, srcType, f32),
                         f32, dstType);
  }
  // Bool and unsigned sources are zero-extended; signless ones are signed.
  bool srcSigned = srcType.isSignlessInteger() && !srcType.isInteger(1);
  auto srcFloat = dyn_cast<FloatType>(srcType);
  auto dstFloat = dyn_cast<FloatType>(dstType);
  if (srcFloat && dstFloat) {
    if (srcFloat.getWidth() < dstFloat.getWidth())
      return arith::ExtFOp::create(b, loc, dst, value);
    if (srcFloat.getWidth() > dstFloat.getWidth())
      return arith::TruncFOp::create(b, loc, dst, value);
    // f16 <-> bf16: through f32, which holds both exactly.
    Value wide = arith::ExtFOp::create(b, loc, b.getF32Type(), value);
    return arith::TruncFOp::create(b, loc, dst, wide);
  }
  if (srcFloat) {
    if (dstType.isUnsignedInteger())
      return arith::FPToUIOp::create(b, loc, dst, value);
    return arith::FPToSIOp::create(b, loc, dst, value);
  }
  if (dstFloat) {
    if (srcSigned)
      return arith::SIToFPOp::create(b, loc, dst, value);
    return arith::UIToFPOp::create(b, loc, dst, value);
  }
  unsigned srcWidth = srcType.getIntOrFloatBitWidth();
  unsigned dstWidth = dstType.getIntOrFloatBitWidth();
  if (srcWidth < dstWidth) {
    if (srcSigned)
      return arith::ExtSIOp::create(b, loc, dst, value);
    return arith::ExtUIOp::create(b, loc, dst, value);
  }
  if (srcWidth > dstWidth)
    return arith::TruncIOp::create(b, loc, dst, value);
  // Same width, other signedness (i8 <-> ui8): the bits are the value.
  return value;
}

/// Builds the body of an ordered comparison of two signless scalars of the
/// `dnn` element type `type`: ordered float predicates (false on NaN),
/// unsigned predicates for unsigned integers and bool, signed ones otherwise.
static Value createCompare(OpBuilder &b, Location loc, Type type,
                           arith::CmpFPredicate floatPred,
                           arith::CmpIPredicate signedPred,
                           arith::CmpIPredicate unsignedPred, Value lhs,
                           Value rhs) {
  if (isa<FloatType>(type))
    return arith::CmpFOp::create(b, loc, floatPred, lhs, rhs);
  bool isUnsigned = type.isUnsignedInteger() || type.isInteger(1);
  return arith::CmpIOp::create(b, loc, isUnsigned ? unsignedPred : signedPred,
                               lhs, rhs);
}

/// Returns the row-major linear index, as an `index`, of the current element
/// of a `linalg.generic` with parallel iterators over a tensor of `shape`
/// (built inside its body from `linalg.index`).
static Value buildLinearIndex(OpBuilder &b, Location loc,
                              ArrayRef<int64_t> shape) {
  Value linear;
  for (auto [dim, size] : llvm::enumerate(shape)) {
    Value index = linalg::IndexOp::create(b, loc, dim);
    if (!linear) {
      linear = index;
      continue;
    }
    Value sizeValue = arith::ConstantIndexOp::create(b, loc, size);
    Value scaled = arith::MulIOp::create(b, loc, linear, sizeValue);
    linear = arith::AddIOp::create(b, loc, scaled, index);
  }
  if (!linear)
    linear = arith::ConstantIndexOp::create(b, loc, 0);
  return linear;
}

//===----------------------------------------------------------------------===//
// linalg.generic builder
//===----------------------------------------------------------------------===//

/// Builds the signless scalar results of an elementwise body from the
/// signless scalar operands.
using ScalarBodyBuilder = function_ref<SmallVector<Value>(
    OpBuilder &b, Location loc, ValueRange signlessArgs)>;

/// Creates a `linalg.generic` that computes tensors of `resultTypes` (all of
/// one shape) elementwise from `inputs`: identity indexing maps for inputs of
/// the results' rank, a broadcast map for rank-0 inputs, parallel iterators,
/// `tensor.empty` inits. `bodyBuilder` sees the input elements converted to
/// signless types and returns signless results, which are converted back to
/// the result element types. The body may use `linalg.index`.
static SmallVector<Value>
buildElementwiseGeneric(OpBuilder &b, Location loc, ValueRange inputs,
                        TypeRange resultTypes, ScalarBodyBuilder bodyBuilder) {
  auto firstType = cast<RankedTensorType>(resultTypes.front());
  int64_t rank = firstType.getRank();
  MLIRContext *ctx = b.getContext();
  SmallVector<AffineMap> maps;
  for (Value input : inputs) {
    if (cast<RankedTensorType>(input.getType()).getRank() == rank)
      maps.push_back(b.getMultiDimIdentityMap(rank));
    else
      maps.push_back(AffineMap::get(rank, 0, {}, ctx));
  }
  SmallVector<Value> inits;
  for (Type type : resultTypes) {
    auto tensorType = cast<RankedTensorType>(type);
    inits.push_back(tensor::EmptyOp::create(b, loc, tensorType.getShape(),
                                            tensorType.getElementType()));
    maps.push_back(b.getMultiDimIdentityMap(rank));
  }
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, loc, resultTypes, inputs, inits, maps, iterators,
      [&](OpBuilder &nested, Location nestedLoc, ValueRange blockArgs) {
        SmallVector<Value> args;
        for (Value arg : blockArgs.take_front(inputs.size()))
          args.push_back(toSignless(nested, nestedLoc, arg));
        SmallVector<Value> results = bodyBuilder(nested, nestedLoc, args);
        SmallVector<Value> yielded;
        for (auto [result, type] : llvm::zip_equal(results, resultTypes))
          yielded.push_back(
              fromSignless(nested, nestedLoc, result,
                           cast<RankedTensorType>(type).getElementType()));
        linalg::YieldOp::create(nested, nestedLoc, yielded);
      });
  return SmallVector<Value>(generic.getResults());
}

//===----------------------------------------------------------------------===//
// Scalar bodies
//===----------------------------------------------------------------------===//

/// Signature of the scalar body of a single-result elementwise op: `args` are
/// the op's operands as signless scalars; returns the signless result.
template <typename OpTy>
using ScalarFn = Value (*)(OpBuilder &b, Location loc, OpTy op,
                           ValueRange args);

/// Returns the `dnn` element type of `value`'s tensor type.
static Type elementTypeOf(Value value) {
  return cast<RankedTensorType>(value.getType()).getElementType();
}

/// Body of a float unary op that is a single `math` op.
template <typename MathOp, typename OpTy>
static Value buildMathUnary(OpBuilder &b, Location loc, OpTy, ValueRange args) {
  return MathOp::create(b, loc, args[0]);
}

/// Body of a binary op that is one `arith` op chosen by the element type:
/// `FloatOp` for floats, `SignedOp` for signless (signed) integers and bool,
/// `UnsignedOp` for unsigned integers.
template <typename FloatOp, typename SignedOp, typename UnsignedOp,
          typename OpTy>
static Value buildArithBinary(OpBuilder &b, Location loc, OpTy op,
                              ValueRange args) {
  Type type = elementTypeOf(op.getLhs());
  if (isa<FloatType>(type))
    return FloatOp::create(b, loc, args[0], args[1]);
  if (type.isUnsignedInteger())
    return UnsignedOp::create(b, loc, args[0], args[1]);
  return SignedOp::create(b, loc, args[0], args[1]);
}

/// Body of a comparison: `FloatPred` (ordered) for floats, `SignedPred` for
/// signless integers, `UnsignedPred` for unsigned integers and bool.
template <arith::CmpFPredicate FloatPred, arith::CmpIPredicate SignedPred,
          arith::CmpIPredicate UnsignedPred, typename OpTy>
static Value buildCompare(OpBuilder &b, Location loc, OpTy op,
                          ValueRange args) {
  return createCompare(b, loc, elementTypeOf(op.getLhs()), FloatPred,
                       SignedPred, UnsignedPred, args[0], args[1]);
}

/// Returns `divisor` with the values an integer `%` traps on (0, and -1 for
/// signed types, where INT_MIN % -1 overflows) replaced by 1. Every `x % 1`
/// and `x % -1` is 0, which is the result both remainders give for these
/// divisors (division by zero: 0 by definition).
static Value buildSafeDivisor(OpBuilder &b, Location loc, Type type,
                              Value divisor) {
  Type signless = getSignlessType(type);
  Value one = createIntConstant(b, loc, signless, 1);
  Value zero = createIntConstant(b, loc, signless, 0);
  Value trap =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, divisor, zero);
  if (!type.isUnsignedInteger()) {
    Value minusOne = createIntConstant(b, loc, signless, ~uint64_t(0));
    Value isMinusOne = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                             divisor, minusOne);
    trap = arith::OrIOp::create(b, loc, trap, isMinusOne);
  }
  return arith::SelectOp::create(b, loc, trap, one, divisor);
}

/// The truncated remainder of `lhs` by `rhs` (the sign of `lhs`).
static Value buildTruncatedRem(OpBuilder &b, Location loc, Type type, Value lhs,
                               Value rhs) {
  if (isa<FloatType>(type))
    return arith::RemFOp::create(b, loc, lhs, rhs);
  Value divisor = buildSafeDivisor(b, loc, type, rhs);
  if (type.isUnsignedInteger())
    return arith::RemUIOp::create(b, loc, lhs, divisor);
  return arith::RemSIOp::create(b, loc, lhs, divisor);
}

/// `lhs - trunc(lhs / rhs) * rhs`.
static Value buildRem(OpBuilder &b, Location loc, dnn::RemOp op,
                      ValueRange args) {
  return buildTruncatedRem(b, loc, elementTypeOf(op.getLhs()), args[0],
                           args[1]);
}

/// `lhs - floor(lhs / rhs) * rhs`: the truncated remainder, plus `rhs` when
/// it is nonzero and its sign differs from `rhs`'s.
static Value buildMod(OpBuilder &b, Location loc, dnn::ModOp op,
                      ValueRange args) {
  Type type = elementTypeOf(op.getLhs());
  Value rem = buildTruncatedRem(b, loc, type, args[0], args[1]);
  if (type.isUnsignedInteger())
    return rem;
  Value zero = createZero(b, loc, type);
  auto less = [&](Value x, Value y) {
    return createCompare(b, loc, type, arith::CmpFPredicate::OLT,
                         arith::CmpIPredicate::slt, arith::CmpIPredicate::ult,
                         x, y);
  };
  Value nonzero = createCompare(b, loc, type, arith::CmpFPredicate::ONE,
                                arith::CmpIPredicate::ne,
                                arith::CmpIPredicate::ne, rem, zero);
  Value signsDiffer =
      arith::XOrIOp::create(b, loc, less(rem, zero), less(args[1], zero));
  Value adjust = arith::AndIOp::create(b, loc, nonzero, signsDiffer);
  Value adjusted =
      isa<FloatType>(type)
          ? arith::AddFOp::create(b, loc, rem, args[1]).getResult()
          : arith::AddIOp::create(b, loc, rem, args[1]).getResult();
  return arith::SelectOp::create(b, loc, adjust, adjusted, rem);
}

/// Whether the shift amount `amount` (an integer of `type`) is at least the
/// bit width, or negative when signed: shifts the `arith` ops leave poison.
static Value buildShiftOutOfRange(OpBuilder &b, Location loc, Type type,
                                  Value amount) {
  Value width = createIntConstant(b, loc, getSignlessType(type),
                                  type.getIntOrFloatBitWidth());
  // Unsigned comparison: a negative signed amount is a huge unsigned one.
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, amount,
                               width);
}

/// `lhs << rhs`, 0 for shifts by the bit width or more.
static Value buildShiftLeft(OpBuilder &b, Location loc, dnn::ShiftLeftOp op,
                            ValueRange args) {
  Type type = elementTypeOf(op.getLhs());
  Value shifted = arith::ShLIOp::create(b, loc, args[0], args[1]);
  return arith::SelectOp::create(b, loc,
                                 buildShiftOutOfRange(b, loc, type, args[1]),
                                 createZero(b, loc, type), shifted);
}

/// `lhs >> rhs`: logical for unsigned types, arithmetic for signed ones; a
/// shift by the bit width or more fills with the sign (0 when unsigned).
static Value buildShiftRight(OpBuilder &b, Location loc, dnn::ShiftRightOp op,
                             ValueRange args) {
  Type type = elementTypeOf(op.getLhs());
  Value outOfRange = buildShiftOutOfRange(b, loc, type, args[1]);
  if (type.isUnsignedInteger()) {
    Value shifted = arith::ShRUIOp::create(b, loc, args[0], args[1]);
    return arith::SelectOp::create(b, loc, outOfRange, createZero(b, loc, type),
                                   shifted);
  }
  Value maxShift = createIntConstant(b, loc, getSignlessType(type),
                                     type.getIntOrFloatBitWidth() - 1);
  Value amount = arith::SelectOp::create(b, loc, outOfRange, maxShift, args[1]);
  return arith::ShRSIOp::create(b, loc, args[0], amount);
}

/// `max(x, 0)`; NaN propagates.
static Value buildRelu(OpBuilder &b, Location loc, dnn::ReluOp,
                       ValueRange args) {
  Value zero = createZero(b, loc, args[0].getType());
  return arith::MaximumFOp::create(b, loc, args[0], zero);
}

/// `1 / (1 + exp(-x))`: saturates to 0 and 1 without NaN.
static Value buildSigmoid(OpBuilder &b, Location loc, dnn::SigmoidOp,
                          ValueRange args) {
  Type type = args[0].getType();
  Value one = createFloatConstant(b, loc, type, 1.0);
  Value neg = arith::NegFOp::create(b, loc, args[0]);
  Value exp = math::ExpOp::create(b, loc, neg);
  Value den = arith::AddFOp::create(b, loc, one, exp);
  return arith::DivFOp::create(b, loc, one, den);
}

/// `1 / x`.
static Value buildReciprocal(OpBuilder &b, Location loc, dnn::ReciprocalOp,
                             ValueRange args) {
  Value one = createFloatConstant(b, loc, args[0].getType(), 1.0);
  return arith::DivFOp::create(b, loc, one, args[0]);
}

/// `-x`; integers as `0 - x` (wrapping).
static Value buildNeg(OpBuilder &b, Location loc, dnn::NegOp, ValueRange args) {
  if (isa<FloatType>(args[0].getType()))
    return arith::NegFOp::create(b, loc, args[0]);
  Value zero = createIntConstant(b, loc, args[0].getType(), 0);
  return arith::SubIOp::create(b, loc, zero, args[0]);
}

/// `|x|`; the identity on unsigned integers.
static Value buildAbs(OpBuilder &b, Location loc, dnn::AbsOp op,
                      ValueRange args) {
  Type type = elementTypeOf(op.getInput());
  if (isa<FloatType>(type))
    return math::AbsFOp::create(b, loc, args[0]);
  if (type.isUnsignedInteger())
    return args[0];
  return math::AbsIOp::create(b, loc, args[0]);
}

/// Logical not of an `i1`.
static Value buildNot(OpBuilder &b, Location loc, dnn::NotOp, ValueRange args) {
  Value trueValue = createIntConstant(b, loc, args[0].getType(), 1);
  return arith::XOrIOp::create(b, loc, args[0], trueValue);
}

/// GELU: `0.5 * x * (1 + erf(x / sqrt(2)))`, or with the tanh approximation
/// `0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)))`.
static Value buildGelu(OpBuilder &b, Location loc, dnn::GeluOp op,
                       ValueRange args) {
  Value x = args[0];
  Type type = x.getType();
  Value inner;
  if (op.getApproximation() == dnn::GeluApproximation::Tanh) {
    Value x2 = arith::MulFOp::create(b, loc, x, x);
    Value x3 = arith::MulFOp::create(b, loc, x2, x);
    Value cubic = arith::MulFOp::create(
        b, loc, createFloatConstant(b, loc, type, 0.044715), x3);
    Value sum = arith::AddFOp::create(b, loc, x, cubic);
    Value scaled = arith::MulFOp::create(
        b, loc,
        createFloatConstant(b, loc, type,
                            std::sqrt(2.0 * llvm::numbers::inv_pi)),
        sum);
    inner = math::TanhOp::create(b, loc, scaled);
  } else {
    Value scaled = arith::MulFOp::create(
        b, loc, x, createFloatConstant(b, loc, type, llvm::numbers::inv_sqrt2));
    inner = math::ErfOp::create(b, loc, scaled);
  }
  Value onePlus = arith::AddFOp::create(
      b, loc, createFloatConstant(b, loc, type, 1.0), inner);
  Value half =
      arith::MulFOp::create(b, loc, x, createFloatConstant(b, loc, type, 0.5));
  return arith::MulFOp::create(b, loc, half, onePlus);
}

/// `x >= 0 ? x : alpha * x`; NaN stays NaN.
static Value buildLeakyRelu(OpBuilder &b, Location loc, dnn::LeakyReluOp op,
                            ValueRange args) {
  Value x = args[0];
  Type type = x.getType();
  Value zero = createZero(b, loc, type);
  Value alpha =
      createFloatConstant(b, loc, type, op.getAlpha().convertToDouble());
  Value isNonNegative =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGE, x, zero);
  Value scaled = arith::MulFOp::create(b, loc, alpha, x);
  return arith::SelectOp::create(b, loc, isNonNegative, x, scaled);
}

/// `x` unordered with itself: true exactly for NaN.
static Value buildIsNaN(OpBuilder &b, Location loc, dnn::IsNaNOp,
                        ValueRange args) {
  return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, args[0],
                               args[0]);
}

/// `condition ? on_true : on_false`.
static Value buildSelect(OpBuilder &b, Location loc, dnn::SelectOp,
                         ValueRange args) {
  return arith::SelectOp::create(b, loc, args[0], args[1], args[2]);
}

/// ONNX Cast (see `convertScalar`).
static Value buildCast(OpBuilder &b, Location loc, dnn::CastOp op,
                       ValueRange args) {
  return convertScalar(b, loc, args[0], elementTypeOf(op.getInput()),
                       elementTypeOf(op.getResult()));
}

//===----------------------------------------------------------------------===//
// Patterns
//===----------------------------------------------------------------------===//

namespace {
/// Lowers `dnn.constant` to `arith.constant` with the same elements.
struct ConstantOpLowering : public OpConversionPattern<dnn::ConstantOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(dnn::ConstantOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto constant =
        arith::ConstantOp::create(rewriter, op.getLoc(), op.getValue());
    rewriter.replaceOp(op, constant);
    return success();
  }
};

/// Lowers a single-result elementwise op to a `linalg.generic` whose body is
/// built by a `ScalarFn`.
template <typename OpTy>
struct ElementwiseOpLowering : public OpConversionPattern<OpTy> {
  /// Creates the pattern; `bodyFn` builds the scalar body.
  ElementwiseOpLowering(MLIRContext *ctx, ScalarFn<OpTy> bodyFn)
      : OpConversionPattern<OpTy>(ctx), bodyFn(bodyFn) {}

  LogicalResult
  matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    SmallVector<Value> results = buildElementwiseGeneric(
        rewriter, op.getLoc(), adaptor.getOperands(), op->getResultTypes(),
        [&](OpBuilder &b, Location loc, ValueRange args) {
          return SmallVector<Value>{bodyFn(b, loc, op, args)};
        });
    rewriter.replaceOp(op, results);
    return success();
  }

private:
  /// Builds the scalar body.
  ScalarFn<OpTy> bodyFn;
};

/// Lowers training-mode `dnn.dropout` to one `linalg.generic` producing the
/// result and the mask. Element `i` (row-major linear index) is kept iff
///
///   (splitmix64(seed + (i + 1) * 0x9E3779B97F4A7C15) >> 32)
///       >= floor(ratio * 2^32)
///
/// where `splitmix64(z)` is the SplitMix64 finalizer
///   z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9;
///   z = (z ^ (z >> 27)) * 0x94D049BB133111EB;
///   z ^ (z >> 31)
/// (all arithmetic mod 2^64), i.e. the `i`-th output of a SplitMix64
/// generator seeded with `seed`: a counter-based generator, so the mask is a
/// pure function of (seed, shape) and any tile of the tensor computes its
/// part independently. Kept elements are `x / (1 - ratio)`, dropped ones 0;
/// ratio 0 keeps everything and divides by exactly 1, so `y == x`.
struct DropoutOpLowering : public OpConversionPattern<dnn::DropoutOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(dnn::DropoutOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto inputType = cast<RankedTensorType>(op.getInput().getType());
    Type elementType = inputType.getElementType();
    Type ratioType = elementTypeOf(op.getRatio());
    uint64_t seed = op.getSeed();
    ArrayRef<int64_t> shape = inputType.getShape();
    SmallVector<Value> results = buildElementwiseGeneric(
        rewriter, op.getLoc(), {adaptor.getInput(), adaptor.getRatio()},
        op->getResultTypes(), [&](OpBuilder &b, Location loc, ValueRange args) {
          Value x = args[0], ratio = args[1];
          Type i64 = b.getI64Type();
          Value linear = buildLinearIndex(b, loc, shape);
          Value counter = arith::IndexCastUIOp::create(b, loc, i64, linear);
          // z = seed + (i + 1) * gamma, then the SplitMix64 finalizer.
          auto constant = [&](uint64_t value) {
            return createIntConstant(b, loc, i64, value);
          };
          Value next = arith::AddIOp::create(b, loc, counter, constant(1));
          // Operands are built one statement at a time: the order of
          // function arguments' evaluation differs between compilers.
          Value gamma = constant(0x9E3779B97F4A7C15ULL);
          Value step = arith::MulIOp::create(b, loc, next, gamma);
          Value z = arith::AddIOp::create(b, loc, constant(seed), step);
          auto xorShift = [&](Value v, uint64_t shift) -> Value {
            Value shifted = arith::ShRUIOp::create(b, loc, v, constant(shift));
            return arith::XOrIOp::create(b, loc, v, shifted);
          };
          Value mix1 = constant(0xBF58476D1CE4E5B9ULL);
          z = arith::MulIOp::create(b, loc, xorShift(z, 30), mix1);
          Value mix2 = constant(0x94D049BB133111EBULL);
          z = arith::MulIOp::create(b, loc, xorShift(z, 27), mix2);
          z = xorShift(z, 31);
          Value bits = arith::ShRUIOp::create(b, loc, z, constant(32));
          // threshold = floor(ratio * 2^32), computed in f64 (exact).
          Value ratio64 =
              convertScalar(b, loc, ratio, ratioType, b.getF64Type());
          Value scaledRatio = arith::MulFOp::create(
              b, loc, ratio64,
              createFloatConstant(b, loc, b.getF64Type(), 4294967296.0));
          Value threshold = arith::FPToSIOp::create(b, loc, i64, scaledRatio);
          Value keep = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge,
                                             bits, threshold);
          // y = keep ? x / (1 - ratio) : 0; 1 - ratio in the ratio's type.
          Value keepProb = arith::SubFOp::create(
              b, loc, createFloatConstant(b, loc, ratioType, 1.0), ratio);
          keepProb = convertScalar(b, loc, keepProb, ratioType, elementType);
          Value scaledX = arith::DivFOp::create(b, loc, x, keepProb);
          Value y = arith::SelectOp::create(b, loc, keep, scaledX,
                                            createZero(b, loc, elementType));
          return SmallVector<Value>{y, keep};
        });
    rewriter.replaceOp(op, results);
    return success();
  }
};
} // namespace

/// Adds the lowering of `OpTy` with scalar body `bodyFn` to `patterns`.
template <typename OpTy>
static void addElementwise(RewritePatternSet &patterns, ScalarFn<OpTy> bodyFn) {
  patterns.add<ElementwiseOpLowering<OpTy>>(patterns.getContext(), bodyFn);
}

void dnnc::populateDnnElementwiseToLinalgPatterns(RewritePatternSet &patterns) {
  using namespace dnn;
  using arith::CmpFPredicate;
  using arith::CmpIPredicate;
  patterns.add<ConstantOpLowering, DropoutOpLowering>(patterns.getContext());

  // Unary.
  addElementwise<ReluOp>(patterns, buildRelu);
  addElementwise<TanhOp>(patterns, buildMathUnary<math::TanhOp, TanhOp>);
  addElementwise<SigmoidOp>(patterns, buildSigmoid);
  addElementwise<ErfOp>(patterns, buildMathUnary<math::ErfOp, ErfOp>);
  addElementwise<ExpOp>(patterns, buildMathUnary<math::ExpOp, ExpOp>);
  addElementwise<LogOp>(patterns, buildMathUnary<math::LogOp, LogOp>);
  addElementwise<SqrtOp>(patterns, buildMathUnary<math::SqrtOp, SqrtOp>);
  addElementwise<ReciprocalOp>(patterns, buildReciprocal);
  addElementwise<FloorOp>(patterns, buildMathUnary<math::FloorOp, FloorOp>);
  addElementwise<CeilOp>(patterns, buildMathUnary<math::CeilOp, CeilOp>);
  addElementwise<RoundOp>(patterns, buildMathUnary<math::RoundEvenOp, RoundOp>);
  addElementwise<SinOp>(patterns, buildMathUnary<math::SinOp, SinOp>);
  addElementwise<CosOp>(patterns, buildMathUnary<math::CosOp, CosOp>);
  addElementwise<TanOp>(patterns, buildMathUnary<math::TanOp, TanOp>);
  addElementwise<AsinOp>(patterns, buildMathUnary<math::AsinOp, AsinOp>);
  addElementwise<AcosOp>(patterns, buildMathUnary<math::AcosOp, AcosOp>);
  addElementwise<AtanOp>(patterns, buildMathUnary<math::AtanOp, AtanOp>);
  addElementwise<SinhOp>(patterns, buildMathUnary<math::SinhOp, SinhOp>);
  addElementwise<CoshOp>(patterns, buildMathUnary<math::CoshOp, CoshOp>);
  addElementwise<AsinhOp>(patterns, buildMathUnary<math::AsinhOp, AsinhOp>);
  addElementwise<AcoshOp>(patterns, buildMathUnary<math::AcoshOp, AcoshOp>);
  addElementwise<AtanhOp>(patterns, buildMathUnary<math::AtanhOp, AtanhOp>);
  addElementwise<NegOp>(patterns, buildNeg);
  addElementwise<AbsOp>(patterns, buildAbs);
  addElementwise<NotOp>(patterns, buildNot);
  addElementwise<GeluOp>(patterns, buildGelu);
  addElementwise<LeakyReluOp>(patterns, buildLeakyRelu);

  // Binary.
  addElementwise<AddOp>(
      patterns, buildArithBinary<arith::AddFOp, arith::AddIOp, arith::AddIOp>);
  addElementwise<SubOp>(
      patterns, buildArithBinary<arith::SubFOp, arith::SubIOp, arith::SubIOp>);
  addElementwise<MulOp>(
      patterns, buildArithBinary<arith::MulFOp, arith::MulIOp, arith::MulIOp>);
  addElementwise<DivOp>(
      patterns,
      buildArithBinary<arith::DivFOp, arith::DivSIOp, arith::DivUIOp>);
  addElementwise<RemOp>(patterns, buildRem);
  addElementwise<ModOp>(patterns, buildMod);
  addElementwise<ShiftLeftOp>(patterns, buildShiftLeft);
  addElementwise<ShiftRightOp>(patterns, buildShiftRight);
  addElementwise<PowOp>(
      patterns, buildArithBinary<math::PowFOp, math::PowFOp, math::PowFOp>);
  addElementwise<MaxOp>(
      patterns,
      buildArithBinary<arith::MaximumFOp, arith::MaxSIOp, arith::MaxUIOp>);
  addElementwise<MinOp>(
      patterns,
      buildArithBinary<arith::MinimumFOp, arith::MinSIOp, arith::MinUIOp>);
  addElementwise<AndOp>(
      patterns, buildArithBinary<arith::AndIOp, arith::AndIOp, arith::AndIOp>);
  addElementwise<OrOp>(
      patterns, buildArithBinary<arith::OrIOp, arith::OrIOp, arith::OrIOp>);
  addElementwise<XorOp>(
      patterns, buildArithBinary<arith::XOrIOp, arith::XOrIOp, arith::XOrIOp>);

  // Comparisons, select, cast.
  addElementwise<EqualOp>(
      patterns,
      buildCompare<CmpFPredicate::OEQ, CmpIPredicate::eq, CmpIPredicate::eq>);
  addElementwise<LessOp>(
      patterns,
      buildCompare<CmpFPredicate::OLT, CmpIPredicate::slt, CmpIPredicate::ult>);
  addElementwise<LessEqualOp>(
      patterns,
      buildCompare<CmpFPredicate::OLE, CmpIPredicate::sle, CmpIPredicate::ule>);
  addElementwise<GreaterOp>(
      patterns,
      buildCompare<CmpFPredicate::OGT, CmpIPredicate::sgt, CmpIPredicate::ugt>);
  addElementwise<GreaterEqualOp>(
      patterns,
      buildCompare<CmpFPredicate::OGE, CmpIPredicate::sge, CmpIPredicate::uge>);
  addElementwise<IsNaNOp>(patterns, buildIsNaN);
  addElementwise<SelectOp>(patterns, buildSelect);
  addElementwise<CastOp>(patterns, buildCast);
}
