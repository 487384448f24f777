//===- Structured.cpp - dnn contractions and windows to linalg --*- C++ -*-===//
//
// Lowers `dnn.matmul`, `dnn.einsum`, `dnn.conv`, `dnn.max_pool` and
// `dnn.avg_pool` to linalg on tensors. Matrix products stay the named
// `linalg.matmul` / `linalg.batch_matmul` (the CPU backend hands them to
// BLAS); convolutions and pools use the named NC[spatial] linalg ops where
// one fits and a `linalg.generic` with the same indexing otherwise. Explicit
// padding becomes a `tensor.pad` in front of the window op.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Conversion/DnnToLinalg/DnnToLinalg.h"
#include "LoweringUtils.h"
#include "dnnc/Dialect/Dnn/IR/Dnn.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/Transforms/DialectConversion.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/Sequence.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "convert-dnn-to-linalg"

using namespace mlir;
using namespace dnnc;
using namespace dnnc::linalg_lowering;

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

/// Returns the reassociation `[[0], ..., [first, ..., first + count - 1],
/// ...]` that merges `count` dims starting at `first` of a rank-`rank` shape.
static SmallVector<ReassociationIndices>
getMergeReassociation(int64_t rank, int64_t first, int64_t count) {
  SmallVector<ReassociationIndices> reassociation;
  for (int64_t d = 0; d < first; ++d)
    reassociation.push_back({d});
  reassociation.push_back(
      llvm::to_vector(llvm::seq<int64_t>(first, first + count)));
  for (int64_t d = first + count; d < rank; ++d)
    reassociation.push_back({d});
  return reassociation;
}

/// Returns the type of `type` with dim `dim` split into `outer` x
/// `extent / outer`.
static RankedTensorType splitDim(RankedTensorType type, int64_t dim,
                                 int64_t outer) {
  SmallVector<int64_t> shape(type.getShape());
  shape[dim] /= outer;
  shape.insert(shape.begin() + dim, outer);
  return type.clone(shape);
}

/// Splits dim `dim` of `value` into `outer` x `extent / outer` with
/// `tensor.expand_shape`.
static Value expandDim(OpBuilder &b, Location loc, Value value, int64_t dim,
                       int64_t outer) {
  auto type = cast<RankedTensorType>(value.getType());
  return tensor::ExpandShapeOp::create(
      b, loc, splitDim(type, dim, outer), value,
      getMergeReassociation(type.getRank() + 1, dim, 2));
}

/// Pads the spatial dims of the NC[spatial] tensor `input` with `padValue`:
/// `padLow` at the start and, at the end, exactly what the windows of an
/// output of spatial extents `outShape` read beyond the input. That is less
/// than the explicit end pad when the last stride does not reach it, and more
/// in ceil mode, where the last window may hang over the end pad.
static Value padSpatial(OpBuilder &b, Location loc, Value input,
                        ArrayRef<int64_t> padLow, ArrayRef<int64_t> kernel,
                        ArrayRef<int64_t> strides, ArrayRef<int64_t> dilations,
                        ArrayRef<int64_t> outShape, TypedAttr padValue) {
  auto type = cast<RankedTensorType>(input.getType());
  SmallVector<int64_t> shape(type.getShape());
  SmallVector<OpFoldResult> low(type.getRank(), b.getIndexAttr(0));
  SmallVector<OpFoldResult> high(type.getRank(), b.getIndexAttr(0));
  bool needed = false;
  for (auto [i, lo] : llvm::enumerate(padLow)) {
    int64_t extent = type.getDimSize(i + 2);
    int64_t read =
        (outShape[i] - 1) * strides[i] + (kernel[i] - 1) * dilations[i] + 1;
    int64_t hi = std::max<int64_t>(0, read - extent - lo);
    low[i + 2] = b.getIndexAttr(lo);
    high[i + 2] = b.getIndexAttr(hi);
    shape[i + 2] += lo + hi;
    needed |= lo != 0 || hi != 0;
  }
  if (!needed)
    return input;
  Value padScalar = arith::ConstantOp::create(b, loc, padValue);
  return tensor::PadOp::create(b, loc, type.clone(shape), input, low, high,
                               padScalar);
}

/// Returns `parallel` parallel iterators followed by `reductions` reduction
/// iterators.
static SmallVector<utils::IteratorType> getIterators(int64_t parallel,
                                                     int64_t reductions) {
  SmallVector<utils::IteratorType> iterators(parallel,
                                             utils::IteratorType::parallel);
  iterators.append(reductions, utils::IteratorType::reduction);
  return iterators;
}

//===----------------------------------------------------------------------===//
// Matmul and einsum
//===----------------------------------------------------------------------===//

/// Builds the product of `inputs`, summed over every label missing from
/// `outputLabels`, as one `linalg.generic` into a zero-filled tensor of
/// `resultType`. `inputLabels[i]` names the dims of `inputs[i]`, one
/// character per dim. There is a loop per label: the output labels first (as
/// parallel loops), then the summed ones (reduction loops); an operand that
/// repeats a label reads a diagonal.
static Value buildContraction(OpBuilder &b, Location loc, ValueRange inputs,
                              ArrayRef<std::string> inputLabels,
                              StringRef outputLabels,
                              RankedTensorType resultType) {
  MLIRContext *ctx = b.getContext();
  SmallVector<char> labels(outputLabels.begin(), outputLabels.end());
  for (const std::string &operandLabels : inputLabels)
    for (char c : operandLabels)
      if (!llvm::is_contained(labels, c))
        labels.push_back(c);
  auto getMap = [&](StringRef operandLabels) {
    SmallVector<AffineExpr> exprs;
    for (char c : operandLabels)
      exprs.push_back(
          getAffineDimExpr(llvm::find(labels, c) - labels.begin(), ctx));
    return AffineMap::get(labels.size(), 0, exprs, ctx);
  };
  SmallVector<AffineMap> maps;
  for (const std::string &operandLabels : inputLabels)
    maps.push_back(getMap(operandLabels));
  maps.push_back(getMap(outputLabels));

  Type elementType = resultType.getElementType();
  bool isFloat = isa<FloatType>(elementType);
  Value init = createZeroTensor(b, loc, resultType);
  return linalg::GenericOp::create(
             b, loc, TypeRange{resultType}, inputs, ValueRange{init}, maps,
             getIterators(outputLabels.size(),
                          labels.size() - outputLabels.size()),
             [&](OpBuilder &b, Location loc, ValueRange args) {
               Value product = toSignless(b, loc, args[0]);
               for (Value arg : args.drop_front().drop_back()) {
                 arg = toSignless(b, loc, arg);
                 product = isFloat ? arith::MulFOp::create(b, loc, product, arg)
                                         .getResult()
                                   : arith::MulIOp::create(b, loc, product, arg)
                                         .getResult();
               }
               Value acc = toSignless(b, loc, args.back());
               Value sum =
                   isFloat
                       ? arith::AddFOp::create(b, loc, acc, product).getResult()
                       : arith::AddIOp::create(b, loc, acc, product)
                             .getResult();
               linalg::YieldOp::create(b, loc,
                                       fromSignless(b, loc, sum, elementType));
             })
      .getResult(0);
}

/// Returns `value` (a float tensor) with its elements rounded to
/// `elementType` by an elementwise `linalg.generic` (arith.truncf).
static Value truncateFloats(OpBuilder &b, Location loc, Value value,
                            Type elementType) {
  auto type = cast<RankedTensorType>(value.getType());
  auto resultType = type.clone(elementType);
  Value empty =
      tensor::EmptyOp::create(b, loc, resultType.getShape(), elementType);
  AffineMap identity = b.getMultiDimIdentityMap(type.getRank());
  SmallVector<utils::IteratorType> iterators(type.getRank(),
                                             utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             b, loc, TypeRange{resultType}, ValueRange{value},
             ValueRange{empty}, ArrayRef<AffineMap>{identity, identity},
             iterators,
             [&](OpBuilder &nested, Location nestedLoc, ValueRange args) {
               Value narrow = arith::TruncFOp::create(nested, nestedLoc,
                                                      elementType, args[0]);
               linalg::YieldOp::create(nested, nestedLoc, narrow);
             })
      .getResult(0);
}

namespace {

/// Lowers `dnn.matmul` to `linalg.matmul` (2-D, and `[B..., M, K] x [K, N]`
/// with the batch folded into M) or `linalg.batch_matmul` (shared batch dims,
/// collapsed into one), accumulating into a zero-filled init. The named ops
/// are kept so that later phases can map them to BLAS / cuBLASLt. Unsigned
/// integers, which the named ops' bodies cannot compute on, get the same
/// contraction as a `linalg.generic`.
struct MatMulOpLowering : public OpConversionPattern<dnn::MatMulOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(dnn::MatMulOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto resultType = cast<RankedTensorType>(op.getType());
    Value lhs = adaptor.getLhs(), rhs = adaptor.getRhs();
    int64_t lhsRank = cast<RankedTensorType>(lhs.getType()).getRank();
    int64_t rhsRank = cast<RankedTensorType>(rhs.getType()).getRank();
    Type elementType = resultType.getElementType();

    if (elementType.isUnsignedInteger()) {
      std::string batch;
      for (int64_t d = 0; d < lhsRank - 2; ++d)
        batch.push_back('A' + d);
      SmallVector<std::string> inputLabels = {
          batch + "mk", (rhsRank == 2 ? std::string() : batch) + "kn"};
      rewriter.replaceOp(op, buildContraction(rewriter, loc,
                                              ValueRange{lhs, rhs}, inputLabels,
                                              batch + "mn", resultType));
      return success();
    }

    // bf16 and f16 products accumulate in f32 (the named op extends its
    // inputs to the init's type), then round once (`dnnc --precision`).
    Type accumulatorType = elementType;
    if (elementType.isBF16() || elementType.isF16())
      accumulatorType = rewriter.getF32Type();
    ArrayRef<int64_t> shape = resultType.getShape();
    int64_t m = shape[lhsRank - 2], n = shape[lhsRank - 1];
    int64_t batch = 1;
    for (int64_t d : shape.drop_back(2))
      batch *= d;
    // Reassociation from the operands' (and result's) rank to the rank the
    // named op takes; empty when no reshape is needed.
    SmallVector<ReassociationIndices> reassociation;
    Value product;
    if (rhsRank == 2) {
      // [B..., M, K] x [K, N]: one GEMM of [B*M, K] x [K, N].
      if (lhsRank > 2) {
        reassociation = getMergeReassociation(lhsRank, 0, lhsRank - 1);
        lhs =
            tensor::CollapseShapeOp::create(rewriter, loc, lhs, reassociation);
      }
      auto type = RankedTensorType::get({batch * m, n}, accumulatorType);
      Value init = createZeroTensor(rewriter, loc, type);
      product = linalg::MatmulOp::create(rewriter, loc, TypeRange{type},
                                         ValueRange{lhs, rhs}, ValueRange{init})
                    .getResult(0);
    } else {
      // [B..., M, K] x [B..., K, N]: one batched GEMM over the flat batch.
      if (lhsRank > 3) {
        reassociation = getMergeReassociation(lhsRank, 0, lhsRank - 2);
        lhs =
            tensor::CollapseShapeOp::create(rewriter, loc, lhs, reassociation);
        rhs =
            tensor::CollapseShapeOp::create(rewriter, loc, rhs, reassociation);
      }
      auto type = RankedTensorType::get({batch, m, n}, accumulatorType);
      Value init = createZeroTensor(rewriter, loc, type);
      product =
          linalg::BatchMatmulOp::create(rewriter, loc, TypeRange{type},
                                        ValueRange{lhs, rhs}, ValueRange{init})
              .getResult(0);
    }
    if (accumulatorType != elementType)
      product = truncateFloats(rewriter, loc, product, elementType);
    if (!reassociation.empty())
      product = tensor::ExpandShapeOp::create(rewriter, loc, resultType,
                                              product, reassociation);
    rewriter.replaceOp(op, product);
    return success();
  }
};

/// Builds a two-operand float32/float64 einsum as a GEMM when its labels
/// sort into batch (both operands and the result), M (lhs and result), N
/// (rhs and result) and K (both operands, summed) with M, N and K non-empty:
/// each operand is transposed to `[B..., M..., K...]` / `[B..., K..., N...]`
/// and collapsed, one `linalg.matmul` or `linalg.batch_matmul` (which BLAS
/// runs) computes `[B, M, N]`, and the result is expanded and transposed to
/// the output's order. Returns null for any other einsum. The gradient of a
/// gather (`bsv,bsd->vd`, a one-hot product) is such an einsum.
static Value buildEinsumAsGemm(OpBuilder &b, Location loc, Value lhs,
                               Value rhs, StringRef lhsLabels,
                               StringRef rhsLabels, StringRef outLabels,
                               RankedTensorType resultType) {
  Type elementType = resultType.getElementType();
  if (!elementType.isF32() && !elementType.isF64())
    return nullptr;
  auto unique = [](StringRef labels) {
    return llvm::all_of(labels,
                        [&](char c) { return labels.count(c) == 1; });
  };
  if (!unique(lhsLabels) || !unique(rhsLabels))
    return nullptr;
  std::string batch, m, n, k;
  for (char c : outLabels) {
    bool inLhs = lhsLabels.contains(c), inRhs = rhsLabels.contains(c);
    if (inLhs && inRhs)
      batch.push_back(c);
    else if (inLhs)
      m.push_back(c);
    else if (inRhs)
      n.push_back(c);
    else
      return nullptr;
  }
  for (char c : lhsLabels)
    if (!outLabels.contains(c)) {
      if (!rhsLabels.contains(c))
        return nullptr; // summed in one operand only
      k.push_back(c);
    }
  for (char c : rhsLabels)
    if (!outLabels.contains(c) && !lhsLabels.contains(c))
      return nullptr;
  if (m.empty() || n.empty() || k.empty())
    return nullptr;
  // Each label's extent.
  llvm::DenseMap<char, int64_t> extent;
  auto lhsType = cast<RankedTensorType>(lhs.getType());
  auto rhsType = cast<RankedTensorType>(rhs.getType());
  for (auto [i, c] : llvm::enumerate(lhsLabels))
    extent[c] = lhsType.getDimSize(i);
  for (auto [i, c] : llvm::enumerate(rhsLabels))
    extent[c] = rhsType.getDimSize(i);
  auto product = [&](StringRef labels) {
    int64_t size = 1;
    for (char c : labels)
      size *= extent[c];
    return size;
  };
  // `value` (labels `from`) transposed to `order` and collapsed into the
  // groups `groups` (their label counts).
  auto arrange = [&](Value value, StringRef from, StringRef order,
                      ArrayRef<StringRef> groups) -> Value {
    SmallVector<int64_t> perm, shape;
    for (char c : order) {
      perm.push_back(from.find(c));
      shape.push_back(extent[c]);
    }
    if (!llvm::equal(perm, llvm::seq<int64_t>(0, perm.size()))) {
      Value init = tensor::EmptyOp::create(b, loc, shape, elementType);
      value = linalg::TransposeOp::create(b, loc, value, init, perm)
                  .getResult()[0];
    }
    SmallVector<ReassociationIndices> reassociation;
    int64_t next = 0;
    for (StringRef group : groups) {
      if (group.empty())
        continue;
      reassociation.push_back(
          llvm::to_vector(llvm::seq<int64_t>(next, next + group.size())));
      next += group.size();
    }
    if (reassociation.size() == shape.size())
      return value;
    return tensor::CollapseShapeOp::create(b, loc, value, reassociation);
  };
  Value a = arrange(lhs, lhsLabels, batch + m + k, {batch, m, k});
  Value c = arrange(rhs, rhsLabels, batch + k + n, {batch, k, n});
  SmallVector<int64_t> gemmShape;
  if (!batch.empty())
    gemmShape.push_back(product(batch));
  gemmShape.push_back(product(m));
  gemmShape.push_back(product(n));
  auto gemmType = RankedTensorType::get(gemmShape, elementType);
  Value init = createZeroTensor(b, loc, gemmType);
  Value out =
      batch.empty()
          ? linalg::MatmulOp::create(b, loc, TypeRange{gemmType},
                                     ValueRange{a, c}, ValueRange{init})
                .getResult(0)
          : linalg::BatchMatmulOp::create(b, loc, TypeRange{gemmType},
                                          ValueRange{a, c}, ValueRange{init})
                .getResult(0);
  // Back to [B..., M..., N...], then to the output's order.
  std::string order = batch + m + n;
  SmallVector<int64_t> expanded;
  for (char ch : order)
    expanded.push_back(extent[ch]);
  SmallVector<ReassociationIndices> reassociation;
  int64_t next = 0;
  for (StringRef group : {StringRef(batch), StringRef(m), StringRef(n)}) {
    if (group.empty())
      continue;
    reassociation.push_back(
        llvm::to_vector(llvm::seq<int64_t>(next, next + group.size())));
    next += group.size();
  }
  if (reassociation.size() != expanded.size())
    out = tensor::ExpandShapeOp::create(
        b, loc, RankedTensorType::get(expanded, elementType), out,
        reassociation);
  SmallVector<int64_t> perm;
  for (char ch : outLabels)
    perm.push_back(order.find(ch));
  if (!llvm::equal(perm, llvm::seq<int64_t>(0, perm.size()))) {
    Value empty =
        tensor::EmptyOp::create(b, loc, resultType.getShape(), elementType);
    out = linalg::TransposeOp::create(b, loc, out, empty, perm).getResult()[0];
  }
  return out;
}

/// Lowers `dnn.einsum` to a GEMM where it is one (buildEinsumAsGemm), else
/// to one `linalg.generic` (see buildContraction).
struct EinsumOpLowering : public OpConversionPattern<dnn::EinsumOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(dnn::EinsumOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    FailureOr<dnn::EinsumEquation> equation =
        dnn::parseEinsumEquation(op.getEquation(), nullptr);
    if (failed(equation))
      return rewriter.notifyMatchFailure(op, "malformed equation");
    auto resultType = cast<RankedTensorType>(op.getType());
    if (adaptor.getInputs().size() == 2)
      if (Value gemm = buildEinsumAsGemm(
              rewriter, op.getLoc(), adaptor.getInputs()[0],
              adaptor.getInputs()[1], equation->inputs[0],
              equation->inputs[1], equation->output, resultType)) {
        rewriter.replaceOp(op, gemm);
        return success();
      }
    rewriter.replaceOp(op, buildContraction(rewriter, op.getLoc(),
                                            adaptor.getInputs(),
                                            equation->inputs, equation->output,
                                            resultType));
    return success();
  }
};

} // namespace

//===----------------------------------------------------------------------===//
// Convolution
//===----------------------------------------------------------------------===//

/// Returns `bias` (`[M]`) broadcast to the NC[spatial] `type`: the init that
/// a convolution accumulates into.
static Value broadcastBias(OpBuilder &b, Location loc, Value bias,
                           RankedTensorType type) {
  Value empty =
      tensor::EmptyOp::create(b, loc, type.getShape(), type.getElementType());
  SmallVector<int64_t> addedDims = {0};
  llvm::append_range(addedDims, llvm::seq<int64_t>(2, type.getRank()));
  return linalg::BroadcastOp::create(b, loc, bias, empty, addedDims)
      .getResult()[0];
}

/// Builds a grouped N-d convolution as a `linalg.generic` over the loops
/// `(n, g, m, o..., c, k...)`: `input` is the padded `[N, G, C/G, D...]`,
/// `weight` `[G, M/G, C/G, K...]`, `init` `[N, G, M/G, O...]`.
static Value buildGenericConv(OpBuilder &b, Location loc, Value input,
                              Value weight, Value init,
                              ArrayRef<int64_t> strides,
                              ArrayRef<int64_t> dilations) {
  MLIRContext *ctx = b.getContext();
  int64_t numSpatial = strides.size();
  int64_t numLoops = 4 + 2 * numSpatial;
  auto dim = [&](int64_t d) { return getAffineDimExpr(d, ctx); };
  AffineExpr n = dim(0), g = dim(1), m = dim(2), c = dim(3 + numSpatial);
  SmallVector<AffineExpr> inputExprs = {n, g, c};
  SmallVector<AffineExpr> weightExprs = {g, m, c};
  SmallVector<AffineExpr> outExprs = {n, g, m};
  for (int64_t i = 0; i < numSpatial; ++i) {
    AffineExpr o = dim(3 + i), k = dim(4 + numSpatial + i);
    inputExprs.push_back(o * strides[i] + k * dilations[i]);
    weightExprs.push_back(k);
    outExprs.push_back(o);
  }
  SmallVector<AffineMap> maps = {AffineMap::get(numLoops, 0, inputExprs, ctx),
                                 AffineMap::get(numLoops, 0, weightExprs, ctx),
                                 AffineMap::get(numLoops, 0, outExprs, ctx)};
  return linalg::GenericOp::create(
             b, loc, TypeRange{init.getType()}, ValueRange{input, weight},
             ValueRange{init}, maps,
             getIterators(3 + numSpatial, 1 + numSpatial),
             [](OpBuilder &b, Location loc, ValueRange args) {
               Value product = arith::MulFOp::create(b, loc, args[0], args[1]);
               Value sum = arith::AddFOp::create(b, loc, args[2], product);
               linalg::YieldOp::create(b, loc, sum);
             })
      .getResult(0);
}

/// Builds an ungrouped NC[spatial] convolution with the named linalg op of
/// its rank (1-D to 3-D); returns null for other ranks.
static Value buildNamedConv(OpBuilder &b, Location loc, Value input,
                            Value weight, Value init, ArrayRef<int64_t> strides,
                            ArrayRef<int64_t> dilations) {
  // Keeps the type alive for the TypeRange below.
  Type resultType = init.getType();
  TypeRange resultTypes(resultType);
  SmallVector<Value> ins = {input, weight};
  Attribute stridesAttr = b.getI64TensorAttr(strides);
  Attribute dilationsAttr = b.getI64TensorAttr(dilations);
  switch (strides.size()) {
  case 1:
    return linalg::Conv1DNcwFcwOp::create(b, loc, resultTypes, ins, init,
                                          stridesAttr, dilationsAttr)
        .getResult(0);
  case 2:
    return linalg::Conv2DNchwFchwOp::create(b, loc, resultTypes, ins, init,
                                            stridesAttr, dilationsAttr)
        .getResult(0);
  case 3:
    return linalg::Conv3DNcdhwFcdhwOp::create(b, loc, resultTypes, ins, init,
                                              stridesAttr, dilationsAttr)
        .getResult(0);
  default:
    return nullptr;
  }
}

namespace {

/// Lowers `dnn.conv`: zero-pads the input (`tensor.pad`), initialises the
/// result with the broadcast bias (or zero), and convolves with
/// `linalg.conv_{1d_ncw_fcw,2d_nchw_fchw,3d_ncdhw_fcdhw}` (one group),
/// `linalg.conv_2d_ngchw_gfchw` (2-D, several groups) or a `linalg.generic`
/// (any other rank and grouping), splitting the channel dims into groups with
/// `tensor.expand_shape`.
struct ConvOpLowering : public OpConversionPattern<dnn::ConvOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(dnn::ConvOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto weightType = cast<RankedTensorType>(adaptor.getWeight().getType());
    auto resultType = cast<RankedTensorType>(op.getType());
    int64_t numSpatial = resultType.getRank() - 2;
    int64_t group = static_cast<int64_t>(op.getGroup());
    ArrayRef<int64_t> strides = op.getStrides();
    ArrayRef<int64_t> dilations = op.getDilations();

    Value input = padSpatial(
        rewriter, loc, adaptor.getInput(), op.getPads().take_front(numSpatial),
        weightType.getShape().drop_front(2), strides, dilations,
        resultType.getShape().drop_front(2),
        cast<TypedAttr>(rewriter.getZeroAttr(resultType.getElementType())));
    Value weight = adaptor.getWeight();
    Value init =
        adaptor.getBias()
            ? broadcastBias(rewriter, loc, adaptor.getBias(), resultType)
            : createZeroTensor(rewriter, loc, resultType);

    Value result;
    if (group == 1)
      result = buildNamedConv(rewriter, loc, input, weight, init, strides,
                              dilations);
    if (!result) {
      // Split channels into groups: input [N, G, C/G, ...], weight
      // [G, M/G, C/G, ...], result [N, G, M/G, ...].
      input = expandDim(rewriter, loc, input, 1, group);
      weight = expandDim(rewriter, loc, weight, 0, group);
      init = expandDim(rewriter, loc, init, 1, group);
      if (numSpatial == 2)
        result = linalg::Conv2DNgchwGfchwOp::create(
                     rewriter, loc, TypeRange{init.getType()},
                     ValueRange{input, weight}, ValueRange{init},
                     rewriter.getI64TensorAttr(strides),
                     rewriter.getI64TensorAttr(dilations))
                     .getResult(0);
      else
        result = buildGenericConv(rewriter, loc, input, weight, init, strides,
                                  dilations);
      result = tensor::CollapseShapeOp::create(
          rewriter, loc, resultType, result,
          getMergeReassociation(resultType.getRank() + 1, 1, 2));
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

namespace {
/// How a pooling window combines its elements.
enum class PoolKind { Max, Sum };
} // namespace

/// Slides a `kernel` window over the padded NC[spatial] `input` and combines
/// every window into `init` by `kind`: `linalg.pooling_{ncw,nchw}_{max,sum}`
/// for 1-D and 2-D, a `linalg.generic` over `(n, c, o..., k...)` otherwise.
/// The window extents come from a `tensor.empty` of the kernel's shape, as
/// the named ops expect.
static Value buildPooling(OpBuilder &b, Location loc, PoolKind kind,
                          Value input, Value init, ArrayRef<int64_t> kernel,
                          ArrayRef<int64_t> strides,
                          ArrayRef<int64_t> dilations) {
  auto initType = cast<RankedTensorType>(init.getType());
  Value window =
      tensor::EmptyOp::create(b, loc, kernel, initType.getElementType());
  SmallVector<Value> ins = {input, window};
  Type resultType = initType;
  TypeRange resultTypes(resultType);
  Attribute stridesAttr = b.getI64TensorAttr(strides);
  Attribute dilationsAttr = b.getI64TensorAttr(dilations);
  int64_t numSpatial = kernel.size();
  if (numSpatial == 2 && kind == PoolKind::Max)
    return linalg::PoolingNchwMaxOp::create(b, loc, resultTypes, ins, init,
                                            stridesAttr, dilationsAttr)
        .getResult(0);
  if (numSpatial == 2)
    return linalg::PoolingNchwSumOp::create(b, loc, resultTypes, ins, init,
                                            stridesAttr, dilationsAttr)
        .getResult(0);
  if (numSpatial == 1 && kind == PoolKind::Max)
    return linalg::PoolingNcwMaxOp::create(b, loc, resultTypes, ins, init,
                                           stridesAttr, dilationsAttr)
        .getResult(0);
  if (numSpatial == 1)
    return linalg::PoolingNcwSumOp::create(b, loc, resultTypes, ins, init,
                                           stridesAttr, dilationsAttr)
        .getResult(0);

  MLIRContext *ctx = b.getContext();
  int64_t numLoops = 2 + 2 * numSpatial;
  SmallVector<AffineExpr> inputExprs = {getAffineDimExpr(0, ctx),
                                        getAffineDimExpr(1, ctx)};
  SmallVector<AffineExpr> windowExprs;
  for (int64_t i = 0; i < numSpatial; ++i) {
    AffineExpr o = getAffineDimExpr(2 + i, ctx);
    AffineExpr k = getAffineDimExpr(2 + numSpatial + i, ctx);
    inputExprs.push_back(o * strides[i] + k * dilations[i]);
    windowExprs.push_back(k);
  }
  SmallVector<AffineExpr> outExprs(
      AffineMap::getMultiDimIdentityMap(numLoops, ctx)
          .getResults()
          .take_front(2 + numSpatial));
  SmallVector<AffineMap> maps = {AffineMap::get(numLoops, 0, inputExprs, ctx),
                                 AffineMap::get(numLoops, 0, windowExprs, ctx),
                                 AffineMap::get(numLoops, 0, outExprs, ctx)};
  return linalg::GenericOp::create(
             b, loc, resultTypes, ins, init, maps,
             getIterators(2 + numSpatial, numSpatial),
             [&](OpBuilder &b, Location loc, ValueRange args) {
               Value combined =
                   kind == PoolKind::Max
                       ? arith::MaximumFOp::create(b, loc, args[2], args[0])
                             .getResult()
                       : arith::AddFOp::create(b, loc, args[2], args[0])
                             .getResult();
               linalg::YieldOp::create(b, loc, combined);
             })
      .getResult(0);
}

namespace {

/// Lowers `dnn.max_pool`: pads with -inf (padding never wins), also past the
/// end pad in ceil mode, and max-pools into a -inf-filled init.
struct MaxPoolOpLowering : public OpConversionPattern<dnn::MaxPoolOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(dnn::MaxPoolOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto resultType = cast<RankedTensorType>(op.getType());
    auto elementType = cast<FloatType>(resultType.getElementType());
    int64_t numSpatial = resultType.getRank() - 2;
    TypedAttr negInf = rewriter.getFloatAttr(
        elementType,
        APFloat::getInf(elementType.getFloatSemantics(), /*Negative=*/true));
    Value input = padSpatial(rewriter, loc, adaptor.getInput(),
                             op.getPads().take_front(numSpatial),
                             op.getKernel(), op.getStrides(), op.getDilations(),
                             resultType.getShape().drop_front(2), negInf);
    Value init = createFilledTensor(rewriter, loc, resultType, negInf);
    rewriter.replaceOp(op, buildPooling(rewriter, loc, PoolKind::Max, input,
                                        init, op.getKernel(), op.getStrides(),
                                        op.getDilations()));
    return success();
  }
};

/// Lowers `dnn.avg_pool`: zero-pads, sum-pools, and divides each window sum
/// by its element count. The count follows onnxruntime: a window is clipped
/// to the input (`count_include_pad = false`) or to the input plus its
/// explicit pads (`count_include_pad = true`; the part of a ceil-mode window
/// past the end pad never counts, a floor-mode window always counts whole). Constant counts become a constant divisor;
/// otherwise the count is computed per output position from `linalg.index`.
struct AvgPoolOpLowering : public OpConversionPattern<dnn::AvgPoolOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(dnn::AvgPoolOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto inputType = cast<RankedTensorType>(adaptor.getInput().getType());
    auto resultType = cast<RankedTensorType>(op.getType());
    Type elementType = resultType.getElementType();
    int64_t numSpatial = resultType.getRank() - 2;
    ArrayRef<int64_t> kernel = op.getKernel(), strides = op.getStrides(),
                      pads = op.getPads();
    SmallVector<int64_t> dilations(numSpatial, 1);
    ArrayRef<int64_t> outShape = resultType.getShape().drop_front(2);
    bool includePad = op.getCountIncludePad();

    Value input = padSpatial(
        rewriter, loc, adaptor.getInput(), pads.take_front(numSpatial), kernel,
        strides, dilations, outShape,
        cast<TypedAttr>(rewriter.getZeroAttr(elementType)));
    Value sums = buildPooling(rewriter, loc, PoolKind::Sum, input,
                              createZeroTensor(rewriter, loc, resultType),
                              kernel, strides, dilations);

    // Window [start, end) of output position `o` along spatial dim `i`,
    // clipped to [lowLimit, highLimit). With the pads counted, onnxruntime
    // counts a floor-mode window whole even where it reaches past the end
    // pad (a span in (-stride, 0): one window), but not a ceil-mode one.
    auto getLimits = [&](int64_t i) {
      int64_t extent = inputType.getDimSize(i + 2);
      if (!includePad)
        return std::make_pair<int64_t, int64_t>(0, int64_t(extent));
      int64_t high = extent + pads[i + numSpatial];
      if (!op.getCeilMode())
        high = std::max(high,
                        (outShape[i] - 1) * strides[i] - pads[i] + kernel[i]);
      return std::make_pair(-pads[i], high);
    };
    auto getCount = [&](int64_t i, int64_t o) {
      auto [lowLimit, highLimit] = getLimits(i);
      int64_t start = o * strides[i] - pads[i];
      return std::min(start + kernel[i], highLimit) - std::max(start, lowLimit);
    };
    // Spatial dims whose count varies with the output position.
    SmallVector<int64_t> varying;
    int64_t constantCount = 1;
    for (int64_t i = 0; i < numSpatial; ++i) {
      int64_t first = getCount(i, 0);
      if (llvm::all_of(llvm::seq<int64_t>(0, outShape[i]),
                       [&](int64_t o) { return getCount(i, o) == first; }))
        constantCount *= first;
      else
        varying.push_back(i);
    }
    LLVM_DEBUG(llvm::dbgs() << "avg_pool: constant count " << constantCount
                            << ", " << varying.size() << " varying dims\n");

    auto map = rewriter.getMultiDimIdentityMap(resultType.getRank());
    Value empty = tensor::EmptyOp::create(rewriter, loc, resultType.getShape(),
                                          elementType);
    auto divide = linalg::GenericOp::create(
        rewriter, loc, TypeRange{resultType}, ValueRange{sums},
        ValueRange{empty}, SmallVector<AffineMap>{map, map},
        getIterators(resultType.getRank(), 0),
        [&](OpBuilder &b, Location loc, ValueRange args) {
          Value divisor;
          if (varying.empty()) {
            divisor = arith::ConstantOp::create(
                b, loc, b.getFloatAttr(elementType, constantCount));
          } else {
            auto indexConst = [&](int64_t v) -> Value {
              return arith::ConstantIndexOp::create(b, loc, v);
            };
            Value count;
            for (int64_t i : varying) {
              auto [lowLimit, highLimit] = getLimits(i);
              Value o = linalg::IndexOp::create(b, loc, i + 2);
              // One op per statement: the order of function arguments'
              // evaluation differs between compilers.
              Value pad = indexConst(pads[i]);
              Value stride = indexConst(strides[i]);
              Value scaled = arith::MulIOp::create(b, loc, o, stride);
              Value start = arith::SubIOp::create(b, loc, scaled, pad);
              Value high = indexConst(highLimit);
              Value size = indexConst(kernel[i]);
              Value reach = arith::AddIOp::create(b, loc, start, size);
              Value end = arith::MinSIOp::create(b, loc, reach, high);
              // With the pads counted, windows never start before -padLow.
              Value begin = includePad
                                ? start
                                : arith::MaxSIOp::create(b, loc, start,
                                                         indexConst(lowLimit))
                                      .getResult();
              Value extent = arith::SubIOp::create(b, loc, end, begin);
              count =
                  count
                      ? arith::MulIOp::create(b, loc, count, extent).getResult()
                      : extent;
            }
            if (constantCount != 1)
              count = arith::MulIOp::create(b, loc, count,
                                            indexConst(constantCount));
            Value countInt =
                arith::IndexCastOp::create(b, loc, b.getI64Type(), count);
            divisor = arith::SIToFPOp::create(b, loc, elementType, countInt);
          }
          Value avg = arith::DivFOp::create(b, loc, args[0], divisor);
          linalg::YieldOp::create(b, loc, avg);
        });
    rewriter.replaceOp(op, divide.getResult(0));
    return success();
  }
};

} // namespace

void dnnc::populateDnnStructuredToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<MatMulOpLowering, EinsumOpLowering, ConvOpLowering,
               MaxPoolOpLowering, AvgPoolOpLowering>(patterns.getContext());
}
