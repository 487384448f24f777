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

SimulationResult dnnc::planner::simulatePipeline(const PlanProfile &profile,
                                                 const PipelineConfig &config,
                                                 ArrayRef<int64_t> boundaries,
                                                 const CostModel &model,
                                                 int64_t devices,
                                                 raw_ostream *trace) {
  SimulationResult result;
  result.devices = devices;
  bool train = model.getMode() == Mode::Train;
  PipelineEstimate estimate =
      estimatePipeline(profile, config, boundaries, model);
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
        // The send of the block's output: activations forward, gradients
        // backward (half of the stage's round trip each in training).
        bool sends =
            block.backward ? block.stage > 0 : block.stage + 1 < stages;
        double send = 0;
        if (sends) {
          const StageEstimate &sender =
              block.backward ? estimate.stages[block.stage - 1] : stage;
          send = train ? sender.transferSeconds / 2 : sender.transferSeconds;
        }
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

FailureOr<SimulationResult> dnnc::planner::simulatePlan(ModuleOp module,
                                                        const CostModel &model,
                                                        raw_ostream *trace) {
  FailureOr<ModulePlan> plan = readModulePlan(module, model);
  if (failed(plan))
    return failure();
  return simulatePipeline(plan->profile, plan->config, plan->boundaries, model,
                          plan->devices, trace);
}
