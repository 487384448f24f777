//===- KernelErrors.h - Errors raised inside runtime kernels ---*- C++ -*-===//
//
// Private to the runtime. The kernels of Kernels.h have a C ABI with no error
// channel; they record misuse (negative sizes, null pointers) here, and the
// backend turns it into a run error once the entry returns.
//
//===----------------------------------------------------------------------===//

#ifndef DNNC_SRC_RUNTIME_KERNELERRORS_H
#define DNNC_SRC_RUNTIME_KERNELERRORS_H

#include <string>

namespace dnnc::rt {

/// Records `message` unless an error is already pending (any thread).
void setKernelError(const std::string &message);

/// Moves the pending kernel error into `message` and clears it; returns
/// false when there is none.
bool takeKernelError(std::string &message);

/// Address of runtime kernel `name` as linked into this program, or null
/// when `name` is not a runtime kernel.
void *cpuKernelAddress(const std::string &name);

} // namespace dnnc::rt

#endif // DNNC_SRC_RUNTIME_KERNELERRORS_H
