//===- Comm.h - The processes of a multi-rank run ---------------*- C++ -*-===//
//
// A Comm connects the processes a launcher started together: under mpirun or
// srun it initialises MPI (when the runtime is built with it) and carries
// dnnc-run's own traffic — status agreement after each phase, the exchange
// of output-block descriptors, the gather of output blocks to rank 0 — on a
// communicator of its own, apart from the one the collective kernels use
// (Kernels.h). A plain process is a Comm of one rank without MPI.
//
//===----------------------------------------------------------------------===//

#ifndef DNNC_RUNTIME_COMM_H
#define DNNC_RUNTIME_COMM_H

#include "dnnc/Runtime/World.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace dnnc::rt {

/// True when this build of the runtime has MPI (CMake option
/// DNNC_RUNTIME_WITH_MPI).
bool mpiCompiledIn();

/// The processes of one launch (MPI_COMM_WORLD), or this process alone.
class Comm {
public:
  /// Connects this process to the others of its launch. Under an MPI
  /// launcher (`world.mpi`) with MPI compiled in, initialises MPI and takes
  /// the rank and size from MPI_COMM_WORLD. A plain process is rank 0 of 1.
  /// A launch of several processes that cannot be connected (a build without
  /// MPI, a torchrun-style launcher) is an error.
  static std::unique_ptr<Comm> create(const WorldInfo &world,
                                      std::string &error);

  /// This process alone: rank 0 of 1, no MPI.
  static std::unique_ptr<Comm> createLocal();

  /// Frees the communicators and finalises MPI (when it was initialised).
  ~Comm();
  Comm(const Comm &) = delete;
  Comm &operator=(const Comm &) = delete;

  /// This process's rank, 0 .. size()-1.
  uint32_t rank() const { return rankValue; }
  /// Number of processes.
  uint32_t size() const { return sizeValue; }
  /// True when the processes are connected through MPI.
  bool usesMpi() const { return mpi; }
  /// How the processes were launched, for messages: "mpirun/srun
  /// (OMPI_COMM_WORLD_SIZE=4)", or "" for a plain process.
  const std::string &launcher() const { return launcherText; }

  /// Collective: true when `ok` is true on every rank. A rank passing
  /// `ok == false` waits at most `graceSeconds` (>= 0) for the others and
  /// sets `*timedOut` when they did not all arrive — they are then blocked
  /// elsewhere (e.g. in a collective kernel this rank skipped) and the
  /// caller should abort(). Ranks passing `ok == true` wait as long as it
  /// takes.
  bool allOk(bool ok, double graceSeconds = -1, bool *timedOut = nullptr);

  /// Ends every process of the launch with exit code `code` (MPI_Abort);
  /// a process alone just exits.
  [[noreturn]] void abort(int code);

  /// Collective: rank 0 receives every rank's `bytes` in `all` (indexed by
  /// rank); the other ranks get `all` empty.
  bool gatherToRoot(const std::string &bytes, std::vector<std::string> &all,
                    std::string &error);

  /// Sends `bytes` bytes to rank `peer` (any size; blocking).
  bool send(const void *data, uint64_t bytes, uint32_t peer, int tag,
            std::string &error);

  /// Receives exactly `bytes` bytes from rank `peer` (blocking).
  bool recv(void *data, uint64_t bytes, uint32_t peer, int tag,
            std::string &error);

  /// Starts sending `bytes` bytes at `data` to rank `peer` with `tag` on the
  /// communicator of pipeline-stage traffic (apart from dnnc-run's own and
  /// the kernels'), without waiting for the receiver. `data` must stay
  /// unchanged until waitAll(). Fails without MPI or for a world of one.
  bool isend(const void *data, uint64_t bytes, uint32_t peer, int tag,
             std::string &error);

  /// Receives exactly `bytes` bytes from rank `peer` with `tag` on the
  /// pipeline-stage communicator, waiting until they have arrived.
  bool recvStage(void *data, uint64_t bytes, uint32_t peer, int tag,
                 std::string &error);

  /// Waits until every send started by isend() has completed.
  bool waitAll(std::string &error);

  /// Internal state (MPI communicators) for the collective kernels.
  struct Impl;
  /// The internal state; null for a process alone.
  Impl *getImpl() const { return impl.get(); }

private:
  Comm();

  std::unique_ptr<Impl> impl;
  uint32_t rankValue = 0;
  uint32_t sizeValue = 1;
  bool mpi = false;
  std::string launcherText;
};

} // namespace dnnc::rt

#endif // DNNC_RUNTIME_COMM_H
