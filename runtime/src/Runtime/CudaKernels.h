//===- CudaKernels.h - The cuda backend's own kernels ----------*- C++ -*-===//
//
// Launchers of the kernels in CudaKernels.cu (built by nvcc), called by the
// cuda backend's runtime functions (CudaBackend.cpp), which check the
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

/// The element type of an attention call.
enum class AttentionType { F32, BF16, F16 };

/// The largest head dimension the attention kernels take.
int64_t maxAttentionHeadDim();

/// Enqueues fused attention on `stream` (tensor cores for bf16/f16 when the
/// head dim is a multiple of 16). Returns the launch's error.
cudaError_t launchAttention(AttentionType type, const AttentionArgs &args,
                            cudaStream_t stream);

} // namespace dnnc::rt

#endif // DNNC_RUNTIME_CUDAKERNELS_H
