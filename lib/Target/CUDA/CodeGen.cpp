//===- CodeGen.cpp - cuda host code to a shared object ------*- C++ -*-===//
//
// The host side of the cuda device module goes through the cpu target's code
// generation; the GPU and NVVM translations turn gpu.binary into an embedded
// cubin and gpu.launch_func into calls of the runtime's mgpu* functions.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Target/CPU/CPUTarget.h"
#include "dnnc/Target/CUDA/CUDATarget.h"

#include "mlir/IR/MLIRContext.h"

using namespace mlir;

bool dnnc::compileCUDAToSharedObject(ModuleOp module, StringRef cpu,
                                     std::string &object, std::string &error) {
  DialectRegistry registry;
  registerCUDATargetDialects(registry);
  module.getContext()->appendDialectRegistry(registry);
  return compileToSharedObject(module, cpu, object, error);
}
