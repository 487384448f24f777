//===- FileUtil.cpp - All-or-nothing file output ---------------*- C++ -*-===//
//
// AtomicFile (temporary file + rename) and bounded whole-file reads.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Runtime/FileUtil.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace dnnc::plan {

static std::string errnoText() { return std::strerror(errno); }

AtomicFile::~AtomicFile() { discard(); }

bool AtomicFile::open(const std::string &path, std::string &error) {
  discard();
  finalPath = path;
  committed = false;
  std::string pattern = path + ".tmp-XXXXXX";
  std::vector<char> name(pattern.begin(), pattern.end());
  name.push_back('\0');
  fd = ::mkstemp(name.data());
  if (fd < 0) {
    error = "cannot create '" + pattern + "': " + errnoText();
    return false;
  }
  tempPath = name.data();
  // mkstemp creates 0600; plans and outputs are ordinary data files.
  (void)::fchmod(fd, 0644);
  return true;
}

bool AtomicFile::write(const void *data, size_t size, std::string &error) {
  if (fd < 0) {
    error = "internal error: write to a closed file '" + finalPath + "'";
    return false;
  }
  const char *p = static_cast<const char *>(data);
  while (size > 0) {
    ssize_t n = ::write(fd, p, size);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      error = "cannot write '" + tempPath + "': " + errnoText();
      return false;
    }
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

bool AtomicFile::close(std::string &error) {
  if (fd < 0) {
    if (tempPath.empty() && !committed) {
      error = "internal error: close of an unopened file '" + finalPath + "'";
      return false;
    }
    return true;
  }
  int result = ::close(fd);
  fd = -1;
  if (result != 0) {
    error = "cannot write '" + tempPath + "': " + errnoText();
    return false;
  }
  return true;
}

bool AtomicFile::commit(std::string &error) {
  if (committed)
    return true;
  if (tempPath.empty()) {
    error = "internal error: commit of an unopened file '" + finalPath + "'";
    return false;
  }
  if (!close(error))
    return false;
  if (::rename(tempPath.c_str(), finalPath.c_str()) != 0) {
    error = "cannot rename '" + tempPath + "' to '" + finalPath +
            "': " + errnoText();
    return false;
  }
  tempPath.clear();
  committed = true;
  return true;
}

void AtomicFile::discard() {
  if (fd >= 0) {
    ::close(fd);
    fd = -1;
  }
  if (!committed && !tempPath.empty())
    ::unlink(tempPath.c_str());
  tempPath.clear();
}

bool readWholeFile(const std::string &path, std::string &bytes,
                   uint64_t maxBytes, std::string &error) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    error = "cannot open '" + path + "': " + errnoText();
    return false;
  }
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    error = "'" + path + "' is not a regular file";
    ::close(fd);
    return false;
  }
  uint64_t size = static_cast<uint64_t>(st.st_size);
  if (size > maxBytes) {
    error = "'" + path + "' is too large (" + std::to_string(size) +
            " bytes; at most " + std::to_string(maxBytes) + ")";
    ::close(fd);
    return false;
  }
  bytes.assign(static_cast<size_t>(size), '\0');
  size_t done = 0;
  while (done < size) {
    ssize_t n = ::read(fd, &bytes[done], size - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      error = "cannot read '" + path + "': " +
              (n < 0 ? errnoText() : std::string("unexpected end of file"));
      ::close(fd);
      return false;
    }
    done += static_cast<size_t>(n);
  }
  ::close(fd);
  return true;
}

} // namespace dnnc::plan
