//===- PlanReader.cpp - Parse and validate plan.bin ------------*- C++ -*-===//
//
// decodePlan and readPlan. The reader trusts nothing in the file: every size,
// offset and count is checked against the real file size before it is used,
// so a truncated or corrupt file produces an error, never a crash or an
// allocation larger than the file. The layout is canonical (docs/
// plan-format.md): sections in a fixed order, each at the first 64-byte
// boundary after the previous one, zero padding, no trailing bytes. With the
// checksums of the table and of each payload, every byte of a valid file is
// covered, so any single corrupted byte is detected.
//
//===----------------------------------------------------------------------===//

#include "Wire.h"
#include "dnnc/Runtime/Plan.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace dnnc::plan {

namespace {
/// Random access to the bytes of a plan.bin.
class Source {
public:
  virtual ~Source() = default;
  /// Total size in bytes.
  virtual uint64_t size() const = 0;
  /// Reads `n` bytes at `offset` (within size()) into `out`.
  virtual bool read(uint64_t offset, uint64_t n, std::string &out,
                    std::string &error) = 0;
};

/// A plan held in memory.
class MemorySource final : public Source {
public:
  explicit MemorySource(std::string_view bytes) : bytes(bytes) {}
  uint64_t size() const override { return bytes.size(); }
  bool read(uint64_t offset, uint64_t n, std::string &out,
            std::string &) override {
    out.assign(bytes.data() + offset, n);
    return true;
  }

private:
  std::string_view bytes;
};

/// A plan file read with pread.
class FileSource final : public Source {
public:
  ~FileSource() override {
    if (fd >= 0)
      ::close(fd);
  }
  bool open(const std::string &path, std::string &error) {
    fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      error = std::string("cannot open: ") + std::strerror(errno);
      return false;
    }
    struct stat st;
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
      error = "not a regular file";
      return false;
    }
    fileSize = static_cast<uint64_t>(st.st_size);
    return true;
  }
  uint64_t size() const override { return fileSize; }
  bool read(uint64_t offset, uint64_t n, std::string &out,
            std::string &error) override {
    out.assign(n, '\0');
    uint64_t done = 0;
    while (done < n) {
      ssize_t got = ::pread(fd, &out[done], n - done, offset + done);
      if (got < 0 && errno == EINTR)
        continue;
      if (got <= 0) {
        error = got < 0 ? std::string("read error: ") + std::strerror(errno)
                        : std::string("the file shrank while being read");
        return false;
      }
      done += static_cast<uint64_t>(got);
    }
    return true;
  }

private:
  int fd = -1;
  uint64_t fileSize = 0;
};

/// A parsed section table entry.
struct Entry {
  uint32_t kind;
  uint32_t rank;
  uint64_t offset;
  uint64_t size;
  uint64_t checksum;
};
} // namespace

/// "section 3 (RANK_CODE, rank 0)".
static std::string describeEntry(size_t index, const Entry &e) {
  std::string text = "section " + std::to_string(index) + " (" +
                     sectionKindName(e.kind) + ", ";
  if (e.rank == kGlobalRank)
    return text + "global)";
  return text + "rank " + std::to_string(e.rank) + ")";
}

static bool parseTensorDesc(wire::Reader &r, TensorDesc &t) {
  uint32_t rank = 0;
  if (!r.str(t.name, kMaxNameLength, "tensor name") || !r.i32(t.dtype) ||
      !r.u32(rank))
    return false;
  if (rank > kMaxTensorRank)
    return r.fail("tensor '" + t.name.substr(0, 200) + "' has rank " +
                  std::to_string(rank) + ", above the limit of " +
                  std::to_string(kMaxTensorRank));
  if (!r.count(rank, 8, "tensor rank"))
    return false;
  t.shape.assign(rank, 0);
  for (int64_t &d : t.shape)
    if (!r.i64(d))
      return false;
  return true;
}

static bool parseTensorList(wire::Reader &r, std::vector<TensorDesc> &list,
                            const char *field) {
  uint32_t count = 0;
  // A tensor record is at least 12 bytes: name length, dtype, rank.
  if (!r.u32(count) || !r.count(count, 12, field))
    return false;
  list.resize(count);
  for (TensorDesc &t : list)
    if (!parseTensorDesc(r, t))
      return false;
  return true;
}

/// Reads a micro-batch dim list: a u32 count (0 or `tensorCount`) and that
/// many i32 dims; `what` is "input" or "output".
static bool parseMicrobatchDims(wire::Reader &r, std::vector<int32_t> &dims,
                                size_t tensorCount, const char *what) {
  uint32_t count = 0;
  if (!r.u32(count))
    return false;
  if (count != 0 && count != tensorCount)
    return r.fail(std::string(what) + " micro-batch dims have " +
                  std::to_string(count) + " entries; expected 0 or the " +
                  what + " count " + std::to_string(tensorCount));
  if (!r.count(count, 4, "micro-batch dim count"))
    return false;
  dims.assign(count, 0);
  for (int32_t &dim : dims)
    if (!r.i32(dim))
      return false;
  return true;
}

static bool parseModel(std::string_view payload, const std::string &what,
                       ModelInfo &model, std::string &error) {
  wire::Reader r(payload, what, error);
  uint32_t axisCount = 0;
  if (!r.str(model.target, kMaxTargetLength, "target") ||
      !r.u32(model.worldSize) || !r.u32(axisCount))
    return false;
  if (axisCount > kMaxMeshAxes)
    return r.fail(std::to_string(axisCount) +
                  " mesh axes exceed the limit of " +
                  std::to_string(kMaxMeshAxes));
  // A mesh axis record is at least 12 bytes: name length, size.
  if (!r.count(axisCount, 12, "mesh axis count"))
    return false;
  model.meshAxes.resize(axisCount);
  for (auto &[name, size] : model.meshAxes)
    if (!r.str(name, kMaxNameLength, "mesh axis name") || !r.i64(size))
      return false;
  uint32_t orderCount = 0;
  if (!r.u32(orderCount))
    return false;
  if (orderCount != 0 && orderCount != model.worldSize)
    return r.fail("device order has " + std::to_string(orderCount) +
                  " entries; expected 0 or the world size " +
                  std::to_string(model.worldSize));
  if (!r.count(orderCount, 4, "device order count"))
    return false;
  model.deviceOrder.assign(orderCount, 0);
  for (uint32_t &rank : model.deviceOrder)
    if (!r.u32(rank))
      return false;
  if (!parseTensorList(r, model.inputs, "input count") ||
      !parseTensorList(r, model.outputs, "output count") ||
      !r.u32(model.microbatches))
    return false;
  if (model.microbatches < 1 || model.microbatches > kMaxMicrobatches)
    return r.fail("micro-batch count " + std::to_string(model.microbatches) +
                  " is out of range (1 to " + std::to_string(kMaxMicrobatches) +
                  ")");
  if (!parseMicrobatchDims(r, model.inputMicrobatchDims, model.inputs.size(),
                           "input") ||
      !parseMicrobatchDims(r, model.outputMicrobatchDims, model.outputs.size(),
                           "output") ||
      !parseTensorList(r, model.parameters, "parameter count"))
    return false;
  return r.finish();
}

static bool parseRankMeta(std::string_view payload, const std::string &what,
                          RankProgram &program, std::string &error) {
  wire::Reader r(payload, what, error);
  uint32_t count = 0;
  // A buffer record is at least 44 bytes: role, index, offset, size, an
  // empty-named scalar tensor (12), owns and the slice rank.
  if (!r.u32(count) || !r.count(count, 44, "buffer count"))
    return false;
  program.buffers.resize(count);
  for (size_t i = 0; i < count; ++i) {
    BufferDesc &b = program.buffers[i];
    uint32_t role = 0, owns = 0, sliceRank = 0;
    if (!r.u32(role) || !r.u32(b.index) || !r.u64(b.offset) || !r.u64(b.size) ||
        !parseTensorDesc(r, b.tensor) || !r.u32(owns) || !r.u32(sliceRank))
      return false;
    if (owns > 3)
      return r.fail("buffer " + std::to_string(i) + " has invalid flags " +
                    std::to_string(owns));
    b.ownsOutput = (owns & 1) != 0;
    b.wholeBatch = (owns & 2) != 0;
    if (sliceRank != 0 && sliceRank != b.tensor.shape.size())
      return r.fail("buffer " + std::to_string(i) + " has " +
                    std::to_string(sliceRank) + " slice offsets for a rank-" +
                    std::to_string(b.tensor.shape.size()) + " tensor");
    b.sliceOffsets.assign(sliceRank, 0);
    for (int64_t &offset : b.sliceOffsets)
      if (!r.i64(offset))
        return false;
    switch (static_cast<BufferRoleCode>(role)) {
    case BufferRoleCode::Input:
      b.role = BufferRole::Input;
      break;
    case BufferRoleCode::Output:
      b.role = BufferRole::Output;
      break;
    case BufferRoleCode::Weight:
      b.role = BufferRole::Weight;
      break;
    case BufferRoleCode::Activation:
      b.role = BufferRole::Activation;
      break;
    case BufferRoleCode::State:
      b.role = BufferRole::State;
      break;
    case BufferRoleCode::Update:
      b.role = BufferRole::Update;
      break;
    case BufferRoleCode::Step:
      b.role = BufferRole::Step;
      break;
    case BufferRoleCode::Accumulator:
      b.role = BufferRole::Accumulator;
      break;
    default:
      return r.fail("buffer " + std::to_string(i) + " has invalid role " +
                    std::to_string(role));
    }
  }
  // A function record is at least 8 bytes: symbol length, argument count.
  if (!r.u32(count) || !r.count(count, 8, "function count"))
    return false;
  program.functions.resize(count);
  for (FunctionDesc &f : program.functions) {
    uint32_t argCount = 0;
    if (!r.str(f.symbol, kMaxNameLength, "function symbol") ||
        !r.u32(argCount) || !r.count(argCount, 4, "argument count"))
      return false;
    f.args.assign(argCount, 0);
    for (uint32_t &arg : f.args)
      if (!r.u32(arg))
        return false;
  }
  // A step record is 20 bytes: kind, index, micro-batch, peer, tag.
  if (!r.u32(count) || !r.count(count, 20, "step count"))
    return false;
  program.steps.resize(count);
  for (size_t i = 0; i < count; ++i) {
    Step &step = program.steps[i];
    uint32_t kind = 0;
    if (!r.u32(kind) || !r.u32(step.index) || !r.u32(step.microbatch) ||
        !r.u32(step.peer) || !r.u32(step.tag))
      return false;
    switch (static_cast<StepKindCode>(kind)) {
    case StepKindCode::Compute:
      step.kind = StepKind::Compute;
      break;
    case StepKindCode::Send:
      step.kind = StepKind::Send;
      break;
    case StepKindCode::Recv:
      step.kind = StepKind::Recv;
      break;
    default:
      return r.fail("step " + std::to_string(i) + " has invalid kind " +
                    std::to_string(kind));
    }
  }
  return r.finish();
}

/// Reads the payload of `entries[i]` and checks its checksum.
static bool readPayload(Source &src, const std::vector<Entry> &entries,
                        size_t i, std::string &out, std::string &error) {
  const Entry &e = entries[i];
  if (!src.read(e.offset, e.size, out, error)) {
    error = describeEntry(i, e) + ": " + error;
    return false;
  }
  if (fnv1a64(out.data(), out.size()) != e.checksum) {
    error = describeEntry(i, e) + ": payload checksum mismatch (corrupt file)";
    return false;
  }
  return true;
}

/// Checks that the padding bytes [begin, end) are zero.
static bool checkPadding(Source &src, uint64_t begin, uint64_t end,
                         std::string &error) {
  if (begin == end)
    return true;
  std::string gap;
  if (!src.read(begin, end - begin, gap, error))
    return false;
  for (size_t i = 0; i < gap.size(); ++i) {
    if (gap[i] != 0) {
      error = "non-zero padding byte at file offset " +
              std::to_string(begin + i) + " (corrupt file)";
      return false;
    }
  }
  return true;
}

static bool decodeFrom(Source &src, Plan &plan, std::string &error,
                       const ReadOptions &options) {
  plan = Plan();
  const uint64_t size = src.size();
  if (size < kHeaderSize) {
    error = "file too small to be a plan.bin (" + std::to_string(size) +
            " bytes; the header alone is " + std::to_string(kHeaderSize) + ")";
    return false;
  }
  std::string head;
  if (!src.read(0, kHeaderSize, head, error))
    return false;
  if (std::memcmp(head.data() + kHeaderMagicOffset, kMagic, 8) != 0) {
    error = "not a plan.bin file (bad magic)";
    return false;
  }
  uint32_t version = wire::loadU32(&head[kHeaderVersionOffset]);
  if (version != kFormatVersion) {
    error = "unsupported plan.bin format version " + std::to_string(version) +
            "; this dnnc-run reads version " + std::to_string(kFormatVersion);
    if (version < kFormatVersion)
      error += "; rebuild the plan with this dnnc";
    return false;
  }
  uint32_t count = wire::loadU32(&head[kHeaderSectionCountOffset]);
  uint64_t declaredSize = wire::loadU64(&head[kHeaderFileSizeOffset]);
  uint64_t tableChecksum = wire::loadU64(&head[kHeaderTableChecksumOffset]);
  if (declaredSize != size) {
    error = "file size mismatch: the header says " +
            std::to_string(declaredSize) + " bytes, the file has " +
            std::to_string(size) + " (truncated or corrupt)";
    return false;
  }
  const uint64_t maxSections = 1 + 3 * uint64_t(kMaxWorldSize);
  if (count == 0 || count > maxSections) {
    error = "invalid section count " + std::to_string(count);
    return false;
  }
  uint64_t tableEnd = kHeaderSize + kSectionEntrySize * count;
  if (tableEnd > size) {
    error = "section table (" + std::to_string(count) +
            " entries) extends past the end of the file";
    return false;
  }
  std::string table;
  if (!src.read(kHeaderSize, tableEnd - kHeaderSize, table, error))
    return false;
  if (fnv1a64(table.data(), table.size()) != tableChecksum) {
    error = "section table checksum mismatch (corrupt file)";
    return false;
  }

  // Canonical layout: each payload at the first 64-byte boundary after the
  // previous one, zero padding, nothing after the last payload.
  std::vector<Entry> entries(count);
  uint64_t cursor = tableEnd;
  for (size_t i = 0; i < count; ++i) {
    const char *p = table.data() + i * kSectionEntrySize;
    Entry &e = entries[i];
    e.kind = wire::loadU32(p + kEntryKindOffset);
    e.rank = wire::loadU32(p + kEntryRankOffset);
    e.offset = wire::loadU64(p + kEntryOffsetOffset);
    e.size = wire::loadU64(p + kEntrySizeOffset);
    e.checksum = wire::loadU64(p + kEntryChecksumOffset);
    uint64_t expected = alignTo(cursor, kAlignment);
    if (e.offset != expected) {
      error = describeEntry(i, e) + ": offset " + std::to_string(e.offset) +
              ", expected " + std::to_string(expected);
      return false;
    }
    if (e.offset > size || e.size > size - e.offset) {
      error = describeEntry(i, e) + ": payload [" + std::to_string(e.offset) +
              ", +" + std::to_string(e.size) +
              ") extends past the end of the file (" + std::to_string(size) +
              " bytes)";
      return false;
    }
    if (!checkPadding(src, cursor, e.offset, error))
      return false;
    cursor = e.offset + e.size;
  }
  if (cursor != size) {
    error = std::to_string(size - cursor) +
            " unexpected bytes after the last section";
    return false;
  }

  // Section order: MODEL, then RANK_META, RANK_CODE, RANK_WEIGHTS per rank.
  if (entries[0].kind != uint32_t(SectionKind::Model) ||
      entries[0].rank != kGlobalRank) {
    error = describeEntry(0, entries[0]) +
            ": the first section must be the global MODEL section";
    return false;
  }
  std::string payload;
  if (!readPayload(src, entries, 0, payload, error) ||
      !parseModel(payload, describeEntry(0, entries[0]), plan.model, error))
    return false;
  uint32_t worldSize = plan.model.worldSize;
  if (worldSize < 1 || worldSize > kMaxWorldSize) {
    error = "world size " + std::to_string(worldSize) +
            " is out of range (1 to " + std::to_string(kMaxWorldSize) + ")";
    return false;
  }
  if (count != 1 + 3 * uint64_t(worldSize)) {
    error = "the plan has " + std::to_string(count) + " sections; world size " +
            std::to_string(worldSize) + " needs " +
            std::to_string(1 + 3 * uint64_t(worldSize));
    return false;
  }
  static const SectionKind rankKinds[3] = {
      SectionKind::RankMeta, SectionKind::RankCode, SectionKind::RankWeights};
  for (size_t i = 1; i < count; ++i) {
    uint32_t rank = static_cast<uint32_t>((i - 1) / 3);
    SectionKind kind = rankKinds[(i - 1) % 3];
    if (entries[i].kind != uint32_t(kind) || entries[i].rank != rank) {
      error = describeEntry(i, entries[i]) + ": expected the " +
              sectionKindName(uint32_t(kind)) + " section of rank " +
              std::to_string(rank);
      return false;
    }
  }
  if (options.rank != kAllRanks && options.rank != kNoRanks &&
      options.rank >= worldSize) {
    error = "rank " + std::to_string(options.rank) +
            " requested but the plan has " + std::to_string(worldSize) +
            " ranks";
    return false;
  }

  for (uint32_t rank = 0; rank < worldSize; ++rank) {
    if (options.rank != kAllRanks && rank != options.rank)
      continue;
    size_t base = 1 + 3 * size_t(rank);
    RankProgram program;
    program.rank = rank;
    if (!readPayload(src, entries, base, payload, error) ||
        !parseRankMeta(payload, describeEntry(base, entries[base]), program,
                       error) ||
        !readPayload(src, entries, base + 1, program.code, error) ||
        !readPayload(src, entries, base + 2, program.weights, error))
      return false;
    plan.ranks.push_back(std::move(program));
  }
  return verifyPlan(plan, error, options.rank != kAllRanks);
}

bool decodePlan(std::string_view bytes, Plan &plan, std::string &error,
                const ReadOptions &options) {
  MemorySource src(bytes);
  if (!decodeFrom(src, plan, error, options)) {
    plan = Plan();
    return false;
  }
  return true;
}

bool readPlan(const std::string &path, Plan &plan, std::string &error,
              const ReadOptions &options) {
  FileSource src;
  if (!src.open(path, error) || !decodeFrom(src, plan, error, options)) {
    error = "plan '" + path + "': " + error;
    plan = Plan();
    return false;
  }
  return true;
}

} // namespace dnnc::plan
