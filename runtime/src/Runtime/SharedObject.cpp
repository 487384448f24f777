//===- SharedObject.cpp - Loading code images from memory ------*- C++ -*-===//
//
// memfd_create + dlopen("/proc/self/fd/N"), with a fallback to an unlinked
// mkstemp file, after checking the ELF header so that a wrong or corrupt
// image is a clear error rather than whatever the dynamic loader says.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Runtime/SharedObject.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace dnnc::rt {

/// The ELF machine of this host, or EM_NONE when not known here.
static constexpr uint16_t hostMachine() {
#if defined(__x86_64__)
  return EM_X86_64;
#elif defined(__aarch64__)
  return EM_AARCH64;
#elif defined(__powerpc64__)
  return EM_PPC64;
#else
  return EM_NONE;
#endif
}

/// Checks that `image` is a 64-bit little-endian ELF shared object for this
/// host's machine.
static bool checkElf(std::string_view image, const std::string &label,
                     std::string &error) {
  if (image.size() < sizeof(Elf64_Ehdr) ||
      std::memcmp(image.data(), ELFMAG, SELFMAG) != 0) {
    error = label + " is not an ELF shared object";
    return false;
  }
  Elf64_Ehdr header;
  std::memcpy(&header, image.data(), sizeof(header));
  if (header.e_ident[EI_CLASS] != ELFCLASS64 ||
      header.e_ident[EI_DATA] != ELFDATA2LSB) {
    error = label + " is not a 64-bit little-endian ELF object";
    return false;
  }
  if (header.e_type != ET_DYN) {
    error = label + " is an ELF object but not a shared object (e_type " +
            std::to_string(header.e_type) + ")";
    return false;
  }
  if (hostMachine() != EM_NONE && header.e_machine != hostMachine()) {
    error = label + " was built for ELF machine " +
            std::to_string(header.e_machine) + ", this host is " +
            std::to_string(hostMachine());
    return false;
  }
  return true;
}

static bool writeAll(int fd, std::string_view bytes) {
  const char *p = bytes.data();
  size_t left = bytes.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    p += n;
    left -= static_cast<size_t>(n);
  }
  return true;
}

/// dlopen()s `path`; on failure sets `error` to dlerror() without the
/// (meaningless, temporary) path prefix.
static void *openPath(const std::string &path, std::string &error) {
  void *handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char *message = ::dlerror();
    error = message ? message : "dlopen failed";
    if (error.compare(0, path.size() + 2, path + ": ") == 0)
      error.erase(0, path.size() + 2);
  }
  return handle;
}

SharedObject::~SharedObject() {
  if (handle)
    ::dlclose(handle);
}

bool SharedObject::load(std::string_view image, const std::string &label,
                        std::string &error) {
  if (handle) {
    error = "internal error: " + label + " loaded twice";
    return false;
  }
  if (!checkElf(image, label, error))
    return false;

  std::string loadError;
  std::string memfdName = "dnnc " + label.substr(0, 200);
  int fd = ::memfd_create(memfdName.c_str(), MFD_CLOEXEC);
  if (fd >= 0) {
    std::string path = "/proc/self/fd/" + std::to_string(fd);
    struct stat st;
    bool usable = writeAll(fd, image) && ::stat(path.c_str(), &st) == 0;
    if (usable)
      handle = openPath(path, loadError);
    ::close(fd);
    if (handle)
      return true;
    if (usable) {
      // /proc works: the image itself failed to load.
      error = "cannot load " + label + ": " + loadError;
      return false;
    }
  }

  // No memfd_create or no /proc: a temporary file, unlinked once loaded.
  const char *tmp = std::getenv("TMPDIR");
  std::string pattern =
      std::string(tmp && *tmp ? tmp : "/tmp") + "/dnnc-code-XXXXXX";
  std::vector<char> name(pattern.begin(), pattern.end());
  name.push_back('\0');
  fd = ::mkstemp(name.data());
  if (fd < 0) {
    error = "cannot load " + label + ": cannot create '" + pattern +
            "': " + std::strerror(errno);
    return false;
  }
  bool written = writeAll(fd, image);
  ::close(fd);
  if (written)
    handle = openPath(name.data(), loadError);
  else
    loadError = std::string("cannot write '") + name.data() +
                "': " + std::strerror(errno);
  ::unlink(name.data());
  if (!handle) {
    error = "cannot load " + label + ": " + loadError;
    return false;
  }
  return true;
}

void *SharedObject::lookup(const std::string &name) const {
  if (!handle)
    return nullptr;
  void *address = ::dlsym(handle, name.c_str());
  if (!address)
    return nullptr;
  // dlsym also searches the object's dependencies (libc, ...): only accept
  // a symbol the object itself defines.
  Dl_info info;
  struct link_map *map = nullptr;
  if (::dladdr(address, &info) == 0 ||
      ::dlinfo(handle, RTLD_DI_LINKMAP, &map) != 0 || !map || !info.dli_fname ||
      !map->l_name || std::strcmp(info.dli_fname, map->l_name) != 0)
    return nullptr;
  return address;
}

} // namespace dnnc::rt
