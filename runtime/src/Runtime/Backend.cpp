//===- Backend.cpp - Target backends of the runtime ------------*- C++ -*-===//
//
// The backend registry: which targets this build runs (`cuda` only when
// built with DNNC_RUNTIME_WITH_CUDA), and the backend-generic workspace arena
// behind the dnnc_rt_workspace kernel.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Runtime/Backend.h"
#include "dnnc/Runtime/CpuBackend.h"
#include "dnnc/Runtime/CudaBackend.h"
#include "dnnc/Runtime/Kernels.h"

#include <cstdio>
#include <cstdlib>

namespace dnnc::rt {

Backend::~Backend() = default;

bool Backend::synchronize(std::string &) { return true; }

bool Backend::fillZero(const DeviceBuffer &buffer, uint64_t bytes,
                       std::string &error) {
  std::vector<char> zeros(bytes, 0);
  return copyToDevice(buffer, zeros.data(), bytes, error);
}

void *Backend::workspace(uint64_t bytes, std::string &error) {
  if (workspaceData && bytes <= workspaceSize)
    return workspaceData;
  // Code still running on the device may use the old arena.
  if (workspaceData && !synchronize(error))
    return nullptr;
  releaseWorkspace();
  uint64_t size = plan::alignTo(bytes, kWorkspaceAlignment);
  // allocate() aligns to 64 bytes: room to align the start further.
  DeviceBuffer buffer;
  if (!allocate(size + kWorkspaceAlignment - plan::kAlignment, buffer, error))
    return nullptr;
  uintptr_t start = reinterpret_cast<uintptr_t>(buffer.data);
  start = (start + kWorkspaceAlignment - 1) & ~(kWorkspaceAlignment - 1);
  workspaceBuffer = buffer;
  workspaceData = reinterpret_cast<void *>(start);
  workspaceSize = size;
  return workspaceData;
}

void Backend::releaseWorkspace() {
  if (workspaceBuffer.data)
    deallocate(workspaceBuffer);
  workspaceBuffer = DeviceBuffer();
  workspaceData = nullptr;
  workspaceSize = 0;
}

/// The backend whose workspace dnnc_rt_workspace returns on this thread.
static Backend *&activeBackendSlot() {
  static thread_local Backend *slot = nullptr;
  return slot;
}

ActiveBackend::ActiveBackend(Backend &backend) : previous(activeBackendSlot()) {
  activeBackendSlot() = &backend;
}

ActiveBackend::~ActiveBackend() { activeBackendSlot() = previous; }

std::string Backend::loneRankError(uint32_t rank, const char *what,
                                   uint32_t peer) {
  return "rank " + std::to_string(rank) + " cannot " + what + " rank " +
         std::to_string(peer) +
         ": it runs in a world of one rank (launch with mpirun -np N)";
}

#if !DNNC_RUNTIME_WITH_CUDA
bool cudaCompiledIn() { return false; }

std::vector<std::string> cudaKernelNames() { return {}; }
#endif

std::vector<std::string> supportedTargets() {
  if (cudaCompiledIn())
    return {"cpu", "cuda"};
  return {"cpu"};
}

std::unique_ptr<Backend> createBackend(const std::string &target,
                                       const WorldInfo &world,
                                       std::string &error, Comm *comm) {
  if (target == "cpu")
    return std::make_unique<CpuBackend>(world, comm);
#if DNNC_RUNTIME_WITH_CUDA
  if (target == "cuda")
    return CudaBackend::create(world, comm, error);
#endif
  std::string list;
  for (const std::string &t : supportedTargets())
    list += (list.empty() ? "" : ", ") + t;
  error = "plan.bin was built for target '" + target +
          "'; this dnnc-run supports: " + list;
  return nullptr;
}

} // namespace dnnc::rt

extern "C" void *dnnc_rt_workspace(int64_t bytes) {
  using namespace dnnc::rt;
  Backend *backend = activeBackendSlot();
  std::string error;
  void *arena = nullptr;
  if (bytes < 0)
    error = "negative size";
  else if (!backend)
    error = "called outside a run of a backend";
  else
    arena = backend->workspace(static_cast<uint64_t>(bytes), error);
  if (arena)
    return arena;
  // The code has no error path here: it would use the null arena.
  std::fprintf(stderr,
               "dnnc-run: runtime kernel dnnc_rt_workspace(bytes=%lld): %s\n",
               static_cast<long long>(bytes), error.c_str());
  std::fflush(stderr);
  std::abort();
}
