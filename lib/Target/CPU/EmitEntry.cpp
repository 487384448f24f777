//===- EmitEntry.cpp - the runtime entry point --------------*- C++ -*-===//
//
// Implements dnn-cpu-emit-entry: `dnnc_entry(void **buffers)` unpacks the
// buffer array the runtime passes and calls @main.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Target/CPU/CPUTarget.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

namespace dnnc {
#define GEN_PASS_DEF_EMITENTRYPASS
#include "dnnc/Target/CPU/Passes.h.inc"
} // namespace dnnc

using namespace mlir;

namespace {
struct EmitEntryPass : public dnnc::impl::EmitEntryPassBase<EmitEntryPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    auto main = module.lookupSymbol<LLVM::LLVMFuncOp>("main");
    if (!main || main.isExternal()) {
      module.emitError("no LLVM function @main to wrap");
      return signalPassFailure();
    }
    auto ptr = LLVM::LLVMPointerType::get(ctx);
    LLVM::LLVMFunctionType mainType = main.getFunctionType();
    if (!isa<LLVM::LLVMVoidType>(mainType.getReturnType()) ||
        llvm::any_of(mainType.getParams(), [&](Type t) { return t != ptr; })) {
      main.emitError("@main must take only buffer pointers and return "
                     "nothing (bare-pointer calling convention, results "
                     "as out-params)");
      return signalPassFailure();
    }
    if (module.lookupSymbol(dnnc::kCPUEntrySymbol)) {
      module.emitError("symbol ")
          << dnnc::kCPUEntrySymbol << " is already defined";
      return signalPassFailure();
    }
    OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
    Location loc = main.getLoc();
    auto entry = LLVM::LLVMFuncOp::create(
        b, loc, dnnc::kCPUEntrySymbol,
        LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx), {ptr}));
    Block *body = entry.addEntryBlock(b);
    b.setInsertionPointToStart(body);
    SmallVector<Value> args;
    for (unsigned i = 0, e = mainType.getNumParams(); i < e; ++i) {
      Value slot =
          LLVM::GEPOp::create(b, loc, ptr, ptr, body->getArgument(0),
                              ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(i)});
      args.push_back(LLVM::LoadOp::create(b, loc, ptr, slot));
    }
    LLVM::CallOp::create(b, loc, main, args);
    LLVM::ReturnOp::create(b, loc, ValueRange());
    main.setLinkage(LLVM::Linkage::Internal);
  }
};
} // namespace
