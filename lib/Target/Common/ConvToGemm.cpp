//===- ConvToGemm.cpp - 2-D convolutions as im2col + GEMM ----*- C++ -*-===//
//
// Implements dnn-conv-to-gemm: linalg.conv_2d_nchw_fchw on tensors
// becomes an im2col linalg.generic and a named linalg.matmul (batch 1) or
// linalg.batch_matmul, which dnn-matmul-to-blas hands to BLAS.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Target/Common/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace dnnc {
#define GEN_PASS_DEF_CONVTOGEMMPASS
#include "dnnc/Target/Common/Passes.h.inc"
} // namespace dnnc

using namespace mlir;

/// A zero-filled tensor of `type`.
static Value createZeros(OpBuilder &b, Location loc, RankedTensorType type) {
  Value empty =
      tensor::EmptyOp::create(b, loc, type.getShape(), type.getElementType());
  Value zero = arith::ConstantOp::create(
      b, loc, cast<TypedAttr>(b.getZeroAttr(type.getElementType())));
  return linalg::FillOp::create(b, loc, zero, empty).getResult(0);
}

/// Whether `v` is a tensor filled with zeros by a linalg.fill.
static bool isZeroFill(Value v) {
  auto fill = v.getDefiningOp<linalg::FillOp>();
  return fill && (matchPattern(fill.getInputs().front(), m_AnyZeroFloat()) ||
                  matchPattern(fill.getInputs().front(), m_Zero()));
}

namespace {
/// Rewrites `out = init + conv(in, w)` (NCHW input, already padded; FCHW
/// weight) into
///
///   cols[n, c, kh, kw, oh, ow] = in[n, c, oh * sh + kh * dh, ow * sw + kw *
///   dw] prod[n] = w[M, C*KH*KW] x cols[n][C*KH*KW, OH*OW] out = init + prod
///   (only when init is not a zero fill)
struct Conv2DToGemm : public OpRewritePattern<linalg::Conv2DNchwFchwOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::Conv2DNchwFchwOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.hasPureTensorSemantics())
      return rewriter.notifyMatchFailure(op, "not on tensors");
    Value input = op.getDpsInputs()[0], weight = op.getDpsInputs()[1];
    Value init = op.getDpsInits()[0];
    auto inType = cast<RankedTensorType>(input.getType());
    auto wType = cast<RankedTensorType>(weight.getType());
    auto outType = cast<RankedTensorType>(init.getType());
    Type elt = outType.getElementType();
    if (!(elt.isF32() || elt.isF64()) || inType.getElementType() != elt ||
        wType.getElementType() != elt || !inType.hasStaticShape() ||
        !wType.hasStaticShape() || !outType.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "not a static f32/f64 conv");
    SmallVector<int64_t> strides(op.getStrides().getValues<int64_t>());
    SmallVector<int64_t> dilations(op.getDilations().getValues<int64_t>());

    MLIRContext *ctx = rewriter.getContext();
    Location loc = op.getLoc();
    int64_t n = outType.getDimSize(0), m = outType.getDimSize(1);
    int64_t oh = outType.getDimSize(2), ow = outType.getDimSize(3);
    int64_t c = wType.getDimSize(1), kh = wType.getDimSize(2),
            kw = wType.getDimSize(3);
    int64_t k = c * kh * kw, p = oh * ow;

    // im2col over the loops (n, c, kh, kw, oh, ow).
    auto dim = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
    AffineMap inMap = AffineMap::get(
        6, 0,
        {dim(0), dim(1), dim(4) * strides[0] + dim(2) * dilations[0],
         dim(5) * strides[1] + dim(3) * dilations[1]},
        ctx);
    AffineMap colsMap = AffineMap::getMultiDimIdentityMap(6, ctx);
    auto colsType = RankedTensorType::get({n, c, kh, kw, oh, ow}, elt);
    Value colsInit =
        tensor::EmptyOp::create(rewriter, loc, colsType.getShape(), elt);
    SmallVector<utils::IteratorType> parallel(6, utils::IteratorType::parallel);
    Value cols =
        linalg::GenericOp::create(
            rewriter, loc, TypeRange{colsType}, ValueRange{input},
            ValueRange{colsInit}, ArrayRef<AffineMap>{inMap, colsMap}, parallel,
            [](OpBuilder &b, Location loc, ValueRange args) {
              linalg::YieldOp::create(b, loc, args[0]);
            })
            .getResult(0);

    Value w2 = tensor::CollapseShapeOp::create(
        rewriter, loc, RankedTensorType::get({m, k}, elt), weight,
        SmallVector<ReassociationIndices>{{0}, {1, 2, 3}});
    Value product;
    if (n == 1) {
      Value cols2 = tensor::CollapseShapeOp::create(
          rewriter, loc, RankedTensorType::get({k, p}, elt), cols,
          SmallVector<ReassociationIndices>{{0, 1, 2, 3}, {4, 5}});
      auto type = RankedTensorType::get({m, p}, elt);
      product = linalg::MatmulOp::create(
                    rewriter, loc, TypeRange{type}, ValueRange{w2, cols2},
                    ValueRange{createZeros(rewriter, loc, type)})
                    .getResult(0);
      product = tensor::ExpandShapeOp::create(
          rewriter, loc, outType, product,
          SmallVector<ReassociationIndices>{{0, 1}, {2, 3}});
    } else {
      Value cols3 = tensor::CollapseShapeOp::create(
          rewriter, loc, RankedTensorType::get({n, k, p}, elt), cols,
          SmallVector<ReassociationIndices>{{0}, {1, 2, 3}, {4, 5}});
      Value wEmpty = tensor::EmptyOp::create(rewriter, loc,
                                             ArrayRef<int64_t>{n, m, k}, elt);
      Value w3 = linalg::BroadcastOp::create(rewriter, loc, w2, wEmpty,
                                             ArrayRef<int64_t>{0})
                     .getResult()[0];
      auto type = RankedTensorType::get({n, m, p}, elt);
      product = linalg::BatchMatmulOp::create(
                    rewriter, loc, TypeRange{type}, ValueRange{w3, cols3},
                    ValueRange{createZeros(rewriter, loc, type)})
                    .getResult(0);
      product = tensor::ExpandShapeOp::create(
          rewriter, loc, outType, product,
          SmallVector<ReassociationIndices>{{0}, {1}, {2, 3}});
    }

    if (!isZeroFill(init)) {
      AffineMap id = AffineMap::getMultiDimIdentityMap(4, ctx);
      Value empty =
          tensor::EmptyOp::create(rewriter, loc, outType.getShape(), elt);
      product =
          linalg::GenericOp::create(
              rewriter, loc, TypeRange{outType}, ValueRange{init, product},
              ValueRange{empty}, ArrayRef<AffineMap>{id, id, id},
              SmallVector<utils::IteratorType>(4,
                                               utils::IteratorType::parallel),
              [](OpBuilder &b, Location loc, ValueRange args) {
                Value sum = arith::AddFOp::create(b, loc, args[0], args[1]);
                linalg::YieldOp::create(b, loc, sum);
              })
              .getResult(0);
    }
    rewriter.replaceOp(op, product);
    return success();
  }
};

struct ConvToGemmPass : public dnnc::impl::ConvToGemmPassBase<ConvToGemmPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<Conv2DToGemm>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
