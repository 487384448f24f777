//===- Dnn.h - dnn dialect --------------------------------------*- C++ -*-===//
//
// The `dnn` dialect: its dialect class, enums, attributes and ops.
//
//===----------------------------------------------------------------------===//

#ifndef DNNC_DIALECT_DNN_IR_DNN_H
#define DNNC_DIALECT_DNN_IR_DNN_H

#include "dnnc/Dialect/Dnn/IR/DnnCost.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "dnnc/Dialect/Dnn/IR/DnnOpsDialect.h.inc"

#include "dnnc/Dialect/Dnn/IR/DnnEnums.h.inc"

namespace dnnc::dnn {
/// Returns true if `kind` is a reduction kind (`sum`, `max`, `min`, `prod`,
/// `mean`): splitting such a factor leaves partial results.
inline bool isReductionKind(FactorKind kind) { return kind >= FactorKind::Sum; }
} // namespace dnnc::dnn

#define GET_ATTRDEF_CLASSES
#include "dnnc/Dialect/Dnn/IR/DnnAttrs.h.inc"

namespace dnnc::dnn {
/// Verifies the `dnn.sharding_rule` attribute pinned on `op`, if any: it
/// must match the op's types and have the factors of the op's own rule, with
/// kinds either unchanged or turned into `replication`.
mlir::LogicalResult verifyPinnedShardingRule(mlir::Operation *op);
} // namespace dnnc::dnn

#include "dnnc/Dialect/Dnn/IR/DnnInterfaces.h.inc"

#define GET_OP_CLASSES
#include "dnnc/Dialect/Dnn/IR/DnnOps.h.inc"

namespace dnnc::dnn {

/// Largest number of elements the `dnn` folders materialise. Folding exists
/// to evaluate shape computations at import; larger tensors (weights) are
/// left to the graph phase so that folding never duplicates big constants.
constexpr int64_t kMaxFoldElements = 1 << 16;

/// Largest result a `dnn.broadcast_in_dim` of a non-splat constant folds to.
/// Broadcasting replicates data: a bias broadcast over the batch stays an op
/// (it fuses into its consumer) instead of becoming a replicated constant;
/// shape-sized broadcasts still fold.
constexpr int64_t kMaxBroadcastFoldElements = 1024;

/// Returns the precision `module` was converted to (its `dnn.precision`),
/// or fp32 when it has none.
Precision getModulePrecision(mlir::Operation *module);

/// Returns true for the precisions that store f32 tensors in a 16-bit type
/// (bf16 and fp16).
inline bool isReducedPrecision(Precision precision) {
  return precision == Precision::BF16 || precision == Precision::FP16;
}

/// The value of `v` when it is a splat float constant, seen through
/// `dnn.broadcast_in_dim` and float `dnn.cast` (the value rounded to the
/// cast's type, as `dnn-convert-precision` leaves scalar constants).
std::optional<double> getSplatFloatValue(mlir::Value v);

/// Returns the shape obtained by broadcasting `lhs` and `rhs` with numpy
/// rules, or failure if they are not broadcastable.
mlir::FailureOr<llvm::SmallVector<int64_t>>
broadcastShapes(llvm::ArrayRef<int64_t> lhs, llvm::ArrayRef<int64_t> rhs);

/// Infers the result shape of `dnn.matmul`; emits through `emitError` (if
/// given) and fails when the operand shapes are incompatible.
mlir::FailureOr<llvm::SmallVector<int64_t>>
inferMatMulShape(llvm::ArrayRef<int64_t> lhs, llvm::ArrayRef<int64_t> rhs,
                 llvm::function_ref<mlir::InFlightDiagnostic()> emitError);

/// Parsed explicit einsum equation: one label string per input and one for
/// the output.
struct EinsumEquation {
  /// Labels of each input operand, one character per dimension.
  llvm::SmallVector<std::string> inputs;
  /// Labels of the result.
  std::string output;
};

/// Parses an explicit einsum equation (`ab,bc->ac`); fails on ellipses,
/// non-letter labels or repeated output labels.
mlir::FailureOr<EinsumEquation>
parseEinsumEquation(llvm::StringRef equation,
                    llvm::function_ref<mlir::InFlightDiagnostic()> emitError);

/// Infers the output extent of one spatial dimension of a pooling window or
/// convolution by ONNX's formula `1 + span / stride` (span = padded input
/// minus dilated kernel), rounded toward zero or, with `ceilMode`, up. With
/// `partialWindows` (pools) a window may reach past the padded input, so a
/// span in (-stride, 0) gives 1; without it (convolutions) a negative span
/// does not fit. Returns a non-positive value when no window fits or the
/// arithmetic overflows.
int64_t inferWindowedDim(int64_t input, int64_t kernel, int64_t stride,
                         int64_t padBegin, int64_t padEnd, int64_t dilation,
                         bool ceilMode, bool partialWindows);

/// Returns the sharding rule `op` is partitioned by: the rule pinned with
/// the `dnn.sharding_rule` attribute if there is one, else the op's own rule
/// (`DnnShardingRuleOpInterface`), or null for ops without a rule.
ShardingRuleAttr getShardingRule(mlir::Operation *op);

} // namespace dnnc::dnn

#endif // DNNC_DIALECT_DNN_IR_DNN_H
