//===- dnnc-comm-bench.cpp - Times the cpu collective kernels --*- C++ -*-===//
//
// Times dnnc_rt_all_reduce (float32 sum) and dnnc_rt_all_gather (float32)
// over all the ranks of one launch, connected the way dnnc-run connects
// them (Comm::create): MPI under mpirun, Gloo when launched torchrun-style
// (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT). bench/cpu_collectives.py
// runs it both ways and compares; it is a measurement, not a test.
//
//   dnnc-comm-bench [--ops allreduce,allgather] [--sizes 4096,1048576]
//                   [--iters 200] [--warmup 20]
//
// Sizes are bytes per rank (the all_reduce buffer; each rank's all_gather
// block). Every size is checked once (the sum of the ranks' values; every
// rank's block) before it is timed. Rank 0 prints one line per op and size:
//
//   allreduce ranks=2 bytes=4096 iters=200 mean_us=21.4 min_us=17.9
//
// `iters` shrinks for large sizes (at most 256 MiB moved per size and rank,
// at least 5 calls). The ranks agree (Comm::allOk) before each timed loop.
//
//===----------------------------------------------------------------------===//

#include "Collectives.h"
#include "KernelErrors.h"
#include "dnnc/Runtime/Comm.h"
#include "dnnc/Runtime/Kernels.h"
#include "dnnc/Runtime/World.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

using namespace dnnc;

namespace {

using Clock = std::chrono::steady_clock;

/// The options of one run.
struct Options {
  /// "allreduce" and/or "allgather".
  std::vector<std::string> ops = {"allreduce", "allgather"};
  /// Bytes per rank.
  std::vector<uint64_t> sizes = {4096, 65536, 1048576, 16777216};
  /// Timed calls per size (fewer for large sizes).
  uint64_t iters = 200;
  /// Untimed calls per size.
  uint64_t warmup = 20;
};

/// Splits "a,b,c".
std::vector<std::string> split(const std::string &text) {
  std::vector<std::string> parts;
  std::stringstream s(text);
  std::string part;
  while (std::getline(s, part, ','))
    if (!part.empty())
      parts.push_back(part);
  return parts;
}

/// Parses the command line; false (with `error`) on a bad one.
bool parse(int argc, char **argv, Options &o, std::string &error) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (i + 1 >= argc) {
      error = "missing value after " + arg;
      return false;
    }
    std::string value = argv[++i];
    char *end = nullptr;
    if (arg == "--ops") {
      o.ops = split(value);
      for (const std::string &op : o.ops)
        if (op != "allreduce" && op != "allgather") {
          error = "unknown op '" + op + "' (allreduce, allgather)";
          return false;
        }
    } else if (arg == "--sizes") {
      o.sizes.clear();
      for (const std::string &size : split(value)) {
        uint64_t bytes = std::strtoull(size.c_str(), &end, 10);
        if (*end || bytes == 0 || bytes % 4) {
          error = "invalid size '" + size + "' (bytes, a multiple of 4)";
          return false;
        }
        o.sizes.push_back(bytes);
      }
    } else if (arg == "--iters" || arg == "--warmup") {
      uint64_t n = std::strtoull(value.c_str(), &end, 10);
      if (*end || (arg == "--iters" && n == 0)) {
        error = "invalid " + arg + " '" + value + "'";
        return false;
      }
      (arg == "--iters" ? o.iters : o.warmup) = n;
    } else {
      error = "unknown option " + arg;
      return false;
    }
  }
  return true;
}

/// Fails the run when a kernel recorded an error.
bool kernelOk(uint32_t rank) {
  std::string message;
  if (!rt::takeKernelError(message))
    return true;
  std::fprintf(stderr, "error: rank %u: %s\n", rank, message.c_str());
  return false;
}

} // namespace

int main(int argc, char **argv) {
  Options o;
  std::string error;
  if (!parse(argc, argv, o, error)) {
    std::fprintf(stderr, "error: %s\n", error.c_str());
    return 2;
  }
  rt::WorldInfo world;
  std::unique_ptr<rt::Comm> comm;
  if (rt::detectWorld(world, error))
    comm = rt::Comm::create(world, error);
  if (!comm) {
    std::fprintf(stderr, "error: %s\n", error.c_str());
    return 1;
  }
  const uint32_t rank = comm->rank(), size = comm->size();
  plan::ModelInfo model;
  model.target = "cpu";
  model.worldSize = size;
  model.meshAxes = {{"world", int64_t(size)}};
  std::unique_ptr<rt::CollectiveContext> context =
      rt::CollectiveContext::create(comm.get(), model, error);
  if (!context) {
    std::fprintf(stderr, "error: rank %u: %s\n", rank, error.c_str());
    return 1;
  }
  rt::ActiveCollectives active(context.get());
  const int32_t f32 = int32_t(plan::DataType::Float);
  for (const std::string &op : o.ops)
    for (uint64_t bytes : o.sizes) {
      const uint64_t n = bytes / 4;
      std::vector<float> in(n, float(rank + 1));
      std::vector<float> out(op == "allreduce" ? n : n * size);
      auto call = [&] {
        if (op == "allreduce")
          dnnc_rt_all_reduce(1, f32, DNNC_RT_REDUCE_SUM, in.data(), out.data(),
                             int64_t(n));
        else
          dnnc_rt_all_gather(1, f32, in.data(), out.data(), 1, int64_t(n));
      };
      // Once, checked.
      call();
      bool right = kernelOk(rank);
      for (uint64_t i = 0; right && i < out.size(); i += 1 + out.size() / 97)
        right = op == "allreduce"
                    ? out[i] == float(size) * float(size + 1) / 2
                    : out[i] == float(i / n + 1);
      if (!right) {
        std::fprintf(stderr, "error: rank %u: wrong %s result\n", rank,
                     op.c_str());
        comm->abort(1);
      }
      uint64_t iters = std::max<uint64_t>(
          5, std::min<uint64_t>(o.iters, (uint64_t(256) << 20) / bytes));
      for (uint64_t i = 0; i < o.warmup && i < iters; ++i)
        call();
      if (!kernelOk(rank) || !comm->allOk(true))
        comm->abort(1);
      double best = 1e30;
      Clock::time_point start = Clock::now();
      for (uint64_t i = 0; i < iters; ++i) {
        Clock::time_point one = Clock::now();
        call();
        best = std::min(
            best, std::chrono::duration<double>(Clock::now() - one).count());
      }
      double total =
          std::chrono::duration<double>(Clock::now() - start).count();
      if (!kernelOk(rank))
        comm->abort(1);
      if (rank == 0)
        std::printf("%s ranks=%u bytes=%llu iters=%llu mean_us=%.3f "
                    "min_us=%.3f\n",
                    op.c_str(), size, static_cast<unsigned long long>(bytes),
                    static_cast<unsigned long long>(iters),
                    total / double(iters) * 1e6, best * 1e6);
      std::fflush(stdout);
    }
  return comm->allOk(true) ? 0 : 1;
}
