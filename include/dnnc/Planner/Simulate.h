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

#include "dnnc/Planner/CostModel.h"

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
  /// devices x step), the bubble fraction of the schedule.
  double idleFraction = 0;
};

/// Simulates one step of the plan of `module` (after the plan phase: its
/// mesh, or none for one device, and `@main` with shardings). Every device
/// runs the steps of `forEachPlanStep` in order; a compute step takes its
/// time on its device; a collective starts when every device of its group
/// has reached it and ends for all of them its time later. When `trace` is
/// given, writes the Chrome trace-event JSON of the step to it: one lane
/// (`tid`) per device, events of category `compute`, `communication` and
/// `idle`, times in microseconds.
SimulationResult simulatePlan(mlir::ModuleOp module, const CostModel &model,
                              llvm::raw_ostream *trace = nullptr);

} // namespace dnnc::planner

#endif // DNNC_PLANNER_SIMULATE_H
