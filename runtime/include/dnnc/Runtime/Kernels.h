/*===- Kernels.h - Runtime kernels for generated CPU code ------*- C -*-===//
 *
 * The C ABI of the kernels dnnc-run provides to the rank code it loads
 * (docs/runtime.md, "Generated-code ABI"). dnnc-run is linked with
 * -rdynamic, so an ELF shared object it dlopen()s resolves these symbols
 * (and libm's) from the executable. This header is plain C so that both
 * the runtime and generated or test code can include it.
 *
 *===----------------------------------------------------------------------===*/

#ifndef DNNC_RUNTIME_KERNELS_H
#define DNNC_RUNTIME_KERNELS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bits of a GEMM's `transpose` argument: the operand is stored as its
 * transpose (A as a dense row-major K x M matrix, B as N x K), as the
 * source of a transpose the compiler folded into the GEMM. */
#define DNNC_RT_TRANSPOSE_A 1
#define DNNC_RT_TRANSPOSE_B 2

/* Batched single-precision GEMM: for b in [0, batch),
 *   C + b*strideC  =  op(A + b*strideA) x op(B + b*strideB)
 * with op(A) an MxK, op(B) a KxN and C an MxN matrix, all dense row-major;
 * op(X) is X, or the transpose of the stored matrix when `transpose` has
 * X's bit (DNNC_RT_TRANSPOSE_A / _B; other bits are an error). C is
 * overwritten (not accumulated). A stride is the distance in elements
 * between consecutive batch matrices; 0 reuses the same matrix for every
 * batch (a broadcast operand). Negative sizes or strides are reported as a
 * run error by dnnc-run and compute nothing. */
void dnnc_rt_gemm_f32(int64_t batch, int64_t M, int64_t N, int64_t K,
                      int64_t transpose, const float *A, int64_t strideA,
                      const float *B, int64_t strideB, float *C,
                      int64_t strideC);

/* The double-precision variant of dnnc_rt_gemm_f32. */
void dnnc_rt_gemm_f64(int64_t batch, int64_t M, int64_t N, int64_t K,
                      int64_t transpose, const double *A, int64_t strideA,
                      const double *B, int64_t strideB, double *C,
                      int64_t strideC);

/* The GEMM of `dnnc --precision=tf32`: dnnc_rt_gemm_f32 where the target
 * may use TF32 tensor-core math. On the CPU it is plain fp32 sgemm. */
void dnnc_rt_gemm_tf32(int64_t batch, int64_t M, int64_t N, int64_t K,
                       int64_t transpose, const float *A, int64_t strideA,
                       const float *B, int64_t strideB, float *C,
                       int64_t strideC);

/* dnnc_rt_gemm_f32 with A and B in bfloat16 (raw 16-bit patterns) and C in
 * fp32: the products accumulate in fp32 (`dnnc --precision=bf16`; the
 * generated code rounds C to bf16 afterwards). On the CPU the operands are
 * widened to fp32 and multiplied by sgemm. */
void dnnc_rt_gemm_bf16(int64_t batch, int64_t M, int64_t N, int64_t K,
                       int64_t transpose, const uint16_t *A, int64_t strideA,
                       const uint16_t *B, int64_t strideB, float *C,
                       int64_t strideC);

/* dnnc_rt_gemm_bf16 with A and B in IEEE half precision (binary16). */
void dnnc_rt_gemm_f16(int64_t batch, int64_t M, int64_t N, int64_t K,
                      int64_t transpose, const uint16_t *A, int64_t strideA,
                      const uint16_t *B, int64_t strideB, float *C,
                      int64_t strideC);

/* Activations of the GEMM epilogues (`activation`). GELU_TANH is
 * 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), the approximation
 * cuBLASLt's GELU epilogue computes. */
#define DNNC_RT_ACTIVATION_NONE 0
#define DNNC_RT_ACTIVATION_RELU 1
#define DNNC_RT_ACTIVATION_GELU_TANH 2

/* A GEMM with an epilogue: for b in [0, batch), i in [0, M), j in [0, N),
 *   C[b][i][j] = act((A_b x B_b)[i][j] + bias[j])
 * with the operands of the matching dnnc_rt_gemm_* and `bias` a dense
 * vector of N elements shared by every batch matrix, or NULL for no bias
 * (the bf16/f16 kernels with neither bias nor activation are the GEMMs that
 * write a 16-bit C). In the f32, tf32 and
 * f64 kernels C and bias are of the operands' type; in the bf16 and f16
 * kernels A, B, bias and C are all 16-bit: the product accumulates in fp32,
 * the bias is added and the activation applied in fp32, and the result is
 * rounded once into C. The cuda target calls dnnc_rt_cuda_gemm_bias_* (the
 * same arguments on device pointers; cuBLASLt's epilogues); these are their
 * reference. An unknown activation is reported as a run error. */
void dnnc_rt_gemm_bias_f32(int64_t batch, int64_t M, int64_t N, int64_t K,
                           const float *A, int64_t strideA, const float *B,
                           int64_t strideB, float *C, int64_t strideC,
                           const float *bias, int32_t activation);
void dnnc_rt_gemm_bias_f64(int64_t batch, int64_t M, int64_t N, int64_t K,
                           const double *A, int64_t strideA, const double *B,
                           int64_t strideB, double *C, int64_t strideC,
                           const double *bias, int32_t activation);
void dnnc_rt_gemm_bias_tf32(int64_t batch, int64_t M, int64_t N, int64_t K,
                            const float *A, int64_t strideA, const float *B,
                            int64_t strideB, float *C, int64_t strideC,
                            const float *bias, int32_t activation);
void dnnc_rt_gemm_bias_bf16(int64_t batch, int64_t M, int64_t N, int64_t K,
                            const uint16_t *A, int64_t strideA,
                            const uint16_t *B, int64_t strideB, void *C,
                            int64_t strideC, const void *bias,
                            int32_t activation);
void dnnc_rt_gemm_bias_f16(int64_t batch, int64_t M, int64_t N, int64_t K,
                           const uint16_t *A, int64_t strideA,
                           const uint16_t *B, int64_t strideB, void *C,
                           int64_t strideC, const void *bias,
                           int32_t activation);

/* Scaled dot-product attention, the reference of the cuda target's fused
 * kernel (dnnc_rt_cuda_attention_*, same arguments on device buffers): for
 * each of `batchHeads` = B*H matrices, bh = b*heads + h,
 *   out[bh,i,:] = sum_j softmax_j(scale * q[bh,i,:].k[bh,j,:] + bias) v[bh,j,:]
 * with q and out [batchHeads, seqQ, headDim], k and v [batchHeads, seqK,
 * headDim], dense row-major, bias (NULL for none) read at
 * b*biasStrideB + h*biasStrideH + i*biasStrideQ + j (0 strides broadcast),
 * and j > i masked out when `causal` is non-zero. A row whose every score is
 * -inf is zeros. Elements are float, bfloat16 or IEEE half (bias too);
 * accumulation in float. */
void dnnc_rt_attention_f32(int64_t batchHeads, int64_t seqQ, int64_t seqK,
                           int64_t headDim, const void *q, const void *k,
                           const void *v, void *out, float scale,
                           int32_t causal, int64_t heads, const void *bias,
                           int64_t biasStrideB, int64_t biasStrideH,
                           int64_t biasStrideQ);
/* bfloat16 elements. */
void dnnc_rt_attention_bf16(int64_t batchHeads, int64_t seqQ, int64_t seqK,
                            int64_t headDim, const void *q, const void *k,
                            const void *v, void *out, float scale,
                            int32_t causal, int64_t heads, const void *bias,
                            int64_t biasStrideB, int64_t biasStrideH,
                            int64_t biasStrideQ);
/* IEEE half elements. */
void dnnc_rt_attention_f16(int64_t batchHeads, int64_t seqQ, int64_t seqK,
                           int64_t headDim, const void *q, const void *k,
                           const void *v, void *out, float scale,
                           int32_t causal, int64_t heads, const void *bias,
                           int64_t biasStrideB, int64_t biasStrideH,
                           int64_t biasStrideQ);

/* The rank's workspace arena: at least `bytes` bytes of the backend's memory
 * (host memory for `cpu`, device memory for `cuda`), 256-byte aligned,
 * contents undefined. One arena per rank, allocated on the first call and
 * returned again by every later call (of any function, any micro-batch:
 * the rank runs one step at a time); a call asking for more than the
 * current size frees it (after the device has finished with it) and
 * allocates a larger one, so the result is valid until the next call.
 * Freed when the rank's session ends. Generated code calls it once at the
 * start of a function that has statically planned temporaries
 * (dnn-plan-memory) and places them at fixed offsets in it. A failure
 * (negative size, out of memory) prints the error and aborts the process:
 * the code has no way to go on. */
void *dnnc_rt_workspace(int64_t bytes);

/*===------------------------------------------------------------------===//
 * Collective kernels (docs/runtime.md, "Collective kernels").
 *
 * A group is named by the set of mesh axes it spans: bit i of `axesMask` is
 * mesh axis i of the plan's MODEL section (outermost first; a plan without
 * axes has one implicit axis of the world size). The calling rank's group
 * holds the ranks whose mesh coordinates equal its own on every other
 * axis; member i is the one whose coordinates on the spanned axes, read
 * row-major with the outermost axis most significant, give linear index i
 * (mesh positions map to ranks through the device order). `axesMask` 0 is
 * the rank alone. Every member of a group must call the same kernel with
 * the same arguments (bar the buffers and the data), in the same order
 * relative to the group's other collectives. All kernels block until this
 * rank's part is done. Buffers are dense, row-major, little-endian;
 * `dtype` is an ONNX TensorProto data type code; counts are elements.
 * Misuse (invalid arguments, an MPI failure) computes nothing and fails the
 * run with an error naming the kernel and its arguments.
 *===------------------------------------------------------------------===*/

/* Reduction operators (`op`). MEAN is SUM divided by the group size
 * (integer types: truncated toward zero). */
#define DNNC_RT_REDUCE_SUM 0
#define DNNC_RT_REDUCE_MAX 1
#define DNNC_RT_REDUCE_MIN 2
#define DNNC_RT_REDUCE_PROD 3
#define DNNC_RT_REDUCE_MEAN 4

/* out[k] = op over the group members of in[k], k in [0, count). `in` may
 * equal `out`. Reducible dtypes: FLOAT, DOUBLE, INT8/16/32/64,
 * UINT8/16/32/64, FLOAT16 and BFLOAT16 (reduced in float32, rounded once),
 * BOOL with MAX (or) and MIN (and) only. */
void dnnc_rt_all_reduce(int64_t axesMask, int32_t dtype, int32_t op,
                        const void *in, void *out, int64_t count);

/* In viewed as [outer, chunk], out as [outer, G * chunk] (G = group size):
 * out[o, i*chunk + c] = in of member i [o, c]. Gathering dimension d of a
 * local tensor of shape S: outer = S[0] * ... * S[d-1], chunk = S[d] *
 * ... * S[n-1]. Any dtype. */
void dnnc_rt_all_gather(int64_t axesMask, int32_t dtype, const void *in,
                        void *out, int64_t outer, int64_t chunk);

/* The inverse view: in [outer, G * chunk], out [outer, chunk], and member
 * i gets out[o, c] = op over the members of their in[o, i*chunk + c].
 * Reducible dtypes and ops as dnnc_rt_all_reduce. */
void dnnc_rt_reduce_scatter(int64_t axesMask, int32_t dtype, int32_t op,
                            const void *in, void *out, int64_t outer,
                            int64_t chunk);

/* In viewed as [outer, G, splitChunk]: block j = in[:, j, :] (outer x
 * splitChunk elements, packed row-major) goes to member j. Out viewed as
 * [X, G, inner] with X = outer * splitChunk / inner: the block received
 * from member i, viewed as [X, inner], is out[:, i, :]. `inner` must divide
 * outer * splitChunk (inner >= 1). To split dimension A and concatenate
 * dimension B of a local tensor of shape S (rank n) with block shape T =
 * S with T[A] = S[A] / G:
 *   outer = S[0]*...*S[A-1], splitChunk = T[A]*...*T[n-1],
 *   inner = T[B]*...*T[n-1]   (A == B allowed: inner = splitChunk).
 * Any dtype. */
void dnnc_rt_all_to_all(int64_t axesMask, int32_t dtype, const void *in,
                        void *out, int64_t outer, int64_t splitChunk,
                        int64_t inner);

/* buf of every member = buf of member `root` (an index in the group),
 * count elements. Any dtype. */
void dnnc_rt_broadcast(int64_t axesMask, int32_t dtype, void *buf,
                       int64_t count, int64_t root);

/* This rank's index in its group for `axesMask`: the linear index of its
 * coordinates on the spanned axes, row-major with the outermost axis most
 * significant (the member numbering above, 0 <= index < group size;
 * axesMask 0 gives 0). Local: it communicates with nobody, so any rank may
 * call it at any time. An invalid axesMask fails the run and returns 0. */
int64_t dnnc_rt_group_index(int64_t axesMask);

/* The micro-batch the running function computes (0 .. micro-batches - 1):
 * the step's micro-batch in a plan with several. Local. */
int64_t dnnc_rt_microbatch_index(void);

/* Point-to-point between world ranks (not group indices); `peer` is never
 * the caller. A send and its receive name each other, the same dtype,
 * count and tag (0 <= tag <= 32767). dnnc_rt_send may block until the
 * receive starts, so a pair of ranks that both send first can deadlock:
 * order sends and receives (e.g. the lower rank sends first). Messages
 * between two ranks with the same tag arrive in order. Any dtype. */
void dnnc_rt_send(int32_t dtype, const void *buf, int64_t count, int64_t peer,
                  int64_t tag);
void dnnc_rt_recv(int32_t dtype, void *buf, int64_t count, int64_t peer,
                  int64_t tag);

/*===------------------------------------------------------------------===//
 * Kernels for `cuda` rank code (docs/runtime.md, "CUDA backend").
 *
 * Provided only by a dnnc-run built with the cuda backend
 * (DNNC_RUNTIME_WITH_CUDA); rank code for target `cpu` must not use them.
 * Buffers are device addresses. Generated CUDA code launches every kernel,
 * cuBLASLt call and copy on the stream dnnc_rt_cuda_stream() returns, and
 * never synchronises it: the backend waits for the stream once the entry
 * returns (with the NCCL timeout) and reports CUDA and NCCL errors then.
 *===------------------------------------------------------------------===*/

/* The backend's CUDA stream, as a cudaStream_t. Valid while an entry runs.
 * Local. */
void *dnnc_rt_cuda_stream(void);

/* The collective kernels above on NCCL, enqueued on dnnc_rt_cuda_stream()
 * (they return before the data has moved; later work on the stream sees
 * the result). Same groups, arguments and layouts as dnnc_rt_all_reduce,
 * dnnc_rt_all_gather, dnnc_rt_reduce_scatter, dnnc_rt_all_to_all and
 * dnnc_rt_broadcast, with device buffers. Differences from the CPU
 * kernels: reductions support FLOAT, DOUBLE, FLOAT16, BFLOAT16, INT8,
 * UINT8, INT32, UINT32, INT64 and UINT64 (NCCL's types; float16 and
 * bfloat16 are reduced by NCCL in their own precision), MEAN floating-point
 * types only; the moving kernels take any dtype. */
void dnnc_rt_cuda_all_reduce(int64_t axesMask, int32_t dtype, int32_t op,
                             const void *in, void *out, int64_t count);
void dnnc_rt_cuda_all_gather(int64_t axesMask, int32_t dtype, const void *in,
                             void *out, int64_t outer, int64_t chunk);
void dnnc_rt_cuda_reduce_scatter(int64_t axesMask, int32_t dtype, int32_t op,
                                 const void *in, void *out, int64_t outer,
                                 int64_t chunk);
void dnnc_rt_cuda_all_to_all(int64_t axesMask, int32_t dtype, const void *in,
                             void *out, int64_t outer, int64_t splitChunk,
                             int64_t inner);
void dnnc_rt_cuda_broadcast(int64_t axesMask, int32_t dtype, void *buf,
                            int64_t count, int64_t root);

/* GEMMs on device buffers through cuBLASLt, enqueued on
 * dnnc_rt_cuda_stream(): the arguments and row-major semantics of
 * dnnc_rt_gemm_f32 (stride 0 broadcasts an operand; C is overwritten).
 * _f32: fp32 math; _tf32: fp32 data, TF32 tensor-core math; _bf16/_f16: A
 * and B in bfloat16/half, fp32 accumulation and an fp32 C (as the cpu
 * kernels of the same names); _f64: doubles. cuBLASLt is loaded (dlopen
 * libcublasLt.so.13) on the first call of the process; the chosen algorithm
 * is cached per shape, with a 32 MiB workspace per device. */
void dnnc_rt_cuda_gemm_f32(int64_t batch, int64_t M, int64_t N, int64_t K,
                           int64_t transpose, const void *A, int64_t strideA,
                           const void *B, int64_t strideB, void *C,
                           int64_t strideC);
/* TF32 tensor-core math on fp32 data. */
void dnnc_rt_cuda_gemm_tf32(int64_t batch, int64_t M, int64_t N, int64_t K,
                            int64_t transpose, const void *A, int64_t strideA,
                            const void *B, int64_t strideB, void *C,
                            int64_t strideC);
/* bfloat16 A and B, fp32 C. */
void dnnc_rt_cuda_gemm_bf16(int64_t batch, int64_t M, int64_t N, int64_t K,
                            int64_t transpose, const void *A, int64_t strideA,
                            const void *B, int64_t strideB, void *C,
                            int64_t strideC);
/* half A and B, fp32 C. */
void dnnc_rt_cuda_gemm_f16(int64_t batch, int64_t M, int64_t N, int64_t K,
                           int64_t transpose, const void *A, int64_t strideA,
                           const void *B, int64_t strideB, void *C,
                           int64_t strideC);
/* Doubles. */
void dnnc_rt_cuda_gemm_f64(int64_t batch, int64_t M, int64_t N, int64_t K,
                           int64_t transpose, const void *A, int64_t strideA,
                           const void *B, int64_t strideB, void *C,
                           int64_t strideC);

/* The GEMMs with a bias / activation epilogue on device buffers, enqueued on
 * dnnc_rt_cuda_stream(): the arguments and semantics of
 * dnnc_rt_gemm_bias_* (in bf16/f16, C and bias are 16-bit; bias may be
 * NULL). cuBLASLt's [RELU_|GELU_]BIAS, RELU or GELU epilogue where it has an
 * algorithm for the shape and types, else the GEMM followed by one
 * elementwise kernel. */
void dnnc_rt_cuda_gemm_bias_f32(int64_t batch, int64_t M, int64_t N, int64_t K,
                                const void *A, int64_t strideA, const void *B,
                                int64_t strideB, void *C, int64_t strideC,
                                const void *bias, int32_t activation);
void dnnc_rt_cuda_gemm_bias_tf32(int64_t batch, int64_t M, int64_t N,
                                 int64_t K, const void *A, int64_t strideA,
                                 const void *B, int64_t strideB, void *C,
                                 int64_t strideC, const void *bias,
                                 int32_t activation);
void dnnc_rt_cuda_gemm_bias_bf16(int64_t batch, int64_t M, int64_t N,
                                 int64_t K, const void *A, int64_t strideA,
                                 const void *B, int64_t strideB, void *C,
                                 int64_t strideC, const void *bias,
                                 int32_t activation);
void dnnc_rt_cuda_gemm_bias_f16(int64_t batch, int64_t M, int64_t N, int64_t K,
                                const void *A, int64_t strideA, const void *B,
                                int64_t strideB, void *C, int64_t strideC,
                                const void *bias, int32_t activation);
void dnnc_rt_cuda_gemm_bias_f64(int64_t batch, int64_t M, int64_t N, int64_t K,
                                const void *A, int64_t strideA, const void *B,
                                int64_t strideB, void *C, int64_t strideC,
                                const void *bias, int32_t activation);

/* Fused scaled dot-product attention on device buffers, enqueued on
 * dnnc_rt_cuda_stream(): the arguments and semantics of
 * dnnc_rt_attention_f32 (the cpu reference). bf16/f16 with a head dim that
 * is a multiple of 16 run on tensor cores (WMMA, flash-attention style);
 * other cases on CUDA cores. Head dim at most 128. */
void dnnc_rt_cuda_attention_f32(int64_t batchHeads, int64_t seqQ, int64_t seqK,
                                int64_t headDim, const void *q, const void *k,
                                const void *v, void *out, float scale,
                                int32_t causal, int64_t heads,
                                const void *bias, int64_t biasStrideB,
                                int64_t biasStrideH, int64_t biasStrideQ);
/* bfloat16 elements. */
void dnnc_rt_cuda_attention_bf16(int64_t batchHeads, int64_t seqQ,
                                 int64_t seqK, int64_t headDim, const void *q,
                                 const void *k, const void *v, void *out,
                                 float scale, int32_t causal, int64_t heads,
                                 const void *bias, int64_t biasStrideB,
                                 int64_t biasStrideH, int64_t biasStrideQ);
/* half elements. */
void dnnc_rt_cuda_attention_f16(int64_t batchHeads, int64_t seqQ, int64_t seqK,
                                int64_t headDim, const void *q, const void *k,
                                const void *v, void *out, float scale,
                                int32_t causal, int64_t heads,
                                const void *bias, int64_t biasStrideB,
                                int64_t biasStrideH, int64_t biasStrideQ);

#ifdef __cplusplus
}
#endif

#endif /* DNNC_RUNTIME_KERNELS_H */
