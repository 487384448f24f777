//===- UntieMatmulInits.cpp - one zero init per matmul -------*- C++ -*-===//
//
// Implements dnn-cpu-untie-matmul-inits: every linalg.matmul and
// linalg.batch_matmul whose init is a zero fill shared with other users gets
// a private clone of the fill right before it (the last user moves the fill
// itself), so that it still finds its fill right before it after
// bufferization (dnn-cpu-matmul-to-blas).
//
//===----------------------------------------------------------------------===//

#include "dnnc/Target/CPU/CPUTarget.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace dnnc {
#define GEN_PASS_DEF_UNTIEMATMULINITSPASS
#include "dnnc/Target/CPU/Passes.h.inc"
} // namespace dnnc

using namespace mlir;

namespace {
struct UntieMatmulInitsPass
    : public dnnc::impl::UntieMatmulInitsPassBase<UntieMatmulInitsPass> {
  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> matmuls;
    getOperation()->walk([&](linalg::LinalgOp op) {
      if (isa<linalg::MatmulOp, linalg::BatchMatmulOp>(op.getOperation()) &&
          op.hasPureTensorSemantics())
        matmuls.push_back(op);
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
  }
};
} // namespace
