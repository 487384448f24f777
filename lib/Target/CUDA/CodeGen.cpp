//===- CodeGen.cpp - CUDA C++ to a shared object ------------*- C++ -*-===//
//
// Builds the CUDA C++ of a rank with nvcc into an ELF shared object holding
// the host code and a fat binary with one cubin per requested architecture
// (or, for host emulation, with the host C++ compiler).
//
//===----------------------------------------------------------------------===//

#include "dnnc/Target/CUDA/CUDATarget.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"

using namespace mlir;

/// Finds nvcc: $DNNC_NVCC, PATH, then /usr/local/cuda/bin.
static std::string findNvcc() {
  if (const char *env = std::getenv("DNNC_NVCC"))
    return env;
  if (auto p = llvm::sys::findProgramByName("nvcc"))
    return *p;
  if (llvm::sys::fs::can_execute("/usr/local/cuda/bin/nvcc"))
    return "/usr/local/cuda/bin/nvcc";
  return "";
}

/// Finds the host C++ compiler: $DNNC_CXX, then c++ on PATH.
static std::string findHostCompiler() {
  if (const char *env = std::getenv("DNNC_CXX"))
    return env;
  if (auto p = llvm::sys::findProgramByName("c++"))
    return *p;
  return "";
}

/// Removes a temporary directory and its files when it goes out of scope.
struct TempDir {
  llvm::SmallString<128> path;
  ~TempDir() {
    if (!path.empty())
      llvm::sys::fs::remove_directories(path);
  }
};

bool dnnc::compileCUDAToSharedObject(ModuleOp module,
                                     const CUDABuildOptions &options,
                                     std::string &object, std::string &error) {
  std::string source;
  {
    llvm::raw_string_ostream os(source);
    CUDASourceOptions sourceOptions;
    sourceOptions.hostEmulation = options.hostEmulation;
    // The translation reports through diagnostics: keep the first error.
    std::string reason;
    ScopedDiagnosticHandler handler(module.getContext(), [&](Diagnostic &d) {
      if (d.getSeverity() == DiagnosticSeverity::Error && reason.empty())
        reason = d.str();
      return success();
    });
    if (failed(translateToCUDA(module, os, sourceOptions))) {
      error = "CUDA C++ generation failed" +
              (reason.empty() ? std::string() : ": " + reason);
      return false;
    }
  }
  TempDir dir;
  if (llvm::sys::fs::createUniqueDirectory("dnnc-cuda", dir.path)) {
    error = "cannot create a temporary directory for code generation";
    return false;
  }
  llvm::SmallString<128> sourcePath(dir.path), outputPath(dir.path),
      logPath(dir.path);
  llvm::sys::path::append(sourcePath,
                          options.hostEmulation ? "rank.cpp" : "rank.cu");
  llvm::sys::path::append(outputPath, "rank.so");
  llvm::sys::path::append(logPath, "compiler.log");
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(sourcePath, ec);
    if (ec) {
      error = "cannot write " + sourcePath.str().str() + ": " + ec.message();
      return false;
    }
    os << source;
  }

  // A copy of the source (and below, of the shared object) for inspection:
  // $DNNC_CUDA_KEEP_DIR.
  if (const char *keep = std::getenv("DNNC_CUDA_KEEP_DIR")) {
    llvm::SmallString<128> keptPath(keep);
    llvm::sys::path::append(keptPath, llvm::sys::path::filename(sourcePath));
    std::error_code ec;
    llvm::raw_fd_ostream os(keptPath, ec);
    if (!ec)
      os << source;
  }

  std::string compiler;
  std::vector<std::string> args;
  if (options.hostEmulation) {
    compiler = findHostCompiler();
    if (compiler.empty()) {
      error = "no host C++ compiler for the cuda host emulation (set "
              "DNNC_CXX)";
      return false;
    }
    args = {compiler,
            "-std=c++17",
            "-O2",
            "-fPIC",
            "-shared",
            "-w",
            "-I/usr/local/cuda/include"};
  } else {
    compiler = findNvcc();
    if (compiler.empty()) {
      error = "nvcc not found (install the CUDA toolkit or set DNNC_NVCC)";
      return false;
    }
    args = {compiler,  "-std=c++17", "-O3",
            "-shared", "-Xcompiler", "-fPIC",
            "-cudart", "shared",     "--expt-relaxed-constexpr",
            "-w"};
    SmallVector<StringRef> archs;
    StringRef(options.archs).split(archs, ',', -1, /*KeepEmpty=*/false);
    if (archs.empty()) {
      error = "no GPU architecture to build for";
      return false;
    }
    for (StringRef arch : archs) {
      arch = arch.trim();
      if (!arch.consume_front("sm_") || arch.empty() ||
          !llvm::all_of(arch, llvm::isDigit)) {
        error = "bad GPU architecture '" + arch.str() +
                "' (expected sm_NN, e.g. sm_90)";
        return false;
      }
      args.push_back("-gencode");
      args.push_back(("arch=compute_" + arch + ",code=sm_" + arch).str());
    }
  }
  args.push_back("-o");
  args.push_back(outputPath.str().str());
  args.push_back(sourcePath.str().str());

  SmallVector<StringRef> argRefs(args.begin(), args.end());
  std::optional<StringRef> redirects[] = {std::nullopt, logPath.str(),
                                          logPath.str()};
  std::string execError;
  int rc = llvm::sys::ExecuteAndWait(compiler, argRefs, std::nullopt, redirects,
                                     0, 0, &execError);
  if (rc != 0) {
    // The first few error lines of the compiler's log.
    std::string log;
    if (auto buffer = llvm::MemoryBuffer::getFile(logPath)) {
      SmallVector<StringRef> lines;
      (*buffer)->getBuffer().split(lines, '\n');
      unsigned shown = 0;
      for (StringRef line : lines)
        if (line.contains("error") && shown++ < 3)
          log += (log.empty() ? "" : "; ") + line.trim().str();
    }
    error = "building the generated CUDA C++ failed (" + compiler + ", exit " +
            std::to_string(rc) + ")" +
            (execError.empty() ? "" : ": " + execError) +
            (log.empty() ? "" : ": " + log);
    return false;
  }
  auto buffer = llvm::MemoryBuffer::getFile(outputPath, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer) {
    error = "cannot read the built shared object";
    return false;
  }
  object.assign((*buffer)->getBufferStart(), (*buffer)->getBufferSize());
  if (const char *keep = std::getenv("DNNC_CUDA_KEEP_DIR")) {
    llvm::SmallString<128> keptPath(keep);
    llvm::sys::path::append(keptPath, "rank.so");
    std::error_code ec;
    llvm::raw_fd_ostream os(keptPath, ec);
    if (!ec)
      os << object;
  }
  return true;
}
