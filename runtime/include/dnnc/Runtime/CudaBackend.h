//===- CudaBackend.h - The `cuda` target backend ---------------*- C++ -*-===//
//
// Runs rank code built for target `cuda`: a host ELF shared object (loaded
// with SharedObject, like the cpu target's) whose functions launch kernels
// on the backend's stream (dnnc_rt_cuda_stream) and call the NCCL collective
// kernels of Kernels.h. Device memory is cudaMalloc'd; pipeline transfers go
// through ncclSend/ncclRecv. Built only with DNNC_RUNTIME_WITH_CUDA; this
// header carries no CUDA types, so it can be included everywhere.
//
//===----------------------------------------------------------------------===//

#ifndef DNNC_RUNTIME_CUDABACKEND_H
#define DNNC_RUNTIME_CUDABACKEND_H

#include "dnnc/Runtime/Backend.h"

namespace dnnc::rt {

/// True when this build of the runtime has the cuda backend (CMake option
/// DNNC_RUNTIME_WITH_CUDA).
bool cudaCompiledIn();

/// The `cuda` backend: one CUDA device, one stream, NCCL communicators.
class CudaBackend final : public Backend {
public:
  /// Selects the device of rank `world.rank` (the launcher's local rank
  /// modulo the number of devices) and creates the stream. Fails with "no
  /// CUDA device ..." on a machine without a usable device. Defined only in
  /// a build with CUDA (createBackend() is the portable way). Collectives run
  /// over `comm` (null: a world of one rank).
  static std::unique_ptr<CudaBackend> create(const WorldInfo &world, Comm *comm,
                                             std::string &error);
  /// Destroys the communicators (aborting them when an operation failed or
  /// timed out), frees the stream and unloads the code.
  ~CudaBackend() override;

  const char *target() const override { return "cuda"; }
  /// Checks the world size and, for several ranks, creates the NCCL
  /// communicators of pipeline transfers (collective over all ranks; the
  /// unique ids are broadcast over MPI). Mesh-group communicators are created
  /// when a collective kernel first names their `axesMask`.
  bool connect(const plan::ModelInfo &model, std::string &error) override;
  bool loadProgram(const plan::RankProgram &program,
                   std::string &error) override;
  /// cudaMalloc (256-byte aligned) and a memset to zero.
  bool allocate(uint64_t bytes, DeviceBuffer &buffer,
                std::string &error) override;
  void deallocate(DeviceBuffer &buffer) override;
  /// A copy on the stream, then a synchronisation.
  bool fillZero(const DeviceBuffer &buffer, uint64_t bytes,
                std::string &error) override;
  bool copyToDevice(const DeviceBuffer &dst, const void *src, uint64_t bytes,
                    std::string &error) override;
  /// A copy on the stream, then a synchronisation.
  bool copyToHost(void *dst, const DeviceBuffer &src, uint64_t bytes,
                  std::string &error) override;
  /// Calls the entry with device addresses, then waits for the stream (at
  /// most DNNC_NCCL_TIMEOUT_S seconds while collectives are pending).
  bool run(uint32_t function, uint32_t microbatch,
           const std::vector<void *> &buffers, std::string &error) override;
  /// Enqueues an ncclSend after the work already on the stream, on the
  /// stream of its direction (toward higher or lower ranks), and returns.
  bool send(const DeviceBuffer &buffer, uint64_t bytes, uint32_t peer,
            uint32_t tag, std::string &error) override;
  /// An ncclRecv, waited for with the timeout.
  bool recv(const DeviceBuffer &buffer, uint64_t bytes, uint32_t peer,
            uint32_t tag, std::string &error) override;
  bool waitSends(std::string &error) override;
  /// Waits (bounded by DNNC_NCCL_TIMEOUT_S) for the work queued on the
  /// rank's stream.
  bool synchronize(std::string &error) override;

  /// The CUDA and NCCL state (src/Runtime/CudaState.h).
  struct State;

private:
  CudaBackend();

  /// Everything that names a CUDA or NCCL type.
  std::unique_ptr<State> state;
};

/// The names of the runtime kernels the `cuda` backend provides to rank
/// code in addition to the cpu ones (Kernels.h); empty without CUDA.
std::vector<std::string> cudaKernelNames();

} // namespace dnnc::rt

#endif // DNNC_RUNTIME_CUDABACKEND_H
