//===- Microbatches.h - Splitting a program into micro-batches --*- C++ -*-===//
//
// Part of the dnnc project.
//
//===----------------------------------------------------------------------===//
//
// The rewrite behind `dist-split-microbatches`, for callers that need it on
// a function (the planner checks that a plan survives it).
//
//===----------------------------------------------------------------------===//

#ifndef DNNC_DIALECT_DIST_TRANSFORMS_MICROBATCHES_H
#define DNNC_DIALECT_DIST_TRANSFORMS_MICROBATCHES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <string>

namespace dnnc::dist {

/// Rewrites `func` to compute one of `count` (> 1) micro-batches, as
/// `dist-split-microbatches` does (see its description in Passes.td).
/// Fails with an error naming the op when the shardings or the ops do not
/// allow it; `func` may then be partly rewritten.
mlir::LogicalResult splitMicrobatches(mlir::func::FuncOp func, int64_t count);

/// Checks, on a copy of the forward graph `func`, that its training step
/// can run per micro-batch: that no value summed over the batch and
/// depending on the weights (weight arguments and non-splat float
/// constants, standing for the parameters) meets one micro-batch's values,
/// as the batch statistics of a BatchNormalization in training mode do
/// (the one error of the split that does not depend on which of the weights
/// are trained).
/// Otherwise fails and sets `reason` to the first error
/// `dist-split-microbatches` would give. `func` is left as it is.
mlir::LogicalResult checkTrainingSplit(mlir::func::FuncOp func,
                                       std::string &reason);

} // namespace dnnc::dist

#endif // DNNC_DIALECT_DIST_TRANSFORMS_MICROBATCHES_H
