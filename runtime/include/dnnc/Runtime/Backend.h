//===- Backend.h - Target backends of the runtime --------------*- C++ -*-===//
//
// A Backend runs one rank's program on one device: it loads the rank's code,
// owns device memory and moves bytes between host and device. Everything
// target-independent (which buffer holds what, inputs, weights, outputs)
// lives in Session, so a new target implements only this interface:
// CpuBackend, and CudaBackend (cudaMalloc'd memory, a host shared object
// whose functions launch kernels on the backend's stream, NCCL collectives
// and send/recv between pipeline stages) in builds with CUDA.
//
//===----------------------------------------------------------------------===//

#ifndef DNNC_RUNTIME_BACKEND_H
#define DNNC_RUNTIME_BACKEND_H

#include "dnnc/Runtime/Comm.h"
#include "dnnc/Runtime/Plan.h"
#include "dnnc/Runtime/World.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace dnnc::rt {

/// Memory owned by a backend: 64-byte aligned host memory for `cpu`, device
/// memory for `cuda`. `data` is what the rank code receives in `buffers[i]`.
struct DeviceBuffer {
  /// Start of the memory (device address for device targets).
  void *data = nullptr;
  /// Usable size in bytes.
  uint64_t bytes = 0;
};

/// One device executing one rank's program.
class Backend {
public:
  virtual ~Backend();

  /// The plan.bin target this backend runs ("cpu", "cuda").
  virtual const char *target() const = 0;

  /// Prepares the collectives of `model`'s mesh for this backend's rank
  /// (communicator groups for `cpu`, NCCL communicators for `cuda`). Called
  /// once, before loadProgram(). Fails when the backend's world does not
  /// have `model.worldSize` ranks.
  virtual bool connect(const plan::ModelInfo &model, std::string &error) = 0;

  /// Loads `program`'s code and resolves the symbol of each of its
  /// functions (the error names a missing symbol and the rank). Called once,
  /// before run().
  virtual bool loadProgram(const plan::RankProgram &program,
                           std::string &error) = 0;

  /// Allocates `bytes` (0 allowed) of zero-filled, 64-byte aligned memory.
  virtual bool allocate(uint64_t bytes, DeviceBuffer &buffer,
                        std::string &error) = 0;

  /// Frees memory from allocate() and resets `buffer`.
  virtual void deallocate(DeviceBuffer &buffer) = 0;

  /// Copies `bytes` host bytes from `src` to the start of `dst`.
  virtual bool copyToDevice(const DeviceBuffer &dst, const void *src,
                            uint64_t bytes, std::string &error) = 0;

  /// Sets the first `bytes` bytes of `buffer` to zero. The default copies
  /// zeros from the host.
  virtual bool fillZero(const DeviceBuffer &buffer, uint64_t bytes,
                        std::string &error);

  /// Copies `bytes` bytes from the start of `src` to host memory `dst`.
  virtual bool copyToHost(void *dst, const DeviceBuffer &src, uint64_t bytes,
                          std::string &error) = 0;

  /// The error of a send or receive (`what`: "send to", "receive from")
  /// between `rank` and `peer` in a world of one rank.
  static std::string loneRankError(uint32_t rank, const char *what,
                                   uint32_t peer);

  /// Runs function `function` of the loaded program (an index into
  /// RankProgram::functions) once with `buffers` (device addresses in the
  /// order of the function's arguments) and waits until it has finished.
  /// A failure of a runtime kernel is reported without naming the rank or
  /// the function: the Session adds both.
  /// `microbatch` is the micro-batch the call computes, which the code
  /// reads through `dnnc_rt_microbatch_index`.
  virtual bool run(uint32_t function, uint32_t microbatch,
                   const std::vector<void *> &buffers, std::string &error) = 0;

  /// Starts sending the first `bytes` bytes of `buffer` to rank `peer` with
  /// `tag`, without waiting for the receiver. `buffer` must stay unchanged
  /// until waitSends(). A world of one rank cannot send.
  virtual bool send(const DeviceBuffer &buffer, uint64_t bytes, uint32_t peer,
                    uint32_t tag, std::string &error) = 0;

  /// Receives `bytes` bytes from rank `peer` with `tag` into the start of
  /// `buffer`, waiting until they have arrived.
  virtual bool recv(const DeviceBuffer &buffer, uint64_t bytes, uint32_t peer,
                    uint32_t tag, std::string &error) = 0;

  /// Waits until every send started by send() has completed.
  virtual bool waitSends(std::string &error) = 0;

  /// Waits until the work the backend has started (kernels on a device
  /// stream) has finished, so that memory it uses may be freed. The default
  /// does nothing: for backends that finish everything before run()
  /// returns, such as `cpu`.
  virtual bool synchronize(std::string &error);

  /// Alignment of the workspace arena, in bytes.
  static constexpr uint64_t kWorkspaceAlignment = 256;

  /// The rank's workspace arena (dnnc_rt_workspace): at least `bytes` bytes
  /// of this backend's memory (host for `cpu`, device for `cuda`), aligned
  /// to kWorkspaceAlignment. Allocated on first use and reused by every
  /// later call (every function and micro-batch: a rank runs one step at a
  /// time); a larger request synchronizes, frees the arena and allocates
  /// one of the new size. Returns null and sets `error` on failure.
  void *workspace(uint64_t bytes, std::string &error);

  /// Size in bytes of the current workspace arena (0 when there is none).
  uint64_t workspaceBytes() const { return workspaceSize; }

  /// Frees the workspace arena, if any. Whoever ends the runs (Session's
  /// destructor, the backend's own destructor) calls it while the backend
  /// can still free memory.
  void releaseWorkspace();

private:
  /// The allocation holding the workspace arena.
  DeviceBuffer workspaceBuffer;
  /// Start of the arena: workspaceBuffer.data aligned up.
  void *workspaceData = nullptr;
  /// Usable bytes from workspaceData.
  uint64_t workspaceSize = 0;
};

/// Makes `backend` the one whose workspace dnnc_rt_workspace hands out on
/// the calling thread, for one scope: Session wraps every compute step in
/// one.
class ActiveBackend {
public:
  /// Activates `backend` on this thread.
  explicit ActiveBackend(Backend &backend);
  /// Restores the previously active backend of this thread.
  ~ActiveBackend();
  ActiveBackend(const ActiveBackend &) = delete;
  ActiveBackend &operator=(const ActiveBackend &) = delete;

private:
  /// The backend active before this scope (or null).
  Backend *previous;
};

/// The targets this build of the runtime can run ("cpu", and "cuda" when
/// built with DNNC_RUNTIME_WITH_CUDA).
std::vector<std::string> supportedTargets();

/// Creates the backend for `target` serving rank `world.rank`, or fails with
/// "plan.bin was built for target 'X'; this dnnc-run supports: cpu" (for
/// "cuda" without a device: "no CUDA device for rank N: ..."). Its
/// collectives run over `comm` (which must outlive the backend); without one
/// the backend is a world of one rank.
std::unique_ptr<Backend> createBackend(const std::string &target,
                                       const WorldInfo &world,
                                       std::string &error,
                                       Comm *comm = nullptr);

} // namespace dnnc::rt

#endif // DNNC_RUNTIME_BACKEND_H
