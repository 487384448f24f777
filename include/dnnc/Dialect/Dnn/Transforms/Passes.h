//===- Passes.h - dnn dialect passes -----------------------------*- C++ -*-===//
//
// Declarations and registration of the `dnn` passes.
//
//===----------------------------------------------------------------------===//

#ifndef DNNC_DIALECT_DNN_TRANSFORMS_PASSES_H
#define DNNC_DIALECT_DNN_TRANSFORMS_PASSES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace dnnc::dnn {

/// Name of the argument attribute holding an outlined weight's value.
constexpr llvm::StringLiteral kWeightAttrName = "dnn.weight";
/// Name of the unit argument attribute marking a weight whose value was not
/// read (`dnnc --plan-only`): the argument stands for the initializer named
/// by its `dnn.name`.
constexpr llvm::StringLiteral kWeightRefAttrName = "dnn.weight_ref";
/// Name of the argument/result attribute holding the ONNX tensor name.
constexpr llvm::StringLiteral kNameAttrName = "dnn.name";

#define GEN_PASS_DECL
#include "dnnc/Dialect/Dnn/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "dnnc/Dialect/Dnn/Transforms/Passes.h.inc"

} // namespace dnnc::dnn

#endif // DNNC_DIALECT_DNN_TRANSFORMS_PASSES_H
