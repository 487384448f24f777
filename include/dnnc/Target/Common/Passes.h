//===- Passes.h - passes shared by the device targets ---------*- C++ -*-===//
//
// The passes of the device phase that the cpu and the cuda pipelines both
// run (Passes.td), and the buffer passes they share.
//
//===----------------------------------------------------------------------===//

#ifndef DNNC_TARGET_COMMON_PASSES_H
#define DNNC_TARGET_COMMON_PASSES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

namespace dnnc {

#define GEN_PASS_DECL
#include "dnnc/Target/Common/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "dnnc/Target/Common/Passes.h.inc"

/// Adds the buffer passes of both device pipelines: one-shot bufferization
/// across function boundaries, results as out-params (the runtime's
/// buffers), dnn-elide-output-copies, dnn-plan-memory (with
/// `allowUnplanned`: temporaries it cannot place stay allocations, freed by
/// the deallocation pipeline; without, they are errors).
void addDeviceBufferizationPasses(mlir::OpPassManager &pm, bool allowUnplanned);

} // namespace dnnc

#endif // DNNC_TARGET_COMMON_PASSES_H
