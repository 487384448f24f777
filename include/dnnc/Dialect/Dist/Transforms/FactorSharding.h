//===- FactorSharding.h - Shardings of a rule's factors ---------*- C++ -*-===//
//
// Part of the dnnc project.
//
//===----------------------------------------------------------------------===//
//
// The link between the tensor shardings of an op (`#dist.sharding` per
// operand and result) and its sharding rule (`#dnn.sharding_rule`): which
// mesh axes each factor of the rule is split over. Propagation, the stress
// mode and partitioning all reason about ops through this class.
//
//===----------------------------------------------------------------------===//

#ifndef DNNC_DIALECT_DIST_TRANSFORMS_FACTORSHARDING_H
#define DNNC_DIALECT_DIST_TRANSFORMS_FACTORSHARDING_H

#include "dnnc/Dialect/Dist/IR/DistOps.h"
#include "dnnc/Dialect/Dnn/IR/Dnn.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/SmallVector.h"

#include <utility>

namespace dnnc::dist {

/// The mesh axes each factor of one op's sharding rule is split over, major
/// to minor. A tensor dimension whose factors are `[f0, f1, ...]` (major to
/// minor) is split over the concatenation of their axes; this is a block
/// split only when every split factor but the last one of the dimension is
/// fully split (as many shards as its size), which every method that adds
/// axes enforces. Factors of size 1 are never split.
class FactorSharding {
public:
  /// An unsplit factor sharding of `rule` on `mesh`.
  FactorSharding(dnn::ShardingRuleAttr rule, MeshOp mesh);

  /// Returns the rule.
  dnn::ShardingRuleAttr getRule() const { return rule; }
  /// Returns the mesh.
  MeshOp getMesh() const { return mesh; }

  /// Returns the axes `factor` is split over, major to minor.
  llvm::ArrayRef<mlir::StringAttr> getAxes(int64_t factor) const {
    return axes[factor];
  }
  /// Returns true if `factor` is split over at least one axis.
  bool isSplit(int64_t factor) const { return !axes[factor].empty(); }
  /// Returns true if some factor is split.
  bool isSplit() const;
  /// Returns the number of blocks `factor` is cut into.
  int64_t getNumShards(int64_t factor) const;
  /// Returns true if some factor uses mesh axis `axis`.
  bool usesAxis(mlir::StringAttr axis) const;

  /// Splits `factor` further over `newAxes` (appended, minor to what it has)
  /// if that is allowed: the factor is parallel or a reduction, larger than
  /// 1, the axes exist and are used nowhere else, the number of shards
  /// divides the factor size, and every tensor dimension holding the factor
  /// stays a block split. Returns false and changes nothing otherwise.
  bool trySplit(int64_t factor, llvm::ArrayRef<mlir::StringAttr> newAxes);

  /// Reads the factor shardings a tensor with rule mapping `mapping` and
  /// sharding `sharding` implies, and adds those of factors not split yet
  /// (partial axes are ignored). Returns false when the tensor disagrees with
  /// this factor sharding: a factor it splits differently, a dimension whose
  /// axes cannot be laid over its factors, or a split the rule forbids; the
  /// agreeing factors are still added.
  bool merge(dnn::TensorMappingAttr mapping, ShardingAttr sharding);

  /// Returns the sharding of a tensor with mapping `mapping` (no partial).
  ShardingAttr getTensorSharding(dnn::TensorMappingAttr mapping) const;
  /// Returns the sharding operand `index` must have.
  ShardingAttr getOperandSharding(int64_t index) const;
  /// Returns the sharding of result `index`: its dims, and as partial axes
  /// the axes of the split `sum` reduction factors it does not hold.
  ShardingAttr getResultSharding(int64_t index) const;

  /// Returns, for result `index`, the split reduction factors of kinds other
  /// than `sum` that it does not hold, as (kind, axes) pairs: partitioning
  /// completes them with an all-reduce of that kind right after the op.
  llvm::SmallVector<std::pair<dnn::FactorKind, llvm::SmallVector<mlir::StringAttr>>>
  getPendingReductions(int64_t index) const;

private:
  /// Returns true if every tensor dimension holding `factor` is a block
  /// split under the current axes.
  bool isBlockSplit(int64_t factor) const;

  dnn::ShardingRuleAttr rule;
  mutable MeshOp mesh;
  llvm::SmallVector<llvm::SmallVector<mlir::StringAttr>> axes;
};

/// Computes the factor sharding an op computes with from the shardings of
/// its operands, then its results (null entries are skipped; partial axes
/// ignored). `consistent` is set to false when some tensor disagreed.
FactorSharding inferFactorSharding(dnn::ShardingRuleAttr rule, MeshOp mesh,
                                   llvm::ArrayRef<ShardingAttr> operands,
                                   llvm::ArrayRef<ShardingAttr> results,
                                   bool *consistent = nullptr);

/// Returns the factor sharding `op` (an op with sharding rule `rule`)
/// computes with, inferred from the stored shardings of its operands and
/// results (`getStoredSharding`, null entries skipped).
FactorSharding getStoredFactorSharding(mlir::Operation *op,
                                       dnn::ShardingRuleAttr rule,
                                       MeshOp mesh);

/// Returns the sharding stored for `value`: the `dist.sharding` of a
/// function argument, the entry of `dist.shardings` of an op result, or
/// null.
ShardingAttr getStoredSharding(mlir::Value value);

/// Stores `sharding` as the sharding of `value` (see getStoredSharding).
void setStoredSharding(mlir::Value value, ShardingAttr sharding);

/// Chooses the factor sharding of `op` (an op with a sharding rule) given the
/// current shardings of its operands (never null).
using FactorChooser = llvm::function_ref<FactorSharding(
    mlir::Operation *op, dnn::ShardingRuleAttr rule,
    llvm::ArrayRef<ShardingAttr> operandShardings)>;

/// Makes the shardings of `func` explicit, walking it in program order:
/// every argument takes its stored sharding (replicated when it has none);
/// every op with a sharding rule takes the factor sharding `choose` returns,
/// its results store the shardings derived from it, and each operand whose
/// sharding differs from the one the op needs goes through a `dist.reshard`
/// (created once per value and layout, right after the value's definition);
/// `dist.annotate` becomes a reshard (or nothing); `dist.reshard` gets its
/// `from`; returned values are resharded to the function's result
/// shardings (their own sharding without partial axes when none is
/// stored), which are then stored. Ops of other kinds run replicated. With
/// `remarks`, each reshard of an op's operand is reported with a remark on
/// that op. Returns the number of reshards created, or failure (with an
/// error) when `func` holds something that cannot be sharded.
mlir::FailureOr<int64_t> materializeShardings(mlir::FunctionOpInterface func,
                                              MeshOp mesh,
                                              FactorChooser choose,
                                              bool remarks);

/// What the sharding passes work on: the only `dist.mesh` of a module and
/// its `@main`.
struct ShardingTarget {
  /// The mesh.
  MeshOp mesh;
  /// The function `@main`, with a body of one block.
  mlir::func::FuncOp func;

  /// Returns true if there is something to shard.
  explicit operator bool() const { return mesh && func; }
};

/// Returns the sharding target of `module`: empty when there is nothing to
/// shard (no mesh, or no `@main` with a body), and failure (with an error)
/// when the module has several meshes or `@main` several blocks.
mlir::FailureOr<ShardingTarget> getShardingTarget(mlir::ModuleOp module);

/// Gives every use of a constant expression (a constant, or a broadcast,
/// reshape, transpose or cast of one) a copy of its own, right before its
/// user and in its user's pipeline stage (`dist.stage`), so that each
/// consumer can shard it its own way (zero biases and broadcast scalars that
/// the exporter or CSE shared between unrelated layers would otherwise tie
/// their layouts). Propagation and the per-op
/// sharding search start with it.
void splitConstantExpressions(mlir::func::FuncOp func);

/// Runs sharding propagation on `module` (`dist-propagate-shardings`, see
/// its description): seeds from the IR, dim 0 of the graph inputs split
/// over `dpAxis` and Megatron-style splits over `tpAxis` (either may be
/// empty), the optimizer states split over `zeroAxis` (ZeRO-1; may be
/// empty), then explicit reshards, reported with remarks when `remarks`.
/// Sets `numReshards` (when given) to the number of reshards created.
mlir::LogicalResult propagateShardings(mlir::ModuleOp module,
                                       llvm::StringRef dpAxis,
                                       llvm::StringRef tpAxis, bool remarks,
                                       int64_t *numReshards = nullptr,
                                       llvm::StringRef zeroAxis = {});

/// Returns true if some sharding of `module` (a `dist.sharding` of a
/// function argument or result, or a `dist.shardings` entry of an op
/// result) splits a dimension over mesh axis `axis` or holds partial sums
/// over it: the axis divides some work.
bool isAxisUsed(mlir::ModuleOp module, llvm::StringRef axis);

} // namespace dnnc::dist

#endif // DNNC_DIALECT_DIST_TRANSFORMS_FACTORSHARDING_H
