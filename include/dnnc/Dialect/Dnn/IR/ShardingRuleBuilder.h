//===- ShardingRuleBuilder.h - build #dnn.sharding_rule ---------*- C++ -*-===//
//
// A builder for `#dnn.sharding_rule` attributes and the rule shapes that
// several ops share. Op rules live in lib/Dialect/Dnn/IR/DnnShardingRules.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef DNNC_DIALECT_DNN_IR_SHARDINGRULEBUILDER_H
#define DNNC_DIALECT_DNN_IR_SHARDINGRULEBUILDER_H

#include "dnnc/Dialect/Dnn/IR/Dnn.h"

#include "llvm/ADT/SmallVector.h"

namespace dnnc::dnn {

/// Builds a `#dnn.sharding_rule` factor by factor. Tensors are addressed by
/// operand or result index; every dimension starts without factors (extent
/// 1) and each factor mapped to it becomes its new minor-most factor.
///
/// ```c++
/// ShardingRuleBuilder b(op);                      // matmul [M, K] x [K, N]
/// b.addFactor({0, kNoDim}, {0}, m);               // M: lhs dim 0, result 0
/// b.addFactor({kNoDim, 1}, {1}, n);               // N
/// b.addFactor({1, 0}, {kNoDim}, k, FactorKind::Sum);
/// ShardingRuleAttr rule = b.build();
/// ```
class ShardingRuleBuilder {
public:
  /// Marks a tensor that a factor does not map to.
  static constexpr int64_t kNoDim = -1;

  /// Starts a rule for `op`: one mapping per operand and result, with the
  /// ranks of their (ranked tensor) types.
  explicit ShardingRuleBuilder(mlir::Operation *op);

  /// Starts a rule for tensors of the given ranks.
  ShardingRuleBuilder(mlir::MLIRContext *context,
                      llvm::ArrayRef<int64_t> operandRanks,
                      llvm::ArrayRef<int64_t> resultRanks);

  /// Adds a factor of `size` and `kind` mapped to nothing yet and returns its
  /// index, or `kNoDim` when `size` is 0: dimensions of extent 0 (empty
  /// tensors, never split) keep no factors.
  int64_t addFactor(int64_t size, FactorKind kind = FactorKind::Parallel);

  /// Adds a factor of `size` and `kind` mapped to dimension
  /// `operandDims[i]` of operand `i` and `resultDims[j]` of result `j`
  /// (`kNoDim`: not mapped; missing trailing entries: not mapped). Returns
  /// its index, or `kNoDim` when `size` is 0.
  int64_t addFactor(llvm::ArrayRef<int64_t> operandDims,
                    llvm::ArrayRef<int64_t> resultDims, int64_t size,
                    FactorKind kind = FactorKind::Parallel);

  /// Appends `factor` to dimension `dim` of operand `index` (no-op for
  /// `kNoDim`).
  ShardingRuleBuilder &mapOperand(int64_t index, int64_t dim, int64_t factor);

  /// Appends `factor` to dimension `dim` of result `index` (no-op for
  /// `kNoDim`).
  ShardingRuleBuilder &mapResult(int64_t index, int64_t dim, int64_t factor);

  /// Adds one factor per dimension of `shape`, mapped to the same dimension
  /// of every operand and result of that rank (elementwise ops), of kind
  /// `kindOf(dim)` (default: parallel).
  ShardingRuleBuilder &
  addPointwise(llvm::ArrayRef<int64_t> shape,
               llvm::function_ref<FactorKind(int64_t)> kindOf = nullptr);

  /// Returns the rule built so far.
  ShardingRuleAttr build() const;

private:
  mlir::MLIRContext *context;
  llvm::SmallVector<int64_t> sizes;
  llvm::SmallVector<FactorKind> kinds;
  /// Factors of each dimension of each operand, then of each result.
  llvm::SmallVector<llvm::SmallVector<llvm::SmallVector<int64_t>>> operands,
      results;
};

/// Returns the rule of an elementwise op whose operands and results all have
/// the shape of result 0: one parallel factor per dimension, shared by all.
ShardingRuleAttr getElementwiseShardingRule(mlir::Operation *op);

/// Returns the rule of a reshape from `inShape` to `outShape` (same number
/// of elements). Dimensions are decomposed into common factors major to
/// minor, greedily by gcd: merged and split dimensions share parallel
/// factors; where the two shapes do not factor into each other (e.g. 2x3 to
/// 3x2) each side gets its own `replication` factors up to the next point
/// where their products agree. Dimensions of extent 1 map to no factor.
ShardingRuleAttr getReshapeShardingRule(mlir::MLIRContext *context,
                                        llvm::ArrayRef<int64_t> inShape,
                                        llvm::ArrayRef<int64_t> outShape);

} // namespace dnnc::dnn

#endif // DNNC_DIALECT_DNN_IR_SHARDINGRULEBUILDER_H
