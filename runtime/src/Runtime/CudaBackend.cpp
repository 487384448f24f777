//===- CudaBackend.cpp - The `cuda` target backend -------------*- C++ -*-===//
//
// One CUDA device and stream per rank, cudaMalloc'd buffers, a dlopen()ed
// host shared object whose entries launch work on the stream, and NCCL for
// the collective kernels (one communicator per mesh-axis group, created on
// first use) and for pipeline transfers (two communicators of the world, one
// per direction). Plain C++ against the CUDA runtime API: no nvcc.
//
// Every NCCL communicator is non-blocking (ncclConfig_t::blocking = 0), so
// no NCCL call can hang the host: initialisation and every operation are
// settled by polling ncclCommGetAsyncError, and waits on the device poll the
// communicators too. A wait that exceeds DNNC_NCCL_TIMEOUT_S seconds (a peer
// that is stuck or gone) aborts every communicator (ncclCommAbort) and
// becomes an error; later NCCL work of the backend then fails at once.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Runtime/CudaBackend.h"
#include "Collectives.h"
#include "CommImpl.h"
#include "KernelErrors.h"
#include "dnnc/Runtime/Kernels.h"
#include "dnnc/Runtime/SharedObject.h"

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <thread>

namespace dnnc::rt {

using plan::DataType;

bool cudaCompiledIn() { return true; }

//===----------------------------------------------------------------------===//
// Errors and environment
//===----------------------------------------------------------------------===//

/// "cudaMalloc failed: cudaErrorMemoryAllocation: out of memory".
static std::string cudaFailure(const char *call, cudaError_t rc) {
  return std::string(call) + " failed: " + cudaGetErrorName(rc) + ": " +
         cudaGetErrorString(rc);
}

/// "ncclAllReduce failed: <NCCL's error string> (<last error detail>)".
static std::string ncclFailure(const char *call, ncclResult_t rc,
                               ncclComm_t comm = nullptr) {
  std::string text = std::string(call) + " failed: " + ncclGetErrorString(rc);
  const char *detail = ncclGetLastError(comm);
  if (detail && *detail)
    text += " (" + std::string(detail) + ")";
  for (char &c : text)
    if (c == '\n')
      c = ' ';
  return text;
}

/// The NCCL timeout in seconds: DNNC_NCCL_TIMEOUT_S (a positive number),
/// 300 when unset or invalid.
static double ncclTimeoutSeconds() {
  const char *text = std::getenv("DNNC_NCCL_TIMEOUT_S");
  if (!text || !*text)
    return 300;
  char *end = nullptr;
  double value = std::strtod(text, &end);
  return end && *end == '\0' && value > 0 ? value : 300;
}

/// This process's rank among the processes of its node, from the launcher
/// (Open MPI, Slurm, torchrun, MPICH); the world rank when none is set.
static int localRank(const WorldInfo &world) {
  for (const char *name : {"OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID",
                           "LOCAL_RANK", "MPI_LOCALRANKID"}) {
    const char *text = std::getenv(name);
    if (!text || !*text)
      continue;
    char *end = nullptr;
    long value = std::strtol(text, &end, 10);
    if (end && *end == '\0' && value >= 0)
      return int(value);
  }
  return int(world.rank);
}

/// Seconds since `start`.
static double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

/// Backs off while polling: spins briefly, then sleeps.
static void pollPause(unsigned iteration) {
  if (iteration < 64)
    std::this_thread::yield();
  else
    std::this_thread::sleep_for(std::chrono::microseconds(200));
}

//===----------------------------------------------------------------------===//
// State
//===----------------------------------------------------------------------===//

/// The type of every function of the rank code.
using EntryFn = void (*)(void **);

struct CudaBackend::State {
  /// The rank served and the world size.
  WorldInfo world;
  /// The processes of the launch; null for a world of one rank.
  Comm *comm = nullptr;
  /// The CUDA device of this rank.
  int device = -1;
  /// The stream of every copy, entry and collective kernel.
  cudaStream_t stream = nullptr;
  /// Pipeline sends and receives toward higher ranks (upStream) and toward
  /// lower ranks (downStream), apart from `stream` so that a pending send
  /// does not hold up later work.
  cudaStream_t upStream = nullptr, downStream = nullptr;
  /// Recorded on `stream` before a send, so the send sees earlier work.
  cudaEvent_t ready = nullptr;
  /// Seconds a wait for the device or a peer may take (DNNC_NCCL_TIMEOUT_S).
  double timeout = 300;
  /// The plan's mesh seen from this rank (groups, group index, micro-batch).
  std::unique_ptr<CollectiveContext> collectives;
  /// The NCCL communicator of each mesh group used so far (null for a group
  /// of one rank).
  std::map<int64_t, ncclComm_t> groupComms;
  /// The world communicators of pipeline transfers: messages from lower to
  /// higher ranks (up) and from higher to lower ranks (down).
  ncclComm_t upComm = nullptr, downComm = nullptr;
  /// Set once the communicators were aborted: NCCL work fails at once.
  bool aborted = false;
  /// Why they were aborted, for later errors.
  std::string abortReason;
  /// Sends enqueued since the last waitSends().
  bool sendsPending = false;
  /// The loaded rank code.
  SharedObject code;
  /// The address and symbol of each function of the program.
  std::vector<EntryFn> functions;
  std::vector<std::string> functionNames;

  /// True when any NCCL communicator exists.
  bool hasCommunicators() const {
    if (upComm || downComm)
      return true;
    for (const auto &entry : groupComms)
      if (entry.second)
        return true;
    return false;
  }

  /// Aborts every communicator (ncclCommAbort) after `why`.
  void abortAll(const std::string &why) {
    if (!aborted)
      abortReason = why;
    aborted = true;
    for (auto &entry : groupComms)
      if (entry.second) {
        ncclCommAbort(entry.second);
        entry.second = nullptr;
      }
    for (ncclComm_t *c : {&upComm, &downComm})
      if (*c) {
        ncclCommAbort(*c);
        *c = nullptr;
      }
  }

  /// Releases communicator `c` and nulls it: ncclCommFinalize settled with
  /// the timeout, then ncclCommDestroy; ncclCommAbort once the backend has
  /// aborted or the finalisation fails.
  void close(ncclComm_t &c) {
    if (!c)
      return;
    std::string ignored;
    ncclResult_t rc = aborted ? ncclInternalError : ncclCommFinalize(c);
    if ((rc == ncclSuccess || rc == ncclInProgress) &&
        settle(c, "ncclCommFinalize", ignored))
      ncclCommDestroy(c);
    else
      ncclCommAbort(c);
    c = nullptr;
  }

  /// Fails when a communicator reported an asynchronous error (and aborts
  /// them all).
  bool checkAsyncErrors(std::string &error) {
    auto check = [&](ncclComm_t c) {
      if (!c)
        return true;
      ncclResult_t state = ncclSuccess;
      ncclResult_t rc = ncclCommGetAsyncError(c, &state);
      if (rc != ncclSuccess)
        state = rc;
      if (state == ncclSuccess || state == ncclInProgress)
        return true;
      error = ncclFailure("NCCL communication", state, c);
      return false;
    };
    bool ok = check(upComm) && check(downComm);
    for (auto &entry : groupComms)
      ok = ok && check(entry.second);
    if (!ok)
      abortAll(error);
    return ok;
  }

  /// Waits until the non-blocking communicator `c` has finished its last
  /// call (initialisation, or enqueuing an operation): ncclInProgress turns
  /// into ncclSuccess or an error. Fails after the timeout.
  bool settle(ncclComm_t c, const char *call, std::string &error) {
    auto start = std::chrono::steady_clock::now();
    for (unsigned i = 0;; ++i) {
      ncclResult_t state = ncclSuccess;
      ncclResult_t rc = ncclCommGetAsyncError(c, &state);
      if (rc != ncclSuccess)
        state = rc;
      if (state == ncclSuccess)
        return true;
      if (state != ncclInProgress) {
        error = ncclFailure(call, state, c);
        return false;
      }
      if (secondsSince(start) > timeout) {
        error = std::string(call) + " did not complete within " +
                std::to_string(int(timeout)) +
                " s (a peer rank is stuck or gone; DNNC_NCCL_TIMEOUT_S sets "
                "the limit)";
        return false;
      }
      pollPause(i);
    }
  }

  /// Creates a non-blocking communicator of `nranks` ranks as rank `rank`
  /// from `id`, waiting at most the timeout for the peers.
  bool initComm(ncclComm_t &out, int nranks, int rank, const ncclUniqueId &id,
                const std::string &what, std::string &error) {
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;
    ncclComm_t c = nullptr;
    ncclResult_t rc = ncclCommInitRankConfig(&c, nranks, id, rank, &config);
    if (rc != ncclSuccess && rc != ncclInProgress) {
      error = "creating the NCCL communicator of " + what + ": " +
              ncclFailure("ncclCommInitRankConfig", rc, c);
      if (c)
        ncclCommAbort(c);
      return false;
    }
    if (!settle(c, "ncclCommInitRankConfig", error)) {
      error = "creating the NCCL communicator of " + what + ": " + error;
      ncclCommAbort(c);
      return false;
    }
    out = c;
    return true;
  }

  /// Waits for `s` with the timeout while communicators exist (polling their
  /// asynchronous errors), plainly otherwise. `what` starts the error.
  bool wait(cudaStream_t s, const std::string &what, std::string &error) {
    if (!hasCommunicators()) {
      cudaError_t rc = cudaStreamSynchronize(s);
      if (rc != cudaSuccess) {
        error = what + ": " + cudaFailure("cudaStreamSynchronize", rc);
        return false;
      }
      return true;
    }
    auto start = std::chrono::steady_clock::now();
    for (unsigned i = 0;; ++i) {
      cudaError_t rc = cudaStreamQuery(s);
      if (rc == cudaSuccess)
        return true;
      if (rc != cudaErrorNotReady) {
        error = what + ": " + cudaFailure("cudaStreamQuery", rc);
        return false;
      }
      std::string why;
      if (!checkAsyncErrors(why)) {
        error = what + ": " + why;
        return false;
      }
      if (secondsSince(start) > timeout) {
        error = what + ": the device did not finish within " +
                std::to_string(int(timeout)) +
                " s; NCCL communicators aborted (a peer rank is stuck or "
                "gone; DNNC_NCCL_TIMEOUT_S sets the limit)";
        abortAll(error);
        return false;
      }
      pollPause(i);
    }
  }

#if DNNC_RUNTIME_WITH_MPI
  /// Waits for the MPI request `request` at most the timeout.
  bool waitMpi(MPI_Request &request, const std::string &what,
               std::string &error) {
    auto start = std::chrono::steady_clock::now();
    for (unsigned i = 0;; ++i) {
      int done = 0;
      int rc = MPI_Test(&request, &done, MPI_STATUS_IGNORE);
      if (rc != MPI_SUCCESS) {
        error = what + ": " + mpiError("MPI_Test", rc);
        return false;
      }
      if (done)
        return true;
      if (secondsSince(start) > timeout) {
        error = what + ": timed out after " + std::to_string(int(timeout)) +
                " s (a peer rank is stuck or gone; DNNC_NCCL_TIMEOUT_S sets "
                "the limit)";
        return false;
      }
      pollPause(i);
    }
  }
#endif

  /// The communicator of the group of `axesMask` (null for a group of one),
  /// created on first use: member 0 makes the unique id and sends it to the
  /// other members over MPI.
  bool groupComm(int64_t axesMask, ncclComm_t &out, uint64_t &size,
                 std::string &error) {
    std::vector<uint32_t> members;
    uint32_t index = 0;
    collectives->groupMembers(axesMask, members, index);
    size = members.size();
    auto it = groupComms.find(axesMask);
    if (it != groupComms.end()) {
      out = it->second;
      if (!out && size > 1) {
        error = "NCCL communicators were aborted: " + abortReason;
        return false;
      }
      return true;
    }
    out = nullptr;
    if (size == 1) {
      groupComms.emplace(axesMask, nullptr);
      return true;
    }
    if (aborted) {
      error = "NCCL communicators were aborted: " + abortReason;
      return false;
    }
#if DNNC_RUNTIME_WITH_MPI
    Comm::Impl *mpi = collectives->mpi();
    if (!mpi) {
      error = "internal error: a group of " + std::to_string(size) +
              " ranks without MPI";
      return false;
    }
    std::string what = "axesMask " + std::to_string(axesMask);
    ncclUniqueId id;
    int tag = int(axesMask & 0x7fff);
    if (index == 0) {
      ncclResult_t rc = ncclGetUniqueId(&id);
      if (rc != ncclSuccess) {
        error = "creating the NCCL communicator of " + what + ": " +
                ncclFailure("ncclGetUniqueId", rc);
        return false;
      }
      std::vector<MPI_Request> requests(size - 1, MPI_REQUEST_NULL);
      for (size_t m = 1; m < members.size(); ++m) {
        int rc2 = MPI_Isend(&id, int(sizeof(id)), MPI_BYTE, int(members[m]),
                            tag, mpi->kernels, &requests[m - 1]);
        if (rc2 != MPI_SUCCESS) {
          error = mpiError("MPI_Isend", rc2);
          return false;
        }
      }
      for (MPI_Request &r : requests)
        if (!waitMpi(r, "sending the NCCL id of " + what, error))
          return false;
    } else {
      MPI_Request request = MPI_REQUEST_NULL;
      int rc = MPI_Irecv(&id, int(sizeof(id)), MPI_BYTE, int(members[0]), tag,
                         mpi->kernels, &request);
      if (rc != MPI_SUCCESS) {
        error = mpiError("MPI_Irecv", rc);
        return false;
      }
      if (!waitMpi(request,
                   "receiving the NCCL id of " + what + " from rank " +
                       std::to_string(members[0]),
                   error))
        return false;
    }
    ncclComm_t c = nullptr;
    if (!initComm(c, int(size), int(index), id, what, error))
      return false;
    groupComms.emplace(axesMask, c);
    out = c;
    return true;
#else
    error = "internal error: a group of " + std::to_string(size) +
            " ranks without MPI";
    return false;
#endif
  }
};

//===----------------------------------------------------------------------===//
// The active backend
//===----------------------------------------------------------------------===//

/// The state of the backend whose entry runs now: the kernels' C ABI has no
/// context argument (like the cpu collectives' active context).
static std::atomic<CudaBackend::State *> &activeStateSlot() {
  static std::atomic<CudaBackend::State *> slot{nullptr};
  return slot;
}

namespace {
/// Makes a backend's state the active one for one scope.
class ActiveState {
public:
  /// Activates `state`.
  explicit ActiveState(CudaBackend::State *state)
      : previous(activeStateSlot().exchange(state)) {}
  /// Restores the previous one.
  ~ActiveState() { activeStateSlot().store(previous); }
  ActiveState(const ActiveState &) = delete;
  ActiveState &operator=(const ActiveState &) = delete;

private:
  CudaBackend::State *previous;
};
} // namespace

//===----------------------------------------------------------------------===//
// CudaBackend
//===----------------------------------------------------------------------===//

CudaBackend::CudaBackend() : state(std::make_unique<State>()) {}

std::unique_ptr<CudaBackend>
CudaBackend::create(const WorldInfo &world, Comm *comm, std::string &error) {
  int count = 0;
  cudaError_t rc = cudaGetDeviceCount(&count);
  if (rc != cudaSuccess || count == 0) {
    error = "no CUDA device for rank " + std::to_string(world.rank) + ": " +
            (rc != cudaSuccess ? cudaFailure("cudaGetDeviceCount", rc)
                               : std::string("cudaGetDeviceCount found 0"));
    return nullptr;
  }
  std::unique_ptr<CudaBackend> backend(new CudaBackend());
  State &s = *backend->state;
  s.world = world;
  s.comm = comm;
  s.timeout = ncclTimeoutSeconds();
  s.device = localRank(world) % count;
  auto fail = [&](const char *call, cudaError_t code) {
    error = "CUDA device " + std::to_string(s.device) + " of rank " +
            std::to_string(world.rank) + ": " + cudaFailure(call, code);
    return nullptr;
  };
  if ((rc = cudaSetDevice(s.device)) != cudaSuccess)
    return fail("cudaSetDevice", rc);
  if ((rc = cudaStreamCreateWithFlags(&s.stream, cudaStreamNonBlocking)) !=
      cudaSuccess)
    return fail("cudaStreamCreate", rc);
  if ((rc = cudaStreamCreateWithFlags(&s.upStream, cudaStreamNonBlocking)) !=
      cudaSuccess)
    return fail("cudaStreamCreate", rc);
  if ((rc = cudaStreamCreateWithFlags(&s.downStream, cudaStreamNonBlocking)) !=
      cudaSuccess)
    return fail("cudaStreamCreate", rc);
  if ((rc = cudaEventCreateWithFlags(&s.ready, cudaEventDisableTiming)) !=
      cudaSuccess)
    return fail("cudaEventCreate", rc);
  return backend;
}

CudaBackend::~CudaBackend() {
  if (!state)
    return;
  State &s = *state;
  if (s.device >= 0)
    cudaSetDevice(s.device);
  if (s.aborted) {
    s.abortAll(s.abortReason);
  } else {
    // Let queued work finish (bounded) before the communicators go.
    std::string ignored;
    for (cudaStream_t st : {s.stream, s.upStream, s.downStream})
      if (st && !s.wait(st, "shutdown", ignored))
        break;
    for (auto &entry : s.groupComms)
      s.close(entry.second);
    s.groupComms.clear();
    s.close(s.upComm);
    s.close(s.downComm);
  }
  if (s.ready)
    cudaEventDestroy(s.ready);
  for (cudaStream_t st : {s.stream, s.upStream, s.downStream})
    if (st)
      cudaStreamDestroy(st);
}

bool CudaBackend::connect(const plan::ModelInfo &model, std::string &error) {
  State &s = *state;
  s.collectives = CollectiveContext::create(s.comm, model, error);
  if (!s.collectives)
    return false;
  uint32_t size = s.collectives->size();
  if (size == 1)
    return true;
#if DNNC_RUNTIME_WITH_MPI
  Comm::Impl *mpi = s.collectives->mpi();
  if (!mpi) {
    error = "the cuda backend bootstraps NCCL over MPI: launch the " +
            std::to_string(size) +
            " ranks with mpirun or srun (RANK/WORLD_SIZE/MASTER_ADDR "
            "launches are not supported yet)";
    return false;
  }
  // Two unique ids from rank 0 to everybody; bounded by the timeout so that
  // a rank that failed before connect() makes the others fail, not hang.
  ncclUniqueId ids[2];
  if (s.collectives->rank() == 0)
    for (ncclUniqueId &id : ids) {
      ncclResult_t rc = ncclGetUniqueId(&id);
      if (rc != ncclSuccess) {
        error = ncclFailure("ncclGetUniqueId", rc);
        return false;
      }
    }
  MPI_Request request = MPI_REQUEST_NULL;
  int rc =
      MPI_Ibcast(ids, int(sizeof(ids)), MPI_BYTE, 0, mpi->kernels, &request);
  if (rc != MPI_SUCCESS) {
    error = mpiError("MPI_Ibcast", rc);
    return false;
  }
  if (!s.waitMpi(request, "broadcasting the NCCL ids of pipeline transfers",
                 error))
    return false;
  cudaSetDevice(s.device);
  int rank = int(s.collectives->rank());
  return s.initComm(s.upComm, int(size), rank, ids[0],
                    "pipeline transfers toward higher ranks", error) &&
         s.initComm(s.downComm, int(size), rank, ids[1],
                    "pipeline transfers toward lower ranks", error);
#else
  error = "the cuda backend bootstraps NCCL over MPI, and this dnnc-run was "
          "built without MPI: it runs plans of one rank only";
  return false;
#endif
}

bool CudaBackend::loadProgram(const plan::RankProgram &program,
                              std::string &error) {
  State &s = *state;
  std::string label = "the code of rank " + std::to_string(program.rank);
  if (!s.code.load(program.code, label, error))
    return false;
  s.functions.clear();
  s.functionNames.clear();
  for (const plan::FunctionDesc &f : program.functions) {
    EntryFn fn = reinterpret_cast<EntryFn>(s.code.lookup(f.symbol));
    if (!fn) {
      error = label + " does not export the symbol '" + f.symbol +
              "' of function " + std::to_string(s.functions.size());
      s.functions.clear();
      s.functionNames.clear();
      return false;
    }
    s.functions.push_back(fn);
    s.functionNames.push_back(f.symbol);
  }
  return true;
}

bool CudaBackend::allocate(uint64_t bytes, DeviceBuffer &buffer,
                           std::string &error) {
  State &s = *state;
  cudaSetDevice(s.device);
  // cudaMalloc aligns to at least 256 bytes; never ask for 0.
  uint64_t rounded = plan::alignTo(bytes ? bytes : 1, plan::kAlignment);
  void *p = nullptr;
  cudaError_t rc = rounded <= plan::kMaxTensorBytes ? cudaMalloc(&p, rounded)
                                                    : cudaErrorMemoryAllocation;
  if (rc != cudaSuccess) {
    cudaGetLastError(); // Allocation failures are not sticky: clear it.
    error = "out of device memory allocating " + std::to_string(bytes) +
            " bytes: " + cudaFailure("cudaMalloc", rc);
    return false;
  }
  if ((rc = cudaMemsetAsync(p, 0, rounded, s.stream)) != cudaSuccess ||
      (rc = cudaStreamSynchronize(s.stream)) != cudaSuccess) {
    cudaFree(p);
    error = cudaFailure("cudaMemsetAsync", rc);
    return false;
  }
  buffer.data = p;
  buffer.bytes = bytes;
  return true;
}

void CudaBackend::deallocate(DeviceBuffer &buffer) {
  if (buffer.data) {
    cudaSetDevice(state->device);
    cudaFree(buffer.data);
  }
  buffer = DeviceBuffer();
}

bool CudaBackend::copyToDevice(const DeviceBuffer &dst, const void *src,
                               uint64_t bytes, std::string &error) {
  if (bytes > dst.bytes) {
    error = "internal error: copy of " + std::to_string(bytes) +
            " bytes into a buffer of " + std::to_string(dst.bytes);
    return false;
  }
  if (!bytes)
    return true;
  State &s = *state;
  cudaSetDevice(s.device);
  cudaError_t rc =
      cudaMemcpyAsync(dst.data, src, bytes, cudaMemcpyHostToDevice, s.stream);
  if (rc != cudaSuccess) {
    error = "copy to the device: " + cudaFailure("cudaMemcpyAsync", rc);
    return false;
  }
  return s.wait(s.stream, "copy to the device", error);
}

bool CudaBackend::copyToHost(void *dst, const DeviceBuffer &src, uint64_t bytes,
                             std::string &error) {
  if (bytes > src.bytes) {
    error = "internal error: copy of " + std::to_string(bytes) +
            " bytes from a buffer of " + std::to_string(src.bytes);
    return false;
  }
  if (!bytes)
    return true;
  State &s = *state;
  cudaSetDevice(s.device);
  cudaError_t rc =
      cudaMemcpyAsync(dst, src.data, bytes, cudaMemcpyDeviceToHost, s.stream);
  if (rc != cudaSuccess) {
    error = "copy to the host: " + cudaFailure("cudaMemcpyAsync", rc);
    return false;
  }
  return s.wait(s.stream, "copy to the host", error);
}

bool CudaBackend::run(uint32_t function, uint32_t microbatch,
                      const std::vector<void *> &buffers, std::string &error) {
  State &s = *state;
  if (function >= s.functions.size()) {
    error = "internal error: run of function " + std::to_string(function) +
            " of " + std::to_string(s.functions.size()) + " loaded";
    return false;
  }
  cudaSetDevice(s.device);
  std::vector<void *> args(buffers);
  args.push_back(nullptr);
  std::string discarded;
  takeKernelError(discarded);
  cudaGetLastError(); // Forget launch errors from before this run.
  {
    ActiveCollectives active(s.collectives.get());
    ActiveState activeState(&s);
    if (s.collectives)
      s.collectives->microbatch = microbatch;
    s.functions[function](args.data());
  }
  std::string name = "function '" + s.functionNames[function] + "'";
  std::string kernelError;
  if (takeKernelError(kernelError)) {
    // Let the work already queued drain (bounded) before reporting.
    std::string ignored;
    s.wait(s.stream, name, ignored);
    error = kernelError; // The Session names the rank and the step.
    return false;
  }
  cudaError_t rc = cudaGetLastError();
  if (rc != cudaSuccess) {
    error = "CUDA error in " + name + ": " + cudaFailure("a launch", rc);
    return false;
  }
  if (!s.wait(s.stream, "CUDA error in " + name, error))
    return false;
  return true;
}

/// Checks a send (`sending`) or receive of `bytes` bytes of `buffer` with
/// `peer`, picks the communicator and stream of its direction (`up`: toward
/// the higher rank) and makes that stream wait for the work queued so far.
static bool startTransfer(CudaBackend::State &s, bool sending,
                          const DeviceBuffer &buffer, uint64_t bytes,
                          uint32_t peer, ncclComm_t &comm, cudaStream_t &stream,
                          std::string &error) {
  uint32_t rank = s.world.rank;
  const char *what = sending ? "send to" : "receive from";
  if (!s.collectives || s.collectives->size() < 2) {
    error = Backend::loneRankError(rank, what, peer);
    return false;
  }
  if (bytes > buffer.bytes || peer >= s.collectives->size() || peer == rank) {
    error = std::string("internal error: ") +
            (sending ? "send of " : "receive of ") + std::to_string(bytes) +
            " bytes with a buffer of " + std::to_string(buffer.bytes) +
            " and rank " + std::to_string(peer);
    return false;
  }
  if (s.aborted) {
    error = "NCCL communicators were aborted: " + s.abortReason;
    return false;
  }
  cudaSetDevice(s.device);
  // A message travels up from a lower rank to a higher one.
  bool up = sending ? peer > rank : peer < rank;
  comm = up ? s.upComm : s.downComm;
  stream = up ? s.upStream : s.downStream;
  // The transfer follows everything already queued on the main stream.
  cudaError_t rc = cudaEventRecord(s.ready, s.stream);
  if (rc == cudaSuccess)
    rc = cudaStreamWaitEvent(stream, s.ready, 0);
  if (rc != cudaSuccess) {
    error = std::string(what) + " rank " + std::to_string(peer) + ": " +
            cudaFailure("cudaStreamWaitEvent", rc);
    return false;
  }
  return true;
}

bool CudaBackend::send(const DeviceBuffer &buffer, uint64_t bytes,
                       uint32_t peer, uint32_t tag, std::string &error) {
  State &s = *state;
  ncclComm_t c;
  cudaStream_t st;
  if (!startTransfer(s, /*sending=*/true, buffer, bytes, peer, c, st, error))
    return false;
  // NCCL has no tags: messages between two ranks in one direction arrive in
  // order, which is what the tags of a schedule express.
  ncclResult_t nrc = ncclSend(buffer.data, bytes, ncclUint8, int(peer), c, st);
  if (nrc != ncclSuccess && nrc != ncclInProgress) {
    error = "send to rank " + std::to_string(peer) + " (tag " +
            std::to_string(tag) + "): " + ncclFailure("ncclSend", nrc, c);
    return false;
  }
  if (!s.settle(c, "ncclSend", error)) {
    s.abortAll(error);
    return false;
  }
  s.sendsPending = true;
  return true;
}

bool CudaBackend::recv(const DeviceBuffer &buffer, uint64_t bytes,
                       uint32_t peer, uint32_t tag, std::string &error) {
  State &s = *state;
  ncclComm_t c;
  cudaStream_t st;
  if (!startTransfer(s, /*sending=*/false, buffer, bytes, peer, c, st, error))
    return false;
  std::string what = "receive of " + std::to_string(bytes) +
                     " bytes from rank " + std::to_string(peer) + " (tag " +
                     std::to_string(tag) + ")";
  ncclResult_t nrc = ncclRecv(buffer.data, bytes, ncclUint8, int(peer), c, st);
  if (nrc != ncclSuccess && nrc != ncclInProgress) {
    error = what + ": " + ncclFailure("ncclRecv", nrc, c);
    return false;
  }
  if (!s.settle(c, "ncclRecv", error)) {
    error = what + ": " + error;
    s.abortAll(error);
    return false;
  }
  // Waits for the whole direction stream: earlier sends toward the same
  // side complete first (they were issued first).
  return s.wait(st, what, error);
}

bool CudaBackend::waitSends(std::string &error) {
  State &s = *state;
  if (!s.sendsPending)
    return true;
  cudaSetDevice(s.device);
  s.sendsPending = false;
  return s.wait(s.upStream, "waiting for sends", error) &&
         s.wait(s.downStream, "waiting for sends", error);
}

//===----------------------------------------------------------------------===//
// Kernels
//===----------------------------------------------------------------------===//

namespace {

/// One collective kernel call on the active backend.
class CudaCall {
public:
  CudaCall(const char *name, std::function<std::string()> arguments)
      : name(name), arguments(std::move(arguments)),
        state(activeStateSlot().load()) {}

  /// Records `why` as the run's kernel error. Returns false.
  bool fail(const std::string &why) {
    setKernelError("runtime kernel " + std::string(name) + "(" + arguments() +
                   "): " + why);
    if (state && state->collectives)
      state->collectives->diverged = true;
    return false;
  }

  /// True when the call cannot proceed: no active backend (fails), or an
  /// earlier kernel of this run was skipped (skips silently).
  bool skipped() {
    if (!state)
      return !fail("called outside a run of the cuda backend");
    return state->collectives && state->collectives->diverged;
  }

  const char *name;
  std::function<std::string()> arguments;
  CudaBackend::State *state;
};

/// The group, element size and communicator of a collective call.
struct Group {
  ncclComm_t comm = nullptr;
  uint64_t size = 1;
  uint32_t index = 0;
  uint64_t elementSize = 0;
};

/// Validates `axesMask` and `dtype`, and finds (or creates) the group's
/// communicator.
bool resolve(CudaCall &call, int64_t axesMask, int32_t dtype, Group &g) {
  g.elementSize = uint64_t(plan::dtypeByteSize(dtype));
  if (g.elementSize == 0)
    return call.fail("unsupported dtype " + std::to_string(dtype));
  CollectiveContext *context = call.state->collectives.get();
  size_t axes = context ? context->numAxes() : 1;
  if (axesMask < 0 || axesMask >= (int64_t(1) << axes))
    return call.fail("axesMask " + std::to_string(axesMask) +
                     " is not a set of mesh axes (the mesh has " +
                     std::to_string(axes) + " axes: 0 <= axesMask < " +
                     std::to_string(int64_t(1) << axes) + ")");
  if (!context)
    return true; // Not connected: a process alone.
  std::string error;
  if (!call.state->groupComm(axesMask, g.comm, g.size, error))
    return call.fail(error);
  g.index = uint32_t(context->groupIndex(axesMask));
  return true;
}

/// Sets `elements` to the product of `factors`, or fails when one is
/// negative or the product exceeds the largest tensor.
bool product(CudaCall &call, std::initializer_list<int64_t> factors,
             uint64_t elementSize, uint64_t &elements) {
  elements = 1;
  for (int64_t f : factors)
    if (f < 0)
      return call.fail("negative argument");
  for (int64_t f : factors) {
    if (f == 0) {
      elements = 0;
      return true;
    }
  }
  for (int64_t f : factors) {
    if (uint64_t(f) > plan::kMaxTensorBytes / elements / elementSize)
      return call.fail("buffer size too large (more than 2^48 bytes)");
    elements *= uint64_t(f);
  }
  return true;
}

/// The NCCL type that reduces `dtype`, or fails.
bool reduceType(CudaCall &call, int32_t dtype, int32_t op, ncclDataType_t &type,
                ncclRedOp_t &redOp) {
  bool floating = true;
  switch (DataType(dtype)) {
  case DataType::Float:
    type = ncclFloat32;
    break;
  case DataType::Double:
    type = ncclFloat64;
    break;
  case DataType::Float16:
    type = ncclFloat16;
    break;
  case DataType::BFloat16:
    type = ncclBfloat16;
    break;
  case DataType::Int8:
    type = ncclInt8, floating = false;
    break;
  case DataType::UInt8:
    type = ncclUint8, floating = false;
    break;
  case DataType::Int32:
    type = ncclInt32, floating = false;
    break;
  case DataType::UInt32:
    type = ncclUint32, floating = false;
    break;
  case DataType::Int64:
    type = ncclInt64, floating = false;
    break;
  case DataType::UInt64:
    type = ncclUint64, floating = false;
    break;
  default:
    return call.fail("dtype " + plan::dtypeName(dtype) +
                     " cannot be reduced by NCCL");
  }
  switch (op) {
  case DNNC_RT_REDUCE_SUM:
    redOp = ncclSum;
    return true;
  case DNNC_RT_REDUCE_MAX:
    redOp = ncclMax;
    return true;
  case DNNC_RT_REDUCE_MIN:
    redOp = ncclMin;
    return true;
  case DNNC_RT_REDUCE_PROD:
    redOp = ncclProd;
    return true;
  case DNNC_RT_REDUCE_MEAN:
    if (!floating)
      return call.fail("mean of an integer dtype is not supported on cuda");
    redOp = ncclAvg;
    return true;
  default:
    return call.fail("invalid op " + std::to_string(op) +
                     " (0 sum, 1 max, 2 min, 3 prod, 4 mean)");
  }
}

/// Settles an NCCL call on the group's communicator (the communicators are
/// non-blocking).
bool settled(CudaCall &call, const Group &g, const char *what,
             ncclResult_t rc) {
  if (rc != ncclSuccess && rc != ncclInProgress)
    return call.fail(ncclFailure(what, rc, g.comm));
  std::string error;
  if (!call.state->settle(g.comm, what, error)) {
    call.state->abortAll(error);
    return call.fail(error);
  }
  return true;
}

/// Checks a CUDA call enqueued by a kernel.
bool cudaOk(CudaCall &call, const char *what, cudaError_t rc) {
  return rc == cudaSuccess || call.fail(cudaFailure(what, rc));
}

/// A device-to-device copy of `bytes` on the stream (nothing when in == out).
bool copyLocal(CudaCall &call, void *out, const void *in, uint64_t bytes) {
  if (out == in || bytes == 0)
    return true;
  return cudaOk(call, "cudaMemcpyAsync",
                cudaMemcpyAsync(out, in, bytes, cudaMemcpyDeviceToDevice,
                                call.state->stream));
}

/// Copies `rows` rows of `width` bytes from `src` (row pitch `srcPitch`) to
/// `dst` (row pitch `dstPitch`) on the stream.
bool copyRows(CudaCall &call, void *dst, uint64_t dstPitch, const void *src,
              uint64_t srcPitch, uint64_t width, uint64_t rows) {
  return cudaOk(call, "cudaMemcpy2DAsync",
                cudaMemcpy2DAsync(dst, dstPitch, src, srcPitch, width, rows,
                                  cudaMemcpyDeviceToDevice,
                                  call.state->stream));
}

/// Stream-ordered scratch memory, freed on the stream at scope end.
class Scratch {
public:
  Scratch(CudaCall &call, uint64_t bytes) : call(call) {
    cudaError_t rc =
        cudaMallocAsync(&data, bytes ? bytes : 1, call.state->stream);
    if (rc != cudaSuccess) {
      data = nullptr;
      call.fail("scratch of " + std::to_string(bytes) +
                " bytes: " + cudaFailure("cudaMallocAsync", rc));
    }
  }
  ~Scratch() {
    if (data)
      cudaFreeAsync(data, call.state->stream);
  }
  Scratch(const Scratch &) = delete;
  Scratch &operator=(const Scratch &) = delete;

  /// The memory; null when the allocation failed (the call has failed).
  char *get() const { return static_cast<char *>(data); }

private:
  CudaCall &call;
  void *data = nullptr;
};

/// Returns "name=value, ..." for kernel messages.
std::string args(std::initializer_list<std::pair<const char *, int64_t>> kv) {
  std::string text;
  for (const auto &p : kv)
    text += (text.empty() ? "" : ", ") + std::string(p.first) + "=" +
            std::to_string(p.second);
  return text;
}

} // namespace

extern "C" void *dnnc_rt_cuda_stream(void) {
  CudaBackend::State *state = activeStateSlot().load();
  if (!state) {
    setKernelError("runtime kernel dnnc_rt_cuda_stream(): called outside a "
                   "run of the cuda backend");
    return nullptr;
  }
  return state->stream;
}

extern "C" void dnnc_rt_cuda_all_reduce(int64_t axesMask, int32_t dtype,
                                        int32_t op, const void *in, void *out,
                                        int64_t count) {
  CudaCall call("dnnc_rt_cuda_all_reduce", [&]() {
    return args({{"axesMask", axesMask},
                 {"dtype", dtype},
                 {"op", op},
                 {"count", count}});
  });
  Group g;
  ncclDataType_t type;
  ncclRedOp_t redOp;
  uint64_t n = 0;
  if (call.skipped() || !resolve(call, axesMask, dtype, g) ||
      !reduceType(call, dtype, op, type, redOp) ||
      !product(call, {count}, g.elementSize, n) || n == 0)
    return;
  if (!in || !out) {
    call.fail("null buffer");
    return;
  }
  if (g.size == 1) {
    copyLocal(call, out, in, n * g.elementSize);
    return;
  }
  settled(call, g, "ncclAllReduce",
          ncclAllReduce(in, out, n, type, redOp, g.comm, call.state->stream));
}

extern "C" void dnnc_rt_cuda_all_gather(int64_t axesMask, int32_t dtype,
                                        const void *in, void *out,
                                        int64_t outer, int64_t chunk) {
  CudaCall call("dnnc_rt_cuda_all_gather", [&]() {
    return args({{"axesMask", axesMask},
                 {"dtype", dtype},
                 {"outer", outer},
                 {"chunk", chunk}});
  });
  Group g;
  uint64_t n = 0;
  if (call.skipped() || !resolve(call, axesMask, dtype, g) ||
      !product(call, {outer, chunk}, g.elementSize, n) || n == 0)
    return;
  if (!in || !out) {
    call.fail("null buffer");
    return;
  }
  uint64_t es = g.elementSize, bytes = n * es;
  if (g.size == 1) {
    copyLocal(call, out, in, bytes);
    return;
  }
  if (outer == 1) {
    settled(
        call, g, "ncclAllGather",
        ncclAllGather(in, out, bytes, ncclUint8, g.comm, call.state->stream));
    return;
  }
  // NCCL gathers member blocks one after the other ([G, outer, chunk]);
  // interleave them into [outer, G, chunk].
  Scratch tmp(call, bytes * g.size);
  if (!tmp.get() || !settled(call, g, "ncclAllGather",
                             ncclAllGather(in, tmp.get(), bytes, ncclUint8,
                                           g.comm, call.state->stream)))
    return;
  uint64_t row = uint64_t(chunk) * es;
  for (uint64_t m = 0; m < g.size; ++m)
    if (!copyRows(call, static_cast<char *>(out) + m * row, row * g.size,
                  tmp.get() + m * bytes, row, row, uint64_t(outer)))
      return;
}

extern "C" void dnnc_rt_cuda_reduce_scatter(int64_t axesMask, int32_t dtype,
                                            int32_t op, const void *in,
                                            void *out, int64_t outer,
                                            int64_t chunk) {
  CudaCall call("dnnc_rt_cuda_reduce_scatter", [&]() {
    return args({{"axesMask", axesMask},
                 {"dtype", dtype},
                 {"op", op},
                 {"outer", outer},
                 {"chunk", chunk}});
  });
  Group g;
  ncclDataType_t type;
  ncclRedOp_t redOp;
  uint64_t n = 0;
  if (call.skipped() || !resolve(call, axesMask, dtype, g) ||
      !reduceType(call, dtype, op, type, redOp) ||
      !product(call, {outer, chunk}, g.elementSize, n) || n == 0)
    return;
  if (!in || !out) {
    call.fail("null buffer");
    return;
  }
  uint64_t es = g.elementSize;
  if (g.size == 1) {
    copyLocal(call, out, in, n * es);
    return;
  }
  if (outer == 1) {
    settled(
        call, g, "ncclReduceScatter",
        ncclReduceScatter(in, out, n, type, redOp, g.comm, call.state->stream));
    return;
  }
  // NCCL scatters contiguous blocks ([G, outer, chunk]); gather member m's
  // columns of [outer, G, chunk] into block m first.
  Scratch tmp(call, n * es * g.size);
  if (!tmp.get())
    return;
  uint64_t row = uint64_t(chunk) * es;
  for (uint64_t m = 0; m < g.size; ++m)
    if (!copyRows(call, tmp.get() + m * n * es, row,
                  static_cast<const char *>(in) + m * row, row * g.size, row,
                  uint64_t(outer)))
      return;
  settled(call, g, "ncclReduceScatter",
          ncclReduceScatter(tmp.get(), out, n, type, redOp, g.comm,
                            call.state->stream));
}

extern "C" void dnnc_rt_cuda_all_to_all(int64_t axesMask, int32_t dtype,
                                        const void *in, void *out,
                                        int64_t outer, int64_t splitChunk,
                                        int64_t inner) {
  CudaCall call("dnnc_rt_cuda_all_to_all", [&]() {
    return args({{"axesMask", axesMask},
                 {"dtype", dtype},
                 {"outer", outer},
                 {"splitChunk", splitChunk},
                 {"inner", inner}});
  });
  Group g;
  uint64_t n = 0;
  if (call.skipped() || !resolve(call, axesMask, dtype, g) ||
      !product(call, {outer, splitChunk}, g.elementSize, n))
    return;
  if (inner < 1 || (n && n % uint64_t(inner) != 0)) {
    call.fail("inner must be >= 1 and divide outer * splitChunk");
    return;
  }
  if (n == 0)
    return;
  if (!in || !out) {
    call.fail("null buffer");
    return;
  }
  uint64_t es = g.elementSize, block = n * es;
  if (g.size == 1) {
    copyLocal(call, out, in, block);
    return;
  }
  // Pack the blocks ([outer, G, splitChunk] -> [G, outer, splitChunk]),
  // exchange them, and unpack ([G, X, inner] -> [X, G, inner]).
  Scratch packed(call, block * g.size), received(call, block * g.size);
  if (!packed.get() || !received.get())
    return;
  uint64_t srcRow = uint64_t(splitChunk) * es;
  for (uint64_t m = 0; m < g.size; ++m)
    if (!copyRows(call, packed.get() + m * block, srcRow,
                  static_cast<const char *>(in) + m * srcRow, srcRow * g.size,
                  srcRow, uint64_t(outer)))
      return;
  ncclResult_t rc = ncclGroupStart();
  for (uint64_t m = 0; m < g.size && rc == ncclSuccess; ++m) {
    rc = ncclSend(packed.get() + m * block, block, ncclUint8, int(m), g.comm,
                  call.state->stream);
    if (rc == ncclSuccess || rc == ncclInProgress)
      rc = ncclRecv(received.get() + m * block, block, ncclUint8, int(m),
                    g.comm, call.state->stream);
    if (rc == ncclInProgress)
      rc = ncclSuccess;
  }
  ncclResult_t end = ncclGroupEnd();
  if (!settled(call, g, "ncclSend/ncclRecv", rc != ncclSuccess ? rc : end))
    return;
  uint64_t x = n / uint64_t(inner), dstRow = uint64_t(inner) * es;
  for (uint64_t m = 0; m < g.size; ++m)
    if (!copyRows(call, static_cast<char *>(out) + m * dstRow, dstRow * g.size,
                  received.get() + m * block, dstRow, dstRow, x))
      return;
}

extern "C" void dnnc_rt_cuda_broadcast(int64_t axesMask, int32_t dtype,
                                       void *buf, int64_t count, int64_t root) {
  CudaCall call("dnnc_rt_cuda_broadcast", [&]() {
    return args({{"axesMask", axesMask},
                 {"dtype", dtype},
                 {"count", count},
                 {"root", root}});
  });
  Group g;
  uint64_t n = 0;
  if (call.skipped() || !resolve(call, axesMask, dtype, g) ||
      !product(call, {count}, g.elementSize, n))
    return;
  if (root < 0 || uint64_t(root) >= g.size) {
    call.fail("root " + std::to_string(root) +
              " is not a member of a group "
              "of " +
              std::to_string(g.size));
    return;
  }
  if (n == 0 || g.size == 1)
    return;
  if (!buf) {
    call.fail("null buffer");
    return;
  }
  settled(call, g, "ncclBroadcast",
          ncclBroadcast(buf, buf, n * g.elementSize, ncclUint8, int(root),
                        g.comm, call.state->stream));
}

std::vector<std::string> cudaKernelNames() {
  // Taking the addresses keeps the kernels in a static link of the runtime.
  static void *const addresses[] = {
      reinterpret_cast<void *>(&dnnc_rt_cuda_stream),
      reinterpret_cast<void *>(&dnnc_rt_cuda_all_reduce),
      reinterpret_cast<void *>(&dnnc_rt_cuda_all_gather),
      reinterpret_cast<void *>(&dnnc_rt_cuda_reduce_scatter),
      reinterpret_cast<void *>(&dnnc_rt_cuda_all_to_all),
      reinterpret_cast<void *>(&dnnc_rt_cuda_broadcast)};
  (void)addresses;
  return {"dnnc_rt_cuda_stream",     "dnnc_rt_cuda_all_reduce",
          "dnnc_rt_cuda_all_gather", "dnnc_rt_cuda_reduce_scatter",
          "dnnc_rt_cuda_all_to_all", "dnnc_rt_cuda_broadcast"};
}

} // namespace dnnc::rt
