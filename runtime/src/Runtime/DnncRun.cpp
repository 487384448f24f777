//===- DnncRun.cpp - The dnnc-run command line -----------------*- C++ -*-===//
//
// dnnc-run PLAN.bin --input FILE... --output-dir DIR: reads the plan, binds
// the inputs, runs this process's rank on the plan's target and writes the
// outputs as ONNX TensorProto files. Under mpirun/srun each process runs one
// rank: it reads only its rank's sections and its blocks of the inputs, and
// rank 0 gathers the output blocks and writes the outputs. The ranks agree
// after every phase (load, each run, gather, write), so an error on any rank
// makes every rank exit non-zero, never hang. Every failure is one `error:
// ...` line from the rank that failed and exit code 1, and no output file is
// left behind.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Runtime/DnncRun.h"
#include "dnnc/Runtime/Backend.h"
#include "dnnc/Runtime/Comm.h"
#include "dnnc/Runtime/FileUtil.h"
#include "dnnc/Runtime/Plan.h"
#include "dnnc/Runtime/Session.h"
#include "dnnc/Runtime/TensorBlock.h"
#include "dnnc/Runtime/TensorFile.h"
#include "dnnc/Runtime/TensorProto.h"
#include "dnnc/Runtime/Training.h"
#include "dnnc/Runtime/World.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <sys/stat.h>
#include <unistd.h>

namespace dnnc::rt {

static const char kUsage[] =
    R"(usage: dnnc-run PLAN.bin [--input FILE]... [--output-dir DIR]
                [--repeat N] [--warmup N] [--time] [--print-plan]
       dnnc-run PLAN.bin --train --steps N --data DIR
                [--checkpoint-dir D [--save-every K] [--resume]]
                [--export-dir DIR]

Runs a plan.bin compiled by dnnc (target cpu). A plan of N ranks runs
under `mpirun -np N dnnc-run PLAN.bin ...` (or srun), one rank per
process; every rank reads the inputs, rank 0 writes the outputs and prints
the timing. Without MPI, a launcher that sets RANK, WORLD_SIZE,
MASTER_ADDR and MASTER_PORT (torchrun-style; LOCAL_RANK picks the GPU)
connects the processes over TCP: rank 0 listens on MASTER_ADDR:MASTER_PORT,
peers wait at most DNNC_BOOTSTRAP_TIMEOUT_S seconds (default 120) to connect
or for a stuck peer. Such launches run cuda plans, and cpu plans in a build
with Gloo (their collectives and stage transfers run on Gloo; a collective
waits at most DNNC_GLOO_TIMEOUT_S seconds, default 300, for its peers).

  --input FILE        a model input: an ONNX TensorProto (.pb) or a NumPy
                      .npy file. Matched to the model inputs by the tensor's
                      name, else (.npy, unnamed tensors) by position. Repeat
                      once per model input.
  --output-dir DIR    write the model outputs as DIR/output_K.pb (ONNX
                      TensorProto, K = model output index); DIR is created if
                      missing. Without it the outputs are discarded.
  --repeat N          run the program N times (default 1) and print the mean
                      wall time per run (implies --time)
  --warmup N          untimed runs before the timed ones (default 0)
  --time              print the mean wall time per run:
                        time: mean T ms/run, min T ms, N runs
  --print-plan        print the plan (target, mesh, signature, per-rank
                      buffers) and exit without running
  --trace FILE        write the last run (training: the last step) as a
                      Chrome / Perfetto trace: one lane per rank, one event
                      per step of the rank's schedule (compute of a stage
                      on a micro-batch, send, recv: mostly the wait for its
                      sender), in microseconds from the first rank's start;
                      rank 0 writes it. Compare with dnnc --trace, the
                      simulated step. Each step is timed after the backend
                      has finished it, which costs a little time

Training (a plan compiled with dnnc --mode=train):
  --train             run training steps: each run is one step that reads
                      a global batch, and updates the parameters and the
                      optimizer states in place; rank 0 prints one line
                      per step: step K loss L time T ms
  --steps N           train until step N (counted from 1, across --resume)
  --data DIR          the samples: DIR/NAME.npy per model input NAME (the
                      graph inputs and the labels), each [S, ...] with the
                      model input's dtype and its shape after the batch
                      dim; step K reads the K-th global batch of S in
                      order, wrapping around after the last whole batch
  --checkpoint-dir D  write checkpoints to D/step-K/ (every rank its
                      parameters and optimizer states, rank-R.ckpt, then
                      a MANIFEST; D/latest names the newest complete one);
                      a checkpoint is written after the last step
  --save-every K      also write one every K steps
  --resume            continue from D/latest: the same plan (checked) and
                      the same --data continue bit for bit where it ended
  --export-dir DIR    after the last step, write every trained parameter
                      (each weight the step updates) whole as
                      DIR/param_K.pb (an ONNX TensorProto named after its
                      initializer), for python/dnnc_update_weights.py
  --version           print the plan.bin format version this build reads
  -h, --help          print this help

Errors are one line `error: ...` on stderr with exit code 1 (in a
multi-rank launch: `error: rank R: ...` from the rank that failed, and every
rank exits with 1). A rank that failed while the others wait for it in a
collective aborts the launch after DNNC_RUN_ABORT_GRACE seconds (default 10).
)";

namespace {
/// Parsed command line.
struct Options {
  std::string planPath;
  std::vector<std::string> inputs;
  std::string outputDir;
  uint64_t repeat = 1;
  uint64_t warmup = 0;
  bool time = false;
  bool printPlan = false;
  bool train = false;
  uint64_t steps = 0;
  std::string dataDir;
  std::string checkpointDir;
  uint64_t saveEvery = 0;
  bool resume = false;
  std::string exportDir;
  std::string tracePath;
  bool help = false;
  bool version = false;
};
} // namespace

/// Parses a decimal count in [min, 10^9].
static bool parseCount(const std::string &text, uint64_t min, uint64_t &value) {
  if (text.empty() || text.size() > 10)
    return false;
  uint64_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9')
      return false;
    v = v * 10 + uint64_t(c - '0');
  }
  if (v < min || v > 1000000000)
    return false;
  value = v;
  return true;
}

static bool parseArgs(int argc, const char *const *argv, Options &options,
                      std::string &error) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    std::string value;
    bool hasValue = false;
    if (arg.compare(0, 2, "--") == 0) {
      size_t eq = arg.find('=');
      if (eq != std::string::npos) {
        value = arg.substr(eq + 1);
        arg.erase(eq);
        hasValue = true;
      }
    }
    auto takeValue = [&]() {
      if (hasValue)
        return true;
      if (i + 1 >= argc) {
        error = arg + " needs a value (see --help)";
        return false;
      }
      value = argv[++i];
      return true;
    };
    auto noValue = [&]() {
      if (hasValue)
        error = arg + " takes no value";
      return !hasValue;
    };
    if (arg == "-h" || arg == "--help") {
      if (!noValue())
        return false;
      options.help = true;
    } else if (arg == "--version") {
      if (!noValue())
        return false;
      options.version = true;
    } else if (arg == "--input") {
      if (!takeValue())
        return false;
      if (value.empty()) {
        error = "--input needs a file name";
        return false;
      }
      options.inputs.push_back(value);
    } else if (arg == "--output-dir") {
      if (!takeValue())
        return false;
      if (value.empty()) {
        error = "--output-dir needs a directory name";
        return false;
      }
      options.outputDir = value;
    } else if (arg == "--repeat") {
      if (!takeValue())
        return false;
      if (!parseCount(value, 1, options.repeat)) {
        error = "--repeat: expected a count from 1 to 1000000000, got '" +
                value + "'";
        return false;
      }
      options.time = true;
    } else if (arg == "--warmup") {
      if (!takeValue())
        return false;
      if (!parseCount(value, 0, options.warmup)) {
        error = "--warmup: expected a count from 0 to 1000000000, got '" +
                value + "'";
        return false;
      }
    } else if (arg == "--time") {
      if (!noValue())
        return false;
      options.time = true;
    } else if (arg == "--print-plan") {
      if (!noValue())
        return false;
      options.printPlan = true;
    } else if (arg == "--train" || arg == "--resume") {
      if (!noValue())
        return false;
      (arg == "--train" ? options.train : options.resume) = true;
    } else if (arg == "--steps" || arg == "--save-every") {
      if (!takeValue())
        return false;
      uint64_t &count = arg == "--steps" ? options.steps : options.saveEvery;
      if (!parseCount(value, 1, count)) {
        error = arg + ": expected a count from 1 to 1000000000, got '" +
                value + "'";
        return false;
      }
    } else if (arg == "--trace") {
      if (!takeValue())
        return false;
      if (value.empty()) {
        error = "--trace needs a file name";
        return false;
      }
      options.tracePath = value;
    } else if (arg == "--data" || arg == "--checkpoint-dir" ||
               arg == "--export-dir") {
      if (!takeValue())
        return false;
      if (value.empty()) {
        error = arg + " needs a directory name";
        return false;
      }
      (arg == "--data"             ? options.dataDir
       : arg == "--checkpoint-dir" ? options.checkpointDir
                                   : options.exportDir) = value;
    } else if (arg.size() > 1 && arg[0] == '-') {
      error = "unknown option '" + arg + "' (see --help)";
      return false;
    } else if (options.planPath.empty()) {
      options.planPath = arg;
    } else {
      error = "unexpected argument '" + arg +
              "': only one plan file (use --input for inputs)";
      return false;
    }
  }
  if (options.train) {
    if (!options.steps || options.dataDir.empty()) {
      error = "--train needs --steps N and --data DIR";
      return false;
    }
    if (!options.inputs.empty() || !options.outputDir.empty() ||
        options.repeat != 1 || options.warmup || options.time) {
      error = "--train reads its inputs from --data and prints the loss: "
              "--input, --output-dir, --repeat, --warmup and --time do not "
              "apply";
      return false;
    }
  } else if (options.steps || !options.dataDir.empty() ||
             !options.checkpointDir.empty() || options.saveEvery ||
             options.resume || !options.exportDir.empty()) {
    error = "--steps, --data, --checkpoint-dir, --save-every, --resume and "
            "--export-dir need --train";
    return false;
  }
  if ((options.saveEvery || options.resume) && options.checkpointDir.empty()) {
    error = "--save-every and --resume need --checkpoint-dir";
    return false;
  }
  return true;
}

/// "2 ranks (mesh dp=2xtp=2)".
static std::string describeRanks(const plan::ModelInfo &model) {
  std::string mesh;
  for (const auto &[name, size] : model.meshAxes)
    mesh += (mesh.empty() ? "" : "x") + name + "=" + std::to_string(size);
  return std::to_string(model.worldSize) +
         (model.worldSize == 1 ? " rank" : " ranks") +
         (mesh.empty() ? "" : " (mesh " + mesh + ")");
}

/// Checks that the launch has as many processes as `model` has ranks.
/// Every rank reaches the same verdict (all read the same MODEL section and
/// the same launch size), so a mismatch fails every rank before any of them
/// communicates.
static bool checkWorld(const plan::ModelInfo &model, const Comm &comm,
                       std::string &error) {
  if (comm.size() == model.worldSize)
    return true;
  std::string count = std::to_string(model.worldSize);
  if (comm.launcher().empty())
    error = "plan.bin needs " + describeRanks(model) +
            " but dnnc-run runs as a single process; launch it with mpirun "
            "-np " +
            count + " (or srun -n " + count + ")";
  else
    error = "plan.bin needs " + describeRanks(model) +
            " but dnnc-run was launched as " + std::to_string(comm.size()) +
            (comm.size() == 1 ? " process" : " processes") + " (" +
            comm.launcher() + "); launch it with " +
            (comm.usesTcp() ? "WORLD_SIZE=" + count : "mpirun -np " + count);
  return false;
}

/// Creates `dir` and its missing parents; records the ones it created.
/// Errors call it `what` (the flag it came from).
static bool makeDirs(const std::string &dir, std::vector<std::string> &created,
                     std::string &error,
                     const std::string &what = "--output-dir") {
  struct stat st;
  if (::stat(dir.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode))
      return true;
    error = what + " '" + dir + "' exists and is not a directory";
    return false;
  }
  size_t slash = dir.find_last_of('/');
  if (slash != std::string::npos && slash > 0) {
    std::string parent = dir.substr(0, slash);
    if (!makeDirs(parent, created, error, what))
      return false;
  }
  if (::mkdir(dir.c_str(), 0777) != 0 && errno != EEXIST) {
    error = "cannot create " + what + " '" + dir + "': " + std::strerror(errno);
    return false;
  }
  created.push_back(dir);
  return true;
}

/// Writes every tensor of `outputs` as DIR/PREFIXK.pb (K its position;
/// tensors of dtype 0 are skipped), all or nothing.
static bool writeOutputs(const std::string &dir,
                         const std::vector<HostTensor> &outputs,
                         std::string &error,
                         const std::string &prefix = "output_") {
  std::vector<std::string> createdDirs;
  auto removeCreatedDirs = [&]() {
    for (auto it = createdDirs.rbegin(); it != createdDirs.rend(); ++it)
      ::rmdir(it->c_str());
  };
  if (!makeDirs(dir, createdDirs, error,
                prefix == "param_" ? "--export-dir" : "--output-dir"))
    return false;

  std::vector<std::unique_ptr<plan::AtomicFile>> files;
  bool ok = true;
  for (size_t k = 0; ok && k < outputs.size(); ++k) {
    if (outputs[k].dtype == 0)
      continue; // Not held by this rank.
    std::string bytes;
    std::string path = dir + "/" + prefix + std::to_string(k) + ".pb";
    files.push_back(std::make_unique<plan::AtomicFile>());
    ok = encodeTensorProto(outputs[k], bytes, error) &&
         files.back()->open(path, error) &&
         files.back()->write(bytes.data(), bytes.size(), error) &&
         files.back()->close(error);
  }
  // Rename only once every file is complete; undo on a failed rename.
  size_t committed = 0;
  for (; ok && committed < files.size(); ++committed)
    ok = files[committed]->commit(error);
  if (!ok) {
    for (size_t i = 0; i + 1 < committed; ++i)
      ::unlink(files[i]->path().c_str());
    files.clear();
    removeCreatedDirs();
    return false;
  }
  return true;
}

/// Seconds a rank that failed waits for the others at the end of a phase
/// before it aborts the launch: `DNNC_RUN_ABORT_GRACE` (default 10).
static double abortGraceSeconds() {
  const char *text = std::getenv("DNNC_RUN_ABORT_GRACE");
  if (!text || !*text)
    return 10;
  char *end = nullptr;
  double seconds = std::strtod(text, &end);
  return end && *end == '\0' && seconds >= 0 && seconds < 1e6 ? seconds : 10;
}

/// Prints `message` as one `error: ` line, in one write: the lines of
/// several ranks sharing a launcher's stderr do not interleave.
static void printError(std::ostream &err, const std::string &message) {
  std::string line = "error: " + message + "\n";
  for (size_t i = 0; i + 1 < line.size(); ++i)
    if (line[i] == '\n' || line[i] == '\r')
      line[i] = ' ';
  err.write(line.data(), std::streamsize(line.size()));
  err.flush();
}

/// Serializes output block descriptors (native byte order: the ranks of a
/// launch run the same build on the same architecture).
static std::string encodeBlocks(const std::vector<plan::OutputBlock> &blocks) {
  std::string out;
  auto put = [&](const void *p, size_t n) {
    out.append(static_cast<const char *>(p), n);
  };
  uint32_t count = uint32_t(blocks.size());
  put(&count, 4);
  for (const plan::OutputBlock &b : blocks) {
    uint32_t fields[4] = {b.output, b.microbatch, b.owns ? 1u : 0u,
                          uint32_t(b.shape.size())};
    put(fields, sizeof(fields));
    put(b.offsets.data(), 8 * b.offsets.size());
    put(b.shape.data(), 8 * b.shape.size());
  }
  return out;
}

/// Parses the descriptors rank `rank` sent; checks every count.
static bool decodeBlocks(const std::string &bytes, uint32_t rank,
                         std::vector<plan::OutputBlock> &blocks,
                         std::string &error) {
  size_t at = 0;
  auto get = [&](void *p, size_t n) {
    if (n > bytes.size() - at)
      return false;
    if (n == 0) // `p` may be the null data() of an empty vector
      return true;
    std::memcpy(p, bytes.data() + at, n);
    at += n;
    return true;
  };
  uint32_t count = 0;
  bool ok = get(&count, 4) && count <= bytes.size() / 16;
  for (uint32_t i = 0; ok && i < count; ++i) {
    uint32_t fields[4];
    plan::OutputBlock b;
    ok = get(fields, sizeof(fields)) && fields[3] <= plan::kMaxTensorRank;
    if (!ok)
      break;
    b.rank = rank;
    b.output = fields[0];
    b.microbatch = fields[1];
    b.owns = fields[2] != 0;
    b.offsets.resize(fields[3]);
    b.shape.resize(fields[3]);
    ok = get(b.offsets.data(), 8 * b.offsets.size()) &&
         get(b.shape.data(), 8 * b.shape.size());
    blocks.push_back(std::move(b));
  }
  if (!ok || at != bytes.size()) {
    error = "malformed output descriptors from rank " + std::to_string(rank);
    return false;
  }
  return true;
}

namespace {
/// One dnnc-run process running its rank of a plan.
class RankRun {
public:
  RankRun(const Options &options, Comm &comm, std::ostream &out,
          std::ostream &err)
      : options(options), comm(comm), out(out), err(err),
        grace(abortGraceSeconds()) {
    if (comm.size() > 1)
      who = "rank " + std::to_string(comm.rank()) + ": ";
  }

  /// Runs every phase; returns the exit code.
  int run() {
    std::string error;
    if (!agree(load(error), error) || !agree(exchangeBlocks(error), error))
      return 1;
    if (!options.tracePath.empty())
      session->recordTimes(&stepTimes);
    if (options.train)
      return train();
    for (uint64_t i = 0; i < options.warmup + options.repeat; ++i) {
      Clock::time_point start = Clock::now();
      runStart = std::chrono::system_clock::now();
      bool ok = session->run(error);
      double ms =
          std::chrono::duration<double, std::milli>(Clock::now() - start)
              .count();
      if (!agree(ok, error))
        return 1;
      if (i < options.warmup)
        continue;
      total += ms;
      best = i == options.warmup ? ms : std::min(best, ms);
    }
    if (!options.outputDir.empty()) {
      if (!agree(gatherOutputs(error), error))
        return 1;
      bool written =
          comm.rank() != 0 || writeOutputs(options.outputDir, globals, error);
      if (!agree(written, error))
        return 1;
    }
    if (!options.tracePath.empty() && !writeTrace())
      return 1;
    if (options.time && comm.rank() == 0) {
      char line[128];
      std::snprintf(line, sizeof(line),
                    "time: mean %.6f ms/run, min %.6f ms, %llu runs\n",
                    total / double(options.repeat), best,
                    static_cast<unsigned long long>(options.repeat));
      out << line;
    }
    out.flush();
    return 0;
  }

private:
  using Clock = std::chrono::steady_clock;

  /// The end of a phase: this rank reports its own error, then all ranks
  /// learn whether every rank succeeded. A failed rank whose peers do not
  /// arrive within the grace period (they wait in a collective kernel it
  /// skipped) aborts the launch rather than hang.
  bool agree(bool ok, const std::string &error) {
    if (!ok)
      printError(err, withRank(error));
    bool timedOut = false;
    if (comm.allOk(ok, grace, &timedOut))
      return true;
    if (timedOut)
      comm.abort(1);
    return false;
  }

  /// `error` prefixed with "rank R: " in a launch of several processes,
  /// unless it starts by naming this rank ("rank R (entry E): ...",
  /// "rank R step S (...): ...").
  std::string withRank(const std::string &error) const {
    if (who.empty())
      return error;
    std::string self = "rank " + std::to_string(comm.rank());
    if (error.compare(0, self.size(), self) == 0 &&
        error.size() > self.size() &&
        (error[self.size()] == ' ' || error[self.size()] == ':'))
      return error;
    return who + error;
  }

  /// Reads this rank's part of the plan and the inputs, and prepares the
  /// session.
  bool load(std::string &error) {
    plan::ReadOptions modelOnly;
    modelOnly.rank = plan::kNoRanks;
    if (!plan::readPlan(options.planPath, plan, error, modelOnly) ||
        !checkWorld(plan.model, comm, error))
      return false;
    plan::ReadOptions mine;
    mine.rank = comm.rank();
    if (!plan::readPlan(options.planPath, plan, error, mine))
      return false;
    WorldInfo world;
    world.rank = comm.rank();
    world.size = comm.size();
    backend = createBackend(plan.model.target, world, error, &comm);
    if (!backend)
      return false;

    // Every rank reads the whole input files and keeps its blocks.
    std::vector<InputFile> files;
    for (const std::string &path : options.inputs) {
      InputFile file;
      file.path = path;
      if (!readTensorFile(path, file.tensor, error)) {
        error = "input file '" + path + "': " + error;
        return false;
      }
      files.push_back(std::move(file));
    }
    std::vector<HostTensor> inputs;
    if (!options.train && !bindInputs(plan.model, files, inputs, error))
      return false;
    session = Session::create(plan, comm.rank(), *backend, error);
    if (!session || (!options.train && !session->setInputs(inputs, error)))
      return false;
    if (options.train) {
      if (!session->isTraining()) {
        error = "'" + options.planPath +
                "' is not a training plan (compile it with dnnc "
                "--mode=train)";
        return false;
      }
      fingerprint = checkpointFingerprint(plan, comm.rank());
      if (!data.load(options.dataDir, plan.model, error))
        return false;
    }
    // The plan's code and weights now live in the backend.
    plan.ranks.clear();

    if (comm.rank() == 0 && !options.outputDir.empty()) {
      struct stat st;
      if (::stat(options.outputDir.c_str(), &st) == 0 && !S_ISDIR(st.st_mode)) {
        error = "--output-dir '" + options.outputDir +
                "' exists and is not a directory";
        return false;
      }
    }
    return true;
  }

  /// Collects every rank's output blocks at rank 0, which checks that they
  /// tile the outputs (each rank read only its own sections, so the reader
  /// could not).
  bool exchangeBlocks(std::string &error) {
    std::vector<std::string> all;
    if (!comm.gatherToRoot(encodeBlocks(session->getOutputBlocks()), all,
                           error))
      return false;
    if (comm.rank() != 0)
      return true;
    for (uint32_t r = 0; r < all.size(); ++r)
      if (!decodeBlocks(all[r], r, blocks, error))
        return false;
    return plan::checkOutputBlocks(plan.model, blocks, error);
  }

  /// Assembles the model outputs at rank 0 from the blocks the ranks write.
  /// Every rank sends its written blocks in the order of its block list,
  /// stably sorted by model output; rank 0 receives them in the same order
  /// per rank (its `blocks` list holds each rank's blocks in that rank's
  /// order), so both sides agree without extra messages.
  bool gatherOutputs(std::string &error) {
    static constexpr int kTag = 2;
    std::vector<HostTensor> local;
    if (!session->getOutputs(local, error))
      return false;
    auto byOutput = [](const std::vector<plan::OutputBlock> &list) {
      std::vector<size_t> order(list.size());
      for (size_t i = 0; i < order.size(); ++i)
        order[i] = i;
      std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        return list[a].output != list[b].output
                   ? list[a].output < list[b].output
                   : list[a].rank < list[b].rank;
      });
      return order;
    };
    if (comm.rank() != 0) {
      std::vector<plan::OutputBlock> mine = session->getOutputBlocks();
      for (size_t i : byOutput(mine))
        if (mine[i].owns && !comm.send(local[i].data.data(),
                                       local[i].data.size(), 0, kTag, error))
          return false;
      return true;
    }
    const plan::ModelInfo &model = plan.model;
    globals.assign(model.outputs.size(), HostTensor());
    // Rank 0's blocks come first in `blocks`, in its own order: block i of
    // rank 0 is local[i].
    std::string staging;
    for (size_t i : byOutput(blocks)) {
      const plan::OutputBlock *b = &blocks[i];
      if (!b->owns)
        continue;
      const plan::TensorDesc &desc = model.outputs[b->output];
      HostTensor &global = globals[b->output];
      uint64_t blockBytes = 0, bytes = 0;
      plan::checkedByteSize(desc.dtype, b->shape, blockBytes);
      plan::checkedByteSize(desc.dtype, desc.shape, bytes);
      if (global.dtype == 0) {
        global.name = desc.name;
        global.dtype = desc.dtype;
        global.shape = desc.shape;
        if (b->rank == 0 && b->shape == desc.shape) {
          global.data = std::move(local[i].data); // Whole: no copy.
          continue;
        }
        global.data.assign(bytes, '\0');
      }
      const std::string *data = b->rank == 0 ? &local[i].data : &staging;
      if (b->rank != 0) {
        staging.assign(blockBytes, '\0');
        if (!comm.recv(&staging[0], blockBytes, b->rank, kTag, error))
          return false;
      }
      if (blockBytes)
        insertBlock(&global.data[0], desc.shape, b->offsets, b->shape,
                    size_t(plan::dtypeByteSize(desc.dtype)), data->data());
    }
    return true;
  }

  /// Restores the newest checkpoint of --checkpoint-dir; sets `start`.
  bool resume(uint64_t &start, std::string &error) {
    CheckpointManifest manifest;
    if (!readLatestCheckpoint(options.checkpointDir, manifest, error))
      return false;
    if (manifest.worldSize != comm.size()) {
      error = "--resume: the checkpoint was written by " +
              std::to_string(manifest.worldSize) + " ranks; this launch has " +
              std::to_string(comm.size());
      return false;
    }
    std::vector<HostTensor> state;
    std::string shard = checkpointPath(options.checkpointDir, manifest.step) +
                        "/rank-" + std::to_string(comm.rank()) + ".ckpt";
    if (!readCheckpointShard(shard, fingerprint, state, error) ||
        !session->setState(state, error))
      return false;
    start = manifest.step;
    return true;
  }

  /// Writes the checkpoint after `step` steps: every rank its shard, then
  /// (once all have) rank 0 the manifest and `latest`.
  bool saveCheckpoint(uint64_t step) {
    std::string error, dir = checkpointPath(options.checkpointDir, step);
    std::vector<std::string> created;
    std::vector<HostTensor> state;
    bool ok = makeDirs(dir, created, error, "--checkpoint-dir") &&
              session->getState(state, error) &&
              writeCheckpointShard(dir + "/rank-" +
                                       std::to_string(comm.rank()) + ".ckpt",
                                   fingerprint, state, error);
    if (!agree(ok, error))
      return false;
    CheckpointManifest manifest;
    manifest.step = step;
    manifest.worldSize = comm.size();
    manifest.plan = fingerprint;
    ok = comm.rank() != 0 ||
         writeCheckpointManifest(options.checkpointDir, manifest, error);
    return agree(ok, error);
  }

  /// dnnc-run --train: the training steps.
  int train() {
    std::string error;
    uint64_t start = 0;
    if (options.resume && !agree(resume(start, error), error))
      return 1;
    if (start >= options.steps && comm.rank() == 0)
      out << "the checkpoint is at step " << start << ", --steps is "
          << options.steps << ": nothing to do\n";
    std::vector<HostTensor> batch;
    // Dynamic loss scaling's outputs (dnn-apply-optimizer's `loss_scale`
    // and `skipped_step`), looked up once.
    int scaleOutput = outputIndex("loss_scale");
    int skippedOutput = outputIndex("skipped_step");
    for (uint64_t k = start; k < options.steps; ++k) {
      Clock::time_point begin = Clock::now();
      data.getBatch(k, batch);
      bool ok = session->setInputs(batch, error) &&
                session->setStep(k + 1, error);
      runStart = std::chrono::system_clock::now();
      ok = ok && session->run(error);
      if (!agree(ok, error))
        return 1;
      double ms = std::chrono::duration<double, std::milli>(Clock::now() -
                                                            begin)
                      .count();
      if (!agree(gatherOutputs(error), error))
        return 1;
      if (comm.rank() == 0) {
        char line[160];
        std::snprintf(line, sizeof(line), "step %llu loss %.9g time %.3f ms",
                      static_cast<unsigned long long>(k + 1), lossOf(globals),
                      ms);
        out << line;
        // Dynamic loss scaling: the step's scale, and whether it was
        // skipped (dnn-apply-optimizer's `loss_scale`, `skipped_step`).
        if (scaleOutput >= 0) {
          std::snprintf(line, sizeof(line), " loss-scale %.17g",
                        scalarOf(globals[scaleOutput]));
          out << line;
          if (skippedOutput >= 0 && scalarOf(globals[skippedOutput]) == 1.0)
            out << " skipped (gradients not finite)";
        }
        out << "\n";
        out.flush();
      }
      bool last = k + 1 == options.steps;
      if (!options.checkpointDir.empty() &&
          (last || (options.saveEvery && (k + 1) % options.saveEvery == 0)) &&
          !saveCheckpoint(k + 1))
        return 1;
    }
    if (!options.exportDir.empty() && !exportWeights())
      return 1;
    if (!options.tracePath.empty() && start < options.steps && !writeTrace())
      return 1;
    out.flush();
    return 0;
  }

  /// --trace: every rank sends rank 0 the start of its last run (wall
  /// clock, microseconds) and, per schedule step, its start, duration,
  /// kind and name; rank 0 writes them as one Chrome trace, the lanes
  /// aligned on the earliest start.
  bool writeTrace() {
    std::string error, mine;
    auto put = [&](const void *p, size_t n) {
      mine.append(static_cast<const char *>(p), n);
    };
    double startUs =
        std::chrono::duration<double, std::micro>(runStart.time_since_epoch())
            .count();
    put(&startUs, sizeof(startUs));
    const plan::RankProgram &program = session->getProgram();
    for (const Session::StepTime &time : stepTimes) {
      const plan::Step &step = program.steps[time.step];
      double at = time.start * 1e6, duration = (time.end - time.start) * 1e6;
      uint8_t compute = step.kind == plan::StepKind::Compute;
      std::string name = plan::describeStep(program, step);
      uint32_t size = uint32_t(name.size());
      put(&at, sizeof(at));
      put(&duration, sizeof(duration));
      put(&compute, sizeof(compute));
      put(&size, sizeof(size));
      mine += name;
    }
    std::vector<std::string> all;
    if (!agree(comm.gatherToRoot(mine, all, error), error))
      return false;
    bool ok = true;
    if (comm.rank() == 0) {
      // Each rank's records: its start, then the steps.
      auto startOf = [](const std::string &bytes) {
        double start = 0;
        if (bytes.size() >= sizeof(start))
          std::memcpy(&start, bytes.data(), sizeof(start));
        return start;
      };
      double earliest = startOf(all[0]);
      for (const std::string &bytes : all)
        earliest = std::min(earliest, startOf(bytes));
      std::string json = "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[";
      const char *separator = "\n";
      char number[64];
      for (size_t r = 0; r < all.size(); ++r) {
        json += separator;
        separator = ",\n";
        json += "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":0,"
                "\"tid\":" + std::to_string(r) + ",\"args\":{\"name\":"
                "\"rank " + std::to_string(r) + "\"}}";
        const std::string &bytes = all[r];
        double offset = startOf(bytes) - earliest;
        size_t at = sizeof(double);
        double ts, duration;
        uint8_t compute;
        uint32_t size;
        constexpr size_t kHead = 2 * sizeof(double) + 1 + sizeof(uint32_t);
        while (at + kHead <= bytes.size()) {
          std::memcpy(&ts, bytes.data() + at, sizeof(ts));
          std::memcpy(&duration, bytes.data() + at + 8, sizeof(duration));
          std::memcpy(&compute, bytes.data() + at + 16, sizeof(compute));
          std::memcpy(&size, bytes.data() + at + 17, sizeof(size));
          at += kHead;
          if (size > bytes.size() - at)
            break;
          json += separator;
          json += "{\"name\":\"";
          for (char c : bytes.substr(at, size))
            json += c == '"' || c == '\\' ? std::string("\\") + c
                                          : std::string(1, c);
          at += size;
          std::snprintf(number, sizeof(number), "%.3f", ts + offset);
          json += std::string("\",\"cat\":\"") +
                  (compute ? "compute" : "communication") +
                  "\",\"ph\":\"X\",\"pid\":0,\"tid\":" + std::to_string(r) +
                  ",\"ts\":" + number;
          std::snprintf(number, sizeof(number), "%.3f", duration);
          json += std::string(",\"dur\":") + number + "}";
        }
      }
      json += "\n]}\n";
      plan::AtomicFile file;
      ok = file.open(options.tracePath, error) &&
           file.write(json.data(), json.size(), error) && file.commit(error);
      if (!ok)
        error = "--trace: " + error;
    }
    return agree(ok, error);
  }

  /// --export-dir: rank 0 assembles every weight from the ranks' blocks and
  /// writes it whole as DIR/param_K.pb.
  bool exportWeights() {
    std::string error, mine;
    auto put = [&](const void *p, size_t n) {
      mine.append(static_cast<const char *>(p), n);
    };
    bool ok = true;
    const std::vector<plan::BufferDesc> &buffers = session->getBuffers();
    // The trained parameters: the weights the step updates (frozen ones,
    // which a mixed-precision plan stores rounded, stay as the model has
    // them).
    std::vector<bool> trained(buffers.size(), false);
    for (const plan::BufferDesc &b : buffers)
      if (b.role == plan::BufferRole::Update && b.index < buffers.size())
        trained[b.index] = true;
    HostTensor t;
    for (size_t i = 0; ok && i < buffers.size(); ++i) {
      const plan::BufferDesc &b = buffers[i];
      if (b.role != plan::BufferRole::Weight || !trained[i])
        continue;
      if (plan.model.parameters.empty()) {
        error = "--export-dir: the plan lists no parameters, so where its "
                "weights' blocks lie is unknown";
        ok = false;
        break;
      }
      if (!(ok = session->getBuffer(i, t, error)))
        break;
      uint32_t head[3] = {b.index, uint32_t(b.sliceOffsets.size()),
                          uint32_t(b.tensor.shape.size())};
      uint64_t bytes = t.data.size();
      put(head, sizeof(head));
      put(b.sliceOffsets.data(), 8 * b.sliceOffsets.size());
      put(b.tensor.shape.data(), 8 * b.tensor.shape.size());
      put(&bytes, 8);
      mine += t.data;
    }
    if (!agree(ok, error))
      return false;
    std::vector<std::string> all;
    if (!agree(comm.gatherToRoot(mine, all, error), error))
      return false;
    ok = comm.rank() != 0 || assembleWeights(all, error);
    return agree(ok, error);
  }

  /// Rank 0: places the blocks every rank sent and writes the weights.
  bool assembleWeights(const std::vector<std::string> &all,
                       std::string &error) {
    const std::vector<plan::TensorDesc> &params = plan.model.parameters;
    std::vector<HostTensor> globals(params.size());
    for (size_t r = 0; r < all.size(); ++r) {
      const std::string &bytes = all[r];
      size_t at = 0;
      auto get = [&](void *p, size_t n) {
        if (n > bytes.size() - at)
          return false;
        if (n)
          std::memcpy(p, bytes.data() + at, n);
        at += n;
        return true;
      };
      while (at < bytes.size()) {
        uint32_t head[3];
        uint64_t size = 0;
        std::vector<int64_t> offsets, shape;
        bool ok = get(head, sizeof(head)) && head[0] < params.size() &&
                  head[1] <= plan::kMaxTensorRank &&
                  head[2] <= plan::kMaxTensorRank;
        if (ok) {
          offsets.resize(head[1]);
          shape.resize(head[2]);
          ok = get(offsets.data(), 8 * offsets.size()) &&
               get(shape.data(), 8 * shape.size()) && get(&size, 8) &&
               size <= bytes.size() - at;
        }
        if (!ok) {
          error = "malformed weight blocks from rank " + std::to_string(r);
          return false;
        }
        const plan::TensorDesc &desc = params[head[0]];
        HostTensor &global = globals[head[0]];
        uint64_t total = 0;
        plan::checkedByteSize(desc.dtype, desc.shape, total);
        if (global.dtype == 0) {
          global.name = desc.name;
          global.dtype = desc.dtype;
          global.shape = desc.shape;
          global.data.assign(total, '\0');
        }
        size_t elt = size_t(plan::dtypeByteSize(desc.dtype));
        uint64_t blockBytes = 0;
        if (offsets.empty())
          offsets.assign(desc.shape.size(), 0);
        if (shape.size() != desc.shape.size() ||
            !plan::checkedByteSize(desc.dtype, shape, blockBytes) ||
            blockBytes != size) {
          error = "malformed weight block from rank " + std::to_string(r);
          return false;
        }
        insertBlock(&global.data[0], desc.shape, offsets, shape, elt,
                    bytes.data() + at);
        at += size;
      }
    }
    std::vector<HostTensor> weights;
    for (HostTensor &t : globals)
      if (t.dtype != 0)
        weights.push_back(std::move(t));
    return writeOutputs(options.exportDir, weights, error, "param_");
  }

  /// The index of the model output named `name`, or -1.
  int outputIndex(const std::string &name) const {
    for (size_t i = 0; i < plan.model.outputs.size(); ++i)
      if (plan.model.outputs[i].name == name)
        return static_cast<int>(i);
    return -1;
  }

  /// The loss: model output 0 as a double (NaN when not a float scalar).
  static double lossOf(const std::vector<HostTensor> &outputs) {
    if (outputs.empty())
      return std::nan("");
    return scalarOf(outputs[0]);
  }

  /// `t` as a double (NaN when not a float scalar).
  static double scalarOf(const HostTensor &t) {
    if (t.dtype == int32_t(plan::DataType::Float) && t.data.size() == 4) {
      float v;
      std::memcpy(&v, t.data.data(), 4);
      return v;
    }
    if (t.dtype == int32_t(plan::DataType::Double) && t.data.size() == 8) {
      double v;
      std::memcpy(&v, t.data.data(), 8);
      return v;
    }
    return std::nan("");
  }

  const Options &options;
  Comm &comm;
  std::ostream &out, &err;
  double grace;
  /// --train: the samples, and this rank's checkpoint fingerprint.
  TrainingData data;
  std::string fingerprint;
  /// "rank R: " in a launch of several processes.
  std::string who;
  plan::Plan plan;
  std::unique_ptr<Backend> backend;
  std::unique_ptr<Session> session;
  /// Rank 0: the output blocks of every rank.
  std::vector<plan::OutputBlock> blocks;
  /// Rank 0: the assembled model outputs.
  std::vector<HostTensor> globals;
  double total = 0, best = 0;
  /// --trace: the step times of the last run, and when it started.
  std::vector<Session::StepTime> stepTimes;
  std::chrono::system_clock::time_point runStart;
};
} // namespace

int dnncRunMain(int argc, const char *const *argv, std::ostream &out,
                std::ostream &err) {
  std::string error;
  Options options;
  if (!parseArgs(argc, argv, options, error)) {
    printError(err, error);
    return 1;
  }
  if (options.help) {
    out << kUsage;
    out.flush();
    return 0;
  }
  if (options.version) {
    out << "dnnc-run (reads plan.bin format version " << plan::kFormatVersion
        << "; targets:";
    for (const std::string &t : supportedTargets())
      out << " " << t;
    std::string tcp = glooCompiledIn() ? "TCP and Gloo (RANK/WORLD_SIZE"
                                       : "TCP (RANK/WORLD_SIZE; no Gloo";
    out << "; multi-rank: "
        << (mpiCompiledIn() ? "MPI, " + tcp + ")"
                            : tcp + "; built without MPI)")
        << ")\n";
    out.flush();
    return 0;
  }
  if (options.planPath.empty()) {
    printError(err, "no plan file given (usage: dnnc-run PLAN.bin --input "
                    "FILE... --output-dir DIR; see --help)");
    return 1;
  }
  WorldInfo world;
  if (!detectWorld(world, error)) {
    printError(err, error);
    return 1;
  }
  if (options.printPlan) {
    // Under a launcher, rank 0 prints; the others have nothing to add.
    if (world.rank != 0)
      return 0;
    plan::Plan plan;
    if (!plan::readPlan(options.planPath, plan, error)) {
      printError(err, error);
      return 1;
    }
    out << plan::describePlan(plan);
    out.flush();
    return 0;
  }
  // Without Gloo the cpu backend's collectives run on MPI only: a
  // torchrun-style launch of a cpu plan fails on every rank before
  // connecting (a plan that cannot be read is reported after connecting,
  // as for any launch).
  if (world.tcp && world.size > 1 && !glooCompiledIn()) {
    plan::Plan model;
    plan::ReadOptions modelOnly;
    modelOnly.rank = plan::kNoRanks;
    std::string ignored;
    if (plan::readPlan(options.planPath, model, ignored, modelOnly) &&
        model.model.target == "cpu" && model.model.worldSize > 1) {
      printError(err, "cpu plans of " + std::to_string(model.model.worldSize) +
                          " ranks need MPI (mpirun) or a build with Gloo "
                          "(DNNC_RUNTIME_WITH_GLOO, libgloo-dev); "
                          "RANK/WORLD_SIZE launches of this build run cuda "
                          "plans");
      return 1;
    }
  }
  // Errors so far are the same on every rank (same arguments, same
  // environment): each rank reports and exits without communicating. From
  // here on the ranks agree after each phase.
  std::unique_ptr<Comm> comm = Comm::create(world, error);
  if (!comm) {
    printError(err, error);
    return 1;
  }
  return RankRun(options, *comm, out, err).run();
}

} // namespace dnnc::rt
