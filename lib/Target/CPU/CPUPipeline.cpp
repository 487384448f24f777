//===- CPUPipeline.cpp - cpu device pipeline ----------------*- C++ -*-===//
//
// The pass pipeline that lowers a single-rank dnn module (weights already
// outlined) to the LLVM dialect for the CPU backend.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Conversion/Passes.h"
#include "dnnc/Dialect/Dist/Transforms/Passes.h"
#include "dnnc/Dialect/Dnn/Transforms/Passes.h"
#include "dnnc/Target/CPU/CPUTarget.h"
#include "dnnc/Target/Common/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void dnnc::buildCPUDevicePipeline(OpPassManager &pm,
                                   dnn::Precision precision) {
  // What packaging needs (mesh, pipeline, buffers, functions), kept as the
  // module's #dist.plan; then a pipelined plan gets one function per stage.
  pm.addPass(createRecordPlanPass());
  pm.addPass(dist::createOutlineStagesPass());
  // `dnnc --precision`: activations and weights in bf16/f16, accumulations
  // in f32 (a no-op for fp32).
  dnn::ConvertPrecisionPassOptions convertPrecision;
  convertPrecision.precision = precision;
  pm.addPass(dnn::createConvertPrecisionPass(convertPrecision));
  bool reduced = dnn::isReducedPrecision(precision);
  // Tensor level: lower dnn, fuse elementwise chains.
  pm.addPass(createConvertDnnToLinalg());
  pm.addPass(createCollectivesToRuntimePass());
  pm.addPass(createConvToGemmPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createFuseElementwisePass());
  pm.addPass(createCanonicalizerPass());
  if (reduced) {
    // bf16/f16 arithmetic and math in f32 registers, rounded when stored.
    pm.addPass(createWidenReducedFloatsPass());
    arith::ArithEmulateUnsupportedFloatsOptions emulate;
    emulate.sourceTypeStrs = {"bf16", "f16"};
    pm.addPass(arith::createArithEmulateUnsupportedFloats(emulate));
    pm.addPass(math::createMathExtendToSupportedTypes());
  }
  pm.addPass(createCSEPass());
  // After CSE, which merges the matmuls' identical zero fills.
  pm.addPass(createUntieInitsPass());

  addDeviceBufferizationPasses(pm, /*allowUnplanned=*/true);

  // Library calls for GEMMs, loops for the rest.
  pm.addPass(createMatmulToBlasPass());
  pm.addPass(createStridedCopiesToLoopsPass());
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  // After fusion has turned splat operands into scalar constants (pow x, 3);
  // as late as this because the polynomials multiply the number of ops that
  // every pass before would walk.
  pm.addPass(createApproximateMathPass());
  pm.addPass(createLowerAffinePass());
  // One function per loop nest: LLVM's cost is superlinear in a function's
  // size, linear in the number of functions.
  pm.addPass(createOutlineLoopNestsPass());
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
  // The bf16 conversions as integer code (no __truncsfbf2 libcall, which
  // the rank's shared object could not resolve); after the named linalg ops,
  // whose bodies must stay extf/mulf/addf, are loops. Always: an fp32 model
  // may cast to bfloat16 itself.
  arith::ArithExpandOpsPassOptions expand;
  expand.includeBf16 = true;
  pm.addPass(arith::createArithExpandOpsPass(expand));
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
