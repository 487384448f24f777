//===- DnncMain.cpp - the dnnc compiler driver --------------*- C++ -*-===//
//
// Command line of `dnnc`: import an ONNX model, run the phases up to
// `--compile-to`, write the result. Errors are single `error:` lines and no
// partial output file is left behind.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Tools/DnncMain.h"
#include "dnnc/InitAll.h"
#include "dnnc/Target/CPU/CPUTarget.h"
#include "dnnc/Target/ONNX/ImportONNX.h"
#include "dnnc/Target/Package/Package.h"

#include "mlir/Debug/CLOptionsSetup.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
namespace cl = llvm::cl;

namespace {
/// dnnc's own options, shown by --help (the MLIR options stay usable and are
/// listed by --help-hidden).
struct DnncOptions {
  cl::OptionCategory category{"dnnc options"};

  cl::opt<std::string> input{cl::Positional, cl::desc("<model.onnx>"),
                             cl::cat(category)};
  cl::opt<std::string> output{
      "o",
      cl::desc("Output file ('-' for stdout; default: stdout with "
               "--compile-to, plan.bin otherwise)"),
      cl::value_desc("file"), cl::init(""), cl::cat(category)};
  cl::opt<std::string> compileTo{
      "compile-to",
      cl::desc("Stop after this phase and print its MLIR: import (the dnn "
               "module as imported), graph (canonicalized, folded) or device "
               "(the per-rank program lowered for the target)"),
      cl::value_desc("phase"), cl::init(""), cl::cat(category)};
  cl::opt<std::string> targetCPU{
      "target-cpu",
      cl::desc("CPU to generate code for with --target=cpu: native (this "
               "machine, the default) or an LLVM CPU name such as x86-64-v3 "
               "for plans that run elsewhere"),
      cl::value_desc("name"), cl::init("native"), cl::cat(category)};
  cl::opt<std::string> target{
      "target", cl::desc("Code generation target: cpu (cuda is not built yet)"),
      cl::value_desc("cpu|cuda"), cl::init("cpu"), cl::cat(category)};
  cl::list<std::string> bind{
      "bind",
      cl::desc("Fold graph input NAME into a constant read from FILE.pb (a "
               "serialized ONNX TensorProto); repeatable"),
      cl::value_desc("NAME=FILE.pb"), cl::cat(category)};
  cl::opt<std::string> batch{
      "batch",
      cl::desc("Value of the symbolic leading dimension of every graph input"),
      cl::value_desc("N"), cl::init(""), cl::cat(category)};
  cl::list<std::string> inputShape{
      "input-shape",
      cl::desc("Static shape of graph input NAME, e.g. x=8x128; repeatable"),
      cl::value_desc("NAME=D0xD1..."), cl::cat(category)};
};
} // namespace

/// Prints `error: message` on one line (control characters, which hostile
/// models can put into names, are escaped) and returns the exit code.
static int reportError(const llvm::Twine &message) {
  std::string text = message.str();
  std::string line;
  for (unsigned char c : text) {
    if (c < 0x20 || c == 0x7f)
      line += llvm::formatv("\\x{0:x-2}", static_cast<unsigned>(c)).str();
    else
      line.push_back(static_cast<char>(c));
  }
  llvm::errs() << "error: " << line << "\n";
  return 1;
}

/// Formats a location for a one-line diagnostic.
static std::string describeLocation(Location loc) {
  if (auto name = dyn_cast<NameLoc>(loc))
    return "node '" + name.getName().str() + "'";
  if (auto file = dyn_cast<FileLineColLoc>(loc))
    return file.getFilename().str();
  if (auto fused = dyn_cast<FusedLoc>(loc))
    if (!fused.getLocations().empty())
      return describeLocation(fused.getLocations().front());
  return "";
}

int dnnc::dnncMain(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  registerAsmPrinterCLOptions();
  registerMLIRContextCLOptions();
  registerPassManagerCLOptions();
  registerDefaultTimingManagerCLOptions();
  DnncOptions opts;
  cl::HideUnrelatedOptions(opts.category);
  std::string flagErrors;
  llvm::raw_string_ostream flagErrorStream(flagErrors);
  if (!cl::ParseCommandLineOptions(
          argc, argv,
          "dnnc: compile an ONNX model into a distributed program\n\n"
          "  dnnc MODEL.onnx --compile-to=import [-o FILE]\n",
          &flagErrorStream)) {
    // LLVM prefixes its messages with the program name; keep the first line.
    llvm::StringRef first = llvm::StringRef(flagErrors).split('\n').first;
    first.consume_front(llvm::sys::path::filename(argv[0]));
    first.consume_front(": ");
    first = first.trim();
    return reportError(first.empty() ? "invalid command line" : first);
  }

  if (opts.input.empty())
    return reportError("no input model given (usage: dnnc MODEL.onnx ...)");
  int64_t batch = 0;
  if (!opts.batch.empty() &&
      (llvm::StringRef(opts.batch).getAsInteger(10, batch) || batch < 1))
    return reportError("--batch=" + opts.batch +
                       ": expected a positive integer");

  std::optional<Phase> phase;
  if (!opts.compileTo.empty()) {
    phase = parsePhase(opts.compileTo);
    if (!phase)
      return reportError("--compile-to=" + opts.compileTo +
                         ": unknown phase (expected import, graph or device)");
  }
  if (opts.target != "cpu")
    return reportError("--target=" + opts.target +
                       ": unsupported target (this dnnc builds: cpu)");
  std::string outPath = opts.output.getValue();
  if (outPath.empty())
    outPath = phase ? "-" : "plan.bin";

  ONNXImportOptions importOptions;
  importOptions.batch = batch;
  for (const std::string &b : opts.bind) {
    auto [name, file] = llvm::StringRef(b).split('=');
    if (name.empty() || file.empty())
      return reportError("--bind " + b + ": expected NAME=FILE.pb");
    importOptions.bindings.emplace_back(name.str(), file.str());
  }
  for (const std::string &s : opts.inputShape) {
    auto [name, dims] = llvm::StringRef(s).split('=');
    llvm::SmallVector<int64_t> shape;
    if (name.empty() || !llvm::StringRef(s).contains('=') ||
        !parseShapeString(dims, shape))
      return reportError("--input-shape " + s +
                         ": expected NAME=D0xD1... with non-negative "
                         "integer extents");
    importOptions.inputShapes.emplace_back(name.str(), shape);
  }

  DialectRegistry registry;
  registerAllDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();

  std::string error;
  OwningOpRef<ModuleOp> module =
      importONNXModel(context, opts.input, importOptions, error);
  if (!module)
    return reportError(error);

  // Phases after import report through diagnostics: keep the first error.
  std::string firstError;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    if (diag.getSeverity() != DiagnosticSeverity::Error)
      return success();
    if (firstError.empty()) {
      std::string where = describeLocation(diag.getLocation());
      firstError =
          opts.input + ": " + (where.empty() ? "" : where + ": ") + diag.str();
    }
    return success();
  });
  auto runPipeline = [&](llvm::function_ref<void(PassManager &)> build) {
    PassManager pm(&context);
    if (failed(applyPassManagerCLOptions(pm)))
      return false;
    build(pm);
    return succeeded(pm.run(*module));
  };
  auto passError = [&] {
    return reportError(firstError.empty() ? opts.input + ": a pass failed"
                                          : firstError);
  };

  if (phase) {
    if (!runPipeline([&](PassManager &pm) { buildPipelineUpTo(pm, *phase); }))
      return passError();
    std::string openError;
    auto out = openOutputFile(outPath, &openError);
    if (!out)
      return reportError("cannot open output '" + outPath + "': " + openError);
    module->print(out->os());
    out->os().flush();
    if (out->os().has_error()) {
      out->os().clear_error();
      return reportError("cannot write output '" + outPath + "'");
    }
    out->keep();
    return 0;
  }

  // Full compilation to plan.bin: graph, device prologue, then the package
  // phase reads the signature and weights before lowering destroys them.
  if (!runPipeline([&](PassManager &pm) {
        buildGraphPipeline(pm);
        buildDevicePrologue(pm);
      }))
    return passError();
  plan::Plan plan;
  if (!collectPlanSignature(*module, opts.target, plan, error))
    return reportError(opts.input + ": " + error);
  if (!runPipeline([&](PassManager &pm) { buildCPUDevicePipeline(pm); }))
    return passError();
  if (!compileToSharedObject(*module, opts.targetCPU, plan.ranks.front().code,
                             error))
    return reportError(opts.input + ": " + error);
  if (!plan::writePlan(plan, outPath, error))
    return reportError(error);
  return 0;
}
