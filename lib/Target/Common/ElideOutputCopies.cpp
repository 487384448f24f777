//===- ElideOutputCopies.cpp - results computed in place ----*- C++ -*-===//
//
// Implements dnn-elide-output-copies: an allocation whose only fate is to be
// copied into an out-param before the return is replaced by the out-param.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Target/Common/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace dnnc {
#define GEN_PASS_DEF_ELIDEOUTPUTCOPIESPASS
#include "dnnc/Target/Common/Passes.h.inc"
} // namespace dnnc

using namespace mlir;

namespace {
struct ElideOutputCopiesPass
    : public dnnc::impl::ElideOutputCopiesPassBase<ElideOutputCopiesPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    for (Block &block : func.getBody()) {
      auto ret = dyn_cast<func::ReturnOp>(block.getTerminator());
      if (!ret)
        continue;
      // The copies into out-params directly preceding the return.
      SmallVector<memref::CopyOp> copies;
      for (Operation *op = ret->getPrevNode(); op; op = op->getPrevNode()) {
        auto copy = dyn_cast<memref::CopyOp>(op);
        if (!copy)
          break;
        copies.push_back(copy);
      }
      for (memref::CopyOp copy : copies) {
        auto out = dyn_cast<BlockArgument>(copy.getTarget());
        auto alloc = copy.getSource().getDefiningOp<memref::AllocOp>();
        if (!out || out.getOwner() != &func.getBody().front() || !alloc ||
            !out.hasOneUse() || alloc.getType() != out.getType() ||
            alloc->getBlock() != &func.getBody().front())
          continue;
        // Another copy of the same allocation into a second out-param keeps
        // the allocation alive as the source of that copy.
        bool otherCopies = llvm::any_of(alloc->getUsers(), [&](Operation *u) {
          auto c = dyn_cast<memref::CopyOp>(u);
          return c && c != copy && c.getSource() == alloc.getResult();
        });
        if (otherCopies)
          continue;
        copy.erase();
        alloc.getResult().replaceAllUsesWith(out);
        alloc.erase();
      }
    }
  }
};
} // namespace
