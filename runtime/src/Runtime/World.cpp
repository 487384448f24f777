//===- World.cpp - Which rank this process is ------------------*- C++ -*-===//
//
// Reads the rank and world size that MPI launchers, srun and torchrun-style
// launchers put in the environment, the local rank, and the rendezvous
// address of a torchrun-style launch.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Runtime/World.h"

#include <cstdlib>
#include <vector>

namespace dnnc::rt {

/// Parses a decimal u32 in [0, 2^31).
static bool parseCount(const char *text, uint32_t &value) {
  if (!text || !*text)
    return false;
  uint64_t v = 0;
  for (const char *p = text; *p; ++p) {
    if (*p < '0' || *p > '9')
      return false;
    v = v * 10 + uint64_t(*p - '0');
    if (v >= (uint64_t(1) << 31))
      return false;
  }
  value = static_cast<uint32_t>(v);
  return true;
}

/// The value of environment variable `name`, or null when unset.
static const char *env(const char *name) { return std::getenv(name); }

/// Reads the optional count `name` into `value`; fails on a malformed one.
static bool readOptionalCount(const char *name, uint32_t &value, bool &set,
                              std::string &error) {
  const char *text = env(name);
  set = text != nullptr;
  if (!set)
    return true;
  if (!parseCount(text, value)) {
    error = std::string("invalid ") + name + "='" + text +
            "' in the environment: expected a number from 0 to 2147483647";
    return false;
  }
  return true;
}

/// Fills the local rank and size of an MPI launch (lenient: a malformed
/// value is ignored, as the CUDA backend does).
static void readMpiLocal(WorldInfo &world) {
  world.localRank = world.rank;
  for (const char *name :
       {"OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID", "MPI_LOCALRANKID"}) {
    uint32_t value = 0;
    if (parseCount(env(name), value)) {
      world.localRank = value;
      break;
    }
  }
  uint32_t size = 0;
  if (parseCount(env("OMPI_COMM_WORLD_LOCAL_SIZE"), size))
    world.localSize = size;
}

/// Fills the local rank and size and the rendezvous address of a
/// torchrun-style launch, checking each.
static bool readTorchrunEnv(WorldInfo &world, std::string &error) {
  bool hasLocalRank = false, hasLocalSize = false;
  if (!readOptionalCount("LOCAL_RANK", world.localRank, hasLocalRank, error) ||
      !readOptionalCount("LOCAL_WORLD_SIZE", world.localSize, hasLocalSize,
                         error))
    return false;
  if (!hasLocalRank)
    world.localRank = world.rank;
  if (hasLocalSize && (world.localSize == 0 || world.localSize > world.size ||
                       (hasLocalRank && world.localRank >= world.localSize))) {
    error = "invalid LOCAL_RANK/LOCAL_WORLD_SIZE in the environment: "
            "LOCAL_RANK='" +
            std::string(env("LOCAL_RANK") ? env("LOCAL_RANK") : "") +
            "', LOCAL_WORLD_SIZE='" + env("LOCAL_WORLD_SIZE") +
            "' (WORLD_SIZE=" + std::to_string(world.size) + ")";
    return false;
  }
  const char *addr = env("MASTER_ADDR");
  const char *port = env("MASTER_PORT");
  if (addr)
    world.masterAddr = addr;
  if (port) {
    uint32_t value = 0;
    if (!parseCount(port, value) || value == 0 || value > 65535) {
      error = std::string("invalid MASTER_PORT='") + port +
              "' in the environment: expected a port number from 1 to 65535";
      return false;
    }
    world.masterPort = uint16_t(value);
  }
  return true;
}

bool detectWorld(WorldInfo &world, std::string &error) {
  world = WorldInfo();
  struct Launcher {
    const char *rankVar;
    const char *sizeVar;
    const char *requiredVar; ///< Must also be set (or null).
    bool mpi;                ///< An MPI launcher.
  };
  static const Launcher torchrun = {"RANK", "WORLD_SIZE", nullptr, false};
  static const Launcher mpiLaunchers[] = {
      {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", nullptr, true},
      {"PMI_RANK", "PMI_SIZE", nullptr, true},
      // srun sets SLURM_STEP_ID; a batch script alone is not a launch.
      {"SLURM_PROCID", "SLURM_NTASKS", "SLURM_STEP_ID", true},
  };
  // An MPI launcher wins, unless this build cannot use MPI: then a
  // torchrun-style environment (RANK/WORLD_SIZE) is tried first.
  std::vector<const Launcher *> launchers;
  if (!DNNC_RUNTIME_WITH_MPI)
    launchers.push_back(&torchrun);
  for (const Launcher &l : mpiLaunchers)
    launchers.push_back(&l);
  if (DNNC_RUNTIME_WITH_MPI)
    launchers.push_back(&torchrun);
  for (const Launcher *l : launchers) {
    const char *rankText = env(l->rankVar);
    const char *sizeText = env(l->sizeVar);
    if (!rankText || !sizeText || (l->requiredVar && !env(l->requiredVar)))
      continue;
    uint32_t rank = 0, size = 0;
    if (!parseCount(rankText, rank) || !parseCount(sizeText, size) ||
        size == 0 || rank >= size) {
      error = std::string("invalid rank/world size in the environment: ") +
              l->rankVar + "='" + rankText + "', " + l->sizeVar + "='" +
              sizeText + "' (expected 0 <= " + l->rankVar + " < " + l->sizeVar +
              ")";
      return false;
    }
    world.rank = rank;
    world.size = size;
    world.source = l->sizeVar;
    world.mpi = l->mpi;
    world.tcp = !l->mpi;
    if (l->mpi) {
      readMpiLocal(world);
      return true;
    }
    return readTorchrunEnv(world, error);
  }
  return true;
}

} // namespace dnnc::rt
