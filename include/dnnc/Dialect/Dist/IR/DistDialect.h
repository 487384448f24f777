//===- DistDialect.h - Dist dialect declaration -----------------*- C++ -*-===//
//
// Part of the dnnc project.
//
//===----------------------------------------------------------------------===//
//
// Declares the `dist` dialect: device meshes, shardings, collectives,
// point-to-point transfers and pipeline stages.
//
//===----------------------------------------------------------------------===//

#ifndef DNNC_DIALECT_DIST_IR_DISTDIALECT_H
#define DNNC_DIALECT_DIST_IR_DISTDIALECT_H

#include "mlir/IR/Dialect.h"

#include "dnnc/Dialect/Dist/IR/DistDialect.h.inc"

#endif // DNNC_DIALECT_DIST_IR_DISTDIALECT_H
