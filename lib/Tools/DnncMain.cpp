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

#include <cmath>

#include <sys/resource.h>

using namespace mlir;
using namespace dnnc;
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
      cl::desc("What the program computes and the automatic plan is "
               "optimised for: infer (one forward pass), grad (the loss "
               "named by --loss-output and its gradient with respect to "
               "every floating-point graph input and parameter (float "
               "initializer of rank 1 or more); outputs LOSS, then "
               "NAME_grad per input, then per parameter: reverse mode over "
               "the dnn ops' gradient rules) or train (one training step: "
               "the loss of --loss-output or --loss, its gradient by the "
               "parameters and the --optimizer update; run by dnnc-run "
               "--train. A searched plan (--mesh=N alone, or pp) is only "
               "planned: with --plan-only or --compile-to=plan)"),
      cl::value_desc("infer|grad|train"), cl::init("infer"),
      cl::cat(category)};
  cl::opt<std::string> lossOutput{
      "loss-output",
      cl::desc("With --mode=grad or train: the graph output that is the "
               "loss (a floating-point tensor of one element; default: the "
               "only output)"),
      cl::value_desc("NAME"), cl::init(""), cl::cat(category)};
  cl::opt<std::string> loss{
      "loss",
      cl::desc("With --mode=train, instead of --loss-output: a loss dnnc "
               "adds over graph output OUTPUT against a new graph input "
               "TARGET: cross-entropy (OUTPUT holds scores [..., classes], "
               "TARGET int64 class indices [...]; the mean over all "
               "positions) or mse (TARGET has OUTPUT's type; the mean "
               "squared error)"),
      cl::value_desc("cross-entropy|mse:OUTPUT,TARGET"), cl::init(""),
      cl::cat(category)};
  cl::list<std::string> freeze{
      "freeze",
      cl::desc("With --mode=grad or train: initializers whose name matches "
               "this glob pattern (*, ?, [...]; repeatable, or "
               "comma-separated) stay constants: no gradient, no update, "
               "and folded like in inference"),
      cl::value_desc("PATTERN"), cl::CommaSeparated, cl::cat(category)};
  cl::opt<std::string> optimizer{
      "optimizer",
      cl::desc("With --mode=train: the update rule, as PyTorch's "
               "torch.optim.SGD or torch.optim.AdamW computes it"),
      cl::value_desc("sgd|adamw"), cl::init("adamw"), cl::cat(category)};
  cl::opt<double> lr{"lr", cl::desc("With --mode=train: the learning rate"),
                     cl::value_desc("LR"), cl::init(1e-3), cl::cat(category)};
  cl::opt<double> momentum{
      "momentum", cl::desc("With --optimizer=sgd: the momentum factor"),
      cl::value_desc("M"), cl::init(0.0), cl::cat(category)};
  cl::opt<bool> nesterov{
      "nesterov", cl::desc("With --optimizer=sgd and --momentum: Nesterov "
                           "momentum"),
      cl::init(false), cl::cat(category)};
  cl::opt<double> weightDecay{
      "weight-decay",
      cl::desc("With --mode=train: sgd's L2 penalty (default 0) or adamw's "
               "decoupled weight decay (default 0.01)"),
      cl::value_desc("WD"), cl::cat(category)};
  cl::opt<std::string> betas{
      "betas",
      cl::desc("With --optimizer=adamw: the moments' decay rates"),
      cl::value_desc("B1,B2"), cl::init("0.9,0.999"), cl::cat(category)};
  cl::opt<double> eps{
      "eps", cl::desc("With --optimizer=adamw: added to the denominator"),
      cl::value_desc("EPS"), cl::init(1e-8), cl::cat(category)};
  cl::opt<double> clipGradNorm{
      "clip-grad-norm",
      cl::desc("With --mode=train: scale the gradients so that their joint "
               "2-norm is at most N (torch.nn.utils.clip_grad_norm_); 0: "
               "no clipping"),
      cl::value_desc("N"), cl::init(0.0), cl::cat(category)};
  cl::opt<std::string> lrSchedule{
      "lr-schedule",
      cl::desc("With --mode=train: the learning rate after --warmup-steps "
               "of linear warm-up: constant, or cosine (down to 0 at "
               "--total-steps); see docs/training.md"),
      cl::value_desc("constant|cosine"), cl::init("constant"),
      cl::cat(category)};
  cl::opt<int64_t> warmupSteps{
      "warmup-steps",
      cl::desc("With --mode=train: steps of linear learning-rate warm-up"),
      cl::value_desc("N"), cl::init(0), cl::cat(category)};
  cl::opt<int64_t> totalSteps{
      "total-steps",
      cl::desc("With --lr-schedule=cosine: the step at which the learning "
               "rate reaches 0"),
      cl::value_desc("N"), cl::init(0), cl::cat(category)};
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
               "and outputs keep the model's types; a training step keeps "
               "fp32 master weights and optimizer states). See "
               "docs/precision.md"),
      cl::value_desc("fp32|tf32|bf16|fp16"), cl::init("fp32"),
      cl::cat(category)};
  cl::opt<std::string> lossScale{
      "loss-scale",
      cl::desc("With --mode=train: dynamic loss scaling (torch.amp."
               "GradScaler's), the default with --precision=fp16, or none "
               "(the default otherwise)"),
      cl::value_desc("dynamic|none"), cl::init(""), cl::cat(category)};
  cl::opt<double> lossScaleInit{
      "loss-scale-init",
      cl::desc("With --loss-scale=dynamic: the initial loss scale"),
      cl::value_desc("S"), cl::init(65536.0), cl::cat(category)};
  cl::opt<int64_t> lossScaleGrowthInterval{
      "loss-scale-growth-interval",
      cl::desc("With --loss-scale=dynamic: double the scale after this many "
               "steps in a row with finite gradients"),
      cl::value_desc("N"), cl::init(2000), cl::cat(category)};
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

namespace {
/// Everything `dnnc` was asked to do, parsed and checked once: the driver's
/// phases read it, the pipelines get its `plan` options.
struct DnncConfig {
  /// The model file.
  std::string input;
  /// The phase `--compile-to` (or `--plan-only`) stops after, if any, and
  /// the name it was given by.
  std::optional<Phase> phase;
  std::string phaseName;
  /// Where the result goes ('-': stdout; empty: nowhere).
  std::string outPath;
  /// Whether a report of the plan phase is wanted, and which.
  bool wantReports = false;
  std::optional<std::string> reportJson, trace;
  bool explain = false, simulate = false, timing = false;
  /// The options of the phases after import.
  PlanOptions plan;
  /// The cluster the reports describe the plan on, and its flag value.
  planner::Cluster cluster;
  std::string clusterName;
  /// What the plan is optimised for.
  planner::Mode mode = planner::Mode::Infer;
  /// How the model is imported.
  ONNXImportOptions import;
  /// The CPU the cpu target generates code for.
  std::string targetCPU;
  /// How the cuda target builds, and whether it writes its source instead.
  CUDABuildOptions cuda;
  bool emitCudaSource = false;
};

/// The mesh the command line asks for, on its way into `PlanOptions`.
struct MeshRequest {
  /// The shape of `--mesh` (or of the cluster); empty: auto.
  llvm::SmallVector<int64_t> shape;
  /// Its number of devices.
  int64_t size = 1;
  /// The degrees of `--parallel` and their product.
  ParallelDegrees degrees;
  int64_t product = 1;
  /// Whether the planner searches (some) degrees.
  bool search = false;
};
} // namespace

/// Reads the input, the phase to stop after, the reports and the output
/// path. Returns the exit code of an error, or 0.
static int parseOutputs(const DnncOptions &opts, DnncConfig &config) {
  if (opts.input.empty())
    return reportError("no input model given (usage: dnnc MODEL.onnx ...)");
  config.input = opts.input;
  if (!opts.batch.empty() &&
      (llvm::StringRef(opts.batch).getAsInteger(10, config.import.batch) ||
       config.import.batch < 1))
    return reportError("--batch=" + opts.batch +
                       ": expected a positive integer");
  if (opts.compileTo.getNumOccurrences()) {
    config.phase = parsePhase(opts.compileTo);
    if (!config.phase)
      return reportError("--compile-to=" + opts.compileTo +
                         ": unknown phase (expected import, graph, plan, "
                         "partition or device)");
    config.phaseName = opts.compileTo;
  }
  std::optional<Phase> phase = config.phase;
  // The reports describe the module as the plan phase leaves it.
  config.explain = opts.explain;
  config.simulate = opts.simulate;
  config.timing = opts.timing;
  if (opts.trace.getNumOccurrences())
    config.trace = opts.trace;
  if (opts.reportJson.getNumOccurrences())
    config.reportJson = opts.reportJson;
  config.wantReports = config.reportJson || config.explain ||
                       config.simulate || config.trace;
  if (config.trace && config.trace->empty())
    return reportError("--trace=: expected a file name");
  if (config.reportJson && config.reportJson->empty())
    return reportError("--report-json=: expected a file name");
  if (config.wantReports && phase && *phase < Phase::Plan)
    return reportError(std::string(config.explain    ? "--explain"
                                   : config.simulate ? "--simulate"
                                   : config.trace    ? "--trace"
                                                     : "--report-json") +
                       " reports the plan phase; --compile-to=" +
                       opts.compileTo + " stops before it");
  if (opts.planOnly && phase && *phase > Phase::Plan)
    return reportError("--plan-only stops after the plan phase; it cannot be "
                       "combined with --compile-to=" +
                       opts.compileTo);
  // With --plan-only and no --compile-to, the MLIR is only written to an
  // -o given; plan.bin never is.
  config.outPath = opts.output.getValue();
  if (config.outPath.empty() && (phase || !opts.planOnly))
    config.outPath = phase ? "-" : "plan.bin";
  return 0;
}

/// Reads `--precision` and `--cluster` (loaded here, once). Returns the
/// exit code of an error, or 0.
static int parsePrecisionAndCluster(const DnncOptions &opts,
                                    DnncConfig &config) {
  std::optional<dnn::Precision> precision =
      dnn::symbolizePrecision(opts.precision);
  if (!precision)
    return reportError("--precision=" + opts.precision +
                       ": expected fp32, tf32, bf16 or fp16");
  config.plan.precision = *precision;
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
  config.cluster = std::move(*cluster);
  config.clusterName = opts.cluster;
  return 0;
}

/// Reads `--mesh`, `--parallel` and `--sharding` into `request` and, for a
/// plan that is not searched, the mesh axes and seeds of `config.plan`.
/// Returns the exit code of an error, or 0.
static int parseMeshRequest(const DnncOptions &opts, DnncConfig &config,
                            MeshRequest &request) {
  if (std::optional<std::string> reason = parseMesh(opts.mesh, request.shape))
    return reportError("--mesh=" + opts.mesh + ": " + *reason);
  // The forced degrees and the devices they need.
  ParallelDegrees &degrees = request.degrees;
  bool parallel = opts.parallel.getNumOccurrences();
  if (parallel) {
    if (std::optional<std::string> reason =
            parseParallel(opts.parallel, degrees))
      return reportError("--parallel=" + opts.parallel + ": " + *reason);
    for (int64_t degree : {degrees.dp, degrees.tp, degrees.pp})
      if (llvm::MulOverflow(request.product, std::max<int64_t>(degree, 1),
                            request.product))
        return reportError("--parallel=" + opts.parallel +
                           ": too many devices");
  }
  // A cluster the user names is planned for whole: without --mesh the mesh
  // is every device of it (the default cpu-local keeps one device, so that
  // a plain compile runs without mpirun). Forced degrees that need more
  // devices keep their own mesh (and the error that it does not fit the
  // cluster).
  planner::Cluster &cluster = config.cluster;
  if (request.shape.empty() && opts.cluster.getNumOccurrences() &&
      cluster.getNumDevices() > 1 &&
      request.product <= cluster.getNumDevices())
    request.shape.push_back(cluster.getNumDevices());
  if (std::optional<std::string> reason =
          parseSharding(opts.sharding, config.plan))
    return reportError("--sharding=" + opts.sharding + ": " + *reason);
  int64_t &meshSize = request.size;
  for (int64_t size : request.shape)
    if (llvm::MulOverflow(meshSize, size, meshSize))
      return reportError("--mesh=" + opts.mesh + ": too many devices");
  // The mesh axes, outermost first.
  llvm::SmallVector<std::pair<std::string, int64_t>> axes;
  if (parallel) {
    if (!request.shape.empty() &&
        (request.shape.size() != 1 ? meshSize != request.product
                                   : meshSize % request.product != 0))
      return reportError(
          "--mesh=" + opts.mesh + ": the mesh has " + llvm::Twine(meshSize) +
          " devices, but --parallel=" + opts.parallel + " needs " +
          (request.shape.size() == 1 ? "a multiple of " : "") +
          llvm::Twine(request.product));
    // Searched: pp, or fewer devices than the mesh.
    request.search = degrees.pp >= 1 ||
                     (!request.shape.empty() && meshSize != request.product);
    if (request.search) {
      if (request.shape.empty())
        meshSize = request.product;
      request.shape.assign({meshSize});
    } else {
      // Axes for the degrees above 1, outermost first: dp, then tp.
      std::pair<const char *, int64_t> degreeAxes[] = {{"dp", degrees.dp},
                                                       {"tp", degrees.tp}};
      for (auto [name, degree] : degreeAxes)
        if (degree > 1)
          axes.emplace_back(name, degree);
      if (degrees.dp > 1)
        config.plan.dpAxis = "dp";
      if (degrees.tp > 1)
        config.plan.tpAxis = "tp";
    }
  } else if (meshSize > 1) {
    static const char *const axisNames[] = {"x", "y", "z"};
    for (auto [index, size] : llvm::enumerate(request.shape))
      axes.emplace_back(axisNames[index], size);
  }
  int64_t numDevices = 1;
  for (const auto &axis : axes)
    numDevices *= axis.second; // Checked for overflow above.
  // The default cpu-local lets ranks share cores: it grows to the mesh.
  if (!opts.cluster.getNumOccurrences() && cluster.numNodes == 1 &&
      numDevices > cluster.getNumDevices())
    cluster.devicesPerNode = numDevices;
  if (numDevices > cluster.getNumDevices())
    return reportError("--cluster=" + opts.cluster + ": the mesh has " +
                       llvm::Twine(numDevices) + " devices, more than the " +
                       llvm::Twine(cluster.getNumDevices()) +
                       " of the cluster");
  if (!axes.empty())
    config.plan.mesh = planner::placeMeshAxes(cluster, axes);
  return 0;
}

/// Reads a positive integer flag value into `value` (unchanged when the
/// flag is empty). Returns false if it is not one.
static bool parsePositive(llvm::StringRef text, int64_t &value) {
  return text.empty() || (!text.getAsInteger(10, value) && value >= 1);
}

/// Reads the loss and optimizer flags of `--mode=train` into `plan`.
/// Returns the exit code of an error, or 0.
static int parseTraining(const DnncOptions &opts, PlanOptions &plan) {
  if (!opts.loss.empty()) {
    if (opts.lossOutput.getNumOccurrences())
      return reportError("--loss and --loss-output: give one of them");
    auto [kind, rest] = llvm::StringRef(opts.loss).split(':');
    auto [output, target] = rest.split(',');
    if ((kind != "cross-entropy" && kind != "mse") || output.empty() ||
        target.empty() || target.contains(','))
      return reportError("--loss=" + opts.loss +
                         ": expected cross-entropy:OUTPUT,TARGET or "
                         "mse:OUTPUT,TARGET");
    dnn::AddLossPassOptions &add = plan.addLoss.emplace();
    add.kind = kind.str();
    add.output = output.str();
    add.target = target.str();
    plan.lossOutput = "loss";
  }
  // Dynamic loss scaling: fp16's default (its range is narrow).
  std::string scaling = opts.lossScale;
  if (scaling.empty())
    scaling = plan.precision == dnn::Precision::FP16 ? "dynamic" : "none";
  if (scaling != "dynamic" && scaling != "none")
    return reportError("--loss-scale=" + scaling +
                       ": expected dynamic or none");
  if (scaling == "none" && (opts.lossScaleInit.getNumOccurrences() ||
                            opts.lossScaleGrowthInterval.getNumOccurrences()))
    return reportError("--loss-scale-init and --loss-scale-growth-interval "
                       "need --loss-scale=dynamic");
  if (scaling == "dynamic") {
    if (!(opts.lossScaleInit > 0.0 && std::isfinite(opts.lossScaleInit)))
      return reportError("--loss-scale-init=" +
                         std::to_string(opts.lossScaleInit) +
                         ": expected a finite number > 0");
    if (opts.lossScaleGrowthInterval < 1)
      return reportError("--loss-scale-growth-interval=" +
                         std::to_string(opts.lossScaleGrowthInterval) +
                         ": expected a count >= 1");
    plan.lossScale = opts.lossScaleInit;
  }
  dnn::ApplyOptimizerPassOptions &o = plan.optimizer.emplace();
  o.optimizer = opts.optimizer;
  bool adamw = o.optimizer == "adamw";
  o.lr = opts.lr;
  o.momentum = opts.momentum;
  o.nesterov = opts.nesterov;
  o.weightDecay = opts.weightDecay.getNumOccurrences() ? opts.weightDecay
                  : adamw                              ? 0.01
                                                       : 0.0;
  o.eps = opts.eps;
  o.clipGradNorm = opts.clipGradNorm;
  o.schedule = opts.lrSchedule;
  o.warmupSteps = opts.warmupSteps;
  o.totalSteps = opts.totalSteps;
  o.lossScaleGrowthInterval = opts.lossScaleGrowthInterval;
  auto [b1, b2] = llvm::StringRef(opts.betas).split(',');
  if (b1.trim().getAsDouble(o.beta1) || b2.trim().getAsDouble(o.beta2))
    return reportError("--betas=" + opts.betas + ": expected B1,B2");
  // The values, as the pass checks them; then what only the flags show.
  if (std::string problem = dnn::checkOptimizerOptions(o); !problem.empty())
    return reportError("--" + problem);
  if (o.schedule != "cosine" && opts.totalSteps.getNumOccurrences())
    return reportError("--total-steps needs --lr-schedule=cosine");
  if (adamw && (opts.momentum.getNumOccurrences() || o.nesterov))
    return reportError("--momentum and --nesterov need --optimizer=sgd");
  if (!adamw && (opts.betas.getNumOccurrences() ||
                 opts.eps.getNumOccurrences()))
    return reportError("--betas and --eps need --optimizer=adamw");
  return 0;
}

/// Reads `--mode` and the options of a searched plan (`--microbatches`,
/// `--micro-batch-size`, `--schedule`, `--recompute`, `--zero`) into
/// `config.plan.search` when `request` is searched. Returns the exit code
/// of an error, or 0.
static int parseSearch(const DnncOptions &opts, DnncConfig &config,
                       MeshRequest &request) {
  if (opts.mode != "infer" && opts.mode != "grad" && opts.mode != "train")
    return reportError("--mode=" + opts.mode +
                       ": expected infer, grad or train");
  config.mode =
      opts.mode == "train" ? planner::Mode::Train : planner::Mode::Infer;
  PlanOptions &plan = config.plan;
  if (opts.mode == "infer") {
    for (auto [flag, given] :
         {std::pair<const char *, bool>{"--freeze", !opts.freeze.empty()},
          {"--loss-output", opts.lossOutput.getNumOccurrences() > 0},
          {"--loss", opts.loss.getNumOccurrences() > 0}})
      if (given)
        return reportError(llvm::Twine(flag) + " needs --mode=grad or train");
  }
  // The first flag given that shapes the optimizer of a training step.
  const char *optimizerFlag = nullptr;
  for (auto [flag, given] : {std::pair<const char *, bool>{
                                 "--optimizer",
                                 opts.optimizer.getNumOccurrences() > 0},
                             {"--lr", opts.lr.getNumOccurrences() > 0},
                             {"--momentum",
                              opts.momentum.getNumOccurrences() > 0},
                             {"--nesterov", opts.nesterov},
                             {"--weight-decay",
                              opts.weightDecay.getNumOccurrences() > 0},
                             {"--betas", opts.betas.getNumOccurrences() > 0},
                             {"--eps", opts.eps.getNumOccurrences() > 0},
                             {"--clip-grad-norm",
                              opts.clipGradNorm.getNumOccurrences() > 0},
                             {"--lr-schedule",
                              opts.lrSchedule.getNumOccurrences() > 0},
                             {"--warmup-steps",
                              opts.warmupSteps.getNumOccurrences() > 0},
                             {"--total-steps",
                              opts.totalSteps.getNumOccurrences() > 0},
                             {"--loss-scale",
                              opts.lossScale.getNumOccurrences() > 0},
                             {"--loss-scale-init",
                              opts.lossScaleInit.getNumOccurrences() > 0},
                             {"--loss-scale-growth-interval",
                              opts.lossScaleGrowthInterval
                                      .getNumOccurrences() > 0}})
    if (given && !optimizerFlag)
      optimizerFlag = flag;
  if (opts.mode != "train" && optimizerFlag)
    return reportError(llvm::Twine(optimizerFlag) + " needs --mode=train");
  if (opts.mode == "grad" && opts.loss.getNumOccurrences())
    return reportError("--loss=" + opts.loss + " needs --mode=train (with "
                       "--mode=grad, name the loss with --loss-output)");
  // `--mesh=N` alone: the degrees over the N devices are searched.
  if (!opts.parallel.getNumOccurrences() &&
      plan.sharding == ShardingMode::Auto && opts.shardingSpec.empty() &&
      request.shape.size() == 1 && request.size > 1)
    request.search = true;
  if (request.search &&
      (plan.sharding != ShardingMode::Auto || !opts.shardingSpec.empty()))
    return reportError("--parallel=" + opts.parallel +
                       ": searched degrees (pp, or a larger --mesh) need "
                       "--sharding=auto and no --sharding-spec");
  // The planner adds pipelines and micro-batches of its own only to plans
  // that are not executed (executed plans run inference forwards, where
  // they only cost time); forced ones are executed.
  bool executed =
      !opts.planOnly && (!config.phase || *config.phase > Phase::Plan);
  // The training step itself is compiled for executed plans and whenever a
  // loss is given to a plan whose degrees are forced; a plan-only training
  // plan otherwise is priced by the planner from the forward graph (its
  // estimates of the backward pass and the optimizer). An executed searched
  // plan is searched that way first (chooseTrainingDegrees).
  bool trainingStep =
      opts.mode == "train" &&
      (executed || (!request.search && (opts.lossOutput.getNumOccurrences() ||
                                        opts.loss.getNumOccurrences())));
  // A training plan priced from the forward graph has no step to shape.
  if (opts.mode == "train" && !trainingStep) {
    const char *stepFlag = optimizerFlag;
    if (!opts.freeze.empty())
      stepFlag = "--freeze";
    if (opts.lossOutput.getNumOccurrences() || opts.loss.getNumOccurrences())
      stepFlag = opts.loss.getNumOccurrences() ? "--loss" : "--loss-output";
    if (stepFlag)
      return reportError(llvm::Twine(stepFlag) +
                         " shapes a compiled training step, but this "
                         "plan-only training plan (searched, or without "
                         "--loss or --loss-output) is priced by the planner "
                         "from the forward graph (its own optimizer model): "
                         "drop the flag, or compile the step");
  }
  if (opts.mode == "grad" || trainingStep) {
    plan.lossOutput = opts.lossOutput;
    // Parameters stay arguments, so that they get gradients.
    config.import.trainable = true;
    config.import.freeze.assign(opts.freeze.begin(), opts.freeze.end());
    if (opts.mode == "train") {
      // A batch norm in training mode updates its running statistics.
      config.import.updateBuffers = true;
      if (int rc = parseTraining(opts, plan))
        return rc;
      // The program holds the whole step (forward, backward, update): the
      // cost model prices its ops as they are.
      config.mode = planner::Mode::Infer;
    }
  }
  if (!request.search) {
    // A forced training plan: ZeRO-1 over the data axis unless --zero=off.
    if (plan.optimizer)
      plan.zero = opts.zero != "off";
    else if (opts.zero.getNumOccurrences())
      return reportError("--zero=" + opts.zero +
                         ": ZeRO-1 shapes training plans; give "
                         "--mode=train");
    if (!opts.microbatches.empty() || !opts.microbatchSize.empty() ||
        !opts.schedule.empty() || opts.recompute.getNumOccurrences())
      return reportError("--microbatches, --micro-batch-size, --schedule "
                         "and --recompute shape a searched plan: give "
                         "--mesh=N or --cluster (with --parallel for forced "
                         "degrees)");
    return 0;
  }
  // One device plans no pipeline: these flags would be dropped.
  if (request.size <= 1 &&
      (!opts.microbatches.empty() || !opts.microbatchSize.empty() ||
       !opts.schedule.empty()))
    return reportError("--microbatches, --micro-batch-size and --schedule "
                       "shape plans over several devices; this plan has "
                       "one (give --mesh=N or --parallel over N > 1)");
  planner::SearchParallelismConfig &search = plan.search.emplace();
  plan.mesh.clear();
  search.devices = request.size;
  // The default cpu-local lets ranks share cores: it grows to the mesh.
  search.cluster = config.cluster;
  if (!opts.cluster.getNumOccurrences() && search.cluster.numNodes == 1 &&
      search.devices > search.cluster.getNumDevices())
    search.cluster.devicesPerNode = search.devices;
  search.mode =
      opts.mode == "train" ? planner::Mode::Train : planner::Mode::Infer;
  search.dp = request.degrees.dp;
  search.tp = request.degrees.tp;
  search.pp = request.degrees.pp;
  search.pipeline = !executed;
  search.progress = llvm::sys::Process::StandardErrIsDisplayed();
  if (!parsePositive(opts.microbatches, search.microbatches))
    return reportError("--microbatches=" + opts.microbatches +
                       ": expected a positive integer");
  if (!parsePositive(opts.microbatchSize, search.microbatchSize))
    return reportError("--micro-batch-size=" + opts.microbatchSize +
                       ": expected a positive integer");
  if (!opts.microbatches.empty() && !opts.microbatchSize.empty())
    return reportError("--micro-batch-size=" + opts.microbatchSize +
                       ": give it or --microbatches, not both (the "
                       "micro-batch count is batch / (dp x size))");
  if (!opts.schedule.empty()) {
    auto [name, chunks] = llvm::StringRef(opts.schedule).split(':');
    search.schedule = dist::symbolizeSchedule(name);
    if (!search.schedule ||
        (opts.schedule.find(':') != std::string::npos &&
         (*search.schedule != dist::Schedule::Interleaved ||
          chunks.getAsInteger(10, search.chunks) || search.chunks < 2)))
      return reportError("--schedule=" + opts.schedule +
                         ": expected gpipe, 1f1b or interleaved[:V] with "
                         "V >= 2");
  }
  if (opts.zero == "on" || opts.zero == "off")
    search.zero = opts.zero == "on";
  if (opts.recompute != "auto")
    search.recompute = dist::symbolizeRecompute(opts.recompute);
  return 0;
}

/// Checks `--recompute`, `--zero` and `--sharding-spec`. Returns the exit
/// code of an error, or 0.
static int checkPlanFlags(const DnncOptions &opts, DnncConfig &config) {
  if (opts.recompute != "auto" && !dist::symbolizeRecompute(opts.recompute))
    return reportError("--recompute=" + opts.recompute +
                       ": expected auto, off, selective or full");
  if (!llvm::is_contained({"auto", "on", "off"}, opts.zero.getValue()))
    return reportError("--zero=" + opts.zero + ": expected auto, on or off");
  // Inference keeps nothing for a backward pass.
  if (opts.mode != "train" && opts.recompute.getNumOccurrences())
    return reportError("--recompute=" + opts.recompute +
                       ": recomputation shapes training plans; give "
                       "--mode=train");
  if (opts.shardingSpec.empty())
    return 0;
  if (config.plan.isSingleDevice())
    return reportError("--sharding-spec=" + opts.shardingSpec +
                       ": needs a mesh of several devices (--mesh or "
                       "--parallel)");
  if (config.plan.sharding != ShardingMode::Auto)
    return reportError("--sharding-spec=" + opts.shardingSpec +
                       ": needs --sharding=auto (it seeds propagation)");
  config.plan.shardingSpec = opts.shardingSpec;
  return 0;
}

/// Reads `--target` and its code generation options. Returns the exit code
/// of an error, or 0.
static int parseTarget(const DnncOptions &opts, DnncConfig &config) {
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
  config.plan.target = cuda ? Target::CUDA : Target::CPU;
  config.targetCPU = opts.targetCPU;
  config.cuda.archs = opts.cudaArch;
  config.cuda.hostEmulation = opts.cudaEmulation;
  config.emitCudaSource = opts.emitCudaSource;
  return 0;
}

/// Reads `--plan-only`, `--bind` and `--input-shape` into the import
/// options. Returns the exit code of an error, or 0.
static int parseImport(const DnncOptions &opts, DnncConfig &config) {
  if (opts.planOnly && !config.phase) {
    config.phase = Phase::Plan;
    config.phaseName = "plan";
  }
  ONNXImportOptions &import = config.import;
  import.planOnly = opts.planOnly;
  for (const std::string &b : opts.bind) {
    auto [name, file] = llvm::StringRef(b).split('=');
    if (name.empty() || file.empty())
      return reportError("--bind " + b + ": expected NAME=FILE.pb");
    import.bindings.emplace_back(name.str(), file.str());
  }
  for (const std::string &s : opts.inputShape) {
    auto [name, dims] = llvm::StringRef(s).split('=');
    llvm::SmallVector<int64_t> shape;
    if (name.empty() || !llvm::StringRef(s).contains('=') ||
        !parseShapeString(dims, shape))
      return reportError("--input-shape " + s +
                         ": expected NAME=D0xD1... with non-negative "
                         "integer extents");
    import.inputShapes.emplace_back(name.str(), shape);
  }
  return 0;
}

/// Parses and checks the command line into `config`. Returns the exit code
/// of an error (reported), or 0.
static int parseCommandLine(int argc, char **argv, DnncConfig &config) {
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
  MeshRequest request;
  if (int rc = parseOutputs(opts, config))
    return rc;
  if (int rc = parsePrecisionAndCluster(opts, config))
    return rc;
  if (int rc = parseMeshRequest(opts, config, request))
    return rc;
  if (int rc = parseSearch(opts, config, request))
    return rc;
  if (int rc = checkPlanFlags(opts, config))
    return rc;
  if (int rc = parseTarget(opts, config))
    return rc;
  return parseImport(opts, config);
}

namespace {
/// One compilation: the context, the module and the timers, the phases run
/// on them and the outputs written from them.
class Compilation {
public:
  explicit Compilation(const DnncConfig &config)
      : config(config), context(getRegistry()), peakMemory(config.timing) {
    context.loadAllAvailableDialects();
    timingManager.setEnabled(config.timing);
    timingManager.setDisplayMode(DefaultTimingManager::DisplayMode::Tree);
    rootTiming = timingManager.getRootScope();
  }

  /// Runs what the configuration asks for. Returns the exit code.
  int run();

  /// Imports the model and runs the graph and plan phases; returns the
  /// module, or null (reported).
  ModuleOp runToPlan();

  /// Writes the reports of the plan-phase module (--explain, --report-json,
  /// --simulate, --trace). Returns the exit code.
  int writeReports();

private:
  /// Returns a registry of every dialect dnnc uses.
  static DialectRegistry getRegistry() {
    DialectRegistry registry;
    registerAllDialects(registry);
    return registry;
  }

  /// Imports the model. Returns false (reported) on failure.
  bool import();
  /// Runs the pipeline `build` adds on the module, timed as `name`.
  bool runPipeline(llvm::StringRef name,
                   llvm::function_ref<void(PassManager &)> build);
  /// Reports the first error diagnostic (or that a pass failed).
  int passError();
  /// The diagnostic handler of the phases after import (they report
  /// through diagnostics): keeps the first error, with the ONNX node it
  /// names.
  LogicalResult keepFirstError(Diagnostic &diag);
  /// Simulates the plan (--simulate, --trace) and prints its step time.
  int writeSimulation(llvm::raw_ostream &os);
  /// Adds the phases after the plan phase, up to `last`, to `pm`.
  void buildAfterPlan(PassManager &pm, Phase last);
  /// Runs the phases up to `--compile-to` and prints the module.
  int compileToPhase();
  /// Refuses a partitioned program one rank of which cannot fit its
  /// device. Returns the exit code.
  int checkRankMemory();
  /// Runs every phase and writes plan.bin (or the CUDA source).
  int compileToPlan();
  /// Writes `write`'s output to the output path, atomically.
  int writeOutput(llvm::function_ref<LogicalResult(llvm::raw_ostream &)> write);

  const DnncConfig &config;
  MLIRContext context;
  OwningOpRef<ModuleOp> module;
  /// --timing: one timer per phase, the passes of a pipeline nested under
  /// it; the report prints when the manager is destroyed, then the peak
  /// memory log.
  PeakMemoryLog peakMemory;
  DefaultTimingManager timingManager;
  TimingScope rootTiming;
  /// The first error diagnostic of the phases after import.
  std::string firstError;
};
} // namespace

bool Compilation::import() {
  std::string error;
  {
    TimingScope importTiming = rootTiming.nest("import (ONNX to dnn)");
    module = importONNXModel(context, config.input, config.import, error);
  }
  peakMemory.note("import");
  if (!module)
    reportError(error);
  return bool(module);
}

bool Compilation::runPipeline(llvm::StringRef name,
                              llvm::function_ref<void(PassManager &)> build) {
  PassManager pm(&context);
  if (failed(applyPassManagerCLOptions(pm)))
    return false;
  TimingScope phaseTiming = rootTiming.nest(name);
  if (config.timing)
    pm.enableTiming(phaseTiming);
  build(pm);
  bool ok = succeeded(pm.run(*module));
  peakMemory.note(name);
  return ok;
}

int Compilation::passError() {
  return reportError(firstError.empty() ? config.input + ": a pass failed"
                                        : firstError);
}

/// Writes `write`'s output to `path` atomically (`llvm::writeToOutput`);
/// returns the exit code, naming `what` in an error.
static int writeAtomically(
    llvm::StringRef path, llvm::StringRef what,
    llvm::function_ref<llvm::Error(llvm::raw_ostream &)> write) {
  if (llvm::Error err = llvm::writeToOutput(path, write)) {
    // The message may start with the path, which the error names.
    std::string message = llvm::toString(std::move(err));
    llvm::StringRef reason = message;
    reason.consume_front("'" + path.str() + "': ");
    return reportError("cannot write " + what + " '" + path + "': " + reason);
  }
  return 0;
}

int Compilation::writeReports() {
  // The reports go to stderr when the output (-o -) takes stdout.
  llvm::raw_ostream &os = config.outPath == "-" ? llvm::errs() : llvm::outs();
  // A simulation alone needs no plan report (a training step's staged
  // program has none).
  if (!config.reportJson && !config.explain)
    return writeSimulation(os);
  planner::PlanReport report =
      planner::buildPlanReport(*module, config.cluster, config.mode);
  if (config.reportJson) {
    llvm::json::Value json(std::move(report.json));
    if (int rc = writeAtomically(*config.reportJson, "report",
                                 [&](llvm::raw_ostream &os) {
                                   os << llvm::formatv("{0:2}", json) << "\n";
                                   return llvm::Error::success();
                                 }))
      return rc;
  }
  if (config.explain) {
    os << report.explanation;
    os.flush();
  }
  if (config.simulate || config.trace)
    return writeSimulation(os);
  return 0;
}

int Compilation::writeSimulation(llvm::raw_ostream &os) {
  planner::CostModel model(config.cluster, config.mode);
  model.usePrecisionOf(*module);
  // A pipelined training step is simulated as compiled: the stages
  // dist-materialize-stages makes of it (the micro-batches' forward and
  // backward blocks, the final part) and their transfers.
  OwningOpRef<ModuleOp> step;
  if (config.plan.optimizer && config.plan.stages) {
    step = module->clone();
    PassManager pm(&context);
    pm.addPass(dist::createSplitMicrobatchesPass());
    pm.addPass(dist::createMaterializeStagesPass());
    if (failed(pm.run(*step)))
      return passError();
  }
  auto simulate = [&](llvm::raw_ostream *out) {
    return step ? planner::simulateTrainingStep(*step, model, out)
                : planner::simulatePlan(*module, model, out);
  };
  planner::SimulationResult simulation;
  if (config.trace) {
    if (int rc = writeAtomically(
            *config.trace, "trace",
            [&](llvm::raw_ostream &out) -> llvm::Error {
              FailureOr<planner::SimulationResult> result = simulate(&out);
              if (failed(result))
                return llvm::createStringError("the plan cannot be simulated");
              simulation = *result;
              return llvm::Error::success();
            }))
      return rc;
  } else {
    FailureOr<planner::SimulationResult> result = simulate(nullptr);
    if (failed(result))
      return passError();
    simulation = *result;
  }
  if (config.simulate) {
    os << llvm::formatv("simulated step: {0:f3} ms on {1} device(s), "
                        "idle (bubble) fraction {2:f2}%\n",
                        simulation.stepSeconds * 1e3, simulation.devices,
                        simulation.idleFraction * 100);
    os.flush();
  }
  return 0;
}

void Compilation::buildAfterPlan(PassManager &pm, Phase last) {
  if (last >= Phase::Partition &&
      (!config.plan.isSingleDevice() || config.plan.stages))
    buildPartitionPipeline(pm);
  if (last >= Phase::Device)
    buildDevicePipeline(pm, config.plan);
}

int Compilation::writeOutput(
    llvm::function_ref<LogicalResult(llvm::raw_ostream &)> write) {
  std::string openError;
  auto out = openOutputFile(config.outPath, &openError);
  if (!out)
    return reportError("cannot open output '" + config.outPath +
                       "': " + openError);
  if (failed(write(out->os())))
    return passError();
  out->os().flush();
  if (out->os().has_error()) {
    out->os().clear_error();
    return reportError("cannot write output '" + config.outPath + "'");
  }
  out->keep();
  return 0;
}

int Compilation::compileToPhase() {
  Phase phase = *config.phase;
  // With reports, stop after the plan phase to write them, then go on.
  Phase first = config.wantReports ? std::min(phase, Phase::Plan) : phase;
  if (!runPipeline("phases up to " + config.phaseName, [&](PassManager &pm) {
        buildPipelineUpTo(pm, first, config.plan);
      }))
    return passError();
  if (config.wantReports) {
    if (int rc = writeReports())
      return rc;
    if (phase > first &&
        !runPipeline("phases after plan",
                     [&](PassManager &pm) { buildAfterPlan(pm, phase); }))
      return passError();
  }
  if (config.outPath.empty())
    return 0;
  return writeOutput([&](llvm::raw_ostream &os) {
    module->print(os);
    return success();
  });
}

int Compilation::checkRankMemory() {
  planner::RankMemoryBound need = planner::boundRankMemory(*module);
  std::optional<uint64_t> limit;
  std::string device;
  // A device of the cluster for cuda, this machine's memory for the cpu
  // target, where every rank of a local run shares it.
  if (config.plan.target == Target::CUDA && !config.cuda.hostEmulation) {
    limit = config.cluster.device.memoryBytes;
    device = "a device of --cluster=" + config.clusterName;
  } else {
    limit = planner::getHostMemoryBytes();
    device = "this machine";
  }
  if (!limit || !*limit || need.total() <= *limit)
    return 0;
  // Names the ONNX node that needs most.
  std::string node;
  if (need.largestOp) {
    Location loc = need.largestOp->getLoc();
    if (auto fused = dyn_cast<FusedLoc>(loc);
        fused && !fused.getLocations().empty())
      loc = fused.getLocations().front();
    if (auto name = dyn_cast<NameLoc>(loc))
      node = "node '" + name.getName().str() + "'";
    else
      node = "'" + need.largestOp->getName().getStringRef().str() + "'";
    node = "; " + node + " needs " +
           planner::formatBytes(need.largestOpBytes) + " more";
  }
  return reportError(config.input + ": the program of a rank needs at least " +
                     planner::formatBytes(need.total()) +
                     " of memory (graph inputs and weights " +
                     planner::formatBytes(need.argumentBytes) + node +
                     "), more than the " + planner::formatBytes(*limit) +
                     " of " + device);
}

int Compilation::compileToPlan() {
  // Graph, plan, partition, device (which keeps what packaging needs as the
  // module's #dist.plan), code generation, then packaging. Every rank runs
  // the same program (SPMD): one shared object serves them all.
  if (!runPipeline("graph and plan", [&](PassManager &pm) {
        buildPipelineUpTo(pm, Phase::Plan, config.plan);
      }))
    return passError();
  if (config.wantReports)
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
  if (!runPipeline("device", [&](PassManager &pm) {
        buildDevicePipeline(pm, config.plan);
      }))
    return passError();
  if (config.emitCudaSource)
    return writeOutput(
        [&](llvm::raw_ostream &os) { return translateToCUDA(*module, os); });
  bool cuda = config.plan.target == Target::CUDA;
  std::string code, error;
  {
    TimingScope codegenTiming = rootTiming.nest(
        cuda ? "code generation (CUDA C++, nvcc)" : "code generation (LLVM)");
    if (!(cuda ? compileCUDAToSharedObject(*module, config.cuda, code, error)
               : compileToSharedObject(*module, config.targetCPU, code, error,
                                       codegenTiming)))
      return reportError(config.input + ": " + error);
  }
  peakMemory.note("code generation");
  // Packaging last: the plan the device phase kept (#dist.plan), with the
  // code. Host emulation of the cuda code runs on the cpu backend.
  plan::Plan plan;
  {
    TimingScope packageTiming = rootTiming.nest("package");
    if (!collectPlan(*module,
                     cuda && !config.cuda.hostEmulation ? "cuda" : "cpu", plan,
                     error))
      return reportError(config.input + ": " + error);
  }
  for (plan::RankProgram &rank : plan.ranks)
    rank.code = code;
  {
    TimingScope writeTiming = rootTiming.nest("write plan");
    if (!plan::writePlan(plan, config.outPath, error))
      return reportError(error);
  }
  peakMemory.note("write plan");
  return 0;
}

ModuleOp Compilation::runToPlan() {
  if (!import())
    return nullptr;
  ScopedDiagnosticHandler handler(
      &context, [&](Diagnostic &diag) { return keepFirstError(diag); });
  if (!runPipeline("graph and plan (training search)", [&](PassManager &pm) {
        buildPipelineUpTo(pm, Phase::Plan, config.plan);
      })) {
    passError();
    return nullptr;
  }
  return *module;
}

int Compilation::run() {
  if (!import())
    return 1;
  ScopedDiagnosticHandler handler(
      &context, [&](Diagnostic &diag) { return keepFirstError(diag); });
  return config.phase ? compileToPhase() : compileToPlan();
}

LogicalResult Compilation::keepFirstError(Diagnostic &diag) {
  if (diag.getSeverity() != DiagnosticSeverity::Error || !firstError.empty())
    return success();
  std::string where = describeLocation(diag.getLocation());
  // The module's own location is the model file, named already.
  if (where == config.input)
    where.clear();
  firstError =
      config.input + ": " + (where.empty() ? "" : where + ": ") + diag.str();
  return success();
}

/// `dnnc --mode=train --mesh=N` or `--parallel=...,pp=P` (executed): the
/// planner searches dp, tp, ZeRO-1 and the pipeline stages on the forward
/// graph with its training cost model, as for a plan-only training plan;
/// `config` then forces them (the stages by the ONNX node starting each,
/// dist-assign-stages) and compiles the training step. Returns the exit code
/// of an error, or 0.
static int chooseTrainingDegrees(DnncConfig &config) {
  DnncConfig search = config;
  search.import.trainable = false;
  search.import.freeze.clear();
  search.plan.lossOutput.reset();
  search.plan.addLoss.reset();
  search.plan.optimizer.reset();
  // Training steps run pipelines: the search may add stages and
  // micro-batches of its own, as for a plan-only training plan.
  search.plan.search->pipeline = true;
  // Selective recomputation is not compiled into training steps yet: the
  // search tries none or full.
  if (!search.plan.search->recompute)
    search.plan.search->recompute = dist::Recompute::Off;
  search.timing = false;
  // Priced as a training plan: the backward and the optimizer estimated
  // from the forward graph.
  search.mode = planner::Mode::Train;
  Compilation compilation(search);
  ModuleOp module = compilation.runToPlan();
  if (!module)
    return 1;
  PlanOptions &plan = config.plan;
  plan.mesh.clear();
  plan.dpAxis.clear();
  plan.tpAxis.clear();
  for (dist::MeshOp mesh : module.getOps<dist::MeshOp>())
    for (auto axis : mesh.getAxes().getAsRange<dist::MeshAxisAttr>()) {
      if (axis.getSize() <= 1)
        continue;
      StringRef name = axis.getName().getValue();
      if (name != "dp" && name != "tp" && name != "pp")
        return reportError(config.input + ": the searched plan has a mesh "
                           "axis '" + name + "', which training does not "
                           "compile yet");
      plan.mesh.push_back({name.str(), axis.getSize(), axis.getLink()});
      if (name != "pp")
        (name == "dp" ? plan.dpAxis : plan.tpAxis) = name.str();
    }
  auto pipeline = module->getAttrOfType<dist::PipelineAttr>(
      dist::DistDialect::getPipelineAttrName());
  plan.zero = pipeline && pipeline.getZero();
  plan.search.reset();
  if (!pipeline || !pipeline.isPipelined())
    return 0;
  // The reports of a pipelined step are those of its plan on the forward
  // graph, priced by the training cost model; its simulation is the
  // compiled step's (the forwards and backwards of the micro-batches in
  // the schedule's order, then the final part), written by the compilation
  // of the step.
  if (config.explain || config.reportJson) {
    // (The compilation reads `search`.)
    search.simulate = false;
    search.trace.reset();
    if (int rc = compilation.writeReports())
      return rc;
    config.explain = false;
    config.reportJson.reset();
    config.wantReports = config.simulate || config.trace;
  }
  // The stages of the forward graph, by the ONNX node starting each.
  dist::AssignStagesPassOptions &stages = plan.stages.emplace();
  if (StringAttr axis = pipeline.getAxis())
    stages.axis = axis.getValue().str();
  else
    stages.axis.clear();
  stages.stages = pipeline.getStages();
  stages.chunks = pipeline.getChunks();
  stages.microbatches = pipeline.getMicrobatches();
  stages.schedule = dist::stringifySchedule(pipeline.getSchedule()).str();
  stages.zero = pipeline.getZero();
  stages.recompute = dist::stringifyRecompute(pipeline.getRecompute()).str();
  // A stage starts at its first op that carries the name of a node no
  // earlier stage has ops of (ops the compiler made without a name, or
  // copied into a later stage, stay with the stage before); failing that,
  // at its first named op (a node cut between two stages).
  auto main = module.lookupSymbol<func::FuncOp>("main");
  int64_t numStages = pipeline.getNumVirtualStages();
  SmallVector<std::string> fresh(numStages), named(numStages);
  llvm::StringSet<> earlier;
  int64_t previous = 0;
  for (Operation &op : main.getBody().front().without_terminator()) {
    auto stage = op.getAttrOfType<IntegerAttr>(
        dist::DistDialect::getStageAttrName());
    StringRef name = dist::getLocationName(op.getLoc());
    if (!stage || name.empty())
      continue;
    int64_t k = stage.getInt();
    if (k < previous || k >= numStages)
      return reportError(config.input + ": the planner's stages are not in "
                         "program order; the training step cannot follow "
                         "them");
    if (named[k].empty())
      named[k] = name.str();
    if (fresh[k].empty() && !earlier.contains(name))
      fresh[k] = name.str();
    earlier.insert(name);
    previous = k;
  }
  for (int64_t k = 1; k < numStages; ++k) {
    std::string start = !fresh[k].empty() ? fresh[k] : named[k];
    if (start.empty())
      return reportError(config.input + ": the pipeline stage " +
                         std::to_string(k) +
                         " the planner chose has no op with an ONNX node "
                         "name; the training step cannot find its start");
    stages.stageStarts.push_back(start);
  }
  return 0;
}

int dnnc::dnncMain(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  registerAsmPrinterCLOptions();
  registerMLIRContextCLOptions();
  registerPassManagerCLOptions();
  registerDefaultTimingManagerCLOptions();
  DnncConfig config;
  if (int rc = parseCommandLine(argc, argv, config))
    return rc;
  if (config.plan.optimizer && config.plan.isSearched())
    if (int rc = chooseTrainingDegrees(config))
      return rc;
  Compilation compilation(config);
  return compilation.run();
}
