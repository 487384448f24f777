//===- CpuAttention.cpp - Reference attention kernel -----------*- C++ -*-===//
//
// dnnc_rt_attention_<f32|bf16|f16>: scaled dot-product attention on the
// CPU, the reference of the cuda target's fused kernel (the cuda host
// emulation calls it in place of dnnc_rt_cuda_attention_*). Plain loops in
// float, one query row at a time; the scores of a row are never more than
// seqK floats.
//
//===----------------------------------------------------------------------===//

#include "Elements.h"
#include "KernelErrors.h"
#include "dnnc/Runtime/Kernels.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

namespace {

using namespace dnnc::rt::elements;

template <class T>
void attention(const char *name, int64_t batchHeads, int64_t seqQ, int64_t seqK,
               int64_t headDim, const void *qv, const void *kv, const void *vv,
               void *outv, float scale, int32_t causal, int64_t heads,
               const void *biasv, int64_t strideB, int64_t strideH,
               int64_t strideQ) {
  if (batchHeads < 0 || seqQ < 0 || seqK < 0 || headDim < 0 || heads <= 0 ||
      (batchHeads > 0 && batchHeads % heads != 0) ||
      (batchHeads * seqQ * headDim > 0 && (!qv || !kv || !vv || !outv))) {
    dnnc::rt::setKernelError(
        std::string(name) +
        ": invalid arguments (batchHeads=" + std::to_string(batchHeads) +
        ", seqQ=" + std::to_string(seqQ) + ", seqK=" + std::to_string(seqK) +
        ", headDim=" + std::to_string(headDim) +
        ", heads=" + std::to_string(heads) + ")");
    return;
  }
  using S = typename T::Storage;
  auto *q = static_cast<const S *>(qv);
  auto *k = static_cast<const S *>(kv);
  auto *v = static_cast<const S *>(vv);
  auto *out = static_cast<S *>(outv);
  auto *bias = static_cast<const S *>(biasv);
  std::vector<float> scores(seqK), acc(headDim);
  const float minusInf = -std::numeric_limits<float>::infinity();
  for (int64_t bh = 0; bh < batchHeads; ++bh) {
    int64_t b = bh / heads, h = bh % heads;
    const int64_t qBase = bh * seqQ * headDim, kBase = bh * seqK * headDim;
    for (int64_t i = 0; i < seqQ; ++i) {
      float max = minusInf;
      for (int64_t j = 0; j < seqK; ++j) {
        float s = minusInf;
        if (!causal || j <= i) {
          float dot = 0;
          for (int64_t d = 0; d < headDim; ++d)
            dot += T::load(q, qBase + i * headDim + d) *
                   T::load(k, kBase + j * headDim + d);
          s = scale * dot;
          if (bias)
            s += T::load(bias, b * strideB + h * strideH + i * strideQ + j);
        }
        scores[j] = s;
        max = std::fmax(max, s);
      }
      std::fill(acc.begin(), acc.end(), 0.0f);
      float sum = 0;
      if (max != minusInf) {
        for (int64_t j = 0; j < seqK; ++j) {
          float p = std::exp(scores[j] - max);
          sum += p;
          for (int64_t d = 0; d < headDim; ++d)
            acc[d] += p * T::load(v, kBase + j * headDim + d);
        }
      }
      // A fully masked row is zeros.
      for (int64_t d = 0; d < headDim; ++d)
        T::store(out, qBase + i * headDim + d, sum > 0 ? acc[d] / sum : 0.0f);
    }
  }
}

} // namespace

#define DNNC_ATTENTION(SUFFIX, TYPE)                                           \
  extern "C" void dnnc_rt_attention_##SUFFIX(                                  \
      int64_t batchHeads, int64_t seqQ, int64_t seqK, int64_t headDim,         \
      const void *q, const void *k, const void *v, void *out, float scale,     \
      int32_t causal, int64_t heads, const void *bias, int64_t biasStrideB,    \
      int64_t biasStrideH, int64_t biasStrideQ) {                              \
    attention<TYPE>("dnnc_rt_attention_" #SUFFIX, batchHeads, seqQ, seqK,      \
                    headDim, q, k, v, out, scale, causal, heads, bias,         \
                    biasStrideB, biasStrideH, biasStrideQ);                    \
  }

DNNC_ATTENTION(f32, F32)
DNNC_ATTENTION(bf16, BF16)
DNNC_ATTENTION(f16, F16)
