//===- Passes.td - Planner passes --------------------------*- tablegen -*-===//
//
// Part of the dnnc project.
//
//===----------------------------------------------------------------------===//

#ifndef DNNC_PLANNER_PASSES_TD
#define DNNC_PLANNER_PASSES_TD

include "mlir/Pass/PassBase.td"

def SearchParallelismPass
    : Pass<"dnnc-search-parallelism", "::mlir::ModuleOp"> {
  let summary = "Choose data- and tensor-parallel degrees with the cost model";
  let description = [{
    The automatic plan of the plan phase for a module without a mesh: for
    every way to write `devices` as `dp x tp` (degrees forced with `dp` or
    `tp` are kept), it builds the mesh (`dp` outermost; each axis `intra` or
    `inter` from where its groups fall on the cluster's nodes), propagates
    shardings as `dist-propagate-shardings{dp-axis=dp tp-axis=tp}` would,
    and prices the result with the cost model (`cluster`, `mode`): ops on
    their local blocks, reshards, pending reductions, gradient all-reduces
    in training, and the memory of each device. The fastest plan that fits
    in the device memory is applied to the module (mesh `@mesh`, shardings,
    reshards) and summarised in the module attribute `dnnc.plan`
    (`dp`, `tp`, `step_time_s`, `compute_time_s`, `communication_time_s`,
    `memory_bytes`, `model_flops`, `search_time_s`, `candidates`).
    When no candidate fits, the pass fails with the smallest per-device
    memory any of them needs.

    Only `dist` ops and attributes are added: compute is not rewritten.
    Pipeline degrees and per-op choices beyond the propagated ones are not
    searched yet.
  }];
  let options = [
    Option<"devices", "devices", "int64_t", /*default=*/"1",
           "Number of devices to plan for">,
    Option<"cluster", "cluster", "std::string", /*default=*/"\"cpu-local\"",
           "Cluster preset or JSON file (docs/cluster.md)">,
    Option<"oversubscribe", "oversubscribe", "bool", /*default=*/"false",
           "Let ranks share devices: a one-node cluster grows to `devices` "
           "(the default cpu-local cluster of dnnc)">,
    Option<"mode", "mode", "std::string", /*default=*/"\"infer\"",
           "What the plan is priced for: infer or train">,
    Option<"dp", "dp", "int64_t", /*default=*/"0",
           "Forced data-parallel degree (0: search)">,
    Option<"tp", "tp", "int64_t", /*default=*/"0",
           "Forced tensor-parallel degree (0: search)">
  ];
  let dependentDialects = ["::dnnc::dist::DistDialect"];
  let statistics = [
    Statistic<"numCandidates", "num-candidates", "Number of plans priced">
  ];
}

#endif // DNNC_PLANNER_PASSES_TD
