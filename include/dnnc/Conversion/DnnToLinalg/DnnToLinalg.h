//===- DnnToLinalg.h - dnn to linalg lowering patterns -----------*- C++ -*-===//
//
// Pattern sets of the dnn -> linalg/tensor/arith/math lowering, grouped by op
// family (one source file each).
//
//===----------------------------------------------------------------------===//

#ifndef DNNC_CONVERSION_DNNTOLINALG_DNNTOLINALG_H
#define DNNC_CONVERSION_DNNTOLINALG_DNNTOLINALG_H

#include "mlir/IR/PatternMatch.h"

namespace dnnc {

/// Elementwise ops: unary/binary arithmetic, activations, comparisons,
/// is_nan, select, cast, dropout, and `dnn.constant` (Elementwise.cpp).
void populateDnnElementwiseToLinalgPatterns(mlir::RewritePatternSet &patterns);

/// Data movement: reshape, broadcast_in_dim, transpose, concat, slice and
/// gather (DataMovement.cpp).
void populateDnnDataMovementToLinalgPatterns(
    mlir::RewritePatternSet &patterns);

/// Contractions and windows: matmul, einsum, conv, max_pool and avg_pool
/// (Structured.cpp).
void populateDnnStructuredToLinalgPatterns(mlir::RewritePatternSet &patterns);

/// Reductions and normalisations: reduce_*, softmax, log_softmax,
/// layer_norm and softmax_cross_entropy (Normalization.cpp).
void populateDnnNormalizationToLinalgPatterns(
    mlir::RewritePatternSet &patterns);

/// All of the above.
void populateDnnToLinalgPatterns(mlir::RewritePatternSet &patterns);

} // namespace dnnc

#endif // DNNC_CONVERSION_DNNTOLINALG_DNNTOLINALG_H
