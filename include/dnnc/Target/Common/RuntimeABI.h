//===- RuntimeABI.h - what rank code and the runtime agree on ---*- C++ -*-===//
//
// The names and codes shared by the code of a rank (both targets), the plan
// record of the device phase and the packager: the exported entry symbols,
// the ONNX data type codes of the runtime's kernels and of plan.bin, and the
// declaration of the runtime kernels the lowering passes call.
//
//===----------------------------------------------------------------------===//

#ifndef DNNC_TARGET_COMMON_RUNTIMEABI_H
#define DNNC_TARGET_COMMON_RUNTIMEABI_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

#include <string>

namespace dnnc {

/// Returns the exported symbol that runs the function `function` of the
/// device phase's output: `dnnc_entry` for `@main`, `dnnc_entry_<name>`
/// for the others (the stage functions of a pipelined plan).
inline std::string getEntrySymbol(llvm::StringRef function) {
  if (function == "main")
    return "dnnc_entry";
  return ("dnnc_entry_" + function).str();
}

/// Returns the ONNX TensorProto data type code of an MLIR element type, or
/// -1 if it has none.
int32_t getONNXDataType(mlir::Type type);

/// The private declaration of runtime kernel `name` (e.g. `dnnc_rt_gemm_f32`)
/// in `module`, created at the start of the module on first use: how the
/// lowering passes of both targets call the runtime.
mlir::func::FuncOp getOrDeclareRuntimeKernel(mlir::ModuleOp module,
                                             llvm::StringRef name,
                                             mlir::FunctionType type);

/// The runtime function returning a rank's workspace arena, where
/// dnn-plan-memory places the temporaries of the generated code.
inline constexpr llvm::StringLiteral kWorkspaceFunction = "dnnc_rt_workspace";

/// Returns true if `value` is the workspace arena dnn-plan-memory views
/// (the memref cast of the descriptor of a `dnnc_rt_workspace` result):
/// memory of the runtime's own, which no function argument aliases.
bool isWorkspaceArena(mlir::Value value);

} // namespace dnnc

#endif // DNNC_TARGET_COMMON_RUNTIMEABI_H
