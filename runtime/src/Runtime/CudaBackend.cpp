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

#include "CudaKernels.h"

#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <nccl.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <tuple>
#include <type_traits>

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

/// The Comm tag of the NCCL ids of pipeline transfers over TCP; group ids
/// use the tags above it (dnnc-run's own messages use small tags).
static constexpr int kNcclIdTag = 1 << 20;

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

/// A planned GEMM shape: cuBLASLt descriptors and the chosen algorithm.
struct GemmPlan {
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
  cublasLtMatmulAlgo_t algo{};
  /// The bias / activation epilogue is a kernel after the GEMM: cuBLASLt
  /// had no algorithm with it fused for this shape and types.
  bool separateEpilogue = false;
};

/// A rank function captured into a CUDA graph with the buffers it ran on.
struct CapturedRun {
  std::vector<void *> buffers;
  cudaGraphExec_t exec = nullptr;
};

/// cuBLASLt, loaded with dlopen on the first GEMM of the process: linking it
/// would cost every dnnc-run start (cpu plans included) ~0.1 s.
struct CublasLt {
  decltype(&cublasLtCreate) create = nullptr;
  decltype(&cublasLtDestroy) destroy = nullptr;
  decltype(&cublasLtMatmulDescCreate) descCreate = nullptr;
  decltype(&cublasLtMatmulDescDestroy) descDestroy = nullptr;
  decltype(&cublasLtMatmulDescSetAttribute) descSet = nullptr;
  decltype(&cublasLtMatrixLayoutCreate) layoutCreate = nullptr;
  decltype(&cublasLtMatrixLayoutDestroy) layoutDestroy = nullptr;
  decltype(&cublasLtMatrixLayoutSetAttribute) layoutSet = nullptr;
  decltype(&cublasLtMatmulPreferenceCreate) preferenceCreate = nullptr;
  decltype(&cublasLtMatmulPreferenceDestroy) preferenceDestroy = nullptr;
  decltype(&cublasLtMatmulPreferenceSetAttribute) preferenceSet = nullptr;
  decltype(&cublasLtMatmulAlgoGetHeuristic) heuristic = nullptr;
  decltype(&cublasLtMatmul) matmul = nullptr;
  decltype(&cublasLtGetStatusString) statusString = nullptr;
  /// Why loading failed ("" once loaded).
  std::string error;

  /// The process's cuBLASLt; null (with `error`) when it cannot be loaded.
  static CublasLt *get(std::string &error) {
    static CublasLt lt;
    static std::once_flag once;
    std::call_once(once, [] { lt.load(); });
    if (!lt.error.empty()) {
      error = lt.error;
      return nullptr;
    }
    return &lt;
  }

private:
  void load() {
    void *library = nullptr;
    for (const char *name :
         {"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so"})
      if ((library = ::dlopen(name, RTLD_NOW | RTLD_LOCAL)))
        break;
    if (!library) {
      const char *why = ::dlerror();
      error = std::string("cannot load cuBLASLt (libcublasLt.so.13): ") +
              (why ? why : "not found");
      return;
    }
    bool ok = true;
    auto bind = [&](auto &fn, const char *symbol) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(
          ::dlsym(library, symbol));
      if (!fn && ok) {
        ok = false;
        error = std::string("cuBLASLt has no ") + symbol;
      }
    };
    bind(create, "cublasLtCreate");
    bind(destroy, "cublasLtDestroy");
    bind(descCreate, "cublasLtMatmulDescCreate");
    bind(descDestroy, "cublasLtMatmulDescDestroy");
    bind(descSet, "cublasLtMatmulDescSetAttribute");
    bind(layoutCreate, "cublasLtMatrixLayoutCreate");
    bind(layoutDestroy, "cublasLtMatrixLayoutDestroy");
    bind(layoutSet, "cublasLtMatrixLayoutSetAttribute");
    bind(preferenceCreate, "cublasLtMatmulPreferenceCreate");
    bind(preferenceDestroy, "cublasLtMatmulPreferenceDestroy");
    bind(preferenceSet, "cublasLtMatmulPreferenceSetAttribute");
    bind(heuristic, "cublasLtMatmulAlgoGetHeuristic");
    bind(matmul, "cublasLtMatmul");
    bind(statusString, "cublasLtGetStatusString");
  }
};

/// The workspace cuBLASLt may use per GEMM.
constexpr size_t kCublasLtWorkspaceBytes = size_t(32) << 20;

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
  /// cuBLASLt (loaded on the first GEMM): the handle, its workspace and a
  /// plan (descriptors and the heuristic's algorithm) per GEMM shape.
  cublasLtHandle_t lt = nullptr;
  void *ltWorkspace = nullptr;
  std::map<std::vector<int64_t>, struct GemmPlan> gemmPlans;
  /// CUDA graphs of rank functions, keyed by (function, micro-batch): the
  /// buffers captured with and the executable graph (DNNC_CUDA_GRAPHS).
  std::map<std::pair<uint32_t, uint32_t>, struct CapturedRun> graphs;
  /// Runs done eagerly per (function, micro-batch), and those that cannot
  /// be captured (a capture failed, or they call NCCL under
  /// DNNC_CUDA_GRAPHS=local).
  std::map<std::pair<uint32_t, uint32_t>, unsigned> eagerRuns;
  std::set<std::pair<uint32_t, uint32_t>> notCapturable;
  /// Set by the collective kernels: the running function calls NCCL.
  bool calledCollective = false;
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
    if (comm && comm->usesTcp()) {
      // Over TCP: member 0 sends the id to each member through Comm
      // (bounded by DNNC_BOOTSTRAP_TIMEOUT_S; tags apart from dnnc-run's).
      std::string what = "axesMask " + std::to_string(axesMask);
      ncclUniqueId id;
      int tag = kNcclIdTag + 1 + int(axesMask & 0xffff);
      if (index == 0) {
        ncclResult_t rc = ncclGetUniqueId(&id);
        if (rc != ncclSuccess) {
          error = "creating the NCCL communicator of " + what + ": " +
                  ncclFailure("ncclGetUniqueId", rc);
          return false;
        }
        for (size_t m = 1; m < members.size(); ++m)
          if (!comm->send(&id, sizeof(id), members[m], tag, error)) {
            error = "sending the NCCL id of " + what + ": " + error;
            return false;
          }
      } else if (!comm->recv(&id, sizeof(id), members[0], tag, error)) {
        error = "receiving the NCCL id of " + what + ": " + error;
        return false;
      }
      ncclComm_t c = nullptr;
      if (!initComm(c, int(size), int(index), id, what, error))
        return false;
      groupComms.emplace(axesMask, c);
      out = c;
      return true;
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
  for (auto &entry : s.graphs)
    if (entry.second.exec)
      cudaGraphExecDestroy(entry.second.exec);
  std::string ignored;
  if (CublasLt *lt = s.lt ? CublasLt::get(ignored) : nullptr) {
    for (auto &entry : s.gemmPlans) {
      GemmPlan &p = entry.second;
      for (cublasLtMatrixLayout_t l : {p.a, p.b, p.c})
        if (l)
          lt->layoutDestroy(l);
      if (p.desc)
        lt->descDestroy(p.desc);
    }
    lt->destroy(s.lt);
  }
  if (s.ltWorkspace)
    cudaFree(s.ltWorkspace);
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
  if (s.comm && s.comm->usesTcp()) {
    // Over TCP: rank 0 sends the two ids to every rank through Comm
    // (bounded by DNNC_BOOTSTRAP_TIMEOUT_S).
    ncclUniqueId ids[2];
    if (s.collectives->rank() == 0) {
      for (ncclUniqueId &id : ids) {
        ncclResult_t rc = ncclGetUniqueId(&id);
        if (rc != ncclSuccess) {
          error = ncclFailure("ncclGetUniqueId", rc);
          return false;
        }
      }
      for (uint32_t r = 1; r < size; ++r)
        if (!s.comm->send(ids, sizeof(ids), r, kNcclIdTag, error)) {
          error = "sending the NCCL ids of pipeline transfers: " + error;
          return false;
        }
    } else if (!s.comm->recv(ids, sizeof(ids), 0, kNcclIdTag, error)) {
      error = "receiving the NCCL ids of pipeline transfers: " + error;
      return false;
    }
    cudaSetDevice(s.device);
    int rank = int(s.collectives->rank());
    return s.initComm(s.upComm, int(size), rank, ids[0],
                      "pipeline transfers toward higher ranks", error) &&
           s.initComm(s.downComm, int(size), rank, ids[1],
                      "pipeline transfers toward lower ranks", error);
  }
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

/// Which rank functions are captured into CUDA graphs.
enum class GraphMode {
  /// None: every run is eager.
  Off,
  /// Functions that call no NCCL collective.
  Local,
  /// Every function, NCCL collectives included (NCCL 2.9 and later).
  All,
};

/// The graph mode of DNNC_CUDA_GRAPHS: `0` (off), `local` or `1` (all, the
/// default). An NCCL older than 2.9 cannot be captured: `all` is `local`.
static GraphMode getGraphMode() {
  const char *env = std::getenv("DNNC_CUDA_GRAPHS");
  std::string value = env ? env : "1";
  if (value == "0")
    return GraphMode::Off;
  int version = 0;
  if (value == "local" || ncclGetVersion(&version) != ncclSuccess ||
      version < 20900)
    return GraphMode::Local;
  return GraphMode::All;
}

bool CudaBackend::synchronize(std::string &error) {
  State &s = *state;
  cudaSetDevice(s.device);
  return s.wait(s.stream, "synchronizing the device", error);
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
  std::string name = "function '" + s.functionNames[function] + "'";
  auto key = std::make_pair(function, microbatch);

  // A graph captured from this function on the same buffers: replay it
  // (one launch for all its kernels and copies).
  auto captured = s.graphs.find(key);
  if (captured != s.graphs.end() && captured->second.buffers == buffers) {
    cudaError_t rc = cudaGraphLaunch(captured->second.exec, s.stream);
    if (rc != cudaSuccess) {
      error =
          "CUDA error in " + name + ": " + cudaFailure("cudaGraphLaunch", rc);
      return false;
    }
    return s.wait(s.stream, "CUDA error in " + name, error);
  }
  // The second run of a function is captured: the first one has loaded the
  // code's modules, planned the GEMMs, allocated the workspaces and created
  // the NCCL communicators it uses, so capturing enqueues work only. NCCL
  // collectives are captured too (their kernels are graph nodes; ranks that
  // replay and ranks that run eagerly interoperate), unless
  // DNNC_CUDA_GRAPHS=local.
  GraphMode mode = getGraphMode();
  bool capture = mode != GraphMode::Off && captured == s.graphs.end() &&
                 s.eagerRuns[key] > 0 && !s.notCapturable.count(key);

  std::vector<void *> args(buffers);
  args.push_back(nullptr);
  std::string discarded;
  takeKernelError(discarded);
  cudaGetLastError(); // Forget launch errors from before this run.
  s.calledCollective = false;
  if (capture &&
      cudaStreamBeginCapture(s.stream, cudaStreamCaptureModeThreadLocal) !=
          cudaSuccess) {
    cudaGetLastError();
    s.notCapturable.insert(key);
    capture = false;
  }
  {
    ActiveCollectives active(s.collectives.get());
    ActiveState activeState(&s);
    if (s.collectives)
      s.collectives->microbatch = microbatch;
    s.functions[function](args.data());
  }
  if (capture) {
    cudaGraph_t graph = nullptr;
    cudaError_t rc = cudaStreamEndCapture(s.stream, &graph);
    cudaGraphExec_t exec = nullptr;
    std::string kernelError;
    bool failed = takeKernelError(kernelError) ||
                  (s.calledCollective && mode == GraphMode::Local) ||
                  rc != cudaSuccess || !graph ||
                  cudaGraphInstantiate(&exec, graph, 0) != cudaSuccess;
    if (graph)
      cudaGraphDestroy(graph);
    cudaGetLastError();
    if (failed) {
      // Nothing ran: run it eagerly, now and from now on.
      if (exec)
        cudaGraphExecDestroy(exec);
      s.notCapturable.insert(key);
      return run(function, microbatch, buffers, error);
    }
    s.graphs[key] = CapturedRun{buffers, exec};
    rc = cudaGraphLaunch(exec, s.stream);
    if (rc != cudaSuccess) {
      error =
          "CUDA error in " + name + ": " + cudaFailure("cudaGraphLaunch", rc);
      return false;
    }
    return s.wait(s.stream, "CUDA error in " + name, error);
  }
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
  if (s.calledCollective && mode == GraphMode::Local)
    s.notCapturable.insert(key);
  ++s.eagerRuns[key];
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
  // A function calling NCCL is captured into a CUDA graph only in
  // GraphMode::All.
  call.state->calledCollective = true;
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

//===----------------------------------------------------------------------===//
// GEMMs (cuBLASLt) and attention
//===----------------------------------------------------------------------===//

namespace {

/// The cuBLASLt types of one GEMM kernel.
struct GemmTypes {
  cudaDataType_t ab, c, scale;
  cublasComputeType_t compute;
  size_t abBytes, cBytes;
};

/// The element type of C (and of the bias) for the epilogue kernel.
ElementType getElementType(cudaDataType_t type) {
  switch (type) {
  case CUDA_R_64F:
    return ElementType::F64;
  case CUDA_R_16BF:
    return ElementType::BF16;
  case CUDA_R_16F:
    return ElementType::F16;
  default:
    return ElementType::F32;
  }
}

/// A GEMM's epilogue: none (a plain GEMM), or C = act(C [+ bias]).
struct GemmEpilogue {
  bool enabled = false;
  /// Null for no bias.
  const void *bias = nullptr;
  int32_t activation = DNNC_RT_ACTIVATION_NONE;
};

/// The cuBLASLt epilogue adding the bias (if any) and applying the
/// activation.
cublasLtEpilogue_t getEpilogue(const GemmEpilogue &e) {
  switch (e.activation) {
  case DNNC_RT_ACTIVATION_RELU:
    return e.bias ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_RELU;
  case DNNC_RT_ACTIVATION_GELU_TANH:
    return e.bias ? CUBLASLT_EPILOGUE_GELU_BIAS : CUBLASLT_EPILOGUE_GELU;
  default:
    return e.bias ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT;
  }
}

/// A cuBLASLt status as text.
std::string ltFailure(CublasLt *lt, const char *what, cublasStatus_t rc) {
  return std::string(what) + " failed: " + lt->statusString(rc);
}

/// C (batch x M x N, row-major) = A (M x K) B (K x N) per batch matrix, on
/// the stream, through cuBLASLt. Row-major C = A B is column-major
/// C^T = B^T A^T: cuBLASLt multiplies B (N x K, leading dim N) by A (K x M,
/// leading dim K) into C (N x M, leading dim N), no transposes. The bias is
/// then a vector over cuBLASLt's rows (our columns), as its epilogues want.
/// With an epilogue, C = act(A B [+ bias]): fused into the GEMM (cuBLASLt's
/// [RELU_|GELU_]BIAS, RELU or GELU epilogues) where cuBLASLt has an
/// algorithm for it, else the GEMM then launchBiasActivation.
void gemm(const char *name, const GemmTypes &t, int64_t batch, int64_t M,
          int64_t N, int64_t K, const void *A, int64_t strideA, const void *B,
          int64_t strideB, void *C, int64_t strideC,
          GemmEpilogue epilogue = {}) {
  CudaCall call(name, [&]() {
    return args({{"batch", batch},
                 {"M", M},
                 {"N", N},
                 {"K", K},
                 {"strideA", strideA},
                 {"strideB", strideB},
                 {"strideC", strideC},
                 {"activation", epilogue.activation}});
  });
  if (call.skipped())
    return;
  if (batch < 0 || M < 0 || N < 0 || K < 0 || strideA < 0 || strideB < 0 ||
      strideC < 0) {
    call.fail("negative size or stride");
    return;
  }
  if (epilogue.activation < DNNC_RT_ACTIVATION_NONE ||
      epilogue.activation > DNNC_RT_ACTIVATION_GELU_TANH) {
    call.fail("unknown activation");
    return;
  }
  if (batch == 0 || M == 0 || N == 0)
    return;
  if (!C || (K > 0 && (!A || !B))) {
    call.fail("null buffer");
    return;
  }
  CudaBackend::State &s = *call.state;
  // The epilogue as its own kernel, after the GEMM wrote C.
  auto separateEpilogue = [&]() {
    if (epilogue.enabled &&
        (epilogue.bias || epilogue.activation != DNNC_RT_ACTIVATION_NONE))
      cudaOk(call, "the bias/activation kernel",
             launchBiasActivation(getElementType(t.c), C, batch, M, N, strideC,
                                  epilogue.bias, epilogue.activation,
                                  s.stream));
  };
  if (K == 0) { // C = 0
    for (int64_t b = 0; b < batch; ++b)
      if (!cudaOk(call, "cudaMemsetAsync",
                  cudaMemsetAsync(static_cast<char *>(C) +
                                      b * strideC * int64_t(t.cBytes),
                                  0, size_t(M * N) * t.cBytes, s.stream)))
        return;
    separateEpilogue();
    return;
  }
  std::string error;
  CublasLt *lt = CublasLt::get(error);
  if (!lt) {
    call.fail(error);
    return;
  }
  if (!s.lt) {
    cublasStatus_t rc = lt->create(&s.lt);
    if (rc != CUBLAS_STATUS_SUCCESS) {
      s.lt = nullptr;
      call.fail(ltFailure(lt, "cublasLtCreate", rc));
      return;
    }
    if (!cudaOk(call, "cudaMalloc (cuBLASLt workspace)",
                cudaMalloc(&s.ltWorkspace, kCublasLtWorkspaceBytes)))
      return;
  }
  // The alignment (up to 256 bytes) every batch matrix of an operand has:
  // cuBLASLt's algorithms may assume it, so it is part of the plan.
  auto alignment = [&](const void *ptr, int64_t stride, size_t elem) {
    uint64_t bits = uint64_t(reinterpret_cast<uintptr_t>(ptr)) | 256;
    if (batch > 1 && stride != 0)
      bits |= uint64_t(stride) * elem;
    return uint32_t(bits & (~bits + 1)); // the lowest set bit
  };
  uint32_t alignA = alignment(A, strideA, t.abBytes),
           alignB = alignment(B, strideB, t.abBytes),
           alignC = alignment(C, strideC, t.cBytes);
  std::vector<int64_t> key = {int64_t(t.ab),
                              int64_t(t.c),
                              int64_t(t.compute),
                              batch,
                              M,
                              N,
                              K,
                              strideA,
                              strideB,
                              strideC,
                              alignA,
                              alignB,
                              alignC,
                              epilogue.enabled ? epilogue.activation : -1,
                              epilogue.bias ? 1 : 0};
  auto found = s.gemmPlans.find(key);
  if (found == s.gemmPlans.end()) {
    GemmPlan p;
    auto check = [&](const char *what, cublasStatus_t rc) {
      return rc == CUBLAS_STATUS_SUCCESS || call.fail(ltFailure(lt, what, rc));
    };
    auto layout = [&](cublasLtMatrixLayout_t &l, cudaDataType_t type,
                      int64_t rows, int64_t cols, int64_t stride) {
      if (!check(
              "cublasLtMatrixLayoutCreate",
              lt->layoutCreate(&l, type, uint64_t(rows), uint64_t(cols), rows)))
        return false;
      int32_t count = int32_t(batch);
      return check("cublasLtMatrixLayoutSetAttribute",
                   lt->layoutSet(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count,
                                 sizeof(count))) &&
             check("cublasLtMatrixLayoutSetAttribute",
                   lt->layoutSet(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                 &stride, sizeof(stride)));
    };
    cublasLtMatmulPreference_t preference = nullptr;
    // cuBLASLt's "A" is our B and its "B" our A (see above).
    auto setAlignments = [&]() {
      std::pair<cublasLtMatmulPreferenceAttributes_t, uint32_t *> entries[] = {
          {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &alignB},
          {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &alignA},
          {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &alignC},
          {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &alignC}};
      for (auto [attribute, value] : entries)
        if (!check("cublasLtMatmulPreferenceSetAttribute",
                   lt->preferenceSet(preference, attribute, value,
                                     sizeof(*value))))
          return false;
      return true;
    };
    // The epilogue attributes of the descriptor (a bias pointer is set for
    // the heuristic, and again at every call).
    auto setEpilogue = [&](cublasLtEpilogue_t value) {
      return check("cublasLtMatmulDescSetAttribute",
                   lt->descSet(p.desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &value,
                               sizeof(value))) &&
             (value == CUBLASLT_EPILOGUE_DEFAULT || !epilogue.bias ||
              check("cublasLtMatmulDescSetAttribute",
                    lt->descSet(p.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER,
                                &epilogue.bias, sizeof(epilogue.bias))));
    };
    cublasLtMatmulHeuristicResult_t result{};
    int results = 0;
    size_t workspace = kCublasLtWorkspaceBytes;
    bool ok = check("cublasLtMatmulDescCreate",
                    lt->descCreate(&p.desc, t.compute, t.scale)) &&
              layout(p.a, t.ab, N, K, strideB) &&
              layout(p.b, t.ab, K, M, strideA) &&
              layout(p.c, t.c, N, M, strideC) &&
              check("cublasLtMatmulPreferenceCreate",
                    lt->preferenceCreate(&preference)) &&
              check("cublasLtMatmulPreferenceSetAttribute",
                    lt->preferenceSet(preference,
                                      CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                      &workspace, sizeof(workspace))) &&
              setAlignments();
    // With the epilogue fused if cuBLASLt has an algorithm for it (an
    // unsupported combination is "not supported" or no result), else
    // without it.
    if (ok && epilogue.enabled) {
      results = 0;
      if (setEpilogue(getEpilogue(epilogue)) &&
          lt->heuristic(s.lt, p.desc, p.a, p.b, p.c, p.c, preference, 1,
                        &result, &results) != CUBLAS_STATUS_SUCCESS)
        results = 0;
      p.separateEpilogue = results == 0;
      if (p.separateEpilogue)
        ok = setEpilogue(CUBLASLT_EPILOGUE_DEFAULT);
    }
    if (ok && results == 0)
      ok = check("cublasLtMatmulAlgoGetHeuristic",
                 lt->heuristic(s.lt, p.desc, p.a, p.b, p.c, p.c, preference, 1,
                               &result, &results));
    if (preference)
      lt->preferenceDestroy(preference);
    if (ok && results == 0)
      ok = call.fail("cuBLASLt has no algorithm for this GEMM");
    if (!ok) {
      for (cublasLtMatrixLayout_t l : {p.a, p.b, p.c})
        if (l)
          lt->layoutDestroy(l);
      if (p.desc)
        lt->descDestroy(p.desc);
      return;
    }
    p.algo = result.algo;
    s.gemmPlans.emplace(key, p);
  }
  const GemmPlan &p = s.gemmPlans.at(key);
  bool fused = epilogue.enabled && !p.separateEpilogue;
  if (fused && epilogue.bias) {
    cublasStatus_t rc = lt->descSet(p.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER,
                                    &epilogue.bias, sizeof(epilogue.bias));
    if (rc != CUBLAS_STATUS_SUCCESS) {
      call.fail(ltFailure(lt, "cublasLtMatmulDescSetAttribute", rc));
      return;
    }
  }
  float alpha32 = 1.0f, beta32 = 0.0f;
  double alpha64 = 1.0, beta64 = 0.0;
  bool wide = t.scale == CUDA_R_64F;
  cublasStatus_t rc = lt->matmul(
      s.lt, p.desc, wide ? static_cast<const void *>(&alpha64) : &alpha32, B,
      p.a, A, p.b, wide ? static_cast<const void *>(&beta64) : &beta32, C, p.c,
      C, p.c, &p.algo, s.ltWorkspace, kCublasLtWorkspaceBytes, s.stream);
  if (rc != CUBLAS_STATUS_SUCCESS) {
    call.fail(ltFailure(lt, "cublasLtMatmul", rc));
    return;
  }
  if (!fused)
    separateEpilogue();
}

/// Fused attention on the stream (CudaKernels.cu).
void attention(const char *name, ElementType type, const AttentionArgs &a) {
  CudaCall call(name, [&]() {
    return args({{"batchHeads", a.batchHeads},
                 {"seqQ", a.seqQ},
                 {"seqK", a.seqK},
                 {"headDim", a.headDim},
                 {"heads", a.heads},
                 {"biasStrideB", a.biasStrideB},
                 {"biasStrideH", a.biasStrideH},
                 {"biasStrideQ", a.biasStrideQ}});
  });
  if (call.skipped())
    return;
  if (a.batchHeads < 0 || a.seqQ < 0 || a.seqK < 0 || a.headDim < 0 ||
      a.heads <= 0 || a.batchHeads % a.heads != 0) {
    call.fail("invalid sizes");
    return;
  }
  if (a.headDim > maxAttentionHeadDim()) {
    call.fail("head dimension above " + std::to_string(maxAttentionHeadDim()));
    return;
  }
  if (a.batchHeads * a.seqQ * a.headDim == 0)
    return;
  if (!a.q || !a.k || !a.v || !a.out) {
    call.fail("null buffer");
    return;
  }
  cudaOk(call, "the attention kernel",
         launchAttention(type, a, call.state->stream));
}

} // namespace

/// Defines `dnnc_rt_cuda_gemm_<SUFFIX>` with A/B of type AB, C of type C,
/// the cuBLASLt compute and scale types, and the byte sizes of AB and C.
#define DNNC_CUDA_GEMM(SUFFIX, AB, C, SCALE, COMPUTE, AB_BYTES, C_BYTES)       \
  extern "C" void dnnc_rt_cuda_gemm_##SUFFIX(                                  \
      int64_t batch, int64_t M, int64_t N, int64_t K, const void *A,           \
      int64_t strideA, const void *B, int64_t strideB, void *C_,               \
      int64_t strideC) {                                                       \
    gemm("dnnc_rt_cuda_gemm_" #SUFFIX,                                         \
         {AB, C, SCALE, COMPUTE, AB_BYTES, C_BYTES}, batch, M, N, K, A,        \
         strideA, B, strideB, C_, strideC);                                    \
  }

DNNC_CUDA_GEMM(f32, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F, 4,
               4)
DNNC_CUDA_GEMM(tf32, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F,
               CUBLAS_COMPUTE_32F_FAST_TF32, 4, 4)
DNNC_CUDA_GEMM(bf16, CUDA_R_16BF, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F, 2,
               4)
DNNC_CUDA_GEMM(f16, CUDA_R_16F, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F, 2,
               4)
DNNC_CUDA_GEMM(f64, CUDA_R_64F, CUDA_R_64F, CUDA_R_64F, CUBLAS_COMPUTE_64F, 8,
               8)

/// Defines `dnnc_rt_cuda_gemm_bias_<SUFFIX>`: the GEMM with a bias /
/// activation epilogue, C and bias of type C.
#define DNNC_CUDA_GEMM_BIAS(SUFFIX, AB, C, SCALE, COMPUTE, AB_BYTES, C_BYTES)  \
  extern "C" void dnnc_rt_cuda_gemm_bias_##SUFFIX(                             \
      int64_t batch, int64_t M, int64_t N, int64_t K, const void *A,           \
      int64_t strideA, const void *B, int64_t strideB, void *C_,               \
      int64_t strideC, const void *bias, int32_t activation) {                 \
    gemm("dnnc_rt_cuda_gemm_bias_" #SUFFIX,                                    \
         {AB, C, SCALE, COMPUTE, AB_BYTES, C_BYTES}, batch, M, N, K, A,        \
         strideA, B, strideB, C_, strideC, {true, bias, activation});          \
  }

DNNC_CUDA_GEMM_BIAS(f32, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F,
                    4, 4)
DNNC_CUDA_GEMM_BIAS(tf32, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F,
                    CUBLAS_COMPUTE_32F_FAST_TF32, 4, 4)
DNNC_CUDA_GEMM_BIAS(bf16, CUDA_R_16BF, CUDA_R_16BF, CUDA_R_32F,
                    CUBLAS_COMPUTE_32F, 2, 2)
DNNC_CUDA_GEMM_BIAS(f16, CUDA_R_16F, CUDA_R_16F, CUDA_R_32F, CUBLAS_COMPUTE_32F,
                    2, 2)
DNNC_CUDA_GEMM_BIAS(f64, CUDA_R_64F, CUDA_R_64F, CUDA_R_64F, CUBLAS_COMPUTE_64F,
                    8, 8)

#define DNNC_CUDA_ATTENTION(SUFFIX, TYPE)                                      \
  extern "C" void dnnc_rt_cuda_attention_##SUFFIX(                             \
      int64_t batchHeads, int64_t seqQ, int64_t seqK, int64_t headDim,         \
      const void *q, const void *k, const void *v, void *out, float scale,     \
      int32_t causal, int64_t heads, const void *bias, int64_t biasStrideB,    \
      int64_t biasStrideH, int64_t biasStrideQ) {                              \
    attention("dnnc_rt_cuda_attention_" #SUFFIX, ElementType::TYPE,            \
              {batchHeads, seqQ, seqK, headDim, q, k, v, out, scale, causal,   \
               heads, bias, biasStrideB, biasStrideH, biasStrideQ});           \
  }

DNNC_CUDA_ATTENTION(f32, F32)
DNNC_CUDA_ATTENTION(bf16, BF16)
DNNC_CUDA_ATTENTION(f16, F16)

std::vector<std::string> cudaKernelNames() {
  // Taking the addresses keeps the kernels in a static link of the runtime.
  static void *const addresses[] = {
      reinterpret_cast<void *>(&dnnc_rt_cuda_stream),
      reinterpret_cast<void *>(&dnnc_rt_cuda_all_reduce),
      reinterpret_cast<void *>(&dnnc_rt_cuda_all_gather),
      reinterpret_cast<void *>(&dnnc_rt_cuda_reduce_scatter),
      reinterpret_cast<void *>(&dnnc_rt_cuda_all_to_all),
      reinterpret_cast<void *>(&dnnc_rt_cuda_broadcast),
      reinterpret_cast<void *>(&dnnc_rt_cuda_gemm_f32),
      reinterpret_cast<void *>(&dnnc_rt_cuda_gemm_tf32),
      reinterpret_cast<void *>(&dnnc_rt_cuda_gemm_bf16),
      reinterpret_cast<void *>(&dnnc_rt_cuda_gemm_f16),
      reinterpret_cast<void *>(&dnnc_rt_cuda_gemm_f64),
      reinterpret_cast<void *>(&dnnc_rt_cuda_gemm_bias_f32),
      reinterpret_cast<void *>(&dnnc_rt_cuda_gemm_bias_tf32),
      reinterpret_cast<void *>(&dnnc_rt_cuda_gemm_bias_bf16),
      reinterpret_cast<void *>(&dnnc_rt_cuda_gemm_bias_f16),
      reinterpret_cast<void *>(&dnnc_rt_cuda_gemm_bias_f64),
      reinterpret_cast<void *>(&dnnc_rt_cuda_attention_f32),
      reinterpret_cast<void *>(&dnnc_rt_cuda_attention_bf16),
      reinterpret_cast<void *>(&dnnc_rt_cuda_attention_f16)};
  (void)addresses;
  return {"dnnc_rt_cuda_stream",         "dnnc_rt_cuda_all_reduce",
          "dnnc_rt_cuda_all_gather",     "dnnc_rt_cuda_reduce_scatter",
          "dnnc_rt_cuda_all_to_all",     "dnnc_rt_cuda_broadcast",
          "dnnc_rt_cuda_gemm_f32",       "dnnc_rt_cuda_gemm_tf32",
          "dnnc_rt_cuda_gemm_bf16",      "dnnc_rt_cuda_gemm_f16",
          "dnnc_rt_cuda_gemm_f64",       "dnnc_rt_cuda_gemm_bias_f32",
          "dnnc_rt_cuda_gemm_bias_tf32", "dnnc_rt_cuda_gemm_bias_bf16",
          "dnnc_rt_cuda_gemm_bias_f16",  "dnnc_rt_cuda_gemm_bias_f64",
          "dnnc_rt_cuda_attention_f32",  "dnnc_rt_cuda_attention_bf16",
          "dnnc_rt_cuda_attention_f16"};
}

} // namespace dnnc::rt
