//===- Wire.h - Little-endian encoding helpers for plan.bin ----*- C++ -*-===//
//
// Private to DNNCPlan: appends little-endian integers and length-prefixed
// strings to a byte string, and reads them back through a bounds-checked
// cursor that reports the first failure as a one-line error.
//
//===----------------------------------------------------------------------===//

#ifndef DNNC_SRC_PLAN_WIRE_H
#define DNNC_SRC_PLAN_WIRE_H

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>

namespace dnnc::plan::wire {

/// Loads a little-endian u32 from 4 bytes at `p`.
inline uint32_t loadU32(const char *p) {
  const unsigned char *u = reinterpret_cast<const unsigned char *>(p);
  return uint32_t(u[0]) | uint32_t(u[1]) << 8 | uint32_t(u[2]) << 16 |
         uint32_t(u[3]) << 24;
}

/// Loads a little-endian u64 from 8 bytes at `p`.
inline uint64_t loadU64(const char *p) {
  return uint64_t(loadU32(p)) | uint64_t(loadU32(p + 4)) << 32;
}

/// Stores `v` as 4 little-endian bytes at `p`.
inline void storeU32(char *p, uint32_t v) {
  for (int i = 0; i < 4; ++i)
    p[i] = static_cast<char>((v >> (8 * i)) & 0xff);
}

/// Stores `v` as 8 little-endian bytes at `p`.
inline void storeU64(char *p, uint64_t v) {
  for (int i = 0; i < 8; ++i)
    p[i] = static_cast<char>((v >> (8 * i)) & 0xff);
}

/// Appends little-endian values to a byte string.
class Writer {
public:
  /// Appends to `out`.
  explicit Writer(std::string &out) : out(out) {}
  /// Appends a u32.
  void u32(uint32_t v) {
    char b[4];
    storeU32(b, v);
    out.append(b, 4);
  }
  /// Appends a u64.
  void u64(uint64_t v) {
    char b[8];
    storeU64(b, v);
    out.append(b, 8);
  }
  /// Appends an i32 (two's complement).
  void i32(int32_t v) { u32(static_cast<uint32_t>(v)); }
  /// Appends an i64 (two's complement).
  void i64(int64_t v) { u64(static_cast<uint64_t>(v)); }
  /// Appends a u32 length and the bytes of `s`.
  void str(std::string_view s) {
    u32(static_cast<uint32_t>(s.size()));
    out.append(s.data(), s.size());
  }

private:
  std::string &out;
};

/// Reads little-endian values from a payload; every read is bounds-checked
/// and the first failure sets `error` (later reads then fail silently).
class Reader {
public:
  /// Reads `data`; `what` names the payload in errors.
  Reader(std::string_view data, std::string what, std::string &error)
      : data(data), what(std::move(what)), error(error) {}

  /// Bytes not read yet.
  uint64_t remaining() const { return data.size() - pos; }
  /// True while no read has failed.
  bool ok() const { return !failed; }

  /// Reads a u32.
  bool u32(uint32_t &v) {
    if (!need(4, "a u32"))
      return false;
    v = loadU32(data.data() + pos);
    pos += 4;
    return true;
  }
  /// Reads a u64.
  bool u64(uint64_t &v) {
    if (!need(8, "a u64"))
      return false;
    v = loadU64(data.data() + pos);
    pos += 8;
    return true;
  }
  /// Reads an i32.
  bool i32(int32_t &v) {
    uint32_t u = 0;
    if (!u32(u))
      return false;
    v = static_cast<int32_t>(u);
    return true;
  }
  /// Reads an i64.
  bool i64(int64_t &v) {
    uint64_t u = 0;
    if (!u64(u))
      return false;
    v = static_cast<int64_t>(u);
    return true;
  }
  /// Reads a string of at most `maxLength` bytes; `field` names it.
  bool str(std::string &s, uint32_t maxLength, const char *field) {
    uint32_t length = 0;
    if (!u32(length))
      return false;
    if (length > maxLength)
      return fail(std::string(field) + " length " + std::to_string(length) +
                  " exceeds the limit of " + std::to_string(maxLength));
    if (!need(length, field))
      return false;
    s.assign(data.data() + pos, length);
    pos += length;
    return true;
  }
  /// Checks that `count` records of at least `minRecordSize` bytes each fit
  /// in the rest of the payload (so a count never drives a huge
  /// allocation); `field` names the count.
  bool count(uint32_t count, uint64_t minRecordSize, const char *field) {
    if (failed)
      return false;
    if (uint64_t(count) * minRecordSize > remaining())
      return fail(std::string(field) + " " + std::to_string(count) +
                  " does not fit in the remaining " +
                  std::to_string(remaining()) + " bytes");
    return true;
  }
  /// Checks that the payload was consumed exactly.
  bool finish() {
    if (failed)
      return false;
    if (pos != data.size())
      return fail(std::to_string(data.size() - pos) +
                  " unexpected trailing bytes");
    return true;
  }
  /// Records a failure at the current position; returns false.
  bool fail(const std::string &message) {
    if (!failed)
      error = what + ": " + message + " (at payload byte " +
              std::to_string(pos) + ")";
    failed = true;
    return false;
  }

private:
  bool need(uint64_t n, const std::string &field) {
    if (failed)
      return false;
    if (n > remaining())
      return fail("truncated while reading " + field + " (" +
                  std::to_string(n) + " bytes needed, " +
                  std::to_string(remaining()) + " left)");
    return true;
  }

  std::string_view data;
  uint64_t pos = 0;
  std::string what;
  std::string &error;
  bool failed = false;
};

} // namespace dnnc::plan::wire

#endif // DNNC_SRC_PLAN_WIRE_H
