//===- Backend.cpp - Target backends of the runtime ------------*- C++ -*-===//
//
// The backend registry: which targets this build runs.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Runtime/Backend.h"
#include "dnnc/Runtime/CpuBackend.h"

namespace dnnc::rt {

Backend::~Backend() = default;

std::vector<std::string> supportedTargets() { return {"cpu"}; }

std::unique_ptr<Backend> createBackend(const std::string &target,
                                       const WorldInfo &world,
                                       std::string &error, Comm *comm) {
  if (target == "cpu")
    return std::make_unique<CpuBackend>(world, comm);
  std::string list;
  for (const std::string &t : supportedTargets())
    list += (list.empty() ? "" : ", ") + t;
  error = "plan.bin was built for target '" + target +
          "'; this dnnc-run supports: " + list;
  return nullptr;
}

} // namespace dnnc::rt
