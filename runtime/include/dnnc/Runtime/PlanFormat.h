//===- PlanFormat.h - plan.bin on-disk constants and layout -----*- C++ -*-===//
//
// The byte-level layout of plan.bin format version 6 (docs/plan-format.md):
// a 32-byte header, a table of 32-byte section entries, and 64-byte aligned
// section payloads. All integers are little-endian; strings are a u32 length
// followed by that many bytes. Readers and writers encode every field
// explicitly (never by copying these structs), so the layout does not depend
// on the host's endianness or struct padding.
//
//===----------------------------------------------------------------------===//

#ifndef DNNC_RUNTIME_PLANFORMAT_H
#define DNNC_RUNTIME_PLANFORMAT_H

#include <cstddef>
#include <cstdint>

namespace dnnc::plan {

/// The 8 bytes every plan.bin starts with.
inline constexpr char kMagic[8] = {'D', 'N', 'N', 'C', 'P', 'L', 'A', 'N'};

/// The format version this library reads and writes.
inline constexpr uint32_t kFormatVersion = 6;

/// Alignment of every section payload in the file and of every weight inside
/// a RANK_WEIGHTS payload; also the alignment of runtime buffers.
inline constexpr uint64_t kAlignment = 64;

/// Byte size of the file header.
inline constexpr uint64_t kHeaderSize = 32;

/// Byte size of one section table entry.
inline constexpr uint64_t kSectionEntrySize = 32;

/// The `rank` field of a section table entry for a global section (MODEL).
inline constexpr uint32_t kGlobalRank = 0xffffffffu;

/// Largest world size (number of ranks) a plan may have.
inline constexpr uint32_t kMaxWorldSize = 1u << 16;

/// Upper bound (exclusive) of a Send/Recv step's tag: MPI guarantees tags
/// up to 32767.
inline constexpr uint32_t kMaxTag = 1u << 15;
/// Largest number of micro-batches.
inline constexpr uint32_t kMaxMicrobatches = 1u << 16;

/// Largest number of mesh axes.
inline constexpr uint32_t kMaxMeshAxes = 16;

/// Largest byte length of a name (tensor, mesh axis, function symbol).
inline constexpr uint32_t kMaxNameLength = 1u << 16;

/// Largest byte length of the target string.
inline constexpr uint32_t kMaxTargetLength = 64;

/// Header field offsets (bytes from the start of the file).
enum HeaderOffset : uint64_t {
  kHeaderMagicOffset = 0,         ///< 8 bytes: kMagic
  kHeaderVersionOffset = 8,       ///< u32: format version
  kHeaderSectionCountOffset = 12, ///< u32: number of section table entries
  kHeaderFileSizeOffset = 16,     ///< u64: total file size in bytes
  kHeaderTableChecksumOffset = 24 ///< u64: FNV-1a-64 of the section table
};

/// Section table entry field offsets (bytes from the start of the entry).
enum SectionEntryOffset : uint64_t {
  kEntryKindOffset = 0,     ///< u32: SectionKind
  kEntryRankOffset = 4,     ///< u32: rank, or kGlobalRank
  kEntryOffsetOffset = 8,   ///< u64: payload offset from the file start
  kEntrySizeOffset = 16,    ///< u64: payload size in bytes
  kEntryChecksumOffset = 24 ///< u64: FNV-1a-64 of the payload
};

/// What a section holds.
enum class SectionKind : uint32_t {
  /// Global: target, world size, mesh axes, model inputs and outputs.
  Model = 1,
  /// Per rank: the ordered buffer list, the functions and the steps.
  RankMeta = 2,
  /// Per rank: the code (an ELF shared object for target `cpu`).
  RankCode = 3,
  /// Per rank: raw little-endian weight bytes, each weight 64-byte aligned.
  RankWeights = 4,
};

/// The on-disk code of a buffer role in a RANK_META buffer record (u32).
enum class BufferRoleCode : uint32_t {
  Input = 0,
  Output = 1,
  Weight = 2,
  Activation = 3,
  State = 4,
  Update = 5,
  Step = 6,
  Accumulator = 7
};

/// The on-disk code of a step kind in a RANK_META step record (u32).
enum class StepKindCode : uint32_t { Compute = 0, Send = 1, Recv = 2 };

/// The name of a section kind as the docs spell it ("MODEL", "RANK_META",
/// ...), or "UNKNOWN" for other values.
const char *sectionKindName(uint32_t kind);

/// FNV-1a 64-bit offset basis.
inline constexpr uint64_t kFnvOffsetBasis = 0xcbf29ce484222325ull;

/// FNV-1a 64-bit prime.
inline constexpr uint64_t kFnvPrime = 0x100000001b3ull;

/// FNV-1a-64 of `size` bytes at `data`, continuing from `hash` (pass the
/// result of a previous call to hash data in pieces).
uint64_t fnv1a64(const void *data, size_t size,
                 uint64_t hash = kFnvOffsetBasis);

/// `value` rounded up to a multiple of `alignment` (a power of two). The
/// caller keeps `value` far below 2^64.
constexpr uint64_t alignTo(uint64_t value, uint64_t alignment) {
  return (value + alignment - 1) & ~(alignment - 1);
}

} // namespace dnnc::plan

#endif // DNNC_RUNTIME_PLANFORMAT_H
