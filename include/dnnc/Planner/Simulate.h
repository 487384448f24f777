//===- Simulate.h - Discrete-event simulation of a plan ---------*- C++ -*-===//
//
// Part of the dnnc project.
//
//===----------------------------------------------------------------------===//
//
// `dnnc --simulate` and `--trace FILE.json`: one step of a plan's per-device
// programs run on the cost model as a discrete-event simulation, written as
// a Chrome / Perfetto trace with one lane per device.
//
//===----------------------------------------------------------------------===//

#ifndef DNNC_PLANNER_SIMULATE_H
#define DNNC_PLANNER_SIMULATE_H

#include "dnnc/Planner/Pipeline.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

namespace dnnc::planner {

/// The outcome of a simulated step.
struct SimulationResult {
  /// Number of devices simulated.
  int64_t devices = 1;
  /// Seconds until the last device finishes the step.
  double stepSeconds = 0;
  /// Share of the devices' time spent waiting (idle device-seconds over
  /// devices x step): the bubble fraction of the schedule.
  double idleFraction = 0;
};

/// Simulates one step of `config` on `profile` split at `boundaries` (see
/// PipelineEstimate) over `devices` devices (the pipeline ranks hold equal
/// consecutive shares of them; every device of a rank runs the same
/// program). Each rank runs its blocks (forward, and backward in training,
/// of one virtual stage on one micro-batch: compute, then collectives,
/// then the send of the output) in the schedule's order: GPipe all
/// forwards then all backwards; 1F1B `p - rank - 1` warm-up forwards then
/// alternating; interleaved Megatron-LM's warm-up of `(p - rank - 1) * 2 +
/// (v - 1) * p` forwards over micro-batch groups of `p`. A block starts
/// when its rank is free and its input is there (the previous stage's
/// forward; the next stage's backward and its own forward). Gradient
/// synchronisation and the optimizer follow on each rank. When `trace` is
/// given, writes the Chrome trace-event JSON (one lane (`tid`) per device;
/// events of category `compute`, `communication` and `idle`; microseconds).
SimulationResult simulatePipeline(const PlanProfile &profile,
                                  const PipelineConfig &config,
                                  llvm::ArrayRef<int64_t> boundaries,
                                  const CostModel &model, int64_t devices,
                                  llvm::raw_ostream *trace = nullptr);

/// Simulates one step of the plan of `module` after the plan phase
/// (`readModulePlan`: its mesh, `dist.pipeline` and stages), as above.
/// Fails, with an error, when the plan cannot be read.
mlir::FailureOr<SimulationResult>
simulatePlan(mlir::ModuleOp module, const CostModel &model,
             llvm::raw_ostream *trace = nullptr);

/// Simulates one step of a compiled training step: `module` after
/// `dist-materialize-stages` (its `dist.stage`s the forwards, backwards and
/// final-part rounds of a training pipeline, its `dist.transfer`s between
/// them), each op priced as it is by `model` (infer mode: the step is
/// explicit). A forward or backward stage is a block of one micro-batch
/// (a backward's accumulator additions and recomputed forward ops
/// included), a transfer between ranks a send of its sender's block, and
/// the final part runs once per step on each rank. Fails, with an error,
/// without a `@main`, a staged training step, or with a stage out of range.
mlir::FailureOr<SimulationResult>
simulateTrainingStep(mlir::ModuleOp module, const CostModel &model,
                     llvm::raw_ostream *trace = nullptr);

} // namespace dnnc::planner

#endif // DNNC_PLANNER_SIMULATE_H
