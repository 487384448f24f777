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

#include "dnnc/Dialect/Dist/IR/DistAttrs.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace dnnc::dist {

#define GEN_PASS_DECL
#include "dnnc/Dialect/Dist/Transforms/Passes.h.inc"

/// Returns `dist-create-mesh` creating `@mesh` with `axes` (outermost
/// first; none: the pass does nothing), as the pipelines build it from
/// options already parsed; the textual `axes` option is not read.
std::unique_ptr<mlir::Pass>
createCreateMeshPass(llvm::ArrayRef<MeshAxisSpec> axes);

/// Returns the name a location carries (an ONNX node's, as imported): that
/// of a NameLoc, or of the first NameLoc a fused location holds; empty when
/// none. `dist-assign-stages` finds the ops starting its stages by it.
llvm::StringRef getLocationName(mlir::Location loc);

#define GEN_PASS_REGISTRATION
#include "dnnc/Dialect/Dist/Transforms/Passes.h.inc"

} // namespace dnnc::dist

#endif // DNNC_DIALECT_DIST_TRANSFORMS_PASSES_H
