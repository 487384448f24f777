//===- CPUTarget.h - the cpu target of the device phase -------*- C++ -*-===//
//
// Lowers a single-rank `dnn` module to native code for the CPU backend: the
// pass pipeline to the LLVM dialect and the LLVM code generation into a
// shared object that the runtime loads.
//
//===----------------------------------------------------------------------===//

#ifndef DNNC_TARGET_CPU_CPUTARGET_H
#define DNNC_TARGET_CPU_CPUTARGET_H

#include "dnnc/Dialect/Dnn/IR/Dnn.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"

#include <string>

namespace dnnc {

#define GEN_PASS_DECL
#include "dnnc/Target/CPU/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "dnnc/Target/CPU/Passes.h.inc"

/// Adds the cpu device pipeline: dnn (weights outlined) -> linalg on tensors
/// -> fused -> bufferized, results as out-params, static temporaries in the
/// workspace arena (dnn-plan-memory) -> BLAS calls and loops -> LLVM dialect
/// with the `dnnc_entry` wrapper. `precision` (`dnnc --precision`) is
/// applied first by dnn-convert-precision; bf16/f16 arithmetic is then
/// computed in f32.
void buildCPUDevicePipeline(mlir::OpPassManager &pm,
                            dnn::Precision precision = dnn::Precision::FP32);

/// Compiles an LLVM-dialect module into the bytes of an ELF shared object
/// (optimised at -O3, linked with ld.lld) for the CPU `cpu`: `native` (the
/// host CPU and its features), or an LLVM CPU name such as `x86-64-v3`. The
/// functions are optimised and compiled in parts on parallel threads; the
/// steps are timed under `timing`. Returns false and sets `error` on
/// failure.
bool compileToSharedObject(mlir::ModuleOp module, llvm::StringRef cpu,
                           std::string &object, std::string &error,
                           mlir::TimingScope &timing);

/// Registers the cpu pipeline as `dnnc-cpu-device` with the pass registry.
void registerCPUPipelines();

} // namespace dnnc

#endif // DNNC_TARGET_CPU_CPUTARGET_H
