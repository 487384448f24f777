//===- EmitEntry.cpp - the runtime entry point --------------*- C++ -*-===//
//
// Implements dnn-cpu-emit-entry: `dnnc_entry(void **buffers)` unpacks the
// buffer array the runtime passes and calls @main (`dnnc_entry_stage_K`
// calls @stage_K in a pipelined plan).
//
//===----------------------------------------------------------------------===//

#include "dnnc/Target/CPU/CPUTarget.h"
#include "dnnc/Target/Common/RuntimeABI.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

namespace dnnc {
#define GEN_PASS_DEF_EMITENTRYPASS
#include "dnnc/Target/CPU/Passes.h.inc"
} // namespace dnnc

using namespace mlir;

namespace {
struct EmitEntryPass : public dnnc::impl::EmitEntryPassBase<EmitEntryPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    // @main, or the stage functions of a pipelined plan.
    SmallVector<LLVM::LLVMFuncOp> functions;
    // (not the functions the nests of these were outlined into).
    auto isProgram = [](StringRef name) {
      unsigned stage;
      return name == "main" ||
             (name.consume_front("stage_") && !name.empty() &&
              !name.getAsInteger(10, stage));
    };
    for (auto func : module.getOps<LLVM::LLVMFuncOp>())
      if (!func.isExternal() && isProgram(func.getName()))
        functions.push_back(func);
    if (functions.empty()) {
      module.emitError("no LLVM function @main (or @stage_K) to wrap");
      return signalPassFailure();
    }
    for (LLVM::LLVMFuncOp func : functions)
      if (failed(wrap(module, func)))
        return signalPassFailure();
  }

  /// Adds the entry of `func`: `getEntrySymbol(name)(void **buffers)`
  /// loads each pointer argument from the array and calls it.
  LogicalResult wrap(ModuleOp module, LLVM::LLVMFuncOp func) {
    MLIRContext *ctx = &getContext();
    auto ptr = LLVM::LLVMPointerType::get(ctx);
    LLVM::LLVMFunctionType funcType = func.getFunctionType();
    if (!isa<LLVM::LLVMVoidType>(funcType.getReturnType()) ||
        llvm::any_of(funcType.getParams(), [&](Type t) { return t != ptr; }))
      return func.emitError()
             << "@" << func.getName()
             << " must take only buffer pointers and return nothing "
                "(bare-pointer calling convention, results as out-params)";
    std::string symbol = dnnc::getEntrySymbol(func.getName());
    if (module.lookupSymbol(symbol))
      return module.emitError("symbol ") << symbol << " is already defined";
    OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
    Location loc = func.getLoc();
    auto entry = LLVM::LLVMFuncOp::create(
        b, loc, symbol,
        LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx), {ptr}));
    Block *body = entry.addEntryBlock(b);
    b.setInsertionPointToStart(body);
    SmallVector<Value> args;
    for (unsigned i = 0, e = funcType.getNumParams(); i < e; ++i) {
      Value slot =
          LLVM::GEPOp::create(b, loc, ptr, ptr, body->getArgument(0),
                              ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(i)});
      args.push_back(LLVM::LoadOp::create(b, loc, ptr, slot));
    }
    LLVM::CallOp::create(b, loc, func, args);
    LLVM::ReturnOp::create(b, loc, ValueRange());
    func.setLinkage(LLVM::Linkage::Internal);
    dropForeignArgAttrs(func);
    return success();
  }

  /// Drops the argument attributes of other dialects than `llvm` from
  /// `func` (`dnn.name`, `dnn.weight`: read by the packager before
  /// lowering). LLVM IR translation does not know them and warns once per
  /// argument with the whole function printed, weights included: quadratic
  /// in the program size.
  static void dropForeignArgAttrs(LLVM::LLVMFuncOp func) {
    for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i) {
      SmallVector<NamedAttribute> kept;
      for (NamedAttribute attr : function_interface_impl::getArgAttrs(func, i))
        if (attr.getName().strref().starts_with("llvm."))
          kept.push_back(attr);
      func.setArgAttrs(i, kept);
    }
  }
};
} // namespace
