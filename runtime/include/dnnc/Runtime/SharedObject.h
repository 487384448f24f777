//===- SharedObject.h - Loading code images from memory --------*- C++ -*-===//
//
// Loads an ELF shared object held in memory (a plan's RANK_CODE payload):
// through memfd_create + dlopen("/proc/self/fd/N"), or where that is not
// possible through a mkstemp file that is unlinked right after dlopen.
// Always RTLD_NOW | RTLD_LOCAL: every undefined symbol is resolved (against
// the executable, which exports the runtime kernels, and its libraries) at
// load time, and nothing the object defines leaks into other objects.
//
//===----------------------------------------------------------------------===//

#ifndef DNNC_RUNTIME_SHAREDOBJECT_H
#define DNNC_RUNTIME_SHAREDOBJECT_H

#include <string>
#include <string_view>

namespace dnnc::rt {

/// A dlopen()ed shared object; dlclose()d on destruction.
class SharedObject {
public:
  SharedObject() = default;
  SharedObject(const SharedObject &) = delete;
  SharedObject &operator=(const SharedObject &) = delete;
  ~SharedObject();

  /// Checks that `image` is an ELF shared object for this host (class,
  /// byte order, machine) and loads it. `label` names it in errors and in
  /// /proc/self/maps ("rank 0 code").
  bool load(std::string_view image, const std::string &label,
            std::string &error);

  /// The address of exported symbol `name`, or null.
  void *lookup(const std::string &name) const;

  /// True once load() succeeded.
  bool isLoaded() const { return handle != nullptr; }

private:
  void *handle = nullptr;
};

} // namespace dnnc::rt

#endif // DNNC_RUNTIME_SHAREDOBJECT_H
