//===- Package.h - plan.bin packaging ----------------------------*- C++
//-*-===//
//
// The package phase: collects what a rank needs from the compiled module
// into the runtime's plan::Plan and writes plan.bin.
//
//===----------------------------------------------------------------------===//

#ifndef DNNC_TARGET_PACKAGE_PACKAGE_H
#define DNNC_TARGET_PACKAGE_PACKAGE_H

#include "dnnc/Runtime/Plan.h"

#include "mlir/IR/BuiltinOps.h"

#include <string>

namespace dnnc {

/// Fills `plan` with the model signature, the single rank's buffer list and
/// its weights from `@main` of a dnn module whose weights were outlined
/// (dnn-outline-weights). The buffer list follows the calling convention of
/// the device phase: @main's arguments (inputs and weights) in order, then
/// its results (written into out-params). Returns false with `error` set when
/// a type cannot be represented in plan.bin.
bool collectPlanSignature(mlir::ModuleOp module, llvm::StringRef target,
                          plan::Plan &plan, std::string &error);

/// Returns the ONNX TensorProto data type code of an MLIR element type, or
/// -1 if it has none.
int32_t getONNXDataType(mlir::Type type);

} // namespace dnnc

#endif // DNNC_TARGET_PACKAGE_PACKAGE_H
