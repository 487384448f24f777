//===- InitAll.h - register every dnnc dialect and pass ----------*- C++ -*-===//
//
// One place that knows all dialects and passes dnnc's tools use.
//
//===----------------------------------------------------------------------===//

#ifndef DNNC_INITALL_H
#define DNNC_INITALL_H

#include "dnnc/Dialect/Dist/IR/DistDialect.h"
#include "dnnc/Dialect/Dist/Transforms/Passes.h"
#include "dnnc/Dialect/Dnn/IR/Dnn.h"
#include "dnnc/Pipelines/Pipelines.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Transforms/Passes.h"

namespace dnnc {

/// Adds the dialects dnnc's IR may contain to `registry`.
inline void registerAllDialects(mlir::DialectRegistry &registry) {
  registry.insert<dnn::DnnDialect, dist::DistDialect, mlir::func::FuncDialect,
                  mlir::arith::ArithDialect, mlir::tensor::TensorDialect>();
}

/// Registers dnnc's passes and pipelines, and the upstream generic passes
/// (canonicalize, cse, ...) they build on, with the global registry.
inline void registerAllPasses() {
  mlir::registerTransformsPasses();
  dist::registerDistPasses();
  registerPipelines();
}

} // namespace dnnc

#endif // DNNC_INITALL_H
