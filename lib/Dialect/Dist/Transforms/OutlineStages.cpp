//===- OutlineStages.cpp - One function per pipeline stage ------*- C++ -*-===//
//
// Part of the dnnc project.
//
//===----------------------------------------------------------------------===//
//
// Implements `dist-outline-stages`: the stages of a partitioned @main
// become the functions the device phase compiles, one per stage; the
// runtime's schedule calls them and moves the transferred values.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Dialect/Dist/IR/DistOps.h"
#include "dnnc/Dialect/Dist/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace dnnc::dist {
#define GEN_PASS_DEF_OUTLINESTAGESPASS
#include "dnnc/Dialect/Dist/Transforms/Passes.h.inc"
} // namespace dnnc::dist

using namespace mlir;
using namespace dnnc;
using namespace dnnc::dist;

namespace {
/// Outlines the stages of @main; see Passes.td.
struct OutlineStagesPass
    : public dnnc::dist::impl::OutlineStagesPassBase<OutlineStagesPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto main = module.lookupSymbol<func::FuncOp>("main");
    if (!main || main.isExternal() ||
        main.getBody().front().getOps<StageOp>().empty())
      return;
    OpBuilder builder(main);
    for (StageOp stage :
         llvm::make_early_inc_range(main.getBody().front().getOps<StageOp>())) {
      SmallVector<Value> inputs = getStageInputs(stage);
      auto type = FunctionType::get(
          &getContext(), ValueRange(inputs).getTypes(), stage.getResultTypes());
      std::string name = getStageFunctionName(stage.getStageAttr().getInt());
      if (module.lookupSymbol(name)) {
        module.emitError() << "symbol @" << name
                           << " is already defined; cannot outline stage "
                           << stage.getStageAttr().getInt();
        return signalPassFailure();
      }
      auto func = func::FuncOp::create(builder, stage.getLoc(), name, type);
      // Keep the names of @main's arguments (weights, inputs).
      for (auto [index, input] : llvm::enumerate(inputs))
        if (auto arg = dyn_cast<BlockArgument>(input);
            arg && arg.getOwner()->getParentOp() == main)
          if (Attribute n = main.getArgAttr(arg.getArgNumber(), "dnn.name"))
            func.setArgAttr(index, "dnn.name", n);
      Block *body = stage.getBody();
      for (Value input : inputs) {
        BlockArgument arg = body->addArgument(input.getType(), input.getLoc());
        input.replaceUsesWithIf(arg, [&](OpOperand &use) {
          return stage.getRegion().isAncestor(
              use.getOwner()->getParentRegion());
        });
      }
      func.getBody().getBlocks().splice(func.getBody().end(),
                                        stage.getRegion().getBlocks());
      auto yield = cast<YieldOp>(func.getBody().front().getTerminator());
      OpBuilder b(yield);
      func::ReturnOp::create(b, yield.getLoc(), yield.getValues());
      yield.erase();
    }
    main.erase();
  }
};
} // namespace
