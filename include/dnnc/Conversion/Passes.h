//===- Passes.h - dnnc conversion passes -------------------------*- C++ -*-===//
//
// Declarations and registration of dnnc's conversion passes.
//
//===----------------------------------------------------------------------===//

#ifndef DNNC_CONVERSION_PASSES_H
#define DNNC_CONVERSION_PASSES_H

#include "dnnc/Conversion/DnnToLinalg/DnnToLinalg.h"

#include "mlir/Pass/Pass.h"

namespace dnnc {

#define GEN_PASS_DECL
#include "dnnc/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "dnnc/Conversion/Passes.h.inc"

} // namespace dnnc

#endif // DNNC_CONVERSION_PASSES_H
