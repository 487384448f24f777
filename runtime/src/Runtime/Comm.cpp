//===- Comm.cpp - The processes of a multi-rank run -------------*- C++ -*-===//
//
// MPI initialisation and dnnc-run's own traffic between the ranks. Every MPI
// call returns its error code (MPI_ERRORS_RETURN) so that a failure becomes
// an error message rather than an abort inside MPI. A torchrun-style launch
// carries the same control operations over the sockets of a TcpWorld
// (TcpComm.h), in builds with and without MPI, and its pipeline-stage
// transfers over Gloo (GlooComm.h) in a build with Gloo.
//
//===----------------------------------------------------------------------===//

#include "CommImpl.h"
#include "GlooComm.h"
#include "TcpComm.h"

#include <chrono>
#include <cstdlib>
#include <thread>
#include <unistd.h>

namespace dnnc::rt {

bool mpiCompiledIn() { return DNNC_RUNTIME_WITH_MPI != 0; }

bool glooCompiledIn() { return DNNC_RUNTIME_WITH_GLOO != 0; }

Comm::Comm() = default;

std::unique_ptr<Comm> Comm::createLocal() {
  return std::unique_ptr<Comm>(new Comm());
}

/// "OMPI_COMM_WORLD_SIZE=4": the launcher variable and the size it gave.
static std::string describeLaunch(const WorldInfo &world) {
  return world.source + "=" + std::to_string(world.size);
}

//===----------------------------------------------------------------------===//
// Over TCP
//===----------------------------------------------------------------------===//

std::unique_ptr<Comm> Comm::createTcp(const WorldInfo &world,
                                      std::string &error) {
  std::string launch = describeLaunch(world);
  if (world.masterAddr.empty() || world.masterPort == 0) {
    std::string missing = world.masterAddr.empty() && world.masterPort == 0
                              ? "MASTER_ADDR and MASTER_PORT"
                          : world.masterAddr.empty() ? "MASTER_ADDR"
                                                     : "MASTER_PORT";
    error = "dnnc-run was launched as rank " + std::to_string(world.rank) +
            " of " + std::to_string(world.size) + " (" + launch + ")" +
            (mpiCompiledIn() ? " by a launcher without MPI"
                             : " and this build has no MPI "
                               "(DNNC_RUNTIME_WITH_MPI is off)") +
            ", without " + missing +
            ": set MASTER_ADDR and MASTER_PORT to the host and port rank 0 "
            "listens on (torchrun does)" +
            (mpiCompiledIn()
                 ? ", or launch with mpirun -np " + std::to_string(world.size)
                 : std::string());
    return nullptr;
  }
  TcpOptions options;
  options.rank = world.rank;
  options.size = world.size;
  options.masterAddr = world.masterAddr;
  options.masterPort = world.masterPort;
  if (!bootstrapTimeoutSeconds(options.timeoutSeconds, error))
    return nullptr;
  std::unique_ptr<TcpWorld> tcp = TcpWorld::connect(options, error);
  if (!tcp)
    return nullptr;
  std::unique_ptr<Comm> comm(new Comm());
  comm->tcp = std::move(tcp);
#if DNNC_RUNTIME_WITH_GLOO
  comm->gloo = GlooWorld::connect(*comm->tcp, error);
  if (!comm->gloo)
    return nullptr;
#endif
  comm->rankValue = world.rank;
  comm->sizeValue = world.size;
  comm->launcherText = "RANK/WORLD_SIZE over TCP, " + launch +
                       ", MASTER_ADDR:MASTER_PORT " + world.masterAddr + ":" +
                       std::to_string(world.masterPort);
  return comm;
}

/// Prints `message` as one `error: ` line on stderr, in one write.
static void printErrorLine(const std::string &message) {
  std::string line = "error: " + message + "\n";
  ssize_t ignored = ::write(2, line.data(), line.size());
  (void)ignored;
}

/// allOk over TCP: every rank sends its status to rank 0, which answers
/// with the verdict (and, when it lost a peer, why).
static bool tcpAllOk(TcpWorld &tcp, bool ok, double graceSeconds,
                     bool *timedOut) {
  int32_t seq = tcp.collectives++;
  double wait = !ok && graceSeconds >= 0 ? graceSeconds : -1;
  std::string who = "rank " + std::to_string(tcp.rank()) + ": ";
  std::string error;
  bool late = false;
  char mine = ok ? 1 : 0;
  if (tcp.rank() != 0) {
    std::string reply, sendError;
    // A verdict that arrived before the connection broke still counts.
    bool sent = tcp.send(0, TcpChannel::AllOk, seq, &mine, 1, sendError);
    if (!tcp.receive(0, TcpChannel::AllOk, seq, reply, sent ? wait : 0, error,
                     &late)) {
      if (sent && late && timedOut)
        *timedOut = true;
      if (!sent || !late)
        printErrorLine(who + (sent ? error : sendError));
      return false;
    }
    if (reply.empty() || reply[0] > 1) {
      printErrorLine(who + "malformed status from rank 0");
      return false;
    }
    if (reply.size() > 1)
      printErrorLine(who + reply.substr(1));
    return reply[0] == 1;
  }
  std::vector<uint32_t> from;
  for (uint32_t r = 1; r < tcp.size(); ++r)
    from.push_back(r);
  std::vector<std::string> all;
  bool verdict = ok;
  std::string reason;
  if (!tcp.receiveEach(from, TcpChannel::AllOk, seq, all, wait, error, &late)) {
    if (late) {
      if (timedOut)
        *timedOut = true;
      return false;
    }
    printErrorLine(who + error);
    verdict = false;
    reason = "rank 0 " + error;
  } else {
    for (size_t i = 0; i < all.size(); ++i)
      verdict = verdict && all[i].size() == 1 && all[i][0] == 1;
  }
  std::string reply(1, verdict ? 1 : 0);
  reply += reason;
  for (uint32_t r : from) {
    std::string ignored;
    tcp.send(r, TcpChannel::AllOk, seq, reply.data(), reply.size(), ignored);
  }
  return verdict;
}

/// gatherToRoot over TCP: one frame from every rank to rank 0.
static bool tcpGather(TcpWorld &tcp, const std::string &bytes,
                      std::vector<std::string> &all, std::string &error) {
  int32_t seq = tcp.collectives++;
  if (tcp.rank() != 0)
    return tcp.send(0, TcpChannel::Gather, seq, bytes.data(), bytes.size(),
                    error);
  std::vector<uint32_t> from;
  for (uint32_t r = 1; r < tcp.size(); ++r)
    from.push_back(r);
  std::vector<std::string> rest;
  if (!tcp.receiveEach(from, TcpChannel::Gather, seq, rest, tcp.timeout(),
                       error))
    return false;
  all.push_back(bytes);
  for (std::string &one : rest)
    all.push_back(std::move(one));
  return true;
}

/// Checks `tag` fits a frame's tag (MPI tags are non-negative ints too).
static bool checkTag(int tag, std::string &error) {
  if (tag >= 0)
    return true;
  error = "internal error: negative message tag " + std::to_string(tag);
  return false;
}

/// The error of stage traffic of a TCP world without Gloo.
static std::string noGlooStageError(uint32_t peer, const char *what) {
  return std::string("cannot ") + what + " rank " + std::to_string(peer) +
         ": pipeline-stage transfers of a RANK/WORLD_SIZE launch run on "
         "Gloo, and this build has none (DNNC_RUNTIME_WITH_GLOO is off)";
}

/// isend over TCP: a Gloo send that completes in waitAll().
static bool tcpIsend(GlooWorld *gloo, const void *data, uint64_t bytes,
                     uint32_t peer, int tag, std::string &error) {
  if (!checkTag(tag, error))
    return false;
#if DNNC_RUNTIME_WITH_GLOO
  if (gloo)
    return gloo->send(data, bytes, peer, GlooTraffic::Stages, uint32_t(tag),
                      false, error);
#endif
  error = noGlooStageError(peer, "send to");
  return false;
}

/// recvStage over TCP: a Gloo receive.
static bool tcpRecvStage(GlooWorld *gloo, void *data, uint64_t bytes,
                         uint32_t peer, int tag, std::string &error) {
  if (!checkTag(tag, error))
    return false;
#if DNNC_RUNTIME_WITH_GLOO
  if (gloo)
    return gloo->recv(data, bytes, peer, GlooTraffic::Stages, uint32_t(tag),
                      error);
#endif
  error = noGlooStageError(peer, "receive from");
  return false;
}

/// waitAll over TCP: the Gloo sends isend() started.
static bool tcpWaitAll(GlooWorld *gloo, std::string &error) {
#if DNNC_RUNTIME_WITH_GLOO
  if (gloo)
    return gloo->waitSends(error);
#endif
  return true;
}

#if DNNC_RUNTIME_WITH_MPI

std::string mpiError(const char *call, int code) {
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS)
    return std::string(call) + " failed with MPI error code " +
           std::to_string(code);
  return std::string(call) + " failed: " + std::string(text, length);
}

std::unique_ptr<Comm> Comm::create(const WorldInfo &world, std::string &error) {
  if (world.tcp && world.size > 1)
    return createTcp(world, error);
  if (!world.mpi) {
    if (world.size > 1) {
      error = "dnnc-run was launched as rank " + std::to_string(world.rank) +
              " of " + std::to_string(world.size) + " (" +
              describeLaunch(world) +
              ") by a launcher without MPI; multi-rank CPU runs need an MPI "
              "launcher (mpirun -np N or srun)";
      return nullptr;
    }
    return createLocal();
  }
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized) {
    error = "MPI is already initialised in this process";
    return nullptr;
  }
  int provided = 0;
  int rc = MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided);
  if (rc != MPI_SUCCESS) {
    error = mpiError("MPI_Init_thread", rc);
    return nullptr;
  }
  std::unique_ptr<Comm> comm(new Comm());
  comm->impl = std::make_unique<Impl>();
  comm->mpi = true;
  Impl &impl = *comm->impl;
  int rank = 0, size = 0;
  void *tagUb = nullptr;
  int hasTagUb = 0;
  if ((rc = MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN)) !=
          MPI_SUCCESS ||
      (rc = MPI_Comm_rank(MPI_COMM_WORLD, &rank)) != MPI_SUCCESS ||
      (rc = MPI_Comm_size(MPI_COMM_WORLD, &size)) != MPI_SUCCESS ||
      (rc = MPI_Comm_dup(MPI_COMM_WORLD, &impl.control)) != MPI_SUCCESS ||
      (rc = MPI_Comm_dup(MPI_COMM_WORLD, &impl.kernels)) != MPI_SUCCESS ||
      (rc = MPI_Comm_dup(MPI_COMM_WORLD, &impl.stages)) != MPI_SUCCESS ||
      (rc = MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tagUb, &hasTagUb)) !=
          MPI_SUCCESS) {
    error = mpiError("setting up MPI_COMM_WORLD", rc);
    return nullptr; // ~Comm finalises.
  }
  if (hasTagUb && tagUb)
    impl.tagUpperBound = *static_cast<int *>(tagUb);
  comm->rankValue = static_cast<uint32_t>(rank);
  comm->sizeValue = static_cast<uint32_t>(size);
  comm->launcherText = "mpirun/srun, " + describeLaunch(world);
  return comm;
}

Comm::~Comm() {
  if (!mpi)
    return;
  if (impl->control != MPI_COMM_NULL)
    MPI_Comm_free(&impl->control);
  // Sends nobody waited for (a run that failed before waitAll): never block
  // here on a peer that may be gone.
  for (MPI_Request &request : impl->pending)
    MPI_Request_free(&request);
  if (impl->kernels != MPI_COMM_NULL)
    MPI_Comm_free(&impl->kernels);
  if (impl->stages != MPI_COMM_NULL)
    MPI_Comm_free(&impl->stages);
  MPI_Finalize();
}

bool Comm::allOk(bool ok, double graceSeconds, bool *timedOut) {
  if (timedOut)
    *timedOut = false;
  if (tcp)
    return tcpAllOk(*tcp, ok, graceSeconds, timedOut);
  if (!mpi)
    return ok;
  int mine = ok ? 1 : 0, all = 0;
  MPI_Request request;
  if (MPI_Iallreduce(&mine, &all, 1, MPI_INT, MPI_MIN, impl->control,
                     &request) != MPI_SUCCESS)
    return false;
  if (ok || graceSeconds < 0) {
    if (MPI_Wait(&request, MPI_STATUS_IGNORE) != MPI_SUCCESS)
      return false;
    return all == 1;
  }
  using Clock = std::chrono::steady_clock;
  Clock::time_point deadline =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(
                         std::chrono::duration<double>(graceSeconds));
  for (;;) {
    int done = 0;
    if (MPI_Test(&request, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS)
      return false;
    if (done)
      return false; // This rank failed: never all ok.
    if (Clock::now() >= deadline) {
      if (timedOut)
        *timedOut = true;
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

void Comm::abort(int code) {
  if (tcp)
    tcp->closeAll();
  if (mpi)
    MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);
}

bool Comm::send(const void *data, uint64_t bytes, uint32_t peer, int tag,
                std::string &error) {
  if (tcp)
    return checkTag(tag, error) &&
           tcp->send(peer, TcpChannel::Control, tag, data, bytes, error);
  if (!mpi || peer >= sizeValue) {
    error = "internal error: send to rank " + std::to_string(peer);
    return false;
  }
  const char *p = static_cast<const char *>(data);
  return forEachPiece(bytes, [&](uint64_t at, uint64_t piece) {
    int rc =
        MPI_Send(p + at, int(piece), MPI_BYTE, int(peer), tag, impl->control);
    if (rc == MPI_SUCCESS)
      return true;
    error = "sending to rank " + std::to_string(peer) + ": " +
            mpiError("MPI_Send", rc);
    return false;
  });
}

/// Receives exactly `bytes` bytes from rank `peer` of `comm` (blocking).
static bool receiveBytes(MPI_Comm comm, void *data, uint64_t bytes,
                         uint32_t peer, int tag, std::string &error) {
  char *p = static_cast<char *>(data);
  return forEachPiece(bytes, [&](uint64_t at, uint64_t piece) {
    MPI_Status status;
    int rc =
        MPI_Recv(p + at, int(piece), MPI_BYTE, int(peer), tag, comm, &status);
    int got = 0;
    if (rc == MPI_SUCCESS)
      rc = MPI_Get_count(&status, MPI_BYTE, &got);
    if (rc == MPI_SUCCESS && uint64_t(got) == piece)
      return true;
    error =
        "receiving from rank " + std::to_string(peer) + ": " +
        (rc != MPI_SUCCESS ? mpiError("MPI_Recv", rc)
                           : "got " + std::to_string(got) +
                                 " bytes, expected " + std::to_string(piece));
    return false;
  });
}

bool Comm::recv(void *data, uint64_t bytes, uint32_t peer, int tag,
                std::string &error) {
  if (tcp)
    return checkTag(tag, error) && tcp->receiveExact(peer, TcpChannel::Control,
                                                     tag, data, bytes, error);
  if (!mpi || peer >= sizeValue) {
    error = "internal error: receive from rank " + std::to_string(peer);
    return false;
  }
  return receiveBytes(impl->control, data, bytes, peer, tag, error);
}

/// The error for stage traffic with `peer` that this Comm cannot carry, or
/// "" when it can.
static std::string stagePeerError(bool mpi, uint32_t size, uint32_t peer,
                                  const char *what) {
  if (!mpi || size < 2)
    return std::string("cannot ") + what + " rank " + std::to_string(peer) +
           ": this process runs a world of one rank (launch the plan with "
           "mpirun -np N)";
  if (peer >= size)
    return std::string("cannot ") + what + " rank " + std::to_string(peer) +
           ": the world has " + std::to_string(size) + " ranks";
  return "";
}

bool Comm::isend(const void *data, uint64_t bytes, uint32_t peer, int tag,
                 std::string &error) {
  error = stagePeerError(mpi || tcp, sizeValue, peer, "send to");
  if (!error.empty())
    return false;
  if (tcp)
    return tcpIsend(gloo.get(), data, bytes, peer, tag, error);
  const char *p = static_cast<const char *>(data);
  return forEachPiece(bytes, [&](uint64_t at, uint64_t piece) {
    MPI_Request request;
    int rc = MPI_Isend(p + at, int(piece), MPI_BYTE, int(peer), tag,
                       impl->stages, &request);
    if (rc != MPI_SUCCESS) {
      error = "sending to rank " + std::to_string(peer) + ": " +
              mpiError("MPI_Isend", rc);
      return false;
    }
    impl->pending.push_back(request);
    return true;
  });
}

bool Comm::recvStage(void *data, uint64_t bytes, uint32_t peer, int tag,
                     std::string &error) {
  error = stagePeerError(mpi || tcp, sizeValue, peer, "receive from");
  if (!error.empty())
    return false;
  if (tcp)
    return tcpRecvStage(gloo.get(), data, bytes, peer, tag, error);
  return receiveBytes(impl->stages, data, bytes, peer, tag, error);
}

bool Comm::waitAll(std::string &error) {
  if (tcp)
    return tcpWaitAll(gloo.get(), error);
  if (!mpi || impl->pending.empty())
    return true;
  int rc = MPI_Waitall(int(impl->pending.size()), impl->pending.data(),
                       MPI_STATUSES_IGNORE);
  impl->pending.clear();
  if (rc != MPI_SUCCESS) {
    error = mpiError("MPI_Waitall", rc);
    return false;
  }
  return true;
}

bool Comm::gatherToRoot(const std::string &bytes, std::vector<std::string> &all,
                        std::string &error) {
  all.clear();
  if (tcp)
    return tcpGather(*tcp, bytes, all, error);
  if (!mpi) {
    all.push_back(bytes);
    return true;
  }
  static constexpr int kTag = 1;
  uint64_t mine = bytes.size();
  std::vector<uint64_t> sizes(rankValue == 0 ? sizeValue : 0);
  int rc = MPI_Gather(&mine, 1, MPI_UINT64_T, sizes.data(), 1, MPI_UINT64_T, 0,
                      impl->control);
  if (rc != MPI_SUCCESS) {
    error = mpiError("MPI_Gather", rc);
    return false;
  }
  if (rankValue != 0)
    return send(bytes.data(), bytes.size(), 0, kTag, error);
  all.resize(sizeValue);
  all[0] = bytes;
  for (uint32_t r = 1; r < sizeValue; ++r) {
    // Descriptors are small; a size beyond this is a broken peer.
    if (sizes[r] > (uint64_t(1) << 32)) {
      error = "rank " + std::to_string(r) + " reported " +
              std::to_string(sizes[r]) + " bytes of descriptors";
      return false;
    }
    all[r].assign(sizes[r], '\0');
    if (!recv(&all[r][0], sizes[r], r, kTag, error))
      return false;
  }
  return true;
}

#else // !DNNC_RUNTIME_WITH_MPI

std::unique_ptr<Comm> Comm::create(const WorldInfo &world, std::string &error) {
  if (world.tcp && world.size > 1)
    return createTcp(world, error);
  if (world.size > 1) {
    error = "dnnc-run was launched as rank " + std::to_string(world.rank) +
            " of " + std::to_string(world.size) + " (" + describeLaunch(world) +
            ") but this build has no MPI (DNNC_RUNTIME_WITH_MPI is off); "
            "rebuild the runtime with MPI (libopenmpi-dev) for multi-rank "
            "runs, or launch with RANK, WORLD_SIZE, MASTER_ADDR and "
            "MASTER_PORT set";
    return nullptr;
  }
  return createLocal();
}

Comm::~Comm() = default;

bool Comm::allOk(bool ok, double graceSeconds, bool *timedOut) {
  if (timedOut)
    *timedOut = false;
  if (tcp)
    return tcpAllOk(*tcp, ok, graceSeconds, timedOut);
  return ok;
}

void Comm::abort(int code) {
  if (tcp)
    tcp->closeAll();
  std::_Exit(code);
}

bool Comm::send(const void *data, uint64_t bytes, uint32_t peer, int tag,
                std::string &error) {
  if (tcp)
    return checkTag(tag, error) &&
           tcp->send(peer, TcpChannel::Control, tag, data, bytes, error);
  error = "internal error: send to rank " + std::to_string(peer);
  return false;
}

bool Comm::recv(void *data, uint64_t bytes, uint32_t peer, int tag,
                std::string &error) {
  if (tcp)
    return checkTag(tag, error) && tcp->receiveExact(peer, TcpChannel::Control,
                                                     tag, data, bytes, error);
  error = "internal error: receive from rank " + std::to_string(peer);
  return false;
}

bool Comm::isend(const void *data, uint64_t bytes, uint32_t peer, int tag,
                 std::string &error) {
  if (tcp && peer < sizeValue && peer != rankValue)
    return tcpIsend(gloo.get(), data, bytes, peer, tag, error);
  error = "cannot send to rank " + std::to_string(peer) +
          ": this build has no MPI (DNNC_RUNTIME_WITH_MPI is off)";
  return false;
}

bool Comm::recvStage(void *data, uint64_t bytes, uint32_t peer, int tag,
                     std::string &error) {
  if (tcp && peer < sizeValue && peer != rankValue)
    return tcpRecvStage(gloo.get(), data, bytes, peer, tag, error);
  error = "cannot receive from rank " + std::to_string(peer) +
          ": this build has no MPI (DNNC_RUNTIME_WITH_MPI is off)";
  return false;
}

bool Comm::waitAll(std::string &error) {
  return !tcp || tcpWaitAll(gloo.get(), error);
}

bool Comm::gatherToRoot(const std::string &bytes, std::vector<std::string> &all,
                        std::string &error) {
  all.clear();
  if (tcp)
    return tcpGather(*tcp, bytes, all, error);
  all.assign(1, bytes);
  return true;
}

#endif // DNNC_RUNTIME_WITH_MPI

} // namespace dnnc::rt
