//===- Passes.td - Dist dialect passes ---------------------*- tablegen -*-===//
//
// Part of the dnnc project.
//
//===----------------------------------------------------------------------===//
//
// Passes on the `dist` dialect.
//
//===----------------------------------------------------------------------===//

#ifndef DNNC_DIALECT_DIST_TRANSFORMS_PASSES_TD
#define DNNC_DIALECT_DIST_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def CheckShardingsPass : Pass<"dist-check-shardings", "::mlir::ModuleOp"> {
  let summary = "Check every sharding against its mesh and its value's type";
  let description = [{
    The op verifiers check `dist` ops against their mesh, but the discardable
    `dist.sharding` (function arguments and results) and `dist.shardings`
    (op results) attributes are only checked for their kind, since a
    dialect attribute verifier cannot look up symbols. This pass walks the
    module and, for every such attribute, resolves the mesh it names and
    checks the sharding against the mesh and the type of the value it
    describes: the mesh exists, the rank matches, every axis exists, and
    every split dim is divisible by the product of its axis sizes. It also
    re-checks the mesh uses of every `dist` op. It changes nothing; it fails
    on the first problem of each op, naming that op.

    Run it after anything that adds or changes shardings (the sharding
    search, user annotations) and before partitioning.

    Input that passes (and is printed unchanged):

    ```mlir
    dist.mesh @m ["dp" = 2 : inter, "tp" = 4 : intra]
    func.func @f(%x: tensor<8x16xf32>
                 {dist.sharding = #dist.sharding<@m, [{"dp"}, {"tp"} ]>})
        -> tensor<8x16xf32> {
      %y = arith.addf %x, %x
          {dist.shardings = [#dist.sharding<@m, [{"dp"}, {"tp"} ]>]}
          : tensor<8x16xf32>
      return %y : tensor<8x16xf32>
    }
    ```

    Input that fails (dim 1, of size 6, cannot be cut into 4 blocks):

    ```mlir
    %y = arith.addf %x, %x
        {dist.shardings = [#dist.sharding<@m, [{}, {"tp"} ]>]}
        : tensor<8x6xf32>
    // error: 'arith.addf' op result #0: dim 1 of size 6 is not divisible
    //        by 4, the number of shards of mesh axes {"tp"}
    ```
  }];
  let statistics = [
    Statistic<"numShardingsChecked", "num-shardings-checked",
              "Number of sharding attributes checked">
  ];
}

def CreateMeshPass : Pass<"dist-create-mesh", "::mlir::ModuleOp"> {
  let summary = "Create the device mesh the plan phase shards over";
  let description = [{
    Inserts `dist.mesh @<name>` at the start of the module with the axes
    given by `axes`, a comma-separated list of `NAME=SIZE` or
    `NAME=SIZE:LINK` entries (LINK is `intra`, the default, or `inter`),
    outermost first. Fails if a symbol of that name exists already. With
    `axes` empty the pass does nothing: a module without a mesh runs on one
    device.

    `dnnc-opt --dist-create-mesh='axes=dp=2,tp=4'` creates:

    ```mlir
    dist.mesh @mesh ["dp" = 2 : intra, "tp" = 4 : intra]
    ```
  }];
  let options = [
    Option<"meshName", "name", "std::string", /*default=*/"\"mesh\"",
           "Symbol name of the mesh">,
    Option<"axes", "axes", "std::string", /*default=*/"\"\"",
           "Mesh axes, outermost first: NAME=SIZE[:intra|inter],...">
  ];
}

def ApplyShardingSpecPass
    : Pass<"dist-apply-sharding-spec", "::mlir::ModuleOp"> {
  let summary = "Seed shardings from a sharding-spec file";
  let description = [{
    Reads a JSON file that names tensors of the ONNX model and gives each a
    sharding on the module's (only) `dist.mesh`, one entry per dimension:
    `null` or `[]` keeps the dimension whole, `"tp"` splits it over one
    axis, `["dp", "tp"]` over several (major to minor).

    ```json
    {
      "input_ids": ["dp", null],
      "h.0.mlp.c_fc.weight": [null, "tp"],
      "/h.0/attn/MatMul": [["dp"], null, null]
    }
    ```

    A name is looked up, in this order, among the graph inputs and weights
    (`@main` arguments with that `dnn.name`: the sharding becomes their
    `dist.sharding`), the graph outputs (result `dnn.name`: the layout the
    output is delivered in), and the ONNX node names (the location of the
    ops a node imports to: the result of the last of them is annotated
    with `dist.annotate`; `NAME:K` names its result K). Propagation then
    spreads these seeds like annotations written in the IR.

    Errors name the file and the entry: unreadable file, invalid JSON, a
    name found nowhere, an entry that is not a list of dims, a rank that
    does not match, an unknown axis, an axis used twice, a dim that does not
    divide.
  }];
  let options = [
    Option<"spec", "spec", "std::string", /*default=*/"\"\"",
           "The sharding-spec JSON file">
  ];
}

def SplitConstantExpressionsPass
    : Pass<"dist-split-constant-expressions", "::mlir::func::FuncOp"> {
  let summary = "Give every use of a constant expression a copy of its own";
  let description = [{
    A constant expression (a constant, or a broadcast, reshape, transpose or
    cast of one) with several uses gets a copy right before each use after
    the first, in that use's pipeline stage
    (`dist::splitConstantExpressions`). Each consumer can then shard its copy
    its own way (zero biases and broadcast scalars that the
    exporter or CSE shared between unrelated layers would otherwise tie
    their layouts), and each copy fuses into its consumer, as the device
    lowering's generated kernels compute it. Propagation and the sharding
    searches do this first; the plan phase runs it on every plan, so that
    the program priced, reported and lowered has the same form on one
    device as on any mesh.

    ```mlir
    %b = dnn.broadcast_in_dim %c, dims = [1] : tensor<4xf32> -> tensor<8x4xf32>
    %0 = dnn.add %x, %b : tensor<8x4xf32>
    %1 = dnn.mul %y, %b : tensor<8x4xf32>
    ```
    becomes
    ```mlir
    %b = dnn.broadcast_in_dim %c, dims = [1] : tensor<4xf32> -> tensor<8x4xf32>
    %0 = dnn.add %x, %b : tensor<8x4xf32>
    %b1 = dnn.broadcast_in_dim %c, dims = [1] : tensor<4xf32> -> tensor<8x4xf32>
    %1 = dnn.mul %y, %b1 : tensor<8x4xf32>
    ```
  }];
}

def PropagateShardingsPass
    : Pass<"dist-propagate-shardings", "::mlir::ModuleOp"> {
  let summary = "Give every tensor a sharding and make reshards explicit";
  let description = [{
    Propagates shardings through the sharding rules of the ops of `@main`
    (`#dnn.sharding_rule`), from the seeds it finds: `dist.sharding` on
    function arguments and results, `dist.annotate` ops, `dist.shardings`
    already on op results, and the seeds its options add:

    * `dp-axis=NAME`: dimension 0 of every graph input (argument without a
      `dnn.weight`) is split over that axis, where it divides.
    * `tp-axis=NAME`: Megatron-style tensor parallelism. Walking the
      matmuls in order, a matmul whose activation arrives split along its
      contraction dimension gets its weight split along that dimension too
      (row parallel: the result holds partial sums); any other matmul with
      a weight argument gets the weight's output dimension split (column
      parallel).
    * `zero-axis=NAME` (ZeRO-1, Rajbhandari et al. 2020): once the rest
      has propagated, every weight argument keeps the layout found for it,
      and every optimizer state (`dnn.state`, from `dnn-apply-optimizer`)
      is split further over that axis along its first dim that allows it.
      Each data-parallel rank then updates its block of every parameter
      from its block of the gradient (a reduce-scatter instead of an
      all-reduce), the new parameter is gathered back into its layout (an
      all-gather), and each rank holds only its block of the states.

    Constant expressions (a constant, or a broadcast, reshape, transpose or
    cast of one) with several uses are first copied per use, so that
    unrelated consumers of a shared zero bias do not tie their layouts.

    Propagation works on the factors of each op's rule: a split factor of
    one operand or result splits the same factor in every other tensor of
    the op. Values reached by no split are replicated. Where two shardings
    disagree, the first one seen (operands before results, in program order)
    wins and the other value is resharded.

    Afterwards every op result carries `dist.shardings`, every argument and
    result of `@main` `dist.sharding`, no `dist.annotate` remains, and every
    operand that the op needs in another layout goes through an explicit
    `dist.reshard` (one per value and layout), reported with a remark that
    names the op. Partial sums are resolved by a reshard before any use.

    The module must hold at most one `dist.mesh` and `@main` a single
    block; without a mesh the pass changes nothing (with one, every value
    gets a sharding, replicated where no seed reaches it).
  }];
  let options = [
    Option<"dpAxis", "dp-axis", "std::string", /*default=*/"\"\"",
           "Split dim 0 of every graph input over this mesh axis">,
    Option<"tpAxis", "tp-axis", "std::string", /*default=*/"\"\"",
           "Megatron-style tensor parallelism over this mesh axis">,
    Option<"zeroAxis", "zero-axis", "std::string", /*default=*/"\"\"",
           "ZeRO-1: split the optimizer states (dnn.state) over this axis">
  ];
  let statistics = [
    Statistic<"numReshards", "num-reshards", "Number of reshards inserted">
  ];
}

def StressShardingsPass : Pass<"dist-stress-shardings", "::mlir::ModuleOp"> {
  let summary = "Shard every op along pseudo-random divisible dims (tests)";
  let description = [{
    A test mode for partitioning: every argument, result and op of `@main`
    gets a sharding chosen deterministically from `seed`. For each op, each
    mesh axis (in a seeded order) splits one of the factors of the op's rule
    that can take it (parallel or reduction, divisible, valid for every
    tensor of the op), so reductions leave partial sums and consecutive ops
    disagree and need reshards; ops with nothing to split are replicated.
    Reshards are then made explicit as by `dist-propagate-shardings`.
    Requires exactly one `dist.mesh`; without one the pass changes nothing.
  }];
  let options = [
    Option<"seed", "seed", "uint64_t", /*default=*/"0",
           "Seed of the pseudo-random choices">
  ];
}

def AssignStagesPass : Pass<"dist-assign-stages", "::mlir::ModuleOp"> {
  let summary = "Put the forward ops of @main in pipeline stages by name";
  let description = [{
    For a training step compiled as a pipeline, before `dnn-autodiff`:
    puts every op of `@main` in a virtual pipeline stage (`dist.stage`) and
    sets the module's `dist.pipeline` from the options. The stages are
    contiguous in program order: stage `k + 1` starts at the first op whose
    location name (the ONNX node name) is `stage-starts[k]`, so that the
    stages the planner chose on the forward graph (`dnnc` reads them from
    its plan) carry over to the training step. The gradient ops
    `dnn-autodiff` builds then run in the backward of their forward op's
    stage.

    Fails, naming it, when a start name is not found after the previous
    one, or when the counts disagree (`stages * chunks - 1` names). Until a
    mesh exists, the pipeline axis is not checked against one.
  }];
  let options = [
    Option<"axis", "axis", "std::string", /*default=*/"\"pp\"",
           "The mesh axis of the pipeline ranks (empty: none)">,
    Option<"stages", "stages", "int64_t", /*default=*/"1",
           "Pipeline ranks">,
    Option<"chunks", "chunks", "int64_t", /*default=*/"1",
           "Model chunks per rank (interleaved schedule)">,
    Option<"microbatches", "microbatches", "int64_t", /*default=*/"1",
           "Micro-batches per step">,
    Option<"schedule", "schedule", "std::string", /*default=*/"\"gpipe\"",
           "gpipe, 1f1b or interleaved">,
    Option<"zero", "zero", "bool", /*default=*/"false",
           "Optimizer states sharded over the data-parallel axis (ZeRO-1)">,
    Option<"recompute", "recompute", "std::string", /*default=*/"\"off\"",
           "What the backward recomputes: off, selective or full">,
    ListOption<"stageStarts", "stage-starts", "std::string",
               "The location name of the first op of stages 1, 2, ...">
  ];
  let dependentDialects = ["::dnnc::dist::DistDialect"];
}

def SplitMicrobatchesPass
    : Pass<"dist-split-microbatches", "::mlir::ModuleOp"> {
  let summary = "Rewrite @main to compute one micro-batch";
  let description = [{
    With `microbatches = M > 1` in the module's `dist.pipeline`, rewrites
    the global program `@main` so that it computes one of `M` equal
    micro-batches. Dim 0 of every graph input (a non-weight argument) whose
    extent `M` divides is the batch; the pass follows it through the ops'
    sharding rules: the batch dim of an op's result is the one whose major
    factor is the factor holding its operands' batch dims. Every value with
    a batch dim gets that dim divided by `M`; arguments and results with a
    batch dim get `dist.microbatch_dim` (the dim the runtime cuts the model
    input into micro-batches along, or concatenates the micro-batches'
    outputs along). A value that is the same for every micro-batch and
    meets the batch is cut: a splat constant is resized, anything else goes
    through `dist.microbatch_slice` (with reshards around it when its
    sharding splits that dim). An op that cannot compute per micro-batch
    (it reduces over the batch, needs its whole extent, or meets it in a
    dim where it is not the major factor) runs over the whole batch, on
    copies of the ops computing its operands from whole-batch copies of
    the graph inputs (new arguments with the same `dnn.name` and no
    `dist.microbatch_dim`). A function whose arguments carry
    `dist.microbatch_dim` is split already and left alone.

    A training step (a result with `dnn.updates`) in a pipeline is split
    even into one micro-batch. There, an op whose batch factor is a `sum`
    or `mean` reduction and that depends on a trainable parameter (a
    weight gradient, the loss) computes its share per micro-batch, and its
    results without the batch are summed over the step's micro-batches by
    a `dist.microbatch_sum` (`mean` for a mean) of the same sharding: a
    data-parallel gradient, a partial sum, is summed partial, so that its
    all-reduce (or ZeRO-1's reduce-scatter) runs once per step on the sum
    rather than once per micro-batch; a bf16/f16 share that is widened
    right away (a master weight's gradient) is summed widened, in f32. The
    ops on those sums are the step's final part. A
    parameter-dependent op that needs the whole batch otherwise, or an op
    meeting a micro-batch's value and such a sum, is an error naming it.

    It fails, naming the op, when no graph input has a dim 0 divisible by
    the count, or when a sharding no longer divides its value once split.
  }];
}

def MaterializeStagesPass
    : Pass<"dist-materialize-stages", "::mlir::ModuleOp"> {
  let summary = "Group the ops of @main into dist.stage regions";
  let description = [{
    Turns the `dist.stage` attributes of a pipelined plan (one per op, as
    the planner sets them) into structure: `@main` becomes one `dist.stage`
    op per stage of the module's `dist.pipeline` (stages x chunks of them,
    in order, empty ones included), each holding its ops in their original
    order, and one `dist.transfer` per value and later stage that uses it,
    right after the producing stage. Values computed from weights and
    constants alone are not transferred: their ops are copied into each
    stage that uses them. An op without a `dist.stage` goes to the latest
    stage of its operands. A value returned by `@main` is yielded by the
    stage computing it (the last stage for arguments and constants);
    transfers and stage results keep the value's `dist.shardings`.

    In a training step split into micro-batches, each `dist.microbatch_sum`
    becomes an accumulator argument (`dist.accumulator`) and a result
    updating it by the micro-batch's share, and the stages are numbered as
    a training pipeline (see `#dist.pipeline`'s `updateRounds`): a
    `dist.backward` op of stage `k` runs in stage `2V - 1 - k`, and the
    ops computing from accumulators run once per step, on the rank of the
    parameter they update. A sum over micro-batches that the final part
    of another rank reads is sent there once per step; an argument updated
    on one rank and used on others (a parameter tied across ranks, the
    fp16 loss scale) gets one more result per other rank, which receives
    the new value and writes it into its copy after its last read of the
    old one.

    The training step marks these with `dist.stage` on the function's
    arguments and results, which any pipelined input may carry: an
    argument with one is owned by that stage (stages on other ranks receive
    it by transfer), a result with one is yielded by that stage; the
    attributes are consumed.

    Fails, naming the op, when a stage uses a value of a later stage.
    Without `dist.pipeline`, or when `@main` already has stages, it does
    nothing.
  }];
}

def PartitionPass : Pass<"dist-partition", "::mlir::ModuleOp"> {
  let summary = "SPMD partitioning: global program to per-rank program";
  let description = [{
    Rewrites `@main`, whose every value has a sharding (after
    `dist-propagate-shardings` or `dist-stress-shardings`), into the program
    every rank runs: tensors get their local (per-device) types, each op
    computes on its local blocks, `dist.reshard` becomes collectives
    (`dist.all_reduce` for partial sums, `dist.all_gather`,
    `dist.shard_slice`, `dist.all_to_all`), reductions of kind max, min,
    prod and mean over a split dimension are completed with an all-reduce.
    Arguments and results keep their `dist.sharding` (the global layout the
    packager slices weights and inputs by). The result is checked as by
    `dist-check-partitioned`.
  }];
}

def OutlineStagesPass : Pass<"dist-outline-stages", "::mlir::ModuleOp"> {
  let summary = "Make each stage of a partitioned @main a function";
  let description = [{
    For the device phase of a pipelined plan: replaces the staged,
    partitioned `@main` by one public function per `dist.stage`,
    `@stage_K`, whose arguments are the values the stage uses from outside
    (in `getStageInputs` order: `@main`'s arguments, then transfers into
    the stage, by first use) and whose results are the stage's results.
    The transfers disappear: the runtime's schedule sends and receives
    them (see docs/runtime.md). Without stages it does nothing.
  }];
  let dependentDialects = ["::mlir::func::FuncDialect"];
}

def BucketAllReducesPass
    : Pass<"dist-bucket-all-reduces", "::mlir::ModuleOp"> {
  let summary = "Merge independent all-reduces into buckets";
  let description = [{
    On a per-rank program (after `dist-partition`): the `dist.all_reduce`
    ops of a block that reduce over the same mesh axes with the same kind
    and element type, none of which needs another's result, are merged into
    buckets of at most `bucket-bytes` bytes (PyTorch DDP's 25 MiB by
    default), as data-parallel training buckets its gradients: each bucket
    flattens its members' operands, concatenates them, all-reduces the
    concatenation once and slices the members' results back out, right
    before the first op that reads one of them. A training step's gradient
    all-reduces (one per parameter) become a few large collectives; an
    all-reduce whose result the next one depends on (tensor parallelism's)
    is left alone.

    Members join a bucket in the order their operands are computed, while
    every operand is computed before the bucket's first reader; every rank
    runs the same program through the same rewrite, so each device group
    still issues the same collectives in the same order.
  }];
  let options = [
    Option<"bucketBytes", "bucket-bytes", "int64_t",
           /*default=*/"25 * 1024 * 1024",
           "the largest bucket in bytes (0: no bucketing)">,
  ];
}

def CheckPartitionedPass
    : Pass<"dist-check-partitioned", "::mlir::ModuleOp"> {
  let summary = "Check that @main is a well-formed per-rank program";
  let description = [{
    Checks the output of `dist-partition`: no `dist.annotate` or
    `dist.reshard` is left, every argument and result of `@main` has the
    local type of its `dist.sharding`, no result is a partial sum, and every
    collective names an existing mesh. It changes nothing and fails on the
    first problem, naming the op or argument.
  }];
}

#endif // DNNC_DIALECT_DIST_TRANSFORMS_PASSES_TD
