//===- CpuBackend.cpp - The `cpu` target backend ---------------*- C++ -*-===//
//
// Host memory, a dlopen()ed ELF shared object, a direct call of its entry.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Runtime/CpuBackend.h"
#include "Collectives.h"
#include "KernelErrors.h"

#include <cstdlib>
#include <cstring>
#include <dlfcn.h>

namespace dnnc::rt {

CpuBackend::CpuBackend(const WorldInfo &world, Comm *comm)
    : world(world), comm(comm) {}

// Unloads the code before the communicators go (member order).
CpuBackend::~CpuBackend() { releaseWorkspace(); }

bool CpuBackend::connect(const plan::ModelInfo &model, std::string &error) {
  collectives = CollectiveContext::create(comm, model, error);
  return collectives != nullptr;
}

/// Explains a load failure that names a missing `dnnc_rt_` symbol.
static std::string explainMissingKernel(const std::string &message) {
  static const char marker[] = "undefined symbol: ";
  size_t at = message.find(marker);
  if (at == std::string::npos)
    return "";
  std::string symbol = message.substr(at + sizeof(marker) - 1);
  size_t end = symbol.find_first_of(" \t,;(");
  if (end != std::string::npos)
    symbol.erase(end);
  if (symbol.compare(0, 8, "dnnc_rt_") != 0)
    return "";
  if (cpuKernelAddress(symbol) && !::dlsym(RTLD_DEFAULT, symbol.c_str()))
    return " (this program does not export its runtime kernels: link it "
           "with -rdynamic, CMake ENABLE_EXPORTS)";
  std::string list;
  for (const std::string &name : cpuKernelNames())
    list += (list.empty() ? "" : ", ") + name;
  return " (runtime kernels provided: " + list + ")";
}

bool CpuBackend::loadProgram(const plan::RankProgram &program,
                             std::string &error) {
  std::string label = "the code of rank " + std::to_string(program.rank);
  if (!code.load(program.code, label, error)) {
    error += explainMissingKernel(error);
    return false;
  }
  functions.clear();
  functionNames.clear();
  for (const plan::FunctionDesc &f : program.functions) {
    EntryFn fn = reinterpret_cast<EntryFn>(code.lookup(f.symbol));
    if (!fn) {
      error = label + " does not export the symbol '" + f.symbol +
              "' of function " + std::to_string(functions.size());
      functions.clear();
      functionNames.clear();
      return false;
    }
    functions.push_back(fn);
    functionNames.push_back(f.symbol);
  }
  return true;
}

bool CpuBackend::allocate(uint64_t bytes, DeviceBuffer &buffer,
                          std::string &error) {
  // aligned_alloc wants a multiple of the alignment; never ask for 0.
  uint64_t rounded = plan::alignTo(bytes ? bytes : 1, plan::kAlignment);
  void *p = rounded <= plan::kMaxTensorBytes
                ? std::aligned_alloc(plan::kAlignment, rounded)
                : nullptr;
  if (!p) {
    error = "out of memory allocating " + std::to_string(bytes) + " bytes";
    return false;
  }
  std::memset(p, 0, rounded);
  buffer.data = p;
  buffer.bytes = bytes;
  return true;
}

void CpuBackend::deallocate(DeviceBuffer &buffer) {
  std::free(buffer.data);
  buffer = DeviceBuffer();
}

bool CpuBackend::fillZero(const DeviceBuffer &buffer, uint64_t bytes,
                          std::string &error) {
  if (bytes > buffer.bytes) {
    error = "internal error: zeroing " + std::to_string(bytes) +
            " bytes of a buffer of " + std::to_string(buffer.bytes);
    return false;
  }
  if (bytes)
    std::memset(buffer.data, 0, bytes);
  return true;
}

bool CpuBackend::copyToDevice(const DeviceBuffer &dst, const void *src,
                              uint64_t bytes, std::string &error) {
  if (bytes > dst.bytes) {
    error = "internal error: copy of " + std::to_string(bytes) +
            " bytes into a buffer of " + std::to_string(dst.bytes);
    return false;
  }
  if (bytes)
    std::memcpy(dst.data, src, bytes);
  return true;
}

bool CpuBackend::copyToHost(void *dst, const DeviceBuffer &src, uint64_t bytes,
                            std::string &error) {
  if (bytes > src.bytes) {
    error = "internal error: copy of " + std::to_string(bytes) +
            " bytes from a buffer of " + std::to_string(src.bytes);
    return false;
  }
  if (bytes)
    std::memcpy(dst, src.data, bytes);
  return true;
}

bool CpuBackend::run(uint32_t function, uint32_t microbatch,
                     const std::vector<void *> &buffers, std::string &error) {
  if (function >= functions.size()) {
    error = "internal error: run of function " + std::to_string(function) +
            " of " + std::to_string(functions.size()) + " loaded";
    return false;
  }
  // The entry gets its own copy of the pointer array.
  std::vector<void *> args(buffers);
  args.push_back(nullptr);
  std::string discarded;
  takeKernelError(discarded);
  {
    ActiveCollectives active(collectives.get());
    if (collectives)
      collectives->microbatch = microbatch;
    functions[function](args.data());
  }
  std::string kernelError;
  if (takeKernelError(kernelError)) {
    error = kernelError; // The Session names the rank and the step.
    return false;
  }
  return true;
}

bool CpuBackend::send(const DeviceBuffer &buffer, uint64_t bytes, uint32_t peer,
                      uint32_t tag, std::string &error) {
  if (!comm || comm->size() < 2) {
    error = loneRankError(world.rank, "send to", peer);
    return false;
  }
  if (bytes > buffer.bytes) {
    error = "internal error: send of " + std::to_string(bytes) +
            " bytes from a buffer of " + std::to_string(buffer.bytes);
    return false;
  }
  return comm->isend(buffer.data, bytes, peer, int(tag), error);
}

bool CpuBackend::recv(const DeviceBuffer &buffer, uint64_t bytes, uint32_t peer,
                      uint32_t tag, std::string &error) {
  if (!comm || comm->size() < 2) {
    error = loneRankError(world.rank, "receive from", peer);
    return false;
  }
  if (bytes > buffer.bytes) {
    error = "internal error: receive of " + std::to_string(bytes) +
            " bytes into a buffer of " + std::to_string(buffer.bytes);
    return false;
  }
  return comm->recvStage(buffer.data, bytes, peer, int(tag), error);
}

bool CpuBackend::waitSends(std::string &error) {
  return !comm || comm->waitAll(error);
}

} // namespace dnnc::rt
