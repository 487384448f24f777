//===- GlooCollectives.cpp - Collective kernels over Gloo ------*- C++ -*-===//
//
// The data movement of the cpu collective kernels on a Gloo context
// (GlooCollectives.h): gloo::allreduce (ring) with a reduce function per
// dtype and op, gloo::allgather, gloo::alltoall and gloo::broadcast, and
// the block reorderings around them. float16 and bfloat16 are widened to
// float32, reduced, divided (MEAN) and rounded once, as on MPI. A
// reduce-scatter is an allreduce of the whole input of which each member
// keeps its block (Gloo has no reduce-scatter of this form; PyTorch's Gloo
// backend does the same). Built only with DNNC_RUNTIME_WITH_GLOO.
//
//===----------------------------------------------------------------------===//

#include "GlooCollectives.h"
#include "Elements.h"
#include "dnnc/Runtime/Kernels.h"
#include "dnnc/Runtime/Plan.h"

#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/alltoall.h>
#include <gloo/broadcast.h>
#include <gloo/context.h>

#include <cstdio>
#include <cstring>
#include <vector>

namespace dnnc::rt {

using plan::DataType;

namespace {

/// "allreduce over the Gloo context of ranks 0 and 1 failed: <Gloo's
/// message>".
std::string failure(const char *what, const GlooGroup &group,
                    const std::exception &e) {
  std::string text = std::string(what) + " over " + group.describe() +
                     " failed: " + e.what();
  if (text.find("Timed out") != std::string::npos) {
    char limit[64];
    std::snprintf(limit, sizeof(limit), " (DNNC_GLOO_TIMEOUT_S=%g)",
                  double(group.timeout.count()) / 1000);
    text += limit;
  }
  return text;
}

/// The element-wise reductions of T, as Gloo reduce functions (c = a op b;
/// c may be a or b).
template <typename T> struct Reduce {
  static void sum(void *c, const void *a, const void *b, size_t n) {
    T *z = static_cast<T *>(c);
    const T *x = static_cast<const T *>(a), *y = static_cast<const T *>(b);
    for (size_t i = 0; i < n; ++i)
      z[i] = T(x[i] + y[i]);
  }
  static void prod(void *c, const void *a, const void *b, size_t n) {
    T *z = static_cast<T *>(c);
    const T *x = static_cast<const T *>(a), *y = static_cast<const T *>(b);
    for (size_t i = 0; i < n; ++i)
      z[i] = T(x[i] * y[i]);
  }
  static void max(void *c, const void *a, const void *b, size_t n) {
    T *z = static_cast<T *>(c);
    const T *x = static_cast<const T *>(a), *y = static_cast<const T *>(b);
    for (size_t i = 0; i < n; ++i)
      z[i] = x[i] < y[i] ? y[i] : x[i];
  }
  static void min(void *c, const void *a, const void *b, size_t n) {
    T *z = static_cast<T *>(c);
    const T *x = static_cast<const T *>(a), *y = static_cast<const T *>(b);
    for (size_t i = 0; i < n; ++i)
      z[i] = y[i] < x[i] ? y[i] : x[i];
  }
};

/// Allreduces `count` elements of T at `data` in place with `op` (MEAN:
/// sum, then divided by the group size, truncating integers toward zero).
template <typename T>
bool allreduceAs(GlooGroup &group, void *data, uint64_t count, int32_t op,
                 std::string &error) {
  gloo::AllreduceOptions::Func fn;
  switch (op) {
  case DNNC_RT_REDUCE_MAX:
    fn = &Reduce<T>::max;
    break;
  case DNNC_RT_REDUCE_MIN:
    fn = &Reduce<T>::min;
    break;
  case DNNC_RT_REDUCE_PROD:
    fn = &Reduce<T>::prod;
    break;
  default: // SUM and MEAN.
    fn = &Reduce<T>::sum;
    break;
  }
  T *p = static_cast<T *>(data);
  try {
    gloo::AllreduceOptions options(group.context);
    options.setOutput(p, size_t(count));
    options.setReduceFunction(fn);
    options.setTag(group.nextTag++);
    options.setTimeout(group.timeout);
    gloo::allreduce(options);
  } catch (const std::exception &e) {
    error = failure("allreduce", group, e);
    return false;
  }
  if (op == DNNC_RT_REDUCE_MEAN) {
    T by = T(group.members.size());
    for (uint64_t i = 0; i < count; ++i)
      p[i] = T(p[i] / by);
  }
  return true;
}

/// Allreduces `count` elements of the reducible `dtype` (FLOAT for widened
/// float16/bfloat16; BOOL as uint8) at `data` in place with `op`.
bool allreduceInPlace(GlooGroup &group, int32_t dtype, void *data,
                      uint64_t count, int32_t op, std::string &error) {
  switch (DataType(dtype)) {
  case DataType::Float:
    return allreduceAs<float>(group, data, count, op, error);
  case DataType::Double:
    return allreduceAs<double>(group, data, count, op, error);
  case DataType::Int8:
    return allreduceAs<int8_t>(group, data, count, op, error);
  case DataType::UInt8:
  case DataType::Bool:
    return allreduceAs<uint8_t>(group, data, count, op, error);
  case DataType::Int16:
    return allreduceAs<int16_t>(group, data, count, op, error);
  case DataType::UInt16:
    return allreduceAs<uint16_t>(group, data, count, op, error);
  case DataType::Int32:
    return allreduceAs<int32_t>(group, data, count, op, error);
  case DataType::UInt32:
    return allreduceAs<uint32_t>(group, data, count, op, error);
  case DataType::Int64:
    return allreduceAs<int64_t>(group, data, count, op, error);
  case DataType::UInt64:
    return allreduceAs<uint64_t>(group, data, count, op, error);
  default:
    error = "internal error: dtype " + plan::dtypeName(dtype) +
            " reaches the Gloo allreduce";
    return false;
  }
}

/// True for the dtypes reduced in float32.
bool isWide(int32_t dtype) {
  return DataType(dtype) == DataType::Float16 ||
         DataType(dtype) == DataType::BFloat16;
}

/// `count` float16/bfloat16 values at `in` as float32.
std::vector<float> widen(int32_t dtype, const void *in, uint64_t count) {
  std::vector<float> wide(count);
  for (uint64_t i = 0; i < count; ++i)
    wide[i] = DataType(dtype) == DataType::Float16
                  ? elements::F16::load(
                        static_cast<const elements::F16::Storage *>(in),
                        int64_t(i))
                  : elements::BF16::load(
                        static_cast<const elements::BF16::Storage *>(in),
                        int64_t(i));
  return wide;
}

/// Rounds `count` float32 values to float16/bfloat16 at `out`.
void narrow(int32_t dtype, const float *wide, void *out, uint64_t count) {
  for (uint64_t i = 0; i < count; ++i) {
    if (DataType(dtype) == DataType::Float16)
      elements::F16::store(static_cast<elements::F16::Storage *>(out),
                           int64_t(i), wide[i]);
    else
      elements::BF16::store(static_cast<elements::BF16::Storage *>(out),
                            int64_t(i), wide[i]);
  }
}

/// Copies `src`, viewed as [a, b] blocks of `blockBytes`, into `dst` viewed
/// as [b, a] (the collectives exchange one contiguous block per member).
void swapBlockAxes(char *dst, const char *src, uint64_t a, uint64_t b,
                   uint64_t blockBytes) {
  for (uint64_t i = 0; i < a; ++i)
    for (uint64_t j = 0; j < b; ++j)
      std::memcpy(dst + (j * a + i) * blockBytes,
                  src + (i * b + j) * blockBytes, blockBytes);
}

/// True when the byte ranges [a, a+an) and [b, b+bn) share a byte.
bool overlaps(const void *a, uint64_t an, const void *b, uint64_t bn) {
  uintptr_t x = reinterpret_cast<uintptr_t>(a),
            y = reinterpret_cast<uintptr_t>(b);
  return an && bn && x < y + bn && y < x + an;
}

} // namespace

bool glooAllReduce(GlooGroup &group, int32_t dtype, int32_t op,
                   const void *in, void *out, uint64_t count,
                   std::string &error) {
  if (isWide(dtype)) {
    std::vector<float> wide = widen(dtype, in, count);
    if (!allreduceInPlace(group, int32_t(DataType::Float), wide.data(), count,
                          op, error))
      return false;
    narrow(dtype, wide.data(), out, count);
    return true;
  }
  // Reduce in place in `out`, a copy of `in` (memmove: they may overlap).
  if (in != out)
    std::memmove(out, in, count * uint64_t(plan::dtypeByteSize(dtype)));
  return allreduceInPlace(group, dtype, out, count, op, error);
}

bool glooReduceScatter(GlooGroup &group, int32_t dtype, int32_t op,
                       const void *in, void *out, uint64_t outer,
                       uint64_t chunk, std::string &error) {
  const uint64_t G = group.members.size(), index = group.context->rank;
  const uint64_t total = outer * G * chunk, n = outer * chunk;
  const bool wide = isWide(dtype);
  const uint64_t es = wide ? 4 : uint64_t(plan::dtypeByteSize(dtype));
  // The whole input, reduced in place (a copy: `in` stays unchanged and may
  // overlap `out`).
  std::vector<char> reduced(total * es);
  if (wide) {
    std::vector<float> w = widen(dtype, in, total);
    std::memcpy(reduced.data(), w.data(), total * es);
  } else {
    std::memcpy(reduced.data(), in, total * es);
  }
  if (!allreduceInPlace(group, wide ? int32_t(DataType::Float) : dtype,
                        reduced.data(), total, op, error))
    return false;
  // Block `index` of every row: [outer, G, chunk] -> [outer, chunk].
  std::vector<char> block(n * es);
  for (uint64_t o = 0; o < outer; ++o)
    std::memcpy(block.data() + o * chunk * es,
                reduced.data() + (o * G + index) * chunk * es, chunk * es);
  if (wide)
    narrow(dtype, reinterpret_cast<const float *>(block.data()), out, n);
  else
    std::memcpy(out, block.data(), n * es);
  return true;
}

bool glooAllGather(GlooGroup &group, uint64_t elementSize, const void *in,
                   void *out, uint64_t outer, uint64_t chunk,
                   std::string &error) {
  const uint64_t G = group.members.size(), index = group.context->rank;
  const uint64_t bytes = outer * chunk * elementSize, total = G * bytes;
  // outer == 1: the gathered blocks are already out's layout.
  std::vector<char> staging(outer == 1 ? 0 : total);
  char *gathered = outer == 1 ? static_cast<char *>(out) : staging.data();
  // Gloo gathers in place: this member's block first goes to its position.
  std::memmove(gathered + index * bytes, in, bytes);
  try {
    gloo::AllgatherOptions options(group.context);
    options.setOutput(reinterpret_cast<uint8_t *>(gathered), size_t(total));
    options.setTag(group.nextTag++);
    options.setTimeout(group.timeout);
    gloo::allgather(options);
  } catch (const std::exception &e) {
    error = failure("allgather", group, e);
    return false;
  }
  if (outer > 1) // staging [G, outer, chunk] -> out [outer, G, chunk].
    swapBlockAxes(static_cast<char *>(out), staging.data(), G, outer,
                  chunk * elementSize);
  return true;
}

bool glooAllToAll(GlooGroup &group, uint64_t elementSize, const void *in,
                  void *out, uint64_t outer, uint64_t splitChunk,
                  uint64_t inner, std::string &error) {
  const uint64_t G = group.members.size(), n = outer * splitChunk;
  const uint64_t totalBytes = G * n * elementSize;
  const char *send = static_cast<const char *>(in);
  std::vector<char> packed;
  if (outer > 1 || overlaps(in, totalBytes, out, totalBytes)) {
    // in [outer, G, splitChunk] -> [G, outer, splitChunk] (Gloo sends block
    // j of its input to member j; it reads the input while it writes out).
    packed.resize(totalBytes);
    swapBlockAxes(packed.data(), send, outer, G, splitChunk * elementSize);
    send = packed.data();
  }
  const uint64_t rows = n / inner; // X in the contract.
  std::vector<char> staging(rows == 1 ? 0 : totalBytes);
  char *receive = rows == 1 ? static_cast<char *>(out) : staging.data();
  try {
    gloo::AlltoallOptions options(group.context);
    options.setInput(reinterpret_cast<uint8_t *>(const_cast<char *>(send)),
                     size_t(totalBytes));
    options.setOutput(reinterpret_cast<uint8_t *>(receive),
                      size_t(totalBytes));
    options.setTag(group.nextTag++);
    options.setTimeout(group.timeout);
    gloo::alltoall(options);
  } catch (const std::exception &e) {
    error = failure("alltoall", group, e);
    return false;
  }
  if (rows > 1) // staging [G, X, inner] -> out [X, G, inner].
    swapBlockAxes(static_cast<char *>(out), staging.data(), G, rows,
                  inner * elementSize);
  return true;
}

bool glooBroadcast(GlooGroup &group, uint64_t elementSize, void *buf,
                   uint64_t count, uint32_t root, std::string &error) {
  try {
    gloo::BroadcastOptions options(group.context);
    options.setOutput(static_cast<uint8_t *>(buf),
                      size_t(count * elementSize));
    options.setRoot(int(root));
    options.setTag(group.nextTag++);
    options.setTimeout(group.timeout);
    gloo::broadcast(options);
  } catch (const std::exception &e) {
    error = failure("broadcast", group, e);
    return false;
  }
  return true;
}

} // namespace dnnc::rt
