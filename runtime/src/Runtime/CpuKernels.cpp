//===- CpuKernels.cpp - Runtime kernels for CPU rank code ------*- C++ -*-===//
//
// The C ABI kernels of Kernels.h, on CBLAS (OpenBLAS). dnnc-run exports them
// (-rdynamic) to the rank code it loads.
//
//===----------------------------------------------------------------------===//

#include "KernelErrors.h"
#include "dnnc/Runtime/CpuBackend.h"
#include "dnnc/Runtime/Kernels.h"

#include <cblas.h>
#include <climits>
#include <cstring>
#include <mutex>

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
                          int64_t K, const void *A, int64_t strideA,
                          const void *B, int64_t strideB, const void *C,
                          int64_t strideC) {
  auto text = [&]() {
    return std::string(name) + "(batch=" + std::to_string(batch) +
           ", M=" + std::to_string(M) + ", N=" + std::to_string(N) +
           ", K=" + std::to_string(K) + ", strideA=" + std::to_string(strideA) +
           ", strideB=" + std::to_string(strideB) +
           ", strideC=" + std::to_string(strideC) + ")";
  };
  if (batch < 0 || M < 0 || N < 0 || K < 0 || strideA < 0 || strideB < 0 ||
      strideC < 0) {
    setKernelError("runtime kernel " + text() + ": negative argument");
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

extern "C" void dnnc_rt_gemm_f32(int64_t batch, int64_t M, int64_t N, int64_t K,
                                 const float *A, int64_t strideA,
                                 const float *B, int64_t strideB, float *C,
                                 int64_t strideC) {
  if (!checkGemmArgs("dnnc_rt_gemm_f32", batch, M, N, K, A, strideA, B, strideB,
                     C, strideC) ||
      batch == 0 || M == 0 || N == 0)
    return;
  for (int64_t b = 0; b < batch; ++b) {
    float *c = C + b * strideC;
    if (K == 0) {
      std::memset(c, 0, sizeof(float) * M * N);
      continue;
    }
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(M), int(N),
                int(K), 1.0f, A + b * strideA, int(K), B + b * strideB, int(N),
                0.0f, c, int(N));
  }
}

extern "C" void dnnc_rt_gemm_f64(int64_t batch, int64_t M, int64_t N, int64_t K,
                                 const double *A, int64_t strideA,
                                 const double *B, int64_t strideB, double *C,
                                 int64_t strideC) {
  if (!checkGemmArgs("dnnc_rt_gemm_f64", batch, M, N, K, A, strideA, B, strideB,
                     C, strideC) ||
      batch == 0 || M == 0 || N == 0)
    return;
  for (int64_t b = 0; b < batch; ++b) {
    double *c = C + b * strideC;
    if (K == 0) {
      std::memset(c, 0, sizeof(double) * M * N);
      continue;
    }
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(M), int(N),
                int(K), 1.0, A + b * strideA, int(K), B + b * strideB, int(N),
                0.0, c, int(N));
  }
}
