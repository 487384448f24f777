//===- DeviceBufferization.cpp - device buffer passes ---------*- C++ -*-===//
//
// The buffer passes that the cpu and the cuda device pipelines share.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Target/Common/Passes.h"

#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

using namespace mlir;

void dnnc::addDeviceBufferizationPasses(OpPassManager &pm,
                                        bool allowUnplanned) {
  // One-shot bufferization across the function boundary, results written
  // into caller-provided buffers, static temporaries planned into the
  // rank's workspace arena, the others (if allowed) freed. First, every
  // runtime call's read of a tensor gets its own to_buffer right before it
  // (CSE may have merged them), so that bufferization sees the read there.
  pm.addPass(createLocalizeTensorAddressesPass());
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  // Constant globals named and ordered by the program, not by the order
  // bufferization created them in (which varies under threading).
  pm.addPass(createNumberConstantGlobalsPass());
  bufferization::BufferResultsToOutParamsPassOptions outParams;
  outParams.hoistStaticAllocs = true;
  outParams.modifyPublicFunctions = true;
  pm.addPass(bufferization::createBufferResultsToOutParamsPass(outParams));
  pm.addNestedPass<func::FuncOp>(createElideOutputCopiesPass());
  // Before deallocation: it sees the allocations without their deallocs,
  // and leaves the deallocation pipeline only the unplanned ones to free.
  PlanMemoryPassOptions planMemory;
  planMemory.allowUnplanned = allowUnplanned;
  pm.addPass(createPlanMemoryPass(planMemory));
  bufferization::buildBufferDeallocationPipeline(pm);
}
