//===- CudaGemm.cpp - GEMMs and attention of the `cuda` backend -*- C++ -*-===//
//
// The GEMM kernels of the cuda backend on cuBLASLt (loaded with dlopen() on
// the first GEMM, one plan per GEMM shape, the bias / activation epilogue
// fused where cuBLASLt has an algorithm for it) and the fused attention
// kernels (CudaKernels.cu).
//
//===----------------------------------------------------------------------===//

#include "CudaKernels.h"
#include "CudaState.h"
#include "dnnc/Runtime/Kernels.h"

#include <dlfcn.h>

#include <mutex>
#include <type_traits>

namespace dnnc::rt {

//===----------------------------------------------------------------------===//
// cuBLASLt
//===----------------------------------------------------------------------===//

/// cuBLASLt, loaded with dlopen on the first GEMM of the process: linking it
/// would cost every dnnc-run start (cpu plans included) ~0.1 s.
struct CublasLt {
  decltype(&cublasLtCreate) create = nullptr;
  decltype(&cublasLtDestroy) destroy = nullptr;
  decltype(&cublasLtMatmulDescCreate) descCreate = nullptr;
  decltype(&cublasLtMatmulDescDestroy) descDestroy = nullptr;
  decltype(&cublasLtMatmulDescSetAttribute) descSet = nullptr;
  decltype(&cublasLtMatrixLayoutCreate) layoutCreate = nullptr;
  decltype(&cublasLtMatrixLayoutDestroy) layoutDestroy = nullptr;
  decltype(&cublasLtMatrixLayoutSetAttribute) layoutSet = nullptr;
  decltype(&cublasLtMatmulPreferenceCreate) preferenceCreate = nullptr;
  decltype(&cublasLtMatmulPreferenceDestroy) preferenceDestroy = nullptr;
  decltype(&cublasLtMatmulPreferenceSetAttribute) preferenceSet = nullptr;
  decltype(&cublasLtMatmulAlgoGetHeuristic) heuristic = nullptr;
  decltype(&cublasLtMatmul) matmul = nullptr;
  decltype(&cublasLtGetStatusString) statusString = nullptr;
  /// Why loading failed ("" once loaded).
  std::string error;

  /// The process's cuBLASLt; null (with `error`) when it cannot be loaded.
  static CublasLt *get(std::string &error) {
    static CublasLt lt;
    static std::once_flag once;
    std::call_once(once, [] { lt.load(); });
    if (!lt.error.empty()) {
      error = lt.error;
      return nullptr;
    }
    return &lt;
  }

private:
  void load() {
    void *library = nullptr;
    for (const char *name :
         {"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so"})
      if ((library = ::dlopen(name, RTLD_NOW | RTLD_LOCAL)))
        break;
    if (!library) {
      const char *why = ::dlerror();
      error = std::string("cannot load cuBLASLt (libcublasLt.so.13): ") +
              (why ? why : "not found");
      return;
    }
    bool ok = true;
    auto bind = [&](auto &fn, const char *symbol) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(
          ::dlsym(library, symbol));
      if (!fn && ok) {
        ok = false;
        error = std::string("cuBLASLt has no ") + symbol;
      }
    };
    bind(create, "cublasLtCreate");
    bind(destroy, "cublasLtDestroy");
    bind(descCreate, "cublasLtMatmulDescCreate");
    bind(descDestroy, "cublasLtMatmulDescDestroy");
    bind(descSet, "cublasLtMatmulDescSetAttribute");
    bind(layoutCreate, "cublasLtMatrixLayoutCreate");
    bind(layoutDestroy, "cublasLtMatrixLayoutDestroy");
    bind(layoutSet, "cublasLtMatrixLayoutSetAttribute");
    bind(preferenceCreate, "cublasLtMatmulPreferenceCreate");
    bind(preferenceDestroy, "cublasLtMatmulPreferenceDestroy");
    bind(preferenceSet, "cublasLtMatmulPreferenceSetAttribute");
    bind(heuristic, "cublasLtMatmulAlgoGetHeuristic");
    bind(matmul, "cublasLtMatmul");
    bind(statusString, "cublasLtGetStatusString");
  }
};

/// The workspace cuBLASLt may use per GEMM.
constexpr size_t kCublasLtWorkspaceBytes = size_t(32) << 20;

/// Destroys the cuBLASLt plans and handle of `s` and frees the workspace.
void releaseCublasLt(CudaBackend::State &s) {
  std::string ignored;
  if (CublasLt *lt = s.lt ? CublasLt::get(ignored) : nullptr) {
    for (auto &entry : s.gemmPlans) {
      GemmPlan &p = entry.second;
      for (cublasLtMatrixLayout_t l : {p.a, p.b, p.c})
        if (l)
          lt->layoutDestroy(l);
      if (p.desc)
        lt->descDestroy(p.desc);
    }
    lt->destroy(s.lt);
  }
  if (s.ltWorkspace)
    cudaFree(s.ltWorkspace);
}

//===----------------------------------------------------------------------===//
// GEMMs (cuBLASLt) and attention
//===----------------------------------------------------------------------===//

namespace {

/// The cuBLASLt types of one GEMM kernel.
struct GemmTypes {
  cudaDataType_t ab, c, scale;
  cublasComputeType_t compute;
  size_t abBytes, cBytes;
};

/// The element type of C (and of the bias) for the epilogue kernel.
ElementType getElementType(cudaDataType_t type) {
  switch (type) {
  case CUDA_R_64F:
    return ElementType::F64;
  case CUDA_R_16BF:
    return ElementType::BF16;
  case CUDA_R_16F:
    return ElementType::F16;
  default:
    return ElementType::F32;
  }
}

/// A GEMM's epilogue: none (a plain GEMM), or C = act(C [+ bias]).
struct GemmEpilogue {
  bool enabled = false;
  /// Null for no bias.
  const void *bias = nullptr;
  int32_t activation = DNNC_RT_ACTIVATION_NONE;
};

/// The cuBLASLt epilogue adding the bias (if any) and applying the
/// activation.
cublasLtEpilogue_t getEpilogue(const GemmEpilogue &e) {
  switch (e.activation) {
  case DNNC_RT_ACTIVATION_RELU:
    return e.bias ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_RELU;
  case DNNC_RT_ACTIVATION_GELU_TANH:
    return e.bias ? CUBLASLT_EPILOGUE_GELU_BIAS : CUBLASLT_EPILOGUE_GELU;
  default:
    return e.bias ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT;
  }
}

/// A cuBLASLt status as text.
std::string ltFailure(CublasLt *lt, const char *what, cublasStatus_t rc) {
  return std::string(what) + " failed: " + lt->statusString(rc);
}

/// C (batch x M x N, row-major) = A (M x K) B (K x N) per batch matrix, on
/// the stream, through cuBLASLt. Row-major C = A B is column-major
/// C^T = B^T A^T: cuBLASLt multiplies B (N x K, leading dim N) by A (K x M,
/// leading dim K) into C (N x M, leading dim N), no transposes. An operand
/// stored transposed (`transpose`, DNNC_RT_TRANSPOSE_A / _B: A as K x M,
/// B as N x K row-major) is the column-major M x K (leading dim M) or K x N
/// (leading dim K) matrix, which cuBLASLt transposes (its TRANSB for our A,
/// TRANSA for our B). The bias is
/// then a vector over cuBLASLt's rows (our columns), as its epilogues want.
/// With an epilogue, C = act(A B [+ bias]): fused into the GEMM (cuBLASLt's
/// [RELU_|GELU_]BIAS, RELU or GELU epilogues) where cuBLASLt has an
/// algorithm for it, else the GEMM then launchBiasActivation.
void gemm(const char *name, const GemmTypes &t, int64_t batch, int64_t M,
          int64_t N, int64_t K, int64_t transpose, const void *A,
          int64_t strideA, const void *B, int64_t strideB, void *C,
          int64_t strideC, GemmEpilogue epilogue = {}) {
  CudaCall call(name, [&]() {
    return args({{"batch", batch},
                 {"M", M},
                 {"N", N},
                 {"K", K},
                 {"transpose", transpose},
                 {"strideA", strideA},
                 {"strideB", strideB},
                 {"strideC", strideC},
                 {"activation", epilogue.activation}});
  });
  if (call.skipped())
    return;
  if (batch < 0 || M < 0 || N < 0 || K < 0 || strideA < 0 || strideB < 0 ||
      strideC < 0) {
    call.fail("negative size or stride");
    return;
  }
  if (transpose & ~int64_t(DNNC_RT_TRANSPOSE_A | DNNC_RT_TRANSPOSE_B)) {
    call.fail("unknown transpose bits");
    return;
  }
  bool transA = transpose & DNNC_RT_TRANSPOSE_A,
       transB = transpose & DNNC_RT_TRANSPOSE_B;
  if (epilogue.activation < DNNC_RT_ACTIVATION_NONE ||
      epilogue.activation > DNNC_RT_ACTIVATION_GELU_TANH) {
    call.fail("unknown activation");
    return;
  }
  if (batch == 0 || M == 0 || N == 0)
    return;
  if (!C || (K > 0 && (!A || !B))) {
    call.fail("null buffer");
    return;
  }
  CudaBackend::State &s = *call.state;
  // The epilogue as its own kernel, after the GEMM wrote C.
  auto separateEpilogue = [&]() {
    if (epilogue.enabled &&
        (epilogue.bias || epilogue.activation != DNNC_RT_ACTIVATION_NONE))
      cudaOk(call, "the bias/activation kernel",
             launchBiasActivation(getElementType(t.c), C, batch, M, N, strideC,
                                  epilogue.bias, epilogue.activation,
                                  s.stream));
  };
  if (K == 0) { // C = 0
    for (int64_t b = 0; b < batch; ++b)
      if (!cudaOk(call, "cudaMemsetAsync",
                  cudaMemsetAsync(static_cast<char *>(C) +
                                      b * strideC * int64_t(t.cBytes),
                                  0, size_t(M * N) * t.cBytes, s.stream)))
        return;
    separateEpilogue();
    return;
  }
  std::string error;
  CublasLt *lt = CublasLt::get(error);
  if (!lt) {
    call.fail(error);
    return;
  }
  if (!s.lt) {
    cublasStatus_t rc = lt->create(&s.lt);
    if (rc != CUBLAS_STATUS_SUCCESS) {
      s.lt = nullptr;
      call.fail(ltFailure(lt, "cublasLtCreate", rc));
      return;
    }
    if (!cudaOk(call, "cudaMalloc (cuBLASLt workspace)",
                cudaMalloc(&s.ltWorkspace, kCublasLtWorkspaceBytes)))
      return;
  }
  // The alignment (up to 256 bytes) every batch matrix of an operand has:
  // cuBLASLt's algorithms may assume it, so it is part of the plan.
  auto alignment = [&](const void *ptr, int64_t stride, size_t elem) {
    uint64_t bits = uint64_t(reinterpret_cast<uintptr_t>(ptr)) | 256;
    if (batch > 1 && stride != 0)
      bits |= uint64_t(stride) * elem;
    return uint32_t(bits & (~bits + 1)); // the lowest set bit
  };
  uint32_t alignA = alignment(A, strideA, t.abBytes),
           alignB = alignment(B, strideB, t.abBytes),
           alignC = alignment(C, strideC, t.cBytes);
  std::vector<int64_t> key = {int64_t(t.ab),
                              int64_t(t.c),
                              int64_t(t.compute),
                              batch,
                              M,
                              N,
                              K,
                              strideA,
                              strideB,
                              strideC,
                              transpose,
                              alignA,
                              alignB,
                              alignC,
                              epilogue.enabled ? epilogue.activation : -1,
                              epilogue.bias ? 1 : 0};
  auto found = s.gemmPlans.find(key);
  if (found == s.gemmPlans.end()) {
    GemmPlan p;
    auto check = [&](const char *what, cublasStatus_t rc) {
      return rc == CUBLAS_STATUS_SUCCESS || call.fail(ltFailure(lt, what, rc));
    };
    auto layout = [&](cublasLtMatrixLayout_t &l, cudaDataType_t type,
                      int64_t rows, int64_t cols, int64_t stride) {
      if (!check(
              "cublasLtMatrixLayoutCreate",
              lt->layoutCreate(&l, type, uint64_t(rows), uint64_t(cols), rows)))
        return false;
      int32_t count = int32_t(batch);
      return check("cublasLtMatrixLayoutSetAttribute",
                   lt->layoutSet(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count,
                                 sizeof(count))) &&
             check("cublasLtMatrixLayoutSetAttribute",
                   lt->layoutSet(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                 &stride, sizeof(stride)));
    };
    cublasLtMatmulPreference_t preference = nullptr;
    // cuBLASLt's "A" is our B and its "B" our A (see above).
    auto setAlignments = [&]() {
      std::pair<cublasLtMatmulPreferenceAttributes_t, uint32_t *> entries[] = {
          {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &alignB},
          {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &alignA},
          {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &alignC},
          {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &alignC}};
      for (auto [attribute, value] : entries)
        if (!check("cublasLtMatmulPreferenceSetAttribute",
                   lt->preferenceSet(preference, attribute, value,
                                     sizeof(*value))))
          return false;
      return true;
    };
    // The epilogue attributes of the descriptor (a bias pointer is set for
    // the heuristic, and again at every call).
    auto setEpilogue = [&](cublasLtEpilogue_t value) {
      return check("cublasLtMatmulDescSetAttribute",
                   lt->descSet(p.desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &value,
                               sizeof(value))) &&
             (value == CUBLASLT_EPILOGUE_DEFAULT || !epilogue.bias ||
              check("cublasLtMatmulDescSetAttribute",
                    lt->descSet(p.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER,
                                &epilogue.bias, sizeof(epilogue.bias))));
    };
    // cuBLASLt's op on its A (our B) or B (our A).
    auto setTranspose = [&](cublasLtMatmulDescAttributes_t attribute,
                            bool transposed) {
      cublasOperation_t op = transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
      return check("cublasLtMatmulDescSetAttribute",
                   lt->descSet(p.desc, attribute, &op, sizeof(op)));
    };
    cublasLtMatmulHeuristicResult_t result{};
    int results = 0;
    size_t workspace = kCublasLtWorkspaceBytes;
    bool ok = check("cublasLtMatmulDescCreate",
                    lt->descCreate(&p.desc, t.compute, t.scale)) &&
              layout(p.a, t.ab, transB ? K : N, transB ? N : K, strideB) &&
              layout(p.b, t.ab, transA ? M : K, transA ? K : M, strideA) &&
              setTranspose(CUBLASLT_MATMUL_DESC_TRANSA, transB) &&
              setTranspose(CUBLASLT_MATMUL_DESC_TRANSB, transA) &&
              layout(p.c, t.c, N, M, strideC) &&
              check("cublasLtMatmulPreferenceCreate",
                    lt->preferenceCreate(&preference)) &&
              check("cublasLtMatmulPreferenceSetAttribute",
                    lt->preferenceSet(preference,
                                      CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                      &workspace, sizeof(workspace))) &&
              setAlignments();
    // With the epilogue fused if cuBLASLt has an algorithm for it (an
    // unsupported combination is "not supported" or no result), else
    // without it.
    if (ok && epilogue.enabled) {
      results = 0;
      if (setEpilogue(getEpilogue(epilogue)) &&
          lt->heuristic(s.lt, p.desc, p.a, p.b, p.c, p.c, preference, 1,
                        &result, &results) != CUBLAS_STATUS_SUCCESS)
        results = 0;
      p.separateEpilogue = results == 0;
      if (p.separateEpilogue)
        ok = setEpilogue(CUBLASLT_EPILOGUE_DEFAULT);
    }
    if (ok && results == 0)
      ok = check("cublasLtMatmulAlgoGetHeuristic",
                 lt->heuristic(s.lt, p.desc, p.a, p.b, p.c, p.c, preference, 1,
                               &result, &results));
    if (preference)
      lt->preferenceDestroy(preference);
    if (ok && results == 0)
      ok = call.fail("cuBLASLt has no algorithm for this GEMM");
    if (!ok) {
      for (cublasLtMatrixLayout_t l : {p.a, p.b, p.c})
        if (l)
          lt->layoutDestroy(l);
      if (p.desc)
        lt->descDestroy(p.desc);
      return;
    }
    p.algo = result.algo;
    s.gemmPlans.emplace(key, p);
  }
  const GemmPlan &p = s.gemmPlans.at(key);
  bool fused = epilogue.enabled && !p.separateEpilogue;
  if (fused && epilogue.bias) {
    cublasStatus_t rc = lt->descSet(p.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER,
                                    &epilogue.bias, sizeof(epilogue.bias));
    if (rc != CUBLAS_STATUS_SUCCESS) {
      call.fail(ltFailure(lt, "cublasLtMatmulDescSetAttribute", rc));
      return;
    }
  }
  float alpha32 = 1.0f, beta32 = 0.0f;
  double alpha64 = 1.0, beta64 = 0.0;
  bool wide = t.scale == CUDA_R_64F;
  cublasStatus_t rc = lt->matmul(
      s.lt, p.desc, wide ? static_cast<const void *>(&alpha64) : &alpha32, B,
      p.a, A, p.b, wide ? static_cast<const void *>(&beta64) : &beta32, C, p.c,
      C, p.c, &p.algo, s.ltWorkspace, kCublasLtWorkspaceBytes, s.stream);
  if (rc != CUBLAS_STATUS_SUCCESS) {
    call.fail(ltFailure(lt, "cublasLtMatmul", rc));
    return;
  }
  if (!fused)
    separateEpilogue();
}

/// Fused attention on the stream (CudaKernels.cu).
void attention(const char *name, ElementType type, const AttentionArgs &a) {
  CudaCall call(name, [&]() {
    return args({{"batchHeads", a.batchHeads},
                 {"seqQ", a.seqQ},
                 {"seqK", a.seqK},
                 {"headDim", a.headDim},
                 {"heads", a.heads},
                 {"biasStrideB", a.biasStrideB},
                 {"biasStrideH", a.biasStrideH},
                 {"biasStrideQ", a.biasStrideQ}});
  });
  if (call.skipped())
    return;
  if (a.batchHeads < 0 || a.seqQ < 0 || a.seqK < 0 || a.headDim < 0 ||
      a.heads <= 0 || a.batchHeads % a.heads != 0) {
    call.fail("invalid sizes");
    return;
  }
  if (a.headDim > maxAttentionHeadDim()) {
    call.fail("head dimension above " + std::to_string(maxAttentionHeadDim()));
    return;
  }
  if (a.batchHeads * a.seqQ * a.headDim == 0)
    return;
  if (!a.q || !a.k || !a.v || !a.out) {
    call.fail("null buffer");
    return;
  }
  cudaOk(call, "the attention kernel",
         launchAttention(type, a, call.state->stream));
}

} // namespace

/// Defines `dnnc_rt_cuda_gemm_<SUFFIX>` with A/B of type AB, C of type C,
/// the cuBLASLt compute and scale types, and the byte sizes of AB and C.
#define DNNC_CUDA_GEMM(SUFFIX, AB, C, SCALE, COMPUTE, AB_BYTES, C_BYTES)       \
  extern "C" void dnnc_rt_cuda_gemm_##SUFFIX(                                  \
      int64_t batch, int64_t M, int64_t N, int64_t K, int64_t transpose,       \
      const void *A, int64_t strideA, const void *B, int64_t strideB,          \
      void *C_, int64_t strideC) {                                             \
    gemm("dnnc_rt_cuda_gemm_" #SUFFIX,                                         \
         {AB, C, SCALE, COMPUTE, AB_BYTES, C_BYTES}, batch, M, N, K,           \
         transpose, A, strideA, B, strideB, C_, strideC);                      \
  }

DNNC_CUDA_GEMM(f32, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F, 4,
               4)
DNNC_CUDA_GEMM(tf32, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F,
               CUBLAS_COMPUTE_32F_FAST_TF32, 4, 4)
DNNC_CUDA_GEMM(bf16, CUDA_R_16BF, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F, 2,
               4)
DNNC_CUDA_GEMM(f16, CUDA_R_16F, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F, 2,
               4)
DNNC_CUDA_GEMM(f64, CUDA_R_64F, CUDA_R_64F, CUDA_R_64F, CUBLAS_COMPUTE_64F, 8,
               8)

/// Defines `dnnc_rt_cuda_gemm_bias_<SUFFIX>`: the GEMM with a bias /
/// activation epilogue, C and bias of type C.
#define DNNC_CUDA_GEMM_BIAS(SUFFIX, AB, C, SCALE, COMPUTE, AB_BYTES, C_BYTES)  \
  extern "C" void dnnc_rt_cuda_gemm_bias_##SUFFIX(                             \
      int64_t batch, int64_t M, int64_t N, int64_t K, const void *A,           \
      int64_t strideA, const void *B, int64_t strideB, void *C_,               \
      int64_t strideC, const void *bias, int32_t activation) {                 \
    gemm("dnnc_rt_cuda_gemm_bias_" #SUFFIX,                                    \
         {AB, C, SCALE, COMPUTE, AB_BYTES, C_BYTES}, batch, M, N, K,           \
         /*transpose=*/0, A, strideA, B, strideB, C_, strideC,                 \
         {true, bias, activation});                                            \
  }

DNNC_CUDA_GEMM_BIAS(f32, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F,
                    4, 4)
DNNC_CUDA_GEMM_BIAS(tf32, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F,
                    CUBLAS_COMPUTE_32F_FAST_TF32, 4, 4)
DNNC_CUDA_GEMM_BIAS(bf16, CUDA_R_16BF, CUDA_R_16BF, CUDA_R_32F,
                    CUBLAS_COMPUTE_32F, 2, 2)
DNNC_CUDA_GEMM_BIAS(f16, CUDA_R_16F, CUDA_R_16F, CUDA_R_32F, CUBLAS_COMPUTE_32F,
                    2, 2)
DNNC_CUDA_GEMM_BIAS(f64, CUDA_R_64F, CUDA_R_64F, CUDA_R_64F, CUBLAS_COMPUTE_64F,
                    8, 8)

#define DNNC_CUDA_ATTENTION(SUFFIX, TYPE)                                      \
  extern "C" void dnnc_rt_cuda_attention_##SUFFIX(                             \
      int64_t batchHeads, int64_t seqQ, int64_t seqK, int64_t headDim,         \
      const void *q, const void *k, const void *v, void *out, float scale,     \
      int32_t causal, int64_t heads, const void *bias, int64_t biasStrideB,    \
      int64_t biasStrideH, int64_t biasStrideQ) {                              \
    attention("dnnc_rt_cuda_attention_" #SUFFIX, ElementType::TYPE,            \
              {batchHeads, seqQ, seqK, headDim, q, k, v, out, scale, causal,   \
               heads, bias, biasStrideB, biasStrideH, biasStrideQ});           \
  }

DNNC_CUDA_ATTENTION(f32, F32)
DNNC_CUDA_ATTENTION(bf16, BF16)
DNNC_CUDA_ATTENTION(f16, F16)

} // namespace dnnc::rt
