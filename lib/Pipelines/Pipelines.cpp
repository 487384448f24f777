//===- Pipelines.cpp - dnnc's phase pipelines ---------------*- C++ -*-===//
//
// Builds and registers the pass pipelines of dnnc's phases.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Pipelines/Pipelines.h"
#include "dnnc/Dialect/Dist/Transforms/Passes.h"
#include "dnnc/Dialect/Dnn/Transforms/Passes.h"
#include "dnnc/Target/CPU/CPUTarget.h"

#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/StringSwitch.h"

using namespace mlir;

std::optional<dnnc::Phase> dnnc::parsePhase(llvm::StringRef name) {
  return llvm::StringSwitch<std::optional<Phase>>(name)
      .Case("import", Phase::Import)
      .Case("graph", Phase::Graph)
      .Case("device", Phase::Device)
      .Default(std::nullopt);
}

void dnnc::buildGraphPipeline(OpPassManager &pm) {
  pm.addPass(createCanonicalizerPass());
  pm.addPass(dnn::createFoldWeightTransposesPass());
  pm.addPass(createCSEPass());
  pm.addPass(dist::createCheckShardingsPass());
}

void dnnc::buildDevicePrologue(OpPassManager &pm) {
  pm.addPass(dnn::createOutlineWeightsPass());
}

void dnnc::buildPipelineUpTo(OpPassManager &pm, Phase phase) {
  if (phase >= Phase::Graph)
    buildGraphPipeline(pm);
  if (phase >= Phase::Device) {
    buildDevicePrologue(pm);
    buildCPUDevicePipeline(pm);
  }
}

void dnnc::registerPipelines() {
  registerCPUPipelines();
  PassPipelineRegistration<>(
      "dnnc-graph",
      "dnnc's graph phase: canonicalize and fold, transpose weights, CSE, "
      "check shardings",
      [](OpPassManager &pm) { buildGraphPipeline(pm); });
}
