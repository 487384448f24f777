//===- World.cpp - Which rank this process is ------------------*- C++ -*-===//
//
// Reads the rank and world size that MPI launchers, srun and torchrun-style
// launchers put in the environment.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Runtime/World.h"

#include <cstdlib>

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

bool detectWorld(WorldInfo &world, std::string &error) {
  world = WorldInfo();
  struct Launcher {
    const char *rankVar;
    const char *sizeVar;
    const char *requiredVar; ///< Must also be set (or null).
    bool mpi;                ///< An MPI launcher.
  };
  static const Launcher launchers[] = {
      {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", nullptr, true},
      {"PMI_RANK", "PMI_SIZE", nullptr, true},
      // srun sets SLURM_STEP_ID; a batch script alone is not a launch.
      {"SLURM_PROCID", "SLURM_NTASKS", "SLURM_STEP_ID", true},
      {"RANK", "WORLD_SIZE", nullptr, false},
  };
  for (const Launcher &l : launchers) {
    const char *rankText = std::getenv(l.rankVar);
    const char *sizeText = std::getenv(l.sizeVar);
    if (!rankText || !sizeText ||
        (l.requiredVar && !std::getenv(l.requiredVar)))
      continue;
    uint32_t rank = 0, size = 0;
    if (!parseCount(rankText, rank) || !parseCount(sizeText, size) ||
        size == 0 || rank >= size) {
      error = std::string("invalid rank/world size in the environment: ") +
              l.rankVar + "='" + rankText + "', " + l.sizeVar + "='" +
              sizeText + "'";
      return false;
    }
    world.rank = rank;
    world.size = size;
    world.source = l.sizeVar;
    world.mpi = l.mpi;
    return true;
  }
  return true;
}

} // namespace dnnc::rt
