//===- CpuKernels.cpp - Runtime kernels for CPU rank code ------*- C++ -*-===//
//
// The C ABI kernels of Kernels.h, on CBLAS (OpenBLAS). dnnc-run exports them
// (-rdynamic) to the rank code it loads.
//
//===----------------------------------------------------------------------===//

#include "Elements.h"
#include "KernelErrors.h"
#include "dnnc/Runtime/CpuBackend.h"
#include "dnnc/Runtime/Kernels.h"

#if DNNC_RUNTIME_WITH_BLAS
#include <cblas.h>
#endif
#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <mutex>
#include <vector>

namespace dnnc::rt {

namespace {
/// The first kernel error of the current run, from whichever thread the
/// rank code called the kernel on. The C ABI has no error channel, so this
/// is the one piece of process-wide state in the runtime; the backend clears
/// it before calling the entry and collects it afterwards.
struct KernelErrorSlot {
  std::mutex mutex;
  bool pending = false;
  std::string message;
};
KernelErrorSlot &kernelErrorSlot() {
  static KernelErrorSlot slot;
  return slot;
}

/// One runtime kernel: its exported name and its address here.
struct KernelSymbol {
  const char *name;
  void *address;
};

/// Every kernel of Kernels.h. Referencing them here also keeps their
/// definitions in any executable that links the CPU backend.
const KernelSymbol kKernels[] = {
    {"dnnc_rt_gemm_f32", reinterpret_cast<void *>(&dnnc_rt_gemm_f32)},
    {"dnnc_rt_gemm_f64", reinterpret_cast<void *>(&dnnc_rt_gemm_f64)},
    {"dnnc_rt_gemm_tf32", reinterpret_cast<void *>(&dnnc_rt_gemm_tf32)},
    {"dnnc_rt_gemm_bf16", reinterpret_cast<void *>(&dnnc_rt_gemm_bf16)},
    {"dnnc_rt_gemm_f16", reinterpret_cast<void *>(&dnnc_rt_gemm_f16)},
    {"dnnc_rt_gemm_bias_f32", reinterpret_cast<void *>(&dnnc_rt_gemm_bias_f32)},
    {"dnnc_rt_gemm_bias_f64", reinterpret_cast<void *>(&dnnc_rt_gemm_bias_f64)},
    {"dnnc_rt_gemm_bias_tf32",
     reinterpret_cast<void *>(&dnnc_rt_gemm_bias_tf32)},
    {"dnnc_rt_gemm_bias_bf16",
     reinterpret_cast<void *>(&dnnc_rt_gemm_bias_bf16)},
    {"dnnc_rt_gemm_bias_f16", reinterpret_cast<void *>(&dnnc_rt_gemm_bias_f16)},
    {"dnnc_rt_attention_f32", reinterpret_cast<void *>(&dnnc_rt_attention_f32)},
    {"dnnc_rt_attention_bf16",
     reinterpret_cast<void *>(&dnnc_rt_attention_bf16)},
    {"dnnc_rt_attention_f16", reinterpret_cast<void *>(&dnnc_rt_attention_f16)},
    {"dnnc_rt_all_reduce", reinterpret_cast<void *>(&dnnc_rt_all_reduce)},
    {"dnnc_rt_all_gather", reinterpret_cast<void *>(&dnnc_rt_all_gather)},
    {"dnnc_rt_reduce_scatter",
     reinterpret_cast<void *>(&dnnc_rt_reduce_scatter)},
    {"dnnc_rt_all_to_all", reinterpret_cast<void *>(&dnnc_rt_all_to_all)},
    {"dnnc_rt_broadcast", reinterpret_cast<void *>(&dnnc_rt_broadcast)},
    {"dnnc_rt_group_index", reinterpret_cast<void *>(&dnnc_rt_group_index)},
    {"dnnc_rt_microbatch_index",
     reinterpret_cast<void *>(&dnnc_rt_microbatch_index)},
    {"dnnc_rt_send", reinterpret_cast<void *>(&dnnc_rt_send)},
    {"dnnc_rt_recv", reinterpret_cast<void *>(&dnnc_rt_recv)},
    {"dnnc_rt_workspace", reinterpret_cast<void *>(&dnnc_rt_workspace)},
};
} // namespace

void setKernelError(const std::string &message) {
  KernelErrorSlot &slot = kernelErrorSlot();
  std::lock_guard<std::mutex> lock(slot.mutex);
  if (slot.pending)
    return;
  slot.pending = true;
  slot.message = message;
}

bool takeKernelError(std::string &message) {
  KernelErrorSlot &slot = kernelErrorSlot();
  std::lock_guard<std::mutex> lock(slot.mutex);
  if (!slot.pending)
    return false;
  message = std::move(slot.message);
  slot.pending = false;
  slot.message.clear();
  return true;
}

void *cpuKernelAddress(const std::string &name) {
  for (const KernelSymbol &k : kKernels)
    if (name == k.name)
      return k.address;
  return nullptr;
}

std::vector<std::string> cpuKernelNames() {
  std::vector<std::string> names;
  for (const KernelSymbol &k : kKernels)
    names.push_back(k.name);
  return names;
}

/// Checks the arguments of a batched GEMM; records an error and returns
/// false when they are invalid or too large for 32-bit BLAS integers.
static bool checkGemmArgs(const char *name, int64_t batch, int64_t M, int64_t N,
                          int64_t K, int64_t transpose, const void *A,
                          int64_t strideA, const void *B, int64_t strideB,
                          const void *C, int64_t strideC) {
  auto text = [&]() {
    return std::string(name) + "(batch=" + std::to_string(batch) +
           ", M=" + std::to_string(M) + ", N=" + std::to_string(N) +
           ", K=" + std::to_string(K) +
           ", transpose=" + std::to_string(transpose) +
           ", strideA=" + std::to_string(strideA) +
           ", strideB=" + std::to_string(strideB) +
           ", strideC=" + std::to_string(strideC) + ")";
  };
  if (batch < 0 || M < 0 || N < 0 || K < 0 || strideA < 0 || strideB < 0 ||
      strideC < 0) {
    setKernelError("runtime kernel " + text() + ": negative argument");
    return false;
  }
  if (transpose & ~int64_t(DNNC_RT_TRANSPOSE_A | DNNC_RT_TRANSPOSE_B)) {
    setKernelError("runtime kernel " + text() + ": unknown transpose bits");
    return false;
  }
  if (M > INT_MAX || N > INT_MAX || K > INT_MAX) {
    setKernelError("runtime kernel " + text() +
                   ": matrix dimension too large for the BLAS");
    return false;
  }
  bool empty = batch == 0 || M == 0 || N == 0;
  if (!empty && (!C || (K > 0 && (!A || !B)))) {
    setKernelError("runtime kernel " + text() + ": null matrix pointer");
    return false;
  }
  return true;
}

} // namespace dnnc::rt

using namespace dnnc::rt;

#if !DNNC_RUNTIME_WITH_BLAS
/// Row-major C = op(A) op(B) (M x K times K x N; A stored K x M and B
/// N x K when transposed, see DNNC_RT_TRANSPOSE_*) in plain loops: the GEMM
/// of a runtime built without BLAS.
template <class T>
static void loopGemm(int64_t M, int64_t N, int64_t K, int64_t transpose,
                     const T *A, const T *B, T *C) {
  bool ta = transpose & DNNC_RT_TRANSPOSE_A,
       tb = transpose & DNNC_RT_TRANSPOSE_B;
  std::fill(C, C + M * N, T(0));
  for (int64_t i = 0; i < M; ++i)
    for (int64_t k = 0; k < K; ++k) {
      T a = ta ? A[k * M + i] : A[i * K + k];
      for (int64_t j = 0; j < N; ++j)
        C[i * N + j] += a * (tb ? B[j * K + k] : B[k * N + j]);
    }
}
#endif

#if DNNC_RUNTIME_WITH_BLAS
/// CBLAS's row-major GEMM of one matrix pair, C = op(A) op(B).
static void blasGemm(bool ta, bool tb, int64_t M, int64_t N, int64_t K,
                     const float *A, const float *B, float *C) {
  cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans,
              tb ? CblasTrans : CblasNoTrans, int(M), int(N), int(K), 1.0f, A,
              int(ta ? M : K), B, int(tb ? K : N), 0.0f, C, int(N));
}
static void blasGemm(bool ta, bool tb, int64_t M, int64_t N, int64_t K,
                     const double *A, const double *B, double *C) {
  cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans,
              tb ? CblasTrans : CblasNoTrans, int(M), int(N), int(K), 1.0, A,
              int(ta ? M : K), B, int(tb ? K : N), 0.0, C, int(N));
}
#endif

/// The batched GEMM of dnnc_rt_gemm_f32/_f64 (see Kernels.h) on T.
template <class T>
static void gemmWide(const char *name, int64_t batch, int64_t M, int64_t N,
                     int64_t K, int64_t transpose, const T *A, int64_t strideA,
                     const T *B, int64_t strideB, T *C, int64_t strideC) {
  if (!checkGemmArgs(name, batch, M, N, K, transpose, A, strideA, B, strideB, C,
                     strideC) ||
      batch == 0 || M == 0 || N == 0)
    return;
  for (int64_t b = 0; b < batch; ++b) {
    T *c = C + b * strideC;
    if (K == 0) {
      std::memset(c, 0, sizeof(T) * M * N);
      continue;
    }
#if DNNC_RUNTIME_WITH_BLAS
    blasGemm(transpose & DNNC_RT_TRANSPOSE_A, transpose & DNNC_RT_TRANSPOSE_B,
             M, N, K, A + b * strideA, B + b * strideB, c);
#else
    loopGemm(M, N, K, transpose, A + b * strideA, B + b * strideB, c);
#endif
  }
}

extern "C" void dnnc_rt_gemm_f32(int64_t batch, int64_t M, int64_t N, int64_t K,
                                 int64_t transpose, const float *A,
                                 int64_t strideA, const float *B,
                                 int64_t strideB, float *C, int64_t strideC) {
  gemmWide("dnnc_rt_gemm_f32", batch, M, N, K, transpose, A, strideA, B,
           strideB, C, strideC);
}

extern "C" void dnnc_rt_gemm_f64(int64_t batch, int64_t M, int64_t N, int64_t K,
                                 int64_t transpose, const double *A,
                                 int64_t strideA, const double *B,
                                 int64_t strideB, double *C, int64_t strideC) {
  gemmWide("dnnc_rt_gemm_f64", batch, M, N, K, transpose, A, strideA, B,
           strideB, C, strideC);
}

extern "C" void dnnc_rt_gemm_tf32(int64_t batch, int64_t M, int64_t N,
                                  int64_t K, int64_t transpose, const float *A,
                                  int64_t strideA, const float *B,
                                  int64_t strideB, float *C, int64_t strideC) {
  // No TF32 on the CPU: full fp32 (a TF32 GEMM is allowed to be exact).
  dnnc_rt_gemm_f32(batch, M, N, K, transpose, A, strideA, B, strideB, C,
                   strideC);
}

/// Returns the fp32 value of the bfloat16 bit pattern `bits`.
static float bf16ToFloat(uint16_t bits) {
  uint32_t wide = static_cast<uint32_t>(bits) << 16;
  float value;
  std::memcpy(&value, &wide, sizeof(value));
  return value;
}

/// Returns the fp32 value of the IEEE binary16 bit pattern `bits`.
static float f16ToFloat(uint16_t bits) {
  uint32_t sign = static_cast<uint32_t>(bits & 0x8000) << 16;
  uint32_t exponent = (bits >> 10) & 0x1f, mantissa = bits & 0x3ff;
  uint32_t wide;
  if (exponent == 0x1f) {
    wide = sign | 0x7f800000u | (mantissa << 13); // Inf, NaN.
  } else if (exponent != 0) {
    wide = sign | ((exponent + 112) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {
    wide = sign; // Zero.
  } else {
    // Subnormal: normalise the mantissa.
    int shift = 0;
    while (!(mantissa & 0x400)) {
      mantissa <<= 1;
      ++shift;
    }
    wide = sign | ((113 - shift) << 23) | ((mantissa & 0x3ff) << 13);
  }
  float value;
  std::memcpy(&value, &wide, sizeof(value));
  return value;
}

/// The GEMM of 16-bit inputs: each batch's A and B are widened to fp32 with
/// `widen` (in their stored layout), then multiplied by dnnc_rt_gemm_f32
/// into C (fp32).
template <float (*widen)(uint16_t)>
static void gemm16(const char *name, int64_t batch, int64_t M, int64_t N,
                   int64_t K, int64_t transpose, const uint16_t *A,
                   int64_t strideA, const uint16_t *B, int64_t strideB,
                   float *C, int64_t strideC) {
  if (!checkGemmArgs(name, batch, M, N, K, transpose, A, strideA, B, strideB, C,
                     strideC) ||
      batch == 0 || M == 0 || N == 0)
    return;
  std::vector<float> a(static_cast<size_t>(M * K)),
      b(static_cast<size_t>(K * N));
  for (int64_t i = 0; i < batch; ++i) {
    // A broadcast operand (stride 0) is widened once.
    if (i == 0 || strideA != 0)
      for (int64_t j = 0; j < M * K; ++j)
        a[j] = widen(A[i * strideA + j]);
    if (i == 0 || strideB != 0)
      for (int64_t j = 0; j < K * N; ++j)
        b[j] = widen(B[i * strideB + j]);
    dnnc_rt_gemm_f32(1, M, N, K, transpose, a.data(), 0, b.data(), 0,
                     C + i * strideC, 0);
  }
}

extern "C" void dnnc_rt_gemm_bf16(int64_t batch, int64_t M, int64_t N,
                                  int64_t K, int64_t transpose,
                                  const uint16_t *A, int64_t strideA,
                                  const uint16_t *B, int64_t strideB, float *C,
                                  int64_t strideC) {
  gemm16<bf16ToFloat>("dnnc_rt_gemm_bf16", batch, M, N, K, transpose, A,
                      strideA, B, strideB, C, strideC);
}

extern "C" void dnnc_rt_gemm_f16(int64_t batch, int64_t M, int64_t N, int64_t K,
                                 int64_t transpose, const uint16_t *A,
                                 int64_t strideA, const uint16_t *B,
                                 int64_t strideB, float *C, int64_t strideC) {
  gemm16<f16ToFloat>("dnnc_rt_gemm_f16", batch, M, N, K, transpose, A, strideA,
                     B, strideB, C, strideC);
}

//===----------------------------------------------------------------------===//
// GEMMs with a bias / activation epilogue
//===----------------------------------------------------------------------===//

/// The activation `activation` (DNNC_RT_ACTIVATION_*) of `x`, in the
/// precision of T.
template <class T> static T activate(T x, int32_t activation) {
  switch (activation) {
  case DNNC_RT_ACTIVATION_RELU:
    return x > T(0) ? x : T(0);
  case DNNC_RT_ACTIVATION_GELU_TANH: {
    const T k = T(0.7978845608028654); // sqrt(2 / pi)
    return T(0.5) * x * (T(1) + std::tanh(k * (x + T(0.044715) * x * x * x)));
  }
  default:
    return x;
  }
}

/// Checks the epilogue arguments; records an error and returns false when
/// they are invalid.
static bool checkEpilogueArgs(const char *name, int32_t activation) {
  if (activation < DNNC_RT_ACTIVATION_NONE ||
      activation > DNNC_RT_ACTIVATION_GELU_TANH) {
    setKernelError(std::string("runtime kernel ") + name +
                   ": unknown activation " + std::to_string(activation));
    return false;
  }
  return true;
}

/// C = act(C + bias) over `rows` rows of N elements, in place (no bias when
/// `bias` is null).
template <class T>
static void addBiasActivate(T *C, int64_t rows, int64_t N, const T *bias,
                            int32_t activation) {
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < N; ++j)
      C[i * N + j] =
          activate(C[i * N + j] + (bias ? bias[j] : T(0)), activation);
}

/// The epilogue GEMM of `T` (float or double) operands, bias and C: the
/// GEMM `gemm`, then the bias and the activation in place.
template <class T,
          void (*gemm)(int64_t, int64_t, int64_t, int64_t, int64_t, const T *,
                       int64_t, const T *, int64_t, T *, int64_t)>
static void gemmBiasWide(const char *name, int64_t batch, int64_t M, int64_t N,
                         int64_t K, const T *A, int64_t strideA, const T *B,
                         int64_t strideB, T *C, int64_t strideC, const T *bias,
                         int32_t activation) {
  if (!checkEpilogueArgs(name, activation))
    return;
  gemm(batch, M, N, K, /*transpose=*/0, A, strideA, B, strideB, C, strideC);
  for (int64_t b = 0; b < batch && M > 0 && N > 0; ++b)
    addBiasActivate(C + b * strideC, M, N, bias, activation);
}

extern "C" void dnnc_rt_gemm_bias_f32(int64_t batch, int64_t M, int64_t N,
                                      int64_t K, const float *A,
                                      int64_t strideA, const float *B,
                                      int64_t strideB, float *C,
                                      int64_t strideC, const float *bias,
                                      int32_t activation) {
  gemmBiasWide<float, dnnc_rt_gemm_f32>("dnnc_rt_gemm_bias_f32", batch, M, N, K,
                                        A, strideA, B, strideB, C, strideC,
                                        bias, activation);
}

extern "C" void dnnc_rt_gemm_bias_f64(int64_t batch, int64_t M, int64_t N,
                                      int64_t K, const double *A,
                                      int64_t strideA, const double *B,
                                      int64_t strideB, double *C,
                                      int64_t strideC, const double *bias,
                                      int32_t activation) {
  gemmBiasWide<double, dnnc_rt_gemm_f64>("dnnc_rt_gemm_bias_f64", batch, M, N,
                                         K, A, strideA, B, strideB, C, strideC,
                                         bias, activation);
}

extern "C" void dnnc_rt_gemm_bias_tf32(int64_t batch, int64_t M, int64_t N,
                                       int64_t K, const float *A,
                                       int64_t strideA, const float *B,
                                       int64_t strideB, float *C,
                                       int64_t strideC, const float *bias,
                                       int32_t activation) {
  dnnc_rt_gemm_bias_f32(batch, M, N, K, A, strideA, B, strideB, C, strideC,
                        bias, activation);
}

/// The epilogue GEMM of 16-bit operands, bias and C (element type T): each
/// batch is multiplied in fp32 by gemm16, then the bias is added, the
/// activation applied and the result rounded once into C.
template <class T, float (*widen)(uint16_t)>
static void gemmBias16(const char *name, int64_t batch, int64_t M, int64_t N,
                       int64_t K, const uint16_t *A, int64_t strideA,
                       const uint16_t *B, int64_t strideB, void *C,
                       int64_t strideC, const void *biasv, int32_t activation) {
  if (!checkEpilogueArgs(name, activation) ||
      !checkGemmArgs(name, batch, M, N, K, /*transpose=*/0, A, strideA, B,
                     strideB, C, strideC) ||
      batch == 0 || M == 0 || N == 0)
    return;
  using S = typename T::Storage;
  auto *bias = static_cast<const S *>(biasv);
  std::vector<float> wideBias(static_cast<size_t>(N), 0.0f),
      c(static_cast<size_t>(M * N));
  for (int64_t j = 0; bias && j < N; ++j)
    wideBias[j] = T::load(bias, j);
  for (int64_t b = 0; b < batch; ++b) {
    gemm16<widen>(name, 1, M, N, K, /*transpose=*/0, A + b * strideA, 0,
                  B + b * strideB, 0, c.data(), 0);
    addBiasActivate(c.data(), M, N, wideBias.data(), activation);
    S *out = static_cast<S *>(C) + b * strideC;
    for (int64_t i = 0; i < M * N; ++i)
      T::store(out, i, c[i]);
  }
}

extern "C" void dnnc_rt_gemm_bias_bf16(int64_t batch, int64_t M, int64_t N,
                                       int64_t K, const uint16_t *A,
                                       int64_t strideA, const uint16_t *B,
                                       int64_t strideB, void *C,
                                       int64_t strideC, const void *bias,
                                       int32_t activation) {
  gemmBias16<elements::BF16, bf16ToFloat>("dnnc_rt_gemm_bias_bf16", batch, M, N,
                                          K, A, strideA, B, strideB, C, strideC,
                                          bias, activation);
}

extern "C" void dnnc_rt_gemm_bias_f16(int64_t batch, int64_t M, int64_t N,
                                      int64_t K, const uint16_t *A,
                                      int64_t strideA, const uint16_t *B,
                                      int64_t strideB, void *C, int64_t strideC,
                                      const void *bias, int32_t activation) {
  gemmBias16<elements::F16, f16ToFloat>("dnnc_rt_gemm_bias_f16", batch, M, N, K,
                                        A, strideA, B, strideB, C, strideC,
                                        bias, activation);
}
