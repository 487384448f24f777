//===- FileUtil.h - All-or-nothing file output -----------------*- C++ -*-===//
//
// Files that appear complete or not at all: written under a temporary name in
// the destination directory and renamed over the destination on commit.
// Part of DNNCPlan (writePlan uses it); the runtime uses it for its outputs.
//
//===----------------------------------------------------------------------===//

#ifndef DNNC_RUNTIME_FILEUTIL_H
#define DNNC_RUNTIME_FILEUTIL_H

#include <cstddef>
#include <cstdint>
#include <string>

namespace dnnc::plan {

/// A file written to `<path>.tmp-XXXXXX` and renamed to `path` by commit().
/// Until then `path` is untouched; destroying an uncommitted AtomicFile
/// removes the temporary file.
class AtomicFile {
public:
  AtomicFile() = default;
  AtomicFile(const AtomicFile &) = delete;
  AtomicFile &operator=(const AtomicFile &) = delete;
  /// Removes the temporary file unless committed.
  ~AtomicFile();

  /// Creates the temporary file for `path` (mode 0644).
  bool open(const std::string &path, std::string &error);
  /// Appends `size` bytes.
  bool write(const void *data, size_t size, std::string &error);
  /// Flushes and closes the temporary file (commit() does it if needed);
  /// lets a caller finish several files before renaming any of them.
  bool close(std::string &error);
  /// Closes the temporary file and renames it to the final path.
  bool commit(std::string &error);
  /// Removes the temporary file (no-op once committed).
  void discard();
  /// The final path.
  const std::string &path() const { return finalPath; }

private:
  std::string finalPath;
  std::string tempPath;
  int fd = -1;
  bool committed = false;
};

/// Reads the whole regular file at `path` into `bytes`; fails (without
/// allocating) when it is larger than `maxBytes`. Errors name the file.
bool readWholeFile(const std::string &path, std::string &bytes,
                   uint64_t maxBytes, std::string &error);

} // namespace dnnc::plan

#endif // DNNC_RUNTIME_FILEUTIL_H
