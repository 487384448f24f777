//===- Passes.h - Planner passes --------------------------------*- C++ -*-===//
//
// Part of the dnnc project.
//
//===----------------------------------------------------------------------===//
//
// Declares the passes of the planner and their registration.
//
//===----------------------------------------------------------------------===//

#ifndef DNNC_PLANNER_PASSES_H
#define DNNC_PLANNER_PASSES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace dnnc::planner {

#define GEN_PASS_DECL
#include "dnnc/Planner/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "dnnc/Planner/Passes.h.inc"

} // namespace dnnc::planner

#endif // DNNC_PLANNER_PASSES_H
