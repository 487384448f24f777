//===- PrintCosts.cpp - remark with each op's cost --------------*- C++ -*-===//
//
// Implements dnn-print-costs: a remark with the FLOPs and bytes of every op
// that has a cost, for tests and debugging.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Dialect/Dnn/IR/Dnn.h"
#include "dnnc/Dialect/Dnn/Transforms/Passes.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

namespace dnnc::dnn {
#define GEN_PASS_DEF_PRINTCOSTSPASS
#include "dnnc/Dialect/Dnn/Transforms/Passes.h.inc"
} // namespace dnnc::dnn

using namespace mlir;
using namespace dnnc::dnn;

/// Returns `count` printed exactly when it is a whole number of up to 15
/// digits, in scientific notation otherwise.
static std::string formatCount(double count) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::format("%.15g", count);
  return text;
}

namespace {
struct PrintCostsPass
    : public dnnc::dnn::impl::PrintCostsPassBase<PrintCostsPass> {
  using PrintCostsPassBase::PrintCostsPassBase;

  void runOnOperation() override {
    getOperation()->walk([&](DnnCostOpInterface op) {
      OpCost cost = op.getCost();
      op->emitRemark() << "flops = " << formatCount(cost.flops)
                       << ", bytes read = " << formatCount(cost.bytesRead)
                       << ", bytes written = " << formatCount(cost.bytesWritten)
                       << ", units = " << (cost.isMatrix ? "matrix" : "vector");
    });
  }
};
} // namespace
