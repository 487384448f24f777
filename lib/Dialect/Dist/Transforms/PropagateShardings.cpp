//===- PropagateShardings.cpp - placeholder until implemented --------------*- C++ -*-===//
//
// Part of the dnnc project. Being written in this session; replaced by the
// real implementation before it is used.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Dialect/Dist/Transforms/Passes.h"

namespace dnnc::dist {
#define GEN_PASS_DEF_PROPAGATESHARDINGSPASS
#include "dnnc/Dialect/Dist/Transforms/Passes.h.inc"
} // namespace dnnc::dist

namespace {
struct PropagateShardingsPass : public dnnc::dist::impl::PropagateShardingsPassBase<PropagateShardingsPass> {
  using Base::Base;
  void runOnOperation() override {
    getOperation().emitError("PropagateShardingsPass is not implemented yet");
    signalPassFailure();
  }
};
} // namespace
