//===- PlanTest.cpp - plan.bin round trip and validation -------*- C++ -*-===//
//
// The DNNCPlan library: writer/reader round trips, byte-level conformance
// with docs/plan-format.md, and the reader's rejection of truncated,
// bit-flipped and inconsistent files.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Runtime/Plan.h"
#include "TestUtil.h"
#include "dnnc/Runtime/FileUtil.h"

#include <gtest/gtest.h>

using namespace dnnc;
using namespace dnnc::test;
using plan::BufferRole;
using plan::DataType;

namespace {

const std::vector<float> kWeights = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};

/// A small valid plan: two ranks, fake code, one weight each.
plan::Plan smallPlan() {
  plan::Plan p = makeAddMatmulPlan("\x7f"
                                   "ELF-not-really",
                                   kWeights, 2);
  p.ranks[1].code = "rank1-code";
  return p;
}

/// smallPlan with a device order, row blocks of input `x` and column blocks
/// of the output.
plan::Plan slicedPlan() {
  plan::Plan p = smallPlan();
  p.model.deviceOrder = {1, 0};
  for (plan::RankProgram &r : p.ranks) {
    int64_t at = int64_t(r.rank);
    r.buffers[0] =
        blockBuffer(BufferRole::Input, 0, p.model.inputs[0], {at, 0}, {1, 3});
    r.buffers[3] = blockBuffer(BufferRole::Output, 0, p.model.outputs[0],
                               {0, 2 * at}, {2, 2});
  }
  return p;
}

void expectSamePlan(const plan::Plan &a, const plan::Plan &b) {
  EXPECT_EQ(a.model.target, b.model.target);
  EXPECT_EQ(a.model.worldSize, b.model.worldSize);
  EXPECT_EQ(a.model.meshAxes, b.model.meshAxes);
  EXPECT_EQ(a.model.deviceOrder, b.model.deviceOrder);
  auto sameDesc = [](const plan::TensorDesc &x, const plan::TensorDesc &y) {
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.dtype, y.dtype);
    EXPECT_EQ(x.shape, y.shape);
  };
  ASSERT_EQ(a.model.inputs.size(), b.model.inputs.size());
  for (size_t i = 0; i < a.model.inputs.size(); ++i)
    sameDesc(a.model.inputs[i], b.model.inputs[i]);
  ASSERT_EQ(a.model.outputs.size(), b.model.outputs.size());
  for (size_t i = 0; i < a.model.outputs.size(); ++i)
    sameDesc(a.model.outputs[i], b.model.outputs[i]);
  ASSERT_EQ(a.ranks.size(), b.ranks.size());
  for (size_t r = 0; r < a.ranks.size(); ++r) {
    const plan::RankProgram &x = a.ranks[r], &y = b.ranks[r];
    EXPECT_EQ(x.rank, y.rank);
    EXPECT_EQ(x.entry, y.entry);
    EXPECT_EQ(x.code, y.code);
    EXPECT_EQ(x.weights, y.weights);
    ASSERT_EQ(x.buffers.size(), y.buffers.size());
    for (size_t i = 0; i < x.buffers.size(); ++i) {
      EXPECT_EQ(x.buffers[i].role, y.buffers[i].role);
      EXPECT_EQ(x.buffers[i].index, y.buffers[i].index);
      EXPECT_EQ(x.buffers[i].offset, y.buffers[i].offset);
      EXPECT_EQ(x.buffers[i].size, y.buffers[i].size);
      EXPECT_EQ(x.buffers[i].sliceOffsets, y.buffers[i].sliceOffsets);
      EXPECT_EQ(x.buffers[i].ownsOutput, y.buffers[i].ownsOutput);
      sameDesc(x.buffers[i].tensor, y.buffers[i].tensor);
    }
  }
}

/// Decodes `bytes` and expects an error containing `needle`.
void expectDecodeError(const std::string &bytes, const std::string &needle) {
  plan::Plan out;
  std::string error;
  EXPECT_FALSE(plan::decodePlan(bytes, out, error)) << "expected: " << needle;
  EXPECT_NE(error.find(needle), std::string::npos)
      << "error: " << error << "\nexpected to contain: " << needle;
  EXPECT_TRUE(out.ranks.empty());
}

/// Raw-encodes a (possibly invalid) plan and expects a decode error.
void expectRawPlanError(const plan::Plan &p, const std::string &needle) {
  expectDecodeError(rawFile(rawSections(p)), needle);
}

std::string encode(const plan::Plan &p) {
  std::string bytes, error;
  EXPECT_TRUE(plan::encodePlan(p, bytes, error)) << error;
  return bytes;
}

TEST(Plan, RoundTripInMemory) {
  plan::Plan p = smallPlan();
  std::string bytes = encode(p);
  plan::Plan q;
  std::string error;
  ASSERT_TRUE(plan::decodePlan(bytes, q, error)) << error;
  expectSamePlan(p, q);
}

TEST(Plan, RoundTripThroughFile) {
  TempDir dir;
  plan::Plan p = smallPlan();
  p.model.inputs[1] = desc("scalar", DataType::Int64, {});
  p.ranks[0].buffers[2] = ioBuffer(BufferRole::Input, 1, p.model.inputs[1]);
  p.ranks[1].buffers[2] = ioBuffer(BufferRole::Input, 1, p.model.inputs[1]);
  std::string error;
  ASSERT_TRUE(plan::writePlan(p, dir.file("plan.bin"), error)) << error;
  EXPECT_EQ(dir.list(), std::vector<std::string>{"plan.bin"});
  EXPECT_EQ(readBytes(dir.file("plan.bin")), encode(p));
  plan::Plan q;
  ASSERT_TRUE(plan::readPlan(dir.file("plan.bin"), q, error)) << error;
  expectSamePlan(p, q);
}

TEST(Plan, EveryDTypeAndEmptyShapes) {
  plan::Plan p;
  p.model.target = "cuda";
  p.model.worldSize = 1;
  plan::RankProgram r;
  r.entry = "_main0";
  r.code = "x";
  int32_t codes[] = {1,  2,  3,  4,  5,  6,  7,  9,  10, 11,
                     12, 13, 14, 15, 16, 17, 18, 19, 20};
  for (int32_t c : codes) {
    plan::TensorDesc t{"t" + std::to_string(c), c, {2, 0, 3}};
    p.model.inputs.push_back(t);
    r.buffers.push_back(
        ioBuffer(BufferRole::Input, uint32_t(p.model.inputs.size() - 1), t));
    plan::TensorDesc w{"w", c, {3}};
    r.buffers.push_back(
        weightBuffer(r, w, std::string(3 * plan::dtypeByteSize(c), char(c))));
  }
  p.ranks.push_back(r);
  plan::Plan q;
  std::string error;
  ASSERT_TRUE(plan::decodePlan(encode(p), q, error)) << error;
  expectSamePlan(p, q);
}

TEST(Plan, MatchesTheDocumentedLayout) {
  // The independent writer of TestUtil.h follows docs/plan-format.md; the
  // library must produce exactly the same bytes.
  plan::Plan p = smallPlan();
  std::string bytes = encode(p);
  EXPECT_EQ(bytes, rawFile(rawSections(p)));
  EXPECT_EQ(bytes.substr(0, 8), "DNNCPLAN");
  // Every payload is 64-byte aligned, and so is every weight in the file.
  for (size_t i = 0; i < 7; ++i) {
    uint64_t offset = 0;
    std::memcpy(&offset, &bytes[32 + 32 * i + 8], 8);
    EXPECT_EQ(offset % 64, 0u);
  }
}

TEST(Plan, AppendWeightAligns) {
  std::string w;
  EXPECT_EQ(plan::appendWeight(w, "abc"), 0u);
  EXPECT_EQ(plan::appendWeight(w, "defg"), 64u);
  EXPECT_EQ(plan::appendWeight(w, ""), 128u);
  EXPECT_EQ(w.size(), 128u);
  EXPECT_EQ(w.substr(64, 4), "defg");
  EXPECT_EQ(w[3], '\0');
}

TEST(Plan, ReadsOneRank) {
  plan::Plan p = smallPlan();
  std::string bytes = encode(p);
  plan::Plan q;
  std::string error;
  plan::ReadOptions options;
  options.rank = 1;
  ASSERT_TRUE(plan::decodePlan(bytes, q, error, options)) << error;
  ASSERT_EQ(q.ranks.size(), 1u);
  EXPECT_EQ(q.ranks[0].rank, 1u);
  EXPECT_EQ(q.ranks[0].code, "rank1-code");
  options.rank = 2;
  EXPECT_FALSE(plan::decodePlan(bytes, q, error, options));
  EXPECT_NE(error.find("rank 2 requested"), std::string::npos) << error;
}

TEST(Plan, EveryTruncationIsAnError) {
  std::string bytes = encode(smallPlan());
  ASSERT_GT(bytes.size(), 300u);
  for (size_t length = 0; length < bytes.size(); ++length) {
    plan::Plan out;
    std::string error;
    EXPECT_FALSE(plan::decodePlan(bytes.substr(0, length), out, error))
        << "length " << length;
    EXPECT_FALSE(error.empty());
  }
}

TEST(Plan, TruncatedFileIsAnError) {
  TempDir dir;
  std::string bytes = encode(smallPlan());
  writeBytes(dir.file("cut.bin"), bytes.substr(0, bytes.size() - 5));
  plan::Plan out;
  std::string error;
  EXPECT_FALSE(plan::readPlan(dir.file("cut.bin"), out, error));
  EXPECT_EQ(error.find("plan '" + dir.file("cut.bin") + "': file size "), 0u)
      << error;
  EXPECT_FALSE(plan::readPlan(dir.file("missing.bin"), out, error));
  EXPECT_NE(error.find("cannot open"), std::string::npos) << error;
  EXPECT_FALSE(plan::readPlan(dir.path(), out, error));
  EXPECT_NE(error.find("not a regular file"), std::string::npos) << error;
}

TEST(Plan, EveryBitFlipIsAnError) {
  std::string bytes = encode(smallPlan());
  for (size_t i = 0; i < bytes.size(); ++i) {
    for (int bit = 0; bit < 8; ++bit) {
      std::string corrupt = bytes;
      corrupt[i] = char(corrupt[i] ^ (1 << bit));
      plan::Plan out;
      std::string error;
      EXPECT_FALSE(plan::decodePlan(corrupt, out, error))
          << "byte " << i << " bit " << bit;
      EXPECT_FALSE(error.empty());
    }
  }
}

TEST(Plan, HeaderErrors) {
  std::string good = encode(smallPlan());
  expectDecodeError("", "too small");
  expectDecodeError("NOTAPLAN" + good.substr(8), "bad magic");
  std::string v1 = good;
  v1[8] = 1;
  expectDecodeError(v1, "unsupported plan.bin format version 1 (this build "
                        "reads version 2)");
  std::string v3 = good;
  v3[8] = 3;
  expectDecodeError(v3, "unsupported plan.bin format version 3");
  std::string longer = good + std::string(64, '\0');
  expectDecodeError(longer, "file size mismatch");
  std::string noSections = good;
  std::memset(&noSections[12], 0, 4);
  expectDecodeError(noSections, "invalid section count 0");
  std::string manySections = good;
  std::memset(&manySections[12], 0xff, 4);
  expectDecodeError(manySections, "invalid section count");
  std::string tableTooBig = good;
  uint32_t count = 1000;
  std::memcpy(&tableTooBig[12], &count, 4);
  expectDecodeError(tableTooBig, "extends past the end of the file");
}

TEST(Plan, SectionTableErrors) {
  std::string good = encode(smallPlan());
  auto patch64 = [&](size_t at, uint64_t v) {
    std::string s = good;
    std::memcpy(&s[at], &v, 8);
    reseal(s);
    return s;
  };
  auto patch32 = [&](size_t at, uint32_t v) {
    std::string s = good;
    std::memcpy(&s[at], &v, 4);
    reseal(s);
    return s;
  };
  uint64_t modelOffset = 0;
  std::memcpy(&modelOffset, &good[32 + 8], 8);
  // Entry 0 is MODEL; entry 2 is RANK_CODE of rank 0.
  expectDecodeError(patch64(32 + 8, modelOffset + 1), "expected 256");
  expectDecodeError(patch64(32 + 8, uint64_t(-64)), "offset");
  expectDecodeError(patch64(32 + 16, uint64_t(1) << 62), "extends past");
  expectDecodeError(patch64(32 + 16, uint64_t(-1)), "extends past");
  expectDecodeError(patch32(32 + 0, 7), "first section must be the global");
  expectDecodeError(patch32(32 + 4, 0), "first section must be the global");
  expectDecodeError(patch32(32 + 64 + 0, 4), "expected the RANK_CODE");
  expectDecodeError(patch32(32 + 64 + 4, 1), "expected the RANK_CODE");
  std::string checksum = good;
  checksum[32 + 24] ^= 1;
  expectDecodeError(checksum, "section table checksum mismatch");
  std::string payload = good;
  payload[modelOffset] ^= 1;
  expectDecodeError(payload, "payload checksum mismatch");
  // The first byte after the MODEL payload is padding.
  uint64_t modelSize = 0;
  std::memcpy(&modelSize, &good[32 + 16], 8);
  ASSERT_NE((modelOffset + modelSize) % 64, 0u);
  std::string padding = good;
  padding[modelOffset + modelSize] = 1;
  expectDecodeError(padding, "non-zero padding byte");
}

TEST(Plan, SectionCountMustMatchWorldSize) {
  plan::Plan p = smallPlan();
  std::vector<RawSection> s = rawSections(p);
  s.resize(4); // Drop rank 1.
  expectDecodeError(rawFile(s), "world size 2 needs 7");
  s.push_back(s.back()); // A second RANK_WEIGHTS of rank 0.
  s.push_back(s.back());
  s.push_back(s.back());
  expectDecodeError(rawFile(s), "expected the RANK_META section of rank 1");
}

TEST(Plan, PayloadErrors) {
  plan::Plan p = smallPlan();
  std::vector<RawSection> s = rawSections(p);
  // A count far beyond the payload never drives an allocation.
  std::string model = s[0].payload;
  // target "cpu", world size, axis count, axis "tp", device order count.
  size_t inputCountAt = 4 + 3 + 4 + 4 + (4 + 2 + 8) + 4;
  std::string hugeCount = model;
  std::memset(&hugeCount[inputCountAt], 0xff, 4);
  std::vector<RawSection> t = s;
  t[0].payload = hugeCount;
  expectDecodeError(rawFile(t), "input count 4294967295 does not fit");
  // A string length beyond the payload.
  t = s;
  std::memset(&t[0].payload[0], 0xff, 4);
  expectDecodeError(rawFile(t), "target length 4294967295 exceeds");
  t = s;
  t[0].payload.resize(5); // The target's length and 1 of its 3 bytes.
  expectDecodeError(rawFile(t), "truncated while reading target");
  // Trailing bytes.
  t = s;
  t[0].payload += "x";
  expectDecodeError(rawFile(t), "unexpected trailing bytes");
  t = s;
  t[1].payload += "junk";
  expectDecodeError(rawFile(t), "unexpected trailing bytes");
  // Rank of a tensor.
  t = s;
  uint32_t rank = 1000;
  std::memcpy(&t[0].payload[inputCountAt + 4 + 5 + 4], &rank, 4);
  expectDecodeError(rawFile(t), "has rank 1000");
  // Invalid role.
  t = s;
  size_t roleAt = 4 + p.ranks[0].entry.size() + 4;
  t[1].payload[roleAt] = 9;
  expectDecodeError(rawFile(t), "invalid role 9");
  // Buffer count.
  t = s;
  std::memset(&t[1].payload[roleAt - 4], 0x7f, 4);
  expectDecodeError(rawFile(t), "buffer count");
}

TEST(Plan, SemanticErrors) {
  plan::Plan p = smallPlan();
  plan::Plan q = p;
  q.model.target = "";
  expectRawPlanError(q, "invalid target name");
  q = p;
  q.model.target = "CPU!";
  expectRawPlanError(q, "invalid target name");
  q = p;
  q.model.meshAxes = {{"a", 3}};
  expectRawPlanError(q, "mesh size 3 does not match world size 2");
  q = p;
  q.model.meshAxes = {{"a", 2}, {"a", 1}};
  expectRawPlanError(q, "duplicate mesh axis 'a'");
  q = p;
  q.model.meshAxes = {{"a", 0}};
  expectRawPlanError(q, "invalid size 0");
  q = p;
  q.model.inputs[0].dtype = 999;
  expectRawPlanError(q, "unsupported dtype code 999");
  q = p;
  q.model.inputs[0].dtype = int32_t(DataType::String);
  expectRawPlanError(q, "unsupported dtype code 8");
  q = p;
  q.model.inputs[0].shape = {2, -3};
  expectRawPlanError(q, "negative dimension");
  q = p;
  q.model.inputs[0].shape = {int64_t(1) << 40, int64_t(1) << 40};
  expectRawPlanError(q, "too large");
  q = p;
  q.model.inputs[1].name = "x";
  expectRawPlanError(q, "duplicate name");
  q = p;
  q.model.outputs[0].name = "";
  expectRawPlanError(q, "empty name");
  q = p;
  q.ranks[0].entry = "1abc";
  expectRawPlanError(q, "not a C identifier");
  q = p;
  q.ranks[0].code.clear();
  expectRawPlanError(q, "rank 0: no code");
  q = p;
  q.ranks[0].buffers[1].offset = 64;
  expectRawPlanError(q, "lie outside the rank's weights");
  q = p;
  q.ranks[0].buffers[1].offset = 8;
  expectRawPlanError(q, "not a multiple of 64");
  q = p;
  q.ranks[0].buffers[1].size = 44;
  expectRawPlanError(q, "size 44 does not match float32[3x4] (48 bytes)");
  q = p;
  q.ranks[0].buffers[1].index = 3;
  expectRawPlanError(q, "index must be 0 for a weight");
  q = p;
  q.ranks[0].buffers[0].index = 2;
  expectRawPlanError(q, "input index 2 is out of range");
  q = p;
  q.ranks[0].buffers[3].index = 1;
  expectRawPlanError(q, "output index 1 is out of range");
  q = p;
  q.ranks[0].buffers[0].offset = 4;
  expectRawPlanError(q, "offset must be 0");
  q = p;
  q.ranks[0].buffers[0].tensor.dtype = int32_t(DataType::Double);
  q.ranks[0].buffers[0].size = 48;
  expectRawPlanError(q, "is not a part of model input 'x'");
  q = p;
  q.ranks[0].buffers[0].tensor.shape = {3, 3};
  q.ranks[0].buffers[0].size = 36;
  expectRawPlanError(q, "is not a part of model input 'x'");
  q = p;
  q.ranks[0].buffers.push_back(q.ranks[0].buffers[3]);
  expectRawPlanError(q, "written by two buffers");
  q = p;
  q.model.worldSize = 0;
  q.model.meshAxes.clear();
  expectRawPlanError(q, "world size 0 is out of range");
}

TEST(Plan, LocalShardsOfModelTensorsAreValid) {
  plan::Plan p = smallPlan();
  for (plan::RankProgram &r : p.ranks) {
    r.buffers[0].tensor.shape = {1, 3};
    r.buffers[0].size = 12;
    r.buffers[0].sliceOffsets = {int64_t(r.rank), 0};
  }
  plan::Plan q;
  std::string error;
  ASSERT_TRUE(plan::decodePlan(encode(p), q, error)) << error;
  EXPECT_EQ(q.ranks[1].buffers[0].sliceOffsets, (std::vector<int64_t>{1, 0}));
  EXPECT_TRUE(q.ranks[0].buffers[3].ownsOutput);
  EXPECT_FALSE(q.ranks[1].buffers[3].ownsOutput);
}

TEST(Plan, SlicesAndDeviceOrderRoundTrip) {
  plan::Plan p = slicedPlan();
  std::string bytes = encode(p);
  EXPECT_EQ(bytes, rawFile(rawSections(p)));
  plan::Plan q;
  std::string error;
  ASSERT_TRUE(plan::decodePlan(bytes, q, error)) << error;
  expectSamePlan(p, q);
  // The defaults mean "whole tensor, written by this rank".
  plan::BufferDesc fresh;
  EXPECT_TRUE(fresh.sliceOffsets.empty());
  EXPECT_TRUE(fresh.ownsOutput);
  EXPECT_TRUE(plan::ModelInfo().deviceOrder.empty());
  // Only the MODEL section.
  plan::ReadOptions none;
  none.rank = plan::kNoRanks;
  ASSERT_TRUE(plan::decodePlan(bytes, q, error, none)) << error;
  EXPECT_TRUE(q.ranks.empty());
  EXPECT_EQ(q.model.deviceOrder, (std::vector<uint32_t>{1, 0}));
}

TEST(Plan, EveryTruncationAndBitFlipOfASlicedPlanIsAnError) {
  std::string bytes = encode(slicedPlan());
  for (size_t length = 0; length < bytes.size(); ++length) {
    plan::Plan out;
    std::string error;
    EXPECT_FALSE(plan::decodePlan(bytes.substr(0, length), out, error))
        << "length " << length;
  }
  for (size_t i = 0; i < bytes.size(); ++i) {
    for (int bit = 0; bit < 8; ++bit) {
      std::string corrupt = bytes;
      corrupt[i] = char(corrupt[i] ^ (1 << bit));
      plan::Plan out;
      std::string error;
      EXPECT_FALSE(plan::decodePlan(corrupt, out, error))
          << "byte " << i << " bit " << bit;
      EXPECT_FALSE(error.empty());
    }
  }
}

TEST(Plan, SliceErrors) {
  plan::Plan p = slicedPlan();
  plan::Plan q = p;
  q.ranks[1].buffers[0].sliceOffsets = {-1, 0};
  expectRawPlanError(q, "rank 1 buffer 0 (input 'x'): float32[1x3] at offsets "
                        "[-1x0] is not a part of model input 'x' float32[2x3]");
  q = p;
  q.ranks[1].buffers[0].sliceOffsets = {2, 0};
  expectRawPlanError(q, "at offsets [2x0] is not a part of model input 'x'");
  q = p;
  q.ranks[1].buffers[0].sliceOffsets = {1, 1};
  expectRawPlanError(q, "at offsets [1x1] is not a part");
  q = p;
  q.ranks[0].buffers[1].sliceOffsets = {0, 0};
  expectRawPlanError(q, "a weight has no slice offsets");
  q = p;
  q.ranks[0].buffers[1].ownsOutput = false;
  expectRawPlanError(q, "a weight has no slice offsets and ownsOutput true");
  q = p;
  q.ranks[0].buffers[2].ownsOutput = false;
  expectRawPlanError(q, "ownsOutput is false on an input");
  // Payload-level: the slice count and the owns flag.
  q = p;
  q.ranks[0].buffers[0].sliceOffsets = {0};
  expectRawPlanError(q, "buffer 0 has 1 slice offsets for a rank-2 tensor");
  std::vector<RawSection> s = rawSections(p);
  std::string meta = s[1].payload;
  // Buffer 0's owns flag follows role, index, offset, size and its tensor
  // ("x", float32, rank 2).
  size_t ownsAt = 4 + p.ranks[0].entry.size() + 4 + 24 + (4 + 1 + 4 + 4 + 16);
  ASSERT_EQ(meta[ownsAt], 1);
  s[1].payload[ownsAt] = 2;
  expectDecodeError(rawFile(s), "buffer 0 has invalid owns flag 2");
}

TEST(Plan, OutputTilingErrors) {
  plan::Plan p = slicedPlan();
  plan::Plan q = p;
  // Both ranks write the same block.
  q.ranks[1].buffers[3].sliceOffsets = {0, 0};
  expectRawPlanError(q, "model output 'out' float32[2x4]: the blocks written "
                        "by rank 0 (offsets [0x0], shape [2x2]) and rank 1 "
                        "(offsets [0x0], shape [2x2]) overlap");
  // Rank 1's block is only a replica: half the output is never written.
  q = p;
  q.ranks[1].buffers[3].ownsOutput = false;
  expectRawPlanError(q, "model output 'out' float32[2x4]: the written blocks "
                        "cover 4 of its 8 elements");
  // Rank 0 writes the whole output; rank 1's replica is not a copy of it.
  q.ranks[0].buffers[3] = ioBuffer(BufferRole::Output, 0, q.model.outputs[0]);
  expectRawPlanError(q, "the replica held by rank 1 (offsets [0x2], shape "
                        "[2x2]) (ownsOutput = false) equals no block written");
  // No rank writes the output.
  q = p;
  q.ranks[0].buffers.pop_back();
  q.ranks[1].buffers.pop_back();
  expectRawPlanError(q, "model output 'out' float32[2x4] is not written by "
                        "any rank");
  // A plan read one rank at a time cannot check the tiling.
  plan::ReadOptions one;
  one.rank = 0;
  plan::Plan r;
  std::string error;
  q = p;
  q.ranks[1].buffers[3].sliceOffsets = {0, 0};
  EXPECT_TRUE(plan::decodePlan(rawFile(rawSections(q)), r, error, one))
      << error;
}

TEST(Plan, DeviceOrderErrors) {
  plan::Plan p = slicedPlan();
  plan::Plan q = p;
  q.model.deviceOrder = {0, 0};
  expectRawPlanError(q, "device order is not a permutation of the ranks 0 .. "
                        "1 (position 1 holds rank 0)");
  q.model.deviceOrder = {0, 2};
  expectRawPlanError(q, "not a permutation");
  q.model.deviceOrder = {0};
  expectRawPlanError(q, "device order has 1 entries; expected 0 or the world "
                        "size 2");
}

/// Blocks of a rank-2 output for checkOutputBlocks.
plan::OutputBlock block(uint32_t rank, std::vector<int64_t> at,
                        std::vector<int64_t> shape, bool owns = true) {
  plan::OutputBlock b;
  b.rank = rank;
  b.offsets = std::move(at);
  b.shape = std::move(shape);
  b.owns = owns;
  return b;
}

TEST(Plan, CheckOutputBlocks) {
  plan::ModelInfo m;
  m.outputs = {desc("y", DataType::Float, {4, 4})};
  std::string error;
  auto ok = [&](std::vector<plan::OutputBlock> blocks) {
    bool result = plan::checkOutputBlocks(m, blocks, error);
    EXPECT_TRUE(result) << error;
  };
  auto bad = [&](std::vector<plan::OutputBlock> blocks,
                 const std::string &needle) {
    EXPECT_FALSE(plan::checkOutputBlocks(m, blocks, error)) << needle;
    EXPECT_NE(error.find(needle), std::string::npos) << error;
  };
  // A 2x2 grid, with replicas, and uneven intervals.
  ok({block(0, {0, 0}, {2, 2}), block(1, {0, 2}, {2, 2}),
      block(2, {2, 0}, {2, 2}), block(3, {2, 2}, {2, 2}),
      block(4, {2, 2}, {2, 2}, false)});
  ok({block(0, {0, 0}, {3, 4}), block(1, {3, 0}, {1, 4}),
      block(2, {4, 0}, {0, 4})}); // An empty block writes nothing.
  // Not a grid, but an exact tiling (checked pairwise).
  ok({block(0, {0, 0}, {2, 4}), block(1, {2, 0}, {2, 1}),
      block(2, {2, 1}, {2, 3})});
  bad({block(0, {0, 0}, {2, 4}), block(1, {2, 0}, {2, 2}),
       block(2, {1, 1}, {2, 3})},
      "overlap");
  bad({block(0, {0, 0}, {2, 4}), block(1, {2, 0}, {2, 1})},
      "the written blocks cover 10 of its 16 elements");
  bad({block(0, {0, 0}, {2, 4}), block(1, {2, 0}, {2, 4}),
       block(2, {2, 0}, {2, 4})},
      "the blocks written by rank 1 (offsets [2x0], shape [2x4]) and rank 2");
  bad({block(0, {0, 0}, {4, 4}), block(1, {3, 3}, {2, 2}, false)},
      "the block of rank 1 (offsets [3x3], shape [2x2]) lies outside it");
  bad({block(0, {0, 0}, {4, 4}), block(1, {0, 0}, {2, 2}, false)},
      "equals no block written by a rank");
  bad({block(0, {0}, {4})}, "does not match a model output");
  // An empty output needs a writer, nothing more.
  m.outputs = {desc("e", DataType::Float, {0, 4})};
  ok({block(0, {0, 0}, {0, 4}), block(1, {0, 0}, {0, 2})});
  bad({}, "model output 'e' float32[0x4] is not written by any rank");
}

TEST(Plan, WriterRejectsInvalidPlansAndLeavesNoFile) {
  TempDir dir;
  plan::Plan p = smallPlan();
  p.ranks.pop_back();
  std::string error, bytes;
  EXPECT_FALSE(plan::encodePlan(p, bytes, error));
  EXPECT_NE(error.find("world size is 2 but the plan has 1 rank programs"),
            std::string::npos)
      << error;
  EXPECT_FALSE(plan::writePlan(p, dir.file("plan.bin"), error));
  EXPECT_TRUE(dir.list().empty());
  // Unwritable destination: an error, and no temporary file anywhere.
  EXPECT_FALSE(
      plan::writePlan(smallPlan(), dir.file("no/such/dir/plan.bin"), error));
  EXPECT_NE(error.find("cannot create"), std::string::npos) << error;
  EXPECT_TRUE(dir.list().empty());
}

TEST(Plan, WriterReplacesAtomically) {
  TempDir dir;
  writeBytes(dir.file("plan.bin"), "old");
  std::string error;
  ASSERT_TRUE(plan::writePlan(smallPlan(), dir.file("plan.bin"), error));
  EXPECT_EQ(dir.list(), std::vector<std::string>{"plan.bin"});
  EXPECT_EQ(readBytes(dir.file("plan.bin")), encode(smallPlan()));
}

TEST(Plan, DescribePlan) {
  std::string text = plan::describePlan(smallPlan());
  EXPECT_NE(text.find("plan: target cpu, world size 2, mesh tp=2"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("  0 'x' float32[2x3]"), std::string::npos) << text;
  EXPECT_NE(text.find("  1 weight 'w' float32[3x4] at 0 (48 bytes)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("  3 output 0 'out' float32[2x4] replica (32 bytes)"),
            std::string::npos)
      << text;
  text = plan::describePlan(slicedPlan());
  EXPECT_NE(text.find("mesh tp=2, device order 1 0\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("  0 input 0 'x' float32[1x3] block at [1x0] (12 "
                      "bytes)"),
            std::string::npos)
      << text;
}

TEST(DataType, SizesNamesAndOverflow) {
  EXPECT_EQ(plan::dtypeByteSize(1), 4);
  EXPECT_EQ(plan::dtypeByteSize(15), 16);
  EXPECT_EQ(plan::dtypeByteSize(8), 0);
  EXPECT_EQ(plan::dtypeByteSize(21), 0);
  EXPECT_EQ(plan::dtypeByteSize(-1), 0);
  EXPECT_EQ(plan::dtypeName(11), "float64");
  EXPECT_EQ(plan::dtypeName(77), "dtype(77)");
  EXPECT_EQ(plan::formatTensorType(1, {}), "float32[]");
  uint64_t n = 0;
  EXPECT_TRUE(plan::checkedNumElements({2, 0, 5}, n));
  EXPECT_EQ(n, 0u);
  EXPECT_FALSE(plan::checkedNumElements({INT64_MAX, INT64_MAX}, n));
  EXPECT_FALSE(plan::checkedNumElements({1 << 30, 1 << 30}, n));
  EXPECT_FALSE(plan::checkedByteSize(7, {int64_t(1) << 46}, n));
  EXPECT_TRUE(plan::checkedByteSize(7, {int64_t(1) << 45}, n));
}

TEST(AtomicFile, DiscardLeavesNothing) {
  TempDir dir;
  std::string error;
  {
    plan::AtomicFile f;
    ASSERT_TRUE(f.open(dir.file("out.pb"), error)) << error;
    ASSERT_TRUE(f.write("abc", 3, error));
    EXPECT_EQ(dir.list().size(), 1u); // The temporary file.
  }
  EXPECT_TRUE(dir.list().empty());
  plan::AtomicFile g;
  ASSERT_TRUE(g.open(dir.file("out.pb"), error));
  ASSERT_TRUE(g.write("abc", 3, error));
  ASSERT_TRUE(g.commit(error)) << error;
  EXPECT_EQ(dir.list(), std::vector<std::string>{"out.pb"});
  EXPECT_EQ(readBytes(dir.file("out.pb")), "abc");
}

} // namespace
