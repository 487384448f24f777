//===- CudaState.h - The state of the cuda backend -------------*- C++ -*-===//
//
// Private to the runtime: CudaBackend::State (the device, streams, NCCL
// communicators, cuBLASLt plans, CUDA graphs and rank code of one rank) and
// what the parts of the cuda backend share: CudaBackend.cpp (the core:
// state, buffers, streams, graphs, steps), CudaNccl.cpp (communicators,
// collective kernels, pipeline transfers) and CudaGemm.cpp (cuBLASLt GEMMs
// and attention). Built only with DNNC_RUNTIME_WITH_CUDA.
//
//===----------------------------------------------------------------------===//

#ifndef DNNC_SRC_RUNTIME_CUDASTATE_H
#define DNNC_SRC_RUNTIME_CUDASTATE_H

#include "dnnc/Runtime/CudaBackend.h"
#include "Collectives.h"
#include "CommImpl.h"
#include "KernelCall.h"
#include "dnnc/Runtime/SharedObject.h"

#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace dnnc::rt {

//===----------------------------------------------------------------------===//
// Errors and polling
//===----------------------------------------------------------------------===//

/// "cudaMalloc failed: cudaErrorMemoryAllocation: out of memory".
std::string cudaFailure(const char *call, cudaError_t rc);

/// Seconds since `start`.
double secondsSince(std::chrono::steady_clock::time_point start);

/// Backs off while polling: spins briefly, then sleeps.
void pollPause(unsigned iteration);

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

/// Everything of one CudaBackend that names a CUDA, NCCL or cuBLASLt type.
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
  bool hasCommunicators() const;

  /// Aborts every communicator (ncclCommAbort) after `why`.
  void abortAll(const std::string &why);

  /// Releases communicator `c` and nulls it: ncclCommFinalize settled with
  /// the timeout, then ncclCommDestroy; ncclCommAbort once the backend has
  /// aborted or the finalisation fails.
  void close(ncclComm_t &c);

  /// Fails when a communicator reported an asynchronous error (and aborts
  /// them all).
  bool checkAsyncErrors(std::string &error);

  /// Waits until the non-blocking communicator `c` has finished its last
  /// call (initialisation, or enqueuing an operation): ncclInProgress turns
  /// into ncclSuccess or an error. Fails after the timeout.
  bool settle(ncclComm_t c, const char *call, std::string &error);

  /// Creates a non-blocking communicator of `nranks` ranks as rank `rank`
  /// from `id`, waiting at most the timeout for the peers.
  bool initComm(ncclComm_t &out, int nranks, int rank, const ncclUniqueId &id,
                const std::string &what, std::string &error);

  /// Waits for `s` with the timeout while communicators exist (polling their
  /// asynchronous errors), plainly otherwise. `what` starts the error.
  bool wait(cudaStream_t s, const std::string &what, std::string &error);

#if DNNC_RUNTIME_WITH_MPI
  /// Waits for the MPI request `request` at most the timeout.
  bool waitMpi(MPI_Request &request, const std::string &what,
               std::string &error);
#endif

  /// The communicator of the group of `axesMask` (null for a group of one),
  /// created on first use: member 0 makes the unique id and sends it to the
  /// other members over MPI.
  bool groupComm(int64_t axesMask, ncclComm_t &out, uint64_t &size,
                 std::string &error);
};

/// Destroys the cuBLASLt plans and handle of `s` and frees the
/// workspace (CudaGemm.cpp).
void releaseCublasLt(CudaBackend::State &s);

//===----------------------------------------------------------------------===//
// Kernel calls
//===----------------------------------------------------------------------===//

/// The state of the backend whose entry runs now: the kernels' C ABI has no
/// context argument (like the cpu collectives' active context).
std::atomic<CudaBackend::State *> &activeStateSlot();

/// One kernel call on the active backend: a KernelCall in the backend's
/// collective context.
class CudaCall : public KernelCall {
public:
  /// A call of kernel `name` with `arguments` on the active backend.
  CudaCall(const char *name, std::function<std::string()> arguments)
      : CudaCall(name, std::move(arguments), activeStateSlot().load()) {}

  /// True when the call cannot proceed: no active backend (fails), or an
  /// earlier kernel of this run was skipped (skips silently).
  bool skipped() {
    if (!state)
      return !fail("called outside a run of the cuda backend");
    return KernelCall::skipped();
  }

  /// The active backend's state; null outside a run.
  CudaBackend::State *state;

private:
  /// A call on the backend of `state` (null: none active).
  CudaCall(const char *name, std::function<std::string()> arguments,
           CudaBackend::State *state)
      : KernelCall(name, std::move(arguments),
                   state ? state->collectives.get() : nullptr),
        state(state) {}
};

/// Checks a CUDA call enqueued by a kernel.
bool cudaOk(CudaCall &call, const char *what, cudaError_t rc);

/// Returns "name=value, ..." for kernel messages.
std::string args(std::initializer_list<std::pair<const char *, int64_t>> kv);

} // namespace dnnc::rt

#endif // DNNC_SRC_RUNTIME_CUDASTATE_H
