//===- RuntimeKernels.cpp - declarations of runtime kernels -*- C++ -*-===//
//
// The one way the lowering passes declare the runtime's C ABI kernels they
// call.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Target/CPU/CPUTarget.h"

using namespace mlir;

func::FuncOp dnnc::getOrDeclareRuntimeKernel(ModuleOp module, StringRef name,
                                             FunctionType type) {
  if (auto f = module.lookupSymbol<func::FuncOp>(name))
    return f;
  OpBuilder b(module.getBodyRegion());
  auto f = func::FuncOp::create(b, module.getLoc(), name, type);
  f.setPrivate();
  return f;
}
