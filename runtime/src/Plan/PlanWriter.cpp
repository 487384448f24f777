//===- PlanWriter.cpp - Serialize a plan to plan.bin -----------*- C++ -*-===//
//
// encodePlan and writePlan. The small payloads (MODEL, RANK_META) are
// serialized in memory; code and weights are written straight from the Plan
// (weight pieces as they produce their bytes), so writing a plan copies no
// large buffer.
//
//===----------------------------------------------------------------------===//

#include "Wire.h"
#include "dnnc/Runtime/FileUtil.h"
#include "dnnc/Runtime/Plan.h"

#include <functional>

namespace dnnc::plan {

namespace {
/// Receives the bytes of the file in order; false stops the writer.
using Sink = std::function<bool(std::string_view)>;

/// Up to this many zero bytes are emitted per chunk between weight pieces.
constexpr size_t kZeroChunk = 4096;

/// Emits `count` zero bytes to `sink`.
static bool emitZeros(uint64_t count, const Sink &sink) {
  static const char zeros[kZeroChunk] = {};
  while (count > 0) {
    size_t n = count < kZeroChunk ? static_cast<size_t>(count) : kZeroChunk;
    if (!sink(std::string_view(zeros, n)))
      return false;
    count -= n;
  }
  return true;
}

/// One section to write: its table fields and its payload bytes.
struct OutSection {
  SectionKind kind;
  uint32_t rank;
  /// Payload serialized here (MODEL, RANK_META) ...
  std::string owned;
  /// ... or borrowed from the plan (RANK_CODE, RANK_WEIGHTS) ...
  std::string_view borrowed;
  bool isOwned;
  /// ... or, for RANK_WEIGHTS given as pieces, the rank that holds them.
  const RankProgram *pieces = nullptr;

  /// The payload's byte count.
  uint64_t size() const {
    if (pieces)
      return pieces->weightsSize();
    return isOwned ? owned.size() : borrowed.size();
  }

  /// Emits the payload to `sink`.
  bool emit(const Sink &sink) const {
    if (!pieces)
      return sink(isOwned ? std::string_view(owned) : borrowed);
    uint64_t cursor = 0;
    for (const WeightPiece &piece : pieces->weightPieces) {
      if (!emitZeros(piece.offset - cursor, sink))
        return false;
      // The sink's failure is kept and the rest of the piece dropped.
      bool ok = true;
      uint64_t produced = 0;
      piece.emit([&](std::string_view chunk) {
        produced += chunk.size();
        if (ok && produced <= piece.size)
          ok = sink(chunk);
      });
      if (!ok)
        return false;
      if (produced != piece.size)
        return false;
      cursor = piece.offset + piece.size;
    }
    return true;
  }
};
} // namespace

static void encodeTensorDesc(wire::Writer &w, const TensorDesc &t) {
  w.str(t.name);
  w.i32(t.dtype);
  w.u32(static_cast<uint32_t>(t.shape.size()));
  for (int64_t d : t.shape)
    w.i64(d);
}

static std::string encodeModel(const ModelInfo &model) {
  std::string out;
  wire::Writer w(out);
  w.str(model.target);
  w.u32(model.worldSize);
  w.u32(static_cast<uint32_t>(model.meshAxes.size()));
  for (const auto &[name, size] : model.meshAxes) {
    w.str(name);
    w.i64(size);
  }
  w.u32(static_cast<uint32_t>(model.deviceOrder.size()));
  for (uint32_t rank : model.deviceOrder)
    w.u32(rank);
  w.u32(static_cast<uint32_t>(model.inputs.size()));
  for (const TensorDesc &t : model.inputs)
    encodeTensorDesc(w, t);
  w.u32(static_cast<uint32_t>(model.outputs.size()));
  for (const TensorDesc &t : model.outputs)
    encodeTensorDesc(w, t);
  w.u32(model.microbatches);
  w.u32(static_cast<uint32_t>(model.inputMicrobatchDims.size()));
  for (int32_t dim : model.inputMicrobatchDims)
    w.i32(dim);
  w.u32(static_cast<uint32_t>(model.outputMicrobatchDims.size()));
  for (int32_t dim : model.outputMicrobatchDims)
    w.i32(dim);
  w.u32(static_cast<uint32_t>(model.parameters.size()));
  for (const TensorDesc &t : model.parameters)
    encodeTensorDesc(w, t);
  return out;
}

static BufferRoleCode roleCode(BufferRole role) {
  switch (role) {
  case BufferRole::Input:
    return BufferRoleCode::Input;
  case BufferRole::Output:
    return BufferRoleCode::Output;
  case BufferRole::Activation:
    return BufferRoleCode::Activation;
  case BufferRole::State:
    return BufferRoleCode::State;
  case BufferRole::Update:
    return BufferRoleCode::Update;
  case BufferRole::Step:
    return BufferRoleCode::Step;
  case BufferRole::Accumulator:
    return BufferRoleCode::Accumulator;
  case BufferRole::Weight:
    break;
  }
  return BufferRoleCode::Weight;
}

static StepKindCode stepCode(StepKind kind) {
  switch (kind) {
  case StepKind::Send:
    return StepKindCode::Send;
  case StepKind::Recv:
    return StepKindCode::Recv;
  case StepKind::Compute:
    break;
  }
  return StepKindCode::Compute;
}

static std::string encodeRankMeta(const RankProgram &program) {
  std::string out;
  wire::Writer w(out);
  w.u32(static_cast<uint32_t>(program.buffers.size()));
  for (const BufferDesc &b : program.buffers) {
    w.u32(static_cast<uint32_t>(roleCode(b.role)));
    w.u32(b.index);
    w.u64(b.offset);
    w.u64(b.size);
    encodeTensorDesc(w, b.tensor);
    w.u32((b.ownsOutput ? 1 : 0) | (b.wholeBatch ? 2 : 0));
    w.u32(static_cast<uint32_t>(b.sliceOffsets.size()));
    for (int64_t offset : b.sliceOffsets)
      w.i64(offset);
  }
  w.u32(static_cast<uint32_t>(program.functions.size()));
  for (const FunctionDesc &f : program.functions) {
    w.str(f.symbol);
    w.u32(static_cast<uint32_t>(f.args.size()));
    for (uint32_t arg : f.args)
      w.u32(arg);
  }
  w.u32(static_cast<uint32_t>(program.steps.size()));
  for (const Step &step : program.steps) {
    w.u32(static_cast<uint32_t>(stepCode(step.kind)));
    w.u32(step.index);
    w.u32(step.microbatch);
    w.u32(step.peer);
    w.u32(step.tag);
  }
  return out;
}

/// Serializes `plan` into `sink` calls (header + table, then each gap and
/// payload in file order).
static bool emitPlan(const Plan &plan, std::string &error, const Sink &sink) {
  if (!verifyPlan(plan, error))
    return false;
  if (plan.ranks.size() > kMaxWorldSize) {
    error = "too many ranks";
    return false;
  }

  std::vector<OutSection> sections;
  sections.reserve(1 + 3 * plan.ranks.size());
  sections.push_back(
      {SectionKind::Model, kGlobalRank, encodeModel(plan.model), {}, true});
  for (const RankProgram &program : plan.ranks) {
    sections.push_back({SectionKind::RankMeta,
                        program.rank,
                        encodeRankMeta(program),
                        {},
                        true});
    sections.push_back(
        {SectionKind::RankCode, program.rank, {}, program.code, false});
    OutSection weights{
        SectionKind::RankWeights, program.rank, {}, program.weights, false};
    if (!program.weightPieces.empty())
      weights.pieces = &program;
    sections.push_back(std::move(weights));
  }

  // Layout: header, table, then each payload at the next 64-byte boundary.
  uint64_t tableEnd = kHeaderSize + kSectionEntrySize * sections.size();
  std::vector<uint64_t> offsets;
  uint64_t cursor = tableEnd;
  for (const OutSection &s : sections) {
    cursor = alignTo(cursor, kAlignment);
    offsets.push_back(cursor);
    cursor += s.size();
  }
  uint64_t fileSize = cursor;

  std::string table(kSectionEntrySize * sections.size(), '\0');
  for (size_t i = 0; i < sections.size(); ++i) {
    char *e = &table[i * kSectionEntrySize];
    uint64_t checksum = kFnvOffsetBasis;
    // Hashing never fails: false is a piece of the wrong byte count.
    if (!sections[i].emit([&](std::string_view chunk) {
          checksum = fnv1a64(chunk.data(), chunk.size(), checksum);
          return true;
        })) {
      error = "rank " + std::to_string(sections[i].rank) +
              ": a weight piece produced a different number of bytes than "
              "its size";
      return false;
    }
    wire::storeU32(e + kEntryKindOffset,
                   static_cast<uint32_t>(sections[i].kind));
    wire::storeU32(e + kEntryRankOffset, sections[i].rank);
    wire::storeU64(e + kEntryOffsetOffset, offsets[i]);
    wire::storeU64(e + kEntrySizeOffset, sections[i].size());
    wire::storeU64(e + kEntryChecksumOffset, checksum);
  }

  std::string head(kHeaderSize, '\0');
  for (int i = 0; i < 8; ++i)
    head[kHeaderMagicOffset + i] = kMagic[i];
  wire::storeU32(&head[kHeaderVersionOffset], kFormatVersion);
  wire::storeU32(&head[kHeaderSectionCountOffset],
                 static_cast<uint32_t>(sections.size()));
  wire::storeU64(&head[kHeaderFileSizeOffset], fileSize);
  wire::storeU64(&head[kHeaderTableChecksumOffset],
                 fnv1a64(table.data(), table.size()));
  head += table;
  if (!sink(head))
    return false;

  cursor = tableEnd;
  for (size_t i = 0; i < sections.size(); ++i) {
    if (!emitZeros(offsets[i] - cursor, sink) || !sections[i].emit(sink))
      return false;
    cursor = offsets[i] + sections[i].size();
  }
  return true;
}

bool encodePlan(const Plan &plan, std::string &bytes, std::string &error) {
  bytes.clear();
  return emitPlan(plan, error, [&](std::string_view chunk) {
    bytes.append(chunk.data(), chunk.size());
    return true;
  });
}

bool writePlan(const Plan &plan, const std::string &path, std::string &error) {
  // Validate before creating anything on disk.
  if (!verifyPlan(plan, error)) {
    error = "cannot write plan '" + path + "': " + error;
    return false;
  }
  AtomicFile file;
  if (!file.open(path, error))
    return false;
  // Small chunks (rows of a weight block, zeros) are gathered into writes
  // of up to kBufferSize bytes; larger ones are written as they are.
  constexpr size_t kBufferSize = size_t(1) << 20;
  std::string buffer;
  buffer.reserve(kBufferSize);
  auto flush = [&] {
    bool ok = file.write(buffer.data(), buffer.size(), error);
    buffer.clear();
    return ok;
  };
  bool ok = emitPlan(plan, error, [&](std::string_view chunk) {
    if (buffer.size() + chunk.size() > kBufferSize && !flush())
      return false;
    if (chunk.size() >= kBufferSize)
      return file.write(chunk.data(), chunk.size(), error);
    buffer.append(chunk.data(), chunk.size());
    return true;
  });
  if (!ok || !flush() || !file.commit(error)) {
    file.discard();
    return false;
  }
  return true;
}

} // namespace dnnc::plan
