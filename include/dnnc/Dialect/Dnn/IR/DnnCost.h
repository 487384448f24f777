//===- DnnCost.h - FLOPs and bytes of dnn ops -------------------*- C++ -*-===//
//
// The cost an op reports through `DnnCostOpInterface::getCost` (FLOPs, bytes
// read and written, matrix or vector units), the per-element FLOP counts the
// op costs share, and byte helpers. The op costs live in
// lib/Dialect/Dnn/IR/DnnCosts.cpp and are documented in docs/Dialects/Dnn.md
// ("Costs"); the planner's cost model (include/dnnc/Planner/CostModel.h)
// turns them into time.
//
//===----------------------------------------------------------------------===//

#ifndef DNNC_DIALECT_DNN_IR_DNNCOST_H
#define DNNC_DIALECT_DNN_IR_DNNCOST_H

#include "mlir/IR/Block.h"
#include "mlir/IR/Types.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>

namespace dnnc::dnn {

/// The work of one op on whole (global) tensors: arithmetic and the memory
/// traffic of an unfused kernel that reads every operand element it needs
/// once and writes every result element once. Counts are doubles: products
/// of large extents overflow `int64_t` long before they lose meaning.
struct OpCost {
  /// Floating-point (or integer) operations; a fused multiply-add counts 2.
  double flops = 0;
  /// Bytes read from memory.
  double bytesRead = 0;
  /// Bytes written to memory.
  double bytesWritten = 0;
  /// True when the FLOPs run on matrix units (tensor cores, AMX/BLAS GEMM
  /// kernels): `matmul`, `conv`, and `einsum` with a contraction.
  bool isMatrix = false;

  /// Returns the bytes moved, read plus written.
  double getBytes() const { return bytesRead + bytesWritten; }
};

/// FLOPs counted per element for a division, reciprocal or square root
/// (a quarter-rate special-function instruction plus a refinement step).
constexpr double kDivisionFlops = 4;

/// FLOPs counted per element for a transcendental function (`exp`, `log`,
/// `tanh`, `erf`): range reduction plus a polynomial.
constexpr double kTranscendentalFlops = 8;

/// FLOPs counted per element for a random number (a few rounds of a
/// counter-based generator), as `dnn.dropout` draws.
constexpr double kRandomFlops = 8;

/// Returns the ops of `body` that selective activation recomputation runs
/// again (Megatron-LM's attention cores): for each matrix product of two
/// activations (`isActivation` of both operands: an attention score
/// product), the product and the non-matrix ops its result flows through,
/// among the users `follows` admits, when every way out of them is another
/// such product (the scores, their scaling and mask, the softmax and its
/// dropout, up to the product with the values, which is not included: its
/// result is kept).
llvm::SmallVector<mlir::Operation *>
findRecomputableCores(mlir::Block &body,
                      llvm::function_ref<bool(mlir::Value)> isActivation,
                      llvm::function_ref<bool(mlir::Operation *)> follows);

/// Returns the bytes one element of `type` occupies in memory: its bit
/// width rounded up to whole bytes (`i1` takes one byte). Returns 0 for
/// types without a bit width.
int64_t getElementBytes(mlir::Type type);

/// Returns the number of elements of `value`'s statically shaped tensor type
/// (1 for a non-shaped value).
double getNumElements(mlir::Value value);

/// Returns the bytes of `value`'s tensor: its number of elements times its
/// element size.
double getTensorBytes(mlir::Value value);

} // namespace dnnc::dnn

#endif // DNNC_DIALECT_DNN_IR_DNNCOST_H
