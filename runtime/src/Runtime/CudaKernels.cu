//===- CudaKernels.cu - The cuda backend's own kernels ---------*- CUDA -*-===//
//
// Fused scaled dot-product attention (flash-attention style: the seqQ x seqK
// scores are never written to global memory) for the cuda target's
// `dnnc_rt_cuda_attention_*` calls:
//   - bf16/f16 with a head dim that is a multiple of 16 (up to 128): tensor
//     cores through WMMA. A block of 4 warps owns 64 query rows (16 per
//     warp) and walks the keys in tiles of 64: S = Q K^T on tensor cores,
//     the online softmax (running max and sum per row, fp32) in shared
//     memory, O += P V on tensor cores, O rescaled per tile, fp32 throughout.
//   - any other case (fp32, other head dims up to 128): CUDA cores, one
//     thread per query row, key/value tiles staged in shared memory.
// Semantics are those of dnnc_rt_attention_* (Kernels.h, the CPU reference):
// bias read at b*strideB + h*strideH + i*strideQ + j, j > i masked when
// causal, a fully masked row is zeros.
//
// Also the bias / activation epilogue of a GEMM for the cases cuBLASLt has
// no fused algorithm for (one grid-stride elementwise pass).
//
//===----------------------------------------------------------------------===//

#include "CudaKernels.h"
#include "dnnc/Runtime/Kernels.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <math_constants.h>
#include <mma.h>

#include <algorithm>
#include <type_traits>

namespace dnnc::rt {
namespace {

template <class T> __device__ inline float toFloat(T x);
template <> __device__ inline float toFloat<float>(float x) { return x; }
template <> __device__ inline float toFloat<__nv_bfloat16>(__nv_bfloat16 x) {
  return __bfloat162float(x);
}
template <> __device__ inline float toFloat<__half>(__half x) {
  return __half2float(x);
}

template <class T> __device__ inline T fromFloat(float x);
template <> __device__ inline float fromFloat<float>(float x) { return x; }
template <> __device__ inline __nv_bfloat16 fromFloat<__nv_bfloat16>(float x) {
  return __float2bfloat16_rn(x);
}
template <> __device__ inline __half fromFloat<__half>(float x) {
  return __float2half_rn(x);
}

/// The score of query row `i` and key `j` before the softmax: scaled dot
/// product (`dot`), plus the bias, -inf where masked or out of range.
template <class T>
__device__ inline float score(const AttentionArgs &a, float dot, int64_t b,
                              int64_t h, int64_t i, int64_t j) {
  if (i >= a.seqQ || j >= a.seqK || (a.causal && j > i))
    return -CUDART_INF_F;
  float s = a.scale * dot;
  if (a.bias)
    s += toFloat(static_cast<const T *>(
        a.bias)[b * a.biasStrideB + h * a.biasStrideH + i * a.biasStrideQ + j]);
  return s;
}

//===----------------------------------------------------------------------===//
// CUDA cores: any element type, head dim <= 128.
//===----------------------------------------------------------------------===//

constexpr int kSimpleRows = 64;  // query rows (threads) per block
constexpr int kSimpleKeys = 32;  // keys per shared-memory tile
constexpr int kMaxHeadDim = 128; // registers per thread: q and acc

template <class T> __global__ void attentionSimple(AttentionArgs a) {
  extern __shared__ __align__(16) float tiles[]; // K then V: [keys][D]
  const int64_t D = a.headDim, bh = blockIdx.y;
  const int64_t b = bh / a.heads, h = bh % a.heads;
  const int64_t i = int64_t(blockIdx.x) * kSimpleRows + threadIdx.x;
  const T *q = static_cast<const T *>(a.q) + bh * a.seqQ * D;
  const T *k = static_cast<const T *>(a.k) + bh * a.seqK * D;
  const T *v = static_cast<const T *>(a.v) + bh * a.seqK * D;
  float *ks = tiles, *vs = tiles + kSimpleKeys * D;

  float qr[kMaxHeadDim], acc[kMaxHeadDim];
  for (int d = 0; d < D; ++d) {
    qr[d] = i < a.seqQ ? toFloat(q[i * D + d]) : 0.0f;
    acc[d] = 0.0f;
  }
  float m = -CUDART_INF_F, l = 0.0f;
  int64_t lastKey = a.seqK;
  if (a.causal) // no row of this block sees keys past its last row
    lastKey = min(a.seqK, int64_t(blockIdx.x + 1) * kSimpleRows);
  for (int64_t k0 = 0; k0 < lastKey; k0 += kSimpleKeys) {
    for (int64_t e = threadIdx.x; e < kSimpleKeys * D; e += blockDim.x) {
      int64_t j = k0 + e / D;
      ks[e] = j < a.seqK ? toFloat(k[j * D + e % D]) : 0.0f;
      vs[e] = j < a.seqK ? toFloat(v[j * D + e % D]) : 0.0f;
    }
    __syncthreads();
    float s[kSimpleKeys];
    float tileMax = -CUDART_INF_F;
    for (int c = 0; c < kSimpleKeys; ++c) {
      float dot = 0.0f;
      for (int d = 0; d < D; ++d)
        dot += qr[d] * ks[c * D + d];
      s[c] = score<T>(a, dot, b, h, i, k0 + c);
      tileMax = fmaxf(tileMax, s[c]);
    }
    if (tileMax != -CUDART_INF_F) {
      float mNew = fmaxf(m, tileMax);
      float alpha = __expf(m - mNew); // 0 while m is -inf
      l *= alpha;
      for (int d = 0; d < D; ++d)
        acc[d] *= alpha;
      for (int c = 0; c < kSimpleKeys; ++c) {
        float p = s[c] == -CUDART_INF_F ? 0.0f : __expf(s[c] - mNew);
        l += p;
        for (int d = 0; d < D; ++d)
          acc[d] += p * vs[c * D + d];
      }
      m = mNew;
    }
    __syncthreads();
  }
  if (i < a.seqQ) {
    T *out = static_cast<T *>(a.out) + bh * a.seqQ * D;
    for (int d = 0; d < D; ++d)
      out[i * D + d] = fromFloat<T>(l > 0.0f ? acc[d] / l : 0.0f);
  }
}

//===----------------------------------------------------------------------===//
// Tensor cores (WMMA): bf16/f16, head dim a multiple of 16, <= 128.
//===----------------------------------------------------------------------===//

constexpr int kWarps = 4;             // warps per block
constexpr int kRows = 16 * kWarps;    // query rows per block
constexpr int kKeys = 64;             // keys per tile
constexpr int kThreads = 32 * kWarps; // threads per block

/// Shared memory of the WMMA kernel for head dim `D`, in bytes.
__host__ __device__ inline size_t wmmaSharedBytes(int64_t D, size_t elem) {
  return size_t(kRows) * D * elem       // Q
         + 2 * size_t(kKeys) * D * elem // K, V
         + size_t(kRows) * kKeys * 4    // S (fp32)
         + size_t(kRows) * kKeys * elem // P
         + size_t(kRows) * D * 4        // O (fp32)
         + 2 * size_t(kRows) * 4;       // running max and sum
}

template <class T> __global__ void attentionWmma(AttentionArgs a) {
  using namespace nvcuda;
  extern __shared__ __align__(128) unsigned char smem[];
  const int64_t D = a.headDim, bh = blockIdx.y;
  const int64_t b = bh / a.heads, h = bh % a.heads;
  const int64_t q0 = int64_t(blockIdx.x) * kRows;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const T *q = static_cast<const T *>(a.q) + bh * a.seqQ * D;
  const T *k = static_cast<const T *>(a.k) + bh * a.seqK * D;
  const T *v = static_cast<const T *>(a.v) + bh * a.seqK * D;

  T *qs = reinterpret_cast<T *>(smem);
  T *ks = qs + kRows * D;
  T *vs = ks + kKeys * D;
  float *ss = reinterpret_cast<float *>(vs + kKeys * D);
  T *ps = reinterpret_cast<T *>(ss + kRows * kKeys);
  float *os = reinterpret_cast<float *>(ps + kRows * kKeys);
  float *rowMax = os + kRows * D;
  float *rowSum = rowMax + kRows;

  for (int64_t e = threadIdx.x; e < kRows * D; e += kThreads) {
    int64_t i = q0 + e / D;
    qs[e] = i < a.seqQ ? q[i * D + e % D] : fromFloat<T>(0.0f);
    os[e] = 0.0f;
  }
  for (int r = threadIdx.x; r < kRows; r += kThreads) {
    rowMax[r] = -CUDART_INF_F;
    rowSum[r] = 0.0f;
  }
  __syncthreads();

  // This warp's 16 rows; each lane owns one row (lane / 2) and half of its
  // columns.
  T *wq = qs + warp * 16 * D;
  float *ws = ss + warp * 16 * kKeys;
  T *wp = ps + warp * 16 * kKeys;
  float *wo = os + warp * 16 * D;
  const int row = lane / 2, half = lane % 2;
  const int64_t i = q0 + warp * 16 + row;
  float *m = rowMax + warp * 16 + row, *l = rowSum + warp * 16 + row;

  int64_t lastKey = a.seqK;
  if (a.causal)
    lastKey = min(a.seqK, q0 + kRows);
  for (int64_t k0 = 0; k0 < lastKey; k0 += kKeys) {
    __syncthreads(); // the previous tile's K and V are no longer read
    for (int64_t e = threadIdx.x; e < kKeys * D; e += kThreads) {
      int64_t j = k0 + e / D;
      ks[e] = j < a.seqK ? k[j * D + e % D] : fromFloat<T>(0.0f);
      vs[e] = j < a.seqK ? v[j * D + e % D] : fromFloat<T>(0.0f);
    }
    __syncthreads();

    // S = Q K^T for this warp's rows: 16 x 64, fp32.
    for (int n = 0; n < kKeys / 16; ++n) {
      wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
      wmma::fill_fragment(acc, 0.0f);
      for (int kd = 0; kd < D / 16; ++kd) {
        wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::row_major> fa;
        wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::col_major> fb;
        wmma::load_matrix_sync(fa, wq + kd * 16, D);
        // K^T's column n is K's row n: K row-major is K^T column-major.
        wmma::load_matrix_sync(fb, ks + n * 16 * D + kd * 16, D);
        wmma::mma_sync(acc, fa, fb, acc);
      }
      wmma::store_matrix_sync(ws + n * 16, acc, kKeys, wmma::mem_row_major);
    }
    __syncwarp();

    // Online softmax of the tile, row by row (two lanes per row).
    float s[kKeys / 2];
    float tileMax = -CUDART_INF_F;
    for (int c = 0; c < kKeys / 2; ++c) {
      int col = half * (kKeys / 2) + c;
      s[c] = score<T>(a, ws[row * kKeys + col], b, h, i, k0 + col);
      tileMax = fmaxf(tileMax, s[c]);
    }
    tileMax = fmaxf(tileMax, __shfl_xor_sync(0xffffffffu, tileMax, 1));
    float mOld = *m;
    float mNew = fmaxf(mOld, tileMax);
    float alpha = 1.0f, sum = 0.0f;
    if (mNew != -CUDART_INF_F) {
      alpha = __expf(mOld - mNew); // 0 while the row had no key
      for (int c = 0; c < kKeys / 2; ++c) {
        float p = s[c] == -CUDART_INF_F ? 0.0f : __expf(s[c] - mNew);
        sum += p;
        wp[row * kKeys + half * (kKeys / 2) + c] = fromFloat<T>(p);
      }
    } else {
      for (int c = 0; c < kKeys / 2; ++c)
        wp[row * kKeys + half * (kKeys / 2) + c] = fromFloat<T>(0.0f);
    }
    sum += __shfl_xor_sync(0xffffffffu, sum, 1);
    for (int64_t d = half * (D / 2); d < (half + 1) * (D / 2); ++d)
      wo[row * D + d] *= alpha;
    __syncwarp(); // both lanes of the row have read mOld
    if (half == 0) {
      *l = *l * alpha + sum;
      *m = mNew;
    }
    __syncwarp();

    // O += P V: 16 x D for this warp.
    for (int n = 0; n < D / 16; ++n) {
      wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
      wmma::load_matrix_sync(acc, wo + n * 16, D, wmma::mem_row_major);
      for (int kk = 0; kk < kKeys / 16; ++kk) {
        wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::row_major> fa;
        wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::row_major> fb;
        wmma::load_matrix_sync(fa, wp + kk * 16, kKeys);
        wmma::load_matrix_sync(fb, vs + kk * 16 * D + n * 16, D);
        wmma::mma_sync(acc, fa, fb, acc);
      }
      wmma::store_matrix_sync(wo + n * 16, acc, D, wmma::mem_row_major);
    }
    __syncwarp();
  }

  if (i < a.seqQ) {
    T *out = static_cast<T *>(a.out) + bh * a.seqQ * D;
    float total = *l;
    for (int64_t d = half * (D / 2); d < (half + 1) * (D / 2); ++d)
      out[i * D + d] =
          fromFloat<T>(total > 0.0f ? wo[row * D + d] / total : 0.0f);
  }
}

template <class T>
cudaError_t launch(const AttentionArgs &a, cudaStream_t stream) {
  if (a.batchHeads == 0 || a.seqQ == 0)
    return cudaSuccess;
  if constexpr (sizeof(T) == 2) {
    if (a.headDim % 16 == 0) {
      size_t bytes = wmmaSharedBytes(a.headDim, sizeof(T));
      static int configured = 0; // the largest size set so far
      if (bytes > size_t(configured)) {
        cudaError_t rc = cudaFuncSetAttribute(
            attentionWmma<T>, cudaFuncAttributeMaxDynamicSharedMemorySize,
            int(bytes));
        if (rc != cudaSuccess)
          return rc;
        configured = int(bytes);
      }
      dim3 grid(unsigned((a.seqQ + kRows - 1) / kRows), unsigned(a.batchHeads));
      attentionWmma<T><<<grid, kThreads, bytes, stream>>>(a);
      return cudaGetLastError();
    }
  }
  size_t bytes = 2 * size_t(kSimpleKeys) * a.headDim * sizeof(float);
  dim3 grid(unsigned((a.seqQ + kSimpleRows - 1) / kSimpleRows),
            unsigned(a.batchHeads));
  attentionSimple<T><<<grid, kSimpleRows, bytes, stream>>>(a);
  return cudaGetLastError();
}

/// The activation `activation` (DNNC_RT_ACTIVATION_*) of `x`.
template <class F> __device__ inline F activate(F x, int32_t activation) {
  if (activation == DNNC_RT_ACTIVATION_RELU)
    return x > F(0) ? x : F(0);
  if (activation == DNNC_RT_ACTIVATION_GELU_TANH)
    return F(0.5) * x *
           (F(1) + tanh(F(0.7978845608028654) * (x + F(0.044715) * x * x * x)));
  return x;
}

/// C = act(C + bias) elementwise, grid-stride, computed in float.
template <class T>
__global__ void biasActivation(T *C, int64_t batch, int64_t M, int64_t N,
                               int64_t strideC, const T *bias,
                               int32_t activation) {
  int64_t total = batch * M * N;
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < total;
       e += int64_t(gridDim.x) * blockDim.x) {
    int64_t b = e / (M * N), ij = e % (M * N);
    T &c = C[b * strideC + ij];
    float add = bias ? toFloat(bias[ij % N]) : 0.0f;
    c = fromFloat<T>(activate(toFloat(c) + add, activation));
  }
}

/// The double-precision variant: no rounding through float.
__global__ void biasActivationF64(double *C, int64_t batch, int64_t M,
                                  int64_t N, int64_t strideC,
                                  const double *bias, int32_t activation) {
  int64_t total = batch * M * N;
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < total;
       e += int64_t(gridDim.x) * blockDim.x) {
    int64_t b = e / (M * N), ij = e % (M * N);
    double &c = C[b * strideC + ij];
    c = activate(c + (bias ? bias[ij % N] : 0.0), activation);
  }
}

template <class T>
cudaError_t launchBias(void *C, int64_t batch, int64_t M, int64_t N,
                       int64_t strideC, const void *bias, int32_t activation,
                       cudaStream_t stream) {
  constexpr int kThreadsPerBlock = 256;
  int64_t total = batch * M * N;
  if (total == 0)
    return cudaSuccess;
  unsigned blocks = unsigned(std::min<int64_t>(
      (total + kThreadsPerBlock - 1) / kThreadsPerBlock, int64_t(1) << 16));
  if constexpr (std::is_same_v<T, double>)
    biasActivationF64<<<blocks, kThreadsPerBlock, 0, stream>>>(
        static_cast<double *>(C), batch, M, N, strideC,
        static_cast<const double *>(bias), activation);
  else
    biasActivation<T><<<blocks, kThreadsPerBlock, 0, stream>>>(
        static_cast<T *>(C), batch, M, N, strideC, static_cast<const T *>(bias),
        activation);
  return cudaGetLastError();
}

} // namespace

int64_t maxAttentionHeadDim() { return kMaxHeadDim; }

cudaError_t launchBiasActivation(ElementType type, void *C, int64_t batch,
                                 int64_t M, int64_t N, int64_t strideC,
                                 const void *bias, int32_t activation,
                                 cudaStream_t stream) {
  switch (type) {
  case ElementType::F32:
    return launchBias<float>(C, batch, M, N, strideC, bias, activation, stream);
  case ElementType::F64:
    return launchBias<double>(C, batch, M, N, strideC, bias, activation,
                              stream);
  case ElementType::BF16:
    return launchBias<__nv_bfloat16>(C, batch, M, N, strideC, bias, activation,
                                     stream);
  case ElementType::F16:
    return launchBias<__half>(C, batch, M, N, strideC, bias, activation,
                              stream);
  }
  return cudaErrorInvalidValue;
}

cudaError_t launchAttention(ElementType type, const AttentionArgs &args,
                            cudaStream_t stream) {
  switch (type) {
  case ElementType::F32:
    return launch<float>(args, stream);
  case ElementType::BF16:
    return launch<__nv_bfloat16>(args, stream);
  case ElementType::F16:
    return launch<__half>(args, stream);
  case ElementType::F64:
    break;
  }
  return cudaErrorInvalidValue;
}

} // namespace dnnc::rt
