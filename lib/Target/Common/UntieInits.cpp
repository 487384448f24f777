//===- UntieInits.cpp - one init per linalg op ---------------*- C++ -*-===//
//
// Implements dnn-untie-inits: every linalg.matmul and
// linalg.batch_matmul whose init is a zero fill shared with other users gets
// a private clone of the fill right before it (the last user moves the fill
// itself), so that it still finds its fill right before it after
// bufferization (dnn-matmul-to-blas); every other destination-style op
// whose init is a shared tensor.empty gets its own tensor.empty, so that
// bufferization does not see the whole program as one alias set.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Target/Common/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace dnnc {
#define GEN_PASS_DEF_UNTIEINITSPASS
#include "dnnc/Target/Common/Passes.h.inc"
} // namespace dnnc

using namespace mlir;

namespace {
struct UntieInitsPass : public dnnc::impl::UntieInitsPassBase<UntieInitsPass> {
  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> matmuls;
    SmallVector<OpOperand *> emptyInits;
    getOperation()->walk([&](DestinationStyleOpInterface op) {
      if (!op.hasPureTensorSemantics())
        return;
      if (isa<linalg::MatmulOp, linalg::BatchMatmulOp>(op.getOperation())) {
        matmuls.push_back(cast<linalg::LinalgOp>(op.getOperation()));
        return;
      }
      for (OpOperand &init : op.getDpsInitsMutable())
        if (init.get().getDefiningOp<tensor::EmptyOp>())
          emptyInits.push_back(&init);
    });
    for (linalg::LinalgOp op : matmuls) {
      OpOperand &init = *op.getDpsInitOperand(0);
      auto fill = init.get().getDefiningOp<linalg::FillOp>();
      if (!fill)
        continue;
      if (fill->hasOneUse()) {
        // The last user of a shared fill: move the fill down to it.
        fill->moveBefore(op);
        continue;
      }
      OpBuilder b(op);
      IRMapping mapping;
      Value dest = fill.getOutputs().front();
      if (auto empty = dest.getDefiningOp<tensor::EmptyOp>())
        mapping.map(dest, b.clone(*empty)->getResult(0));
      init.set(b.clone(*fill, mapping)->getResult(0));
    }
    for (OpOperand *init : emptyInits) {
      auto empty = init->get().getDefiningOp<tensor::EmptyOp>();
      Operation *user = init->getOwner();
      // Its dynamic sizes must dominate the user: operands of the user's
      // block or of an ancestor, as at the original.
      if (empty->getBlock() != user->getBlock())
        continue;
      if (empty->hasOneUse()) {
        empty->moveBefore(user);
        continue;
      }
      OpBuilder b(user);
      init->set(b.clone(*empty)->getResult(0));
    }
  }
};
} // namespace
