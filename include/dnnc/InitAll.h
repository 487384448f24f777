//===- InitAll.h - register every dnnc dialect and pass ----------*- C++
//-*-===//
//
// One place that knows all dialects and passes dnnc's tools use.
//
//===----------------------------------------------------------------------===//

#ifndef DNNC_INITALL_H
#define DNNC_INITALL_H

#include "dnnc/Conversion/Passes.h"
#include "dnnc/Dialect/Dist/IR/DistDialect.h"
#include "dnnc/Dialect/Dist/Transforms/Passes.h"
#include "dnnc/Dialect/Dnn/IR/Dnn.h"
#include "dnnc/Dialect/Dnn/Transforms/Passes.h"
#include "dnnc/Pipelines/Pipelines.h"
#include "dnnc/Planner/Passes.h"
#include "dnnc/Target/CPU/CPUTarget.h"
#include "dnnc/Target/Common/Passes.h"
#include "dnnc/Target/CUDA/CUDATarget.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/FuncBufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/Linalg/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Transforms/Passes.h"

namespace dnnc {

/// Adds the dialects dnnc's IR may contain to `registry`.
inline void registerAllDialects(mlir::DialectRegistry &registry) {
  registry.insert<dnn::DnnDialect, dist::DistDialect, mlir::func::FuncDialect,
                  mlir::arith::ArithDialect, mlir::tensor::TensorDialect,
                  mlir::linalg::LinalgDialect, mlir::math::MathDialect,
                  mlir::scf::SCFDialect, mlir::memref::MemRefDialect,
                  mlir::bufferization::BufferizationDialect,
                  mlir::LLVM::LLVMDialect>();
  // Bufferization and LLVM IR translation of the upstream ops dnnc lowers to.
  mlir::arith::registerBufferizableOpInterfaceExternalModels(registry);
  mlir::bufferization::func_ext::registerBufferizableOpInterfaceExternalModels(
      registry);
  mlir::linalg::registerBufferizableOpInterfaceExternalModels(registry);
  mlir::scf::registerBufferizableOpInterfaceExternalModels(registry);
  mlir::tensor::registerBufferizableOpInterfaceExternalModels(registry);
  mlir::registerBuiltinDialectTranslation(registry);
  mlir::registerLLVMDialectTranslation(registry);
}

/// Registers dnnc's passes and pipelines, and the upstream passes they build
/// on (generic transforms, linalg, bufferization, memref, conversions), with
/// the global registry, so every step of a pipeline can be run alone.
inline void registerAllPasses() {
  mlir::registerTransformsPasses();
  mlir::registerLinalgPasses();
  mlir::bufferization::registerBufferizationPasses();
  mlir::bufferization::registerBufferizationPipelines();
  mlir::memref::registerMemRefPasses();
  mlir::registerConversionPasses();
  dist::registerDistPasses();
  registerDnncConversionPasses();
  dnn::registerDnnPasses();
  planner::registerPlannerPasses();
  registerDnncTargetCommonPasses();
  registerDnncCPUPasses();
  registerPipelines();
  registerCUDAPipelines();
}

} // namespace dnnc

#endif // DNNC_INITALL_H
