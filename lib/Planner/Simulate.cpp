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
/// Prices the stages of a compiled training step
/// (`dist-materialize-stages`) as the blocks the runtime runs: each
/// forward and backward stage on one micro-batch (its accumulator
/// additions included), each round of the final part (gradient
/// synchronisation, the optimizer) once, and the sends of the transfers
/// between ranks.
class StepPricer {
public:
  StepPricer(func::FuncOp func, dist::MeshOp mesh, dist::PipelineAttr pipeline,
             const CostModel &model, StringRef ppAxis)
      : func(func), mesh(mesh), pipeline(pipeline), model(model),
        ppAxis(ppAxis) {}

  /// Fills `estimate` (its config set); fails on a stage out of range.
  LogicalResult price(PipelineEstimate &estimate);

private:
  /// Returns the seconds the ops of `body` compute and communicate in
  /// collectives.
  std::pair<double, double> getBlockSeconds(Block &body);

  func::FuncOp func;
  dist::MeshOp mesh;
  dist::PipelineAttr pipeline;
  const CostModel &model;
  StringRef ppAxis;
};
} // namespace

std::pair<double, double> StepPricer::getBlockSeconds(Block &body) {
  PlanProfile profile = buildPlanProfile(func, body, mesh, model, "", ppAxis);
  double compute = 0, communication = 0;
  double bandwidth = model.getCluster().device.memoryBandwidth;
  for (const ProfileItem &item : profile.items) {
    if (item.cost) {
      double seconds =
          model.getOpTime(*item.cost, item.elementType, item.shards);
      // A fused producer shares its consumer's launch.
      if (item.fused && seconds > 0)
        seconds = std::max(0.0, seconds - model.getLaunchOverhead());
      compute += seconds;
    }
    if (bandwidth > 0)
      compute += 2 * item.copyBytes / bandwidth;
    for (const ProfileCollective &collective : item.collectives)
      communication +=
          model.getCollectiveTime(collective.kind, collective.bytes,
                                  collective.groupSize, *collective.link);
  }
  return {compute, communication};
}

LogicalResult StepPricer::price(PipelineEstimate &estimate) {
  int64_t numVirtual = pipeline.getNumVirtualStages();
  estimate.stages.assign(numVirtual, StageEstimate());
  // The block a stage of the training pipeline is: the forward of virtual
  // stage k (< V), the backward of virtual stage 2V - 1 - k, or the final
  // part on a rank (its costs go to the estimate of a stage of that rank).
  auto classify = [&](Operation *op,
                      int64_t stage) -> FailureOr<std::pair<int64_t, int>> {
    if (stage < 0 || stage >= pipeline.getNumStages())
      return op->emitError("stage ")
             << stage << " is outside the training pipeline's "
             << pipeline.getNumStages() << " stages";
    if (stage < numVirtual)
      return std::make_pair(stage, 0);
    if (stage < 2 * numVirtual)
      return std::make_pair(pipeline.getBackwardStage(stage), 1);
    return std::make_pair(pipeline.getStageRank(stage), 2);
  };
  for (Operation &op : func.getBody().front().without_terminator()) {
    if (auto stageOp = dyn_cast<dist::StageOp>(op)) {
      FailureOr<std::pair<int64_t, int>> block =
          classify(&op, stageOp.getStage());
      if (failed(block))
        return failure();
      auto [compute, communication] =
          getBlockSeconds(stageOp.getRegion().front());
      StageEstimate &stage = estimate.stages[block->first];
      switch (block->second) {
      case 0:
        stage.forwardCompute += compute;
        stage.forwardCommunication += communication;
        break;
      case 1:
        stage.backwardCompute += compute;
        stage.backwardCommunication += communication;
        break;
      default:
        stage.optimizerSeconds += compute;
        stage.gradientSyncSeconds += communication;
      }
      continue;
    }
    // A transfer between ranks: the sender's send (once per micro-batch
    // from a forward or backward, once per step from the final part).
    auto transfer = dyn_cast<dist::TransferOp>(op);
    if (!transfer)
      continue;
    int64_t src = transfer.getSrcStage(), dst = transfer.getDstStage();
    FailureOr<std::pair<int64_t, int>> block = classify(&op, src);
    if (failed(block) || failed(classify(&op, dst)))
      return failure();
    if (pipeline.getStageRank(src) == pipeline.getStageRank(dst))
      continue;
    double seconds = model.getCollectiveTime(
        CollectiveKind::SendRecv, getLocalBytes(transfer.getInput(), mesh), 2,
        estimate.config.ppLink);
    StageEstimate &stage = estimate.stages[block->first];
    switch (block->second) {
    case 0:
      stage.forwardSendSeconds += seconds;
      stage.transferSeconds += seconds;
      break;
    case 1:
      stage.backwardSendSeconds += seconds;
      stage.transferSeconds += seconds;
      break;
    default:
      stage.gradientSyncSeconds += seconds;
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
  auto pipeline = module->getAttrOfType<dist::PipelineAttr>(
      dist::DistDialect::getPipelineAttrName());
  if (!pipeline || !pipeline.isTrainingStep())
    return module.emitError("the module holds no staged training step "
                            "(dist-materialize-stages)");
  PipelineEstimate estimate;
  estimate.config = planned->config;
  StepPricer pricer(planned->main, planned->mesh, pipeline, model,
                    planned->ppAxis);
  if (failed(pricer.price(estimate)))
    return failure();
  return runSchedule(estimate, /*train=*/true, planned->devices, trace);
}
