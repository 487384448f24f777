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
  let summary = "Choose data-, tensor- and pipeline-parallel plans with the "
                "cost model";
  let description = [{
    The automatic plan of the plan phase for a module without a mesh. For
    every tensor-parallel degree `tp` dividing `devices`, shardings are
    propagated on a copy of the module over a `tp` mesh (Megatron seeding,
    as `dist-propagate-shardings{tp-axis=tp}`) and the program is
    summarised once (`planner::buildPlanProfile`). Then, for every
    pipeline degree `pp` and data-parallel degree `dp = devices / (tp pp)`
    (the global batch divisible by `dp`), every micro-batch count dividing
    the local batch, every schedule (inference: `gpipe`; training: `1f1b`
    and `interleaved` with `chunks` virtual stages per rank, default 2),
    with and without activation recomputation (tried only when the plan
    does not fit without), and ZeRO-1 optimizer-state sharding over `dp`
    (training), the program is split into balanced stages
    (`planner::splitStages`: the slowest stage as fast as possible within
    the device memory) and priced (`planner::estimatePipeline`). The
    fastest plan that fits is applied: mesh `@mesh` with axes `pp`, `dp`,
    `tp` (those of size 1 left out; each `intra` or `inter` from where its
    groups fall on the cluster's nodes), shardings propagated over it,
    `dist.stage` on every op of `@main` and, with several stages or
    micro-batches, the module attribute `dist.pipeline`. The module
    attribute `dnnc.plan` summarises it: `dp`, `tp`, `pp`, `microbatches`,
    `schedule`, `chunks`, `recompute`, `zero`, `sharding` (`search` when
    the per-op search's shardings won, else `propagation`), `step_time_s`,
    `compute_time_s`, `communication_time_s`, `bubble_fraction`,
    `memory_bytes`, `model_flops`, `search_time_s`, `candidates`. When no
    candidate fits, the pass fails with the smallest per-device memory any
    of them needs.

    Pipelines (`pp` > 1) and micro-batches are searched only with
    `pipeline` (dnnc sets it when the plan is not executed: `--plan-only`
    or `--compile-to=plan`); forced values always apply.

    Only `dist` ops and attributes are added: compute is not rewritten.
  }];
  let options = [
    Option<"devices", "devices", "int64_t", /*default=*/"1",
           "Number of devices to plan for">,
    Option<"cluster", "cluster", "std::string", /*default=*/"\"cpu-local\"",
           "Cluster preset or JSON file (docs/cluster.md)">,
    Option<"oversubscribe", "oversubscribe", "bool", /*default=*/"false",
           "Let ranks share devices: a one-node cluster grows to `devices` "
           "(the default cpu-local cluster of dnnc)">,
    Option<"mode", "mode", "::dnnc::planner::Mode",
           /*default=*/"::dnnc::planner::Mode::Infer",
           "What the plan is priced for: infer or train",
           [{::llvm::cl::values(
               clEnumValN(::dnnc::planner::Mode::Infer, "infer",
                          "one forward pass"),
               clEnumValN(::dnnc::planner::Mode::Train, "train",
                          "forward, backward and optimizer step"))}]>,
    Option<"dp", "dp", "int64_t", /*default=*/"0",
           "Forced data-parallel degree (0: search)">,
    Option<"tp", "tp", "int64_t", /*default=*/"0",
           "Forced tensor-parallel degree (0: search)">,
    Option<"pp", "pp", "int64_t", /*default=*/"0",
           "Forced pipeline-parallel degree (0: search)">,
    Option<"microbatches", "microbatches", "int64_t", /*default=*/"0",
           "Forced number of micro-batches (0: search)">,
    Option<"microbatchSize", "microbatch-size", "int64_t", /*default=*/"0",
           "Forced samples per micro-batch of one data-parallel replica: "
           "the micro-batch count is batch / (dp x size), and degrees dp "
           "for which that is not an integer are not candidates (0: "
           "search)">,
    Option<"schedule", "schedule", "std::string", /*default=*/"\"\"",
           "Forced schedule: gpipe, 1f1b or interleaved (empty: search)">,
    Option<"chunks", "chunks", "int64_t", /*default=*/"0",
           "Virtual stages per pipeline rank of the interleaved schedule "
           "(0: 2)">,
    Option<"recompute", "recompute", "std::string", /*default=*/"\"auto\"",
           "Activation recomputation in training: auto, off, selective "
           "or full">,
    Option<"zero", "zero", "std::string", /*default=*/"\"auto\"",
           "ZeRO-1 optimizer-state sharding over dp in training: auto (on "
           "when dp > 1), on or off">,
    Option<"pipeline", "pipeline", "bool", /*default=*/"false",
           "Search pipeline degrees and micro-batch counts too">,
    Option<"progress", "progress", "bool", /*default=*/"false",
           "Show progress on stderr">
  ];
  let dependentDialects = ["::dnnc::dist::DistDialect"];
  let statistics = [
    Statistic<"numCandidates", "num-candidates", "Number of plans priced">
  ];
}

def SearchShardingsPass : Pass<"dnnc-search-shardings", "::mlir::ModuleOp"> {
  let summary = "Choose every op's sharding with an exact cost-model search";
  let description = [{
    Chooses how each op of `@main` and each of its arguments is split over
    the mesh axes named in `axes` (a comma-separated list; all axes of the
    module's `dist.mesh` when empty), minimising the cost model's step time
    (`cluster`, `mode`) plus `memory-weight` seconds per byte of weights
    (with gradients and optimizer states in training) and op results per
    device. The labels of an op are the ways to give each searched axis to
    one of its sharding rule's factors, or to none, on top of the axes it
    already has that are not searched (e.g. `dp` from
    `dist-propagate-shardings=dp-axis=dp`); those of a weight, the dims
    each searched axis may split. Costs: each op on its local blocks with
    its pending reductions, a reshard for each operand whose producer's
    layout differs from the one the consumer's choice needs (all-reduces of
    partial sums included; one per use, even where materialization shares
    a reshard between consumers), gradient all-reduces in training.
    Constant expressions shared by several ops are first copied per use,
    as propagation does.

    The minimum is found by variable elimination (exact; min-size order,
    factors of at most 2^22 entries, then iterated conditional modes for the
    rest, reported as not proven optimal): see docs/planner.md, "Per-op
    sharding search". The choice is applied like propagation's: earlier
    `dist.reshard`s are removed, every value gets a stored sharding and the
    reshards the choice needs are explicit, ready for
    `dist-check-shardings` and `dist-partition`. Graph inputs and results
    with a stored sharding, and `dist.annotate`, are pins. The module gets
    `dnnc.sharding_search` (`objective_s`, `lower_bound_s`, `optimal`,
    `variables`, `labels`, `max_labels`, `reshards`, `solve_time_s`,
    `search_time_s`).

    Before, an MLP on a tensor-parallel mesh of two H100s whose result is
    pinned whole:

    ```mlir
    dist.mesh @mesh ["tp" = 2 : intra]
    func.func @main(%x: tensor<1x128x1024xf32>,
        %w1: tensor<1024x4096xf32> {dnn.weight_ref},
        %w2: tensor<4096x1024xf32> {dnn.weight_ref})
        -> (tensor<1x128x1024xf32> {dist.sharding = #dist.sharding<@mesh, [{}, {}, {} ]>}) {
      %h = dnn.matmul %x, %w1 : (tensor<1x128x1024xf32>, tensor<1024x4096xf32>) -> tensor<1x128x4096xf32>
      %g = dnn.relu %h : tensor<1x128x4096xf32>
      %y = dnn.matmul %g, %w2 : (tensor<1x128x4096xf32>, tensor<4096x1024xf32>) -> tensor<1x128x1024xf32>
      return %y : tensor<1x128x1024xf32>
    }
    ```

    After `--dnnc-search-shardings="cluster=h100x8 mode=train"`, Megatron's
    layout (replicated weights would cost gradient all-reduces): the first
    weight split by columns, the second by rows, one all-reduce of the
    partial sums (shardings of `%h` and `%g` not shown):

    ```mlir
    func.func @main(%x: tensor<1x128x1024xf32> {dist.sharding = #dist.sharding<@mesh, [{}, {}, {} ]>},
        %w1: tensor<1024x4096xf32> {dist.sharding = #dist.sharding<@mesh, [{}, {"tp"} ]>, dnn.weight_ref},
        %w2: tensor<4096x1024xf32> {dist.sharding = #dist.sharding<@mesh, [{"tp"}, {} ]>, dnn.weight_ref})
        -> (tensor<1x128x1024xf32> {dist.sharding = #dist.sharding<@mesh, [{}, {}, {} ]>}) {
      ...
      %y = dnn.matmul %g, %w2 {dist.shardings = [#dist.sharding<@mesh, [{}, {}, {} ], partial = {"tp"}>]}
          : (tensor<1x128x4096xf32>, tensor<4096x1024xf32>) -> tensor<1x128x1024xf32>
      %r = dist.reshard %y from <@mesh, [{}, {}, {} ], partial = {"tp"}> to <@mesh, [{}, {}, {} ]>
          {dist.shardings = [#dist.sharding<@mesh, [{}, {}, {} ]>]} : tensor<1x128x1024xf32>
      return %r : tensor<1x128x1024xf32>
    }
    ```
  }];
  let options = [
    Option<"cluster", "cluster", "std::string", /*default=*/"\"cpu-local\"",
           "Cluster preset or JSON file (docs/cluster.md)">,
    Option<"mode", "mode", "::dnnc::planner::Mode",
           /*default=*/"::dnnc::planner::Mode::Infer",
           "What the plan is priced for: infer or train",
           [{::llvm::cl::values(
               clEnumValN(::dnnc::planner::Mode::Infer, "infer",
                          "one forward pass"),
               clEnumValN(::dnnc::planner::Mode::Train, "train",
                          "forward, backward and optimizer step"))}]>,
    Option<"axes", "axes", "std::string", /*default=*/"\"\"",
           "Comma-separated mesh axes to search (default: all)">,
    Option<"memoryWeight", "memory-weight", "double", /*default=*/"0.0",
           "Seconds charged per byte of weights and results per device">
  ];
  let dependentDialects = ["::dnnc::dist::DistDialect"];
  let statistics = [
    Statistic<"numVariables", "num-variables",
              "Number of arguments and ops searched">,
    Statistic<"numLabels", "num-labels", "Number of labels priced">,
    Statistic<"numReshards", "num-reshards", "Number of reshards created">
  ];
}

#endif // DNNC_PLANNER_PASSES_TD
