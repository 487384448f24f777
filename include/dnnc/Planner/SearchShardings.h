//===- SearchShardings.h - Per-op shardings from the cost model -*- C++ -*-===//
//
// Part of the dnnc project.
//
//===----------------------------------------------------------------------===//
//
// The MLIR side of the per-op sharding search (`dnnc-search-shardings`):
// turns a function on a mesh into a `ShardingProblem` whose variables are
// the function's arguments and ops and whose labels are their possible
// shardings, priced with the cost model, and applies a solution the way
// propagation does (stored shardings and explicit `dist.reshard`s).
//
// Variables and labels (the searched axes: those named, of size > 1):
//
//   op with a sharding rule   its factor sharding on the axes that are not
//                             searched (read off the shardings the IR
//                             already has, e.g. data parallelism from
//                             propagation), plus, for each searched axis in
//                             the order given, one factor it splits
//                             (`FactorSharding::trySplit`) or none.
//   weight argument           its stored sharding without the searched
//                             axes, plus, for each searched axis, a dim it
//                             splits (where it divides) or none.
//   other argument            its stored sharding if it has one (a pin);
//                             else as a weight.
//   dist.annotate             its sharding (a pin).
//   other op                  replicated (it runs on whole tensors).
//
// `dist.reshard`s already in the function are taken for an earlier
// materialization: they are looked through, and removed when a solution is
// applied (pin layouts with `dist.annotate` or function-result shardings).
// A function result keeps its stored `dist.sharding` as a pin; one without
// is returned in its producer's layout without partial axes.
//
// Costs (seconds; `memoryWeight` in seconds per byte):
//
//   unary, op       getOpTime(op, shards of its factor sharding)
//                   + an all-reduce per pending non-sum reduction
//                   + memoryWeight x bytes of its local results
//   unary, weight   training: the all-reduce of its gradient over the mesh
//                   axes it is replicated along;
//                   + memoryWeight x getWeightMemory(its local bytes)
//   unary, return   the reshard of the returned value to the result's
//                   layout (an all-reduce of partial sums, for instance)
//   pairwise        for each operand: getReshardTime(type, the producer's
//                   result sharding, the sharding the consumer's label
//                   needs), partial producers included.
//
// A reshard is priced once per use, while materialization creates one per
// value and layout: when several consumers need the same new layout of a
// value the objective counts it once per consumer (an upper bound of the
// plan's estimate; `evaluateOpShardings` prices a function the same way).
//
//===----------------------------------------------------------------------===//

#ifndef DNNC_PLANNER_SEARCHSHARDINGS_H
#define DNNC_PLANNER_SEARCHSHARDINGS_H

#include "dnnc/Dialect/Dist/Transforms/FactorSharding.h"
#include "dnnc/Planner/CostModel.h"
#include "dnnc/Planner/ShardingSolver.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <memory>
#include <string>

namespace dnnc::planner {

/// The per-op sharding problem of one function on one mesh, with what each
/// label means, so that a solution can be applied to the function.
class OpShardingProblem {
public:
  /// Builds the problem of `func` (one block) on `mesh`, searching
  /// `searchAxes` (all the mesh's axes when empty), priced with `model`
  /// and `memoryWeight` seconds per byte. Fails, with an error, on an axis
  /// the mesh lacks or named twice, a negative `memoryWeight`, a stored
  /// sharding that does not fit its value, and ops that cannot be sharded
  /// (regions, values that are not ranked tensors). Does not change `func`.
  static mlir::FailureOr<std::unique_ptr<OpShardingProblem>>
  build(mlir::func::FuncOp func, dist::MeshOp mesh, const CostModel &model,
        llvm::ArrayRef<mlir::StringAttr> searchAxes, double memoryWeight = 0);

  /// Returns the labelling problem.
  const ShardingProblem &getProblem() const { return problem; }

  /// Returns the argument variable `var` stands for, or null.
  mlir::BlockArgument getArgument(unsigned var) const {
    return variables[var].arg;
  }
  /// Returns the op variable `var` stands for, or null.
  mlir::Operation *getOperation(unsigned var) const {
    return variables[var].op;
  }

  /// Returns label `label` of `var` in words: the argument's sharding, or
  /// the mesh axes of each split factor of the op (for remarks and tests).
  std::string describe(unsigned var, unsigned label) const;

  /// Rewrites the function with `labels` (one per variable): removes its
  /// `dist.reshard`s, stores the chosen argument shardings, drops result
  /// shardings that were not pins, and materializes the chosen factor
  /// shardings (`dist::materializeShardings`). Returns the number of
  /// reshards created. The problem must not be used afterwards.
  mlir::FailureOr<int64_t> apply(llvm::ArrayRef<unsigned> labels);

private:
  /// One variable: an argument or an op, and its labels.
  struct Variable {
    /// The argument, or null.
    mlir::BlockArgument arg;
    /// The op, or null.
    mlir::Operation *op = nullptr;
    /// For ops with a sharding rule, the factor sharding of each label.
    std::vector<dist::FactorSharding> factorShardings;
    /// Per label, the sharding of each result (of the argument itself).
    std::vector<llvm::SmallVector<dist::ShardingAttr, 1>> results;
    /// Per label, the sharding each operand must have.
    std::vector<llvm::SmallVector<dist::ShardingAttr, 2>> operands;
  };

  /// An empty problem of `func` on `mesh` (see `build`).
  OpShardingProblem(mlir::func::FuncOp func, dist::MeshOp mesh)
      : func(func), mesh(mesh) {}

  /// The function searched.
  mlir::func::FuncOp func;
  /// The mesh it is sharded over.
  dist::MeshOp mesh;
  /// The variables, arguments first, then ops in program order.
  std::vector<Variable> variables;
  /// Whether each function result has a pinned (stored) sharding.
  llvm::SmallVector<bool> pinnedResults;
  /// The labelling problem, variables in the order of `variables`.
  ShardingProblem problem;
};

/// Options of `searchOpShardings`.
struct SearchShardingsOptions {
  /// Seconds charged per byte a device holds for weights (with gradients
  /// and optimizer states in training) and op results; 0 optimizes time.
  double memoryWeight = 0;
  /// Limits of the solver.
  SolverOptions solver;
};

/// What `searchOpShardings` found and did.
struct SearchShardingsResult {
  /// The solver's objective for the applied labels: seconds of one step,
  /// plus `memoryWeight` times the bytes counted.
  double objective = 0;
  /// A lower bound of the optimum (`objective` when proven optimal).
  double lowerBound = 0;
  /// True when the labels are proven optimal for the problem.
  bool provenOptimal = false;
  /// The number of variables (arguments and ops).
  unsigned numVariables = 0;
  /// The number of labels, all variables together.
  uint64_t numLabels = 0;
  /// The most labels of one variable.
  unsigned maxLabels = 0;
  /// The number of reshards the applied solution created.
  int64_t numReshards = 0;
  /// Seconds spent building the problem (pricing every label and pair).
  double buildSeconds = 0;
  /// Seconds the solver took.
  double solveSeconds = 0;
  /// Seconds spent applying the solution.
  double applySeconds = 0;
};

/// Chooses the shardings of every op and argument of `func` on `mesh` along
/// `searchAxes` (all axes when empty) that minimise the cost model's
/// objective (see the file comment), and applies them: every value gets a
/// stored sharding and reshards are explicit, as after
/// `dist-propagate-shardings`. Shared constant expressions are first copied
/// per use (`dist::splitConstantExpressions`). Fails with an error when the
/// problem cannot be built or every labelling has an infinite cost.
mlir::FailureOr<SearchShardingsResult>
searchOpShardings(mlir::func::FuncOp func, dist::MeshOp mesh,
                  const CostModel &model,
                  llvm::ArrayRef<mlir::StringAttr> searchAxes,
                  const SearchShardingsOptions &options = {});

/// Prices a materialized `func` (every value has a stored sharding;
/// reshards are explicit) on `mesh` with the search's objective: ops on
/// their local blocks (shards read off the stored shardings) and their
/// pending reductions, every `dist.reshard` once per use by an op or the
/// return, weight gradient all-reduces in training, and `memoryWeight`
/// times the bytes of weights and op results. Equals the solver's objective
/// of the labels that produced `func` (annotations aside: their reshards
/// are priced per use too).
double evaluateOpShardings(mlir::func::FuncOp func, dist::MeshOp mesh,
                           const CostModel &model, double memoryWeight = 0);

} // namespace dnnc::planner

#endif // DNNC_PLANNER_SEARCHSHARDINGS_H
