//===- Report.h - Human- and machine-readable plan reports ------*- C++ -*-===//
//
// Part of the dnnc project.
//
//===----------------------------------------------------------------------===//
//
// The reports of `dnnc --report-json` and `dnnc --explain`: what the plan
// phase chose (parallelism degrees, shardings) and what the cost model
// estimates for it (step time, memory per device, model FLOP utilisation),
// for the whole step and per ONNX node.
//
//===----------------------------------------------------------------------===//

#ifndef DNNC_PLANNER_REPORT_H
#define DNNC_PLANNER_REPORT_H

#include "dnnc/Planner/CostModel.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/JSON.h"

#include <string>

namespace dnnc::planner {

/// The reports of one planned module.
struct PlanReport {
  /// The machine-readable report (`--report-json`): `degrees` {dp, tp, pp},
  /// `microbatches`, `schedule` ("none" without a pipeline), `chunks`,
  /// `recompute`, `zero`, `step_time_s`, `compute_time_s`,
  /// `communication_time_s`, `bubble_fraction`, `search_time_s`,
  /// `peak_memory_bytes`, `model_flops`, `mfu`, `cluster`, `mode`,
  /// `devices` and `stages` (per virtual stage: `stage`, `rank`, `ops`,
  /// `forward_s`, `backward_s` and `transfer_s` per micro-batch, and the
  /// `memory_bytes` of its rank), `nodes` (the `--explain` rows: `node`,
  /// `stage`, `ops`, `seconds` per step), `reshard_s` and `step_parts`
  /// (`rank`, the busiest pipeline rank, and the seconds that add up to
  /// `step_time_s`: `ops_and_reshards_s` of that rank, which its rows and
  /// reshards sum to, `stage_transfers_s`, `fill_and_drain_s`,
  /// `gradient_sync_s`, `optimizer_s`).
  llvm::json::Object json;
  /// The human-readable plan (`--explain`): a header line, then one row per
  /// group of consecutive ops of the same ONNX node (node, ops, result
  /// sharding, seconds per step as the estimate prices them: a fused op
  /// without the launch its consumer pays), the reshards, and the line that
  /// adds the rows up to the step.
  std::string explanation;
};

/// Builds the reports of `module` after the plan phase, priced on `cluster`
/// in `mode`. The totals are the pipeline estimate of the plan the module
/// holds (`readModulePlan`: mesh, `dist.pipeline`, stages; what the search
/// priced), the degrees come from the mesh axes named "dp" and "tp" (1 when
/// absent) and the pipeline, the search time and candidates from the
/// `dnnc.plan` attribute the automatic search leaves (0 without). The MFU is model FLOPs / (step time x devices x peak),
/// the peak being the device's BF16 matrix peak when the FLOPs of the model
/// mostly run on bf16 or f16, its F32 matrix peak otherwise.
PlanReport buildPlanReport(mlir::ModuleOp module, const Cluster &cluster,
                           Mode mode);

} // namespace dnnc::planner

#endif // DNNC_PLANNER_REPORT_H
