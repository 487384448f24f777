//===- CUDAPipeline.cpp - cuda device pipeline --------------*- C++ -*-===//
//
// The pass pipeline that lowers a per-rank dnn module (weights already
// outlined) to bufferized linalg and runtime calls, the input of the CUDA
// C++ translation.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Conversion/Passes.h"
#include "dnnc/Dialect/Dist/Transforms/Passes.h"
#include "dnnc/Dialect/Dnn/Transforms/Passes.h"
#include "dnnc/Target/Common/Passes.h"
#include "dnnc/Target/CUDA/CUDATarget.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void dnnc::buildCUDADevicePipeline(OpPassManager &pm,
                                   dnn::Precision precision) {
  // Tensor level, as on cpu: one function per pipeline stage, dnn lowered,
  // collectives as NCCL calls of the runtime, elementwise chains fused (each
  // fused linalg op becomes one kernel). No approximate-math: the GPU's
  // libdevice functions are fast and accurate. First, what packaging needs.
  pm.addPass(createRecordPlanPass());
  pm.addPass(dist::createOutlineStagesPass());
  // `dnnc --precision`, as on cpu.
  dnn::ConvertPrecisionPassOptions convertPrecision;
  convertPrecision.precision = precision;
  pm.addPass(dnn::createConvertPrecisionPass(convertPrecision));
  bool reduced = dnn::isReducedPrecision(precision);
  // Attention as the runtime's flash kernel, before dnn is lowered.
  pm.addPass(createFuseAttentionPass());
  // Bias and activation after a GEMM in cuBLASLt's epilogue.
  pm.addPass(createFuseGemmEpiloguePass());
  pm.addPass(createConvertDnnToLinalg());
  CollectivesToRuntimePassOptions collectives;
  collectives.kernelPrefix = "dnnc_rt_cuda";
  pm.addPass(createCollectivesToRuntimePass(collectives));
  pm.addPass(createConvToGemmPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createFuseElementwisePass());
  pm.addPass(createCanonicalizerPass());
  // bf16/f16 chains computed in f32 registers, rounded when stored (the
  // translation computes any remaining 16-bit arithmetic in float too).
  if (reduced)
    pm.addPass(createWidenReducedFloatsPass());
  pm.addPass(createCSEPass());
  pm.addPass(createUntieInitsPass());

  // Buffers, as on cpu: results written into the runtime's device buffers,
  // every temporary at a planned offset of the rank's workspace arena (one
  // device allocation; a temporary it cannot place is an error).
  addDeviceBufferizationPasses(pm, /*allowUnplanned=*/false);

  // cuBLASLt for GEMMs; everything else stays linalg for the translation.
  MatmulToBlasPassOptions gemm;
  gemm.kernelPrefix = "dnnc_rt_cuda_gemm";
  pm.addPass(createMatmulToBlasPass(gemm));
  pm.addPass(createCanonicalizerPass());
}

void dnnc::registerCUDAPipelines() {
  registerDnncCUDAPasses();
  PassPipelineRegistration<>(
      "dnnc-cuda-device",
      "dnnc's cuda device phase: dnn (weights outlined) to bufferized linalg "
      "and runtime calls, the input of the CUDA C++ translation",
      [](OpPassManager &pm) { buildCUDADevicePipeline(pm); });
}
