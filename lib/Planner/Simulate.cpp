//===- Simulate.cpp - Discrete-event simulation of a plan -------*- C++ -*-===//
//
// Part of the dnnc project.
//
//===----------------------------------------------------------------------===//
//
// Implements simulatePipeline: each pipeline rank runs its forward and
// backward blocks in the schedule's order as soon as their inputs arrive,
// and the Chrome trace of the result.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Planner/Simulate.h"
#include "dnnc/Dialect/Dist/IR/DistOps.h"
#include "dnnc/Dialect/Dnn/Transforms/Passes.h"

#include "llvm/ADT/SetVector.h"

#include "llvm/Support/JSON.h"

#include <algorithm>

using namespace mlir;
using namespace dnnc;
using namespace dnnc::planner;

namespace {
/// Streams Chrome trace events (https://ui.perfetto.dev opens them).
class TraceWriter {
public:
  /// Starts a trace of `devices` lanes on `os` (null: writes nothing).
  TraceWriter(llvm::raw_ostream *os, int64_t devices) : os(os) {
    if (!os)
      return;
    *os << "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[";
    for (int64_t device = 0; device < devices; ++device) {
      separate();
      *os << "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":0,\"tid\":"
          << device << ",\"args\":{\"name\":\"device " << device << "\"}}";
    }
  }

  /// Writes a complete event of `seconds` starting at `start` on `device`.
  void event(int64_t device, llvm::StringRef name, llvm::StringRef category,
             double start, double seconds) {
    if (!os || seconds <= 0)
      return;
    separate();
    *os << "{\"name\":" << llvm::json::Value(name.str()) << ",\"cat\":\""
        << category << "\",\"ph\":\"X\",\"pid\":0,\"tid\":" << device
        << ",\"ts\":" << llvm::format("%.3f", start * 1e6)
        << ",\"dur\":" << llvm::format("%.3f", seconds * 1e6) << "}";
  }

  /// Ends the trace.
  ~TraceWriter() {
    if (os)
      *os << "]}\n";
  }

private:
  /// Writes the comma between events.
  void separate() {
    if (!first)
      *os << ",";
    *os << "\n";
    first = false;
  }

  llvm::raw_ostream *os;
  bool first = true;
};
} // namespace

/// Runs the blocks of `estimate` (see simulatePipeline) on `devices`
/// devices; `train` adds the backward blocks.
static SimulationResult runSchedule(const PipelineEstimate &estimate,
                                    bool train, int64_t devices,
                                    raw_ostream *trace) {
  SimulationResult result;
  result.devices = devices;
  const PipelineConfig &config = estimate.config;
  int64_t p = config.stages, stages = estimate.stages.size();
  int64_t m = config.microbatches;
  int64_t perRank = std::max<int64_t>(devices / p, 1);
  TraceWriter writer(trace, devices);
  // Writes one event on every device of pipeline rank `rank`.
  auto emit = [&](int64_t rank, StringRef name, StringRef category,
                  double start, double seconds) {
    for (int64_t device = rank * perRank; device < (rank + 1) * perRank;
         ++device)
      writer.event(device, name, category, start, seconds);
  };

  // Finish times of forward and backward blocks (stage x micro-batch).
  double unset = -1;
  SmallVector<double> forwardDone(stages * m, unset),
      backwardDone(stages * m, unset);
  SmallVector<SmallVector<WorkBlock>> orders;
  for (int64_t rank = 0; rank < p; ++rank)
    orders.push_back(getRankOrder(config, rank, train));
  SmallVector<size_t> next(p, 0);
  SmallVector<double> clock(p, 0), busy(p, 0);
  bool progress = true;
  while (progress) {
    progress = false;
    for (int64_t rank = 0; rank < p; ++rank) {
      while (next[rank] < orders[rank].size()) {
        const WorkBlock &block = orders[rank][next[rank]];
        const StageEstimate &stage = estimate.stages[block.stage];
        int64_t slot = block.stage * m + block.microbatch;
        // What the block waits for: the previous stage's forward, or the
        // next stage's backward and its own forward.
        double ready = 0;
        if (!block.backward && block.stage > 0)
          ready = forwardDone[slot - m];
        if (block.backward) {
          ready = forwardDone[slot];
          if (block.stage + 1 < stages)
            ready = backwardDone[slot + m] < 0
                        ? -1
                        : std::max(ready, backwardDone[slot + m]);
        }
        if (ready < 0)
          break;
        double start = std::max(clock[rank], ready);
        if (start > clock[rank])
          emit(rank, "bubble", "idle", clock[rank], start - clock[rank]);
        double compute =
            block.backward ? stage.backwardCompute : stage.forwardCompute;
        double communication = block.backward ? stage.backwardCommunication
                                              : stage.forwardCommunication;
        // The send of the block's outputs: activations forward, gradients
        // backward.
        double send =
            block.backward ? stage.backwardSendSeconds : stage.forwardSendSeconds;
        std::string name = (block.backward ? "B" : "F") +
                           std::to_string(block.microbatch) + " stage " +
                           std::to_string(block.stage);
        emit(rank, name, "compute", start, compute);
        emit(rank, name + " collectives", "communication", start + compute,
             communication);
        emit(rank, name + " send", "communication",
             start + compute + communication, send);
        double end = start + compute + communication + send;
        (block.backward ? backwardDone : forwardDone)[slot] = end;
        busy[rank] += end - start;
        clock[rank] = end;
        ++next[rank];
        progress = true;
      }
    }
  }
  // Gradient synchronisation and optimizer per rank, after its blocks.
  for (int64_t rank = 0; rank < p; ++rank) {
    double sync = 0, optimizer = 0;
    for (int64_t k = rank; k < stages; k += p) {
      sync += estimate.stages[k].gradientSyncSeconds;
      optimizer += estimate.stages[k].optimizerSeconds;
    }
    emit(rank, "gradient all-reduce", "communication", clock[rank], sync);
    emit(rank, "optimizer", "compute", clock[rank] + sync, optimizer);
    clock[rank] += sync + optimizer;
    busy[rank] += sync + optimizer;
  }
  result.stepSeconds = *std::max_element(clock.begin(), clock.end());
  for (int64_t rank = 0; rank < p; ++rank)
    emit(rank, "bubble", "idle", clock[rank], result.stepSeconds - clock[rank]);
  if (result.stepSeconds > 0) {
    double idle = 0;
    for (double time : busy)
      idle += result.stepSeconds - time;
    result.idleFraction = idle / (static_cast<double>(p) * result.stepSeconds);
  }
  return result;
}

SimulationResult dnnc::planner::simulatePipeline(const PlanProfile &profile,
                                                 const PipelineConfig &config,
                                                 ArrayRef<int64_t> boundaries,
                                                 const CostModel &model,
                                                 int64_t devices,
                                                 raw_ostream *trace) {
  return runSchedule(estimatePipeline(profile, config, boundaries, model),
                     model.getMode() == Mode::Train, devices, trace);
}

FailureOr<SimulationResult> dnnc::planner::simulatePlan(ModuleOp module,
                                                        const CostModel &model,
                                                        raw_ostream *trace) {
  FailureOr<ModulePlan> plan = readModulePlan(module, model);
  if (failed(plan))
    return failure();
  return simulatePipeline(plan->profile, plan->config, plan->boundaries, model,
                          plan->devices, trace);
}

//===----------------------------------------------------------------------===//
// Compiled training steps
//===----------------------------------------------------------------------===//

namespace {
/// Prices the ops of a training step split into micro-batches
/// (`dist-split-microbatches`) as the blocks the runtime runs: the forward
/// and backward ops of each stage on one micro-batch, and the final part
/// (gradient synchronisation and the optimizer) on the pipeline ranks that
/// `dist-materialize-stages` gives it.
class StepPricer {
public:
  StepPricer(func::FuncOp func, dist::MeshOp mesh,
             const PipelineConfig &config, const CostModel &model,
             StringRef ppAxis)
      : func(func), mesh(mesh), config(config), model(model),
        profile(buildPlanProfile(func, mesh, model, "", ppAxis)) {}

  /// Fills `estimate` (its config set); fails when an op's stage is out of
  /// range.
  LogicalResult price(PipelineEstimate &estimate);

private:
  /// Returns the seconds one run of `op` (profile item `item`) computes,
  /// and communicates in collectives.
  std::pair<double, double> getOpSeconds(Operation &op,
                                         const ProfileItem &item) const;
  /// Returns the seconds to send `value` to another pipeline rank.
  double getSendSeconds(Value value) const {
    return model.getCollectiveTime(CollectiveKind::SendRecv,
                                   getLocalBytes(value, mesh), 2,
                                   config.ppLink);
  }
  /// Returns the pipeline rank of virtual stage `stage`.
  int64_t rankOf(int64_t stage) const { return stage % config.stages; }
  /// Computes the pipeline ranks each op of the final part runs on.
  void assignFinalRanks();

  func::FuncOp func;
  dist::MeshOp mesh;
  const PipelineConfig &config;
  const CostModel &model;
  PlanProfile profile;
  /// The virtual stage of each op of a stage.
  llvm::DenseMap<Operation *, int64_t> stageOf;
  /// The pipeline ranks each op of the final part runs on.
  llvm::DenseMap<Operation *, llvm::SmallSetVector<int64_t, 4>> finalRanks;
};
} // namespace

std::pair<double, double>
StepPricer::getOpSeconds(Operation &op, const ProfileItem &item) const {
  double compute = 0, communication = 0;
  double bandwidth = model.getCluster().device.memoryBandwidth;
  if (item.cost) {
    compute = model.getOpTime(*item.cost, item.elementType, item.shards);
    // A fused producer shares its consumer's launch.
    if (item.fused && compute > 0)
      compute = std::max(0.0, compute - model.getLaunchOverhead());
  }
  if (bandwidth > 0)
    compute += 2 * item.copyBytes / bandwidth;
  // The sum over micro-batches: each micro-batch adds its share to the
  // accumulator (read both, write the sum).
  if (isa<dist::MicrobatchSumOp>(op) && bandwidth > 0)
    compute += 3 * getLocalBytes(op.getResult(0), mesh) / bandwidth +
               model.getLaunchOverhead();
  for (const ProfileCollective &collective : item.collectives)
    communication += model.getCollectiveTime(
        collective.kind, collective.bytes, collective.groupSize,
        *collective.link);
  return {compute, communication};
}

void StepPricer::assignFinalRanks() {
  // As dist-materialize-stages: an op of the final part is needed on the
  // ranks that use its results (an update on the rank whose stages use
  // the parameter it writes, a model output on the last rank). It runs
  // there when that is one rank; an expansion needed on several (a
  // clipping factor broadcast to parameters of several ranks) runs on each
  // of them; any other op on the rank of its last operand from the final
  // part, else of the sum over micro-batches it reads, else the last.
  Block &body = func.getBody().front();
  int64_t lastRank = config.stages - 1;
  llvm::DenseMap<Value, llvm::SmallSetVector<int64_t, 4>> neededOn;
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  for (auto [i, operand] : llvm::enumerate(ret.getOperands())) {
    auto target =
        func.getResultAttrOfType<IntegerAttr>(i, dnn::kUpdatesAttrName);
    if (!target) {
      neededOn[operand].insert(lastRank);
      continue;
    }
    if (func.getArgAttr(target.getInt(), dnn::kStateAttrName))
      continue;
    for (Operation *user : func.getArgument(target.getInt()).getUsers())
      if (auto it = stageOf.find(user); it != stageOf.end())
        neededOn[operand].insert(rankOf(it->second));
  }
  for (Operation &op : llvm::reverse(body.without_terminator())) {
    if (stageOf.count(&op))
      continue;
    llvm::SmallSetVector<int64_t, 4> ranks;
    for (Value result : op.getResults())
      ranks.insert(neededOn[result].begin(), neededOn[result].end());
    for (Value operand : op.getOperands())
      neededOn[operand].insert(ranks.begin(), ranks.end());
  }
  auto numElements = [](Value value) {
    auto type = dyn_cast<RankedTensorType>(value.getType());
    return type && type.hasStaticShape() ? type.getNumElements() : 0;
  };
  for (Operation &op : body.without_terminator()) {
    if (stageOf.count(&op))
      continue;
    llvm::SmallSetVector<int64_t, 4> needed;
    for (Value result : op.getResults())
      needed.insert(neededOn[result].begin(), neededOn[result].end());
    llvm::SmallSetVector<int64_t, 4> &ranks = finalRanks[&op];
    bool expansion =
        op.getNumResults() == 1 &&
        llvm::all_of(op.getOperands(), [&](Value operand) {
          return numElements(operand) < numElements(op.getResult(0));
        });
    if (needed.size() == 1 || (needed.size() > 1 && expansion)) {
      ranks = needed;
      continue;
    }
    int64_t rank = -1;
    for (Value operand : op.getOperands()) {
      Operation *def = operand.getDefiningOp();
      if (!def)
        continue;
      if (auto it = stageOf.find(def); it != stageOf.end()) {
        if (rank < 0)
          rank = rankOf(it->second);
      } else if (auto found = finalRanks.find(def);
                 found != finalRanks.end() && !found->second.empty()) {
        rank = found->second.back();
      }
    }
    ranks.insert(rank < 0 ? lastRank : rank);
  }
}

LogicalResult StepPricer::price(PipelineEstimate &estimate) {
  int64_t numStages = config.getNumVirtualStages();
  estimate.stages.assign(numStages, StageEstimate());
  Block &body = func.getBody().front();
  for (Operation &op : body.without_terminator())
    if (auto stage = op.getAttrOfType<IntegerAttr>(
            dist::DistDialect::getStageAttrName())) {
      if (stage.getInt() < 0 || stage.getInt() >= numStages)
        return op.emitError("stage ")
               << stage.getInt() << " is outside the pipeline's " << numStages
               << " stages";
      stageOf[&op] = stage.getInt();
    }
  assignFinalRanks();
  // The ranks a value is computed on (arguments: every rank has its own).
  auto availableOn = [&](Value value, int64_t rank) {
    Operation *def = value.getDefiningOp();
    if (!def)
      return true;
    if (auto it = stageOf.find(def); it != stageOf.end())
      return rankOf(it->second) == rank;
    return finalRanks.lookup(def).contains(rank);
  };
  bool recompute = config.recompute == Recompute::Full;
  for (auto [index, op] : llvm::enumerate(body.without_terminator())) {
    auto [compute, communication] = getOpSeconds(op, profile.items[index]);
    auto it = stageOf.find(&op);
    if (it == stageOf.end()) {
      // The final part, on each of its ranks (its stage-0 estimate holds
      // what a rank runs once per step); values from other ranks arrive
      // by transfers.
      for (int64_t rank : finalRanks[&op]) {
        StageEstimate &stage = estimate.stages[rank];
        stage.optimizerSeconds += compute;
        stage.gradientSyncSeconds += communication;
        for (Value operand : llvm::SetVector<Value>(op.operand_begin(),
                                                    op.operand_end()))
          if (!availableOn(operand, rank))
            stage.gradientSyncSeconds += getSendSeconds(operand);
      }
      continue;
    }
    bool backward = op.hasAttr(dist::DistDialect::getBackwardAttrName());
    StageEstimate &stage = estimate.stages[it->second];
    (backward ? stage.backwardCompute : stage.forwardCompute) += compute;
    (backward ? stage.backwardCommunication : stage.forwardCommunication) +=
        communication;
    // Full recomputation runs the forward again in the backward block.
    if (recompute && !backward) {
      stage.backwardCompute += compute;
      stage.backwardCommunication += communication;
    }
    // The sends of its results to the other ranks that use them, once per
    // rank; the step's sums reach the final part of another rank once per
    // step (priced there).
    int64_t rank = rankOf(it->second);
    for (Value result : op.getResults()) {
      llvm::SmallSetVector<int64_t, 4> to;
      for (Operation *user : result.getUsers())
        if (auto use = stageOf.find(user);
            use != stageOf.end() && rankOf(use->second) != rank)
          to.insert(rankOf(use->second));
      double seconds = to.size() * getSendSeconds(result);
      (backward ? stage.backwardSendSeconds : stage.forwardSendSeconds) +=
          seconds;
      stage.transferSeconds += seconds;
    }
  }
  return success();
}

FailureOr<SimulationResult>
dnnc::planner::simulateTrainingStep(ModuleOp module, const CostModel &model,
                                    raw_ostream *trace) {
  FailureOr<PlannedModule> planned = readPlannedModule(module, model);
  if (failed(planned))
    return failure();
  if (!planned->pipelined)
    return module.emitError("the training step has no dist.pipeline");
  PipelineEstimate estimate;
  estimate.config = planned->config;
  StepPricer pricer(planned->main, planned->mesh, estimate.config, model,
                    planned->ppAxis);
  if (failed(pricer.price(estimate)))
    return failure();
  return runSchedule(estimate, /*train=*/true, planned->devices, trace);
}
