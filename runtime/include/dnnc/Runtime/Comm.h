//===- Comm.h - The processes of a multi-rank run ---------------*- C++ -*-===//
//
// A Comm connects the processes a launcher started together: under mpirun or
// srun it initialises MPI (when the runtime is built with it) and carries
// dnnc-run's own traffic — status agreement after each phase, the exchange
// of output-block descriptors, the gather of output blocks to rank 0 — on a
// communicator of its own, apart from the one the collective kernels use
// (Kernels.h). A torchrun-style launch (RANK, WORLD_SIZE, MASTER_ADDR,
// MASTER_PORT) is connected over TCP instead, without MPI (TcpComm.h): the
// same control operations, every wait bounded by DNNC_BOOTSTRAP_TIMEOUT_S
// except allOk(true) on peers that are alive; in a build with Gloo its data
// path (the collective kernels, pipeline-stage transfers) runs on Gloo
// contexts whose rendezvous uses those sockets (GlooComm.h). A plain process
// is a Comm of one rank without MPI.
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

class TcpWorld;
class GlooWorld;

/// True when this build of the runtime has MPI (CMake option
/// DNNC_RUNTIME_WITH_MPI).
bool mpiCompiledIn();

/// True when this build of the runtime has Gloo (CMake option
/// DNNC_RUNTIME_WITH_GLOO): torchrun-style launches then run cpu plans of
/// several ranks.
bool glooCompiledIn();

/// The processes of one launch (MPI_COMM_WORLD), or this process alone.
class Comm {
public:
  /// Connects this process to the others of its launch. Under an MPI
  /// launcher (`world.mpi`) with MPI compiled in, initialises MPI and takes
  /// the rank and size from MPI_COMM_WORLD. A torchrun-style launch of
  /// several processes (`world.tcp`) connects over TCP through rank 0 at
  /// MASTER_ADDR:MASTER_PORT (missing ones, an unresolvable host, a peer
  /// that does not arrive within DNNC_BOOTSTRAP_TIMEOUT_S are errors). A
  /// plain process, or RANK=0 WORLD_SIZE=1, is rank 0 of 1. An MPI launch
  /// of several processes in a build without MPI is an error. Over TCP in a
  /// build with Gloo, also connects the Gloo context of the whole world
  /// (its failure is an error naming the rank).
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
  /// True when the processes are connected over TCP (torchrun-style).
  bool usesTcp() const { return tcp != nullptr; }
  /// True when the data path (collective kernels, isend/recvStage) runs on
  /// Gloo: connected over TCP in a build with Gloo.
  bool usesGloo() const { return gloo != nullptr; }
  /// The Gloo contexts; null unless usesGloo().
  GlooWorld *getGloo() const { return gloo.get(); }
  /// How the processes were launched, for messages: "mpirun/srun
  /// (OMPI_COMM_WORLD_SIZE=4)", "RANK/WORLD_SIZE over TCP, WORLD_SIZE=4,
  /// MASTER_ADDR:MASTER_PORT host:29500", or "" for a plain process.
  const std::string &launcher() const { return launcherText; }

  /// Collective: true when `ok` is true on every rank. A rank passing
  /// `ok == false` waits at most `graceSeconds` (>= 0) for the others and
  /// sets `*timedOut` when they did not all arrive — they are then blocked
  /// elsewhere (e.g. in a collective kernel this rank skipped) and the
  /// caller should abort(). Ranks passing `ok == true` wait as long as it
  /// takes. Over TCP a peer that is gone makes every rank return false (each
  /// prints one `error:` line naming the lost peer and its address).
  bool allOk(bool ok, double graceSeconds = -1, bool *timedOut = nullptr);

  /// Ends every process of the launch with exit code `code` (MPI_Abort;
  /// over TCP: closes every socket, so the peers fail at once, and exits);
  /// a process alone just exits.
  [[noreturn]] void abort(int code);

  /// Collective: rank 0 receives every rank's `bytes` in `all` (indexed by
  /// rank); the other ranks get `all` empty.
  bool gatherToRoot(const std::string &bytes, std::vector<std::string> &all,
                    std::string &error);

  /// Sends `bytes` bytes to rank `peer` (any size; blocking). Over TCP the
  /// receiver must take data within DNNC_BOOTSTRAP_TIMEOUT_S.
  bool send(const void *data, uint64_t bytes, uint32_t peer, int tag,
            std::string &error);

  /// Receives exactly `bytes` bytes from rank `peer` (blocking). Over TCP
  /// the message must start arriving within DNNC_BOOTSTRAP_TIMEOUT_S and
  /// have exactly `bytes` bytes.
  bool recv(void *data, uint64_t bytes, uint32_t peer, int tag,
            std::string &error);

  /// Starts sending `bytes` bytes at `data` to rank `peer` with `tag` on the
  /// communicator of pipeline-stage traffic (apart from dnnc-run's own and
  /// the kernels'), without waiting for the receiver. `data` must stay
  /// unchanged until waitAll(). Fails for a world of one, and without MPI
  /// unless the data path runs on Gloo (usesGloo()), where the receiver
  /// must take the data within DNNC_GLOO_TIMEOUT_S of waitAll().
  bool isend(const void *data, uint64_t bytes, uint32_t peer, int tag,
             std::string &error);

  /// Receives exactly `bytes` bytes from rank `peer` with `tag` on the
  /// pipeline-stage communicator, waiting until they have arrived (over
  /// Gloo at most DNNC_GLOO_TIMEOUT_S; a message of another size is an
  /// error).
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

  /// Connects a torchrun-style launch of several processes over TCP.
  static std::unique_ptr<Comm> createTcp(const WorldInfo &world,
                                         std::string &error);

  std::unique_ptr<Impl> impl;
  /// The sockets of a TCP world; null otherwise.
  std::unique_ptr<TcpWorld> tcp;
  /// The Gloo contexts of a TCP world in a build with Gloo; null otherwise.
  /// Declared after `tcp`, which it uses: destroyed first.
  std::unique_ptr<GlooWorld> gloo;
  uint32_t rankValue = 0;
  uint32_t sizeValue = 1;
  bool mpi = false;
  std::string launcherText;
};

} // namespace dnnc::rt

#endif // DNNC_RUNTIME_COMM_H
