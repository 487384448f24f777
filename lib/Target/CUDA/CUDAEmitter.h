//===- CUDAEmitter.h - bufferized linalg to CUDA C++ ------------*- C++ -*-===//
//
// The translator of translateToCUDA, shared by its two halves: the kernel
// emitter (CUDAKernelEmitter.cpp: the C++ types and literals of scalars, the
// scalar expressions, one __global__ kernel per linalg op or strided copy
// and its launch) and the host emitter (CUDAHostEmitter.cpp: the host
// functions that allocate, view and pass buffers and call the runtime, the
// module's globals, the runtime entries, and the translation unit around
// them). Private to lib/Target/CUDA.
//
//===----------------------------------------------------------------------===//

#ifndef DNNC_LIB_TARGET_CUDA_CUDAEMITTER_H
#define DNNC_LIB_TARGET_CUDA_CUDAEMITTER_H

#include "dnnc/Target/CUDA/CUDATarget.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"

#include <cstring>
#include <string>

namespace dnnc::cuda_source {

/// The C++ type of a scalar MLIR type, or "" when it has none.
std::string getCType(mlir::Type type);

/// A literal of `attr` in C++.
mlir::FailureOr<std::string> getLiteral(mlir::TypedAttr attr);

/// A memref value of the host code: the C++ pointer variable holding its
/// base and the C++ expression of its offset in elements.
struct HostBuffer {
  /// The C++ pointer variable holding the base.
  std::string base;
  /// The C++ expression of the offset in elements.
  std::string offset;
};

/// The translator: one instance per module.
class CUDAEmitter {
public:
  /// Creates the translator of `module` under `options`.
  CUDAEmitter(mlir::ModuleOp module, const dnnc::CUDASourceOptions &options)
      : module(module), options(options) {}

  /// Translates the module into `os`.
  mlir::LogicalResult emit(llvm::raw_ostream &os);

private:
  /// A fresh C++ name with `prefix`.
  std::string fresh(llvm::StringRef prefix) {
    return (prefix + llvm::Twine(counter++)).str();
  }

  /// The C++ expression of scalar `value` in the current scope.
  mlir::FailureOr<std::string> scalar(mlir::Value value);

  /// Emits the statement defining the results of the scalar op `op` (arith,
  /// math, linalg.index, memref.load) in the current scope.
  mlir::LogicalResult emitScalarOp(mlir::Operation *op, llvm::raw_ostream &os,
                                   llvm::StringRef indent);

  /// The expression of the scalar op `op` applied to operand expressions
  /// `args`, or failure (with an error) when `op` is not translated.
  mlir::FailureOr<std::string> getScalarExpr(mlir::Operation *op,
                                             llvm::ArrayRef<std::string> args);

  /// The element offset of `indices` (C++ expressions) in a memref of
  /// `type` (static strides).
  mlir::FailureOr<std::string>
  getElementOffset(mlir::Operation *op, mlir::MemRefType type,
                   llvm::ArrayRef<std::string> indices);

  /// Emits the kernel of the linalg op `op` and its launch.
  mlir::LogicalResult emitLinalg(mlir::linalg::LinalgOp op,
                                 llvm::raw_ostream &host);

  /// Emits a copy between two memrefs of the same shape.
  mlir::LogicalResult emitCopy(mlir::memref::CopyOp op,
                               llvm::raw_ostream &host);

  /// Emits the host code of `op` in a host function.
  mlir::LogicalResult emitHostOp(mlir::Operation *op, llvm::raw_ostream &host);

  /// Emits the host function `func` and its runtime entry.
  mlir::LogicalResult emitFunction(mlir::func::FuncOp func);

  /// Emits a module-level constant buffer.
  mlir::LogicalResult emitGlobal(mlir::memref::GlobalOp global);

  /// The name of the runtime function `name` (the cpu kernel under host
  /// emulation).
  std::string calleeName(llvm::StringRef name) const {
    if (options.hostEmulation && name.starts_with("dnnc_rt_cuda_"))
      return ("dnnc_rt_" + name.drop_front(strlen("dnnc_rt_cuda_"))).str();
    return name.str();
  }

  /// The C++ pointer expression of host buffer `value` at its offset.
  mlir::FailureOr<std::string> pointer(mlir::Value value);

  /// Emits a launch of kernel `name` over `blocks` x `threads`.
  void emitLaunch(llvm::raw_ostream &host, llvm::StringRef name,
                  const std::string &blocks, int64_t threads,
                  llvm::ArrayRef<std::string> args);

  /// The module being translated.
  mlir::ModuleOp module;
  /// How it is translated (host emulation or not).
  dnnc::CUDASourceOptions options;
  /// The number of the next fresh name.
  unsigned counter = 0;
  /// Names of scalar values in the scope being emitted.
  llvm::DenseMap<mlir::Value, std::string> names;
  /// Host memrefs of the function being emitted.
  llvm::DenseMap<mlir::Value, HostBuffer> buffers;
  /// C++ names of the host scalars (index arithmetic, call results) of the
  /// function being emitted.
  llvm::DenseMap<mlir::Value, std::string> hostScalars;
  /// C++ names of the host pointers (LLVM pointer results of runtime calls)
  /// and the aligned pointer of the memref descriptors built from them.
  llvm::DenseMap<mlir::Value, std::string> pointers, descriptors;
  /// C++ names of the module's globals.
  llvm::StringMap<std::string> globals;
  /// The text of the translation unit's parts: the declarations (globals,
  /// runtime functions), the kernels and the host functions.
  std::string declarations, kernels, functions;
};

} // namespace dnnc::cuda_source

#endif // DNNC_LIB_TARGET_CUDA_CUDAEMITTER_H
