//===- CudaKernelsTest.cpp - cuda GEMMs and kernels vs the CPU -*- C++ -*-===//
//
// Built only with DNNC_RUNTIME_WITH_CUDA. Runs the cuBLASLt GEMMs (every
// dtype, batched cases with a broadcast operand) and the attention kernels
// (every dtype, tensor-core and CUDA-core paths, causal and biased) inside a
// run of the cuda backend and compares them with plain C++ references, with
// per-dtype tolerances; checks that graph replays of a rank function see
// new inputs. The device tests skip themselves where no device is present;
// the checks that need none (kernels outside a run, cuBLASLt not loaded at
// start) always run.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"
#include "dnnc/Runtime/Backend.h"
#include "dnnc/Runtime/CudaBackend.h"
#include "dnnc/Runtime/Kernels.h"
#include "dnnc/Runtime/Session.h"

#include <gtest/gtest.h>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>
#include <cstring>
#include <dlfcn.h>
#include <functional>
#include <random>

using namespace dnnc;
using namespace dnnc::test;

namespace {

//===----------------------------------------------------------------------===//
// Element types
//===----------------------------------------------------------------------===//

enum class Elem { F32, BF16, F16, F64 };

size_t elemSize(Elem e) { return e == Elem::F64 ? 8 : e == Elem::F32 ? 4 : 2; }

/// `values` rounded to `e`, as the bytes of a device buffer.
std::string encode(Elem e, const std::vector<double> &values) {
  std::string bytes(values.size() * elemSize(e), '\0');
  for (size_t i = 0; i < values.size(); ++i) {
    char *p = &bytes[i * elemSize(e)];
    if (e == Elem::F64) {
      std::memcpy(p, &values[i], 8);
    } else if (e == Elem::F32) {
      float f = float(values[i]);
      std::memcpy(p, &f, 4);
    } else if (e == Elem::BF16) {
      __nv_bfloat16 h = __float2bfloat16(float(values[i]));
      std::memcpy(p, &h, 2);
    } else {
      __half h = __float2half(float(values[i]));
      std::memcpy(p, &h, 2);
    }
  }
  return bytes;
}

/// The values of a buffer of `e` elements.
std::vector<double> decode(Elem e, const std::string &bytes) {
  std::vector<double> values(bytes.size() / elemSize(e));
  for (size_t i = 0; i < values.size(); ++i) {
    const char *p = &bytes[i * elemSize(e)];
    if (e == Elem::F64) {
      std::memcpy(&values[i], p, 8);
    } else if (e == Elem::F32) {
      float f;
      std::memcpy(&f, p, 4);
      values[i] = f;
    } else if (e == Elem::BF16) {
      __nv_bfloat16 h;
      std::memcpy(&h, p, 2);
      values[i] = __bfloat162float(h);
    } else {
      __half h;
      std::memcpy(&h, p, 2);
      values[i] = __half2float(h);
    }
  }
  return values;
}

/// `values` as they are after rounding to `e` (the inputs the device sees).
std::vector<double> rounded(Elem e, const std::vector<double> &values) {
  return decode(e, encode(e, values));
}

/// `n` uniform values in [lo, hi) from a fixed seed.
std::vector<double> randomValues(size_t n, unsigned seed, double lo = -1,
                                 double hi = 1) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  std::vector<double> values(n);
  for (double &v : values)
    v = dist(gen);
  return values;
}

/// Expects |actual - expected| <= atol + rtol * |expected| elementwise.
void expectNear(const std::vector<double> &actual,
                const std::vector<double> &expected, double atol, double rtol,
                const std::string &what) {
  ASSERT_EQ(actual.size(), expected.size()) << what;
  size_t bad = 0;
  for (size_t i = 0; i < actual.size(); ++i) {
    double limit = atol + rtol * std::fabs(expected[i]);
    if (!(std::fabs(actual[i] - expected[i]) <= limit) && bad++ < 5)
      ADD_FAILURE() << what << ": element " << i << " is " << actual[i]
                    << ", expected " << expected[i];
  }
  EXPECT_EQ(bad, 0u) << what;
}

//===----------------------------------------------------------------------===//
// CPU references
//===----------------------------------------------------------------------===//

/// dnnc_rt_cuda_gemm_* in double: C[b] = A[b] x B[b].
std::vector<double> gemmReference(int64_t batch, int64_t M, int64_t N,
                                  int64_t K, const std::vector<double> &A,
                                  int64_t strideA, const std::vector<double> &B,
                                  int64_t strideB, int64_t strideC,
                                  size_t cElements) {
  std::vector<double> C(cElements, 0);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        double sum = 0;
        for (int64_t k = 0; k < K; ++k)
          sum += A[b * strideA + i * K + k] * B[b * strideB + k * N + j];
        C[b * strideC + i * N + j] = sum;
      }
  return C;
}

//===----------------------------------------------------------------------===//
// Running kernels on the device
//===----------------------------------------------------------------------===//

/// Calls `*static_cast<std::function<void()> *>(context)`.
void callFunction(void *context) {
  (*static_cast<std::function<void()> *>(context))();
}

/// A cuda backend with the trampoline code loaded (Inputs/cuda_trampoline.c)
/// and the device buffers of one test.
class CudaKernels : public ::testing::Test {
public:
  void SetUp() override {
    std::string error;
    rt::WorldInfo world;
    backend = rt::createBackend("cuda", world, error);
    if (!backend)
      GTEST_SKIP() << error;
    plan::ModelInfo model;
    model.target = "cuda";
    model.worldSize = 1;
    ASSERT_TRUE(backend->connect(model, error)) << error;
    plan::RankProgram program;
    program.code = readBytes(testCodePath("cuda_trampoline"));
    ASSERT_FALSE(program.code.empty());
    plan::FunctionDesc f;
    f.symbol = "dnnc_test_trampoline";
    program.functions.push_back(f);
    ASSERT_TRUE(backend->loadProgram(program, error)) << error;
  }

  void TearDown() override {
    for (rt::DeviceBuffer &b : buffers)
      backend->deallocate(b);
  }

  /// A device buffer holding `bytes`; its address.
  void *upload(const std::string &bytes) {
    std::string error;
    buffers.emplace_back();
    EXPECT_TRUE(backend->allocate(std::max<size_t>(bytes.size(), 1),
                                  buffers.back(), error))
        << error;
    EXPECT_TRUE(backend->copyToDevice(buffers.back(), bytes.data(),
                                      bytes.size(), error))
        << error;
    return buffers.back().data;
  }

  /// `values` in a new device buffer of `e` elements.
  void *upload(Elem e, const std::vector<double> &values) {
    return upload(encode(e, values));
  }

  /// The `n` elements of type `e` at device address `data`.
  std::vector<double> download(Elem e, void *data, size_t n) {
    for (const rt::DeviceBuffer &b : buffers)
      if (b.data == data) {
        std::string bytes(n * elemSize(e), '\0');
        std::string error;
        EXPECT_TRUE(backend->copyToHost(bytes.data(), b, bytes.size(), error))
            << error;
        return decode(e, bytes);
      }
    ADD_FAILURE() << "not a test buffer";
    return {};
  }

  /// Runs `body` inside a run of the backend; returns the run's error ("" on
  /// success).
  std::string runKernels(std::function<void()> body) {
    std::string error;
    std::vector<void *> args = {reinterpret_cast<void *>(&callFunction), &body};
    if (backend->run(0, 0, args, error))
      return "";
    return error.empty() ? "run failed without an error" : error;
  }

  std::unique_ptr<rt::Backend> backend;
  std::vector<rt::DeviceBuffer> buffers;
};

/// One GEMM variant under test.
struct GemmVariant {
  const char *name;
  /// The element types of A and B, and of C (fp32 for bf16/f16).
  Elem elem, cElem;
  decltype(&dnnc_rt_cuda_gemm_f32) call;
  /// Tolerances relative to the largest |element| of a product sum.
  double tolerance;
};

std::vector<GemmVariant> gemmVariants() {
  return {{"f32", Elem::F32, Elem::F32, dnnc_rt_cuda_gemm_f32, 1e-5},
          {"tf32", Elem::F32, Elem::F32, dnnc_rt_cuda_gemm_tf32, 3e-3},
          {"bf16", Elem::BF16, Elem::F32, dnnc_rt_cuda_gemm_bf16, 1e-5},
          {"f16", Elem::F16, Elem::F32, dnnc_rt_cuda_gemm_f16, 1e-5},
          {"f64", Elem::F64, Elem::F64, dnnc_rt_cuda_gemm_f64, 1e-12}};
}

/// Runs one GEMM of `v` and compares it with the reference; the inputs are
/// rounded to the variant's type before the reference sees them (so bf16
/// and f16, accumulating in fp32 into an fp32 C, are close to exact).
void checkGemm(CudaKernels &t, const GemmVariant &v, int64_t batch, int64_t M,
               int64_t N, int64_t K, int64_t strideA, int64_t strideB,
               unsigned seed, int64_t transpose = 0) {
  size_t aCount = size_t((batch - 1) * strideA + M * K);
  size_t bCount = size_t((batch - 1) * strideB + K * N);
  int64_t strideC = M * N;
  size_t cCount = size_t(batch * strideC);
  std::vector<double> A = rounded(v.elem, randomValues(aCount, seed));
  std::vector<double> B = rounded(v.elem, randomValues(bCount, seed + 1));
  // The operands as stored: transposed per batch matrix where `transpose`
  // says so (DNNC_RT_TRANSPOSE_A: K x M, _B: N x K).
  std::vector<double> storedA = A, storedB = B;
  for (int64_t b = 0; b < batch; ++b) {
    if (transpose & DNNC_RT_TRANSPOSE_A)
      for (int64_t i = 0; i < M; ++i)
        for (int64_t k = 0; k < K; ++k)
          storedA[b * strideA + k * M + i] = A[b * strideA + i * K + k];
    if (transpose & DNNC_RT_TRANSPOSE_B)
      for (int64_t k = 0; k < K; ++k)
        for (int64_t j = 0; j < N; ++j)
          storedB[b * strideB + j * K + k] = B[b * strideB + k * N + j];
  }
  void *dA = t.upload(v.elem, storedA), *dB = t.upload(v.elem, storedB);
  void *dC = t.upload(v.cElem, std::vector<double>(cCount, 7.0));
  std::string what = std::string(v.name) + " batch=" + std::to_string(batch) +
                     " M=" + std::to_string(M) + " N=" + std::to_string(N) +
                     " K=" + std::to_string(K) +
                     " strideA=" + std::to_string(strideA) +
                     " strideB=" + std::to_string(strideB) +
                     " transpose=" + std::to_string(transpose);
  EXPECT_EQ(t.runKernels([&] {
    v.call(batch, M, N, K, transpose, dA, strideA, dB, strideB, dC, strideC);
  }),
            "")
      << what;
  std::vector<double> expected =
      gemmReference(batch, M, N, K, A, strideA, B, strideB, strideC, cCount);
  // Products of values in [-1, 1): sums of K terms of magnitude <= 1.
  double scale = double(K) / 4 + 1;
  expectNear(t.download(v.cElem, dC, cCount), expected, v.tolerance * scale,
             v.tolerance, what);
}

} // namespace

//===----------------------------------------------------------------------===//
// Without a device
//===----------------------------------------------------------------------===//

TEST(CudaKernelsNoRun, CublasLtIsNotLoadedAtStart) {
  // dnnc-run links no cuBLASLt: a cpu plan does not pay for loading it, and
  // a GEMM outside a run fails before loading it.
  float a = 1, b = 2, c = 3;
  dnnc_rt_cuda_gemm_f32(1, 1, 1, 1, 0, &a, 0, &b, 0, &c, 0);
  EXPECT_EQ(c, 3);
  for (const char *name : {"libcublasLt.so.13", "libcublasLt.so"})
    EXPECT_EQ(::dlopen(name, RTLD_NOW | RTLD_NOLOAD), nullptr) << name;
}

TEST(CudaKernelsNoRun, KernelsOutsideARunDoNothing) {
  float x[4] = {1, 2, 3, 4};
  dnnc_rt_cuda_attention_f32(1, 1, 1, 4, x, x, x, x, 1.0f, 0, 1, nullptr, 0, 0,
                             0);
  EXPECT_EQ(x[0], 1);
  EXPECT_EQ(x[3], 4);
}

//===----------------------------------------------------------------------===//
// GEMMs
//===----------------------------------------------------------------------===//

TEST_F(CudaKernels, GemmEveryDtype) {
  for (const GemmVariant &v : gemmVariants()) {
    checkGemm(*this, v, 1, 33, 17, 40, 0, 0, 1);
    // Batched, A broadcast (stride 0).
    checkGemm(*this, v, 3, 20, 24, 16, 0, 16 * 24, 2);
    // Batched, B broadcast.
    checkGemm(*this, v, 4, 8, 16, 32, 8 * 32, 0, 3);
    // Odd sizes and a 2-byte-aligned batch stride.
    checkGemm(*this, v, 2, 5, 7, 9, 5 * 9 + 1, 0, 4);
    // Operands stored transposed (folded transposes): A, B, both.
    for (int64_t transpose : {DNNC_RT_TRANSPOSE_A, DNNC_RT_TRANSPOSE_B,
                              DNNC_RT_TRANSPOSE_A | DNNC_RT_TRANSPOSE_B})
      checkGemm(*this, v, 3, 20, 24, 16, 20 * 16, 16 * 24, 5, transpose);
  }
}

namespace {

/// One GEMM-with-epilogue variant: A, B, bias and C all of `elem`.
struct GemmBiasVariant {
  const char *name;
  Elem elem;
  decltype(&dnnc_rt_cuda_gemm_bias_f32) call;
  /// Tolerance relative to the magnitude of a product sum; the 16-bit
  /// variants round C once, so they add a relative rounding error.
  double tolerance, rounding;
};

} // namespace

TEST_F(CudaKernels, GemmBiasEpilogues) {
  const GemmBiasVariant variants[] = {
      {"f32", Elem::F32, dnnc_rt_cuda_gemm_bias_f32, 1e-5, 0},
      {"tf32", Elem::F32, dnnc_rt_cuda_gemm_bias_tf32, 3e-3, 0},
      {"bf16", Elem::BF16, dnnc_rt_cuda_gemm_bias_bf16, 1e-5, 1.0 / 128},
      {"f16", Elem::F16, dnnc_rt_cuda_gemm_bias_f16, 1e-5, 1.0 / 1024},
      {"f64", Elem::F64, dnnc_rt_cuda_gemm_bias_f64, 1e-12, 0}};
  struct Shape {
    int64_t batch, M, N, K;
    bool broadcastB, withBias;
  } shapes[] = {// One GEMM; a batch with a shared weight; an odd N, which
                // cuBLASLt may not fuse (then the fallback kernel runs);
                // no bias (a null pointer).
                {1, 64, 32, 48, false, true},
                {3, 16, 24, 32, true, true},
                {2, 5, 7, 9, false, true},
                {1, 32, 16, 24, false, false}};
  unsigned seed = 10;
  for (const GemmBiasVariant &v : variants)
    for (const Shape &sh : shapes)
      for (int32_t act : {DNNC_RT_ACTIVATION_NONE, DNNC_RT_ACTIVATION_RELU,
                          DNNC_RT_ACTIVATION_GELU_TANH}) {
        int64_t strideA = sh.M * sh.K,
                strideB = sh.broadcastB ? 0 : sh.K * sh.N,
                strideC = sh.M * sh.N;
        size_t aCount = size_t(sh.batch * strideA);
        size_t bCount =
            size_t(sh.broadcastB ? sh.K * sh.N : sh.batch * strideB);
        size_t cCount = size_t(sh.batch * strideC);
        std::vector<double> A = rounded(v.elem, randomValues(aCount, ++seed));
        std::vector<double> B = rounded(v.elem, randomValues(bCount, ++seed));
        std::vector<double> bias =
            rounded(v.elem, randomValues(size_t(sh.N), ++seed));
        void *dA = upload(v.elem, A), *dB = upload(v.elem, B),
             *dBias = upload(v.elem, bias);
        void *dC = upload(v.elem, std::vector<double>(cCount, 7.0));
        std::string what =
            std::string(v.name) + " batch=" + std::to_string(sh.batch) +
            " M=" + std::to_string(sh.M) + " N=" + std::to_string(sh.N) +
            " K=" + std::to_string(sh.K) +
            " activation=" + std::to_string(act) +
            (sh.withBias ? "" : " no bias");
        EXPECT_EQ(runKernels([&] {
                    v.call(sh.batch, sh.M, sh.N, sh.K, dA, strideA, dB, strideB,
                           dC, strideC, sh.withBias ? dBias : nullptr, act);
                  }),
                  "")
            << what;
        std::vector<double> expected =
            gemmReference(sh.batch, sh.M, sh.N, sh.K, A, strideA, B, strideB,
                          strideC, cCount);
        for (size_t i = 0; i < cCount; ++i)
          expected[i] = activationReference(
              expected[i] + (sh.withBias ? bias[i % size_t(sh.N)] : 0.0), act);
        double scale = double(sh.K) / 4 + 1;
        // cuBLASLt's GELU epilogue evaluates tanh its own way (fast math).
        double gelu = act == DNNC_RT_ACTIVATION_GELU_TANH ? 2e-4 : 0;
        expectNear(download(v.elem, dC, cCount), expected,
                   v.tolerance * scale + gelu, v.tolerance + v.rounding + gelu,
                   what);
      }
}

TEST_F(CudaKernels, GemmBiasErrorsNameTheKernel) {
  float *p = static_cast<float *>(upload(std::string(64, '\0')));
  std::string error = runKernels(
      [&] { dnnc_rt_cuda_gemm_bias_f32(1, 2, 2, 2, p, 0, p, 0, p, 0, p, 9); });
  EXPECT_NE(error.find("runtime kernel dnnc_rt_cuda_gemm_bias_f32(batch=1"),
            std::string::npos)
      << error;
  EXPECT_NE(error.find("unknown activation"), std::string::npos) << error;
}

TEST_F(CudaKernels, GemmErrorsNameTheKernel) {
  float *p = static_cast<float *>(upload(std::string(64, '\0')));
  std::string error = runKernels(
      [&] { dnnc_rt_cuda_gemm_f32(1, -1, 2, 2, 0, p, 0, p, 0, p, 0); });
  EXPECT_NE(error.find("runtime kernel dnnc_rt_cuda_gemm_f32(batch=1, M=-1"),
            std::string::npos)
      << error;
}

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

namespace {

/// Tolerances of the fp32-arithmetic kernels on `e` outputs.
double kernelTolerance(Elem e) {
  return e == Elem::F32 ? 2e-5 : e == Elem::BF16 ? 2e-2 : 3e-3;
}

struct KernelSet {
  const char *name;
  Elem elem;
  decltype(&dnnc_rt_cuda_attention_f32) attention;
};

std::vector<KernelSet> kernelSets() {
  return {{"f32", Elem::F32, dnnc_rt_cuda_attention_f32},
          {"bf16", Elem::BF16, dnnc_rt_cuda_attention_bf16},
          {"f16", Elem::F16, dnnc_rt_cuda_attention_f16}};
}

/// One attention case: bias strides < 0 mean no bias.
void checkAttention(CudaKernels &t, const KernelSet &k, int64_t bh,
                    int64_t seqQ, int64_t seqK, int64_t d, bool causal,
                    int64_t biasBatchStride, int64_t biasRowStride,
                    unsigned seed) {
  Elem e = k.elem;
  std::vector<double> q = rounded(e, randomValues(bh * seqQ * d, seed));
  std::vector<double> key = rounded(e, randomValues(bh * seqK * d, seed + 1));
  std::vector<double> v = rounded(e, randomValues(bh * seqK * d, seed + 2));
  bool withBias = biasBatchStride >= 0;
  size_t biasCount = withBias ? size_t((bh - 1) * biasBatchStride +
                                       (seqQ - 1) * biasRowStride + seqK)
                              : 0;
  std::vector<double> bias =
      rounded(e, randomValues(std::max<size_t>(biasCount, 1), seed + 3, -2, 2));
  double scale = 1.0 / std::sqrt(double(d));
  void *dq = t.upload(e, q), *dk = t.upload(e, key), *dv = t.upload(e, v);
  void *dout = t.upload(e, std::vector<double>(bh * seqQ * d, 7.0));
  void *dbias = withBias ? t.upload(e, bias) : nullptr;
  std::string what =
      std::string(k.name) + " attention bh=" + std::to_string(bh) +
      " seqQ=" + std::to_string(seqQ) + " seqK=" + std::to_string(seqK) +
      " d=" + std::to_string(d) + " causal=" + std::to_string(causal) +
      " bias=" + std::to_string(biasBatchStride) + "/" +
      std::to_string(biasRowStride);
  EXPECT_EQ(t.runKernels([&] {
    // One head per batch entry: the bias is read at bh * biasBatchStride +
    // i * biasRowStride + j.
    k.attention(bh, seqQ, seqK, d, dq, dk, dv, dout, float(scale),
                causal ? 1 : 0, 1, dbias, withBias ? biasBatchStride : 0, 0,
                withBias ? biasRowStride : 0);
  }),
            "")
      << what;
  std::vector<double> expected = attentionReference(
      bh, 1, seqQ, seqK, d, q, key, v, scale, causal,
      withBias ? bias.data() : nullptr, biasBatchStride, 0, biasRowStride);
  double tol = kernelTolerance(e) * 2;
  expectNear(t.download(e, dout, bh * seqQ * d), expected, tol, tol, what);
}

} // namespace

TEST_F(CudaKernels, AttentionMatchesTheReference) {
  for (const KernelSet &k : kernelSets()) {
    // Several query blocks and key tiles, partial last ones.
    checkAttention(*this, k, 3, 37, 45, 64, false, -1, -1, 10);
    // Causal, full bias [bh, seqQ, seqK], the largest head dim.
    checkAttention(*this, k, 2, 40, 40, 128, true, 40 * 40, 40, 11);
    // Causal with more keys than queries, a bias broadcast over rows.
    checkAttention(*this, k, 2, 9, 70, 80, true, 70, 0, 12);
    // A bias shared by every head, a head dim below a warp.
    checkAttention(*this, k, 4, 33, 17, 16, false, 0, 17, 13);
    // One query, one key.
    checkAttention(*this, k, 1, 1, 1, 8, false, -1, -1, 14);
  }
}

TEST_F(CudaKernels, AttentionRejectsLargeHeadDim) {
  void *p = upload(std::string(4 * 129, '\0'));
  std::string error = runKernels([&] {
    dnnc_rt_cuda_attention_f32(1, 1, 1, 129, p, p, p, p, 1.0f, 0, 1, nullptr, 0,
                               0, 0);
  });
  EXPECT_NE(error.find("dnnc_rt_cuda_attention_f32(batchHeads=1"),
            std::string::npos)
      << error;
  EXPECT_NE(error.find("head dimension above 128"), std::string::npos) << error;
}

//===----------------------------------------------------------------------===//
// CUDA graphs of repeated runs
//===----------------------------------------------------------------------===//

TEST(CudaGraphs, ReplaysSeeNewInputs) {
  // The graph test function (Inputs/cuda_trampoline.c) computes out = x @ w.
  // Runs 1 (eager), 2 (captured, then launched) and 3..4 (replays) on the
  // same buffers with a new x each time: every output must be x @ w for that
  // run's x; the same without graphs.
  const std::vector<float> w = {1, 2, 3, 4, 0, -1, 5, 2, 3, 3, -2, 1};
  for (const char *graphs : {"1", "0"}) {
    plan::Plan p =
        makeAddMatmulPlan(readBytes(testCodePath("cuda_trampoline")), w);
    p.model.target = "cuda";
    p.ranks[0].functions[0].symbol = "dnnc_test_graph_step";
    ::setenv("DNNC_CUDA_GRAPHS", graphs, 1);
    std::string error;
    rt::WorldInfo world;
    std::unique_ptr<rt::Backend> backend =
        rt::createBackend("cuda", world, error);
    if (!backend) {
      ::unsetenv("DNNC_CUDA_GRAPHS");
      GTEST_SKIP() << "no CUDA device";
    }
    std::unique_ptr<rt::Session> session =
        rt::Session::create(p, 0, *backend, error);
    ASSERT_NE(session, nullptr) << error;
    std::vector<double> wd(w.begin(), w.end());
    for (int run = 0; run < 4; ++run) {
      std::vector<float> x = {1, 2, 3, -1, 0.5f, 2};
      for (float &v : x)
        v += float(run);
      std::vector<rt::HostTensor> inputs = {
          floatTensor("x", {2, 3}, x),
          floatTensor("y", {2, 3}, {0, 0, 0, 0, 0, 0})};
      ASSERT_TRUE(session->setInputs(inputs, error)) << error;
      ASSERT_TRUE(session->run(error)) << error;
      std::vector<rt::HostTensor> outputs;
      ASSERT_TRUE(session->getModelOutputs(outputs, error)) << error;
      std::vector<float> out = floatValues(outputs[0]);
      expectNear(std::vector<double>(out.begin(), out.end()),
                 gemmReference(1, 2, 4, 3,
                               std::vector<double>(x.begin(), x.end()), 0, wd,
                               0, 0, 8),
                 1e-4, 1e-5,
                 std::string("DNNC_CUDA_GRAPHS=") + graphs + " run " +
                     std::to_string(run + 1));
    }
    ::unsetenv("DNNC_CUDA_GRAPHS");
  }
}
