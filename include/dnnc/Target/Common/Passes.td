//===- Passes.td - passes shared by the device targets ----*- tablegen -*-===//
//
// Passes of the device phase that both targets (cpu and cuda) run: the
// plan record, tensor-level rewrites, buffer planning and the lowering of
// collectives and GEMMs to runtime calls.
//
//===----------------------------------------------------------------------===//

#ifndef DNNC_TARGET_COMMON_PASSES_TD
#define DNNC_TARGET_COMMON_PASSES_TD

include "mlir/Pass/PassBase.td"

def RecordPlanPass : Pass<"dnnc-record-plan", "::mlir::ModuleOp"> {
  let summary = "Keep what packaging needs as the module's #dist.plan";
  let description = [{
    The first pass of both device pipelines. It reads the partitioned
    module (`@main` with outlined weights, the `dist.mesh`, the
    `dist.pipeline` and `@main`'s `dist.stage` and `dist.transfer` ops) and
    records, as the module attribute `dist.plan` (`#dist.plan`), what the
    packager needs once lowering has erased them: the mesh axes and device
    order, the pipeline, one `#dist.buffer` per argument (model inputs and
    weights) and result (model outputs) of `@main` and per tensor passed
    between stages, the functions each rank may run with the buffers they
    take, and the transfers between stages.

    Buffers: the arguments of `@main` in order (`input` or `weight`, by
    their `dnn.weight`), then its results (`output`), each with its local
    type, global type (local times the shards of its `dist.sharding`), the
    model input or output index (a second argument named like an earlier
    input is that input), the sharding, a weight's global value and the
    `dist.microbatch_dim`. With `dnn.precision` bf16 or fp16 the f32
    weights of an unpipelined `@main` are recorded rounded to that type
    (round to nearest even, overflow to infinity), as the device phase
    converts the weight arguments; pipelined plans keep f32 weights.

    Functions: `@main` as `dnnc_entry` over every buffer; in a pipelined
    plan (`@main` holds `dist.stage` ops) one function per stage `k`,
    `getEntrySymbol(getStageFunctionName(k))`, over its inputs (arguments of
    `@main`, or the tensors received from other stages: one `activation`
    buffer `transfer N` per transfer) then its results (model outputs, or
    `activation` buffers `stage K result R`); the transfers in `@main`'s
    order.

    Fails, naming the argument or result, when a type cannot be represented
    in plan.bin, when the module has more than one mesh, or when a sharding
    names no mesh of the module, holds partial sums or does not fit its
    value; and when the stages are not numbered in order, disagree with the
    `dist.pipeline`, or use values that are neither arguments nor
    transfers.
  }];
  let dependentDialects = ["::dnnc::dist::DistDialect"];
}

def ConvToGemmPass : Pass<"dnn-conv-to-gemm"> {
  let summary = "2-D convolutions as im2col and a BLAS-able matmul";
  let description = [{
    Rewrites `linalg.conv_2d_nchw_fchw` on static f32/f64 tensors (the
    lowering of one-group 2-D `dnn.conv`, input already padded, init the
    broadcast bias) into

    * an im2col `linalg.generic` over `(n, c, kh, kw, oh, ow)` that copies
      `input[n, c, oh * sh + kh * dh, ow * sw + kw * dw]` (no padding logic:
      the input is padded);
    * a `linalg.matmul` of the `[M, C*KH*KW]` weight and the
      `[C*KH*KW, OH*OW]` columns (batch 1), or a `linalg.batch_matmul` with
      the weight broadcast over the batch, into a zero fill, which
      `dnn-matmul-to-blas` turns into a BLAS call;
    * an elementwise add of the original init (the bias), unless it is a
      zero fill.

    The convolution loops otherwise become a 7-deep scalar loop nest, ~30x
    slower than BLAS on ResNet-18. The columns take `C*KH*KW*OH*OW` elements
    per image.

    ```mlir
    %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
        ins(%x, %w : tensor<1x16x10x10xf32>, tensor<32x16x3x3xf32>)
        outs(%bias : tensor<1x32x8x8xf32>) -> tensor<1x32x8x8xf32>
    ```
    becomes (schematically)
    ```mlir
    %cols = linalg.generic ... ins(%x) -> tensor<1x16x3x3x8x8xf32>
    %c = tensor.collapse_shape %cols [[0, 1, 2, 3], [4, 5]] : ... into tensor<144x64xf32>
    %w2 = tensor.collapse_shape %w [[0], [1, 2, 3]] : ... into tensor<32x144xf32>
    %p = linalg.matmul ins(%w2, %c : ...) outs(%zeros : tensor<32x64xf32>)
    %e = tensor.expand_shape %p [[0, 1], [2, 3]] ... into tensor<1x32x8x8xf32>
    %y = linalg.generic ... ins(%bias, %e) { addf }
    ```
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

def WidenReducedFloatsPass : Pass<"dnn-widen-reduced-floats"> {
  let summary = "Compute bf16/f16 linalg.generic bodies in f32";
  let description = [{
    For `dnnc --precision=bf16|fp16`: rewrites the arith and math ops of
    every `linalg.generic` body that compute on bf16 or f16 to compute on
    f32. Operands are extended once where they enter the body; a value is
    rounded back to its 16-bit type only where it leaves the body (the
    `linalg.yield`) or feeds an op that stays 16-bit. A fused elementwise
    chain thus loads bf16, computes in f32 registers and stores bf16, with
    one rounding per stored element instead of one per op. A `truncf`
    followed by an `extf` of the same value in one body (a round trip
    between two fused dnn ops) is dropped: the intermediate is never
    stored. Run after `dnn-fuse-elementwise`; what is left on bf16/f16
    (named ops' bodies) is handled by `arith-emulate-unsupported-floats`.

    ```mlir
    ^bb0(%a: bf16, %b: bf16, %o: bf16):
      %0 = arith.addf %a, %b : bf16
      %1 = math.tanh %0 : bf16
      linalg.yield %1 : bf16
    ```
    becomes
    ```mlir
    ^bb0(%a: bf16, %b: bf16, %o: bf16):
      %a32 = arith.extf %a : bf16 to f32
      %b32 = arith.extf %b : bf16 to f32
      %0 = arith.addf %a32, %b32 : f32
      %1 = math.tanh %0 : f32
      %2 = arith.truncf %1 : f32 to bf16
      linalg.yield %2 : bf16
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def FuseElementwisePass : Pass<"dnn-fuse-elementwise"> {
  let summary = "Fuse elementwise linalg.generic chains without recomputation";
  let description = [{
    The elementwise fusion of `linalg-fuse-elementwise-ops` (producer
    `linalg.generic`s into their consumers, reshapes folded by expanding the
    loops, splat constants and fills folded into bodies) with a cost model
    for the CPU target:

    * a producer is fused only into a consumer that reads each of its
      elements once (the consumer's indexing map of the fused operand is a
      permutation of its loops). Fusing `gelu(x)` into the matmul that
      consumes it, or a vector computation into the broadcast that expands
      it, would recompute the producer once per element of the missing
      loops (`tanh` N times per element for an `[M, K] x [K, N]` product);
    * reshapes are never folded into or out of named contractions and
      convolutions (`linalg.matmul`, `linalg.batch_matmul`, ...): folding
      rewrites them to `linalg.generic`, which `dnn-matmul-to-blas`
      can no longer hand to BLAS;
    * as upstream, the producer must have no other use.

    ```mlir
    %t = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%x : tensor<32x256xf32>) outs(%e : tensor<32x256xf32>) { tanh }
    %y = linalg.matmul ins(%t, %w : tensor<32x256xf32>, tensor<256x64xf32>)
        outs(%z : tensor<32x64xf32>) -> tensor<32x64xf32>
    ```
    stays as it is (the upstream pass makes one generic that computes `tanh`
    64 times per element of `%x`).
  }];
  let dependentDialects = [
    "::mlir::affine::AffineDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

def UntieInitsPass : Pass<"dnn-untie-inits"> {
  let summary = "Give every linalg op its own init: matmul zero fills, "
                "tensor.empty";
  let description = [{
    CSE merges identical inits: the `linalg.fill`s that zero the inits of
    several `linalg.matmul` / `linalg.batch_matmul` ops of one shape, and
    the `tensor.empty`s of every op of one result type. After bufferization
    each matmul would then start from a copy of one shared zero buffer, and
    `dnn-matmul-to-blas` (which needs the zero fill right before the
    matmul) leaves them as loops; and one-shot bufferization would weigh
    every op writing into a shared `tensor.empty` against all the others
    (one alias set for the whole program: time quadratic in its length).
    On tensors, before bufferization, this pass gives each such matmul a
    clone of the fill (and of its `tensor.empty`) right before it, and every
    other destination-style op whose init is a `tensor.empty` with other
    users a clone of that `tensor.empty` right before it. The last user
    keeps (and moves down to it) the original.

    ```mlir
    %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<4x3xf32>) -> tensor<4x3xf32>
    %0 = linalg.matmul ins(%a, %b : ...) outs(%z : tensor<4x3xf32>) -> tensor<4x3xf32>
    %1 = linalg.matmul ins(%c, %d : ...) outs(%z : tensor<4x3xf32>) -> tensor<4x3xf32>
    ```
    becomes
    ```mlir
    %e0 = tensor.empty() : tensor<4x3xf32>
    %z0 = linalg.fill ins(%c0 : f32) outs(%e0 : tensor<4x3xf32>) -> tensor<4x3xf32>
    %0 = linalg.matmul ins(%a, %b : ...) outs(%z0 : tensor<4x3xf32>) -> tensor<4x3xf32>
    %e1 = tensor.empty() : tensor<4x3xf32>
    %z1 = linalg.fill ins(%c0 : f32) outs(%e1 : tensor<4x3xf32>) -> tensor<4x3xf32>
    %1 = linalg.matmul ins(%c, %d : ...) outs(%z1 : tensor<4x3xf32>) -> tensor<4x3xf32>
    ```
  }];
  let dependentDialects = [
    "::mlir::linalg::LinalgDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

def LocalizeTensorAddressesPass : Pass<"dnn-localize-tensor-addresses"> {
  let summary = "Take a tensor's buffer address right where it is read";
  let description = [{
    Runtime calls (collectives, fused attention, GEMM epilogues) read a
    tensor through its address: `bufferization.to_buffer` (read-only),
    `memref.extract_aligned_pointer_as_index`, then the call. One-shot
    bufferization models that read at the `to_buffer`, not at the call. When
    CSE merges two such chains of one tensor, the surviving `to_buffer` sits
    before the first call while the second call still reads through it; an
    op in between may then be bufferized in place into the tensor's buffer
    and the second call reads what that op wrote.

    On tensors, right before bufferization, this pass restores the
    invariant that every read through an address taken from a tensor is
    preceded directly by its own `to_buffer`: for each op with memory
    effects (or regions) that uses a value derived from a `to_buffer`
    through side-effect-free ops, the derivation is cloned right before it;
    the originals are erased once unused.

    ```mlir
    %m = bufferization.to_buffer %t read_only : tensor<4xf32> to memref<4xf32>
    %p = memref.extract_aligned_pointer_as_index %m : memref<4xf32> -> index
    call @read(%p) : (index) -> ()
    %u = linalg.generic ... outs(%e : tensor<4xf32>)   // may reuse %t's buffer
    call @read(%p) : (index) -> ()
    ```
    becomes
    ```mlir
    %m0 = bufferization.to_buffer %t read_only : tensor<4xf32> to memref<4xf32>
    %p0 = memref.extract_aligned_pointer_as_index %m0 : memref<4xf32> -> index
    call @read(%p0) : (index) -> ()
    %u = linalg.generic ... outs(%e : tensor<4xf32>)   // %t is still read below
    %m1 = bufferization.to_buffer %t read_only : tensor<4xf32> to memref<4xf32>
    %p1 = memref.extract_aligned_pointer_as_index %m1 : memref<4xf32> -> index
    call @read(%p1) : (index) -> ()
    ```
  }];
  let dependentDialects = [
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::memref::MemRefDialect",
  ];
}

def MatmulToBlasPass : Pass<"dnn-matmul-to-blas", "::mlir::ModuleOp"> {
  let summary = "Call the runtime's BLAS GEMM for linalg matmuls on memrefs";
  let description = [{
    Replaces `linalg.matmul` and `linalg.batch_matmul` on contiguous
    row-major f32/f64 memrefs whose output was just zero-filled by a
    `linalg.fill` with a call to the runtime kernel `dnnc_rt_gemm_f32` /
    `dnnc_rt_gemm_f64` (OpenBLAS on CPU), and drops the fill (the kernel
    overwrites its output). Operands are passed as aligned base pointers plus
    offsets (`index`), so views produced by reshapes need no copy. Other
    matmuls stay linalg and become loops.

    ```mlir
    linalg.fill ins(%zero : f32) outs(%c : memref<4x3xf32>)
    linalg.matmul ins(%a, %b : memref<4x8xf32>, memref<8x3xf32>)
                  outs(%c : memref<4x3xf32>)
    ```
    becomes
    ```mlir
    call @dnnc_rt_gemm_f32(%c1, %c4, %c3, %c8, %c0, %pa, %c0, %pb, %c0, %pc,
                           %c0)
        : (i64, i64, i64, i64, i64, index, i64, index, i64, index, i64) -> ()
    ```

    The fifth argument holds the kernel's transpose bits (1: A, 2: B). An
    operand written by a transpose of its last two dimensions (a
    `linalg.transpose`, or a `linalg.generic` that only yields its input)
    from a dense buffer, with no write between the transpose and the matmul
    that may overlap that buffer (nor may the matmul's output), is passed as
    that buffer with its bit set. The transpose is erased when nothing
    reads its result before it is overwritten: a weight transposed for an
    ONNX Gemm with `transB`, or an activation transposed for a weight
    gradient, is then never materialised.

    The cuda target calls `dnnc_rt_cuda_gemm_f32` / `_f64` instead
    (`kernel-prefix=dnnc_rt_cuda_gemm`): the same signature on device
    pointers.
  }];
  let options = [
    Option<"kernelPrefix", "kernel-prefix", "std::string",
           /*default=*/"\"dnnc_rt_gemm\"",
           "Name of the runtime GEMM kernels, less the `_f32`/`_f64` suffix">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::func::FuncDialect",
    "::mlir::memref::MemRefDialect",
  ];
}

def CollectivesToRuntimePass
    : Pass<"dnn-collectives-to-runtime", "::mlir::ModuleOp"> {
  let summary = "Lower dist collectives to calls of the runtime's kernels";
  let description = [{
    Rewrites `dist.all_reduce`, `dist.all_gather`, `dist.reduce_scatter`,
    `dist.all_to_all` and `dist.broadcast` on per-rank tensors into calls of the runtime's
    collective kernels (`dnnc_rt_all_reduce`, ... ; docs/runtime.md) before
    bufferization: the operand is read through `bufferization.to_buffer`,
    the result is a fresh 64-byte aligned buffer returned through
    `bufferization.to_tensor restrict writable`. The device group is passed
    as a bit mask of mesh axes (bit i = axis i of the `dist.mesh`), the
    element type as its ONNX data type code, and gathered or scattered
    tensors as `[outer, chunk]` views around the gathered dimension. Group
    order is the mesh's axis order, so multi-axis gathers and scatters must
    list their axes in mesh order.

    `dist.shard_slice` needs no communication: it becomes one
    `dnnc_rt_group_index(1 << axis)` call per mesh axis of size > 1 that its
    sharding splits over (the rank's coordinate on that axis), `arith` on
    `index` for each split dim's block offset (the row-major block number
    over the dim's axes times the local extent) and a `tensor.extract_slice`
    of the local shape at those offsets, with unit strides.

    Afterwards the `dist.mesh` symbols are erased: nothing refers to them any
    more.

    ```mlir
    %1 = dist.all_reduce sum %0 on @m axes ["tp"] : tensor<8x16xf32>
    ```
    becomes (schematically)
    ```mlir
    %in = bufferization.to_buffer %0 read_only : tensor<8x16xf32> to memref<8x16xf32>
    %out = memref.alloc() {alignment = 64} : memref<8x16xf32>
    call @dnnc_rt_all_reduce(%mask, %dtype, %op, %pin, %pout, %count) : ...
    %1 = bufferization.to_tensor %out restrict writable : memref<8x16xf32> to tensor<8x16xf32>
    ```
    and, with `"x"` mesh axis 0 of size 2,
    ```mlir
    %1 = dist.shard_slice %0 to <@m, [{"x"}, {} ]> : tensor<8x16xf32> -> tensor<4x16xf32>
    ```
    becomes
    ```mlir
    %x = call @dnnc_rt_group_index(%c1_i64) : (i64) -> i64
    %i = arith.index_cast %x : i64 to index
    %off = arith.muli %i, %c4 : index
    %1 = tensor.extract_slice %0[%off, 0] [4, 16] [1, 1] : tensor<8x16xf32> to tensor<4x16xf32>
    ```
  }];
  let options = [
    Option<"kernelPrefix", "kernel-prefix", "std::string",
           /*default=*/"\"dnnc_rt\"",
           "Prefix of the collective kernels' names (`dnnc_rt_all_reduce`, "
           "...): `dnnc_rt_cuda` on the cuda target. The host-side calls "
           "(`dnnc_rt_group_index`, `dnnc_rt_microbatch_index`) keep their "
           "names">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::func::FuncDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

def ElideOutputCopiesPass
    : Pass<"dnn-elide-output-copies", "::mlir::func::FuncOp"> {
  let summary = "Compute results directly into their out-params";
  let description = [{
    After `buffer-results-to-out-params`, each result is computed into a
    fresh `memref.alloc` and then copied into its out-param just before the
    return. When the out-param is used by nothing but that copy and the
    allocation has the out-param's type, the allocation is replaced by the
    out-param and the copy disappears: outputs are written in place and the
    runtime's output buffers are the only storage for them.

    ```mlir
    %a = memref.alloc() : memref<4xf32>
    linalg.generic ... outs(%a : memref<4xf32>)
    memref.copy %a, %out : memref<4xf32> to memref<4xf32>
    return
    ```
    becomes
    ```mlir
    linalg.generic ... outs(%out : memref<4xf32>)
    return
    ```
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def NumberConstantGlobalsPass
    : Pass<"dnn-number-constant-globals", "::mlir::ModuleOp"> {
  let summary = "Name and order bufferization's constant globals by first use";
  let description = [{
    One-shot bufferization turns tensor constants into private
    `memref.global` constants named `__constant_<type>` with a `_N` suffix
    in the order it creates them, which varies from run to run when the
    pass manager runs threads. This pass makes the result a function of
    the program alone: the globals whose names start with `__constant_` are
    moved to the start of the module in the order of their first
    `memref.get_global` (module order) and renamed `__constant_<type>`,
    `__constant_<type>_0`, `__constant_<type>_1`, ... in that order; those
    nothing uses are erased. So the same model compiles to the same
    plan.bin.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def PlanMemoryPass : Pass<"dnn-plan-memory", "::mlir::ModuleOp"> {
  let summary = "Place a function's static buffers in one liveness-planned "
                "workspace arena";
  let description = [{
    Runs on bufferized IR (after one-shot bufferization,
    `buffer-results-to-out-params` and `dnn-elide-output-copies`) and before
    the buffer deallocation pipeline. Target-independent: the cpu device
    pipeline uses it, and any target whose host code is lowered with the
    memref-to-LLVM conversion can.

    In each function with a body, every statically shaped, identity-layout
    `memref.alloc` and `memref.alloca` of the function's top-level block is
    given a byte offset in one arena. A buffer is live from the first to the
    last top-level operation that uses it or a value aliasing it: views
    (`subview`, `expand_shape`, `collapse_shape`, `reinterpret_cast`,
    `cast`, `view`, `extract_strided_metadata`, ...), `to_tensor`, results
    of region ops that yield it, addresses taken with
    `extract_aligned_pointer_as_index` and the `arith` on them; a use nested
    in a region counts at its top-level ancestor. Buffers that escape
    (returned, stored as an address, passed to an operation the analysis
    does not know) stay live to the end of the function. Callees are assumed
    not to keep the buffers they are passed (dnnc's runtime kernels).
    Offsets come from a greedy best fit over the live intervals, largest
    buffer first (TFLite's "greedy by size"), each aligned to `alignment`
    (and to a larger `alignment` attribute of the allocation).

    The function then asks the runtime for its arena once, at its start:
    `dnnc_rt_workspace(bytes)` (docs/runtime.md, "Generated-code ABI")
    returns a pointer, which is wrapped into a `memref<bytes x i8>`
    descriptor (an `unrealized_conversion_cast` that the LLVM lowering
    folds away; no owned buffer for the deallocation pipeline to free), and
    each allocation becomes a `memref.view` of it. Functions without
    planned allocations are left alone. The function records
    `dnnc.workspace_bytes` (the arena), `dnnc.planned_bytes` (the sum of
    the planned allocations, the bytes they would take without reuse) and
    `dnnc.peak_live_bytes` (the most bytes live at once, sizes rounded to the
    alignment: a lower bound of the arena).

    Allocations that are not planned (dynamic shapes, nested in regions,
    other layouts or memory spaces, deallocated through a view, functions
    with several blocks or that call functions with a body) stay as they
    are, and the function records how many in `dnnc.unplanned_allocs`; with
    `allow-unplanned=false` each of them is an error.

    ```mlir
    func.func @f(%x: memref<256xf32>, %y: memref<256xf32>) {
      %a = memref.alloc() {alignment = 64 : i64} : memref<256xf32>
      linalg.exp ins(%x : memref<256xf32>) outs(%a : memref<256xf32>)
      %b = memref.alloc() {alignment = 64 : i64} : memref<256xf32>
      linalg.exp ins(%a : memref<256xf32>) outs(%b : memref<256xf32>)
      %c = memref.alloc() {alignment = 64 : i64} : memref<256xf32>
      linalg.exp ins(%b : memref<256xf32>) outs(%c : memref<256xf32>)
      linalg.exp ins(%c : memref<256xf32>) outs(%y : memref<256xf32>)
      return
    }
    ```
    becomes (`%a` is dead when `%c` is written: they share offset 0)
    ```mlir
    func.func @f(%x: memref<256xf32>, %y: memref<256xf32>)
        attributes {dnnc.planned_bytes = 3072 : i64, dnnc.workspace_bytes = 2048 : i64} {
      %p = llvm.call @dnnc_rt_workspace(%c2048_i64) : (i64) -> !llvm.ptr
      // ... %d: a memref descriptor of %p ...
      %arena = builtin.unrealized_conversion_cast %d : !llvm.struct<...> to memref<2048xi8>
      %a = memref.view %arena[%c0][] : memref<2048xi8> to memref<256xf32>
      linalg.exp ins(%x : memref<256xf32>) outs(%a : memref<256xf32>)
      %b = memref.view %arena[%c1024][] : memref<2048xi8> to memref<256xf32>
      linalg.exp ins(%a : memref<256xf32>) outs(%b : memref<256xf32>)
      %c = memref.view %arena[%c0][] : memref<2048xi8> to memref<256xf32>
      ...
    }
    ```
  }];
  let options = [
    Option<"allowUnplanned", "allow-unplanned", "bool", /*default=*/"true",
           "Leave allocations that cannot be planned as they are (false: "
           "report each as an error)">,
    Option<"alignment", "alignment", "int64_t", /*default=*/"256",
           "Alignment of the arena and of every offset in it, in bytes (a "
           "power of two)">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::LLVM::LLVMDialect",
    "::mlir::memref::MemRefDialect",
  ];
}

#endif // DNNC_TARGET_COMMON_PASSES_TD
