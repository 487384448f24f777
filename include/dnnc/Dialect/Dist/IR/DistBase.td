//===- DistBase.td - Dist dialect, base op class and enums -*- tablegen -*-===//
//
// Part of the dnnc project.
//
//===----------------------------------------------------------------------===//
//
// The `dist` dialect describes how a program is distributed over a cluster:
// the device mesh, per-tensor shardings, collectives, point-to-point transfers
// and pipeline stages.
//
//===----------------------------------------------------------------------===//

#ifndef DNNC_DIALECT_DIST_IR_DISTBASE_TD
#define DNNC_DIALECT_DIST_IR_DISTBASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

//===----------------------------------------------------------------------===//
// Dialect
//===----------------------------------------------------------------------===//

def Dist_Dialect : Dialect {
  let name = "dist";
  let cppNamespace = "::dnnc::dist";
  let summary = "Device meshes, shardings, collectives and pipeline stages";
  let description = [{
    The `dist` dialect is dnnc's representation of a distribution plan. It
    holds:

    * `dist.mesh`, a module-level symbol naming a logical device mesh: named
      axes with sizes, the link class each axis communicates over and the
      order in which physical devices fill the mesh;
    * `#dist.sharding`, which says, for every dimension of a tensor, over which
      mesh axes it is split, and over which axes it holds partial sums;
    * `dist.annotate` and `dist.reshard` on global (unpartitioned) tensors;
    * collectives (`dist.all_reduce`, `dist.all_gather`, `dist.reduce_scatter`,
      `dist.all_to_all`, `dist.broadcast`) and point-to-point messages
      (`dist.send`, `dist.recv`) on per-rank tensors;
    * pipeline structure: `dist.stage` regions and `dist.transfer` between
      stages;
    * the plan record of the device phase, `#dist.plan`: what packaging
      reads from the lowered module.

    Shardings are attached to ordinary ops through two discardable
    attributes: `dist.sharding` (one `#dist.sharding` on a function argument
    or result) and `dist.shardings` (an array with one `#dist.sharding` per
    result of any op).

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
  }];

  let useDefaultAttributePrinterParser = 1;
  let hasOperationAttrVerify = 1;
  let hasRegionArgAttrVerify = 1;
  let hasRegionResultAttrVerify = 1;

  let extraClassDeclaration = [{
    /// Name of the discardable attribute that holds the sharding of a
    /// function argument or result (one `#dist.sharding`).
    static constexpr ::llvm::StringLiteral getShardingAttrName() {
      return ::llvm::StringLiteral("dist.sharding");
    }

    /// Name of the discardable attribute that holds the shardings of the
    /// results of an op (an array of `#dist.sharding`, one per result).
    static constexpr ::llvm::StringLiteral getShardingsAttrName() {
      return ::llvm::StringLiteral("dist.shardings");
    }

    /// Name of the discardable attribute that puts an op in a pipeline
    /// stage (an i64 >= 0; a virtual stage with interleaving: it runs on
    /// pipeline rank `stage % stages`).
    static constexpr ::llvm::StringLiteral getStageAttrName() {
      return ::llvm::StringLiteral("dist.stage");
    }

    /// Name of the unit attribute marking an op of a training step's
    /// backward pass (set by dnn-autodiff): with `dist.stage = k` it runs in
    /// the backward of stage `k`, after every forward stage.
    static constexpr ::llvm::StringLiteral getBackwardAttrName() {
      return ::llvm::StringLiteral("dist.backward");
    }

    /// Name of the unit argument attribute marking an accumulator of a
    /// training step split into micro-batches (`dist-materialize-stages`):
    /// zero at the start of each step, every micro-batch adds its share
    /// (a result updating the argument, `dnn.updates`), and the step's
    /// final part reads the sum.
    static constexpr ::llvm::StringLiteral getAccumulatorAttrName() {
      return ::llvm::StringLiteral("dist.accumulator");
    }

    /// Name of the module attribute describing the pipeline and the
    /// training-step choices of the plan (one `#dist.pipeline`).
    static constexpr ::llvm::StringLiteral getPipelineAttrName() {
      return ::llvm::StringLiteral("dist.pipeline");
    }

    /// Name of the discardable attribute on an argument or result of a
    /// function split into micro-batches (`dist-split-microbatches`): the
    /// dim (an i64 >= 0) along which the model input is cut into the
    /// micro-batches, or their outputs concatenated.
    static constexpr ::llvm::StringLiteral getMicrobatchDimAttrName() {
      return ::llvm::StringLiteral("dist.microbatch_dim");
    }

    /// Name of the module attribute in which the device phase keeps what
    /// packaging needs (one `#dist.plan`, set by dnnc-record-plan).
    static constexpr ::llvm::StringLiteral getPlanAttrName() {
      return ::llvm::StringLiteral("dist.plan");
    }

    /// Registers the attributes of the dialect (defined in DistAttrs.cpp).
    void registerAttributes();
  }];
}

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

def Dist_LinkClass : I32EnumAttr<"LinkClass",
    "the class of interconnect a mesh axis communicates over", [
  I32EnumAttrCase<"Intra", 0, "intra">,
  I32EnumAttrCase<"Inter", 1, "inter">
]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::dnnc::dist";
  let description = [{
    `intra`: the devices along the axis share a node and talk over a fast
    local link (NVLink, shared memory). `inter`: the devices along the axis
    sit in different nodes and talk over the network (InfiniBand, Ethernet).
    The cost model uses it to pick the bandwidth and latency of a collective.
  }];
}

def Dist_ReductionKind : I32EnumAttr<"ReductionKind",
    "the reduction a collective applies elementwise", [
  I32EnumAttrCase<"Sum", 0, "sum">,
  I32EnumAttrCase<"Max", 1, "max">,
  I32EnumAttrCase<"Min", 2, "min">,
  I32EnumAttrCase<"Prod", 3, "prod">,
  I32EnumAttrCase<"Mean", 4, "mean">
]> {
  // Used directly as an op attribute (`ReductionKindAttr`), printed as a
  // bare keyword.
  let cppNamespace = "::dnnc::dist";
  let description = [{
    `sum`, `max`, `min` and `prod` combine the group's tensors elementwise;
    `mean` is `sum` divided by the group size.
  }];
}

def Dist_Schedule : I32EnumAttr<"Schedule",
    "the order in which a pipeline's ranks run the micro-batches", [
  I32EnumAttrCase<"GPipe", 0, "gpipe">,
  I32EnumAttrCase<"OneFOneB", 1, "1f1b">,
  I32EnumAttrCase<"Interleaved", 2, "interleaved">
]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::dnnc::dist";
  let description = [{
    `gpipe`: all forwards, then all backwards (GPipe); inference pipelines.
    `1f1b`: one forward, one backward once the pipeline is full
    (PipeDream-Flush, Megatron-LM's default): GPipe's time with fewer
    micro-batches alive. `interleaved`: 1F1B over several model chunks per
    rank (Megatron-LM's interleaved schedule): a smaller bubble for more
    transfers. `dist::getRankOrder` gives the order of each rank.
  }];
}

def Dist_Recompute : I32EnumAttr<"Recompute",
    "what the backward pass of a training step recomputes", [
  I32EnumAttrCase<"Off", 0, "off">,
  I32EnumAttrCase<"Selective", 1, "selective">,
  I32EnumAttrCase<"Full", 2, "full">
]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::dnnc::dist";
  let description = [{
    `off`: every value the backward pass reads is kept. `selective`: the
    attention cores (the ops between two activation-by-activation products)
    run their forward pass again in the backward pass (Korthikanti et al.
    2022). `full`: everything but each layer's input is recomputed.
  }];
}

def Dist_BufferRole : I32EnumAttr<"BufferRole",
    "what a buffer of the plan's functions holds", [
  I32EnumAttrCase<"Input", 0, "input">,
  I32EnumAttrCase<"Weight", 1, "weight">,
  I32EnumAttrCase<"Output", 2, "output">,
  I32EnumAttrCase<"Activation", 3, "activation">,
  I32EnumAttrCase<"State", 4, "state">,
  I32EnumAttrCase<"Update", 5, "update">,
  I32EnumAttrCase<"Step", 6, "step">,
  I32EnumAttrCase<"Accumulator", 7, "accumulator">
]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::dnnc::dist";
  let description = [{
    `input`: (a rank's block of) a model input, written by the runtime
    before a run; `weight`: a weight, loaded from plan.bin; `output`: (a
    rank's block of) a model output, read after a run; `activation`: a
    tensor passed between pipeline stages. Training steps also have
    `state`: an optimizer state, zero at the first step and carried over;
    `update`: the new value of the weight or state buffer at position
    `index`, which it replaces after each call of the function writing it;
    `step`: the step number (a scalar f32) the runtime sets;
    `accumulator`: a sum over the micro-batches of a step, zero at the
    start of each step (`dist.accumulator`).
  }];
}

//===----------------------------------------------------------------------===//
// Base classes
//===----------------------------------------------------------------------===//

/// Base class of every `dist` attribute.
class Dist_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<Dist_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

/// Base class of every `dist` op.
class Dist_Op<string mnemonic, list<Trait> traits = []>
    : Op<Dist_Dialect, mnemonic, traits>;

#endif // DNNC_DIALECT_DIST_IR_DISTBASE_TD
