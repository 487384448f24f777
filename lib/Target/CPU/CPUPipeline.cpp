//===- CPUPipeline.cpp - cpu device pipeline ----------------*- C++ -*-===//
//
// The pass pipeline that lowers a single-rank dnn module (weights already
// outlined) to the LLVM dialect for the CPU backend.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Conversion/Passes.h"
#include "dnnc/Dialect/Dist/Transforms/Passes.h"
#include "dnnc/Target/CPU/CPUTarget.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void dnnc::buildCPUDevicePipeline(OpPassManager &pm) {
  // A pipelined plan: one function per stage (the packager has read the
  // schedule from the staged @main).
  pm.addPass(dist::createOutlineStagesPass());
  // Tensor level: lower dnn, fuse elementwise chains.
  pm.addPass(createConvertDnnToLinalg());
  pm.addPass(createCollectivesToRuntimePass());
  pm.addPass(createConvToGemmPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createFuseElementwisePass());
  pm.addPass(createCanonicalizerPass());
  // After fusion has turned splat operands into scalar constants (pow x, 3).
  pm.addPass(createApproximateMathPass());
  pm.addPass(createCSEPass());
  // After CSE, which merges the matmuls' identical zero fills.
  pm.addPass(createUntieMatmulInitsPass());

  // Buffers: one-shot bufferization across the function boundary, results
  // written into caller-provided buffers, static temporaries planned into
  // the rank's workspace arena, the others freed.
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
  // Before deallocation: it sees the allocations without their deallocs,
  // and leaves the deallocation pipeline only the unplanned ones to free.
  pm.addPass(createPlanMemoryPass());
  bufferization::buildBufferDeallocationPipeline(pm);

  // Library calls for GEMMs, loops for the rest.
  pm.addPass(createMatmulToBlasPass());
  pm.addPass(createStridedCopiesToLoopsPass());
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  // The offsets of subviews at dynamic positions (dist.shard_slice) come out
  // of expand-strided-metadata as affine.apply.
  pm.addPass(createLowerAffinePass());
  pm.addPass(createCanonicalizerPass());

  // LLVM dialect, with bare pointers for the statically shaped buffers.
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  ConvertFuncToLLVMPassOptions funcToLLVM;
  funcToLLVM.useBarePtrCallConv = true;
  pm.addPass(createConvertFuncToLLVMPass(funcToLLVM));
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createEmitEntryPass());
}

void dnnc::registerCPUPipelines() {
  PassPipelineRegistration<>(
      "dnnc-cpu-device",
      "dnnc's cpu device phase: dnn (weights outlined) to the LLVM dialect",
      [](OpPassManager &pm) { buildCPUDevicePipeline(pm); });
}
