//===- PrintShardingRules.cpp - remark with each op's rule ------*- C++ -*-===//
//
// Implements dnn-print-sharding-rules: a remark with the sharding rule of
// every op that has one, for tests and debugging.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Dialect/Dnn/IR/Dnn.h"
#include "dnnc/Dialect/Dnn/Transforms/Passes.h"

namespace dnnc::dnn {
#define GEN_PASS_DEF_PRINTSHARDINGRULESPASS
#include "dnnc/Dialect/Dnn/Transforms/Passes.h.inc"
} // namespace dnnc::dnn

using namespace mlir;
using namespace dnnc::dnn;

namespace {
struct PrintShardingRulesPass
    : public dnnc::dnn::impl::PrintShardingRulesPassBase<
          PrintShardingRulesPass> {
  using PrintShardingRulesPassBase::PrintShardingRulesPassBase;

  void runOnOperation() override {
    WalkResult result = getOperation()->walk([&](Operation *op) {
      ShardingRuleAttr rule = getShardingRule(op);
      if (!rule)
        return WalkResult::advance();
      auto emitError = [&] {
        return op->emitOpError() << "has a sharding rule " << rule
                                 << " that does not match its types: ";
      };
      if (failed(rule.verifyForTypes(op->getOperandTypes(),
                                     op->getResultTypes(), emitError)))
        return WalkResult::interrupt();
      op->emitRemark() << rule;
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace
