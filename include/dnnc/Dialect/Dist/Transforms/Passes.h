//===- Passes.h - Dist dialect passes ---------------------------*- C++ -*-===//
//
// Part of the dnnc project.
//
//===----------------------------------------------------------------------===//
//
// Declares the passes of the `dist` dialect and their registration.
//
//===----------------------------------------------------------------------===//

#ifndef DNNC_DIALECT_DIST_TRANSFORMS_PASSES_H
#define DNNC_DIALECT_DIST_TRANSFORMS_PASSES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace dnnc::dist {

#define GEN_PASS_DECL
#include "dnnc/Dialect/Dist/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "dnnc/Dialect/Dist/Transforms/Passes.h.inc"

} // namespace dnnc::dist

#endif // DNNC_DIALECT_DIST_TRANSFORMS_PASSES_H
