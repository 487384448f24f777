//===- World.h - Which rank this process is --------------------*- C++ -*-===//
//
// The process's place in a multi-process launch, read from the environment
// that launchers set: Open MPI (OMPI_COMM_WORLD_RANK/SIZE), MPICH and Intel
// MPI (PMI_RANK/PMI_SIZE), Slurm's srun (SLURM_PROCID/SLURM_NTASKS inside a
// job step) and torchrun-style RANK/WORLD_SIZE (with LOCAL_RANK,
// LOCAL_WORLD_SIZE, MASTER_ADDR and MASTER_PORT), whose processes Comm
// connects over TCP. A plain process is rank 0 of 1.
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
  /// True for a torchrun-style launch (RANK/WORLD_SIZE, and no MPI launcher
  /// or a build without MPI): Comm connects the ranks over TCP through
  /// rank 0 at masterAddr:masterPort.
  bool tcp = false;
  /// This process's rank among the processes of its node: LOCAL_RANK (or
  /// OMPI_COMM_WORLD_LOCAL_RANK, SLURM_LOCALID, MPI_LOCALRANKID), else the
  /// rank.
  uint32_t localRank = 0;
  /// Number of processes on this node: LOCAL_WORLD_SIZE (or
  /// OMPI_COMM_WORLD_LOCAL_SIZE), else 0 (unknown).
  uint32_t localSize = 0;
  /// MASTER_ADDR of a torchrun-style launch: the host rank 0 listens on.
  std::string masterAddr;
  /// MASTER_PORT of a torchrun-style launch (1..65535); 0 when not set.
  uint16_t masterPort = 0;
};

/// Fills `world` from the environment. Fails on malformed values (not a
/// number, rank >= size, size 0, LOCAL_RANK >= LOCAL_WORLD_SIZE, a
/// MASTER_PORT not in 1..65535); a missing MASTER_ADDR/MASTER_PORT is
/// Comm::create's error (a world of one needs neither). An MPI
/// launcher wins over RANK/WORLD_SIZE, unless the runtime is built without
/// MPI.
bool detectWorld(WorldInfo &world, std::string &error);

} // namespace dnnc::rt

#endif // DNNC_RUNTIME_WORLD_H
