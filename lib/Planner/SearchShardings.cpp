//===- SearchShardings.cpp - Per-op shardings from the cost model --------===//
//
// Part of the dnnc project.
//
//===----------------------------------------------------------------------===//
//
// Implements `dnnc-search-shardings`: the labelling problem of a function's
// per-op shardings (OpShardingProblem), its solution with the exact solver
// and its application through materializeShardings (searchOpShardings),
// and the re-evaluation of a materialized function with the same objective
// (evaluateOpShardings).
//
//===----------------------------------------------------------------------===//

#include "dnnc/Planner/SearchShardings.h"
#include "dnnc/Dialect/Dist/IR/DistDialect.h"
#include "dnnc/Dialect/Dnn/IR/DnnCost.h"
#include "dnnc/Dialect/Dnn/Transforms/Passes.h"
#include "dnnc/Planner/Passes.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Debug.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cmath>
#include <tuple>

#define DEBUG_TYPE "dnnc-search-shardings"

namespace dnnc::planner {
#define GEN_PASS_DEF_SEARCHSHARDINGSPASS
#include "dnnc/Planner/Passes.h.inc"
} // namespace dnnc::planner

using namespace mlir;
using namespace dnnc;
using namespace dnnc::planner;

/// Returns the seconds since `start`.
static double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

/// Returns the bytes of the local block of a value of type `type` laid out
/// as `sharding` on `mesh`.
static double getLocalBytes(Type type, dist::ShardingAttr sharding,
                            dist::MeshOp mesh) {
  auto tensor = cast<RankedTensorType>(type);
  double elements = 1;
  for (int64_t extent : sharding.getLocalShape(tensor.getShape(), mesh))
    elements *= static_cast<double>(extent);
  return elements * dnn::getElementBytes(tensor.getElementType());
}

/// Returns the seconds of an all-reduce of `bytes` per device over `axes`.
static double getAllReduceTime(const CostModel &model, dist::MeshOp mesh,
                               double bytes, ArrayRef<StringAttr> axes) {
  return model.getCollectiveTime(CollectiveKind::AllReduce, bytes,
                                 mesh.getGroupSize(axes),
                                 model.getLink(mesh, axes));
}

/// Returns the seconds of the training all-reduce of the gradient of a
/// weight of type `type` laid out as `sharding`: over the mesh axes of size
/// > 1 it does not use (0 in inference).
static double getGradientTime(const CostModel &model, dist::MeshOp mesh,
                              Type type, dist::ShardingAttr sharding) {
  if (model.getMode() != Mode::Train)
    return 0;
  SmallVector<StringAttr> axes;
  for (unsigned i = 0, e = mesh.getNumAxes(); i < e; ++i) {
    dist::MeshAxisAttr axis = mesh.getAxis(i);
    if (axis.getSize() > 1 && !sharding.usesAxis(axis.getName().getValue()))
      axes.push_back(axis.getName());
  }
  if (axes.empty())
    return 0;
  return getAllReduceTime(model, mesh, getLocalBytes(type, sharding, mesh),
                          axes);
}

/// Returns the seconds of a weight of type `type` laid out as `sharding`
/// that do not depend on other values: its gradient all-reduce and
/// `memoryWeight` times the bytes it takes.
static double getWeightCost(const CostModel &model, dist::MeshOp mesh,
                            Type type, dist::ShardingAttr sharding,
                            double memoryWeight) {
  double cost = getGradientTime(model, mesh, type, sharding);
  if (memoryWeight != 0)
    cost +=
        memoryWeight * model.getWeightMemory(
                           getLocalBytes(type, sharding, mesh),
                           dnn::getElementBytes(
                               cast<RankedTensorType>(type).getElementType()));
  return cost;
}

/// Returns the seconds of `op` computing with factor sharding `fs`: on its
/// local blocks, with the all-reduces of its pending reductions, plus
/// `memoryWeight` times the bytes of its local results.
static double getOpCost(const CostModel &model, dist::MeshOp mesh,
                        Operation *op, const dist::FactorSharding &fs,
                        double memoryWeight) {
  int64_t shards = 1;
  for (int64_t f = 0, e = fs.getRule().getNumFactors(); f < e; ++f)
    shards *= fs.getNumShards(f);
  double cost = model.getOpTime(op, shards);
  double bytes = 0;
  for (OpResult result : op->getResults()) {
    double local = getLocalBytes(
        result.getType(), fs.getResultSharding(result.getResultNumber()), mesh);
    bytes += local;
    for (auto &[kind, axes] : fs.getPendingReductions(result.getResultNumber()))
      cost += getAllReduceTime(model, mesh, local, axes);
  }
  return cost + memoryWeight * bytes;
}

/// Returns the first value of the chain of `dist.reshard`s ending in
/// `value` (`value` itself when it is not a reshard's result).
static Value lookThroughReshards(Value value) {
  while (auto reshard = value.getDefiningOp<dist::ReshardOp>())
    value = reshard.getInput();
  return value;
}

/// Returns true if `axis` is in `axes`.
static bool contains(ArrayRef<StringAttr> axes, StringAttr axis) {
  return llvm::is_contained(axes, axis);
}

/// Returns the factor sharding `op` has on the axes outside `searched`:
/// read off the stored shardings of its operands (the layouts it computes
/// with, after an earlier materialization) and results.
static dist::FactorSharding
getBaseFactorSharding(Operation *op, dnn::ShardingRuleAttr rule,
                      dist::MeshOp mesh, ArrayRef<StringAttr> searched) {
  dist::FactorSharding stored =
      dist::getStoredFactorSharding(op, rule, mesh);
  dist::FactorSharding base(rule, mesh);
  SmallVector<std::pair<int64_t, SmallVector<StringAttr>>> pending;
  for (int64_t f = 0, e = rule.getNumFactors(); f < e; ++f) {
    SmallVector<StringAttr> kept;
    for (StringAttr axis : stored.getAxes(f))
      if (!contains(searched, axis))
        kept.push_back(axis);
    if (!kept.empty())
      pending.push_back({f, std::move(kept)});
  }
  // A factor may only be split once the factors major to it in a shared
  // dimension are: retry until nothing more fits.
  bool progress = true;
  while (progress && !pending.empty()) {
    progress = false;
    for (auto *it = pending.begin(); it != pending.end();) {
      if (base.trySplit(it->first, it->second)) {
        it = pending.erase(it);
        progress = true;
      } else {
        ++it;
      }
    }
  }
  return base;
}

/// Returns every factor sharding that adds to `base`, for each axis of
/// `axes` in order, a split of one factor or nothing.
static std::vector<dist::FactorSharding>
enumerateFactorShardings(const dist::FactorSharding &base,
                         ArrayRef<StringAttr> axes) {
  std::vector<dist::FactorSharding> labels = {base};
  for (StringAttr axis : axes) {
    std::vector<dist::FactorSharding> next;
    for (const dist::FactorSharding &fs : labels) {
      next.push_back(fs);
      for (int64_t f = 0, e = fs.getRule().getNumFactors(); f < e; ++f) {
        dist::FactorSharding split = fs;
        if (split.trySplit(f, {axis}))
          next.push_back(std::move(split));
      }
    }
    labels = std::move(next);
  }
  return labels;
}

/// Returns every sharding of a value of type `type` that adds to the dims
/// of `base`, for each axis of `axes` in order, a split of one dim (where
/// the dim stays divisible) or nothing.
static std::vector<dist::ShardingAttr>
enumerateTensorShardings(RankedTensorType type, dist::ShardingAttr base,
                         ArrayRef<StringAttr> axes, dist::MeshOp mesh) {
  using Dims = SmallVector<SmallVector<StringAttr>>;
  Dims start;
  for (int64_t dim = 0, e = type.getRank(); dim < e; ++dim)
    start.emplace_back(base.getDimAxes(dim));
  std::vector<Dims> labels = {start};
  for (StringAttr axis : axes) {
    int64_t size = mesh.getAxisSize(axis);
    std::vector<Dims> next;
    for (const Dims &dims : labels) {
      next.push_back(dims);
      for (int64_t dim = 0, e = type.getRank(); dim < e; ++dim) {
        int64_t extent = type.getDimSize(dim);
        if (ShapedType::isDynamic(extent))
          continue;
        int64_t shards = mesh.getGroupSize(dims[dim]) * size;
        if (extent % shards != 0)
          continue;
        Dims split = dims;
        split[dim].push_back(axis);
        next.push_back(std::move(split));
      }
    }
    labels = std::move(next);
  }
  MLIRContext *context = type.getContext();
  std::vector<dist::ShardingAttr> shardings;
  for (const Dims &dims : labels) {
    SmallVector<dist::AxisListAttr> lists =
        llvm::map_to_vector(dims, [&](const SmallVector<StringAttr> &dimAxes) {
          return dist::AxisListAttr::get(context, dimAxes);
        });
    shardings.push_back(dist::ShardingAttr::get(context, base.getMesh(), lists,
                                                ArrayRef<StringAttr>()));
  }
  return shardings;
}

/// Returns `sharding` without the axes of `searched` (and without partial
/// axes).
static dist::ShardingAttr withoutAxes(dist::ShardingAttr sharding,
                                      ArrayRef<StringAttr> searched) {
  MLIRContext *context = sharding.getContext();
  SmallVector<dist::AxisListAttr> dims;
  for (int64_t dim = 0, e = sharding.getRank(); dim < e; ++dim) {
    SmallVector<StringAttr> kept;
    for (StringAttr axis : sharding.getDimAxes(dim))
      if (!contains(searched, axis))
        kept.push_back(axis);
    dims.push_back(dist::AxisListAttr::get(context, kept));
  }
  return dist::ShardingAttr::get(context, sharding.getMesh(), dims,
                                 ArrayRef<StringAttr>());
}

namespace {
/// Prices reshards with a cache: transformer layers repeat the same types
/// and layouts.
class ReshardPricer {
public:
  ReshardPricer(const CostModel &model, dist::MeshOp mesh)
      : model(model), mesh(mesh) {}

  /// Returns `CostModel::getReshardTime(type, from, to, mesh)`.
  double get(Type type, dist::ShardingAttr from, dist::ShardingAttr to) {
    if (from == to)
      return 0;
    auto [it, inserted] = cache.try_emplace({type, from, to}, 0.0);
    if (inserted)
      it->second =
          model.getReshardTime(cast<RankedTensorType>(type), from, to, mesh);
    return it->second;
  }

private:
  const CostModel &model;
  dist::MeshOp mesh;
  llvm::DenseMap<std::tuple<Type, Attribute, Attribute>, double> cache;
};
} // namespace

//===----------------------------------------------------------------------===//
// OpShardingProblem
//===----------------------------------------------------------------------===//

FailureOr<std::unique_ptr<OpShardingProblem>>
OpShardingProblem::build(func::FuncOp func, dist::MeshOp mesh,
                         const CostModel &model,
                         ArrayRef<StringAttr> searchAxes, double memoryWeight) {
  MLIRContext *context = func.getContext();
  if (!(memoryWeight >= 0) || std::isinf(memoryWeight))
    return func.emitError("the memory weight must be a finite number >= 0, "
                          "not ")
           << memoryWeight;
  // The searched axes; those of size 1 split nothing and get no labels.
  SmallVector<StringAttr> searched(searchAxes.begin(), searchAxes.end());
  if (searched.empty())
    for (unsigned i = 0, e = mesh.getNumAxes(); i < e; ++i)
      searched.push_back(mesh.getAxis(i).getName());
  for (auto [index, axis] : llvm::enumerate(searched)) {
    if (!mesh.hasAxis(axis.getValue()))
      return mesh.emitError("mesh @") << mesh.getSymName() << " has no axis '"
                                      << axis.getValue() << "' to search";
    if (llvm::is_contained(ArrayRef(searched).take_front(index), axis))
      return mesh.emitError("mesh axis '")
             << axis.getValue() << "' is named twice in the searched axes";
  }
  SmallVector<StringAttr> splitting;
  for (StringAttr axis : searched)
    if (mesh.getAxisSize(axis.getValue()) > 1)
      splitting.push_back(axis);

  auto result =
      std::unique_ptr<OpShardingProblem>(new OpShardingProblem(func, mesh));
  OpShardingProblem &self = *result;
  ReshardPricer pricer(model, mesh);
  auto meshRef = FlatSymbolRefAttr::get(mesh.getSymNameAttr());
  // The variable and result index of each value.
  llvm::DenseMap<Value, std::pair<unsigned, unsigned>> sources;
  Block &body = func.getBody().front();

  // Arguments.
  for (BlockArgument arg : body.getArguments()) {
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    if (!type)
      return func.emitError("argument #")
             << arg.getArgNumber() << " is not a ranked tensor";
    bool weight = dnn::isWeightArgument(func, arg.getArgNumber());
    dist::ShardingAttr stored = dist::getStoredSharding(arg);
    if (stored && failed(dist::verifyShardingForType(stored, mesh, type, [&]() {
          return func.emitError("argument #") << arg.getArgNumber() << ": ";
        })))
      return failure();
    std::vector<dist::ShardingAttr> labels;
    if (stored && !weight)
      labels = {stored};
    else
      labels = enumerateTensorShardings(
          type,
          stored ? withoutAxes(stored, searched)
                 : dist::ShardingAttr::getReplicated(context, meshRef,
                                                     type.getRank()),
          splitting, mesh);
    Variable variable;
    variable.arg = arg;
    SmallVector<double> costs;
    for (dist::ShardingAttr sharding : labels) {
      variable.results.push_back({sharding});
      costs.push_back(
          weight ? getWeightCost(model, mesh, type, sharding, memoryWeight)
                 : 0.0);
    }
    unsigned var = self.problem.addVariable(costs);
    sources[arg] = {var, 0};
    self.variables.push_back(std::move(variable));
  }

  // Ops, with the pairwise costs of their operands.
  for (Operation &op : body) {
    if (isa<dist::ReshardOp>(op))
      continue; // Looked through.
    if (op.hasTrait<OpTrait::IsTerminator>()) {
      // Returned values: a reshard to the pinned layout, or an all-reduce
      // of partial sums, on the producer.
      for (OpOperand &operand : op.getOpOperands()) {
        unsigned index = operand.getOperandNumber();
        auto pinned = func.getResultAttrOfType<dist::ShardingAttr>(
            index, dist::DistDialect::getShardingAttrName());
        if (pinned && failed(dist::verifyShardingForType(
                          pinned, mesh, operand.get().getType(), [&]() {
                            return func.emitError("result #") << index << ": ";
                          })))
          return failure();
        self.pinnedResults.push_back(static_cast<bool>(pinned));
        auto [source, resultIndex] =
            sources.lookup(lookThroughReshards(operand.get()));
        const Variable &producer = self.variables[source];
        SmallVector<double> costs;
        for (const auto &shardings : producer.results) {
          dist::ShardingAttr from = shardings[resultIndex];
          costs.push_back(
              pricer.get(operand.get().getType(), from,
                         pinned ? pinned : from.getWithoutPartial()));
        }
        self.problem.addUnaryCosts(source, costs);
      }
      continue;
    }
    if (op.getNumRegions() != 0)
      return op.emitOpError("cannot be sharded: it has regions");
    for (Type type :
         llvm::concat<Type>(op.getOperandTypes(), op.getResultTypes()))
      if (!isa<RankedTensorType>(type))
        return op.emitOpError("cannot be sharded: it has a value of type ")
               << type << ", not a ranked tensor";

    Variable variable;
    variable.op = &op;
    SmallVector<double> costs;
    if (auto annotate = dyn_cast<dist::AnnotateOp>(op)) {
      // A pin: the materializer reshards the input to it.
      variable.results.push_back({annotate.getSharding()});
      variable.operands.push_back({annotate.getSharding()});
      costs.push_back(0);
    } else if (dnn::ShardingRuleAttr rule = dnn::getShardingRule(&op)) {
      dist::FactorSharding base =
          getBaseFactorSharding(&op, rule, mesh, searched);
      variable.factorShardings = enumerateFactorShardings(base, splitting);
      for (const dist::FactorSharding &fs : variable.factorShardings) {
        SmallVector<dist::ShardingAttr, 1> results;
        for (unsigned i = 0, e = op.getNumResults(); i < e; ++i)
          results.push_back(fs.getResultSharding(i));
        SmallVector<dist::ShardingAttr, 2> operands;
        for (unsigned i = 0, e = op.getNumOperands(); i < e; ++i)
          operands.push_back(fs.getOperandSharding(i));
        variable.results.push_back(std::move(results));
        variable.operands.push_back(std::move(operands));
        costs.push_back(getOpCost(model, mesh, &op, fs, memoryWeight));
      }
    } else {
      // No rule: it runs on whole tensors.
      SmallVector<dist::ShardingAttr, 1> results;
      double bytes = 0;
      for (Value value : op.getResults()) {
        results.push_back(dist::ShardingAttr::getReplicated(
            context, meshRef,
            cast<RankedTensorType>(value.getType()).getRank()));
        bytes += getLocalBytes(value.getType(), results.back(), mesh);
      }
      SmallVector<dist::ShardingAttr, 2> operands;
      for (Value value : op.getOperands())
        operands.push_back(dist::ShardingAttr::getReplicated(
            context, meshRef,
            cast<RankedTensorType>(value.getType()).getRank()));
      variable.results.push_back(std::move(results));
      variable.operands.push_back(std::move(operands));
      costs.push_back(memoryWeight * bytes);
    }
    unsigned var = self.problem.addVariable(costs);
    for (OpResult value : op.getResults())
      sources[value] = {var, value.getResultNumber()};

    // One table per operand: the reshard from the producer's layout to the
    // one this op's label needs.
    unsigned numLabels = variable.results.size();
    for (OpOperand &operand : op.getOpOperands()) {
      auto [source, resultIndex] =
          sources.lookup(lookThroughReshards(operand.get()));
      const Variable &producer = self.variables[source];
      unsigned index = operand.getOperandNumber();
      Type type = operand.get().getType();
      std::vector<double> table;
      table.reserve(producer.results.size() * numLabels);
      for (const auto &from : producer.results)
        for (const auto &to : variable.operands)
          table.push_back(pricer.get(type, from[resultIndex], to[index]));
      self.problem.addPairwiseCosts(source, var, table);
    }
    self.variables.push_back(std::move(variable));
  }
  LLVM_DEBUG(llvm::dbgs() << "sharding problem: "
                          << self.problem.getNumVariables() << " variables, "
                          << self.problem.getTotalLabels() << " labels, "
                          << self.problem.getPairwiseCosts().size()
                          << " tables\n");
  return result;
}

std::string OpShardingProblem::describe(unsigned var, unsigned label) const {
  std::string text;
  llvm::raw_string_ostream os(text);
  const Variable &variable = variables[var];
  if (variable.arg) {
    os << "argument #" << variable.arg.getArgNumber() << ": "
       << variable.results[label][0];
    return text;
  }
  os << variable.op->getName();
  if (variable.factorShardings.empty()) {
    os << " (fixed)";
    return text;
  }
  const dist::FactorSharding &fs = variable.factorShardings[label];
  bool any = false;
  for (int64_t f = 0, e = fs.getRule().getNumFactors(); f < e; ++f) {
    if (!fs.isSplit(f))
      continue;
    os << (any ? ", " : ": ") << "factor " << f << " over "
       << dist::formatAxes(fs.getAxes(f));
    any = true;
  }
  if (!any)
    os << ": replicated";
  return text;
}

FailureOr<int64_t> OpShardingProblem::apply(ArrayRef<unsigned> labels) {
  assert(labels.size() == variables.size() && "one label per variable");
  Block &body = func.getBody().front();
  // Earlier reshards go: the chosen layouts decide which are needed.
  for (Operation &op : llvm::make_early_inc_range(body))
    if (auto reshard = dyn_cast<dist::ReshardOp>(op)) {
      reshard.getResult().replaceAllUsesWith(reshard.getInput());
      reshard.erase();
    }
  llvm::DenseMap<Operation *, const dist::FactorSharding *> chosen;
  for (auto [variable, label] : llvm::zip_equal(variables, labels)) {
    if (variable.arg)
      dist::setStoredSharding(variable.arg, variable.results[label][0]);
    else if (!variable.factorShardings.empty())
      chosen[variable.op] = &variable.factorShardings[label];
  }
  StringAttr attrName = StringAttr::get(
      func.getContext(), dist::DistDialect::getShardingAttrName());
  for (auto [index, pinned] : llvm::enumerate(pinnedResults))
    if (!pinned)
      func.removeResultAttr(index, attrName);
  return dist::materializeShardings(
      func, mesh,
      [&](Operation *op, dnn::ShardingRuleAttr, ArrayRef<dist::ShardingAttr>)
          -> dist::FactorSharding { return *chosen.lookup(op); },
      /*remarks=*/false);
}

//===----------------------------------------------------------------------===//
// searchOpShardings and evaluateOpShardings
//===----------------------------------------------------------------------===//

FailureOr<SearchShardingsResult> dnnc::planner::searchOpShardings(
    func::FuncOp func, dist::MeshOp mesh, const CostModel &model,
    ArrayRef<StringAttr> searchAxes, const SearchShardingsOptions &options) {
  SearchShardingsResult result;
  auto start = std::chrono::steady_clock::now();
  // Shared constant expressions (CSE'd broadcast scalars of every layer)
  // would join all layers into one decision, and the elimination's factors
  // with them.
  dist::splitConstantExpressions(func);
  FailureOr<std::unique_ptr<OpShardingProblem>> problem =
      OpShardingProblem::build(func, mesh, model, searchAxes,
                               options.memoryWeight);
  if (failed(problem))
    return failure();
  result.buildSeconds = secondsSince(start);
  const ShardingProblem &labelling = (*problem)->getProblem();
  result.numVariables = labelling.getNumVariables();
  result.numLabels = labelling.getTotalLabels();
  result.maxLabels = labelling.getMaxLabels();

  SolverResult solved = solveShardingProblem(labelling, options.solver);
  result.solveSeconds = solved.seconds;
  result.objective = solved.objective;
  result.lowerBound = solved.lowerBound;
  result.provenOptimal = solved.provenOptimal;
  if (!std::isfinite(solved.objective))
    return func.emitError("no sharding of the searched axes has a finite "
                          "cost (every choice needs a reshard the "
                          "partitioner rejects)");
  LLVM_DEBUG({
    for (unsigned var = 0; var < labelling.getNumVariables(); ++var)
      llvm::dbgs() << "  " << (*problem)->describe(var, solved.labels[var])
                   << "\n";
  });

  start = std::chrono::steady_clock::now();
  FailureOr<int64_t> reshards = (*problem)->apply(solved.labels);
  if (failed(reshards))
    return failure();
  result.numReshards = *reshards;
  result.applySeconds = secondsSince(start);
  return result;
}

double dnnc::planner::evaluateOpShardings(func::FuncOp func, dist::MeshOp mesh,
                                          const CostModel &model,
                                          double memoryWeight) {
  double total = 0;
  Block &body = func.getBody().front();
  for (BlockArgument arg : body.getArguments())
    if (dnn::isWeightArgument(func, arg.getArgNumber()))
      total += getWeightCost(model, mesh, arg.getType(),
                             dist::getStoredSharding(arg), memoryWeight);
  for (Operation &op : body) {
    if (isa<dist::ReshardOp>(op))
      continue;
    // The reshards this op (or the return) uses, once per use.
    for (Value operand : op.getOperands())
      if (auto reshard = operand.getDefiningOp<dist::ReshardOp>()) {
        dist::ShardingAttr from = reshard.getFromAttr();
        if (!from)
          from = dist::getStoredSharding(reshard.getInput());
        total += model.getReshardTime(cast<RankedTensorType>(operand.getType()),
                                      from, reshard.getTo(), mesh);
      }
    if (op.hasTrait<OpTrait::IsTerminator>() || isa<dist::AnnotateOp>(op))
      continue;
    if (dnn::ShardingRuleAttr rule = dnn::getShardingRule(&op)) {
      total +=
          getOpCost(model, mesh, &op,
                    dist::getStoredFactorSharding(&op, rule, mesh),
                    /*memoryWeight=*/0);
    }
    for (Value result : op.getResults())
      total +=
          memoryWeight * getLocalBytes(result.getType(),
                                       dist::getStoredSharding(result), mesh);
  }
  return total;
}

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

namespace {
/// Searches per-op shardings; see Passes.td.
struct SearchShardingsPass
    : public dnnc::planner::impl::SearchShardingsPassBase<SearchShardingsPass> {
  using Base::Base;

  void runOnOperation() override;
};
} // namespace

void SearchShardingsPass::runOnOperation() {
  auto start = std::chrono::steady_clock::now();
  ModuleOp module = getOperation();
  MLIRContext *context = &getContext();
  FailureOr<dist::ShardingTarget> target = dist::getShardingTarget(module);
  if (failed(target))
    return signalPassFailure();
  if (!*target) {
    if (module.getOps<dist::MeshOp>().empty()) {
      module.emitError("dnnc-search-shardings needs a dist.mesh to shard "
                       "over (dist-create-mesh or dnnc-search-parallelism)");
      return signalPassFailure();
    }
    return; // No @main with a body: nothing to shard.
  }
  std::string error;
  std::optional<Cluster> loaded = loadCluster(cluster, error);
  if (!loaded) {
    module.emitError("cluster '") << cluster.getValue() << "': " << error;
    return signalPassFailure();
  }
  SmallVector<StringAttr> searchAxes;
  SmallVector<StringRef> names;
  StringRef(axes).split(names, ',', /*MaxSplit=*/-1, /*KeepEmpty=*/false);
  for (StringRef name : names) {
    name = name.trim();
    if (!name.empty())
      searchAxes.push_back(StringAttr::get(context, name));
  }
  CostModel model(*loaded, mode);
  model.usePrecisionOf(getOperation());
  SearchShardingsOptions options;
  options.memoryWeight = memoryWeight;
  FailureOr<SearchShardingsResult> result =
      searchOpShardings(target->func, target->mesh, model, searchAxes, options);
  if (failed(result))
    return signalPassFailure();
  numVariables += result->numVariables;
  numLabels += result->numLabels;
  numReshards += result->numReshards;

  Builder b(context);
  module->setAttr(
      "dnnc.sharding_search",
      b.getDictionaryAttr({
          b.getNamedAttr("objective_s", b.getF64FloatAttr(result->objective)),
          b.getNamedAttr("lower_bound_s",
                         b.getF64FloatAttr(result->lowerBound)),
          b.getNamedAttr("optimal", b.getBoolAttr(result->provenOptimal)),
          b.getNamedAttr("variables",
                         b.getI64IntegerAttr(result->numVariables)),
          b.getNamedAttr("labels", b.getI64IntegerAttr(result->numLabels)),
          b.getNamedAttr("max_labels", b.getI64IntegerAttr(result->maxLabels)),
          b.getNamedAttr("reshards", b.getI64IntegerAttr(result->numReshards)),
          b.getNamedAttr("solve_time_s",
                         b.getF64FloatAttr(result->solveSeconds)),
          b.getNamedAttr("search_time_s",
                         b.getF64FloatAttr(secondsSince(start))),
      }));
}
