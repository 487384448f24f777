//===- FuseElementwise.cpp - elementwise fusion for the CPU --*- C++ -*-===//
//
// Implements dnn-cpu-fuse-elementwise: upstream's elementwise fusion
// patterns with control functions that never recompute a producer and never
// turn a named contraction or convolution into a linalg.generic.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Target/CPU/CPUTarget.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#define DEBUG_TYPE "dnn-cpu-fuse-elementwise"

namespace dnnc {
#define GEN_PASS_DEF_FUSEELEMENTWISEPASS
#include "dnnc/Target/CPU/Passes.h.inc"
} // namespace dnnc

using namespace mlir;

/// Whether `op` is a named structured op that a library call implements as a
/// whole (matmuls, convolutions), which must not become a linalg.generic.
static bool isLibraryOp(Operation *op) {
  return op && isa<linalg::LinalgOp>(op) && !isa<linalg::GenericOp>(op) &&
         (isa<linalg::ContractionOpInterface>(op) ||
          isa<linalg::ConvolutionOpInterface>(op));
}

/// Fusion control: the producer of `operand` has no other use and its
/// consumer reads each of its elements exactly once, so fusing computes
/// nothing twice.
static bool fusesWithoutRecomputation(OpOperand *operand) {
  Operation *producer = operand->get().getDefiningOp();
  if (!producer || !producer->hasOneUse())
    return false;
  auto consumer = dyn_cast<linalg::LinalgOp>(operand->getOwner());
  if (!consumer)
    return true;
  return consumer.getMatchingIndexingMap(operand).isPermutation();
}

/// Reshape folding control: as upstream (a producer without other uses),
/// except that named contractions and convolutions are left alone on both
/// sides of the reshape.
static bool foldsReshape(OpOperand *operand) {
  Operation *producer = operand->get().getDefiningOp();
  if (!producer || !producer->hasOneUse())
    return false;
  return !isLibraryOp(producer) && !isLibraryOp(operand->getOwner());
}

namespace {
/// Runs the fusion patterns (the upstream pass's set) to a fixed point.
struct FuseElementwisePass
    : public dnnc::impl::FuseElementwisePassBase<FuseElementwisePass> {
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    RewritePatternSet patterns(ctx);
    linalg::populateElementwiseOpsFusionPatterns(patterns,
                                                 fusesWithoutRecomputation);
    linalg::populateFoldReshapeOpsByExpansionPatterns(patterns, foldsReshape);
    tensor::populateBubbleUpExpandShapePatterns(patterns);
    affine::AffineApplyOp::getCanonicalizationPatterns(patterns, ctx);
    linalg::GenericOp::getCanonicalizationPatterns(patterns, ctx);
    tensor::ExpandShapeOp::getCanonicalizationPatterns(patterns, ctx);
    tensor::CollapseShapeOp::getCanonicalizationPatterns(patterns, ctx);
    ctx->getLoadedDialect<linalg::LinalgDialect>()->getCanonicalizationPatterns(
        patterns);
    linalg::populateConstantFoldLinalgOperations(patterns,
                                                 fusesWithoutRecomputation);
    if (failed(applyPatternsGreedily(
            getOperation(), std::move(patterns),
            GreedyRewriteConfig().setUseTopDownTraversal())))
      LLVM_DEBUG(llvm::dbgs() << "fusion did not converge\n");
  }
};
} // namespace
