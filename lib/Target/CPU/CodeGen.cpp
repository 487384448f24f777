//===- CodeGen.cpp - LLVM dialect to a shared object --------*- C++ -*-===//
//
// Translates the cpu device module to LLVM IR, optimises it for the host CPU,
// emits an object file and links it into the ELF shared object that
// plan.bin carries.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Target/CPU/CPUTarget.h"

#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"

#include <mutex>

using namespace mlir;

/// Finds ld.lld: $DNNC_LD, the LLVM tools directory found at configure time,
/// then PATH.
static std::string findLinker() {
  if (const char *env = std::getenv("DNNC_LD"))
    return env;
  if (llvm::sys::fs::can_execute(DNNC_LLD_PATH))
    return DNNC_LLD_PATH;
  if (auto p = llvm::sys::findProgramByName("ld.lld"))
    return *p;
  return "";
}

/// Removes a temporary file when it goes out of scope.
struct TempFile {
  llvm::SmallString<128> path;
  ~TempFile() {
    if (!path.empty())
      llvm::sys::fs::remove(path);
  }
};

bool dnnc::compileToSharedObject(ModuleOp module, StringRef cpu,
                                 std::string &object, std::string &error) {
  static std::once_flag initTargets;
  std::call_once(initTargets, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
  registerBuiltinDialectTranslation(*module.getContext());
  registerLLVMDialectTranslation(*module.getContext());

  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, llvmContext, "dnnc");
  if (!llvmModule) {
    error = "cannot translate the device module to LLVM IR";
    return false;
  }

  llvm::Triple triple(llvm::sys::getDefaultTargetTriple());
  std::string lookupError;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, lookupError);
  if (!target) {
    error = "no LLVM target for " + triple.str() + ": " + lookupError;
    return false;
  }
  llvm::SubtargetFeatures features;
  std::string cpuName = cpu.str();
  if (cpu == "native") {
    cpuName = llvm::sys::getHostCPUName().str();
    for (const auto &feature : llvm::sys::getHostCPUFeatures())
      features.AddFeature(feature.first(), feature.second);
  } else {
    llvm::MCSubtargetInfo *info =
        target->createMCSubtargetInfo(triple, "", "");
    bool known = info && info->isCPUStringValid(cpuName);
    delete info;
    if (!known) {
      error = "--target-cpu=" + cpuName + ": unknown CPU for " + triple.str();
      return false;
    }
  }
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      triple, cpuName, features.getString(), {},
      llvm::Reloc::PIC_, std::nullopt, llvm::CodeGenOptLevel::Aggressive));
  if (!machine) {
    error = "cannot create an LLVM target machine for " + triple.str();
    return false;
  }
  llvmModule->setDataLayout(machine->createDataLayout());
  llvmModule->setTargetTriple(triple);

  auto optimize =
      makeOptimizingTransformer(/*optLevel=*/3, /*sizeLevel=*/0, machine.get());
  if (llvm::Error err = optimize(llvmModule.get())) {
    error = "LLVM optimisation failed: " + llvm::toString(std::move(err));
    return false;
  }

  TempFile objectFile, sharedFile;
  int fd;
  if (llvm::sys::fs::createTemporaryFile("dnnc", "o", fd, objectFile.path) ||
      llvm::sys::fs::createTemporaryFile("dnnc", "so", sharedFile.path)) {
    error = "cannot create temporary files for code generation";
    return false;
  }
  {
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    llvm::legacy::PassManager codegen;
    if (machine->addPassesToEmitFile(codegen, os, nullptr,
                                     llvm::CodeGenFileType::ObjectFile)) {
      error = "the LLVM target cannot emit object files";
      return false;
    }
    codegen.run(*llvmModule);
    os.flush();
    if (os.has_error()) {
      os.clear_error();
      error = "cannot write the object file";
      return false;
    }
  }

  std::string linker = findLinker();
  if (linker.empty()) {
    error = "ld.lld not found (install lld-22 or set DNNC_LD)";
    return false;
  }
  std::string linkError;
  llvm::SmallVector<llvm::StringRef> args = {
      linker, "-shared", "--as-needed", "-o", sharedFile.path,
      objectFile.path};
  // The libcalls LLVM's code generation may emit (bf16 conversions such as
  // __truncsfbf2 that libgcc lacks) come from compiler-rt's builtins, linked
  // statically: only the members used are pulled in.
  llvm::StringRef builtins = DNNC_COMPILER_RT_BUILTINS;
  if (!builtins.empty() && llvm::sys::fs::exists(builtins))
    args.push_back(builtins);
  int rc = llvm::sys::ExecuteAndWait(linker, args, std::nullopt, {}, 0, 0,
                                     &linkError);
  if (rc != 0) {
    error = "linking the shared object failed (" + linker + ", exit " +
            std::to_string(rc) + ")" +
            (linkError.empty() ? "" : ": " + linkError);
    return false;
  }
  auto buffer = llvm::MemoryBuffer::getFile(sharedFile.path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer) {
    error = "cannot read the linked shared object";
    return false;
  }
  object.assign((*buffer)->getBufferStart(), (*buffer)->getBufferSize());
  return true;
}
