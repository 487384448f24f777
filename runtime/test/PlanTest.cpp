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
  EXPECT_EQ(a.model.microbatches, b.model.microbatches);
  EXPECT_EQ(a.model.inputMicrobatchDims, b.model.inputMicrobatchDims);
  EXPECT_EQ(a.model.outputMicrobatchDims, b.model.outputMicrobatchDims);
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
    ASSERT_EQ(x.functions.size(), y.functions.size());
    for (size_t i = 0; i < x.functions.size(); ++i) {
      EXPECT_EQ(x.functions[i].symbol, y.functions[i].symbol);
      EXPECT_EQ(x.functions[i].args, y.functions[i].args);
    }
    ASSERT_EQ(x.steps.size(), y.steps.size());
    for (size_t i = 0; i < x.steps.size(); ++i) {
      EXPECT_EQ(x.steps[i].kind, y.steps[i].kind);
      EXPECT_EQ(x.steps[i].index, y.steps[i].index);
      EXPECT_EQ(x.steps[i].microbatch, y.steps[i].microbatch);
      EXPECT_EQ(x.steps[i].peer, y.steps[i].peer);
      EXPECT_EQ(x.steps[i].tag, y.steps[i].tag);
    }
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

/// Moves the weights of every rank of `p` into pieces of at most `chunk`
/// bytes per sink call, one piece per weight buffer.
plan::Plan withWeightPieces(plan::Plan p, size_t chunk) {
  for (plan::RankProgram &r : p.ranks) {
    std::string bytes = std::move(r.weights);
    r.weights.clear();
    for (const plan::BufferDesc &b : r.buffers)
      if (b.role == plan::BufferRole::Weight)
        r.weightPieces.push_back(
            {b.offset, b.size,
             [block = bytes.substr(b.offset, b.size),
              chunk](const plan::ByteSink &sink) {
               for (size_t at = 0; at < block.size(); at += chunk)
                 sink(std::string_view(block).substr(at, chunk));
             }});
  }
  return p;
}

TEST(Plan, WeightPiecesWriteTheSameBytes) {
  TempDir dir;
  plan::Plan p = smallPlan();
  // A second weight in rank 0, so that the pieces have a gap of zeros.
  p.ranks[0].buffers.push_back(weightBuffer(
      p.ranks[0], desc("v", plan::DataType::Float, {3}), bytesOf(kWeights)
                                                            .substr(0, 12)));
  plan::setSingleFunction(p.ranks[0], "add_matmul");
  std::string expected = encode(p);
  for (size_t chunk : {size_t(1), size_t(5), size_t(1) << 30}) {
    plan::Plan pieces = withWeightPieces(p, chunk);
    EXPECT_EQ(pieces.ranks[0].weightsSize(), p.ranks[0].weights.size());
    EXPECT_EQ(encode(pieces), expected) << "chunk " << chunk;
    std::string error;
    ASSERT_TRUE(plan::writePlan(pieces, dir.file("plan.bin"), error)) << error;
    EXPECT_EQ(readBytes(dir.file("plan.bin")), expected);
    plan::Plan q;
    ASSERT_TRUE(plan::readPlan(dir.file("plan.bin"), q, error)) << error;
    expectSamePlan(p, q);
  }
}

TEST(Plan, WeightPieceErrors) {
  TempDir dir;
  std::string bytes, error;
  // A piece that produces fewer bytes than its size.
  plan::Plan p = withWeightPieces(smallPlan(), 8);
  p.ranks[1].weightPieces[0].emit = [](const plan::ByteSink &sink) {
    sink("short");
  };
  EXPECT_FALSE(plan::encodePlan(p, bytes, error));
  EXPECT_NE(error.find("rank 1: a weight piece produced a different number"),
            std::string::npos)
      << error;
  EXPECT_FALSE(plan::writePlan(p, dir.file("plan.bin"), error));
  EXPECT_TRUE(dir.list().empty());
  // Both bytes and pieces; an unaligned piece.
  p = withWeightPieces(smallPlan(), 8);
  p.ranks[0].weights = "x";
  EXPECT_FALSE(plan::encodePlan(p, bytes, error));
  EXPECT_NE(error.find("rank 0: both weight bytes and weight pieces"),
            std::string::npos)
      << error;
  p = withWeightPieces(smallPlan(), 8);
  p.ranks[0].weightPieces[0].offset = 3;
  EXPECT_FALSE(plan::encodePlan(p, bytes, error));
  EXPECT_NE(error.find("weight piece at offset 3 is unaligned"),
            std::string::npos)
      << error;
}

TEST(Plan, EveryDTypeAndEmptyShapes) {
  plan::Plan p;
  p.model.target = "cuda";
  p.model.worldSize = 1;
  plan::RankProgram r;
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
  plan::setSingleFunction(r, "_main0");
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
  expectDecodeError(v1, "unsupported plan.bin format version 1; this dnnc-run "
                        "reads version 6; rebuild the plan with this dnnc");
  std::string v5 = good;
  v5[8] = 5;
  expectDecodeError(v5, "unsupported plan.bin format version 5; this dnnc-run "
                        "reads version 6; rebuild the plan with this dnnc");
  std::string v7 = good;
  v7[8] = 7;
  expectDecodeError(v7, "unsupported plan.bin format version 7; this dnnc-run "
                        "reads version 6");
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
  size_t roleAt = 4;
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
  q.ranks[0].functions[0].symbol = "1abc";
  expectRawPlanError(q, "rank 0 function 0: symbol '1abc' is not a C "
                        "identifier");
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
  expectRawPlanError(q, "index 0 and no slice offsets without a parameter "
                        "list");
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
  expectRawPlanError(q, "index 0 and no slice offsets without a parameter "
                        "list");
  q = p;
  q.ranks[0].buffers[1].ownsOutput = false;
  expectRawPlanError(q, "ownsOutput must be true");
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
  size_t ownsAt = 4 + 24 + (4 + 1 + 4 + 4 + 16);
  ASSERT_EQ(meta[ownsAt], 1);
  s[1].payload[ownsAt] = 4;
  expectDecodeError(rawFile(s), "buffer 0 has invalid flags 4");
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
  q.ranks[0].functions[0].args.pop_back();
  q.ranks[1].functions[0].args.pop_back();
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
  EXPECT_NE(text.find("mesh tp=2, device order 1 0, micro-batches 1\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("  0 input 0 'x' float32[1x3] block at [1x0] (12 "
                      "bytes)"),
            std::string::npos)
      << text;
}

/// A valid two-stage pipelined plan (fake code): see makePipelinePlan.
plan::Plan pipelinePlan() {
  return makePipelinePlan("\x7f"
                          "ELF-stages",
                          kWeights, 2);
}

TEST(Plan, PipelineRoundTripAndLayout) {
  plan::Plan p = pipelinePlan();
  std::string bytes = encode(p);
  EXPECT_EQ(bytes, rawFile(rawSections(p)));
  plan::Plan q;
  std::string error;
  ASSERT_TRUE(plan::decodePlan(bytes, q, error)) << error;
  expectSamePlan(p, q);
  EXPECT_EQ(q.model.microbatches, 2u);
  EXPECT_EQ(q.ranks[1].steps[0].kind, plan::StepKind::Recv);
  EXPECT_EQ(q.ranks[0].buffers[2].role, BufferRole::Activation);
  // Truncations of a pipelined plan are errors too.
  for (size_t length = 0; length < bytes.size(); ++length) {
    plan::Plan out;
    EXPECT_FALSE(plan::decodePlan(bytes.substr(0, length), out, error))
        << "length " << length;
  }
  // Dims may be empty (-1 for every tensor), and a rank may use its
  // buffers in any order.
  p.model.microbatches = 1;
  p.model.inputMicrobatchDims.clear();
  p.model.outputMicrobatchDims = {-1};
  p.model.inputs[0].shape = {2, 3};
  p.model.outputs[0].shape = {2, 4};
  for (plan::RankProgram &r : p.ranks) {
    r.steps.resize(2);
    for (plan::Step &step : r.steps)
      step.microbatch = 0;
  }
  ASSERT_TRUE(plan::decodePlan(encode(p), q, error)) << error;
  expectSamePlan(p, q);
}

TEST(Plan, PipelinePayloadErrors) {
  plan::Plan p = pipelinePlan();
  std::vector<RawSection> s = rawSections(p);
  // The MODEL payload ends with the micro-batch count, two dim lists
  // (count 1, dim 0 each) and an empty parameter list: 20 bytes after the
  // micro-batch count.
  std::vector<RawSection> t = s;
  size_t mbAt = t[0].payload.size() - 24;
  std::memset(&t[0].payload[mbAt], 0, 4);
  expectDecodeError(rawFile(t), "micro-batch count 0 is out of range");
  t = s;
  std::memset(&t[0].payload[mbAt + 4], 0x7f, 4);
  expectDecodeError(rawFile(t), "input micro-batch dims have 2139062143 "
                                "entries; expected 0 or the input count 1");
  // RANK_META of rank 1: buffers (act, out), functions, steps.
  const plan::RankProgram &r = p.ranks[1];
  std::string meta = s[4].payload;
  size_t stepsAt = meta.size() - 4 - 20 * r.steps.size();
  size_t functionsAt = stepsAt - (4 + 4 + 6 + 4 + 8);
  t = s;
  std::memset(&t[4].payload[stepsAt], 0x7f, 4);
  expectDecodeError(rawFile(t), "step count 2139062143 does not fit");
  t = s;
  t[4].payload[stepsAt + 4] = 7;
  expectDecodeError(rawFile(t), "step 0 has invalid kind 7");
  t = s;
  std::memset(&t[4].payload[functionsAt], 0xff, 4);
  expectDecodeError(rawFile(t), "function count 4294967295 does not fit");
  t = s;
  std::memset(&t[4].payload[functionsAt + 4], 0xff, 4);
  expectDecodeError(rawFile(t), "function symbol length 4294967295 exceeds");
  t = s;
  std::memset(&t[4].payload[functionsAt + 4 + 4 + 6], 0xff, 4);
  expectDecodeError(rawFile(t), "argument count 4294967295 does not fit");
  t = s;
  t[4].payload.resize(stepsAt + 4 + 7);
  expectDecodeError(rawFile(t), "step count 4 does not fit in the remaining 7 "
                                "bytes");
}

TEST(Plan, ScheduleErrors) {
  using plan::StepKind;
  plan::Plan p = pipelinePlan();
  plan::Plan q = p;
  q.ranks[1].functions.clear();
  expectRawPlanError(q, "rank 1: no functions");
  q = p;
  q.ranks[1].functions[0].args[1] = 9;
  expectRawPlanError(q, "rank 1 function 0 ('stage1'): argument 1 is buffer "
                        "9, out of range (2 buffers)");
  q = p;
  q.ranks[0].steps[0].index = 3;
  expectRawPlanError(q, "rank 0 step 0 (compute): function 3 is out of range "
                        "(1 functions)");
  q = p;
  q.ranks[0].steps[0].tag = 1;
  expectRawPlanError(q, "rank 0 step 0 (compute): peer and tag must be 0");
  q = p;
  q.ranks[0].steps[1].index = 0;
  expectRawPlanError(q, "rank 0 step 1 (send): buffer 0 is an input, not an "
                        "activation");
  q = p;
  q.ranks[0].steps[1].index = 7;
  expectRawPlanError(q, "rank 0 step 1 (send): buffer 7 is out of range");
  q = p;
  q.ranks[1].steps[3].microbatch = 2;
  expectRawPlanError(q, "rank 1 step 3 (compute): micro-batch 2 is out of "
                        "range (2 micro-batches)");
  q = p;
  q.ranks[0].steps[1].peer = 7;
  expectRawPlanError(q, "rank 0 step 1 (send): peer rank 7 is out of range "
                        "(world size 2)");
  q = p;
  q.ranks[1].steps[0].peer = 1;
  expectRawPlanError(q, "rank 1 step 0 (recv): peer rank 1 is the rank "
                        "itself");
  q = p;
  q.ranks[0].steps[1].tag = plan::kMaxTag;
  expectRawPlanError(q, "rank 0 step 1 (send): tag 32768 is out of range");
  q = p;
  q.ranks[0].buffers[2].sliceOffsets = {0, 0};
  expectRawPlanError(q, "rank 0 buffer 2 (activation 'act'): activation "
                        "buffers have index 0, offset 0, no slice offsets "
                        "and ownsOutput true");
}

TEST(Plan, MessageMatchingErrors) {
  using plan::StepKind;
  plan::Plan p = pipelinePlan();
  // Rank 1 never receives micro-batch 1.
  plan::Plan q = p;
  q.ranks[1].steps.resize(2);
  expectRawPlanError(q, "rank 0 step 3: the message from rank 0 to rank 1 "
                        "with tag 5 and micro-batch 1 has no matching recv on "
                        "rank 1");
  // A receive nobody sends.
  q = p;
  q.ranks[1].steps[2].tag = 6;
  expectRawPlanError(q, "the message from rank 0 to rank 1 with tag 5 and "
                        "micro-batch 1 has no matching recv on rank 1");
  q = p;
  q.ranks[0].steps[3].tag = 6;
  q.ranks[1].steps[2].tag = 7;
  expectRawPlanError(q, "the message from rank 0 to rank 1 with tag 6 and "
                        "micro-batch 1 has no matching recv on rank 1");
  q = p;
  q.ranks[0].steps.resize(2);
  expectRawPlanError(q, "rank 1 step 2: the message from rank 0 to rank 1 "
                        "with tag 5 and micro-batch 1 has no matching send on "
                        "rank 0");
  // Messages with one tag arrive in order: the receives must be in the
  // order of the sends.
  q = p;
  std::swap(q.ranks[1].steps[0].microbatch, q.ranks[1].steps[2].microbatch);
  expectRawPlanError(q, "rank 0 step 1 sends the message from rank 0 to rank "
                        "1 with tag 5 and micro-batch 0, but rank 1 step 0 "
                        "(the matching recv: messages with one tag arrive in "
                        "order) receives micro-batch 1");
  // Sizes differ.
  q = p;
  q.ranks[1].buffers[0].tensor.shape = {2, 2};
  q.ranks[1].buffers[0].size = 16;
  expectRawPlanError(q, "rank 0 step 1 sends 32 bytes from rank 0 to rank 1 "
                        "with tag 5 and micro-batch 0, but rank 1 step 0 "
                        "receives 16 bytes");
  // Read alone, a rank's messages cannot be matched: no error.
  plan::ReadOptions one;
  one.rank = 0;
  plan::Plan out;
  std::string error;
  q = p;
  q.ranks[1].steps.resize(2);
  EXPECT_TRUE(plan::decodePlan(rawFile(rawSections(q)), out, error, one))
      << error;
}

TEST(Plan, MicrobatchErrors) {
  plan::Plan p = pipelinePlan();
  plan::Plan q = p;
  q.model.microbatches = 0;
  std::string error;
  EXPECT_FALSE(plan::verifyPlan(q, error));
  EXPECT_NE(error.find("micro-batch count 0 is out of range (1 to 65536)"),
            std::string::npos)
      << error;
  q.model.microbatches = plan::kMaxMicrobatches + 1;
  EXPECT_FALSE(plan::verifyPlan(q, error));
  q = p;
  q.model.outputMicrobatchDims = {0, 0};
  EXPECT_FALSE(plan::verifyPlan(q, error));
  EXPECT_NE(error.find("output micro-batch dims have 2 entries; expected 0 "
                       "or the output count 1"),
            std::string::npos)
      << error;
  q = p;
  q.model.inputMicrobatchDims = {2};
  expectRawPlanError(q, "model input 0 'x' float32[4x3]: micro-batch dim 2 is "
                        "neither -1 nor a dim of the tensor");
  q = p;
  q.model.inputMicrobatchDims = {1};
  expectRawPlanError(q, "model input 0 'x' float32[4x3]: dim 1 (extent 3) is "
                        "not divisible by the 2 micro-batches");
  // A buffer must fit in its micro-batch's part of the tensor.
  q = p;
  q.ranks[0].buffers[0] = ioBuffer(BufferRole::Input, 0, q.model.inputs[0]);
  expectRawPlanError(q, "rank 0 buffer 0 (input 'x'): float32[4x3] (no slice "
                        "offsets: the whole tensor) is not a part of model "
                        "input 'x' float32[4x3] (one micro-batch's part: "
                        "[2x3])");
  // A whole-batch copy of the input holds the whole tensor, and survives a
  // round trip; micro-batch blocks are not shifted for it.
  q.ranks[0].buffers[0].wholeBatch = true;
  EXPECT_TRUE(plan::verifyPlan(q, error)) << error;
  std::string bytes;
  ASSERT_TRUE(plan::encodePlan(q, bytes, error)) << error;
  plan::Plan decoded;
  ASSERT_TRUE(plan::decodePlan(bytes, decoded, error)) << error;
  EXPECT_TRUE(decoded.ranks[0].buffers[0].wholeBatch);
  EXPECT_EQ(plan::blockOffsets(q.model, q.ranks[0].buffers[0], 1),
            (std::vector<int64_t>{0, 0}));
  // Only inputs hold the whole batch.
  q = p;
  for (plan::RankProgram &rank : q.ranks)
    for (plan::BufferDesc &b : rank.buffers)
      if (b.role == BufferRole::Output)
        b.wholeBatch = true;
  expectRawPlanError(q, "only an input may hold the whole batch");
  // Without a micro-batch dim the whole tensor is every micro-batch's.
  q = p;
  q.model.inputMicrobatchDims = {-1};
  q.ranks[0].buffers[0] = ioBuffer(BufferRole::Input, 0, q.model.inputs[0]);
  EXPECT_TRUE(plan::verifyPlan(q, error)) << error;
}

TEST(Plan, OutputBlocksPerMicrobatch) {
  plan::Plan p = pipelinePlan();
  std::vector<plan::OutputBlock> blocks =
      plan::outputBlocks(p.model, p.ranks[1]);
  ASSERT_EQ(blocks.size(), 2u);
  EXPECT_EQ(blocks[1].rank, 1u);
  EXPECT_EQ(blocks[1].microbatch, 1u);
  EXPECT_EQ(blocks[1].offsets, (std::vector<int64_t>{2, 0}));
  EXPECT_TRUE(plan::outputBlocks(p.model, p.ranks[0]).empty());
  // Slice offsets add to the micro-batch offset.
  plan::RankProgram r = p.ranks[1];
  r.buffers[1] =
      blockBuffer(BufferRole::Output, 0, p.model.outputs[0], {1, 2}, {1, 2});
  blocks = plan::outputBlocks(p.model, r);
  EXPECT_EQ(blocks[0].offsets, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(blocks[1].offsets, (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(plan::blockOffsets(p.model, p.ranks[0].buffers[0], 1),
            (std::vector<int64_t>{2, 0}));
  // Without a micro-batch dim, micro-batch 0 writes; the others are replicas.
  p.model.outputMicrobatchDims = {-1};
  p.model.outputs[0].shape = {2, 4};
  blocks = plan::outputBlocks(p.model, p.ranks[1]);
  ASSERT_EQ(blocks.size(), 2u);
  EXPECT_TRUE(blocks[0].owns);
  EXPECT_FALSE(blocks[1].owns);
  EXPECT_EQ(blocks[1].offsets, (std::vector<int64_t>{0, 0}));
  std::string error;
  EXPECT_TRUE(plan::verifyPlan(p, error)) << error;
  // Two micro-batches writing the same block of an output they cut.
  p.model.outputMicrobatchDims = {0};
  p.model.outputs[0].shape = {4, 4};
  p.ranks[0].buffers.push_back(
      blockBuffer(BufferRole::Output, 0, p.model.outputs[0], {0, 0}, {2, 4}));
  expectRawPlanError(p, "the blocks written by rank 0 (offsets [0x0], shape "
                        "[2x4]) and rank 1 (offsets [0x0], shape [2x4]) "
                        "overlap");
}

TEST(Plan, DescribePipelinePlan) {
  std::string text = plan::describePlan(pipelinePlan());
  for (const char *line :
       {"plan: target cpu, world size 2, mesh pp=2, micro-batches 2\n",
        "  0 'x' float32[4x3], micro-batch dim 0\n",
        "  0 'out' float32[4x4], micro-batch dim 0\n",
        "rank 0: code 11 bytes, weights 48 bytes, 3 buffers, 1 functions, 4 "
        "steps\n",
        "  2 activation 'act' float32[2x4] (32 bytes)\n",
        "  function 0: stage0(0, 1, 2)\n", "  step 0: compute stage0 (mb 0)\n",
        "  step 1: send buffer 2 (mb 0) to rank 1 tag 5\n",
        "  step 3: send buffer 2 (mb 1) to rank 1 tag 5\n",
        "  function 0: stage1(0, 1)\n",
        "  step 2: recv buffer 0 (mb 1) from rank 0 tag 5\n",
        "  step 3: compute stage1 (mb 1)\n"})
    EXPECT_NE(text.find(line), std::string::npos) << line << "\n" << text;
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

/// smallPlan with the buffers of a training step on each rank: an optimizer
/// state for the weight, the step number, and the updates of both.
static plan::Plan trainingPlan() {
  plan::Plan p = smallPlan();
  for (plan::RankProgram &r : p.ranks) {
    const plan::BufferDesc &weight = r.buffers[1];
    plan::BufferDesc state;
    state.role = BufferRole::State;
    state.tensor = weight.tensor;
    state.tensor.name = "w.exp_avg";
    state.size = weight.size;
    plan::BufferDesc step;
    step.role = BufferRole::Step;
    step.tensor = desc("step", DataType::Float, {});
    step.size = 4;
    plan::BufferDesc newWeight = weight;
    newWeight.role = BufferRole::Update;
    newWeight.offset = 0;
    newWeight.index = 1;
    plan::BufferDesc newState = state;
    newState.role = BufferRole::Update;
    newState.index = uint32_t(r.buffers.size());
    r.buffers.push_back(state);
    r.buffers.push_back(step);
    r.buffers.push_back(newWeight);
    r.buffers.push_back(newState);
    plan::setSingleFunction(r, r.functions[0].symbol);
  }
  return p;
}

TEST(Plan, TrainingBuffersRoundTrip) {
  plan::Plan p = trainingPlan();
  std::string bytes, error;
  ASSERT_TRUE(plan::encodePlan(p, bytes, error)) << error;
  plan::Plan back;
  ASSERT_TRUE(plan::decodePlan(bytes, back, error)) << error;
  ASSERT_EQ(back.ranks[0].buffers.size(), p.ranks[0].buffers.size());
  for (size_t i = 0; i < p.ranks[0].buffers.size(); ++i) {
    EXPECT_EQ(back.ranks[0].buffers[i].role, p.ranks[0].buffers[i].role);
    EXPECT_EQ(back.ranks[0].buffers[i].index, p.ranks[0].buffers[i].index);
  }
  std::string text = plan::describePlan(back);
  EXPECT_NE(text.find("state 'w.exp_avg' float32[3x4]"), std::string::npos)
      << text;
  EXPECT_NE(text.find("update 'w' float32[3x4] -> buffer 1"),
            std::string::npos)
      << text;
}

TEST(Plan, AccumulatorBuffers) {
  plan::Plan p = trainingPlan();
  for (plan::RankProgram &r : p.ranks) {
    plan::BufferDesc acc;
    acc.role = BufferRole::Accumulator;
    acc.tensor = desc("accumulator 0", DataType::Float, {3, 4});
    acc.size = 48;
    plan::BufferDesc update = acc;
    update.role = BufferRole::Update;
    update.index = uint32_t(r.buffers.size());
    r.buffers.push_back(acc);
    r.buffers.push_back(update);
    plan::setSingleFunction(r, r.functions[0].symbol);
  }
  std::string bytes, error;
  ASSERT_TRUE(plan::encodePlan(p, bytes, error)) << error;
  plan::Plan back;
  ASSERT_TRUE(plan::decodePlan(bytes, back, error)) << error;
  size_t acc = back.ranks[0].buffers.size() - 2;
  EXPECT_EQ(back.ranks[0].buffers[acc].role, BufferRole::Accumulator);
  EXPECT_EQ(back.ranks[0].buffers[acc + 1].index, acc);
  std::string text = plan::describePlan(back);
  EXPECT_NE(text.find("accumulator 'accumulator 0' float32[3x4]"),
            std::string::npos)
      << text;
  plan::Plan q = p;
  q.ranks[0].buffers[acc].index = 3;
  expectRawPlanError(q, "accumulator buffers have index 0, offset 0, no "
                        "slice offsets and ownsOutput true");
}

TEST(Plan, ParameterBlocks) {
  plan::Plan p = trainingPlan();
  for (plan::RankProgram &r : p.ranks)
    for (plan::BufferDesc &b : r.buffers)
      if (b.role == BufferRole::State)
        b.index = 1;
  p.model.parameters = {desc("w", DataType::Float, {3, 4}),
                        desc("w.exp_avg", DataType::Float, {3, 4})};
  std::string bytes, error;
  ASSERT_TRUE(plan::encodePlan(p, bytes, error)) << error;
  plan::Plan back;
  ASSERT_TRUE(plan::decodePlan(bytes, back, error)) << error;
  ASSERT_EQ(back.model.parameters.size(), 2u);
  EXPECT_EQ(back.model.parameters[1].name, "w.exp_avg");
  EXPECT_NE(plan::describePlan(back).find("parameters:\n  0 'w' float32[3x4]"),
            std::string::npos);
  // A block of a larger parameter.
  plan::Plan q = p;
  q.model.parameters[0].shape = {6, 4};
  for (plan::RankProgram &r : q.ranks)
    r.buffers[1].sliceOffsets = {3 * int64_t(r.rank), 0};
  ASSERT_TRUE(plan::encodePlan(q, bytes, error)) << error;
  q.ranks[1].buffers[1].sliceOffsets = {4, 0};
  expectRawPlanError(q, "float32[3x4] at offsets [4x0] is not a block of "
                        "parameter 'w' float32[6x4]");
  q = p;
  q.ranks[0].buffers[1].index = 5;
  expectRawPlanError(q, "parameter index 5 is out of range (2 parameters)");
  q = p;
  q.model.parameters[1].name = "w";
  expectRawPlanError(q, "duplicate name");
}

TEST(Plan, TrainingBufferErrors) {
  plan::Plan p = trainingPlan();
  size_t state = p.ranks[0].buffers.size() - 4;
  size_t step = state + 1, update = state + 2;
  plan::Plan q = p;
  q.ranks[0].buffers[update].index = 0; // an input
  expectRawPlanError(q, "updates buffer 0, which is not a weight, "
                        "optimizer state or accumulator");
  q = p;
  q.ranks[0].buffers[update].index = 99;
  expectRawPlanError(q, "updates buffer 99, which is not a weight");
  q = p;
  q.ranks[0].buffers[update + 1].index = 1;
  expectRawPlanError(q, "buffer 1 is updated twice");
  q = p;
  q.ranks[0].buffers[update].tensor.shape = {4, 3};
  expectRawPlanError(q, "float32[4x3] cannot update buffer 1 of "
                        "float32[3x4]");
  q = p;
  q.ranks[0].buffers[step].tensor.dtype = int32_t(DataType::Int64);
  q.ranks[0].buffers[step].size = 8;
  expectRawPlanError(q, "the step number is a float32 scalar, not int64[]");
  q = p;
  q.ranks[0].buffers[state].offset = 64;
  expectRawPlanError(q, "offset must be 0 for a state");
}
