//===- CpuBackend.h - The `cpu` target backend -----------------*- C++ -*-===//
//
// Runs rank code built for target `cpu`: an ELF shared object loaded with
// SharedObject, whose entry is called on host buffers. Its GEMMs go through
// the runtime kernels of Kernels.h (OpenBLAS), its collectives through the
// collective kernels (MPI, or copies for a world of one rank).
//
//===----------------------------------------------------------------------===//

#ifndef DNNC_RUNTIME_CPUBACKEND_H
#define DNNC_RUNTIME_CPUBACKEND_H

#include "dnnc/Runtime/Backend.h"
#include "dnnc/Runtime/SharedObject.h"

namespace dnnc::rt {

class CollectiveContext;

/// The `cpu` backend: device memory is 64-byte aligned host memory.
class CpuBackend final : public Backend {
public:
  /// A backend for rank `world.rank`; its collective kernels run over
  /// `comm` (null: a world of one rank).
  explicit CpuBackend(const WorldInfo &world, Comm *comm = nullptr);
  ~CpuBackend() override;

  const char *target() const override { return "cpu"; }
  bool connect(const plan::ModelInfo &model, std::string &error) override;
  bool loadProgram(const plan::RankProgram &program,
                   std::string &error) override;
  bool allocate(uint64_t bytes, DeviceBuffer &buffer,
                std::string &error) override;
  void deallocate(DeviceBuffer &buffer) override;
  bool fillZero(const DeviceBuffer &buffer, uint64_t bytes,
                std::string &error) override;
  bool copyToDevice(const DeviceBuffer &dst, const void *src, uint64_t bytes,
                    std::string &error) override;
  bool copyToHost(void *dst, const DeviceBuffer &src, uint64_t bytes,
                  std::string &error) override;
  bool run(uint32_t function, uint32_t microbatch,
           const std::vector<void *> &buffers,
           std::string &error) override;
  /// Starts an MPI_Isend through Comm::isend.
  bool send(const DeviceBuffer &buffer, uint64_t bytes, uint32_t peer,
            uint32_t tag, std::string &error) override;
  /// A blocking MPI_Recv through Comm::recvStage.
  bool recv(const DeviceBuffer &buffer, uint64_t bytes, uint32_t peer,
            uint32_t tag, std::string &error) override;
  bool waitSends(std::string &error) override;

private:
  /// The type of every function of the rank code.
  using EntryFn = void (*)(void **);

  /// The rank this backend serves and the world size.
  WorldInfo world;
  /// The processes of the launch; null for a world of one rank.
  Comm *comm;
  /// The mesh groups of the collective kernels (Collectives.h).
  std::unique_ptr<CollectiveContext> collectives;
  /// The loaded rank code.
  SharedObject code;
  /// The address of each function of the program, by function index.
  std::vector<EntryFn> functions;
  /// The symbol of each function, for diagnostics.
  std::vector<std::string> functionNames;
};

/// The names of the runtime kernels the `cpu` backend provides to rank code
/// (Kernels.h), for diagnostics and docs.
std::vector<std::string> cpuKernelNames();

} // namespace dnnc::rt

#endif // DNNC_RUNTIME_CPUBACKEND_H
