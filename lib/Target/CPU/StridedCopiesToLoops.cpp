//===- StridedCopiesToLoops.cpp - strided copies as linalg --*- C++ -*-===//
//
// Implements dnn-cpu-strided-copies-to-loops: memref.copy between views that
// are not both contiguous becomes linalg.copy, so no C runner library call is
// emitted.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Target/CPU/CPUTarget.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace dnnc {
#define GEN_PASS_DEF_STRIDEDCOPIESTOLOOPSPASS
#include "dnnc/Target/CPU/Passes.h.inc"
} // namespace dnnc

using namespace mlir;

/// Whether `type` lowers to a plain memcpy (identity layout, static shape).
static bool isPlain(Type type) {
  auto memref = dyn_cast<MemRefType>(type);
  return memref && memref.getLayout().isIdentity() && memref.hasStaticShape();
}

namespace {
struct StridedCopiesToLoopsPass
    : public dnnc::impl::StridedCopiesToLoopsPassBase<
          StridedCopiesToLoopsPass> {
  void runOnOperation() override {
    SmallVector<memref::CopyOp> copies;
    getOperation().walk([&](memref::CopyOp copy) {
      if (!isPlain(copy.getSource().getType()) ||
          !isPlain(copy.getTarget().getType()))
        copies.push_back(copy);
    });
    for (memref::CopyOp copy : copies) {
      OpBuilder b(copy);
      linalg::CopyOp::create(b, copy.getLoc(), copy.getSource(),
                             copy.getTarget());
      copy.erase();
    }
  }
};
} // namespace
