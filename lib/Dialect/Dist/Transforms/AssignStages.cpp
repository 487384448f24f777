//===- AssignStages.cpp - Pipeline stages of a training step ----*- C++ -*-===//
//
// Part of the dnnc project.
//
//===----------------------------------------------------------------------===//
//
// Implements `dist-assign-stages`: the forward ops of a training step go to
// the pipeline stages the planner chose on the forward graph, found by the
// ONNX node names their locations carry.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Dialect/Dist/IR/DistOps.h"
#include "dnnc/Dialect/Dist/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace dnnc::dist {
#define GEN_PASS_DEF_ASSIGNSTAGESPASS
#include "dnnc/Dialect/Dist/Transforms/Passes.h.inc"
} // namespace dnnc::dist

using namespace mlir;
using namespace dnnc::dist;

StringRef dnnc::dist::getLocationName(Location loc) {
  if (auto name = dyn_cast<NameLoc>(loc))
    return name.getName().getValue();
  if (auto fused = dyn_cast<FusedLoc>(loc))
    for (Location inner : fused.getLocations())
      if (StringRef name = getLocationName(inner); !name.empty())
        return name;
  return {};
}

namespace {
/// Assigns the stages of @main; see Passes.td.
struct AssignStagesPass
    : public dnnc::dist::impl::AssignStagesPassBase<AssignStagesPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto emitError = [&] { return module.emitError("dist-assign-stages: "); };
    std::optional<Schedule> kind = symbolizeSchedule(schedule);
    if (!kind) {
      emitError() << "unknown schedule '" << schedule
                  << "' (expected gpipe, 1f1b or interleaved)";
      return signalPassFailure();
    }
    std::optional<Recompute> again = symbolizeRecompute(recompute);
    if (!again) {
      emitError() << "unknown recompute '" << recompute
                  << "' (expected off, selective or full)";
      return signalPassFailure();
    }
    auto pipeline = PipelineAttr::getChecked(
        [&] { return emitError(); }, &getContext(),
        axis.empty() ? StringAttr() : StringAttr::get(&getContext(), axis),
        int64_t(stages), int64_t(chunks), int64_t(microbatches), *kind,
        *again, bool(zero), /*updateRounds=*/int64_t(0));
    if (!pipeline)
      return signalPassFailure();
    int64_t numStages = pipeline.getNumVirtualStages();
    if (int64_t(stageStarts.size()) != numStages - 1) {
      emitError() << "the pipeline has " << numStages << " stages, so "
                  << numStages - 1 << " stage starts, but "
                  << stageStarts.size() << " are given";
      return signalPassFailure();
    }
    auto main = module.lookupSymbol<func::FuncOp>("main");
    if (!main || main.isExternal()) {
      emitError() << "the module has no function @main";
      return signalPassFailure();
    }
    Builder builder(&getContext());
    int64_t stage = 0;
    for (Operation &op : main.getBody().front().without_terminator()) {
      if (stage < numStages - 1 &&
          getLocationName(op.getLoc()) == stageStarts[stage])
        ++stage;
      op.setAttr(DistDialect::getStageAttrName(),
                 builder.getI64IntegerAttr(stage));
    }
    if (stage < numStages - 1) {
      emitError() << "no op of @main named '" << stageStarts[stage]
                  << "' (the start of stage " << stage + 1
                  << ") follows the start of stage " << stage;
      return signalPassFailure();
    }
    module->setAttr(DistDialect::getPipelineAttrName(), pipeline);
  }
};
} // namespace
