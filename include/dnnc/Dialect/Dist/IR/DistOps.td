//===- DistOps.td - Dist dialect operations ----------------*- tablegen -*-===//
//
// Part of the dnnc project.
//
//===----------------------------------------------------------------------===//
//
// Operations of the `dist` dialect: the mesh, sharding annotations and
// reshards on global tensors, collectives, local block slices and
// point-to-point messages on per-rank tensors, and pipeline stage structure.
//
//===----------------------------------------------------------------------===//

#ifndef DNNC_DIALECT_DIST_IR_DISTOPS_TD
#define DNNC_DIALECT_DIST_IR_DISTOPS_TD

include "dnnc/Dialect/Dist/IR/DistAttrs.td"
include "mlir/IR/BuiltinTypes.td"
include "mlir/IR/CommonAttrConstraints.td"
include "mlir/IR/CommonTypeConstraints.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

//===----------------------------------------------------------------------===//
// MeshOp
//===----------------------------------------------------------------------===//

def Dist_MeshOp : Dist_Op<"mesh", [
    Symbol, HasParent<"::mlir::ModuleOp">]> {
  let summary = "A logical device mesh";
  let description = [{
    Declares a logical mesh of devices as a module-level symbol. The mesh has
    one or more named axes; each axis has a size and the link class its
    collectives use (`intra`: inside a node, e.g. NVLink or shared memory;
    `inter`: across nodes, e.g. InfiniBand). The mesh holds
    `N = product of the axis sizes` devices.

    Mesh positions are numbered row-major over the axes (the first axis is
    the most significant). The optional `devices` list gives the device id
    (rank) at each position; it must be a permutation of `0 .. N-1` and
    defaults to the identity. It lets a plan put the `intra` axes on devices
    that share a node whatever order the launcher numbers ranks in.

    ```mlir
    // 2 nodes of 4 GPUs: data parallel across nodes, tensor parallel inside.
    dist.mesh @m ["dp" = 2 : inter, "tp" = 4 : intra]
    // The same mesh with an explicit device order.
    dist.mesh @m2 ["dp" = 2 : inter, "tp" = 2 : intra] devices = [0, 2, 1, 3]
    ```

    Verification: at least one axis, unique non-empty names, sizes >= 1, and
    `devices` (when present) a permutation of `0 .. N-1`.
  }];
  let arguments = (ins
    SymbolNameAttr:$sym_name,
    TypedArrayAttrBase<Dist_MeshAxisAttr, "array of mesh axes">:$axes,
    OptionalAttr<DenseI64ArrayAttr>:$devices
  );
  let assemblyFormat = [{
    $sym_name custom<MeshAxes>($axes) (`devices` `=` $devices^)? attr-dict
  }];
  let hasVerifier = 1;
  let builders = [
    OpBuilder<(ins "::llvm::StringRef":$name,
      "::llvm::ArrayRef<MeshAxisAttr>":$meshAxes,
      CArg<"::llvm::ArrayRef<int64_t>", "{}">:$deviceOrder)>,
    OpBuilder<(ins "::llvm::StringRef":$name,
      "::llvm::ArrayRef<MeshAxisSpec>":$axisSpecs)>
  ];
  let extraClassDeclaration = [{
    /// Returns the number of axes.
    unsigned getNumAxes() { return getAxes().size(); }

    /// Returns the axis at position `index`.
    MeshAxisAttr getAxis(unsigned index) {
      return ::llvm::cast<MeshAxisAttr>(getAxes()[index]);
    }

    /// Returns the position of the axis named `name`, if there is one.
    std::optional<unsigned> getAxisIndex(::llvm::StringRef name);

    /// Returns true if the mesh has an axis named `name`.
    bool hasAxis(::llvm::StringRef name) {
      return getAxisIndex(name).has_value();
    }

    /// Returns the size of the axis named `name`, which must exist.
    int64_t getAxisSize(::llvm::StringRef name);

    /// Returns the link class of the axis named `name`, which must exist.
    LinkClass getAxisLink(::llvm::StringRef name);

    /// Returns the axis sizes, in axis order.
    ::llvm::SmallVector<int64_t> getShape();

    /// Returns the number of devices: the product of the axis sizes.
    int64_t getNumDevices();

    /// Returns the number of devices in a group spanning `axes` (the product
    /// of their sizes). The axes must exist.
    int64_t getGroupSize(::llvm::ArrayRef<::mlir::StringAttr> axes);

    /// Returns the device id at every mesh position (`devices` or iota).
    ::llvm::SmallVector<int64_t> getDeviceOrder();

    /// Returns the device id at the mesh coordinates `multiIndex` (one entry
    /// per axis, each within the axis size).
    int64_t getDeviceId(::llvm::ArrayRef<int64_t> multiIndex);

    /// Returns the mesh coordinates of device `deviceId` (in `0 .. N-1`).
    ::llvm::SmallVector<int64_t> getMultiIndex(int64_t deviceId);

    /// Returns the devices in the group of `deviceId` along `axes`: the
    /// devices whose coordinates equal those of `deviceId` on every other
    /// axis, ordered by their coordinates on `axes` (the first listed axis
    /// the most significant). The position of a device in this list is its
    /// index in the group (e.g. a `dist.broadcast` root).
    ::llvm::SmallVector<int64_t>
    getGroupDevices(int64_t deviceId, ::llvm::ArrayRef<::mlir::StringAttr> axes);
  }];
}

//===----------------------------------------------------------------------===//
// Sharding ops on global tensors
//===----------------------------------------------------------------------===//

def Dist_AnnotateOp : Dist_Op<"annotate", [
    Pure, SameOperandsAndResultType,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "Constrains the sharding of a value";
  let description = [{
    Returns its operand unchanged and states that the result must have the
    given sharding. Users write it to pin a layout (e.g. the data-parallel
    split of a batch); the sharding search treats it as a hard constraint and
    partitioning turns it into a reshard where the producer disagrees.

    ```mlir
    %1 = dist.annotate %0 sharding <@m, [{"dp"}, {} ]> : tensor<8x16xf32>
    ```

    The sharding is written without its `#dist.sharding` prefix, as in all
    op syntax (a full dialect attribute would take the `: type` that follows
    as its own type).

    The sharding must name an existing `dist.mesh` and fit the type (rank,
    known axes, divisible split dims).
  }];
  let arguments = (ins AnyRankedTensor:$input, Dist_ShardingAttr:$sharding);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $input `sharding` $sharding attr-dict `:` type($input)
  }];
}

def Dist_ReshardOp : Dist_Op<"reshard", [
    Pure, SameOperandsAndResultType,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "Changes the sharding of a global value";
  let description = [{
    Returns its operand, laid out with the `to` sharding. The optional `from`
    sharding states the layout of the operand; when absent it is whatever the
    producer's sharding is. Both are on global (unpartitioned) types; SPMD
    partitioning lowers a reshard to collectives (all-gather, all-to-all,
    all-reduce for partial sums, or a local slice).

    ```mlir
    %1 = dist.reshard %0 to <@m, [{}, {"tp"} ]> : tensor<8x16xf32>
    %2 = dist.reshard %1 from <@m, [{}, {"tp"} ]> to <@m, [{"tp"}, {} ]>
        : tensor<8x16xf32>
    ```

    `from` and `to` must name the same mesh, and both must fit the type.
    A reshard whose `from` equals its `to` folds away.
  }];
  let arguments = (ins
    AnyRankedTensor:$input,
    OptionalAttr<Dist_ShardingAttr>:$from,
    Dist_ShardingAttr:$to
  );
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $input (`from` $from^)? `to` $to attr-dict `:` type($input)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Collectives on per-rank tensors
//===----------------------------------------------------------------------===//

/// Base class of the collectives. A collective runs in every device group
/// spanned by `axes` of `mesh`: the devices that share their coordinates on
/// all the other axes. Collectives synchronize ranks, so they are not `Pure`:
/// erasing or moving one on a single rank would deadlock the others.
class Dist_CollectiveOp<string mnemonic, list<Trait> traits = []>
    : Dist_Op<mnemonic, !listconcat(traits, [
        DeclareOpInterfaceMethods<SymbolUserOpInterface>])> {
  dag commonArgs = (ins FlatSymbolRefAttr:$mesh, StrArrayAttr:$axes);
  let results = (outs AnyRankedTensor:$result);
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Returns the names of the mesh axes the device group spans.
    ::llvm::SmallVector<::mlir::StringAttr> getAxisNames() {
      return ::llvm::to_vector(getAxes().getAsRange<::mlir::StringAttr>());
    }
  }];
}

def Dist_AllReduceOp : Dist_CollectiveOp<"all_reduce", [
    SameOperandsAndResultType]> {
  let summary = "All-reduce over a device group";
  let description = [{
    Reduces the per-device tensors of each group elementwise with `kind`
    (`sum`, `max`, `min`, `prod` or `mean`) and gives every device of the
    group the result.

    ```mlir
    %1 = dist.all_reduce sum %0 on @m axes ["tp"] : tensor<8x16xf32>
    ```
  }];
  let arguments = !con((ins AnyRankedTensor:$input,
                            Dist_ReductionKind:$kind), commonArgs);
  let assemblyFormat = [{
    $kind $input `on` $mesh `axes` $axes attr-dict `:` type($input)
  }];
}

def Dist_AllGatherOp : Dist_CollectiveOp<"all_gather", [
    SameOperandsAndResultElementType, SameOperandsAndResultRank]> {
  let summary = "All-gather over a device group";
  let description = [{
    Concatenates the per-device tensors of each group along `gather_dim`, in
    group order, and gives every device of the group the result. The result
    dim is the operand dim times the group size; the other dims are equal.

    ```mlir
    // "tp" has size 4.
    %1 = dist.all_gather %0 on @m axes ["tp"] gather_dim = 1
        : tensor<8x4xf32> -> tensor<8x16xf32>
    ```
  }];
  let arguments = !con((ins AnyRankedTensor:$input, I64Attr:$gather_dim),
                       commonArgs);
  let assemblyFormat = [{
    $input `on` $mesh `axes` $axes `gather_dim` `=` $gather_dim attr-dict
    `:` type($input) `->` type($result)
  }];
}

def Dist_ReduceScatterOp : Dist_CollectiveOp<"reduce_scatter", [
    SameOperandsAndResultElementType, SameOperandsAndResultRank]> {
  let summary = "Reduce-scatter over a device group";
  let description = [{
    Reduces the per-device tensors of each group elementwise with `kind`,
    cuts the result into group-size blocks along `scatter_dim` and gives
    block `i` to the device with index `i` in the group. The operand dim must
    be divisible by the group size; the result dim is the quotient.

    ```mlir
    // "tp" has size 4.
    %1 = dist.reduce_scatter sum %0 on @m axes ["tp"] scatter_dim = 0
        : tensor<8x16xf32> -> tensor<2x16xf32>
    ```
  }];
  let arguments = !con((ins AnyRankedTensor:$input,
                            Dist_ReductionKind:$kind,
                            I64Attr:$scatter_dim), commonArgs);
  let assemblyFormat = [{
    $kind $input `on` $mesh `axes` $axes `scatter_dim` `=` $scatter_dim
    attr-dict `:` type($input) `->` type($result)
  }];
}

def Dist_AllToAllOp : Dist_CollectiveOp<"all_to_all", [
    SameOperandsAndResultElementType, SameOperandsAndResultRank]> {
  let summary = "All-to-all over a device group";
  let description = [{
    Every device cuts its tensor into group-size blocks along `split_dim`,
    sends block `j` to the device with index `j` in the group, and
    concatenates the blocks it receives along `concat_dim`, in group order.
    The result's `split_dim` is the operand's divided by the group size and
    its `concat_dim` the operand's multiplied by it (no change when the two
    dims are the same).

    ```mlir
    // "tp" has size 4: move the split from dim 1 to dim 0.
    %1 = dist.all_to_all %0 on @m axes ["tp"] split_dim = 0 concat_dim = 1
        : tensor<8x4xf32> -> tensor<2x16xf32>
    ```
  }];
  let arguments = !con((ins AnyRankedTensor:$input, I64Attr:$split_dim,
                            I64Attr:$concat_dim), commonArgs);
  let assemblyFormat = [{
    $input `on` $mesh `axes` $axes `split_dim` `=` $split_dim
    `concat_dim` `=` $concat_dim attr-dict
    `:` type($input) `->` type($result)
  }];
}

def Dist_BroadcastOp : Dist_CollectiveOp<"broadcast", [
    SameOperandsAndResultType]> {
  let summary = "Broadcast within a device group";
  let description = [{
    Gives every device of each group the tensor of the group's device with
    index `root` (an index in the group, `0 .. group size - 1`; see
    `MeshOp::getGroupDevices`). The operands of the other devices are only
    used for their type.

    ```mlir
    %1 = dist.broadcast %0 on @m axes ["dp"] root = 0 : tensor<8x16xf32>
    ```
  }];
  let arguments = !con((ins AnyRankedTensor:$input, I64Attr:$root),
                       commonArgs);
  let assemblyFormat = [{
    $input `on` $mesh `axes` $axes `root` `=` $root attr-dict
    `:` type($input)
  }];
}

//===----------------------------------------------------------------------===//
// Local slices of per-rank tensors
//===----------------------------------------------------------------------===//

def Dist_ShardSliceOp : Dist_Op<"shard_slice", [
    Pure, SameOperandsAndResultElementType, SameOperandsAndResultRank,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "Keeps this device's block of a per-rank tensor";
  let description = [{
    Treats the operand, a per-rank tensor, as a whole and returns the block
    of it that `sharding` gives this device: dimension `d` is cut into
    `prod(size of the axes of dims[d])` equal blocks and the device keeps
    block `idx_d`, the row-major linearization of its mesh coordinates on
    those axes in the listed order (the first listed axis the most
    significant), the block numbering of `#dist.sharding`. The result type
    is the local type of the operand type under the sharding.

    Partitioning emits it where a value that is whole along some mesh axes
    (replicated there, or a constant) must become split along them. It
    needs no communication: every device cuts its own copy.

    ```mlir
    // "x" has size 2: device (x = i) keeps rows 4i .. 4i+3.
    %1 = dist.shard_slice %0 to <@m, [{"x"}, {} ]>
        : tensor<8x16xf32> -> tensor<4x16xf32>
    ```

    The result depends on the device but not on other devices, so the op is
    `Pure` (every rank computes its own block deterministically). The
    sharding must name an existing `dist.mesh`, fit the operand type and
    have no partial axes; the result type must be its local type.
  }];
  let arguments = (ins AnyRankedTensor:$input, Dist_ShardingAttr:$sharding);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $input `to` $sharding attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Dist_MicrobatchSliceOp : Dist_Op<"microbatch_slice", [
    Pure, SameOperandsAndResultElementType, SameOperandsAndResultRank]> {
  let summary = "Keeps the running micro-batch's block of a value";
  let description = [{
    In a program split into `count` micro-batches (`dist-split-microbatches`)
    that runs once per micro-batch, cuts the operand, a value computed over
    the whole batch, into `count` equal blocks along `dim` and returns block
    `m`, where `m` is the micro-batch being computed (the runtime's
    `dnnc_rt_microbatch_index`). The result type is the operand type with
    `dim` divided by `count`.

    ```mlir
    // Micro-batch m of 2 keeps rows 2m and 2m + 1.
    %1 = dist.microbatch_slice %0 dim 0 of 2 : tensor<4x16xi64> -> tensor<2x16xi64>
    ```

    Verification: `dim` is a dim of the operand, `count >= 1` divides its
    static extent, and the result type is as above.
  }];
  let arguments = (ins AnyRankedTensor:$input, I64Attr:$dim, I64Attr:$count);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $input `dim` $dim `of` $count attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Dist_MicrobatchSumOp : Dist_Op<"microbatch_sum", [
    SameOperandsAndResultType]> {
  let summary = "Sums a value over the micro-batches of a training step";
  let description = [{
    In a training step split into micro-batches (`dist-split-microbatches`),
    the operand is one micro-batch's share of a sum over the whole batch
    (a weight gradient, the loss): the result is the sum of the operand over
    every micro-batch of the step, or their mean with `mean`. The result is
    a value of the step, not of one micro-batch: only the step's final
    part (the optimizer) may use it. `dist-materialize-stages` turns each
    one into an accumulator argument of `@main` that the micro-batches add
    to (`dist.accumulator`).

    ```mlir
    %sum = dist.microbatch_sum %grad : tensor<16x16xf32>
    %loss = dist.microbatch_sum %part mean : tensor<f32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input, UnitAttr:$mean);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $input (`mean` $mean^)? attr-dict `:` type($input)
  }];
}

//===----------------------------------------------------------------------===//
// Point-to-point
//===----------------------------------------------------------------------===//

def Dist_SendOp : Dist_Op<"send", [
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "Sends a per-rank tensor to another rank";
  let description = [{
    Sends `input` to rank `peer`, matched with the `dist.recv` of that rank
    that names this rank and the same `tag`. Used in per-rank programs
    (after partitioning), e.g. between pipeline stages. When a mesh is named,
    `peer` must be one of its device ids.

    ```mlir
    dist.send %0 to 4 tag 0 on @m : tensor<2x16xf32>
    ```
  }];
  let arguments = (ins
    AnyRankedTensor:$input,
    I64Attr:$peer,
    I64Attr:$tag,
    OptionalAttr<FlatSymbolRefAttr>:$mesh
  );
  let assemblyFormat = [{
    $input `to` $peer `tag` $tag (`on` $mesh^)? attr-dict `:` type($input)
  }];
  let hasVerifier = 1;
}

def Dist_RecvOp : Dist_Op<"recv", [
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "Receives a per-rank tensor from another rank";
  let description = [{
    Receives a tensor of the result type from rank `peer`, sent by a
    `dist.send` of that rank that names this rank and the same `tag`. When a
    mesh is named, `peer` must be one of its device ids.

    ```mlir
    %0 = dist.recv from 0 tag 0 on @m : tensor<2x16xf32>
    ```
  }];
  let arguments = (ins
    I64Attr:$peer,
    I64Attr:$tag,
    OptionalAttr<FlatSymbolRefAttr>:$mesh
  );
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    `from` $peer `tag` $tag (`on` $mesh^)? attr-dict `:` type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Pipeline structure
//===----------------------------------------------------------------------===//

def Dist_TransferOp : Dist_Op<"transfer", [Pure, SameOperandsAndResultType]> {
  let summary = "Moves a global value from one pipeline stage to another";
  let description = [{
    In global (pre-partitioning) IR, states that a value produced in
    pipeline stage `src_stage` is consumed in stage `dst_stage`. The value is
    unchanged. Partitioning keeps the transfer on local types (see below);
    `dist-outline-stages` removes it, and the packager turns it into the
    send and receive steps of the runtime's per-rank schedules.

    ```mlir
    %1 = dist.transfer %0 from stage 0 to stage 1 : tensor<8x16xf32>
    ```

    The stages must be non-negative and `src_stage < dst_stage` (a
    pipeline's values flow to later stages, so the stages form no cycle);
    when the operand is a result of a `dist.stage`, that stage must be
    `src_stage`. In a function with stages (see `dist.stage`) the operand
    must be a stage result. After partitioning the transfer has local
    types: each device of the source stage sends its block to the device
    of the destination stage with the same coordinates on the other mesh
    axes.
  }];
  let arguments = (ins AnyType:$input, I64Attr:$src_stage,
                       I64Attr:$dst_stage);
  let results = (outs AnyType:$result);
  let assemblyFormat = [{
    $input `from` `stage` $src_stage `to` `stage` $dst_stage attr-dict
    `:` type($input)
  }];
  let hasVerifier = 1;
}

def Dist_StageOp : Dist_Op<"stage", [
    DeclareOpInterfaceMethods<RegionBranchOpInterface>,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>,
    RecursiveMemoryEffects, SingleBlock, NoRegionArguments]> {
  let summary = "A pipeline stage";
  let description = [{
    Groups the ops of one pipeline stage. The body is a single block, without
    arguments, that may use values defined above (typically the results of
    earlier stages, through `dist.transfer`) and ends with a `dist.yield` of
    the stage's results. `stage` is the stage index (>= 0); the optional mesh
    is the sub-mesh the stage runs on.

    ```mlir
    %r:2 = dist.stage 0 on @stage0 -> (tensor<8x16xf32>, tensor<8x16xf32>) {
      %a = arith.addf %x, %x : tensor<8x16xf32>
      %b = arith.mulf %a, %x : tensor<8x16xf32>
      dist.yield %a, %b : tensor<8x16xf32>, tensor<8x16xf32>
    }
    ```

    The body runs exactly once; the yielded values become the results, so
    their types must equal the result types.

    A function whose body holds `dist.stage` ops is *staged*
    (`dist-materialize-stages` makes one): its top level holds only stages,
    `dist.transfer` ops and the terminator, so every op is in exactly one
    stage; the stages appear once each, in increasing index order; a stage
    body uses from outside only the function's arguments and the results of
    transfers into that stage. The verifier checks all of this.
  }];
  let arguments = (ins I64Attr:$stage, OptionalAttr<FlatSymbolRefAttr>:$mesh);
  let results = (outs Variadic<AnyType>:$results);
  let regions = (region SizedRegion<1>:$region);
  let assemblyFormat = [{
    $stage (`on` $mesh^)? (`->` `(` type($results)^ `)`)?
    attr-dict-with-keyword $region
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Returns the `dist.yield` that ends the body (the op must verify).
    YieldOp getYield();
  }];
}

def Dist_YieldOp : Dist_Op<"yield", [
    Pure, ReturnLike, Terminator, HasParent<"StageOp">]> {
  let summary = "Terminates a pipeline stage";
  let description = [{
    Returns the values of a `dist.stage` body as the stage's results.

    ```mlir
    dist.yield %a, %b : tensor<8x16xf32>, tensor<8x16xf32>
    ```
  }];
  let arguments = (ins Variadic<AnyType>:$values);
  let assemblyFormat = "($values^ `:` type($values))? attr-dict";
  let builders = [OpBuilder<(ins), [{ /* no values */ }]>];
}

#endif // DNNC_DIALECT_DIST_IR_DISTOPS_TD
