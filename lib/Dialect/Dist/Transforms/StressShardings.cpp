//===- StressShardings.cpp - placeholder until implemented --------------*- C++ -*-===//
//
// Part of the dnnc project. Being written in this session; replaced by the
// real implementation before it is used.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Dialect/Dist/Transforms/Passes.h"

namespace dnnc::dist {
#define GEN_PASS_DEF_STRESSSHARDINGSPASS
#include "dnnc/Dialect/Dist/Transforms/Passes.h.inc"
} // namespace dnnc::dist

namespace {
struct StressShardingsPass : public dnnc::dist::impl::StressShardingsPassBase<StressShardingsPass> {
  using Base::Base;
  void runOnOperation() override {
    getOperation().emitError("StressShardingsPass is not implemented yet");
    signalPassFailure();
  }
};
} // namespace
