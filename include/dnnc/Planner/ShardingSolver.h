//===- ShardingSolver.h - Exact discrete labelling solver -------*- C++ -*-===//
//
// Part of the dnnc project.
//
//===----------------------------------------------------------------------===//
//
// The optimizer behind the per-op sharding search, free of MLIR: a set of
// variables, each with a finite list of labels and a cost per label (unary
// costs), and cost tables between pairs of variables (pairwise costs); the
// solver finds the labelling of least total cost.
//
// Method (see docs/planner.md, "Per-op sharding search"): variable (bucket)
// elimination. Variables are eliminated one at a time, greedily the one
// whose elimination creates the smallest factor (the product of the label
// counts of its current neighbours; ties: the fewest fill-in edges, then
// the lowest index). Eliminating `v` replaces every factor that holds `v`
// by one factor over its neighbours, the minimum over `v`'s labels of their
// sum, and remembers the minimizing label of each entry; once every
// variable is gone, the labels are read back in reverse order. This is
// exact; its cost is O(sum over steps of |factor| x |labels of v| x
// |factors of v|), exponential only in the induced width of the order:
// chains and trees (treewidth 1) take O(n L^2), a transformer layer's
// residual and attention cycles keep factors at a few variables.
//
// When the next factor would have more than `maxFactorEntries` entries
// (default 2^22), exact elimination stops: the variables left keep the
// factors built so far (exact minima over the eliminated ones), get a
// greedy labelling improved by iterated conditional modes (each variable
// in turn takes its best label given the others, until no variable
// changes or `maxLocalSearchSweeps` sweeps), and the eliminated variables
// are read back from it. The result is then not proven optimal; the
// solver reports a lower bound (the constant part plus the minimum of
// every remaining factor) next to it.
//
//===----------------------------------------------------------------------===//

#ifndef DNNC_PLANNER_SHARDINGSOLVER_H
#define DNNC_PLANNER_SHARDINGSOLVER_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/DenseMap.h"

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace dnnc::planner {

/// A labelling problem: minimise the sum of the unary costs of the chosen
/// labels and of the pairwise costs of the chosen label pairs. Costs are
/// seconds (any non-negative doubles; +infinity forbids a label or pair).
class ShardingProblem {
public:
  /// The cost table between two variables `first` < `second`:
  /// `costs[i * numLabels(second) + j]` is paid when `first` takes label `i`
  /// and `second` label `j`.
  struct PairwiseCost {
    /// The variable of lower index.
    unsigned first = 0;
    /// The variable of higher index.
    unsigned second = 0;
    /// Row-major costs, `first`'s labels major.
    std::vector<double> costs;
  };

  /// Adds a variable with one label per entry of `unaryCosts` (at least
  /// one) and returns its index.
  unsigned addVariable(llvm::ArrayRef<double> unaryCosts);

  /// Adds `costs` (one per label) to the unary costs of `var`.
  void addUnaryCosts(unsigned var, llvm::ArrayRef<double> costs);

  /// Adds a pairwise table between the distinct variables `a` and `b`:
  /// `costs[i * getNumLabels(b) + j]` when `a` takes label `i` and `b`
  /// label `j`. Tables of the same pair are summed into one.
  void addPairwiseCosts(unsigned a, unsigned b, llvm::ArrayRef<double> costs);

  /// Returns the number of variables.
  unsigned getNumVariables() const { return unary.size(); }
  /// Returns the number of labels of `var`.
  unsigned getNumLabels(unsigned var) const { return unary[var].size(); }
  /// Returns the unary costs of `var`.
  llvm::ArrayRef<double> getUnaryCosts(unsigned var) const {
    return unary[var];
  }
  /// Returns the pairwise tables, one per pair of variables that has one.
  llvm::ArrayRef<PairwiseCost> getPairwiseCosts() const { return pairwise; }
  /// Returns the sum of the label counts of all variables.
  uint64_t getTotalLabels() const;
  /// Returns the largest label count of a variable (0 without variables).
  unsigned getMaxLabels() const;

  /// Returns the total cost of `labels` (one per variable, in range).
  double evaluate(llvm::ArrayRef<unsigned> labels) const;

private:
  /// Unary costs, per variable and label.
  std::vector<std::vector<double>> unary;
  /// Pairwise tables.
  std::vector<PairwiseCost> pairwise;
  /// The index in `pairwise` of each pair (first, second).
  llvm::DenseMap<std::pair<unsigned, unsigned>, unsigned> pairIndex;
};

/// Limits of the solver.
struct SolverOptions {
  /// The largest factor (number of entries) exact elimination may create;
  /// the next step beyond it switches to local search for the variables
  /// left (see the file comment).
  uint64_t maxFactorEntries = uint64_t(1) << 22;
  /// The most sweeps of iterated conditional modes in that fallback.
  unsigned maxLocalSearchSweeps = 100;
};

/// A labelling and what is known about it.
struct SolverResult {
  /// The label of each variable.
  std::vector<unsigned> labels;
  /// The total cost of `labels` (`ShardingProblem::evaluate`).
  double objective = 0;
  /// A lower bound of the optimum: `objective` itself when proven optimal.
  double lowerBound = 0;
  /// True when every variable was eliminated exactly: `labels` is optimal.
  bool provenOptimal = false;
  /// The number of variables eliminated exactly (all of them when
  /// `provenOptimal`).
  unsigned numEliminated = 0;
  /// The most entries of a factor elimination created.
  uint64_t largestFactorEntries = 0;
  /// Wall-clock seconds spent.
  double seconds = 0;
};

/// Solves `problem` by variable elimination (exact within
/// `options.maxFactorEntries`; see the file comment).
SolverResult solveShardingProblem(const ShardingProblem &problem,
                                  const SolverOptions &options = {});

/// Solves `problem` by enumerating every labelling, the first of least cost
/// in lexicographic order (variable 0 most significant). Returns nullopt
/// when there are more than `maxAssignments` labellings. For tests.
std::optional<SolverResult>
solveExhaustive(const ShardingProblem &problem,
                uint64_t maxAssignments = uint64_t(1) << 24);

} // namespace dnnc::planner

#endif // DNNC_PLANNER_SHARDINGSOLVER_H
