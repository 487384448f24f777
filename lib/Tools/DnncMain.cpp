//===- DnncMain.cpp - the dnnc compiler driver --------------*- C++ -*-===//
//
// Command line of `dnnc`: import an ONNX model, run the phases up to
// `--compile-to`, write the result. Errors are single `error:` lines and no
// partial output file is left behind.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Tools/DnncMain.h"
#include "dnnc/Dialect/Dnn/Transforms/Passes.h"
#include "dnnc/InitAll.h"
#include "dnnc/Pipelines/Pipelines.h"
#include "dnnc/Planner/Cluster.h"
#include "dnnc/Planner/MemoryCheck.h"
#include "dnnc/Planner/Report.h"
#include "dnnc/Planner/Simulate.h"
#include "dnnc/Target/CPU/CPUTarget.h"
#include "dnnc/Target/CUDA/CUDATarget.h"
#include "dnnc/Target/ONNX/ImportONNX.h"
#include "dnnc/Target/Package/Package.h"

#include "mlir/Debug/CLOptionsSetup.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/Timing.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include <sys/resource.h>

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
               "module as imported), graph (canonicalized, folded), plan "
               "(weights outlined, mesh and shardings chosen), partition (the "
               "per-rank program with local types and collectives) or device "
               "(the per-rank program lowered for the target)"),
      cl::value_desc("phase"), cl::init(""), cl::cat(category)};
  cl::opt<bool> planOnly{
      "plan-only",
      cl::desc("Plan without weights: import without reading initializers "
               "(external-data files may be absent; only the values the "
               "importer needs, such as Reshape shapes, are read), run the "
               "graph and plan phases and write the plan-phase MLIR to -o "
               "when given (never plan.bin)"),
      cl::init(false), cl::cat(category)};
  cl::opt<std::string> mesh{
      "mesh",
      cl::desc("Device mesh: auto (every device of the --cluster given; "
               "without --cluster one device, or the product of the "
               "--parallel degrees), N, AxB or AxBxC devices; the axes are "
               "named x, y, z, or after the --parallel degrees above 1 (dp, "
               "tp)"),
      cl::value_desc("auto|N|AxB|AxBxC"), cl::init("auto"), cl::cat(category)};
  cl::opt<std::string> parallel{
      "parallel",
      cl::desc("Force parallelism degrees (any subset, each >= 1): dp "
               "splits every graph input's dim 0, tp is Megatron-style "
               "tensor parallelism, pp the pipeline stages. Without --mesh "
               "(or with --mesh equal to their product) and without pp, the "
               "plan is exactly these degrees; with --mesh=N larger than "
               "their product, or with pp, the planner searches the rest "
               "(it adds pipeline stages and micro-batches of its own only "
               "to plans that are not executed: --plan-only or "
               "--compile-to=plan; an executed plan has the pp and "
               "--microbatches given)"),
      cl::value_desc("dp=A,tp=B,pp=C"), cl::init(""), cl::cat(category)};
  cl::opt<std::string> sharding{
      "sharding",
      cl::desc("How shardings are chosen: auto (from --parallel; replicated "
               "otherwise), replicate (every tensor whole on every device) "
               "or stress[:SEED] (every op sharded along pseudo-random "
               "divisible dims, deterministic per SEED, default 0; a test "
               "mode for partitioning)"),
      cl::value_desc("auto|replicate|stress[:SEED]"), cl::init("auto"),
      cl::cat(category)};
  cl::opt<std::string> shardingSpec{
      "sharding-spec",
      cl::desc("JSON file giving shardings of named graph inputs, weights, "
               "outputs and ONNX nodes ({\"NAME\": [null, \"tp\"], ...}: "
               "per dim, the mesh axes it is split over); propagation "
               "spreads them to the rest of the graph. Needs a mesh of "
               "several devices"),
      cl::value_desc("file.json"), cl::init(""), cl::cat(category)};
  cl::opt<std::string> mode{
      "mode",
      cl::desc("What the automatic plan is optimised for: infer (one "
               "forward pass) or train (forward, backward and optimizer "
               "step, mixed-precision Adam; planned only: with --plan-only "
               "or --compile-to=plan)"),
      cl::value_desc("infer|train"), cl::init("infer"), cl::cat(category)};
  cl::opt<std::string> cluster{
      "cluster",
      cl::desc("The machines the plan is for: a preset (cpu-local: this "
               "machine, one device per core, the default; h100x8, h200x8; "
               "a100-80g-x<N>nodes, h100-x<N>nodes, h200-x<N>nodes: N "
               "nodes of 8 GPUs) or a JSON file (docs/cluster.md). The mesh "
               "may not have more devices; its axes inside a node are intra, "
               "the others inter"),
      cl::value_desc("name|file.json"), cl::init("cpu-local"),
      cl::cat(category)};
  cl::opt<std::string> reportJson{
      "report-json",
      cl::desc("Write the plan's machine-readable report as JSON to FILE "
               "('-': stdout) after the plan phase: chosen degrees, "
               "estimated step time, memory per device, MFU, search time. "
               "Written atomically: on error no file is left"),
      cl::value_desc("file"), cl::init(""), cl::cat(category)};
  cl::opt<bool> timing{
      "timing",
      cl::desc("Print to stderr, when compilation ends, the wall and CPU "
               "time of each phase (import, graph and plan, partition, "
               "memory check, device, code generation, writing the plan) "
               "with its passes nested, like mlir-opt --mlir-timing; then "
               "the peak resident memory reached by the end of each phase"),
      cl::init(false), cl::cat(category)};
  cl::opt<bool> explain{
      "explain",
      cl::desc("Print the human-readable plan after the plan phase: "
               "degrees, estimated step time, memory per device and MFU, "
               "then per ONNX node its ops, result sharding and estimated "
               "time. To stdout, or to stderr when -o writes to stdout"),
      cl::init(false), cl::cat(category)};
  cl::opt<bool> simulate{
      "simulate",
      cl::desc("Simulate one step of the plan on the cost model after the "
               "plan phase (each pipeline rank runs its forward and "
               "backward blocks in the schedule's order as their inputs "
               "arrive, then gradient synchronisation and the optimizer) "
               "and print the step time and the idle (bubble) fraction, "
               "where --explain prints"),
      cl::init(false), cl::cat(category)};
  cl::opt<std::string> trace{
      "trace",
      cl::desc("Write the simulated step as a Chrome/Perfetto trace to FILE "
               "(one lane per device; compute, communication and idle "
               "events). Written atomically"),
      cl::value_desc("file.json"), cl::init(""), cl::cat(category)};
  cl::opt<std::string> targetCPU{
      "target-cpu",
      cl::desc("CPU to generate code for with --target=cpu: native (this "
               "machine, the default) or an LLVM CPU name such as x86-64-v3 "
               "for plans that run elsewhere"),
      cl::value_desc("name"), cl::init("native"), cl::cat(category)};
  cl::opt<std::string> target{
      "target",
      cl::desc("Code generation target: cpu (LLVM, BLAS, MPI), or cuda "
               "(CUDA C++ kernels built by nvcc, cuBLASLt, NCCL)"),
      cl::value_desc("cpu|cuda"), cl::init("cpu"), cl::cat(category)};
  cl::opt<std::string> cudaArch{
      "cuda-arch",
      cl::desc("GPU architectures a cuda plan holds code for, comma-separated "
               "(one cubin each)"),
      cl::value_desc("sm_90,sm_80"), cl::init(dnnc::kCUDADefaultArchs.str()),
      cl::cat(category)};
  cl::opt<bool> cudaEmulation{
      "cuda-emulation",
      cl::desc("With --target=cuda: build the generated CUDA C++ for this "
               "CPU instead (kernels as loops, runtime calls to the cpu "
               "kernels) into a plan of target cpu. A test aid that checks "
               "the cuda code generation without a GPU"),
      cl::init(false), cl::cat(category)};
  cl::opt<bool> emitCudaSource{
      "emit-cuda-source",
      cl::desc("With --target=cuda: write the generated CUDA C++ of the rank "
               "program to -o instead of a plan"),
      cl::init(false), cl::cat(category)};
  cl::opt<std::string> precision{
      "precision",
      cl::desc("Numeric precision of the compiled program: fp32 (the "
               "default), tf32 (fp32 data; GEMMs may use TF32 tensor-core "
               "math, plain fp32 on the cpu target), bf16 or fp16 (weights "
               "and activations stored in that type, accumulations, "
               "reductions, softmax and normalizations in fp32; graph inputs "
               "and outputs keep the model's types). See "
               "docs/precision.md"),
      cl::value_desc("fp32|tf32|bf16|fp16"), cl::init("fp32"),
      cl::cat(category)};
  cl::opt<std::string> microbatches{
      "microbatches",
      cl::desc("Micro-batches per step of a searched plan (they must divide "
               "the batch per data-parallel replica); an executed plan "
               "streams them through its pipeline stages in the schedule's "
               "order; default: searched (1 for an executed plan)"),
      cl::value_desc("M"), cl::init(""), cl::cat(category)};
  cl::opt<std::string> schedule{
      "schedule",
      cl::desc("Pipeline schedule of a searched plan: gpipe, 1f1b or "
               "interleaved[:V] (Megatron-LM's interleaved 1F1B with V "
               "model chunks per stage; without V, 2 to 8 are searched); "
               "default: searched "
               "(inference: gpipe)"),
      cl::value_desc("gpipe|1f1b|interleaved[:V]"), cl::init(""),
      cl::cat(category)};
  cl::opt<std::string> recompute{
      "recompute",
      cl::desc("Activation recomputation in a searched training plan: off "
               "(keep what the backward pass reads), selective (recompute "
               "the attention cores), full (keep each layer's input, "
               "recompute the rest) or auto (each is tried, the fastest "
               "plan that fits wins)"),
      cl::value_desc("auto|off|selective|full"), cl::init("auto"),
      cl::cat(category)};
  cl::opt<std::string> zero{
      "zero",
      cl::desc("ZeRO-1 (optimizer states sharded over the data-parallel "
               "replicas) in a searched training plan: auto (on when dp > "
               "1), on or off"),
      cl::value_desc("auto|on|off"), cl::init("auto"), cl::cat(category)};
  cl::list<std::string> bind{
      "bind",
      cl::desc("Fold graph input NAME into a constant read from FILE.pb (a "
               "serialized ONNX TensorProto); repeatable"),
      cl::value_desc("NAME=FILE.pb"), cl::cat(category)};
  cl::opt<std::string> batch{
      "batch",
      cl::desc("The global batch: samples per step over all devices "
               "(Megatron-LM's --global-batch-size). It sets a symbolic "
               "leading dimension of the graph inputs; a graph whose batch "
               "is fixed at B is re-batched when N is a multiple of B "
               "(inputs whose dimension 0 is B get N, and Reshape shapes "
               "whose first entry is a multiple of B scale with it); any "
               "other N is an error"),
      cl::value_desc("N"), cl::init(""), cl::cat(category)};
  cl::opt<std::string> microbatchSize{
      "micro-batch-size",
      cl::desc("Samples per micro-batch of one data-parallel replica in a "
               "searched plan (Megatron-LM's --micro-batch-size): a plan "
               "with dp replicas runs batch / (dp x N) micro-batches, and "
               "dp degrees that leave a fraction are not candidates. "
               "Exclusive with --microbatches; default: searched"),
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

/// Parses the value of `--mesh` into `shape`: empty for `auto`, else the
/// axis sizes of `N`, `AxB` or `AxBxC`. Returns the reason on failure.
static std::optional<std::string>
parseMesh(llvm::StringRef value, llvm::SmallVectorImpl<int64_t> &shape) {
  if (value == "auto")
    return std::nullopt;
  llvm::SmallVector<llvm::StringRef> parts;
  value.split(parts, 'x', /*MaxSplit=*/-1, /*KeepEmpty=*/true);
  if (parts.size() > 3)
    return std::string("at most 3 axes (expected auto, N, AxB or AxBxC)");
  for (llvm::StringRef part : parts) {
    int64_t size = 0;
    if (part.getAsInteger(10, size))
      return std::string("expected auto, N, AxB or AxBxC with integer sizes");
    if (size < 1)
      return std::string("every mesh size must be at least 1");
    shape.push_back(size);
  }
  return std::nullopt;
}

namespace {
/// The degrees of `--parallel` (0: not given).
struct ParallelDegrees {
  /// Data parallelism.
  int64_t dp = 0;
  /// Tensor parallelism.
  int64_t tp = 0;
  /// Pipeline parallelism.
  int64_t pp = 0;

  /// Returns the product of the given degrees.
  int64_t getProduct() const {
    return std::max<int64_t>(dp, 1) * std::max<int64_t>(tp, 1) *
           std::max<int64_t>(pp, 1);
  }
};
} // namespace

/// Parses the value of `--parallel` (`dp=A,tp=B,pp=C`, any subset, each
/// degree at least 1) into `degrees`. Returns the reason on failure.
static std::optional<std::string> parseParallel(llvm::StringRef value,
                                                ParallelDegrees &degrees) {
  llvm::SmallVector<llvm::StringRef> entries;
  value.split(entries, ',', /*MaxSplit=*/-1, /*KeepEmpty=*/true);
  llvm::SmallVector<llvm::StringRef> seen;
  for (llvm::StringRef entry : entries) {
    auto [name, degreeText] = entry.split('=');
    int64_t *degree = llvm::StringSwitch<int64_t *>(name)
                          .Case("dp", &degrees.dp)
                          .Case("tp", &degrees.tp)
                          .Case("pp", &degrees.pp)
                          .Default(nullptr);
    if (!entry.contains('=') || !degree)
      return "malformed entry '" + entry.str() +
             "' (expected dp=A,tp=B,pp=C, any subset)";
    if (llvm::is_contained(seen, name))
      return "'" + name.str() + "' is given more than once";
    seen.push_back(name);
    if (degreeText.getAsInteger(10, *degree))
      return "the degree of '" + name.str() + "' is not an integer";
    if (*degree < 1)
      return "the degree of '" + name.str() + "' must be at least 1";
  }
  return std::nullopt;
}

/// Parses the value of `--sharding` (`auto`, `replicate`, `stress` or
/// `stress:SEED`) into `options`. Returns the reason on failure.
static std::optional<std::string> parseSharding(llvm::StringRef value,
                                                dnnc::PlanOptions &options) {
  auto [mode, seed] = value.split(':');
  if (mode == "auto" && !value.contains(':')) {
    options.sharding = dnnc::ShardingMode::Auto;
  } else if (mode == "replicate" && !value.contains(':')) {
    options.sharding = dnnc::ShardingMode::Replicate;
  } else if (mode == "stress") {
    options.sharding = dnnc::ShardingMode::Stress;
    options.seed = 0;
    if (value.contains(':') && seed.getAsInteger(10, options.seed))
      return std::string("the seed must be a non-negative integer");
  } else {
    return std::string("expected auto, replicate or stress[:SEED]");
  }
  return std::nullopt;
}

namespace {
/// With --timing: the peak resident memory of the process after each phase,
/// printed to stderr (after the timing report) when it goes out of scope.
class PeakMemoryLog {
public:
  explicit PeakMemoryLog(bool enabled) : enabled(enabled) {}
  ~PeakMemoryLog() {
    if (!enabled || entries.empty())
      return;
    llvm::errs() << "  ----Peak memory (RSS)----  ----After----\n";
    for (const auto &[phase, bytes] : entries)
      llvm::errs() << llvm::formatv("  {0,14:f1} MiB            {1}\n",
                                    bytes / 1048576.0, phase);
  }
  /// Records the peak so far, reached by the end of `phase`.
  void note(llvm::StringRef phase) {
    if (!enabled)
      return;
    struct rusage usage;
    if (getrusage(RUSAGE_SELF, &usage) == 0)
      entries.emplace_back(phase.str(), uint64_t(usage.ru_maxrss) * 1024);
  }

private:
  bool enabled;
  llvm::SmallVector<std::pair<std::string, uint64_t>> entries;
};
} // namespace

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
          "  dnnc MODEL.onnx [-o plan.bin] [--mesh=N --sharding=MODE]\n"
          "  dnnc MODEL.onnx --compile-to=PHASE [-o FILE]\n"
          "  dnnc MODEL.onnx --plan-only [--parallel=...] [-o FILE]\n",
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
  if (opts.compileTo.getNumOccurrences()) {
    phase = parsePhase(opts.compileTo);
    if (!phase)
      return reportError("--compile-to=" + opts.compileTo +
                         ": unknown phase (expected import, graph, plan, "
                         "partition or device)");
  }

  // The reports describe the module as the plan phase leaves it.
  bool wantReports = opts.reportJson.getNumOccurrences() || opts.explain ||
                     opts.simulate || opts.trace.getNumOccurrences();
  if (opts.trace.getNumOccurrences() && opts.trace.empty())
    return reportError("--trace=: expected a file name");
  if (opts.reportJson.getNumOccurrences() && opts.reportJson.empty())
    return reportError("--report-json=: expected a file name");
  if (wantReports && phase && *phase < Phase::Plan)
    return reportError(
        std::string(opts.explain       ? "--explain"
                    : opts.simulate    ? "--simulate"
                    : opts.trace.getNumOccurrences() ? "--trace"
                                                     : "--report-json") +
        " reports the plan phase; --compile-to=" + opts.compileTo +
        " stops before it");

  if (opts.planOnly && phase && *phase > Phase::Plan)
    return reportError("--plan-only stops after the plan phase; it cannot be "
                       "combined with --compile-to=" +
                       opts.compileTo);

  // The plan phase: mesh, parallelism degrees and sharding mode.
  PlanOptions planOptions;
  std::optional<dnn::Precision> precision =
      dnn::symbolizePrecision(opts.precision);
  if (!precision)
    return reportError("--precision=" + opts.precision +
                       ": expected fp32, tf32, bf16 or fp16");
  planOptions.precision = *precision;
  // The cluster: it must hold the mesh, and its nodes give each axis its
  // link class (devices numbered row-major, devicesPerNode per node).
  std::string clusterError;
  std::optional<planner::Cluster> cluster =
      planner::loadCluster(opts.cluster, clusterError);
  if (!cluster) {
    // File errors start with the file's name, which the flag names already.
    llvm::StringRef reason = clusterError;
    reason.consume_front(opts.cluster + ": ");
    return reportError("--cluster=" + opts.cluster + ": " + reason);
  }
  llvm::SmallVector<int64_t> meshShape;
  if (std::optional<std::string> reason = parseMesh(opts.mesh, meshShape))
    return reportError("--mesh=" + opts.mesh + ": " + *reason);
  // The forced degrees and the devices they need.
  ParallelDegrees degrees;
  int64_t product = 1;
  if (opts.parallel.getNumOccurrences()) {
    if (std::optional<std::string> reason =
            parseParallel(opts.parallel, degrees))
      return reportError("--parallel=" + opts.parallel + ": " + *reason);
    for (int64_t degree : {degrees.dp, degrees.tp, degrees.pp})
      if (llvm::MulOverflow(product, std::max<int64_t>(degree, 1), product))
        return reportError("--parallel=" + opts.parallel +
                           ": too many devices");
  }
  // A cluster the user names is planned for whole: without --mesh the mesh
  // is every device of it (the default cpu-local keeps one device, so that
  // a plain compile runs without mpirun). Forced degrees that need more
  // devices keep their own mesh (and the error that it does not fit the
  // cluster).
  if (meshShape.empty() && opts.cluster.getNumOccurrences() &&
      cluster->getNumDevices() > 1 && product <= cluster->getNumDevices())
    meshShape.push_back(cluster->getNumDevices());
  if (std::optional<std::string> reason =
          parseSharding(opts.sharding, planOptions))
    return reportError("--sharding=" + opts.sharding + ": " + *reason);
  int64_t meshSize = 1;
  for (int64_t size : meshShape)
    if (llvm::MulOverflow(meshSize, size, meshSize))
      return reportError("--mesh=" + opts.mesh + ": too many devices");
  // The mesh axes, outermost first.
  llvm::SmallVector<std::pair<std::string, int64_t>> axes;
  // Whether the planner searches (some) degrees: `--mesh=N` alone, or
  // `--parallel` with pp or with fewer devices than the mesh.
  bool search = false;
  if (opts.parallel.getNumOccurrences()) {
    if (!meshShape.empty() &&
        (meshShape.size() != 1 ? meshSize != product
                               : meshSize % product != 0))
      return reportError("--mesh=" + opts.mesh + ": the mesh has " +
                         llvm::Twine(meshSize) + " devices, but --parallel=" +
                         opts.parallel + " needs " +
                         (meshShape.size() == 1 ? "a multiple of " : "") +
                         llvm::Twine(product));
    search = degrees.pp >= 1 || (!meshShape.empty() && meshSize != product);
    if (search) {
      if (meshShape.empty())
        meshSize = product;
      meshShape.assign({meshSize});
    } else {
      // Axes for the degrees above 1, outermost first: dp, then tp.
      std::pair<const char *, int64_t> degreeAxes[] = {{"dp", degrees.dp},
                                                       {"tp", degrees.tp}};
      for (auto [name, degree] : degreeAxes)
        if (degree > 1)
          axes.emplace_back(name, degree);
      if (degrees.dp > 1)
        planOptions.dpAxis = "dp";
      if (degrees.tp > 1)
        planOptions.tpAxis = "tp";
    }
  } else if (meshSize > 1) {
    static const char *const axisNames[] = {"x", "y", "z"};
    for (auto [index, size] : llvm::enumerate(meshShape))
      axes.emplace_back(axisNames[index], size);
  }

  int64_t numDevices = 1;
  std::vector<int64_t> axisSizes;
  for (const auto &axis : axes) {
    axisSizes.push_back(axis.second);
    numDevices *= axis.second; // Checked for overflow above.
  }
  // The default cpu-local lets ranks share cores: it grows to the mesh.
  if (!opts.cluster.getNumOccurrences() && cluster->numNodes == 1 &&
      numDevices > cluster->getNumDevices())
    cluster->devicesPerNode = numDevices;
  if (numDevices > cluster->getNumDevices())
    return reportError("--cluster=" + opts.cluster + ": the mesh has " +
                       llvm::Twine(numDevices) + " devices, more than the " +
                       llvm::Twine(cluster->getNumDevices()) +
                       " of the cluster");
  std::vector<bool> intra = planner::getIntraNodeAxes(*cluster, axisSizes);
  std::string meshAxes;
  for (auto [index, axis] : llvm::enumerate(axes))
    meshAxes += (index ? "," : "") + axis.first + "=" +
                std::to_string(axis.second) +
                (intra[index] ? ":intra" : ":inter");
  planOptions.meshAxes = meshAxes;
  if (opts.mode != "infer" && opts.mode != "train")
    return reportError("--mode=" + opts.mode + ": expected infer or train");
  // `--mesh=N` alone: the degrees over the N devices are searched.
  if (!opts.parallel.getNumOccurrences() &&
      planOptions.sharding == ShardingMode::Auto &&
      opts.shardingSpec.empty() && meshShape.size() == 1 && meshSize > 1)
    search = true;
  if (search && (planOptions.sharding != ShardingMode::Auto ||
                 !opts.shardingSpec.empty()))
    return reportError("--parallel=" + opts.parallel +
                       ": searched degrees (pp, or a larger --mesh) need "
                       "--sharding=auto and no --sharding-spec");
  // The planner adds pipelines and micro-batches of its own only to plans
  // that are not executed (executed plans run inference forwards, where
  // they only cost time); forced ones are executed.
  bool executed = !opts.planOnly && (!phase || *phase > Phase::Plan);
  // Training steps are planned and estimated, not yet compiled: a
  // training plan.bin would silently be an inference one.
  if (opts.mode == "train" && executed)
    return reportError("--mode=train: dnnc plans training but does not "
                       "compile it yet; plan it with --plan-only (or "
                       "--compile-to=plan)");
  if (search) {
    planOptions.meshAxes.clear();
    planOptions.searchDevices = meshSize;
    planOptions.cluster = opts.cluster;
    planOptions.oversubscribe = !opts.cluster.getNumOccurrences();
    planOptions.mode = opts.mode;
    planOptions.forcedDp = degrees.dp;
    planOptions.forcedTp = degrees.tp;
    planOptions.forcedPp = degrees.pp;
    planOptions.searchPipelines = !executed;
    planOptions.progress = llvm::sys::Process::StandardErrIsDisplayed();
    planOptions.recompute = opts.recompute;
    planOptions.zero = opts.zero;
    if (!opts.microbatches.empty() &&
        (llvm::StringRef(opts.microbatches)
             .getAsInteger(10, planOptions.microbatches) ||
         planOptions.microbatches < 1))
      return reportError("--microbatches=" + opts.microbatches +
                         ": expected a positive integer");
    if (!opts.microbatchSize.empty() &&
        (llvm::StringRef(opts.microbatchSize)
             .getAsInteger(10, planOptions.microbatchSize) ||
         planOptions.microbatchSize < 1))
      return reportError("--micro-batch-size=" + opts.microbatchSize +
                         ": expected a positive integer");
    if (!opts.microbatches.empty() && !opts.microbatchSize.empty())
      return reportError("--micro-batch-size=" + opts.microbatchSize +
                         ": give it or --microbatches, not both (the "
                         "micro-batch count is batch / (dp x size))");
    if (!opts.schedule.empty()) {
      auto [name, chunks] = llvm::StringRef(opts.schedule).split(':');
      if (!llvm::is_contained({"gpipe", "1f1b", "interleaved"}, name) ||
          (opts.schedule.find(':') != std::string::npos &&
           (name != "interleaved" ||
            chunks.getAsInteger(10, planOptions.chunks) ||
            planOptions.chunks < 2)))
        return reportError("--schedule=" + opts.schedule +
                           ": expected gpipe, 1f1b or interleaved[:V] with "
                           "V >= 2");
      planOptions.schedule = name.str();
    }
  } else if (!opts.microbatches.empty() || !opts.microbatchSize.empty() ||
             !opts.schedule.empty() || opts.recompute.getNumOccurrences() ||
             opts.zero.getNumOccurrences()) {
    return reportError("--microbatches, --micro-batch-size, --schedule, "
                       "--recompute and --zero shape a searched plan: give "
                       "--mesh=N or --cluster (with --parallel for forced "
                       "degrees)");
  }
  if (!llvm::is_contained({"auto", "off", "selective", "full"},
                          opts.recompute.getValue()))
    return reportError("--recompute=" + opts.recompute +
                       ": expected auto, off, selective or full");
  if (!llvm::is_contained({"auto", "on", "off"}, opts.zero.getValue()))
    return reportError("--zero=" + opts.zero + ": expected auto, on or off");
  // Inference keeps nothing for a backward pass.
  if (opts.mode != "train" && opts.recompute.getNumOccurrences())
    return reportError("--recompute=" + opts.recompute +
                       ": recomputation shapes training plans; give "
                       "--mode=train");
  if (!opts.shardingSpec.empty()) {
    if (planOptions.isSingleDevice())
      return reportError("--sharding-spec=" + opts.shardingSpec +
                         ": needs a mesh of several devices (--mesh or "
                         "--parallel)");
    if (planOptions.sharding != ShardingMode::Auto)
      return reportError("--sharding-spec=" + opts.shardingSpec +
                         ": needs --sharding=auto (it seeds propagation)");
    planOptions.shardingSpec = opts.shardingSpec;
  }
  if (opts.target != "cpu" && opts.target != "cuda")
    return reportError("--target=" + opts.target +
                       ": unsupported target (this dnnc builds: cpu, cuda)");
  bool cuda = opts.target == "cuda";
  if ((opts.cudaEmulation || opts.emitCudaSource) && !cuda)
    return reportError(std::string(opts.cudaEmulation ? "--cuda-emulation"
                                                      : "--emit-cuda-source") +
                       ": needs --target=cuda");
  if (opts.emitCudaSource && opts.cudaEmulation)
    return reportError(
        "--emit-cuda-source and --cuda-emulation cannot be combined");
  planOptions.target = opts.target;
  auto buildDevice = [&](PassManager &pm) {
    if (cuda)
      buildCUDADevicePipeline(pm, planOptions.precision);
    else
      buildCPUDevicePipeline(pm, planOptions.precision);
  };
  // With --plan-only and no --compile-to, the MLIR is only written to an
  // -o given; plan.bin never is.
  std::string outPath = opts.output.getValue();
  if (outPath.empty() && (phase || !opts.planOnly))
    outPath = phase ? "-" : "plan.bin";
  if (opts.planOnly && !phase)
    phase = Phase::Plan;

  ONNXImportOptions importOptions;
  importOptions.batch = batch;
  importOptions.planOnly = opts.planOnly;
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

  // --timing: one timer per phase, the passes of a pipeline nested under
  // it; the report prints when `timingManager` goes out of scope.
  PeakMemoryLog peakMemory(opts.timing);
  DefaultTimingManager timingManager;
  timingManager.setEnabled(opts.timing);
  timingManager.setDisplayMode(DefaultTimingManager::DisplayMode::Tree);
  TimingScope rootTiming = timingManager.getRootScope();

  std::string error;
  OwningOpRef<ModuleOp> module;
  {
    TimingScope importTiming = rootTiming.nest("import (ONNX to dnn)");
    module = importONNXModel(context, opts.input, importOptions, error);
  }
  peakMemory.note("import");
  if (!module)
    return reportError(error);

  // Phases after import report through diagnostics: keep the first error.
  std::string firstError;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    if (diag.getSeverity() != DiagnosticSeverity::Error)
      return success();
    if (firstError.empty()) {
      std::string where = describeLocation(diag.getLocation());
      // The module's own location is the model file, named already.
      if (where == opts.input)
        where.clear();
      firstError =
          opts.input + ": " + (where.empty() ? "" : where + ": ") + diag.str();
    }
    return success();
  });
  auto runPipeline = [&](llvm::StringRef name,
                         llvm::function_ref<void(PassManager &)> build) {
    PassManager pm(&context);
    if (failed(applyPassManagerCLOptions(pm)))
      return false;
    TimingScope phaseTiming = rootTiming.nest(name);
    if (opts.timing)
      pm.enableTiming(phaseTiming);
    build(pm);
    bool ok = succeeded(pm.run(*module));
    peakMemory.note(name);
    return ok;
  };
  auto passError = [&] {
    return reportError(firstError.empty() ? opts.input + ": a pass failed"
                                          : firstError);
  };
  // Writes the reports of the plan-phase module; returns the exit code.
  // --explain goes to stderr when the output (-o -) takes stdout.
  auto writeReports = [&]() -> int {
    planner::PlanReport report = planner::buildPlanReport(
        *module, *cluster,
        opts.mode == "train" ? planner::Mode::Train : planner::Mode::Infer);
    if (opts.reportJson.getNumOccurrences()) {
      llvm::json::Value json(std::move(report.json));
      if (llvm::Error err =
              llvm::writeToOutput(opts.reportJson, [&](llvm::raw_ostream &os) {
                os << llvm::formatv("{0:2}", json) << "\n";
                return llvm::Error::success();
              })) {
        // The message may start with the path, which the error names.
        std::string message = llvm::toString(std::move(err));
        llvm::StringRef reason = message;
        reason.consume_front("'" + opts.reportJson + "': ");
        return reportError("cannot write report '" + opts.reportJson +
                           "': " + reason);
      }
    }
    llvm::raw_ostream &os = outPath == "-" ? llvm::errs() : llvm::outs();
    if (opts.explain) {
      os << report.explanation;
      os.flush();
    }
    if (opts.simulate || opts.trace.getNumOccurrences()) {
      planner::CostModel model(*cluster, opts.mode == "train"
                                             ? planner::Mode::Train
                                             : planner::Mode::Infer);
      model.usePrecisionOf(*module);
      planner::SimulationResult simulation;
      if (opts.trace.getNumOccurrences()) {
        if (llvm::Error err =
                llvm::writeToOutput(opts.trace, [&](llvm::raw_ostream &out)
                                                    -> llvm::Error {
                  FailureOr<planner::SimulationResult> result =
                      planner::simulatePlan(*module, model, &out);
                  if (failed(result))
                    return llvm::createStringError("the plan cannot be "
                                                   "simulated");
                  simulation = *result;
                  return llvm::Error::success();
                })) {
          std::string message = llvm::toString(std::move(err));
          llvm::StringRef reason = message;
          reason.consume_front("'" + opts.trace + "': ");
          return reportError("cannot write trace '" + opts.trace +
                             "': " + reason);
        }
      } else {
        FailureOr<planner::SimulationResult> result =
            planner::simulatePlan(*module, model);
        if (failed(result))
          return 1;
        simulation = *result;
      }
      if (opts.simulate) {
        os << llvm::formatv("simulated step: {0:f3} ms on {1} device(s), "
                            "idle (bubble) fraction {2:f2}%\n",
                            simulation.stepSeconds * 1e3, simulation.devices,
                            simulation.idleFraction * 100);
        os.flush();
      }
    }
    return 0;
  };
  // The phases after the plan phase, up to `last`.
  auto buildAfterPlan = [&](PassManager &pm, Phase last) {
    if (last >= Phase::Partition && !planOptions.isSingleDevice())
      buildPartitionPipeline(pm);
    if (last >= Phase::Device)
      buildDevice(pm);
  };

  if (phase) {
    // With reports, stop after the plan phase to write them, then go on.
    Phase first = wantReports ? std::min(*phase, Phase::Plan) : *phase;
    if (!runPipeline("phases up to " + opts.compileTo.getValue(),
                     [&](PassManager &pm) {
                       buildPipelineUpTo(pm, first, planOptions);
                     }))
      return passError();
    if (wantReports) {
      if (int rc = writeReports())
        return rc;
      if (*phase > first &&
          !runPipeline("phases after plan", [&](PassManager &pm) {
            buildAfterPlan(pm, *phase);
          }))
        return passError();
    }
    if (outPath.empty())
      return 0;
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

  // Refuses a partitioned program one rank of which cannot fit its device
  // (a device of the cluster for cuda, this machine's memory for the cpu
  // target, where every rank of a local run shares it), naming the ONNX
  // node that needs most.
  auto checkRankMemory = [&]() -> int {
    planner::RankMemoryBound need = planner::boundRankMemory(*module);
    std::optional<uint64_t> limit;
    std::string device;
    if (cuda && !opts.cudaEmulation) {
      limit = cluster->device.memoryBytes;
      device = "a device of --cluster=" + opts.cluster.getValue();
    } else {
      limit = planner::getHostMemoryBytes();
      device = "this machine";
    }
    if (!limit || !*limit || need.total() <= *limit)
      return 0;
    std::string node;
    if (need.largestOp) {
      Location loc = need.largestOp->getLoc();
      if (auto fused = dyn_cast<FusedLoc>(loc); fused && !fused.getLocations().empty())
        loc = fused.getLocations().front();
      if (auto name = dyn_cast<NameLoc>(loc))
        node = "node '" + name.getName().str() + "'";
      else
        node = "'" + need.largestOp->getName().getStringRef().str() + "'";
      node = "; " + node + " needs " +
             planner::formatBytes(need.largestOpBytes) + " more";
    }
    return reportError(opts.input + ": the program of a rank needs at least " +
                       planner::formatBytes(need.total()) +
                       " of memory (graph inputs and weights " +
                       planner::formatBytes(need.argumentBytes) + node +
                       "), more than the " + planner::formatBytes(*limit) +
                       " of " + device);
  };

  // Full compilation to plan.bin: graph, plan and partition; then the
  // package phase reads the signature and weights before lowering destroys
  // them. Every rank runs the same program (SPMD): one shared object serves
  // them all.
  if (!runPipeline("graph and plan", [&](PassManager &pm) {
        buildPipelineUpTo(pm, Phase::Plan, planOptions);
      }))
    return passError();
  if (wantReports)
    if (int rc = writeReports())
      return rc;
  if (!runPipeline("partition", [&](PassManager &pm) {
        buildAfterPlan(pm, Phase::Partition);
      }))
    return passError();
  {
    TimingScope memoryTiming = rootTiming.nest("memory check");
    if (int rc = checkRankMemory())
      return rc;
  }
  plan::Plan plan;
  // Host emulation of the cuda code runs on the cpu backend.
  std::string planTarget =
      opts.cudaEmulation ? std::string("cpu") : opts.target.getValue();
  {
    TimingScope packageTiming =
        rootTiming.nest("package (signature and weights)");
    if (!collectPlanSignature(*module, planTarget, plan, error))
      return reportError(opts.input + ": " + error);
  }
  peakMemory.note("package (signature and weights)");
  if (!runPipeline("device", buildDevice))
    return passError();
  if (opts.emitCudaSource) {
    std::string openError;
    auto out = openOutputFile(outPath, &openError);
    if (!out)
      return reportError("cannot open output '" + outPath + "': " + openError);
    if (failed(translateToCUDA(*module, out->os())))
      return passError();
    out->os().flush();
    if (out->os().has_error()) {
      out->os().clear_error();
      return reportError("cannot write output '" + outPath + "'");
    }
    out->keep();
    return 0;
  }
  std::string code;
  CUDABuildOptions cudaOptions;
  cudaOptions.archs = opts.cudaArch;
  cudaOptions.hostEmulation = opts.cudaEmulation;
  {
    TimingScope codegenTiming = rootTiming.nest(
        cuda ? "code generation (CUDA C++, nvcc)" : "code generation (LLVM)");
    if (!(cuda ? compileCUDAToSharedObject(*module, cudaOptions, code, error)
               : compileToSharedObject(*module, opts.targetCPU, code, error,
                                       codegenTiming)))
      return reportError(opts.input + ": " + error);
  }
  peakMemory.note("code generation");
  for (plan::RankProgram &rank : plan.ranks)
    rank.code = code;
  {
    TimingScope writeTiming = rootTiming.nest("write plan");
    if (!plan::writePlan(plan, outPath, error))
      return reportError(error);
  }
  peakMemory.note("write plan");
  return 0;
}
