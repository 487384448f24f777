//===- plan-reader-fuzzer.cpp - libFuzzer target for plan.bin ---*- C++ -*-===//
//
// Feeds arbitrary bytes to decodePlan (the reader behind readPlan, with every
// check of docs/plan-format.md) and, for each accepted plan, prints it and
// encodes it again: a decoded plan must re-encode, and the encoding must
// decode to the same bytes. A custom mutator repairs the file size and the
// FNV checksums of most mutants, so that mutations reach the section
// payloads' parsing and verifyPlan instead of stopping at a checksum. Built
// with DNNC_RUNTIME_FUZZERS=ON and clang
// (scripts/fuzz.sh, docs/testing.md).
//
//===----------------------------------------------------------------------===//

#include "dnnc/Runtime/Plan.h"
#include "dnnc/Runtime/PlanFormat.h"

#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

using namespace dnnc::plan;

extern "C" size_t LLVMFuzzerMutate(uint8_t *data, size_t size,
                                   size_t maxSize);

/// Reads the little-endian unsigned integer of `n` bytes at `p`.
static uint64_t load(const uint8_t *p, unsigned n) {
  uint64_t v = 0;
  for (unsigned i = 0; i < n; ++i)
    v |= uint64_t(p[i]) << (8 * i);
  return v;
}

/// Writes `v` little-endian as 8 bytes at `p`.
static void store64(uint8_t *p, uint64_t v) {
  for (unsigned i = 0; i < 8; ++i)
    p[i] = uint8_t(v >> (8 * i));
}

/// Makes the header's file size, every in-bounds payload checksum and the
/// section table checksum consistent with the bytes.
static void repairChecksums(uint8_t *data, size_t size) {
  if (size < kHeaderSize)
    return;
  store64(data + kHeaderFileSizeOffset, size);
  uint64_t count = load(data + kHeaderSectionCountOffset, 4);
  if (count > (size - kHeaderSize) / kSectionEntrySize)
    return;
  uint8_t *table = data + kHeaderSize;
  for (uint64_t i = 0; i < count; ++i) {
    uint8_t *entry = table + i * kSectionEntrySize;
    uint64_t offset = load(entry + kEntryOffsetOffset, 8);
    uint64_t length = load(entry + kEntrySizeOffset, 8);
    if (offset <= size && length <= size - offset)
      store64(entry + kEntryChecksumOffset, fnv1a64(data + offset, length));
  }
  store64(data + kHeaderTableChecksumOffset,
          fnv1a64(table, count * kSectionEntrySize));
}

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size,
                                          size_t maxSize, unsigned seed) {
  size = LLVMFuzzerMutate(data, size, maxSize);
  // One mutant in eight keeps its stale checksums, for the checks
  // themselves.
  if (seed % 8 != 0)
    repairChecksums(data, size);
  return size;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char *>(data), size);
  dnnc::plan::Plan plan;
  std::string error;
  if (!dnnc::plan::decodePlan(bytes, plan, error))
    return 0;
  // What `dnnc-run --describe` prints must not crash either.
  (void)dnnc::plan::describePlan(plan);
  std::string encoded;
  if (!dnnc::plan::encodePlan(plan, encoded, error))
    std::abort(); // A plan the reader accepts must be writable.
  dnnc::plan::Plan again;
  std::string reencoded;
  if (!dnnc::plan::decodePlan(encoded, again, error) ||
      !dnnc::plan::encodePlan(again, reencoded, error) ||
      reencoded != encoded)
    std::abort(); // Round trips are exact.
  return 0;
}
