//===- ApproximateMath.cpp - inline math functions for the CPU -*- C++ -*-===//
//
// Implements dnn-cpu-approximate-math: powers with constant exponents become
// products, and the f32 transcendental functions the models use become
// MLIR's polynomial approximations instead of scalar libm calls.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Target/CPU/CPUTarget.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include "llvm/ADT/StringSwitch.h"

namespace dnnc {
#define GEN_PASS_DEF_APPROXIMATEMATHPASS
#include "dnnc/Target/CPU/Passes.h.inc"
} // namespace dnnc

using namespace mlir;

/// The math ops (by name, `math.tanh`) whose f32 form is replaced by a
/// polynomial. Not the logarithms: their approximations flush denormal
/// inputs (log(1e-40) would be log(FLT_MIN)).
static bool isApproximated(StringRef name) {
  name.consume_front("math.");
  return llvm::StringSwitch<bool>(name)
      .Cases({"tanh", "exp", "expm1", "erf"}, true)
      .Default(false);
}

namespace {
struct ApproximateMathPass
    : public dnnc::impl::ApproximateMathPassBase<ApproximateMathPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateMathAlgebraicSimplificationPatterns(patterns);
    populateMathPolynomialApproximationPatterns(patterns, isApproximated);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
