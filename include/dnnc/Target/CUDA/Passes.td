//===- Passes.td - cuda target passes -----------------------*- tablegen -*-===//
//
// Passes of the cuda device pipeline (docs/cuda-target.md).
//
//===----------------------------------------------------------------------===//

#ifndef DNNC_TARGET_CUDA_PASSES
#define DNNC_TARGET_CUDA_PASSES

include "mlir/Pass/PassBase.td"

def FuseAttentionPass : Pass<"dnn-cuda-fuse-attention", "::mlir::ModuleOp"> {
  let summary = "Replace softmax attention by the runtime's fused kernel";
  let description = [{
    Matches scaled dot-product attention on `dnn` ops,

    ```
    P = softmax(c * matmul(a * Q, b * Kt) [+ bias], axis = last)
    O = matmul(P, V)            (or matmul(select(is_nan(P), 0, P), V))
    ```

    with `Q` `[B, H, Sq, D]`, `Kt` `[B, H, D, Sk]`, `V` `[B, H, Sk, D]`
    (rank 3 `[B, S, D]` too), scalar constant factors `a`, `b`, `c` (a
    `dnn.div` by a constant too) and a bias broadcast from a tensor whose last
    dim is `Sk` and whose other dims are 1 or full (masks), and replaces it
    by one call of the runtime's flash-attention kernel
    `dnnc_rt_cuda_attention_<f32|bf16|f16>` on the buffers of contiguous
    `Q`, `K` (`Kt` transposed back) and `V`: the `Sq x Sk` scores are never
    written to memory. A fully masked row gives zeros (what the `is_nan`
    guard selects). A bias known at compile time (a constant or an outlined
    weight) that is a causal mask shared by batch and heads, 0 on and below
    the diagonal and at most -1000 above it, becomes the kernel's `causal`
    flag instead (no bias read; the key tiles past the diagonal are skipped;
    exp of -1000 is 0 in float, so the result is the same). Runs on the
    per-rank program, before `dnn` is lowered;
    the call reads its operands through `bufferization.to_buffer` and
    returns a fresh buffer through `bufferization.to_tensor`, as the
    collective calls do.

    ```mlir
    %s = dnn.matmul %q, %kt : (tensor<2x4x16x8xf32>, tensor<2x4x8x16xf32>) -> tensor<2x4x16x16xf32>
    %c = dnn.mul %s, %scale : tensor<2x4x16x16xf32>
    %p = dnn.softmax %c axis = 3 : tensor<2x4x16x16xf32>
    %o = dnn.matmul %p, %v : (tensor<2x4x16x16xf32>, tensor<2x4x16x8xf32>) -> tensor<2x4x16x8xf32>
    ```
    becomes (schematically)
    ```mlir
    call @dnnc_rt_cuda_attention_f32(%c8, %c16, %c16, %c8, %pq, %pk, %pv, %po,
        %scale, %c0_i32, %c4, %c0_ptr, %c0, %c0, %c0)
    ```
  }];
  let options = [
    Option<"kernelPrefix", "kernel-prefix", "std::string",
           /*default=*/"\"dnnc_rt_cuda_attention\"",
           "Name of the runtime attention kernels, less the dtype suffix">,
    Option<"maxHeadDim", "max-head-dim", "int64_t", /*default=*/"128",
           "Largest head dimension the kernel takes">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::func::FuncDialect",
    "::mlir::memref::MemRefDialect",
  ];
}

def FuseGemmEpiloguePass
    : Pass<"dnn-cuda-fuse-gemm-epilogue", "::mlir::ModuleOp"> {
  let summary = "Fold a bias and an activation after a matmul into its GEMM";
  let description = [{
    Matches `dnn.matmul(A, B)` followed by an optional bias add (the
    matmul's only use; the bias broadcast from `N` values along the last
    dimension: a `dnn.broadcast_in_dim` of a `[N]` or `[1, ..., N]` tensor,
    a tensor whose other dimensions are 1, a splat constant, or a constant
    or weight with equal rows) and then an optional `dnn.relu` or
    `dnn.gelu approximation = <tanh>` (the only use of what comes before,
    possibly through one `dnn.reshape`; `dnn-fuse-gelu` makes written-out
    GELUs that op), and replaces them by one call of the runtime's GEMM with
    an epilogue `dnnc_rt_cuda_gemm_bias_<f32|tf32|bf16|f16|f64>(batch, M, N,
    K, A, strideA, B, strideB, C, strideC, bias, activation)` (a null bias
    when there is none): cuBLASLt adds the bias and applies the activation
    as it writes C, so the product is never written and read back. A bf16 or
    f16 matmul with neither still becomes such a call: it writes its 16-bit
    result directly instead of an fp32 one to round (a plain f32 matmul is
    left to `dnn-matmul-to-blas`). A `[B..., M, K]` times `[K, N]`
    matmul is one GEMM of `M * prod(B)` rows; a batched `[B..., K, N]` right
    operand gives `prod(B)` batch matrices. All of A, B, the bias and the
    result have one element type (bf16/f16 results are rounded once from the
    fp32 accumulator). The call reads its operands through
    `bufferization.to_buffer` and returns a fresh buffer through
    `bufferization.to_tensor`, as the attention calls do; the ops it
    replaces and what fed only them are erased. The exact (erf) GELU is not
    fused (cuBLASLt's GELU is the tanh approximation): its GEMM takes the
    bias alone.

    ```mlir
    %0 = dnn.matmul %x, %w : (tensor<2x16x64xbf16>, tensor<64x256xbf16>) -> tensor<2x16x256xbf16>
    %1 = dnn.broadcast_in_dim %b, dims = [2] : tensor<256xbf16> -> tensor<2x16x256xbf16>
    %2 = dnn.add %0, %1 : tensor<2x16x256xbf16>
    %3 = dnn.gelu %2 approximation = <tanh> : tensor<2x16x256xbf16>
    ```
    becomes (schematically)
    ```mlir
    call @dnnc_rt_cuda_gemm_bias_bf16(%c1, %c32, %c256, %c64, %px, %c0,
        %pw, %c0, %pout, %c0, %pb, %c2_i32)
    ```
  }];
  let options = [
    Option<"kernelPrefix", "kernel-prefix", "std::string",
           /*default=*/"\"dnnc_rt_cuda_gemm_bias\"",
           "Name of the runtime GEMM-with-epilogue kernels, less the dtype "
           "suffix">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::func::FuncDialect",
    "::mlir::memref::MemRefDialect",
  ];
}

#endif // DNNC_TARGET_CUDA_PASSES
