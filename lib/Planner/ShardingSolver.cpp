//===- ShardingSolver.cpp - Exact discrete labelling solver -----*- C++ -*-===//
//
// Part of the dnnc project.
//
//===----------------------------------------------------------------------===//
//
// Implements the labelling problem, its solver by variable elimination
// (with iterated conditional modes past the factor-size cap) and the
// exhaustive reference solver.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Planner/ShardingSolver.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Debug.h"

#include <algorithm>
#include <cassert>
#include <chrono>
#include <limits>
#include <queue>
#include <tuple>

#define DEBUG_TYPE "dnnc-sharding-solver"

using namespace llvm;
using namespace dnnc::planner;

/// +infinity, the cost of a forbidden label or pair.
static constexpr double kInfinity = std::numeric_limits<double>::infinity();

//===----------------------------------------------------------------------===//
// ShardingProblem
//===----------------------------------------------------------------------===//

unsigned ShardingProblem::addVariable(ArrayRef<double> unaryCosts) {
  assert(!unaryCosts.empty() && "a variable needs at least one label");
  unary.emplace_back(unaryCosts.begin(), unaryCosts.end());
  return unary.size() - 1;
}

void ShardingProblem::addUnaryCosts(unsigned var, ArrayRef<double> costs) {
  assert(costs.size() == unary[var].size() && "one cost per label");
  for (auto [total, cost] : llvm::zip_equal(unary[var], costs))
    total += cost;
}

void ShardingProblem::addPairwiseCosts(unsigned a, unsigned b,
                                       ArrayRef<double> costs) {
  assert(a != b && "a pairwise table joins two distinct variables");
  unsigned numA = getNumLabels(a), numB = getNumLabels(b);
  assert(costs.size() == static_cast<size_t>(numA) * numB &&
         "one cost per pair of labels");
  unsigned first = std::min(a, b), second = std::max(a, b);
  auto [it, inserted] = pairIndex.try_emplace({first, second}, pairwise.size());
  if (inserted) {
    PairwiseCost table;
    table.first = first;
    table.second = second;
    table.costs.assign(static_cast<size_t>(numA) * numB, 0.0);
    pairwise.push_back(std::move(table));
  }
  std::vector<double> &table = pairwise[it->second].costs;
  // Stored with `first`'s labels major: transpose when `a` is `second`.
  for (unsigned i = 0; i < numA; ++i)
    for (unsigned j = 0; j < numB; ++j) {
      double cost = costs[static_cast<size_t>(i) * numB + j];
      if (a == first)
        table[static_cast<size_t>(i) * numB + j] += cost;
      else
        table[static_cast<size_t>(j) * numA + i] += cost;
    }
}

uint64_t ShardingProblem::getTotalLabels() const {
  uint64_t total = 0;
  for (const std::vector<double> &costs : unary)
    total += costs.size();
  return total;
}

unsigned ShardingProblem::getMaxLabels() const {
  size_t most = 0;
  for (const std::vector<double> &costs : unary)
    most = std::max(most, costs.size());
  return most;
}

double ShardingProblem::evaluate(ArrayRef<unsigned> labels) const {
  assert(labels.size() == unary.size() && "one label per variable");
  double total = 0;
  for (auto [var, label] : llvm::enumerate(labels))
    total += unary[var][label];
  for (const PairwiseCost &table : pairwise)
    total += table.costs[static_cast<size_t>(labels[table.first]) *
                             getNumLabels(table.second) +
                         labels[table.second]];
  return total;
}

//===----------------------------------------------------------------------===//
// Variable elimination
//===----------------------------------------------------------------------===//

namespace {
/// A cost table over a set of variables.
struct Factor {
  /// The variables, sorted by index.
  SmallVector<unsigned, 4> scope;
  /// Row-major strides of the variables of `scope` (the last one is 1).
  SmallVector<uint64_t, 4> strides;
  /// Costs, one per labelling of `scope`.
  std::vector<double> table;
  /// False once the factor has been consumed by an elimination.
  bool alive = true;
};

/// One elimination: the best label of `var` for each labelling of the
/// variables it was joined to.
struct Step {
  /// The eliminated variable.
  unsigned var = 0;
  /// Its neighbours when it was eliminated, sorted.
  SmallVector<unsigned, 4> scope;
  /// Row-major strides of `scope`.
  SmallVector<uint64_t, 4> strides;
  /// The minimizing label of `var`, per labelling of `scope`.
  std::vector<uint32_t> argmin;
};

/// The state of one run of the solver.
class Eliminator {
public:
  Eliminator(const ShardingProblem &problem, const SolverOptions &options);

  /// Eliminates, falls back to local search if needed, and returns the
  /// labelling.
  SolverResult run();

private:
  /// Returns the number of entries of the factor eliminating `var` would
  /// create (saturated at 2^63).
  uint64_t getScore(unsigned var) const;
  /// Returns the number of missing edges between the neighbours of `var`
  /// (the fill-in of eliminating it); large for very large neighbourhoods.
  uint64_t getFill(unsigned var) const;
  /// Eliminates `var`.
  void eliminate(unsigned var);
  /// Adds `table` over `scope` (sorted, at least two variables), summed
  /// into an existing factor of the same scope if there is one.
  void addFactor(ArrayRef<unsigned> scope, std::vector<double> table);
  /// Returns the cost `factor` gives the labelling `labels`, with `var`
  /// (in the factor's scope) taking `label` instead.
  double getEntry(const Factor &factor, ArrayRef<unsigned> labels, unsigned var,
                  unsigned label) const;
  /// Labels the variables not eliminated: greedy, then iterated
  /// conditional modes over the remaining factors.
  void searchLocally(std::vector<unsigned> &labels);

  const ShardingProblem &problem;
  const SolverOptions &options;
  /// Label count of each variable.
  std::vector<unsigned> domains;
  /// Unary costs, including one-variable factors made by eliminations.
  std::vector<std::vector<double>> unary;
  /// Factors over two variables or more.
  std::vector<Factor> factors;
  /// The factors (alive or not) each variable is in.
  std::vector<SmallVector<unsigned, 4>> varFactors;
  /// The current interaction graph.
  std::vector<DenseSet<unsigned>> neighbours;
  /// Whether each variable is eliminated (or has a single label).
  std::vector<bool> eliminated;
  /// Eliminations, in order.
  std::vector<Step> steps;
  /// The cost that no longer depends on any variable.
  double constant = 0;
  /// The most entries of a factor created.
  uint64_t largest = 0;
};
} // namespace

Eliminator::Eliminator(const ShardingProblem &problem,
                       const SolverOptions &options)
    : problem(problem), options(options) {
  unsigned n = problem.getNumVariables();
  domains.resize(n);
  unary.resize(n);
  varFactors.resize(n);
  neighbours.resize(n);
  eliminated.assign(n, false);
  for (unsigned var = 0; var < n; ++var) {
    domains[var] = problem.getNumLabels(var);
    ArrayRef<double> costs = problem.getUnaryCosts(var);
    unary[var].assign(costs.begin(), costs.end());
  }
  // Tables touching a single-label variable are unary costs of the other.
  for (const ShardingProblem::PairwiseCost &pair : problem.getPairwiseCosts()) {
    unsigned a = pair.first, b = pair.second;
    if (domains[a] == 1 && domains[b] == 1) {
      constant += pair.costs[0];
    } else if (domains[a] == 1) {
      for (unsigned j = 0; j < domains[b]; ++j)
        unary[b][j] += pair.costs[j];
    } else if (domains[b] == 1) {
      for (unsigned i = 0; i < domains[a]; ++i)
        unary[a][i] += pair.costs[i];
    } else {
      Factor factor;
      factor.scope = {a, b};
      factor.strides = {domains[b], 1};
      factor.table = pair.costs;
      varFactors[a].push_back(factors.size());
      varFactors[b].push_back(factors.size());
      factors.push_back(std::move(factor));
      neighbours[a].insert(b);
      neighbours[b].insert(a);
    }
  }
  for (unsigned var = 0; var < n; ++var)
    if (domains[var] == 1) {
      eliminated[var] = true;
      constant += unary[var][0];
    }
}

uint64_t Eliminator::getScore(unsigned var) const {
  constexpr uint64_t kSaturated = uint64_t(1) << 63;
  uint64_t size = 1;
  for (unsigned other : neighbours[var]) {
    if (size > kSaturated / domains[other])
      return kSaturated;
    size *= domains[other];
  }
  return size;
}

uint64_t Eliminator::getFill(unsigned var) const {
  const DenseSet<unsigned> &around = neighbours[var];
  if (around.size() > 64)
    return std::numeric_limits<uint64_t>::max();
  SmallVector<unsigned, 16> list(around.begin(), around.end());
  uint64_t fill = 0;
  for (size_t i = 0; i < list.size(); ++i)
    for (size_t j = i + 1; j < list.size(); ++j)
      if (!neighbours[list[i]].contains(list[j]))
        ++fill;
  return fill;
}

void Eliminator::addFactor(ArrayRef<unsigned> scope,
                           std::vector<double> table) {
  for (unsigned index : varFactors[scope.front()]) {
    Factor &existing = factors[index];
    if (!existing.alive || ArrayRef<unsigned>(existing.scope) != scope)
      continue;
    for (auto [total, cost] : llvm::zip_equal(existing.table, table))
      total += cost;
    return;
  }
  Factor factor;
  factor.scope.assign(scope.begin(), scope.end());
  factor.strides.resize(scope.size());
  uint64_t stride = 1;
  for (size_t i = scope.size(); i-- > 0;) {
    factor.strides[i] = stride;
    stride *= domains[scope[i]];
  }
  factor.table = std::move(table);
  for (unsigned var : scope)
    varFactors[var].push_back(factors.size());
  factors.push_back(std::move(factor));
}

void Eliminator::eliminate(unsigned var) {
  // The factors holding `var` and the scope of their combination.
  SmallVector<unsigned, 8> joined;
  for (unsigned index : varFactors[var])
    if (factors[index].alive)
      joined.push_back(index);
  SmallVector<unsigned, 4> scope(neighbours[var].begin(),
                                 neighbours[var].end());
  llvm::sort(scope);
  size_t k = scope.size();
  SmallVector<uint64_t, 4> strides(k);
  uint64_t size = 1;
  for (size_t i = k; i-- > 0;) {
    strides[i] = size;
    size *= domains[scope[i]];
  }
  largest = std::max(largest, size);

  // Per joined factor: its stride for each scope variable (0 if absent),
  // its stride for `var`, and the offset of the current scope labelling.
  size_t numJoined = joined.size();
  std::vector<uint64_t> scopeStrides(numJoined * k, 0);
  SmallVector<uint64_t, 8> varStrides(numJoined, 0);
  SmallVector<const double *, 8> tables(numJoined);
  for (auto [fi, index] : llvm::enumerate(joined)) {
    const Factor &factor = factors[index];
    tables[fi] = factor.table.data();
    for (auto [pos, member] : llvm::enumerate(factor.scope)) {
      if (member == var) {
        varStrides[fi] = factor.strides[pos];
        continue;
      }
      size_t j = llvm::lower_bound(scope, member) - scope.begin();
      assert(j < k && scope[j] == member && "factor outside the scope");
      scopeStrides[fi * k + j] = factor.strides[pos];
    }
  }
  SmallVector<uint64_t, 8> offsets(numJoined, 0);
  SmallVector<unsigned, 4> digits(k, 0);
  unsigned numLabels = domains[var];
  const std::vector<double> &own = unary[var];
  std::vector<double> costs(numLabels);
  std::vector<double> table(size);
  Step step;
  step.var = var;
  step.scope = scope;
  step.strides = strides;
  step.argmin.resize(size);
  for (uint64_t entry = 0; entry < size; ++entry) {
    std::copy(own.begin(), own.end(), costs.begin());
    for (size_t fi = 0; fi < numJoined; ++fi) {
      const double *base = tables[fi] + offsets[fi];
      uint64_t stride = varStrides[fi];
      for (unsigned label = 0; label < numLabels; ++label)
        costs[label] += base[label * stride];
    }
    unsigned best = 0;
    for (unsigned label = 1; label < numLabels; ++label)
      if (costs[label] < costs[best])
        best = label;
    table[entry] = costs[best];
    step.argmin[entry] = best;
    // Next labelling of the scope, the last variable fastest.
    for (size_t j = k; j-- > 0;) {
      unsigned domain = domains[scope[j]];
      if (++digits[j] < domain) {
        for (size_t fi = 0; fi < numJoined; ++fi)
          offsets[fi] += scopeStrides[fi * k + j];
        break;
      }
      digits[j] = 0;
      for (size_t fi = 0; fi < numJoined; ++fi)
        offsets[fi] -= scopeStrides[fi * k + j] * (domain - 1);
    }
  }

  for (unsigned index : joined) {
    factors[index].alive = false;
    factors[index].table = std::vector<double>();
  }
  eliminated[var] = true;
  for (unsigned member : scope) {
    neighbours[member].erase(var);
    for (unsigned other : scope)
      if (other != member)
        neighbours[member].insert(other);
  }
  neighbours[var].clear();
  steps.push_back(std::move(step));
  if (k == 0)
    constant += table[0];
  else if (k == 1)
    for (unsigned label = 0; label < domains[scope[0]]; ++label)
      unary[scope[0]][label] += table[label];
  else
    addFactor(scope, std::move(table));
}

double Eliminator::getEntry(const Factor &factor, ArrayRef<unsigned> labels,
                            unsigned var, unsigned label) const {
  uint64_t index = 0;
  for (auto [member, stride] : llvm::zip_equal(factor.scope, factor.strides))
    index += (member == var ? label : labels[member]) * stride;
  return factor.table[index];
}

void Eliminator::searchLocally(std::vector<unsigned> &labels) {
  SmallVector<unsigned> left;
  for (unsigned var = 0, n = domains.size(); var < n; ++var)
    if (!eliminated[var])
      left.push_back(var);
  // The cost of each label of `var` given the labels of the others; with
  // `assigned`, factors holding an unlabelled variable are left out.
  std::vector<bool> assigned(domains.size(), true);
  for (unsigned var : left)
    assigned[var] = false;
  auto labelCosts = [&](unsigned var, bool onlyAssigned) {
    std::vector<double> costs = unary[var];
    for (unsigned index : varFactors[var]) {
      const Factor &factor = factors[index];
      if (!factor.alive)
        continue;
      if (onlyAssigned && llvm::any_of(factor.scope, [&](unsigned member) {
            return member != var && !assigned[member];
          }))
        continue;
      for (unsigned label = 0; label < domains[var]; ++label)
        costs[label] += getEntry(factor, labels, var, label);
    }
    return costs;
  };
  // Greedy start in index order (program order in the MLIR adapter).
  for (unsigned var : left) {
    std::vector<double> costs = labelCosts(var, /*onlyAssigned=*/true);
    labels[var] = std::min_element(costs.begin(), costs.end()) - costs.begin();
    assigned[var] = true;
  }
  // Iterated conditional modes: strict improvements only, so it ends.
  for (unsigned sweep = 0; sweep < options.maxLocalSearchSweeps; ++sweep) {
    bool changed = false;
    for (unsigned var : left) {
      std::vector<double> costs = labelCosts(var, /*onlyAssigned=*/false);
      unsigned best =
          std::min_element(costs.begin(), costs.end()) - costs.begin();
      if (costs[best] < costs[labels[var]]) {
        labels[var] = best;
        changed = true;
      }
    }
    LLVM_DEBUG(dbgs() << "ICM sweep " << sweep << (changed ? "" : " (done)")
                      << "\n");
    if (!changed)
      break;
  }
}

SolverResult Eliminator::run() {
  auto start = std::chrono::steady_clock::now();
  unsigned n = domains.size();
  // Lazy min-heap on (factor entries, fill-in, variable); an entry is stale
  // when its key is no longer the variable's.
  using Key = std::tuple<uint64_t, uint64_t, unsigned>;
  std::priority_queue<Key, std::vector<Key>, std::greater<Key>> queue;
  std::vector<std::pair<uint64_t, uint64_t>> keys(n);
  auto push = [&](unsigned var) {
    keys[var] = {getScore(var), getFill(var)};
    queue.push({keys[var].first, keys[var].second, var});
  };
  for (unsigned var = 0; var < n; ++var)
    if (!eliminated[var])
      push(var);

  bool exact = true;
  while (!queue.empty()) {
    auto [score, fill, var] = queue.top();
    if (eliminated[var] || keys[var] != std::make_pair(score, fill)) {
      queue.pop();
      continue;
    }
    if (score > options.maxFactorEntries) {
      exact = false;
      break;
    }
    queue.pop();
    SmallVector<unsigned, 8> around(neighbours[var].begin(),
                                    neighbours[var].end());
    eliminate(var);
    for (unsigned other : around)
      push(other);
  }

  SolverResult result;
  result.labels.assign(n, 0);
  result.numEliminated = steps.size();
  result.largestFactorEntries = largest;
  if (!exact) {
    // A lower bound: every remaining term at its own minimum.
    double bound = constant;
    for (unsigned var = 0; var < n; ++var)
      if (!eliminated[var])
        bound += *std::min_element(unary[var].begin(), unary[var].end());
    for (const Factor &factor : factors)
      if (factor.alive)
        bound += *std::min_element(factor.table.begin(), factor.table.end());
    result.lowerBound = bound;
    searchLocally(result.labels);
  }
  // Read the eliminated variables back, last eliminated first.
  for (const Step &step : llvm::reverse(steps)) {
    uint64_t index = 0;
    for (auto [member, stride] : llvm::zip_equal(step.scope, step.strides))
      index += result.labels[member] * stride;
    result.labels[step.var] = step.argmin[index];
  }
  result.objective = problem.evaluate(result.labels);
  result.provenOptimal = exact;
  if (exact)
    result.lowerBound = result.objective;
  result.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  LLVM_DEBUG(dbgs() << "solved " << n << " variables: " << result.objective
                    << (exact ? " (optimal)" : " (not proven optimal)")
                    << ", largest factor " << largest << ", " << result.seconds
                    << " s\n");
  return result;
}

SolverResult dnnc::planner::solveShardingProblem(const ShardingProblem &problem,
                                                 const SolverOptions &options) {
  Eliminator eliminator(problem, options);
  return eliminator.run();
}

//===----------------------------------------------------------------------===//
// Exhaustive enumeration
//===----------------------------------------------------------------------===//

std::optional<SolverResult>
dnnc::planner::solveExhaustive(const ShardingProblem &problem,
                               uint64_t maxAssignments) {
  auto start = std::chrono::steady_clock::now();
  unsigned n = problem.getNumVariables();
  uint64_t count = 1;
  for (unsigned var = 0; var < n; ++var) {
    uint64_t labels = problem.getNumLabels(var);
    if (count > maxAssignments / labels)
      return std::nullopt;
    count *= labels;
  }
  // The tables of each variable with lower-index ones.
  struct Edge {
    unsigned other;
    const std::vector<double> *costs;
  };
  std::vector<SmallVector<Edge, 4>> earlier(n);
  for (const ShardingProblem::PairwiseCost &pair : problem.getPairwiseCosts())
    earlier[pair.second].push_back({pair.first, &pair.costs});

  SolverResult result;
  result.provenOptimal = true;
  result.objective = kInfinity;
  result.labels.assign(n, 0);
  if (n == 0) {
    result.objective = 0;
    return result;
  }
  std::vector<unsigned> labels(n, 0);
  // partial[i]: the cost of variables 0..i and the tables among them.
  std::vector<double> partial(n, 0);
  bool found = false;
  auto costOf = [&](unsigned var) {
    double cost = problem.getUnaryCosts(var)[labels[var]];
    unsigned numLabels = problem.getNumLabels(var);
    for (const Edge &edge : earlier[var])
      cost +=
          (*edge.costs)[static_cast<size_t>(labels[edge.other]) * numLabels +
                        labels[var]];
    return (var == 0 ? 0.0 : partial[var - 1]) + cost;
  };
  unsigned var = 0;
  while (true) {
    partial[var] = costOf(var);
    if (var + 1 < n) {
      labels[++var] = 0;
      continue;
    }
    if (!found || partial[var] < result.objective) {
      result.objective = partial[var];
      result.labels = labels;
      found = true;
    }
    // Next labelling: the last variable fastest.
    while (++labels[var] == problem.getNumLabels(var)) {
      if (var == 0) {
        // The same summation order as the other solver's objective.
        result.objective = problem.evaluate(result.labels);
        result.lowerBound = result.objective;
        result.seconds = std::chrono::duration<double>(
                             std::chrono::steady_clock::now() - start)
                             .count();
        return result;
      }
      --var;
    }
  }
}
