//===- KernelCall.h - One call of a communicating kernel -------*- C++ -*-===//
//
// Private to the runtime: what every collective and point-to-point kernel of
// the cpu backend (Collectives.cpp) and every kernel of the cuda backend
// (CudaNccl.cpp, CudaGemm.cpp) does with its call: name it and its
// arguments in the error it reports, and skip its communication once an
// earlier kernel of the run failed (the rank's communication then no longer
// matches its peers').
//
//===----------------------------------------------------------------------===//

#ifndef DNNC_SRC_RUNTIME_KERNELCALL_H
#define DNNC_SRC_RUNTIME_KERNELCALL_H

#include "Collectives.h"

#include <functional>
#include <initializer_list>
#include <string>

namespace dnnc::rt {

/// The collective context of the entry running now (ActiveCollectives);
/// null outside a run and for a process alone without a mesh.
CollectiveContext *activeCollectiveContext();

/// One kernel call: its name and arguments for messages, and the mesh
/// context of the run.
class KernelCall {
public:
  /// A call in the active collective context.
  KernelCall(const char *name, std::function<std::string()> arguments)
      : KernelCall(name, std::move(arguments), activeCollectiveContext()) {}
  /// A call in `context` (null: none).
  KernelCall(const char *name, std::function<std::string()> arguments,
             CollectiveContext *context)
      : name(name), arguments(std::move(arguments)), context(context) {}

  /// Records `why` as the run's kernel error; this rank's communication no
  /// longer matches its peers'. Returns false.
  bool fail(const std::string &why);

  /// True when an earlier kernel of this run was skipped: skip this one.
  bool skipped() const { return context && context->diverged; }

  /// The kernel's name.
  const char *name;
  /// The call's arguments as text ("axesMask=1, dtype=1, ...").
  std::function<std::string()> arguments;
  /// The mesh of the run; null for none.
  CollectiveContext *context;
};

/// Sets `elements` to the product of `factors`, or fails `call` when one is
/// negative or the product of `elementSize`-byte elements exceeds the
/// largest tensor.
bool checkedProduct(KernelCall &call, std::initializer_list<int64_t> factors,
                    uint64_t elementSize, uint64_t &elements);

} // namespace dnnc::rt

#endif // DNNC_SRC_RUNTIME_KERNELCALL_H
