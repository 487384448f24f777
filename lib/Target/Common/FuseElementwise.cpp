//===- FuseElementwise.cpp - elementwise fusion for the CPU --*- C++ -*-===//
//
// Implements dnn-fuse-elementwise: upstream's elementwise fusion
// patterns with control functions that never recompute a producer and never
// turn a named contraction or convolution into a linalg.generic; splat
// constants of unsigned types folded into bodies as signless scalars.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Target/Common/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#define DEBUG_TYPE "dnn-fuse-elementwise"

namespace dnnc {
#define GEN_PASS_DEF_FUSEELEMENTWISEPASS
#include "dnnc/Target/Common/Passes.h.inc"
} // namespace dnnc

using namespace mlir;

/// Whether `op` is a named structured op that a library call implements as a
/// whole (matmuls, convolutions), which must not become a linalg.generic.
static bool isLibraryOp(Operation *op) {
  return op && isa<linalg::LinalgOp>(op) && !isa<linalg::GenericOp>(op) &&
         (isa<linalg::ContractionOpInterface>(op) ||
          isa<linalg::ConvolutionOpInterface>(op));
}

/// The most operations a fused body may hold. Each fusion clones both
/// bodies, so fusing a chain of N elementwise ops into one would cost N^2 / 2
/// clones, and LLVM's register allocation and scheduling grow faster than
/// linearly in a block's size; past some tens of scalar operations per
/// element the memory traffic that one more fusion saves is small next to
/// the body's own work.
static constexpr size_t kMaxFusedBodyOps = 64;

/// The number of operations in the body of the linalg op `op` (0 for others).
static size_t bodySize(Operation *op) {
  auto linalgOp = dyn_cast_or_null<linalg::LinalgOp>(op);
  if (!linalgOp || !linalgOp.getBlock())
    return 0;
  return linalgOp.getBlock()->getOperations().size();
}

/// Fusion control: the producer of `operand` has no other use and its
/// consumer reads each of its elements exactly once, so fusing computes
/// nothing twice; the fused body stays within kMaxFusedBodyOps. A producer whose body reads its own init (an accumulating
/// einsum without summed labels) is not fused either: upstream keeps its
/// result as an extra output of the fused op, and a fused reduction would
/// then write a full-rank output from inside its reduction loop (which the
/// cuda translation does not emit) for a value nothing else reads.
static bool fusesWithoutRecomputation(OpOperand *operand) {
  Operation *producer = operand->get().getDefiningOp();
  if (!producer || !producer->hasOneUse())
    return false;
  if (auto linalgProducer = dyn_cast<linalg::LinalgOp>(producer))
    for (OpOperand &init : linalgProducer.getDpsInitsMutable())
      if (linalgProducer.payloadUsesValueFromOperand(&init))
        return false;
  auto consumer = dyn_cast<linalg::LinalgOp>(operand->getOwner());
  if (!consumer)
    return true;
  if (bodySize(producer) + bodySize(consumer) > kMaxFusedBodyOps)
    return false;
  return consumer.getMatchingIndexingMap(operand).isPermutation();
}

/// Returns true if `op` only copies or broadcasts its one input (its body
/// yields the input's element, whose map drops or permutes loops): a
/// producer that costs nothing to duplicate.
static bool isBroadcast(linalg::GenericOp op) {
  if (op.getNumDpsInputs() != 1 || op.getNumDpsInits() != 1 ||
      op.getNumReductionLoops() != 0)
    return false;
  auto yield = cast<linalg::YieldOp>(op.getBlock()->getTerminator());
  auto arg = dyn_cast<BlockArgument>(yield.getOperand(0));
  return arg && arg.getOwner() == op.getBlock() && arg.getArgNumber() == 0 &&
         op.getMatchingIndexingMap(op.getDpsInputOperand(0))
             .isProjectedPermutation();
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
/// Upstream's splat-constant folding moves a splat operand into the body as
/// a scalar `arith.constant` of the element type; arith takes signless
/// integers only. An unsigned or signed scalar constant becomes the
/// signless constant and the cast back that the dnn lowering's bodies use
/// for such types.
struct SignlessScalarConstant : public OpRewritePattern<arith::ConstantOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(arith::ConstantOp op,
                                PatternRewriter &rewriter) const override {
    auto type = dyn_cast<IntegerType>(op.getType());
    auto value = dyn_cast<IntegerAttr>(op.getValue());
    if (!type || type.isSignless() || !value)
      return failure();
    auto signless = rewriter.getIntegerType(type.getWidth());
    Value constant = arith::ConstantOp::create(
        rewriter, op.getLoc(), IntegerAttr::get(signless, value.getValue()));
    rewriter.replaceOpWithNewOp<UnrealizedConversionCastOp>(op, type,
                                                            constant);
    return success();
  }
};

/// Runs the fusion patterns (the upstream pass's set) to a fixed point.
struct FuseElementwisePass
    : public dnnc::impl::FuseElementwisePassBase<FuseElementwisePass> {
  /// Gives every use of a broadcast with several uses (CSE merges the
  /// broadcasts of one scalar to one shape, e.g. an optimizer's learning
  /// rate) a copy of its own, so that each fuses into its consumer instead
  /// of being written out whole and read back.
  void untieBroadcasts() {
    SmallVector<linalg::GenericOp> shared;
    getOperation()->walk([&](linalg::GenericOp op) {
      if (!op->hasOneUse() && !op->use_empty() && isBroadcast(op))
        shared.push_back(op);
    });
    for (linalg::GenericOp op : shared) {
      // The uses by consumers it fuses into, all but one.
      SmallVector<OpOperand *> uses;
      for (OpOperand &use : op->getUses())
        if (auto consumer = dyn_cast<linalg::GenericOp>(use.getOwner()))
          if (consumer.isDpsInput(&use) &&
              consumer.getMatchingIndexingMap(&use).isPermutation())
            uses.push_back(&use);
      if (uses.size() == size_t(std::distance(op->use_begin(),
                                              op->use_end())))
        uses.erase(uses.begin());
      for (OpOperand *use : uses) {
        OpBuilder b(use->getOwner());
        Operation *init = op.getDpsInitOperand(0)->get().getDefiningOp();
        IRMapping mapping;
        if (init && isa<tensor::EmptyOp>(init))
          mapping.map(init->getResult(0), b.clone(*init)->getResult(0));
        use->set(b.clone(*op, mapping)->getResult(0));
      }
    }
  }

  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    untieBroadcasts();
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
    patterns.add<SignlessScalarConstant>(ctx);
    if (failed(applyPatternsGreedily(
            getOperation(), std::move(patterns),
            GreedyRewriteConfig().setUseTopDownTraversal())))
      LLVM_DEBUG(llvm::dbgs() << "fusion did not converge\n");
  }
};
} // namespace
