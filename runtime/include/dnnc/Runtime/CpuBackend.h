//===- CpuBackend.h - The `cpu` target backend -----------------*- C++ -*-===//
//
// Runs rank code built for target `cpu`: an ELF shared object loaded with
// SharedObject, whose entry is called on host buffers. Its GEMMs go through
// the runtime kernels of Kernels.h (OpenBLAS).
//
//===----------------------------------------------------------------------===//

#ifndef DNNC_RUNTIME_CPUBACKEND_H
#define DNNC_RUNTIME_CPUBACKEND_H

#include "dnnc/Runtime/Backend.h"
#include "dnnc/Runtime/SharedObject.h"

namespace dnnc::rt {

/// The `cpu` backend: device memory is 64-byte aligned host memory.
class CpuBackend final : public Backend {
public:
  /// A backend for rank `world.rank`.
  explicit CpuBackend(const WorldInfo &world);
  ~CpuBackend() override;

  const char *target() const override { return "cpu"; }
  bool loadProgram(const plan::RankProgram &program,
                   std::string &error) override;
  bool allocate(uint64_t bytes, DeviceBuffer &buffer,
                std::string &error) override;
  void deallocate(DeviceBuffer &buffer) override;
  bool copyToDevice(const DeviceBuffer &dst, const void *src, uint64_t bytes,
                    std::string &error) override;
  bool copyToHost(void *dst, const DeviceBuffer &src, uint64_t bytes,
                  std::string &error) override;
  bool run(const std::vector<void *> &buffers, std::string &error) override;

private:
  using EntryFn = void (*)(void **);

  WorldInfo world;
  SharedObject code;
  EntryFn entry = nullptr;
  std::string entryName;
};

/// The names of the runtime kernels the `cpu` backend provides to rank code
/// (Kernels.h), for diagnostics and docs.
std::vector<std::string> cpuKernelNames();

} // namespace dnnc::rt

#endif // DNNC_RUNTIME_CPUBACKEND_H
