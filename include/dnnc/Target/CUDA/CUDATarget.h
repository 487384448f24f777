//===- CUDATarget.h - the cuda target of the device phase ----*- C++ -*-===//
//
// Lowers a single-rank `dnn` module for the CUDA backend: elementwise work
// and reductions become GPU kernels serialized to cubins and embedded in the
// module (gpu.binary), GEMMs become calls to the runtime's cuBLASLt kernels,
// and the host code that launches them is compiled into the shared object
// that the runtime loads (docs/cuda-target.md).
//
//===----------------------------------------------------------------------===//

#ifndef DNNC_TARGET_CUDA_CUDATARGET_H
#define DNNC_TARGET_CUDA_CUDATARGET_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassManager.h"

#include <string>

namespace dnnc {

/// The GPU the cubins are built for (Hopper, H100/H200) and the PTX ISA
/// version ptxas is given.
constexpr llvm::StringLiteral kCUDADefaultChip = "sm_90";
constexpr llvm::StringLiteral kCUDADefaultFeatures = "+ptx80";

/// Adds the cuda device pipeline: dnn (weights outlined) -> linalg on tensors
/// -> fused -> bufferized, results as out-params -> cuBLASLt calls for GEMMs
/// and parallel loops mapped to gpu.launch for the rest -> outlined kernels
/// lowered to NVVM and serialized to `chip` cubins -> host code in the LLVM
/// dialect (bare pointers) with the `dnnc_entry` wrapper.
void buildCUDADevicePipeline(mlir::OpPassManager &pm,
                             llvm::StringRef chip = kCUDADefaultChip,
                             llvm::StringRef features = kCUDADefaultFeatures);

/// Registers the dialects, NVVM target attribute and LLVM IR translations
/// that the cuda pipeline and its code generation need.
void registerCUDATargetDialects(mlir::DialectRegistry &registry);

/// Compiles the host side of a cuda device module (LLVM dialect with
/// gpu.binary and gpu.launch_func) into the bytes of an ELF shared object for
/// the host CPU `cpu`. Kernel launches become calls of the `mgpu*` functions
/// that the runtime's cuda backend provides. Returns false and sets `error`
/// on failure.
bool compileCUDAToSharedObject(mlir::ModuleOp module, llvm::StringRef cpu,
                               std::string &object, std::string &error);

/// Registers the cuda pipeline as `dnnc-cuda-device` with the pass registry.
void registerCUDAPipelines();

} // namespace dnnc

#endif // DNNC_TARGET_CUDA_CUDATARGET_H
