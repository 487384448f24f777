//===- DnnToLinalg.cpp - the convert-dnn-to-linalg pass -----*- C++ -*-===//
//
// Drives the dnn -> linalg patterns of the sibling files to a full
// conversion: afterwards no `dnn` op is left.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Conversion/Passes.h"
#include "dnnc/Dialect/Dnn/IR/Dnn.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

namespace dnnc {
#define GEN_PASS_DEF_CONVERTDNNTOLINALG
#include "dnnc/Conversion/Passes.h.inc"
} // namespace dnnc

using namespace mlir;

void dnnc::populateDnnToLinalgPatterns(RewritePatternSet &patterns) {
  populateDnnElementwiseToLinalgPatterns(patterns);
  populateDnnDataMovementToLinalgPatterns(patterns);
  populateDnnStructuredToLinalgPatterns(patterns);
  populateDnnNormalizationToLinalgPatterns(patterns);
}

namespace {
/// Lowers every dnn op; fails on any op without a pattern.
struct ConvertDnnToLinalg
    : public dnnc::impl::ConvertDnnToLinalgBase<ConvertDnnToLinalg> {
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    ConversionTarget target(*ctx);
    target.addIllegalDialect<dnnc::dnn::DnnDialect>();
    target.addLegalDialect<arith::ArithDialect, linalg::LinalgDialect,
                           math::MathDialect, scf::SCFDialect,
                           tensor::TensorDialect, func::FuncDialect>();
    // Elementwise bodies on unsigned tensors (`ui8`...) convert their scalars
    // to and from signless with these casts; they fold away when lowering to
    // LLVM (`reconcile-unrealized-casts`).
    target.addLegalOp<UnrealizedConversionCastOp>();
    RewritePatternSet patterns(ctx);
    dnnc::populateDnnToLinalgPatterns(patterns);
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
