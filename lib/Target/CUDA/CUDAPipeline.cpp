//===- CUDAPipeline.cpp - cuda device pipeline --------------*- C++ -*-===//
//
// The pass pipeline that lowers a single-rank dnn module (weights already
// outlined) for the CUDA backend: GPU kernels serialized to cubins, GEMMs as
// runtime cuBLASLt calls, host code in the LLVM dialect.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Conversion/Passes.h"
#include "dnnc/Dialect/Dist/Transforms/Passes.h"
#include "dnnc/Target/CPU/CPUTarget.h"
#include "dnnc/Target/CUDA/CUDATarget.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void dnnc::buildCUDADevicePipeline(OpPassManager &pm, StringRef chip,
                                   StringRef features) {
  // Tensor level: the cpu target's, without its collectives (the cuda
  // collectives, dnnc_rt_cuda_*, are not lowered yet).
  pm.addPass(dist::createOutlineStagesPass());
  pm.addPass(createConvertDnnToLinalg());
  pm.addPass(createConvToGemmPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createFuseElementwisePass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createApproximateMathPass());
  pm.addPass(createCSEPass());
  pm.addPass(createUntieMatmulInitsPass());

  // Buffers, as on cpu: results written into caller-provided (device)
  // buffers.
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  bufferization::BufferResultsToOutParamsPassOptions outParams;
  outParams.hoistStaticAllocs = true;
  outParams.modifyPublicFunctions = true;
  pm.addPass(bufferization::createBufferResultsToOutParamsPass(outParams));
  pm.addNestedPass<func::FuncOp>(createElideOutputCopiesPass());
  bufferization::buildBufferDeallocationPipeline(pm);

  // cuBLASLt calls for GEMMs; every other linalg op becomes a parallel loop
  // nest mapped onto the grid, then an outlined gpu.func.
  MatmulToBlasPassOptions gemm;
  gemm.kernelPrefix = "dnnc_rt_cuda_gemm";
  pm.addPass(createMatmulToBlasPass(gemm));
  pm.addPass(createStridedCopiesToLoopsPass());
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToParallelLoopsPass());
  pm.addNestedPass<func::FuncOp>(createGpuMapParallelLoopsPass());
  pm.addNestedPass<func::FuncOp>(createConvertParallelLoopToGpuPass());
  pm.addPass(createGpuKernelOutliningPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(createCanonicalizerPass());

  // Kernels: NVVM with bare pointers (static shapes), for `chip`.
  GpuNVVMAttachTargetOptions target;
  target.chip = chip.str();
  target.features = features.str();
  pm.addPass(createGpuNVVMAttachTarget(target));
  ConvertGpuOpsToNVVMOpsOptions toNVVM;
  toNVVM.useBarePtrCallConv = true;
  OpPassManager &kernels = pm.nest<gpu::GPUModuleOp>();
  // Arithmetic first, as MLIR's gpu-lower-to-nvvm-pipeline does: the block
  // arguments of loops inside kernels (reductions) must be converted with
  // their operands.
  kernels.addPass(createArithToLLVMConversionPass());
  kernels.addPass(createConvertIndexToLLVMPass());
  kernels.addPass(createConvertGpuOpsToNVVMOps(toNVVM));
  kernels.addPass(createCanonicalizerPass());
  kernels.addPass(createCSEPass());
  kernels.addPass(createReconcileUnrealizedCastsPass());

  // Host: the cpu target's LLVM lowering with bare pointers, launches as
  // gpu.launch_func on LLVM values.
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  ConvertFuncToLLVMPassOptions funcToLLVM;
  funcToLLVM.useBarePtrCallConv = true;
  pm.addPass(createConvertFuncToLLVMPass(funcToLLVM));
  GpuToLLVMConversionPassOptions launches;
  launches.hostBarePtrCallConv = true;
  launches.kernelBarePtrCallConv = true;
  pm.addPass(createGpuToLLVMConversionPass(launches));
  pm.addPass(createReconcileUnrealizedCastsPass());

  // Serialize the kernels to cubins (ptxas; no GPU needed) and add the
  // runtime entry.
  GpuModuleToBinaryPassOptions binary;
  binary.compilationTarget = "bin";
  pm.addPass(createGpuModuleToBinaryPass(binary));
  pm.addPass(createEmitEntryPass());
}

void dnnc::registerCUDATargetDialects(DialectRegistry &registry) {
  registry.insert<gpu::GPUDialect, NVVM::NVVMDialect>();
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  registerGPUDialectTranslation(registry);
  registerNVVMDialectTranslation(registry);
  gpu::registerOffloadingLLVMTranslationInterfaceExternalModels(registry);
}

void dnnc::registerCUDAPipelines() {
  PassPipelineRegistration<>(
      "dnnc-cuda-device",
      "dnnc's cuda device phase: dnn (weights outlined) to sm_90 cubins and "
      "host code in the LLVM dialect",
      [](OpPassManager &pm) { buildCUDADevicePipeline(pm); });
}
