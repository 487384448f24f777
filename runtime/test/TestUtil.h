//===- TestUtil.h - Helpers shared by the runtime unit tests ---*- C++ -*-===//
//
// Temporary directories, file helpers, small plans, and an independent
// plan.bin writer written from docs/plan-format.md that can also produce
// invalid-but-checksummed files for the reader's validation tests.
//
//===----------------------------------------------------------------------===//

#ifndef DNNC_RUNTIME_TEST_TESTUTIL_H
#define DNNC_RUNTIME_TEST_TESTUTIL_H

#include "dnnc/Runtime/HostTensor.h"
#include "dnnc/Runtime/Plan.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace dnnc::test {

/// A fresh directory under $TMPDIR (or /tmp), removed with its contents.
class TempDir {
public:
  TempDir() {
    const char *base = std::getenv("TMPDIR");
    std::string pattern =
        std::string(base && *base ? base : "/tmp") + "/dnnc-rt-test-XXXXXX";
    std::vector<char> name(pattern.begin(), pattern.end());
    name.push_back('\0');
    if (::mkdtemp(name.data()))
      dir = name.data();
  }
  ~TempDir() {
    std::error_code ec;
    if (!dir.empty())
      std::filesystem::remove_all(dir, ec);
  }
  /// The directory.
  const std::string &path() const { return dir; }
  /// `path()/name`.
  std::string file(const std::string &name) const { return dir + "/" + name; }
  /// Names of the entries of `sub` (relative to path()), sorted.
  std::vector<std::string> list(const std::string &sub = "") const {
    std::vector<std::string> names;
    std::error_code ec;
    for (const auto &e :
         std::filesystem::directory_iterator(sub.empty() ? dir : file(sub), ec))
      names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }

private:
  std::string dir;
};

/// The bytes of file `path` ("" when unreadable).
inline std::string readBytes(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

/// Writes `bytes` to `path`.
inline void writeBytes(const std::string &path, const std::string &bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

/// Path of a test shared object built from test/Inputs/<name>.c.
inline std::string testCodePath(const std::string &name) {
  return std::string(DNNC_TEST_CODE_DIR) + "/" + name + ".so";
}

/// A float32 HostTensor.
inline rt::HostTensor floatTensor(const std::string &name,
                                  std::vector<int64_t> shape,
                                  const std::vector<float> &values) {
  rt::HostTensor t;
  t.name = name;
  t.dtype = int32_t(plan::DataType::Float);
  t.shape = std::move(shape);
  t.data.assign(reinterpret_cast<const char *>(values.data()),
                values.size() * sizeof(float));
  return t;
}

/// The float values of a float32 HostTensor.
inline std::vector<float> floatValues(const rt::HostTensor &t) {
  std::vector<float> values(t.data.size() / sizeof(float));
  std::memcpy(values.data(), t.data.data(), values.size() * sizeof(float));
  return values;
}

/// A TensorDesc.
inline plan::TensorDesc desc(const std::string &name, plan::DataType dtype,
                             std::vector<int64_t> shape) {
  return plan::TensorDesc{name, int32_t(dtype), std::move(shape)};
}

/// A buffer for model input/output `index` with the global type `t`.
inline plan::BufferDesc ioBuffer(plan::BufferRole role, uint32_t index,
                                 const plan::TensorDesc &t) {
  plan::BufferDesc b;
  b.role = role;
  b.index = index;
  b.tensor = t;
  plan::checkedByteSize(t.dtype, t.shape, b.size);
  return b;
}

/// A buffer for the block of model input/output `index` (global type `t`)
/// at `offsets` with shape `shape`.
inline plan::BufferDesc blockBuffer(plan::BufferRole role, uint32_t index,
                                    const plan::TensorDesc &t,
                                    std::vector<int64_t> offsets,
                                    std::vector<int64_t> shape,
                                    bool owns = true) {
  plan::BufferDesc b;
  b.role = role;
  b.index = index;
  b.tensor = plan::TensorDesc{t.name, t.dtype, std::move(shape)};
  b.sliceOffsets = std::move(offsets);
  b.ownsOutput = owns;
  plan::checkedByteSize(b.tensor.dtype, b.tensor.shape, b.size);
  return b;
}

/// A weight buffer holding `bytes`, appended to `program.weights`.
inline plan::BufferDesc weightBuffer(plan::RankProgram &program,
                                     const plan::TensorDesc &t,
                                     const std::string &bytes) {
  plan::BufferDesc b;
  b.role = plan::BufferRole::Weight;
  b.tensor = t;
  b.size = bytes.size();
  b.offset = plan::appendWeight(program.weights, bytes);
  return b;
}

/// The bytes of `values`.
template <typename T> std::string bytesOf(const std::vector<T> &values) {
  return std::string(reinterpret_cast<const char *>(values.data()),
                     values.size() * sizeof(T));
}

/// The "add_matmul" model of test/Inputs/test_code.c: out = (x + y) @ w with
/// x, y: float32[2x3] inputs, w: float32[3x4] weight, out: float32[2x4].
/// Its code is `code` (the real test_code.so, or any bytes for format
/// tests), `ranks` copies of the same program, mesh axis "tp" (rank 0 writes
/// the output, the other ranks hold replicas).
inline plan::Plan makeAddMatmulPlan(const std::string &code,
                                    const std::vector<float> &w,
                                    uint32_t ranks = 1) {
  using plan::BufferRole;
  using plan::DataType;
  plan::Plan p;
  p.model.target = "cpu";
  p.model.worldSize = ranks;
  p.model.meshAxes = {{"tp", int64_t(ranks)}};
  p.model.inputs = {desc("x", DataType::Float, {2, 3}),
                    desc("y", DataType::Float, {2, 3})};
  p.model.outputs = {desc("out", DataType::Float, {2, 4})};
  for (uint32_t r = 0; r < ranks; ++r) {
    plan::RankProgram prog;
    prog.rank = r;
    prog.code = code;
    prog.buffers.push_back(ioBuffer(BufferRole::Input, 0, p.model.inputs[0]));
    prog.buffers.push_back(
        weightBuffer(prog, desc("w", DataType::Float, {3, 4}), bytesOf(w)));
    prog.buffers.push_back(ioBuffer(BufferRole::Input, 1, p.model.inputs[1]));
    prog.buffers.push_back(ioBuffer(BufferRole::Output, 0, p.model.outputs[0]));
    // Every rank computes the whole output; rank 0's copy is written.
    prog.buffers.back().ownsOutput = r == 0;
    plan::setSingleFunction(prog, "add_matmul");
    p.ranks.push_back(std::move(prog));
  }
  return p;
}

/// A pipelined plan over the "stage0"/"stage1" functions of
/// test/Inputs/test_code.c: out = 2 * (x @ w) + 1 with x: float32[4x3]
/// input, w: float32[3x4] weight, out: float32[4x4], two micro-batches along
/// dim 0 of x and out (each [2x3] / [2x4]) and an activation act:
/// float32[2x4] between the stages. With `ranks` = 1 the one rank runs both
/// stages on each micro-batch in turn; with 2, rank 0 runs stage0 and sends
/// act (tag 5) to rank 1, which receives it, runs stage1 and writes out.
inline plan::Plan makePipelinePlan(const std::string &code,
                                   const std::vector<float> &w,
                                   uint32_t ranks = 1) {
  using plan::BufferRole;
  using plan::DataType;
  using plan::StepKind;
  plan::Plan p;
  p.model.target = "cpu";
  p.model.worldSize = ranks;
  p.model.meshAxes = {{"pp", int64_t(ranks)}};
  p.model.inputs = {desc("x", DataType::Float, {4, 3})};
  p.model.outputs = {desc("out", DataType::Float, {4, 4})};
  p.model.microbatches = 2;
  p.model.inputMicrobatchDims = {0};
  p.model.outputMicrobatchDims = {0};
  auto step = [](StepKind kind, uint32_t index, uint32_t mb, uint32_t peer = 0,
                 uint32_t tag = 0) {
    plan::Step s;
    s.kind = kind;
    s.index = index;
    s.microbatch = mb;
    s.peer = peer;
    s.tag = tag;
    return s;
  };
  plan::BufferDesc x = ioBuffer(BufferRole::Input, 0, p.model.inputs[0]);
  x.tensor.shape = {2, 3};
  x.size = 24;
  plan::BufferDesc out = ioBuffer(BufferRole::Output, 0, p.model.outputs[0]);
  out.tensor.shape = {2, 4};
  out.size = 32;
  plan::BufferDesc act;
  act.role = BufferRole::Activation;
  act.tensor = desc("act", DataType::Float, {2, 4});
  act.size = 32;

  plan::RankProgram first;
  first.rank = 0;
  first.code = code;
  first.buffers = {
      x, weightBuffer(first, desc("w", DataType::Float, {3, 4}), bytesOf(w)),
      act};
  first.functions = {{"stage0", {0, 1, 2}}};
  if (ranks == 1) {
    first.buffers.push_back(out);
    first.functions.push_back({"stage1", {2, 3}});
    for (uint32_t mb = 0; mb < 2; ++mb) {
      first.steps.push_back(step(StepKind::Compute, 0, mb));
      first.steps.push_back(step(StepKind::Compute, 1, mb));
    }
    p.ranks.push_back(std::move(first));
    return p;
  }
  plan::RankProgram second;
  second.rank = 1;
  second.code = code;
  second.buffers = {act, out};
  second.functions = {{"stage1", {0, 1}}};
  for (uint32_t mb = 0; mb < 2; ++mb) {
    first.steps.push_back(step(StepKind::Compute, 0, mb));
    first.steps.push_back(step(StepKind::Send, 2, mb, 1, 5));
    second.steps.push_back(step(StepKind::Recv, 0, mb, 0, 5));
    second.steps.push_back(step(StepKind::Compute, 0, mb));
  }
  p.ranks.push_back(std::move(first));
  p.ranks.push_back(std::move(second));
  return p;
}

/// The expected output of makePipelinePlan: 2 * (x @ w) + 1 for x [4x3].
inline std::vector<float> pipelineReference(const std::vector<float> &x,
                                            const std::vector<float> &w) {
  std::vector<float> out(16);
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) {
      float sum = 0;
      for (int k = 0; k < 3; ++k)
        sum += x[3 * i + k] * w[4 * k + j];
      out[4 * i + j] = 2 * sum + 1;
    }
  return out;
}

//===----------------------------------------------------------------------===//
// An independent plan.bin writer (from docs/plan-format.md), without any
// validation, for conformance and corruption tests.
//===----------------------------------------------------------------------===//

/// Little-endian append helpers.
struct LE {
  std::string bytes;
  LE &u32(uint32_t v) {
    for (int i = 0; i < 4; ++i)
      bytes.push_back(char(v >> (8 * i)));
    return *this;
  }
  LE &u64(uint64_t v) {
    for (int i = 0; i < 8; ++i)
      bytes.push_back(char(v >> (8 * i)));
    return *this;
  }
  LE &str(const std::string &s) {
    u32(uint32_t(s.size()));
    bytes += s;
    return *this;
  }
  LE &tensor(const plan::TensorDesc &t) {
    str(t.name).u32(uint32_t(t.dtype)).u32(uint32_t(t.shape.size()));
    for (int64_t d : t.shape)
      u64(uint64_t(d));
    return *this;
  }
};

/// One section of a raw file.
struct RawSection {
  uint32_t kind;
  uint32_t rank;
  std::string payload;
};

/// act(x) of the GEMM epilogues (DNNC_RT_ACTIVATION_* codes: 1 ReLU, 2 the
/// tanh GELU, else none), in double: the reference of
/// dnnc_rt_[cuda_]gemm_bias_*.
inline double activationReference(double x, int32_t activation) {
  if (activation == 1)
    return x > 0 ? x : 0;
  if (activation == 2)
    return 0.5 * x *
           (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
  return x;
}

/// dnnc_rt_attention_* (Kernels.h) in double: for bh = b*H + h, out[bh,i,:] =
/// softmax_j(scale * q[bh,i,:].k[bh,j,:] + bias[b*sB + h*sH + i*sQ + j])
/// v[bh,j,:], j > i masked when `causal`, fully masked rows zeros; q and out
/// [B*H, S, D], k and v [B*H, T, D]; `bias` may be null.
template <class V>
std::vector<double>
attentionReference(int64_t B, int64_t H, int64_t S, int64_t T, int64_t D,
                   const std::vector<V> &q, const std::vector<V> &k,
                   const std::vector<V> &v, double scale, bool causal,
                   const V *bias, int64_t sB, int64_t sH, int64_t sQ) {
  std::vector<double> out(size_t(B * H * S * D), 0.0);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t i = 0; i < S; ++i) {
        int64_t bh = b * H + h;
        std::vector<double> p(static_cast<size_t>(T));
        double max = -INFINITY, sum = 0;
        for (int64_t j = 0; j < T; ++j) {
          double s = -INFINITY;
          if (!causal || j <= i) {
            s = 0;
            for (int64_t d = 0; d < D; ++d)
              s += double(q[size_t((bh * S + i) * D + d)]) *
                   double(k[size_t((bh * T + j) * D + d)]);
            s = scale * s +
                (bias ? double(bias[b * sB + h * sH + i * sQ + j]) : 0.0);
          }
          p[size_t(j)] = s;
          max = std::max(max, s);
        }
        if (max == -INFINITY)
          continue;
        for (double &x : p)
          sum += (x = x == -INFINITY ? 0.0 : std::exp(x - max));
        for (int64_t d = 0; d < D; ++d) {
          double o = 0;
          for (int64_t j = 0; j < T; ++j)
            o += p[size_t(j)] * double(v[size_t((bh * T + j) * D + d)]);
          out[size_t((bh * S + i) * D + d)] = o / sum;
        }
      }
  return out;
}

/// The MODEL payload of `m`, unvalidated.
inline std::string rawModel(const plan::ModelInfo &m) {
  LE w;
  w.str(m.target).u32(m.worldSize).u32(uint32_t(m.meshAxes.size()));
  for (const auto &[name, size] : m.meshAxes)
    w.str(name).u64(uint64_t(size));
  w.u32(uint32_t(m.deviceOrder.size()));
  for (uint32_t rank : m.deviceOrder)
    w.u32(rank);
  w.u32(uint32_t(m.inputs.size()));
  for (const auto &t : m.inputs)
    w.tensor(t);
  w.u32(uint32_t(m.outputs.size()));
  for (const auto &t : m.outputs)
    w.tensor(t);
  w.u32(m.microbatches).u32(uint32_t(m.inputMicrobatchDims.size()));
  for (int32_t dim : m.inputMicrobatchDims)
    w.u32(uint32_t(dim));
  w.u32(uint32_t(m.outputMicrobatchDims.size()));
  for (int32_t dim : m.outputMicrobatchDims)
    w.u32(uint32_t(dim));
  w.u32(uint32_t(m.parameters.size()));
  for (const auto &t : m.parameters)
    w.tensor(t);
  return w.bytes;
}

/// The RANK_META payload of `r`, unvalidated.
inline std::string rawMeta(const plan::RankProgram &r) {
  LE w;
  w.u32(uint32_t(r.buffers.size()));
  for (const auto &b : r.buffers) {
    w.u32(uint32_t(b.role))
        .u32(b.index)
        .u64(b.offset)
        .u64(b.size)
        .tensor(b.tensor)
        .u32((b.ownsOutput ? 1 : 0) | (b.wholeBatch ? 2 : 0))
        .u32(uint32_t(b.sliceOffsets.size()));
    for (int64_t offset : b.sliceOffsets)
      w.u64(uint64_t(offset));
  }
  w.u32(uint32_t(r.functions.size()));
  for (const auto &f : r.functions) {
    w.str(f.symbol).u32(uint32_t(f.args.size()));
    for (uint32_t arg : f.args)
      w.u32(arg);
  }
  w.u32(uint32_t(r.steps.size()));
  for (const auto &step : r.steps)
    w.u32(uint32_t(step.kind))
        .u32(step.index)
        .u32(step.microbatch)
        .u32(step.peer)
        .u32(step.tag);
  return w.bytes;
}

/// The sections of `p` in the canonical order.
inline std::vector<RawSection> rawSections(const plan::Plan &p) {
  std::vector<RawSection> s{{1, 0xffffffffu, rawModel(p.model)}};
  for (const auto &r : p.ranks) {
    s.push_back({2, r.rank, rawMeta(r)});
    s.push_back({3, r.rank, r.code});
    s.push_back({4, r.rank, r.weights});
  }
  return s;
}

/// FNV-1a-64, written out again.
inline uint64_t fnv(const std::string &s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : s)
    h = (h ^ c) * 0x100000001b3ull;
  return h;
}

/// Lays out `sections` as a plan.bin (header, table, 64-aligned payloads),
/// with correct checksums.
inline std::string rawFile(const std::vector<RawSection> &sections,
                           uint32_t version = plan::kFormatVersion) {
  uint64_t cursor = 32 + 32 * sections.size();
  std::vector<uint64_t> offsets;
  for (const auto &s : sections) {
    cursor = (cursor + 63) / 64 * 64;
    offsets.push_back(cursor);
    cursor += s.payload.size();
  }
  LE table;
  for (size_t i = 0; i < sections.size(); ++i)
    table.u32(sections[i].kind)
        .u32(sections[i].rank)
        .u64(offsets[i])
        .u64(sections[i].payload.size())
        .u64(fnv(sections[i].payload));
  LE file;
  file.bytes = "DNNCPLAN";
  file.u32(version)
      .u32(uint32_t(sections.size()))
      .u64(cursor)
      .u64(fnv(table.bytes));
  file.bytes += table.bytes;
  for (size_t i = 0; i < sections.size(); ++i) {
    file.bytes.resize(offsets[i], '\0');
    file.bytes += sections[i].payload;
  }
  return file.bytes;
}

/// Recomputes every checksum of a plan.bin whose table is intact enough to
/// locate the payloads (for tests that corrupt a field on purpose).
inline void reseal(std::string &file) {
  auto load32 = [&](size_t at) {
    uint32_t v = 0;
    std::memcpy(&v, &file[at], 4);
    return v;
  };
  auto load64 = [&](size_t at) {
    uint64_t v = 0;
    std::memcpy(&v, &file[at], 8);
    return v;
  };
  uint32_t count = load32(12);
  for (uint32_t i = 0; i < count; ++i) {
    size_t e = 32 + 32 * size_t(i);
    uint64_t off = load64(e + 8), size = load64(e + 16);
    if (off <= file.size() && size <= file.size() - off) {
      uint64_t h = fnv(file.substr(off, size));
      std::memcpy(&file[e + 24], &h, 8);
    }
  }
  uint64_t h = fnv(file.substr(32, 32 * size_t(count)));
  std::memcpy(&file[24], &h, 8);
}

} // namespace dnnc::test

#endif // DNNC_RUNTIME_TEST_TESTUTIL_H
