//===- World.h - Which rank this process is --------------------*- C++ -*-===//
//
// The process's place in a multi-process launch, read from the environment
// that launchers set: Open MPI (OMPI_COMM_WORLD_RANK/SIZE), MPICH and Intel
// MPI (PMI_RANK/PMI_SIZE), Slurm's srun (SLURM_PROCID/SLURM_NTASKS inside a
// job step) and torchrun-style RANK/WORLD_SIZE. A plain process is rank 0
// of 1.
//
//===----------------------------------------------------------------------===//

#ifndef DNNC_RUNTIME_WORLD_H
#define DNNC_RUNTIME_WORLD_H

#include <cstdint>
#include <string>

namespace dnnc::rt {

/// This process's rank and the number of processes launched together.
struct WorldInfo {
  /// 0 .. size-1.
  uint32_t rank = 0;
  /// Number of processes; 1 when not launched by a multi-process launcher.
  uint32_t size = 1;
  /// The environment variable the size came from ("" for a plain process).
  std::string source;
  /// True when the launcher is an MPI launcher (Open MPI's mpirun, MPICH or
  /// Intel MPI through PMI, Slurm's srun): MPI_Init can connect the ranks.
  /// False for a plain process and for torchrun-style RANK/WORLD_SIZE.
  bool mpi = false;
};

/// Fills `world` from the environment. Fails on malformed values (not a
/// number, rank >= size, size 0).
bool detectWorld(WorldInfo &world, std::string &error);

} // namespace dnnc::rt

#endif // DNNC_RUNTIME_WORLD_H
