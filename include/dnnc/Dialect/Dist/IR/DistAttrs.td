//===- DistAttrs.td - Dist dialect attributes --------------*- tablegen -*-===//
//
// Part of the dnnc project.
//
//===----------------------------------------------------------------------===//
//
// Attributes of the `dist` dialect: mesh axes, axis lists, shardings and the
// enum attributes used by ops.
//
//===----------------------------------------------------------------------===//

#ifndef DNNC_DIALECT_DIST_IR_DISTATTRS_TD
#define DNNC_DIALECT_DIST_IR_DISTATTRS_TD

include "dnnc/Dialect/Dist/IR/DistBase.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"

//===----------------------------------------------------------------------===//
// MeshAxisAttr
//===----------------------------------------------------------------------===//

def Dist_MeshAxisAttr : Dist_Attr<"MeshAxis", "axis"> {
  let summary = "A named axis of a device mesh";
  let description = [{
    One axis of a `dist.mesh`: a non-empty name, a size (at least 1) and the
    link class its collectives run over (`intra`: inside a node, `inter`:
    across nodes). `dist.mesh` stores its axes as an array of these and prints
    them in a shorter form, `"name" = size : link`.

    ```mlir
    #dist.axis<"tp", 4, intra>
    ```
  }];
  let parameters = (ins
    AttrParameter<"::mlir::StringAttr", "the axis name">:$name,
    AttrParameter<"int64_t", "the number of devices along the axis">:$size,
    EnumParameter<Dist_LinkClass>:$link
  );
  let assemblyFormat = "`<` $name `,` $size `,` $link `>`";
  let genVerifyDecl = 1;
}

//===----------------------------------------------------------------------===//
// AxisListAttr
//===----------------------------------------------------------------------===//

def Dist_AxisListAttr : Dist_Attr<"AxisList", "axes"> {
  let summary = "An ordered list of mesh axis names";
  let description = [{
    The mesh axes one tensor dimension is split over, major to minor: the
    dimension is cut into `size(a0) * size(a1) * ...` blocks and the device at
    mesh coordinates `(i0, i1, ...)` along those axes holds the block numbered
    by their row-major linearization (the first listed axis the most
    significant). An empty list means the dimension is not split. Inside a `#dist.sharding` it is written as a brace-enclosed
    list; on its own it is a `#dist.axes`.

    ```mlir
    #dist.axes<{"dp", "tp"}>
    ```

    The list is a plain container; `#dist.sharding` checks the names.
  }];
  let parameters = (ins
    ArrayRefParameter<"::mlir::StringAttr", "mesh axis names">:$axes
  );
  let hasCustomAssemblyFormat = 1;
  let builders = [
    AttrBuilder<(ins "::llvm::ArrayRef<::llvm::StringRef>":$names)>
  ];
  let extraClassDeclaration = [{
    /// Returns the number of axes in the list.
    size_t size() const { return getAxes().size(); }
    /// Returns true if the list holds no axis.
    bool empty() const { return getAxes().empty(); }
  }];
}

//===----------------------------------------------------------------------===//
// ShardingAttr
//===----------------------------------------------------------------------===//

def Dist_ShardingAttr : Dist_Attr<"Sharding", "sharding"> {
  let summary = "How a tensor is laid out over a device mesh";
  let description = [{
    A sharding names a `dist.mesh` and gives, for every dimension of a
    tensor, the ordered list of mesh axes the dimension is split over (major
    to minor; `{}` = not split). Mesh axes not used by any dimension replicate
    the tensor. The optional `partial` list names axes over which the tensor
    holds partial sums: the true value is the elementwise sum, across those
    axes, of the per-device values (a pending all-reduce).

    ```mlir
    // dim 0 split over "dp", dim 1 whole, dim 2 split over "tp" then "x".
    #dist.sharding<@m, [{"dp"}, {}, {"tp", "x"} ]>
    // A replicated 2-D tensor.
    #dist.sharding<@m, [{}, {} ]>
    // Partial sums over "tp", e.g. the output of a row-parallel matmul.
    #dist.sharding<@m, [{}, {} ], partial = {"tp"}>
    ```

    An axis may be used at most once across all dimensions and the partial
    list. Checks that need the mesh or the tensor type (the axes exist, the
    rank matches, split dimensions divide evenly) are done by
    `dnnc::dist::verifyShardingForType`, which the op verifiers and the
    `dist-check-shardings` pass call.
  }];
  let parameters = (ins
    AttrParameter<"::mlir::FlatSymbolRefAttr", "the dist.mesh">:$mesh,
    ArrayRefParameter<"AxisListAttr", "per-dimension split axes">:$dims,
    OptionalArrayRefParameter<"::mlir::StringAttr",
                              "partial-sum axes">:$partial
  );
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let builders = [
    AttrBuilder<(ins "::llvm::StringRef":$mesh,
      "::llvm::ArrayRef<::llvm::SmallVector<::llvm::StringRef>>":$dimAxes,
      CArg<"::llvm::ArrayRef<::llvm::StringRef>", "{}">:$partialAxes)>
  ];
  let extraClassDeclaration = [{
    /// Returns a fully replicated sharding of a rank-`rank` tensor on `mesh`.
    static ShardingAttr getReplicated(::mlir::MLIRContext *context,
                                      ::mlir::FlatSymbolRefAttr mesh,
                                      int64_t rank);

    /// Returns the rank of the tensors this sharding describes.
    int64_t getRank() const { return getDims().size(); }

    /// Returns the mesh axes dimension `dim` is split over, major to minor.
    ::llvm::ArrayRef<::mlir::StringAttr> getDimAxes(unsigned dim) const {
      return getDims()[dim].getAxes();
    }

    /// Returns true if dimension `dim` is split over at least one axis.
    bool isDimSplit(unsigned dim) const { return !getDimAxes(dim).empty(); }

    /// Returns true if some dimension is split.
    bool isSplit() const;

    /// Returns true if the tensor holds partial sums over some axes.
    bool isPartial() const { return !getPartial().empty(); }

    /// Returns true if every device holds the whole, final tensor: no
    /// dimension is split and there are no partial axes.
    bool isReplicated() const { return !isSplit() && !isPartial(); }

    /// Returns true if `axis` is used, either to split a dim or as partial.
    bool usesAxis(::llvm::StringRef axis) const;

    /// Returns the dimension split over `axis`, if any.
    std::optional<unsigned> getDimOfAxis(::llvm::StringRef axis) const;

    /// Returns every axis used, the dims' axes in order, then partial axes.
    ::llvm::SmallVector<::mlir::StringAttr> getUsedAxes() const;

    /// Returns the number of blocks dimension `dim` is cut into on `mesh`,
    /// the product of the sizes of its axes. The axes must exist in `mesh`.
    int64_t getNumShards(unsigned dim, MeshOp mesh) const;

    /// Returns the per-device shape of a tensor of shape `globalShape` on
    /// `mesh`. Dynamic dims stay dynamic. Requires a sharding already
    /// checked with `verifyShardingForType`.
    ::llvm::SmallVector<int64_t>
    getLocalShape(::llvm::ArrayRef<int64_t> globalShape, MeshOp mesh) const;

    /// Returns `globalType` with its shape replaced by the local shape.
    ::mlir::RankedTensorType getLocalType(::mlir::RankedTensorType globalType,
                                          MeshOp mesh) const;

    /// Returns this sharding with the partial axes dropped.
    ShardingAttr getWithoutPartial() const;
  }];
}

//===----------------------------------------------------------------------===//
// PipelineAttr
//===----------------------------------------------------------------------===//

def Dist_PipelineAttr : Dist_Attr<"Pipeline", "pipeline"> {
  let summary = "The pipeline and training-step choices of a plan";
  let description = [{
    The module attribute `dist.pipeline`: how the ops of `@main`, each in a
    stage (`dist.stage`), run as a pipeline, and what a training step keeps.

    * `axis`: the mesh axis of the pipeline ranks (absent: no pipeline
      ranks, e.g. micro-batches on one device);
    * `stages`: pipeline ranks (the axis size), `chunks`: model chunks per
      rank (virtual stages `stages * chunks`; stage `s` runs on pipeline
      rank `s % stages`), `microbatches`: the batch is cut into this many;
    * `schedule`: the order of the micro-batches on each rank
      (`dist::getRankOrder`);
    * `recompute` and `zero`: what the backward pass recomputes, and
      optimizer states sharded over the data-parallel axis (ZeRO-1);
    * `updateRounds`: 0 for a pipeline that runs forwards only; in a
      compiled training step (`dist-materialize-stages`), the number of
      rounds of the step's final part (gradient clipping, the optimizer):
      stages `0 .. V-1` (`V = stages * chunks`) are the forwards, stage
      `V + j` the backward of forward stage `V - 1 - j`, and stage
      `2V + r * stages + p` round `r` of the final part on pipeline rank
      `p` (`getStageRank`). Forwards and backwards run once per
      micro-batch, the final part once per step.

    Every entry may be omitted (no axis, counts of 1, `gpipe`, `off`,
    `false`); entries at their default are not printed:

    ```mlir
    module attributes {dist.pipeline = #dist.pipeline<axis = "pp", stages = 2,
                                                      microbatches = 4,
                                                      schedule = 1f1b>} {
    ```

    The counts are at least 1, and several chunks need the `interleaved`
    schedule. The dialect checks, on the module, that the axis exists with
    `stages` devices and that every `dist.stage` is below `stages * chunks`.
  }];
  let parameters = (ins
    OptionalParameter<"::mlir::StringAttr", "the pipeline mesh axis">:$axis,
    DefaultValuedParameter<"int64_t", "1", "pipeline ranks">:$stages,
    DefaultValuedParameter<"int64_t", "1", "model chunks per rank">:$chunks,
    DefaultValuedParameter<"int64_t", "1", "micro-batches per step">:
      $microbatches,
    DefaultValuedParameter<"::dnnc::dist::Schedule",
      "::dnnc::dist::Schedule::GPipe", "the schedule">:$schedule,
    DefaultValuedParameter<"::dnnc::dist::Recompute",
      "::dnnc::dist::Recompute::Off", "backward recomputation">:$recompute,
    DefaultValuedParameter<"bool", "false", "ZeRO-1 optimizer states">:$zero,
    DefaultValuedParameter<"int64_t", "0",
      "rounds of a training step's final part">:$updateRounds
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Returns the number of virtual stages, `stages * chunks`.
    int64_t getNumVirtualStages() const { return getStages() * getChunks(); }

    /// Returns true for a compiled training step (forward, backward and
    /// final stages; `updateRounds > 0`).
    bool isTrainingStep() const { return getUpdateRounds() > 0; }

    /// Returns the number of stages of the staged program: the virtual
    /// stages, and for a training step their backwards and the rounds of
    /// its final part.
    int64_t getNumStages() const {
      return isTrainingStep() ? 2 * getNumVirtualStages() +
                                    getUpdateRounds() * getStages()
                              : getNumVirtualStages();
    }

    /// Returns the stage of a training step that runs the backward of
    /// virtual stage `forward` (on the same rank).
    int64_t getBackwardStage(int64_t forward) const {
      return 2 * getNumVirtualStages() - 1 - forward;
    }

    /// Returns the stage of a training step that runs round `round` of its
    /// final part on pipeline rank `rank`.
    int64_t getFinalStage(int64_t round, int64_t rank) const {
      return 2 * getNumVirtualStages() + round * getStages() + rank;
    }

    /// Returns the pipeline rank that runs stage `stage` (< getNumStages()).
    int64_t getStageRank(int64_t stage) const {
      int64_t v = getNumVirtualStages();
      if (stage < v)
        return stage % getStages();
      if (stage < 2 * v)
        return getBackwardStage(stage) % getStages();
      return (stage - 2 * v) % getStages();
    }

    /// Returns true when the program runs as a pipeline: several virtual
    /// stages or several micro-batches.
    bool isPipelined() const {
      return getNumVirtualStages() > 1 || getMicrobatches() > 1;
    }
  }];
}

//===----------------------------------------------------------------------===//
// Plan record: what packaging reads from the lowered module
//===----------------------------------------------------------------------===//

def Dist_PlanBufferAttr : Dist_Attr<"PlanBuffer", "buffer"> {
  let summary = "A buffer of the plan's functions";
  let description = [{
    One tensor that the functions of a plan read or write, as every rank
    holds it (`type`, its local type) and as the model sees it (`global`:
    its type before partitioning). `role` says what it holds; `index` is
    the model input or output it is (a block of; several input buffers may
    be the same model input, e.g. the whole batch next to its micro-batch),
    `sharding` its layout over the mesh (absent: whole on every rank),
    `weight` a weight's global value and `microbatch_dim` the dim along
    which a pipelined model input or output is cut into micro-batches (-1:
    none).

    ```mlir
    #dist.buffer<role = input, name = "x", type = tensor<2x8xf32>,
                 global = tensor<4x8xf32>,
                 sharding = <@mesh, [{"dp"}, {} ]>>
    ```
  }];
  let parameters = (ins
    EnumParameter<Dist_BufferRole>:$role,
    AttrParameter<"::mlir::StringAttr", "the tensor's name">:$name,
    AttrParameter<"::mlir::RankedTensorType", "the local type">:$type,
    AttrParameter<"::mlir::RankedTensorType", "the global type">:$global,
    DefaultValuedParameter<"int64_t", "0",
      "the model input or output index">:$index,
    OptionalParameter<"::dnnc::dist::ShardingAttr", "the layout">:$sharding,
    OptionalParameter<"::mlir::DenseElementsAttr",
      "a weight's global value">:$weight,
    DefaultValuedParameter<"int64_t", "-1",
      "the micro-batch dim, or -1">:$microbatch_dim
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def Dist_PlanFunctionAttr : Dist_Attr<"PlanFunction", "function"> {
  let summary = "A function of the plan's code and the buffers it takes";
  let description = [{
    One exported function of a rank's code: its `symbol`, the pipeline
    `stage` it computes (0 without a pipeline) and, in its calling
    convention, the buffers it takes (positions in the `#dist.plan`'s
    buffer list): its inputs, then its results.

    ```mlir
    #dist.function<symbol = "dnnc_entry_stage_1", stage = 1,
                   buffers = [2, 5, 6]>
    ```
  }];
  let parameters = (ins
    AttrParameter<"::mlir::StringAttr", "the exported symbol">:$symbol,
    DefaultValuedParameter<"int64_t", "0", "the pipeline stage">:$stage,
    AttrParameter<"::mlir::DenseI64ArrayAttr",
      "the buffers, by position">:$buffers
  );
  let assemblyFormat = "`<` struct(params) `>`";
}

def Dist_PlanTransferAttr : Dist_Attr<"PlanTransfer", "transfer"> {
  let summary = "A tensor passed from one pipeline stage to another";
  let description = [{
    Stage `from` produces buffer `source`, stage `to` reads it as buffer
    `target` (positions in the `#dist.plan`'s buffer list). Its position in
    the plan's transfer list is the tag of its messages. Between stages on
    the same rank `target` is `source` itself.

    ```mlir
    #dist.transfer<from = 0, to = 1, source = 4, target = 5>
    ```
  }];
  let parameters = (ins
    AttrParameter<"int64_t", "the sending stage">:$from,
    AttrParameter<"int64_t", "the receiving stage">:$to,
    AttrParameter<"int64_t", "the sent buffer">:$source,
    AttrParameter<"int64_t", "the received buffer">:$target
  );
  let assemblyFormat = "`<` struct(params) `>`";
}

def Dist_PlanAttr : Dist_Attr<"Plan", "plan"> {
  let summary = "What packaging needs of a lowered module";
  let description = [{
    The module attribute `dist.plan`, recorded by `dnnc-record-plan` at the
    start of the device phase and kept by every later pass: the mesh
    (`axes` and the device order `devices`, absent for the identity; no
    axes: one rank), the `pipeline` (absent: none), the `buffers` the
    functions take (`#dist.buffer`), the `functions` each rank may run
    (`#dist.function`) and the `transfers` between pipeline stages
    (`#dist.transfer`). A rank runs the functions of the stages `s` with
    `s % stages` equal to its pipeline coordinate, in the order
    `dist::getRankOrder` gives; without a pipeline it runs the one
    function. The packager (`lib/Target/Package`) turns it into plan.bin.
  }];
  let parameters = (ins
    AttrParameter<"::mlir::ArrayAttr", "the mesh axes (#dist.axis)">:$axes,
    OptionalParameter<"::mlir::DenseI64ArrayAttr",
      "the device order">:$devices,
    OptionalParameter<"::dnnc::dist::PipelineAttr", "the pipeline">:$pipeline,
    AttrParameter<"::mlir::ArrayAttr", "the buffers (#dist.buffer)">:$buffers,
    AttrParameter<"::mlir::ArrayAttr",
      "the functions (#dist.function)">:$functions,
    AttrParameter<"::mlir::ArrayAttr",
      "the stage transfers (#dist.transfer)">:$transfers
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Returns the mesh axis at `index`.
    MeshAxisAttr getAxis(unsigned index) const {
      return ::llvm::cast<MeshAxisAttr>(getAxes()[index]);
    }

    /// Returns the position of the axis named `name`, if there is one.
    std::optional<unsigned> getAxisIndex(::llvm::StringRef name) const;

    /// Returns the axis sizes, in axis order.
    ::llvm::SmallVector<int64_t> getShape() const;

    /// Returns the device order (empty for the identity).
    ::llvm::ArrayRef<int64_t> getDeviceOrder() const;

    /// Returns the buffer at `index`.
    PlanBufferAttr getBuffer(int64_t index) const {
      return ::llvm::cast<PlanBufferAttr>(getBuffers()[index]);
    }

    /// Returns the buffers, typed.
    auto getBufferList() const {
      return getBuffers().getAsRange<PlanBufferAttr>();
    }

    /// Returns the functions, typed.
    auto getFunctionList() const {
      return getFunctions().getAsRange<PlanFunctionAttr>();
    }

    /// Returns the transfers, typed.
    auto getTransferList() const {
      return getTransfers().getAsRange<PlanTransferAttr>();
    }
  }];
}

#endif // DNNC_DIALECT_DIST_IR_DISTATTRS_TD
