//===- DnncRun.cpp - The dnnc-run command line -----------------*- C++ -*-===//
//
// dnnc-run PLAN.bin --input FILE... --output-dir DIR: reads the plan, binds
// the inputs, runs this process's rank on the plan's target and writes the
// outputs as ONNX TensorProto files. Every failure is one `error: ...` line
// and exit code 1, and no output file is left behind.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Runtime/DnncRun.h"
#include "dnnc/Runtime/Backend.h"
#include "dnnc/Runtime/FileUtil.h"
#include "dnnc/Runtime/Plan.h"
#include "dnnc/Runtime/Session.h"
#include "dnnc/Runtime/TensorFile.h"
#include "dnnc/Runtime/TensorProto.h"
#include "dnnc/Runtime/World.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <sys/stat.h>
#include <unistd.h>

namespace dnnc::rt {

static const char kUsage[] =
    R"(usage: dnnc-run PLAN.bin [--input FILE]... [--output-dir DIR]
                [--repeat N] [--warmup N] [--time] [--print-plan]

Runs a plan.bin compiled by dnnc on this machine (target cpu; one rank).

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
  --version           print the plan.bin format version this build reads
  -h, --help          print this help

Errors are one line `error: ...` on stderr with exit code 1.
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
  return true;
}

/// Checks that this process can run `model`: one rank for now. Multi-rank
/// execution (mpirun/srun) replaces this with a check that the launch size
/// equals the plan's world size.
static bool checkWorld(const plan::ModelInfo &model, const WorldInfo &world,
                       std::string &error) {
  if (world.size > 1) {
    error = "dnnc-run was launched as rank " + std::to_string(world.rank) +
            " of " + std::to_string(world.size) + " (" + world.source +
            "); multi-rank execution is not supported by this dnnc-run yet";
    return false;
  }
  if (model.worldSize != 1) {
    std::string mesh;
    for (const auto &[name, size] : model.meshAxes)
      mesh += (mesh.empty() ? "" : "x") + name + "=" + std::to_string(size);
    error = "plan.bin needs " + std::to_string(model.worldSize) + " ranks" +
            (mesh.empty() ? "" : " (mesh " + mesh + ")") +
            " but dnnc-run runs as a single process; multi-rank execution "
            "under mpirun/srun is not supported by this dnnc-run yet";
    return false;
  }
  return true;
}

/// Creates `dir` and its missing parents; records the ones it created.
static bool makeDirs(const std::string &dir, std::vector<std::string> &created,
                     std::string &error) {
  struct stat st;
  if (::stat(dir.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode))
      return true;
    error = "--output-dir '" + dir + "' exists and is not a directory";
    return false;
  }
  size_t slash = dir.find_last_of('/');
  if (slash != std::string::npos && slash > 0) {
    std::string parent = dir.substr(0, slash);
    if (!makeDirs(parent, created, error))
      return false;
  }
  if (::mkdir(dir.c_str(), 0777) != 0 && errno != EEXIST) {
    error = "cannot create --output-dir '" + dir + "': " + std::strerror(errno);
    return false;
  }
  created.push_back(dir);
  return true;
}

/// Writes every output as DIR/output_K.pb, all or nothing.
static bool writeOutputs(const std::string &dir,
                         const std::vector<HostTensor> &outputs,
                         std::string &error) {
  std::vector<std::string> createdDirs;
  auto removeCreatedDirs = [&]() {
    for (auto it = createdDirs.rbegin(); it != createdDirs.rend(); ++it)
      ::rmdir(it->c_str());
  };
  if (!makeDirs(dir, createdDirs, error))
    return false;

  std::vector<std::unique_ptr<plan::AtomicFile>> files;
  bool ok = true;
  for (size_t k = 0; ok && k < outputs.size(); ++k) {
    if (outputs[k].dtype == 0)
      continue; // Not held by this rank.
    std::string bytes;
    std::string path = dir + "/output_" + std::to_string(k) + ".pb";
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

/// The body of dnncRunMain; sets `error` on failure.
static bool runTool(int argc, const char *const *argv, std::ostream &out,
                    std::string &error) {
  Options options;
  if (!parseArgs(argc, argv, options, error))
    return false;
  if (options.help) {
    out << kUsage;
    return true;
  }
  if (options.version) {
    out << "dnnc-run (reads plan.bin format version " << plan::kFormatVersion
        << "; targets:";
    for (const std::string &t : supportedTargets())
      out << " " << t;
    out << ")\n";
    return true;
  }
  if (options.planPath.empty()) {
    error = "no plan file given (usage: dnnc-run PLAN.bin --input FILE... "
            "--output-dir DIR; see --help)";
    return false;
  }

  if (options.printPlan) {
    plan::Plan plan;
    if (!plan::readPlan(options.planPath, plan, error))
      return false;
    out << plan::describePlan(plan);
    return true;
  }

  if (!options.outputDir.empty()) {
    struct stat st;
    if (::stat(options.outputDir.c_str(), &st) == 0 && !S_ISDIR(st.st_mode)) {
      error = "--output-dir '" + options.outputDir +
              "' exists and is not a directory";
      return false;
    }
  }

  WorldInfo world;
  if (!detectWorld(world, error))
    return false;
  plan::Plan plan;
  plan::ReadOptions readOptions;
  readOptions.rank = world.rank;
  if (!plan::readPlan(options.planPath, plan, error, readOptions))
    return false;
  std::unique_ptr<Backend> backend =
      createBackend(plan.model.target, world, error);
  if (!backend || !checkWorld(plan.model, world, error))
    return false;

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
  if (!bindInputs(plan.model, files, inputs, error))
    return false;

  std::unique_ptr<Session> session =
      Session::create(plan, world.rank, *backend, error);
  if (!session || !session->setInputs(inputs, error))
    return false;
  // The plan's code and weights now live in the backend.
  plan.ranks.clear();

  for (uint64_t i = 0; i < options.warmup; ++i)
    if (!session->run(error))
      return false;
  using Clock = std::chrono::steady_clock;
  double total = 0, best = 0;
  for (uint64_t i = 0; i < options.repeat; ++i) {
    Clock::time_point start = Clock::now();
    if (!session->run(error))
      return false;
    double ms =
        std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    total += ms;
    best = i == 0 ? ms : std::min(best, ms);
  }

  std::vector<HostTensor> outputs;
  if (!session->getOutputs(outputs, error))
    return false;
  if (!options.outputDir.empty() &&
      !writeOutputs(options.outputDir, outputs, error))
    return false;
  if (options.time) {
    char line[128];
    std::snprintf(line, sizeof(line),
                  "time: mean %.6f ms/run, min %.6f ms, %llu runs\n",
                  total / double(options.repeat), best,
                  static_cast<unsigned long long>(options.repeat));
    out << line;
  }
  return true;
}

int dnncRunMain(int argc, const char *const *argv, std::ostream &out,
                std::ostream &err) {
  std::string error;
  if (runTool(argc, argv, out, error)) {
    out.flush();
    return 0;
  }
  // One line, whatever the message contains.
  for (char &c : error)
    if (c == '\n' || c == '\r')
      c = ' ';
  err << "error: " << error << "\n";
  err.flush();
  return 1;
}

} // namespace dnnc::rt
