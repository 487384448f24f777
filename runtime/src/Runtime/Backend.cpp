//===- Backend.cpp - Target backends of the runtime ------------*- C++ -*-===//
//
// The backend registry: which targets this build runs (`cuda` only when
// built with DNNC_RUNTIME_WITH_CUDA).
//
//===----------------------------------------------------------------------===//

#include "dnnc/Runtime/Backend.h"
#include "dnnc/Runtime/CpuBackend.h"
#include "dnnc/Runtime/CudaBackend.h"

namespace dnnc::rt {

Backend::~Backend() = default;

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
