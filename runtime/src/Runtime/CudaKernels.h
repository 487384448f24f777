//===- CudaKernels.h - The cuda backend's own kernels ----------*- C++ -*-===//
//
// Launchers of the kernels in CudaKernels.cu (built by nvcc), called by the
// cuda backend's runtime functions (CudaGemm.cpp), which check the
// arguments and report errors.
//
//===----------------------------------------------------------------------===//

#ifndef DNNC_RUNTIME_CUDAKERNELS_H
#define DNNC_RUNTIME_CUDAKERNELS_H

#include <cuda_runtime_api.h>

#include <cstdint>

namespace dnnc::rt {

/// The arguments of dnnc_rt_cuda_attention_* (Kernels.h).
struct AttentionArgs {
  int64_t batchHeads, seqQ, seqK, headDim;
  const void *q, *k, *v;
  void *out;
  float scale;
  int32_t causal;
  int64_t heads;
  const void *bias;
  int64_t biasStrideB, biasStrideH, biasStrideQ;
};

/// The element type of a kernel's tensors.
enum class ElementType { F32, F64, BF16, F16 };

/// The largest head dimension the attention kernels take.
int64_t maxAttentionHeadDim();

/// Enqueues fused attention on `stream` (tensor cores for bf16/f16 when the
/// head dim is a multiple of 16). Returns the launch's error (invalid value
/// for f64, which has no attention kernel).
cudaError_t launchAttention(ElementType type, const AttentionArgs &args,
                            cudaStream_t stream);

/// Enqueues C[b][i][j] = act(C[b][i][j] + bias[j]) (no bias when `bias` is
/// null) on `stream` for b in
/// [0, batch) (matrices `strideC` elements apart), i in [0, M), j in [0, N),
/// computed in float (double for f64): the GEMM epilogue where cuBLASLt has
/// no fused algorithm. `activation` is a DNNC_RT_ACTIVATION_* code. Returns
/// the launch's error.
cudaError_t launchBiasActivation(ElementType type, void *C, int64_t batch,
                                 int64_t M, int64_t N, int64_t strideC,
                                 const void *bias, int32_t activation,
                                 cudaStream_t stream);

} // namespace dnnc::rt

#endif // DNNC_RUNTIME_CUDAKERNELS_H
