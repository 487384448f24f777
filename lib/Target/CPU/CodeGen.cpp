//===- CodeGen.cpp - LLVM dialect to a shared object --------*- C++ -*-===//
//
// Translates the cpu device module to LLVM IR, splits it into parts (whole
// functions) that are optimised for the host CPU and compiled into object
// files on parallel threads, and links those into the ELF shared object
// that plan.bin carries.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Target/CPU/CPUTarget.h"

#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/VFABIDemangler.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/ThreadPool.h"
#include "llvm/Support/Threading.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"
#include "llvm/Transforms/Utils/SplitModule.h"

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

/// The LLVM target machine for `cpu` (see compileToSharedObject), or null
/// with `error` set.
static std::unique_ptr<llvm::TargetMachine>
createTargetMachine(StringRef cpu, std::string &error) {
  llvm::Triple triple(llvm::sys::getDefaultTargetTriple());
  std::string lookupError;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, lookupError);
  if (!target) {
    error = "no LLVM target for " + triple.str() + ": " + lookupError;
    return nullptr;
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
      return nullptr;
    }
  }
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      triple, cpuName, features.getString(), {}, llvm::Reloc::PIC_,
      std::nullopt, llvm::CodeGenOptLevel::Aggressive));
  if (!machine)
    error = "cannot create an LLVM target machine for " + triple.str();
  return machine;
}

/// The number of parts the code generation of `module` is split into: one
/// per hardware thread, but no more than one per ~4000 instructions (a
/// part's fixed cost) or per function.
static unsigned countParts(const llvm::Module &module) {
  size_t instructions = 0, functions = 0;
  for (const llvm::Function &function : module) {
    if (function.isDeclaration())
      continue;
    ++functions;
    instructions += function.getInstructionCount();
  }
  unsigned threads = std::max(1u, llvm::hardware_concurrency().compute_thread_count());
  size_t bySize = std::max<size_t>(1, instructions / 4000);
  return static_cast<unsigned>(
      std::min<size_t>({threads, bySize, std::max<size_t>(functions, 1)}));
}

/// Optimizes `module` (-O3) for `machine` and compiles it into the object
/// file `path`.
static bool compileModule(llvm::Module &module, llvm::TargetMachine &machine,
                          llvm::StringRef path, std::string &error) {
  auto optimize =
      makeOptimizingTransformer(/*optLevel=*/3, /*sizeLevel=*/0, &machine);
  if (llvm::Error err = optimize(&module)) {
    error = "LLVM optimisation failed: " + llvm::toString(std::move(err));
    return false;
  }
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec) {
    error = "cannot write the object file: " + ec.message();
    return false;
  }
  llvm::legacy::PassManager codegen;
  if (machine.addPassesToEmitFile(codegen, os, nullptr,
                                  llvm::CodeGenFileType::ObjectFile)) {
    error = "the LLVM target cannot emit object files";
    return false;
  }
  codegen.run(module);
  os.flush();
  if (os.has_error()) {
    os.clear_error();
    error = "cannot write the object file";
    return false;
  }
  return true;
}

/// Declares in `part` the vector variants its functions name in their
/// `vector-function-abi-variant` attributes (dnn-cpu-approximate-math's
/// shared math functions) where the part lacks them: LLVM's loop vectorizer
/// calls only variants the module declares, and SplitModule, which sees no
/// reference to them, leaves them in one part.
static void declareVectorVariants(llvm::Module &part) {
  llvm::SmallVector<llvm::Function *> scalars;
  for (llvm::Function &function : part)
    if (function.hasFnAttribute(llvm::VFABI::MappingsAttrName))
      scalars.push_back(&function);
  for (llvm::Function *scalar : scalars) {
    llvm::SmallVector<llvm::StringRef> mappings;
    scalar->getFnAttribute(llvm::VFABI::MappingsAttrName)
        .getValueAsString()
        .split(mappings, ',');
    for (llvm::StringRef mapping : mappings) {
      std::optional<llvm::VFInfo> info = llvm::VFABI::tryDemangleForVFABI(
          mapping, scalar->getFunctionType());
      if (!info || part.getFunction(info->VectorName))
        continue;
      llvm::Function *variant = llvm::Function::Create(
          llvm::VFABI::createFunctionType(*info, scalar->getFunctionType()),
          llvm::GlobalValue::ExternalLinkage, info->VectorName, part);
      variant->setVisibility(scalar->getVisibility());
      variant->setDoesNotThrow();
      variant->setWillReturn();
      variant->setDoesNotAccessMemory();
    }
  }
}

/// compileModule for one part of a split module, given as bitcode, in a
/// context and target machine of its own (parts run on separate threads).
static bool compilePart(llvm::StringRef bitcode, StringRef cpu,
                        llvm::StringRef path, std::string &error) {
  llvm::LLVMContext context;
  llvm::Expected<std::unique_ptr<llvm::Module>> part = llvm::parseBitcodeFile(
      llvm::MemoryBufferRef(bitcode, "part"), context);
  if (!part) {
    error = "cannot read a part of the module back: " +
            llvm::toString(part.takeError());
    return false;
  }
  std::unique_ptr<llvm::TargetMachine> machine =
      createTargetMachine(cpu, error);
  return machine && compileModule(**part, *machine, path, error);
}

bool dnnc::compileToSharedObject(ModuleOp module, StringRef cpu,
                                 std::string &object, std::string &error,
                                 TimingScope &timing) {
  static std::once_flag initTargets;
  std::call_once(initTargets, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
  registerBuiltinDialectTranslation(*module.getContext());
  registerLLVMDialectTranslation(*module.getContext());

  // Checked first: an unknown --target-cpu is the user's error to see
  // before any work.
  std::unique_ptr<llvm::TargetMachine> machine =
      createTargetMachine(cpu, error);
  if (!machine)
    return false;

  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule;
  {
    TimingScope translateTiming = timing.nest("translate to LLVM IR");
    llvmModule = translateModuleToLLVMIR(module, llvmContext, "dnnc");
  }
  if (!llvmModule) {
    error = "cannot translate the device module to LLVM IR";
    return false;
  }
  llvmModule->setDataLayout(machine->createDataLayout());
  llvmModule->setTargetTriple(machine->getTargetTriple());

  // One object file per part, created once the number of parts is known.
  std::vector<TempFile> objectFiles;
  auto createObjectFiles = [&](size_t count) {
    objectFiles = std::vector<TempFile>(count);
    for (TempFile &file : objectFiles) {
      int fd;
      if (llvm::sys::fs::createTemporaryFile("dnnc", "o", fd, file.path)) {
        error = "cannot create temporary files for code generation";
        return false;
      }
      llvm::sys::Process::SafelyCloseFileDescriptor(fd);
    }
    return true;
  };
  unsigned partCount = countParts(*llvmModule);
  if (partCount == 1) {
    if (!createObjectFiles(1))
      return false;
    TimingScope compileTiming = timing.nest("optimize and compile (1 part)");
    if (!compileModule(*llvmModule, *machine, objectFiles[0].path, error))
      return false;
  } else {
    // The module in parts (whole functions; internal symbols another part
    // calls become hidden), each optimized and compiled on its own thread:
    // the functions are independent (the loop nests are never inlined).
    std::vector<llvm::SmallVector<char, 0>> parts;
    {
      TimingScope splitTiming = timing.nest("split into parts");
      llvm::SplitModule(
          *llvmModule, partCount,
          [&](std::unique_ptr<llvm::Module> part) {
            declareVectorVariants(*part);
            parts.emplace_back();
            llvm::raw_svector_ostream os(parts.back());
            llvm::WriteBitcodeToFile(*part, os);
          },
          /*PreserveLocals=*/false, /*RoundRobin=*/true);
      llvmModule.reset();
    }
    if (!createObjectFiles(parts.size()))
      return false;
    std::vector<std::string> partErrors(parts.size());
    {
      TimingScope compileTiming = timing.nest(
          "optimize and compile (" + std::to_string(parts.size()) + " parts)");
      llvm::DefaultThreadPool pool(
          llvm::hardware_concurrency(static_cast<unsigned>(parts.size())));
      for (size_t i = 0; i < parts.size(); ++i)
        pool.async([&, i] {
          compilePart(llvm::StringRef(parts[i].data(), parts[i].size()), cpu,
                      objectFiles[i].path, partErrors[i]);
        });
      pool.wait();
    }
    for (const std::string &partError : partErrors)
      if (!partError.empty()) {
        error = partError;
        return false;
      }
  }

  TimingScope linkTiming = timing.nest("link (ld.lld)");
  TempFile sharedFile;
  if (llvm::sys::fs::createTemporaryFile("dnnc", "so", sharedFile.path)) {
    error = "cannot create temporary files for code generation";
    return false;
  }
  std::string linker = findLinker();
  if (linker.empty()) {
    error = "ld.lld not found (install lld-22 or set DNNC_LD)";
    return false;
  }
  std::string linkError;
  llvm::SmallVector<llvm::StringRef> args = {linker, "-shared", "--as-needed",
                                             "-o", sharedFile.path};
  for (const TempFile &file : objectFiles)
    args.push_back(file.path);
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
