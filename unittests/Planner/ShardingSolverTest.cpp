//===- ShardingSolverTest.cpp - The per-op sharding solver ------*- C++ -*-===//
//
// Part of the dnnc project.
//
//===----------------------------------------------------------------------===//
//
// Unit tests of the per-op sharding search. The abstract solver against
// exhaustive enumeration on random problems (trees, graphs with cycles,
// forbidden labels), against a chain dynamic program on a long chain, and
// its fallback past the factor cap. The MLIR adapter on random `dnn` graphs
// (seeded; matmuls, elementwise ops, transposes, reductions, reshapes,
// softmax, broadcast biases) on random meshes, in inference and training:
// the solver's objective equals exhaustive enumeration of the same
// problem, the materialized function re-evaluated from its IR costs what
// the solver said, and `dist-check-shardings` and `dist-partition` accept
// it. Also: searching one axis keeps the others' propagated layout, and
// bad axes are reported.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Planner/ShardingSolver.h"
#include "dnnc/Planner/SearchShardings.h"

#include "dnnc/Dialect/Dist/IR/DistDialect.h"
#include "dnnc/Dialect/Dist/Transforms/FactorSharding.h"
#include "dnnc/Dialect/Dist/Transforms/Passes.h"
#include "dnnc/Dialect/Dnn/IR/Dnn.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringExtras.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>

using namespace mlir;
using namespace dnnc;
using namespace dnnc::planner;

namespace {

/// +infinity.
constexpr double kInf = std::numeric_limits<double>::infinity();

/// Relative tolerance of cost comparisons (sums in different orders).
constexpr double kTolerance = 1e-9;

/// Returns true if `a` and `b` are equal up to `kTolerance` (relative), or
/// both infinite.
bool sameCost(double a, double b) {
  if (std::isinf(a) || std::isinf(b))
    return a == b;
  return std::abs(a - b) <=
         kTolerance * std::max({std::abs(a), std::abs(b), 1e-300});
}

/// A deterministic random source (the standard distributions are not the
/// same on every library).
class Random {
public:
  explicit Random(uint64_t seed) : engine(seed) {}

  /// Returns an integer in [0, n).
  uint64_t below(uint64_t n) { return engine() % n; }
  /// Returns an integer in [lo, hi].
  int64_t between(int64_t lo, int64_t hi) { return lo + below(hi - lo + 1); }
  /// Returns a double in [0, 1).
  double unit() { return (engine() >> 11) * 0x1.0p-53; }
  /// Returns true with probability `p`.
  bool chance(double p) { return unit() < p; }

private:
  std::mt19937_64 engine;
};

//===----------------------------------------------------------------------===//
// The abstract solver
//===----------------------------------------------------------------------===//

/// Returns a random problem of `n` variables with up to `maxLabels` labels
/// each: a random tree, plus each other pair joined with probability
/// `extraEdges`; a cost is infinite with probability `forbidden`.
ShardingProblem randomProblem(Random &random, unsigned n, unsigned maxLabels,
                              double extraEdges, double forbidden) {
  ShardingProblem problem;
  auto cost = [&]() {
    return random.chance(forbidden) ? kInf : random.unit() * 10;
  };
  for (unsigned var = 0; var < n; ++var) {
    std::vector<double> unary(random.between(1, maxLabels));
    for (double &c : unary)
      c = cost();
    problem.addVariable(unary);
  }
  auto join = [&](unsigned a, unsigned b) {
    std::vector<double> table(problem.getNumLabels(a) *
                              problem.getNumLabels(b));
    for (double &c : table)
      c = cost();
    problem.addPairwiseCosts(a, b, table);
  };
  for (unsigned var = 1; var < n; ++var) {
    unsigned parent = random.below(var);
    // Either direction: tables are stored by the lower index.
    if (random.chance(0.5))
      join(parent, var);
    else
      join(var, parent);
    for (unsigned other = 0; other < var; ++other)
      if (other != parent && random.chance(extraEdges))
        join(other, var);
  }
  return problem;
}

/// Checks the solver against exhaustive enumeration on `problem`.
void expectOptimal(const ShardingProblem &problem, const std::string &what) {
  SolverResult solved = solveShardingProblem(problem);
  std::optional<SolverResult> reference = solveExhaustive(problem);
  ASSERT_TRUE(reference) << what;
  EXPECT_TRUE(solved.provenOptimal) << what;
  EXPECT_TRUE(sameCost(solved.objective, reference->objective))
      << what << ": solver " << solved.objective << ", exhaustive "
      << reference->objective;
  EXPECT_TRUE(sameCost(solved.objective, problem.evaluate(solved.labels)))
      << what;
  EXPECT_TRUE(sameCost(solved.lowerBound, solved.objective)) << what;
}

TEST(ShardingSolverTest, RandomTreesMatchExhaustive) {
  Random random(1);
  for (int i = 0; i < 200; ++i) {
    ShardingProblem problem =
        randomProblem(random, random.between(1, 9), 5, 0.0, 0.0);
    expectOptimal(problem, "tree #" + std::to_string(i));
  }
}

TEST(ShardingSolverTest, RandomGraphsWithCyclesMatchExhaustive) {
  Random random(2);
  for (int i = 0; i < 200; ++i) {
    ShardingProblem problem = randomProblem(random, random.between(3, 8), 4,
                                            random.unit() * 0.8, 0.0);
    expectOptimal(problem, "graph #" + std::to_string(i));
  }
}

TEST(ShardingSolverTest, ForbiddenLabelsMatchExhaustive) {
  Random random(3);
  int finite = 0;
  for (int i = 0; i < 200; ++i) {
    ShardingProblem problem =
        randomProblem(random, random.between(2, 7), 4, 0.3, 0.25);
    expectOptimal(problem, "forbidden #" + std::to_string(i));
    finite += std::isfinite(solveShardingProblem(problem).objective);
  }
  // Both outcomes happen.
  EXPECT_GT(finite, 10);
  EXPECT_LT(finite, 190);
}

TEST(ShardingSolverTest, PairwiseTablesOfOnePairAreSummed) {
  ShardingProblem problem;
  unsigned a = problem.addVariable({0, 0});
  unsigned b = problem.addVariable({0, 0, 0});
  // (a, b) and then (b, a): one table, a's labels major.
  problem.addPairwiseCosts(a, b, {1, 2, 3, 4, 5, 6});
  problem.addPairwiseCosts(b, a, {10, 20, 30, 40, 50, 60});
  ASSERT_EQ(problem.getPairwiseCosts().size(), 1u);
  EXPECT_EQ(problem.evaluate({0, 0}), 1 + 10);
  EXPECT_EQ(problem.evaluate({0, 2}), 3 + 50);
  EXPECT_EQ(problem.evaluate({1, 1}), 5 + 40);
  problem.addUnaryCosts(b, {7, 8, 9});
  EXPECT_EQ(problem.evaluate({1, 2}), 6 + 60 + 9);
  EXPECT_EQ(problem.getTotalLabels(), 5u);
  EXPECT_EQ(problem.getMaxLabels(), 3u);
  SolverResult solved = solveShardingProblem(problem);
  EXPECT_EQ(solved.labels, (std::vector<unsigned>{0, 0}));
  EXPECT_EQ(solved.objective, 18);
}

TEST(ShardingSolverTest, LongChainMatchesDynamicProgram) {
  // 5,000 variables of 16 labels in a chain: the Viterbi recursion is the
  // reference.
  Random random(4);
  unsigned n = 5000, labels = 16;
  ShardingProblem problem;
  std::vector<std::vector<double>> unary(n), tables(n);
  for (unsigned var = 0; var < n; ++var) {
    unary[var].resize(labels);
    for (double &c : unary[var])
      c = random.unit();
    problem.addVariable(unary[var]);
    if (var == 0)
      continue;
    tables[var].resize(labels * labels);
    for (double &c : tables[var])
      c = random.unit();
    problem.addPairwiseCosts(var - 1, var, tables[var]);
  }
  std::vector<double> best = unary[0];
  for (unsigned var = 1; var < n; ++var) {
    std::vector<double> next(labels, kInf);
    for (unsigned j = 0; j < labels; ++j)
      for (unsigned i = 0; i < labels; ++i)
        next[j] = std::min(next[j], best[i] + tables[var][i * labels + j]);
    for (unsigned j = 0; j < labels; ++j)
      next[j] += unary[var][j];
    best = next;
  }
  double optimum = *std::min_element(best.begin(), best.end());
  SolverResult solved = solveShardingProblem(problem);
  EXPECT_TRUE(solved.provenOptimal);
  EXPECT_NEAR(solved.objective, optimum, 1e-9 * optimum);
  EXPECT_EQ(solved.largestFactorEntries, labels);
  EXPECT_EQ(solved.numEliminated, n);
}

TEST(ShardingSolverTest, FallbackPastTheCapIsConsistent) {
  // Dense problems whose first elimination already needs more than 4
  // entries: local search from the start, never better than the optimum.
  Random random(5);
  SolverOptions options;
  options.maxFactorEntries = 4;
  for (int i = 0; i < 50; ++i) {
    ShardingProblem problem = randomProblem(random, 7, 4, 0.9, 0.0);
    // At least three labels each, so every variable has a big neighbourhood.
    ShardingProblem dense;
    for (unsigned var = 0; var < problem.getNumVariables(); ++var) {
      std::vector<double> unary(problem.getUnaryCosts(var).begin(),
                                problem.getUnaryCosts(var).end());
      while (unary.size() < 3)
        unary.push_back(random.unit() * 10);
      dense.addVariable(unary);
    }
    for (unsigned a = 0; a < 7; ++a)
      for (unsigned b = a + 1; b < 7; ++b) {
        std::vector<double> table(dense.getNumLabels(a) *
                                  dense.getNumLabels(b));
        for (double &c : table)
          c = random.unit() * 10;
        dense.addPairwiseCosts(a, b, table);
      }
    SolverResult solved = solveShardingProblem(dense, options);
    std::optional<SolverResult> reference = solveExhaustive(dense);
    ASSERT_TRUE(reference);
    EXPECT_FALSE(solved.provenOptimal);
    EXPECT_TRUE(sameCost(solved.objective, dense.evaluate(solved.labels)));
    EXPECT_GE(solved.objective, reference->objective * (1 - kTolerance));
    EXPECT_LE(solved.lowerBound, reference->objective * (1 + kTolerance));
    // Local search ends in a local minimum: no single change improves.
    std::vector<unsigned> labels = solved.labels;
    for (unsigned var = 0; var < 7; ++var)
      for (unsigned label = 0; label < dense.getNumLabels(var); ++label) {
        std::vector<unsigned> changed = labels;
        changed[var] = label;
        EXPECT_GE(dense.evaluate(changed), solved.objective * (1 - kTolerance));
      }
  }
}

TEST(ShardingSolverTest, ExhaustiveHonoursItsCap) {
  ShardingProblem problem;
  for (int var = 0; var < 30; ++var)
    problem.addVariable({0, 1});
  EXPECT_FALSE(solveExhaustive(problem, 1000));
  ShardingProblem small;
  small.addVariable({3, 1, 2});
  small.addVariable({1, 1});
  std::optional<SolverResult> solved = solveExhaustive(small, 6);
  ASSERT_TRUE(solved);
  // Ties go to the lexicographically first labelling.
  EXPECT_EQ(solved->labels, (std::vector<unsigned>{1, 0}));
  EXPECT_EQ(solved->objective, 2);
}

//===----------------------------------------------------------------------===//
// The MLIR adapter on random dnn graphs
//===----------------------------------------------------------------------===//

/// Writes a random `@main` of `dnn` ops on a random mesh as MLIR text.
class GraphWriter {
public:
  GraphWriter(Random &random, unsigned numMeshAxes, int64_t numOps)
      : random(random) {
    elementType = random.chance(0.3) ? "f16" : "f32";
    std::string mesh = "dist.mesh @mesh [";
    for (unsigned i = 0; i < numMeshAxes; ++i) {
      int64_t size = random.between(2, 4);
      mesh += (i ? ", \"" : "\"") + std::string(i ? "y" : "x") +
              "\" = " + std::to_string(size) +
              (random.chance(0.5) ? " : intra" : " : inter");
    }
    header = mesh + "]\n";
    // One or two graph inputs.
    addArgument(randomShape(random.between(2, 3)), /*weight=*/false);
    if (random.chance(0.4))
      addArgument(randomShape(random.between(2, 3)), /*weight=*/false);
    for (int64_t i = 0; i < numOps; ++i)
      addOp();
  }

  /// Returns the module.
  std::string getText() const {
    std::string text =
        header + "func.func @main(" + llvm::join(arguments, ", ") + ") -> (";
    SmallVector<std::string> types, names;
    types.push_back(typeOf(values.back().shape));
    names.push_back(values.back().name);
    if (values.size() > 2 && returnSecond) {
      const Value &other = values[values.size() / 2];
      types.push_back(typeOf(other.shape));
      names.push_back(other.name);
    }
    text += llvm::join(types, ", ") + ") {\n" + body + "  return " +
            llvm::join(names, ", ") + " : " + llvm::join(types, ", ") + "\n}\n";
    return text;
  }

private:
  /// A value and its shape.
  struct Value {
    std::string name;
    SmallVector<int64_t> shape;
  };

  /// Returns a random dimension: mostly multiples of many mesh sizes.
  int64_t randomDim() {
    static const int64_t dims[] = {32, 48, 64, 96, 128, 192, 256, 384, 7, 12};
    return dims[random.below(random.chance(0.9) ? 8 : 10)];
  }
  /// Returns a random shape of rank `rank`.
  SmallVector<int64_t> randomShape(int64_t rank) {
    SmallVector<int64_t> shape;
    for (int64_t i = 0; i < rank; ++i)
      shape.push_back(randomDim());
    return shape;
  }
  /// Returns the tensor type of `shape`.
  std::string typeOf(ArrayRef<int64_t> shape) const {
    std::string text = "tensor<";
    for (int64_t dim : shape)
      text += std::to_string(dim) + "x";
    return text + elementType + ">";
  }
  /// Adds an argument (a weight when `weight`) and returns it.
  Value addArgument(SmallVector<int64_t> shape, bool weight) {
    Value value{"%a" + std::to_string(arguments.size()), shape};
    arguments.push_back(value.name + ": " + typeOf(shape) +
                        (weight ? " {dnn.weight_ref}" : ""));
    if (!weight)
      values.push_back(value);
    return value;
  }
  /// Returns a random value computed so far (graph inputs included).
  const Value &pick() { return values[random.below(values.size())]; }
  /// Appends `%vN = <text> : <types>` with result shape `shape`.
  void emit(const std::string &text, SmallVector<int64_t> shape) {
    std::string name = "%v" + std::to_string(counter++);
    body += "  " + name + " = " + text + "\n";
    values.push_back({name, std::move(shape)});
  }
  /// Appends one random op.
  void addOp() {
    Value x = pick();
    std::string tx = typeOf(x.shape);
    int64_t rank = x.shape.size();
    switch (random.below(9)) {
    case 0:
    case 1: {
      // x @ W with a new weight, or x @ y with a value of matching shape.
      for (const Value &y : values)
        if (rank == 2 && y.shape.size() == 2 && y.shape[0] == x.shape[1] &&
            random.chance(0.5)) {
          SmallVector<int64_t> shape = {x.shape[0], y.shape[1]};
          emit("dnn.matmul " + x.name + ", " + y.name + " : (" + tx + ", " +
                   typeOf(y.shape) + ") -> " + typeOf(shape),
               shape);
          return;
        }
      SmallVector<int64_t> wShape = {x.shape.back(), randomDim()};
      Value w = addArgument(wShape, /*weight=*/true);
      SmallVector<int64_t> shape = x.shape;
      shape.back() = wShape[1];
      emit("dnn.matmul " + x.name + ", " + w.name + " : (" + tx + ", " +
               typeOf(wShape) + ") -> " + typeOf(shape),
           shape);
      return;
    }
    case 2:
    case 3: {
      static const char *binary[] = {"add", "mul", "sub"};
      std::string op = binary[random.below(3)];
      std::string y;
      for (const Value &other : values)
        if (other.shape == x.shape && other.name != x.name &&
            random.chance(0.5))
          y = other.name;
      if (y.empty() && random.chance(0.5)) {
        // A bias over the last dim.
        Value bias = addArgument({x.shape.back()}, /*weight=*/true);
        emit("dnn.broadcast_in_dim " + bias.name + ", dims = [" +
                 std::to_string(rank - 1) + "] : " + typeOf(bias.shape) +
                 " -> " + tx,
             x.shape);
        y = values.back().name;
      }
      if (y.empty())
        y = x.name;
      emit("dnn." + op + " " + x.name + ", " + y + " : " + tx, x.shape);
      return;
    }
    case 4: {
      static const char *unary[] = {"relu", "tanh", "exp"};
      emit("dnn." + std::string(unary[random.below(3)]) + " " + x.name + " : " +
               tx,
           x.shape);
      return;
    }
    case 5: {
      SmallVector<int64_t> perm;
      for (int64_t i = 0; i < rank; ++i)
        perm.push_back(i);
      std::swap(perm[random.below(rank)], perm[rank - 1]);
      if (perm[rank - 1] == rank - 1)
        std::swap(perm[0], perm[rank - 1]);
      SmallVector<int64_t> shape;
      for (int64_t p : perm)
        shape.push_back(x.shape[p]);
      emit(
          "dnn.transpose " + x.name + ", permutation = [" +
              llvm::join(llvm::map_range(
                             perm, [](int64_t p) { return std::to_string(p); }),
                         ", ") +
              "] : " + tx + " -> " + typeOf(shape),
          shape);
      return;
    }
    case 6: {
      // Reduce one axis (every value keeps a rank of 2 or more).
      int64_t axis = random.below(rank);
      bool keep = rank == 2 || random.chance(0.5);
      SmallVector<int64_t> shape = x.shape;
      if (keep)
        shape[axis] = 1;
      else
        shape.erase(shape.begin() + axis);
      std::string op = random.chance(0.5) ? "reduce_sum" : "reduce_max";
      emit("dnn." + op + " " + x.name + " axes = [" + std::to_string(axis) +
               "] keep_dims = " + (keep ? "true" : "false") + " : " + tx +
               " -> " + typeOf(shape),
           shape);
      return;
    }
    case 7: {
      // Split the last dim in two, or merge the last two.
      SmallVector<int64_t> shape = x.shape;
      int64_t last = shape.back();
      if (rank >= 3) {
        int64_t merged = shape[rank - 2] * last;
        shape.pop_back();
        shape.back() = merged;
      } else {
        if (last % 4 != 0)
          break;
        shape.back() = 4;
        shape.insert(shape.end() - 1, last / 4);
      }
      emit("dnn.reshape " + x.name + " : " + tx + " -> " + typeOf(shape),
           shape);
      return;
    }
    default:
      emit("dnn.softmax " + x.name + " axis = " + std::to_string(rank - 1) +
               " : " + tx,
           x.shape);
      return;
    }
    emit("dnn.relu " + x.name + " : " + tx, x.shape);
  }

  Random &random;
  std::string elementType;
  std::string header;
  SmallVector<std::string> arguments;
  std::string body;
  std::vector<Value> values;
  int counter = 0;
  bool returnSecond = false;

public:
  /// Also returns a value from the middle of the graph.
  void setReturnSecond(bool enable) { returnSecond = enable; }
};

/// Fixture: a context with the dialects the tests parse and run.
class SearchShardingsTest : public ::testing::Test {
protected:
  SearchShardingsTest() {
    context
        .loadDialect<dnn::DnnDialect, dist::DistDialect, func::FuncDialect>();
  }

  /// Parses `source`, failing the test if it does not parse.
  OwningOpRef<ModuleOp> parse(llvm::StringRef source) {
    OwningOpRef<ModuleOp> module =
        parseSourceString<ModuleOp>(source, &context);
    EXPECT_TRUE(module) << "could not parse:\n" << source.str();
    return module;
  }

  /// Returns the cost model of the preset `name` in `mode`.
  static CostModel getModel(const std::string &name, Mode mode) {
    std::string error;
    std::optional<Cluster> cluster = loadCluster(name, error);
    EXPECT_TRUE(cluster) << error;
    return CostModel(*cluster, mode);
  }

  MLIRContext context;
};

/// What one random graph showed.
struct GraphOutcome {
  /// False when its problem was too large to enumerate.
  bool checked = false;
  /// True when the optimum splits something.
  bool split = false;
  /// True when the optimum is strictly cheaper than replicating everything.
  bool beatsReplicated = false;
  /// Reshards in the materialized function.
  int64_t reshards = 0;
};

/// The most labellings a random graph's problem may have.
constexpr uint64_t kMaxAssignments = 10000000;

/// Solves the problem of `text` both ways, applies the solver's labels and
/// checks the result; see the file comment.
static GraphOutcome checkGraph(MLIRContext &context, const std::string &text,
                               const CostModel &model, double memoryWeight) {
  GraphOutcome outcome;
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(text, &context);
  EXPECT_TRUE(module) << text;
  if (!module)
    return outcome;
  FailureOr<dist::ShardingTarget> target = dist::getShardingTarget(*module);
  EXPECT_TRUE(succeeded(target) && *target);
  func::FuncOp func = target->func;
  dist::MeshOp mesh = target->mesh;
  FailureOr<std::unique_ptr<OpShardingProblem>> built =
      OpShardingProblem::build(func, mesh, model, {}, memoryWeight);
  EXPECT_TRUE(succeeded(built)) << text;
  if (failed(built))
    return outcome;
  const ShardingProblem &problem = (*built)->getProblem();
  std::optional<SolverResult> reference =
      solveExhaustive(problem, kMaxAssignments);
  if (!reference)
    return outcome;
  outcome.checked = true;
  SolverResult solved = solveShardingProblem(problem);
  EXPECT_TRUE(solved.provenOptimal);
  // Within 1% of the enumeration: both are exact, so equal.
  EXPECT_LE(solved.objective, reference->objective * 1.01) << text;
  EXPECT_TRUE(sameCost(solved.objective, reference->objective))
      << "solver " << solved.objective << ", exhaustive "
      << reference->objective << "\n"
      << text;
  EXPECT_TRUE(std::isfinite(solved.objective)) << text;
  // Label 0 of every variable is the unsplit one.
  std::vector<unsigned> replicated(problem.getNumVariables(), 0);
  outcome.split = solved.labels != replicated;
  outcome.beatsReplicated =
      solved.objective < problem.evaluate(replicated) * (1 - 1e-6);

  // Materialize and price the result from its IR alone.
  FailureOr<int64_t> reshards = (*built)->apply(solved.labels);
  EXPECT_TRUE(succeeded(reshards)) << text;
  if (failed(reshards))
    return outcome;
  outcome.reshards = *reshards;
  double priced = evaluateOpShardings(func, mesh, model, memoryWeight);
  EXPECT_TRUE(sameCost(priced, solved.objective))
      << "materialized " << priced << ", solver " << solved.objective << "\n"
      << text;
  // Every value carries a sharding.
  func.walk([&](Operation *op) {
    if (op == func.getOperation() || isa<func::ReturnOp>(op))
      return;
    for (mlir::Value result : op->getResults())
      EXPECT_TRUE(dist::getStoredSharding(result))
          << "no sharding on " << op->getName().getStringRef().str();
  });
  for (BlockArgument arg : func.getArguments())
    EXPECT_TRUE(dist::getStoredSharding(arg));

  // The partitioner takes it.
  PassManager pm(&context);
  pm.addPass(dist::createCheckShardingsPass());
  pm.addPass(dist::createPartitionPass());
  std::string diagnostics;
  {
    ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
      diagnostics += diag.str() + "\n";
      return success();
    });
    EXPECT_TRUE(succeeded(pm.run(*module)))
        << diagnostics << "after the search:\n"
        << text;
  }
  return outcome;
}

TEST_F(SearchShardingsTest, RandomGraphsMatchExhaustive) {
  Random random(2026);
  int graphs = 0, twoAxes = 0, large = 0, split = 0, better = 0;
  int64_t reshards = 0;
  for (int attempt = 0; attempt < 600 && graphs < 32; ++attempt) {
    unsigned numAxes = random.chance(0.4) ? 2 : 1;
    int64_t numOps =
        numAxes == 2 ? random.between(3, 5) : random.between(3, 10);
    GraphWriter writer(random, numAxes, numOps);
    writer.setReturnSecond(random.chance(0.3));
    std::string text = writer.getText();
    std::string cluster = random.chance(0.5) ? "h100x8" : "a100-80g-x2nodes";
    double memoryWeight = random.chance(0.3) ? 1e-12 : 0.0;
    bool checked = true;
    for (Mode mode : {Mode::Infer, Mode::Train}) {
      SCOPED_TRACE(text + "\ncluster " + cluster +
                   (mode == Mode::Train ? ", train" : ", infer") +
                   ", memory weight " + std::to_string(memoryWeight));
      GraphOutcome outcome =
          checkGraph(context, text, getModel(cluster, mode), memoryWeight);
      if (!outcome.checked) {
        checked = false;
        break;
      }
      split += outcome.split;
      better += outcome.beatsReplicated;
      reshards += outcome.reshards;
    }
    if (!checked)
      continue;
    ++graphs;
    twoAxes += numAxes == 2;
    large += numOps >= 6;
  }
  // Enough graphs of every kind, and optima that are not trivial.
  EXPECT_GE(graphs, 32);
  EXPECT_GE(twoAxes, 6);
  EXPECT_GE(large, 6);
  EXPECT_GE(split, graphs);
  EXPECT_GE(better, graphs);
  EXPECT_GT(reshards, 0);
}

/// A two-layer MLP on a 2 x 4 mesh, for the tests below.
static const char *kMlp = R"mlir(
dist.mesh @mesh ["dp" = 2 : inter, "tp" = 4 : intra]
func.func @main(%x: tensor<16x128x256xf32>,
    %w1: tensor<256x1024xf32> {dnn.weight_ref},
    %b1: tensor<1024xf32> {dnn.weight_ref},
    %w2: tensor<1024x256xf32> {dnn.weight_ref}) -> tensor<16x128x256xf32> {
  %h = dnn.matmul %x, %w1 : (tensor<16x128x256xf32>, tensor<256x1024xf32>) -> tensor<16x128x1024xf32>
  %bb = dnn.broadcast_in_dim %b1, dims = [2] : tensor<1024xf32> -> tensor<16x128x1024xf32>
  %hb = dnn.add %h, %bb : tensor<16x128x1024xf32>
  %g = dnn.relu %hb : tensor<16x128x1024xf32>
  %y = dnn.matmul %g, %w2 : (tensor<16x128x1024xf32>, tensor<1024x256xf32>) -> tensor<16x128x256xf32>
  %r = dnn.add %x, %y : tensor<16x128x256xf32>
  return %r : tensor<16x128x256xf32>
}
)mlir";

TEST_F(SearchShardingsTest, SearchingOneAxisKeepsTheOthers) {
  OwningOpRef<ModuleOp> module = parse(kMlp);
  ASSERT_TRUE(module);
  // Data parallelism from propagation, then tensor parallelism searched.
  ASSERT_TRUE(succeeded(dist::propagateShardings(*module, "dp", "", false)));
  auto func = module->lookupSymbol<func::FuncOp>("main");
  dist::MeshOp mesh = *module->getOps<dist::MeshOp>().begin();
  llvm::DenseMap<Operation *, SmallVector<dist::ShardingAttr>> before;
  func.walk([&](Operation *op) {
    if (dnn::getShardingRule(op))
      before[op] =
          llvm::map_to_vector(op->getResults(), dist::getStoredSharding);
  });
  dist::ShardingAttr input = dist::getStoredSharding(func.getArgument(0));
  ASSERT_TRUE(input && input.usesAxis("dp"));

  StringAttr tp = StringAttr::get(&context, "tp");
  CostModel model = getModel("h100x8", Mode::Train);
  FailureOr<SearchShardingsResult> result =
      searchOpShardings(func, mesh, model, {tp});
  ASSERT_TRUE(succeeded(result));
  EXPECT_TRUE(result->provenOptimal);
  EXPECT_TRUE(
      sameCost(result->objective, evaluateOpShardings(func, mesh, model)));
  // The input is a pin; every op keeps its dp split.
  EXPECT_EQ(dist::getStoredSharding(func.getArgument(0)), input);
  bool usesTp = false;
  for (auto &[op, shardings] : before)
    for (auto [index, old] : llvm::enumerate(shardings)) {
      dist::ShardingAttr now = dist::getStoredSharding(op->getResult(index));
      ASSERT_TRUE(now);
      usesTp |= now.usesAxis("tp");
      for (unsigned dim = 0; dim < now.getRank(); ++dim) {
        SmallVector<StringAttr> kept;
        for (StringAttr axis : now.getDimAxes(dim))
          if (axis != tp)
            kept.push_back(axis);
        EXPECT_EQ(ArrayRef<StringAttr>(kept), old.getDimAxes(dim))
            << "dim " << dim << " of " << op->getName().getStringRef().str();
      }
    }
  // Training replicated weights costs gradient all-reduces: tp is used.
  EXPECT_TRUE(usesTp);
  // Weights are split over tp: Megatron's column and row splits.
  EXPECT_EQ(dist::getStoredSharding(func.getArgument(1)).getDimAxes(1),
            ArrayRef<StringAttr>(tp));
  EXPECT_EQ(dist::getStoredSharding(func.getArgument(3)).getDimAxes(0),
            ArrayRef<StringAttr>(tp));
  // Searching again finds the same objective (earlier reshards dropped).
  FailureOr<SearchShardingsResult> again =
      searchOpShardings(func, mesh, model, {tp});
  ASSERT_TRUE(succeeded(again));
  EXPECT_TRUE(sameCost(again->objective, result->objective));
}

TEST_F(SearchShardingsTest, MemoryWeightTradesTimeForMemory) {
  // In inference without a memory weight, replicated weights cost nothing;
  // with a high one the weights are split.
  auto weightShards = [&](double memoryWeight) {
    OwningOpRef<ModuleOp> module = parse(kMlp);
    auto func = module->lookupSymbol<func::FuncOp>("main");
    dist::MeshOp mesh = *module->getOps<dist::MeshOp>().begin();
    SearchShardingsOptions options;
    options.memoryWeight = memoryWeight;
    EXPECT_TRUE(succeeded(searchOpShardings(
        func, mesh, getModel("h100x8", Mode::Infer), {}, options)));
    int64_t shards = 0;
    for (unsigned i = 1; i < 4; ++i)
      shards += mesh.getGroupSize(
          dist::getStoredSharding(func.getArgument(i)).getUsedAxes());
    return shards;
  };
  EXPECT_EQ(weightShards(0), 3);
  EXPECT_EQ(weightShards(1e-3), 3 * 8);
}

TEST_F(SearchShardingsTest, BadAxesAreReported) {
  OwningOpRef<ModuleOp> module = parse(kMlp);
  auto func = module->lookupSymbol<func::FuncOp>("main");
  dist::MeshOp mesh = *module->getOps<dist::MeshOp>().begin();
  CostModel model = getModel("h100x8", Mode::Infer);
  std::string diagnostics;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    diagnostics += diag.str() + "\n";
    return success();
  });
  EXPECT_TRUE(failed(
      searchOpShardings(func, mesh, model, {StringAttr::get(&context, "pp")})));
  EXPECT_NE(diagnostics.find("mesh @mesh has no axis 'pp' to search"),
            std::string::npos)
      << diagnostics;
  diagnostics.clear();
  StringAttr tp = StringAttr::get(&context, "tp");
  EXPECT_TRUE(failed(searchOpShardings(func, mesh, model, {tp, tp})));
  EXPECT_NE(diagnostics.find("named twice"), std::string::npos) << diagnostics;
  diagnostics.clear();
  SearchShardingsOptions options;
  options.memoryWeight = -1;
  EXPECT_TRUE(failed(searchOpShardings(func, mesh, model, {}, options)));
  EXPECT_NE(diagnostics.find("memory weight"), std::string::npos)
      << diagnostics;
}

} // namespace
