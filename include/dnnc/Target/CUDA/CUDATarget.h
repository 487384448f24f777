//===- CUDATarget.h - the cuda target of the device phase ----*- C++ -*-===//
//
// Lowers a per-rank `dnn` module for the runtime's CUDA backend: GEMMs
// become cuBLASLt calls of the runtime, collectives NCCL calls of the
// runtime, and every other linalg op one generated CUDA kernel; the module
// is then translated to CUDA C++ (host code that enqueues the kernels on the
// backend's stream, plus the kernels) and built by nvcc into the shared
// object the runtime loads (docs/cuda-target.md).
//
//===----------------------------------------------------------------------===//

#ifndef DNNC_TARGET_CUDA_CUDATARGET_H
#define DNNC_TARGET_CUDA_CUDATARGET_H

#include "dnnc/Dialect/Dnn/IR/Dnn.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/Support/raw_ostream.h"

#include <string>

namespace dnnc {

#define GEN_PASS_DECL
#include "dnnc/Target/CUDA/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "dnnc/Target/CUDA/Passes.h.inc"

/// The GPU architectures a cuda plan holds code for when none are given:
/// Hopper (H100/H200) first, and Ampere (A100).
constexpr llvm::StringLiteral kCUDADefaultArchs = "sm_90,sm_80";

/// Adds the cuda device pipeline: dnn (weights outlined) -> linalg on
/// tensors, collectives as `dnnc_rt_cuda_*` calls -> fused -> bufferized,
/// results as out-params -> GEMMs as `dnnc_rt_cuda_gemm_*` calls. The result
/// is what `translateToCUDA` reads: linalg ops and runtime calls on memrefs.
/// `precision` (`dnnc --precision`) is applied first, as on cpu.
void buildCUDADevicePipeline(mlir::OpPassManager &pm,
                             dnn::Precision precision = dnn::Precision::FP32);

/// Registers the cuda pipeline as `dnnc-cuda-device` with the pass registry.
void registerCUDAPipelines();

/// How the CUDA C++ source is generated.
struct CUDASourceOptions {
  /// Host emulation: the same kernels and host code as plain C++ for the
  /// CPU (kernels run as loops over their blocks, one thread per block; the
  /// runtime calls go to the cpu kernels `dnnc_rt_*`). A test aid: it runs
  /// the generated code on the cpu backend, where it is checked against the
  /// cpu reference without a GPU.
  bool hostEmulation = false;
};

/// Translates a module that went through `buildCUDADevicePipeline` into one
/// CUDA C++ translation unit defining `dnnc_entry(void **)` (and
/// `dnnc_entry_stage_K` for pipelined plans). Fails with an error on the op
/// it cannot translate.
mlir::LogicalResult translateToCUDA(mlir::ModuleOp module,
                                    llvm::raw_ostream &os,
                                    const CUDASourceOptions &options = {});

/// Registers the translations `mlir-to-cuda` (translateToCUDA) and
/// `mlir-to-cuda-emulation` (its host emulation) for dnnc-translate.
void registerCUDATranslations();

/// How the CUDA C++ source is built.
struct CUDABuildOptions {
  /// Comma-separated GPU architectures (`sm_90,sm_80`): one cubin each in
  /// the shared object's fat binary.
  std::string archs = kCUDADefaultArchs.str();
  /// Build the host emulation with the host C++ compiler instead (see
  /// CUDASourceOptions::hostEmulation).
  bool hostEmulation = false;
};

/// Translates `module` (see translateToCUDA) and builds it into the bytes of
/// an ELF shared object: with nvcc ($DNNC_NVCC, PATH, /usr/local/cuda/bin)
/// for the GPU, or with the host C++ compiler ($DNNC_CXX, else c++) for host
/// emulation. Returns false and sets `error` on failure.
bool compileCUDAToSharedObject(mlir::ModuleOp module,
                               const CUDABuildOptions &options,
                               std::string &object, std::string &error);

} // namespace dnnc

#endif // DNNC_TARGET_CUDA_CUDATARGET_H
