//===- CudaBackend.cpp - The `cuda` target backend -------------*- C++ -*-===//
//
// One CUDA device and stream per rank, cudaMalloc'd buffers, a dlopen()ed
// host shared object whose entries launch work on the stream, and CUDA
// graphs of its functions. NCCL (communicators, collective kernels,
// pipeline transfers) is in CudaNccl.cpp, the cuBLASLt GEMMs and the
// attention kernels in CudaGemm.cpp; CudaState.h is the state they share.
// Plain C++ against the CUDA runtime API: no nvcc.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Runtime/CudaBackend.h"
#include "CudaState.h"
#include "KernelErrors.h"
#include "dnnc/Runtime/Kernels.h"

#include <cstdlib>
#include <thread>

namespace dnnc::rt {

bool cudaCompiledIn() { return true; }

//===----------------------------------------------------------------------===//
// Errors and environment
//===----------------------------------------------------------------------===//

/// "cudaMalloc failed: cudaErrorMemoryAllocation: out of memory".
std::string cudaFailure(const char *call, cudaError_t rc) {
  return std::string(call) + " failed: " + cudaGetErrorName(rc) + ": " +
         cudaGetErrorString(rc);
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
double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

/// Backs off while polling: spins briefly, then sleeps.
void pollPause(unsigned iteration) {
  if (iteration < 64)
    std::this_thread::yield();
  else
    std::this_thread::sleep_for(std::chrono::microseconds(200));
}

//===----------------------------------------------------------------------===//
// Streams
//===----------------------------------------------------------------------===//

/// Waits for `s` with the timeout while communicators exist (polling their
/// asynchronous errors), plainly otherwise. `what` starts the error.
bool CudaBackend::State::wait(cudaStream_t s, const std::string &what,
                              std::string &error) {
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

//===----------------------------------------------------------------------===//
// The active backend
//===----------------------------------------------------------------------===//

std::atomic<CudaBackend::State *> &activeStateSlot() {
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
  releaseCublasLt(s);
  if (s.ready)
    cudaEventDestroy(s.ready);
  for (cudaStream_t st : {s.stream, s.upStream, s.downStream})
    if (st)
      cudaStreamDestroy(st);
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

bool CudaBackend::fillZero(const DeviceBuffer &buffer, uint64_t bytes,
                           std::string &error) {
  if (bytes > buffer.bytes) {
    error = "internal error: zeroing " + std::to_string(bytes) +
            " bytes of a buffer of " + std::to_string(buffer.bytes);
    return false;
  }
  if (!bytes)
    return true;
  State &s = *state;
  cudaSetDevice(s.device);
  cudaError_t rc = cudaMemsetAsync(buffer.data, 0, bytes, s.stream);
  if (rc != cudaSuccess) {
    error = "zeroing device memory: " + cudaFailure("cudaMemsetAsync", rc);
    return false;
  }
  return true;
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

//===----------------------------------------------------------------------===//
// Kernel calls
//===----------------------------------------------------------------------===//

/// Checks a CUDA call enqueued by a kernel.
bool cudaOk(CudaCall &call, const char *what, cudaError_t rc) {
  return rc == cudaSuccess || call.fail(cudaFailure(what, rc));
}

/// Returns "name=value, ..." for kernel messages.
std::string args(std::initializer_list<std::pair<const char *, int64_t>> kv) {
  std::string text;
  for (const auto &p : kv)
    text += (text.empty() ? "" : ", ") + std::string(p.first) + "=" +
            std::to_string(p.second);
  return text;
}

extern "C" void *dnnc_rt_cuda_stream(void) {
  CudaBackend::State *state = activeStateSlot().load();
  if (!state) {
    setKernelError("runtime kernel dnnc_rt_cuda_stream(): called outside a "
                   "run of the cuda backend");
    return nullptr;
  }
  return state->stream;
}

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
