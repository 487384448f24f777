//===- MpiTest.cpp - dnnc-run under mpirun ---------------------*- C++ -*-===//
//
// Multi-rank runs of hand-written plans: test/Inputs/collectives_code.c
// (compiled at build time) calls every collective kernel with known data;
// the tests pack it into 2-rank (mesh tp=2) and 4-rank (mesh dp=2 x tp=2,
// identity and permuted device order) plans with sliced inputs and outputs,
// run `mpirun -np N dnnc-run ...`, and check the outputs rank 0 assembled.
// Error cases check that every rank exits non-zero with an `error:` line
// and that nothing hangs: a world size that does not match the plan, a
// load error on one rank, kernel misuse on one rank (the rank aborts the
// launch after DNNC_RUN_ABORT_GRACE) and on every rank.
//
// The binary exits 77 (CTest SKIP_RETURN_CODE) when mpirun is missing.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"
#include "dnnc/Runtime/TensorProto.h"

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <sys/wait.h>
#include <unistd.h>

using namespace dnnc;
using namespace dnnc::test;
using plan::BufferRole;
using plan::DataType;
using rt::HostTensor;

namespace {

/// The MPI launcher (CMake's MPIEXEC_EXECUTABLE, else `mpirun` on PATH).
std::string mpirunPath() {
  std::string configured = DNNC_MPIEXEC;
  if (!configured.empty() && ::access(configured.c_str(), X_OK) == 0)
    return configured;
  const char *path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "");
  std::string dir;
  while (std::getline(dirs, dir, ':'))
    if (!dir.empty() && ::access((dir + "/mpirun").c_str(), X_OK) == 0)
      return dir + "/mpirun";
  return "";
}

/// Extra launcher flags: Open MPI refuses root and more ranks than cores
/// without them.
std::string launcherFlags(const std::string &mpirun) {
  std::string version;
  if (FILE *p = ::popen(("'" + mpirun + "' --version 2>&1").c_str(), "r")) {
    char buf[256];
    while (std::fgets(buf, sizeof(buf), p))
      version += buf;
    ::pclose(p);
  }
  if (version.find("Open MPI") != std::string::npos ||
      version.find("OpenRTE") != std::string::npos)
    return "--allow-run-as-root --oversubscribe";
  return "";
}

/// Bits of a float16 or bfloat16 for a float that it represents exactly.
uint16_t exactHalf(float f, bool bf16) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  if (bf16)
    return uint16_t(bits >> 16);
  if ((bits & 0x7fffffff) == 0)
    return uint16_t(bits >> 16);
  uint16_t sign = uint16_t((bits >> 16) & 0x8000);
  int exponent = int((bits >> 23) & 0xff) - 127 + 15;
  return sign | uint16_t(exponent << 10) | uint16_t((bits & 0x7fffff) >> 13);
}

/// A tensor of `dtype` and `shape` whose element k is `value(k)` (converted
/// to the dtype).
HostTensor makeTensor(const std::string &name, DataType dtype,
                      std::vector<int64_t> shape,
                      const std::function<double(int64_t)> &value) {
  HostTensor t;
  t.name = name;
  t.dtype = int32_t(dtype);
  t.shape = std::move(shape);
  uint64_t n = 1;
  for (int64_t d : t.shape)
    n *= uint64_t(d);
  for (uint64_t k = 0; k < n; ++k) {
    double v = value(int64_t(k));
    auto put = [&](auto x) {
      t.data.append(reinterpret_cast<const char *>(&x), sizeof(x));
    };
    switch (dtype) {
    case DataType::Float:
      put(float(v));
      break;
    case DataType::Double:
      put(v);
      break;
    case DataType::Int32:
      put(int32_t(v));
      break;
    case DataType::Int64:
      put(int64_t(v));
      break;
    case DataType::Bool:
      put(uint8_t(v != 0));
      break;
    case DataType::Float16:
      put(exactHalf(float(v), false));
      break;
    case DataType::BFloat16:
      put(exactHalf(float(v), true));
      break;
    default:
      ADD_FAILURE() << "dtype";
    }
  }
  return t;
}

/// The result of one launch.
struct Launch {
  int exitCode = -1;
  double seconds = 0;
  std::string out, err;
  /// Lines of `err` starting with "error: ".
  std::vector<std::string> errorLines() const {
    std::vector<std::string> lines;
    std::stringstream s(err);
    std::string line;
    while (std::getline(s, line))
      if (line.compare(0, 7, "error: ") == 0)
        lines.push_back(line);
    return lines;
  }
};

class Mpi : public ::testing::Test {
protected:
  void SetUp() override {
    code = readBytes(testCodePath("collectives_code"));
    ASSERT_FALSE(code.empty());
    mpirun = mpirunPath();
    flags = launcherFlags(mpirun);
  }

  void writePlan(const plan::Plan &p, const std::string &name) {
    std::string error;
    ASSERT_TRUE(plan::writePlan(p, dir.file(name), error)) << error;
  }

  void writeTensor(const HostTensor &t) {
    std::string bytes, error;
    ASSERT_TRUE(rt::encodeTensorProto(t, bytes, error)) << error;
    writeBytes(dir.file(t.name + ".pb"), bytes);
  }

  /// Runs `mpirun -np N dnnc-run ARGS` in the directory (at most 60 s).
  Launch launch(int ranks, const std::string &args,
                const std::string &env = "") {
    std::string command = "cd '" + dir.path() + "' && DNNC_RUN_ABORT_GRACE=1 " +
                          env + " timeout -k 5 60 '" + mpirun + "' " + flags +
                          " -np " + std::to_string(ranks) + " '" +
                          DNNC_RUN_PATH + "' " + args +
                          " >stdout.txt 2>stderr.txt";
    auto start = std::chrono::steady_clock::now();
    int status = std::system(command.c_str());
    Launch l;
    l.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    l.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    if (std::getenv("DNNC_MPI_TEST_VERBOSE"))
      std::printf("mpirun -np %d dnnc-run %s: %.2f s\n", ranks, args.c_str(),
                  l.seconds);
    l.out = readBytes(dir.file("stdout.txt"));
    l.err = readBytes(dir.file("stderr.txt"));
    ::unlink(dir.file("stdout.txt").c_str());
    ::unlink(dir.file("stderr.txt").c_str());
    return l;
  }

  /// Expects output K in `sub` to equal `want` (name, dtype, shape, bytes).
  void expectOutput(const std::string &sub, int k, const HostTensor &want) {
    HostTensor got;
    std::string error;
    ASSERT_TRUE(rt::decodeTensorProto(
        readBytes(dir.file(sub + "/output_" + std::to_string(k) + ".pb")), got,
        error))
        << "output " << k << ": " << error;
    EXPECT_EQ(got.name, want.name) << "output " << k;
    EXPECT_EQ(got.dtype, want.dtype) << "output " << k;
    EXPECT_EQ(got.shape, want.shape) << "output " << k;
    EXPECT_TRUE(got.data == want.data)
        << "output " << k << " ('" << want.name << "') differs";
  }

  /// Expects a failed launch: non-zero exit within `maxSeconds`, and an
  /// `error:` line containing each of `needles` (one per failing rank).
  void expectFailure(const Launch &l, const std::vector<std::string> &needles,
                     double maxSeconds = 15) {
    EXPECT_NE(l.exitCode, 0) << l.err;
    EXPECT_NE(l.exitCode, 124) << "timed out (hang): " << l.err;
    EXPECT_LT(l.seconds, maxSeconds) << l.err;
    std::vector<std::string> lines = l.errorLines();
    EXPECT_EQ(lines.size(), needles.size()) << l.err;
    for (const std::string &needle : needles) {
      bool found = false;
      for (const std::string &line : lines)
        found = found || line.find(needle) != std::string::npos;
      EXPECT_TRUE(found) << "no error line contains: " << needle << "\n"
                         << l.err;
    }
    EXPECT_EQ(l.out, "");
  }

  TempDir dir;
  std::string code, mpirun, flags;
};

//===----------------------------------------------------------------------===//
// Two ranks, mesh tp=2
//===----------------------------------------------------------------------===//

/// Element k of the [4x6] inputs.
double xAt(int64_t k) { return double(k) * 0.5 - 3; }
double dAt(int64_t k) { return double(k) * 0.25 + 1; }
double iAt(int64_t k) { return double(k * 3 - 35); }
double lAt(int64_t k) { return double(k - 11); }
double bfAt(int64_t k) { return double(k) * 0.25 - 2; }
double flagAt(int64_t k) { return k % 3 == 0; }

/// The suite2 plan of collectives_code.c.
plan::Plan suite2Plan(const std::string &code) {
  plan::Plan p;
  p.model.target = "cpu";
  p.model.worldSize = 2;
  p.model.meshAxes = {{"tp", 2}};
  p.model.inputs = {desc("x", DataType::Float, {4, 6}),
                    desc("d", DataType::Double, {4, 6}),
                    desc("i", DataType::Int32, {4, 6}),
                    desc("l", DataType::Int64, {4, 6}),
                    desc("h", DataType::Float16, {4, 6}),
                    desc("bf", DataType::BFloat16, {4, 6}),
                    desc("flags", DataType::Bool, {4, 6})};
  p.model.outputs = {desc("ops_f32", DataType::Float, {5, 2, 6}),
                     desc("ops_f64", DataType::Double, {5, 2, 6}),
                     desc("ops_i32", DataType::Int32, {5, 2, 6}),
                     desc("ops_i64", DataType::Int64, {5, 2, 6}),
                     desc("ops_f16", DataType::Float16, {2, 2, 6}),
                     desc("ops_bf16", DataType::BFloat16, {2, 2, 6}),
                     desc("gather_rows", DataType::Float, {4, 6}),
                     desc("gather_cols", DataType::Float, {2, 12}),
                     desc("rs", DataType::Float, {2, 6}),
                     desc("a2a_10", DataType::Float, {4, 6}),
                     desc("a2a_01", DataType::Float, {2, 12}),
                     desc("bcast", DataType::Float, {2, 6}),
                     desc("p2p_at0", DataType::Int64, {2, 6}),
                     desc("p2p_at1", DataType::Int64, {2, 6}),
                     desc("gather_bool", DataType::Bool, {4, 6}),
                     desc("rs_mean_bf16", DataType::BFloat16, {2, 6}),
                     desc("group_index", DataType::Int64, {2, 2})};
  const auto &out = p.model.outputs;
  for (int64_t r = 0; r < 2; ++r) {
    plan::RankProgram prog;
    prog.rank = uint32_t(r);
    prog.code = code;
    prog.buffers.push_back(weightBuffer(prog,
                                        desc("params", DataType::Int64, {2}),
                                        bytesOf(std::vector<int64_t>{r, 0})));
    for (uint32_t i = 0; i < p.model.inputs.size(); ++i)
      prog.buffers.push_back(blockBuffer(
          BufferRole::Input, i, p.model.inputs[i], {2 * r, 0}, {2, 6}));
    bool first = r == 0;
    auto whole = [&](uint32_t k, bool owns) {
      plan::BufferDesc b = ioBuffer(BufferRole::Output, k, out[k]);
      b.ownsOutput = owns;
      prog.buffers.push_back(b);
    };
    for (uint32_t k = 0; k <= 7; ++k)
      whole(k, first);
    prog.buffers.push_back(
        blockBuffer(BufferRole::Output, 8, out[8], {0, 3 * r}, {2, 3}));
    prog.buffers.push_back(
        blockBuffer(BufferRole::Output, 9, out[9], {0, 3 * r}, {4, 3}));
    prog.buffers.push_back(
        blockBuffer(BufferRole::Output, 10, out[10], {r, 0}, {1, 12}));
    whole(11, first);
    whole(first ? 12 : 13, true);
    whole(14, first);
    prog.buffers.push_back(
        blockBuffer(BufferRole::Output, 15, out[15], {r, 0}, {1, 6}));
    prog.buffers.push_back(
        blockBuffer(BufferRole::Output, 16, out[16], {r, 0}, {1, 2}));
    plan::setSingleFunction(prog, "suite2");
    p.ranks.push_back(std::move(prog));
  }
  return p;
}

/// The expected outputs of suite2: element j of a rank's block is element
/// j (rank 0) or 12 + j (rank 1) of the [4x6] input.
std::vector<HostTensor> suite2Expected(const plan::Plan &p) {
  const auto &o = p.model.outputs;
  auto ops = [](double a, double b, int op, bool integer) {
    switch (op) {
    case 0:
      return a + b;
    case 1:
      return std::max(a, b);
    case 2:
      return std::min(a, b);
    case 3:
      return a * b;
    default:
      return integer ? double(int64_t(a + b) / 2) : (a + b) / 2;
    }
  };
  auto opTable = [&](const plan::TensorDesc &t, double (*at)(int64_t),
                     bool integer) {
    return makeTensor(t.name, DataType(t.dtype), t.shape, [&](int64_t k) {
      int64_t op = k / 12, j = k % 12;
      return ops(at(j), at(12 + j), int(op), integer);
    });
  };
  auto half = [&](const plan::TensorDesc &t, double (*at)(int64_t)) {
    return makeTensor(t.name, DataType(t.dtype), t.shape, [&](int64_t k) {
      int64_t op = k / 12 == 0 ? 0 : 4, j = k % 12;
      return ops(at(j), at(12 + j), int(op), false);
    });
  };
  std::vector<HostTensor> e;
  e.push_back(opTable(o[0], xAt, false));
  e.push_back(opTable(o[1], dAt, false));
  e.push_back(opTable(o[2], iAt, true));
  e.push_back(opTable(o[3], lAt, true));
  e.push_back(half(o[4], xAt));
  e.push_back(half(o[5], bfAt));
  auto t = [&](int k, std::function<double(int64_t)> f) {
    e.push_back(makeTensor(o[k].name, DataType(o[k].dtype), o[k].shape, f));
  };
  t(6, xAt);
  t(7, [](int64_t k) { // [2x12]: row r = rank 0's row r, rank 1's row r.
    int64_t r = k / 12, c = k % 12;
    return xAt(c < 6 ? r * 6 + c : 12 + r * 6 + c - 6);
  });
  t(8, [](int64_t k) { return xAt(k) + xAt(12 + k); });
  t(9, xAt);
  t(10, [](int64_t k) {
    int64_t r = k / 12, c = k % 12;
    return xAt(c < 6 ? r * 6 + c : 12 + r * 6 + c - 6);
  });
  t(11, [](int64_t k) { return xAt(12 + k); });
  t(12, [](int64_t k) { return lAt(12 + k); });
  t(13, lAt);
  t(14, flagAt);
  t(15, [](int64_t k) { return (bfAt(k) + bfAt(12 + k)) / 2; });
  // Row r: rank r's index alone (mask 0) and in the tp group (mask 1).
  t(16, [](int64_t k) { return k % 2 == 0 ? 0 : k / 2; });
  return e;
}

TEST_F(Mpi, TwoRankCollectives) {
  plan::Plan p = suite2Plan(code);
  writePlan(p, "plan.bin");
  writeTensor(makeTensor("x", DataType::Float, {4, 6}, xAt));
  writeTensor(makeTensor("d", DataType::Double, {4, 6}, dAt));
  writeTensor(makeTensor("i", DataType::Int32, {4, 6}, iAt));
  writeTensor(makeTensor("l", DataType::Int64, {4, 6}, lAt));
  writeTensor(makeTensor("h", DataType::Float16, {4, 6}, xAt));
  writeTensor(makeTensor("bf", DataType::BFloat16, {4, 6}, bfAt));
  writeTensor(makeTensor("flags", DataType::Bool, {4, 6}, flagAt));
  std::string inputs = "--input x.pb --input d.pb --input i.pb --input l.pb "
                       "--input h.pb --input bf.pb --input flags.pb";
  Launch l = launch(2, "plan.bin " + inputs + " --output-dir out --repeat 2");
  ASSERT_EQ(l.exitCode, 0) << l.err;
  // Rank 0 alone prints the timing.
  EXPECT_EQ(std::count(l.out.begin(), l.out.end(), '\n'), 1) << l.out;
  EXPECT_EQ(l.out.compare(0, 11, "time: mean "), 0) << l.out;
  EXPECT_TRUE(l.errorLines().empty()) << l.err;
  std::vector<HostTensor> want = suite2Expected(p);
  ASSERT_EQ(dir.list("out").size(), want.size());
  for (size_t k = 0; k < want.size(); ++k)
    expectOutput("out", int(k), want[k]);
}

//===----------------------------------------------------------------------===//
// Two pipeline stages
//===----------------------------------------------------------------------===//

TEST_F(Mpi, TwoRankPipeline) {
  // Rank 0 computes stage0 on each micro-batch and sends the activation;
  // rank 1 receives it, computes stage1 and writes both blocks of the
  // output, which rank 0 assembles.
  std::string stages = readBytes(testCodePath("test_code"));
  ASSERT_FALSE(stages.empty());
  const std::vector<float> w = {1, 0, 2, -1, 0.5, 1, 0, 3, -2, 1, 1, 0};
  const std::vector<float> x = {1, 2, 3, 4, 5, 6, -1, 0.5, 2, 0, -2, 1};
  writePlan(makePipelinePlan(stages, w, 2), "pipe.bin");
  writeTensor(floatTensor("x", {4, 3}, x));
  Launch l = launch(2, "pipe.bin --input x.pb --output-dir out --repeat 3");
  ASSERT_EQ(l.exitCode, 0) << l.err;
  EXPECT_TRUE(l.errorLines().empty()) << l.err;
  expectOutput("out", 0, floatTensor("out", {4, 4}, pipelineReference(x, w)));

  // Rank 0 fails in its first step, so rank 1 waits in a receive that
  // never completes: rank 0 reports the step and aborts the launch after
  // the grace period.
  plan::Plan broken = makePipelinePlan(stages, w, 2);
  broken.ranks[0].functions[0].symbol = "bad_gemm";
  writePlan(broken, "broken.bin");
  expectFailure(launch(2, "broken.bin --input x.pb --output-dir bad"),
                {"error: rank 0 step 0 (compute bad_gemm (mb 0)): runtime "
                 "kernel dnnc_rt_gemm_f32"});
  EXPECT_TRUE(dir.list("bad").empty());

  // A plan for two ranks launched on one: refused before any step runs.
  Launch one = launch(1, "pipe.bin --input x.pb --output-dir out1");
  EXPECT_NE(one.exitCode, 0);
  EXPECT_NE(one.err.find("error: "), std::string::npos) << one.err;
}

/// A 2-rank plan running `entry` on buffers (params, out f32[4]).
plan::Plan twoRankPlan(const std::string &code, const std::string &entry) {
  plan::Plan p;
  p.model.target = "cpu";
  p.model.worldSize = 2;
  p.model.meshAxes = {{"tp", 2}};
  p.model.outputs = {desc("o", DataType::Float, {4})};
  for (int64_t r = 0; r < 2; ++r) {
    plan::RankProgram prog;
    prog.rank = uint32_t(r);
    prog.code = code;
    prog.buffers.push_back(weightBuffer(prog,
                                        desc("params", DataType::Int64, {2}),
                                        bytesOf(std::vector<int64_t>{r, 0})));
    prog.buffers.push_back(ioBuffer(BufferRole::Output, 0, p.model.outputs[0]));
    prog.buffers.back().ownsOutput = r == 0;
    plan::setSingleFunction(prog, entry);
    p.ranks.push_back(std::move(prog));
  }
  return p;
}

TEST_F(Mpi, TwoRankErrors) {
  // Misuse on both ranks alike: both report, nobody aborts.
  writePlan(twoRankPlan(code, "bad_root"), "two.bin");
  Launch l = launch(2, "two.bin --output-dir out");
  expectFailure(l, {"error: rank 0 (entry bad_root): runtime kernel "
                    "dnnc_rt_broadcast(axesMask=1, dtype=1, count=4, root=5): "
                    "root 5 is not an index in the group (size 2)",
                    "error: rank 1 (entry bad_root)"});
  EXPECT_EQ(l.err.find("MPI_ABORT"), std::string::npos) << l.err;

  // Misuse on rank 1 only: rank 0 waits in the all_reduce, so rank 1
  // reports, waits DNNC_RUN_ABORT_GRACE (1 s) and aborts the launch.
  writePlan(twoRankPlan(code, "diverge"), "diverge.bin");
  expectFailure(launch(2, "diverge.bin --output-dir out"),
                {"error: rank 1 (entry diverge): runtime kernel "
                 "dnnc_rt_all_reduce(axesMask=1, dtype=8, op=0, count=4): "
                 "unsupported dtype 8"});

  // A load error on rank 1 only: rank 1 reports it, every rank exits
  // non-zero.
  plan::Plan broken = twoRankPlan(code, "bad_root");
  broken.ranks[1].code = "not an ELF object";
  writePlan(broken, "broken.bin");
  expectFailure(launch(2, "broken.bin --output-dir out"),
                {"error: rank 1: the code of rank 1 is not an ELF shared "
                 "object"});
  // No output file from any failed launch.
  EXPECT_TRUE(dir.list("out").empty());
}

//===----------------------------------------------------------------------===//
// Four ranks, mesh dp=2 x tp=2
//===----------------------------------------------------------------------===//

/// Element (r, c) of the [4x4] input.
double meshX(int64_t r, int64_t c) { return double(r * 4 + c) - 5; }

/// The suite_mesh plan with device order `order` (empty: identity).
plan::Plan meshPlan(const std::string &code, std::vector<uint32_t> order) {
  plan::Plan p;
  p.model.target = "cpu";
  p.model.worldSize = 4;
  p.model.meshAxes = {{"dp", 2}, {"tp", 2}};
  p.model.deviceOrder = order;
  p.model.inputs = {desc("x", DataType::Float, {4, 4})};
  p.model.outputs = {
      desc("row_sum", DataType::Float, {4, 2}),
      desc("col_sum", DataType::Float, {2, 4}),
      desc("all_sum", DataType::Float, {2, 2}),
      desc("gather_tp", DataType::Float, {4, 4}),
      desc("gather_all", DataType::Float, {8, 2}),
      desc("bcast", DataType::Float, {2, 2}),
      desc("rs", DataType::Float, {2, 4}),
      desc("a2a", DataType::Float, {8, 2}),
      desc("group_index", DataType::Int64, {4, 4}),
  };
  const auto &o = p.model.outputs;
  for (uint32_t r = 0; r < 4; ++r) {
    uint32_t position = 0;
    while (!order.empty() && order[position] != r)
      ++position;
    if (order.empty())
      position = r;
    int64_t dp = position / 2, tp = position % 2;
    plan::RankProgram prog;
    prog.rank = r;
    prog.code = code;
    prog.buffers.push_back(
        weightBuffer(prog, desc("params", DataType::Int64, {2}),
                     bytesOf(std::vector<int64_t>{int64_t(r), 0})));
    prog.buffers.push_back(blockBuffer(BufferRole::Input, 0, p.model.inputs[0],
                                       {2 * dp, 2 * tp}, {2, 2}));
    auto out = [&](uint32_t k, std::vector<int64_t> at,
                   std::vector<int64_t> shape, bool owns) {
      prog.buffers.push_back(blockBuffer(
          BufferRole::Output, k, o[k], std::move(at), std::move(shape), owns));
    };
    out(0, {2 * dp, 0}, {2, 2}, tp == 0);
    out(1, {0, 2 * tp}, {2, 2}, dp == 0);
    out(2, {0, 0}, {2, 2}, position == 0);
    out(3, {2 * dp, 0}, {2, 4}, tp == 0);
    out(4, {0, 0}, {8, 2}, position == 0);
    out(5, {0, 0}, {2, 2}, position == 0);
    out(6, {dp, 2 * tp}, {1, 2}, true);
    out(7, {4 * dp, tp}, {4, 1}, true);
    out(8, {int64_t(position), 0}, {1, 4}, true);
    plan::setSingleFunction(prog, "suite_mesh");
    p.ranks.push_back(std::move(prog));
  }
  return p;
}

std::vector<HostTensor> meshExpected(const plan::Plan &p) {
  const auto &o = p.model.outputs;
  std::vector<HostTensor> e;
  auto t = [&](int k, std::function<double(int64_t, int64_t)> f) {
    int64_t cols = o[k].shape[1];
    e.push_back(makeTensor(o[k].name, DataType::Float, o[k].shape,
                           [&](int64_t i) { return f(i / cols, i % cols); }));
  };
  t(0, [](int64_t r, int64_t c) {
    return meshX(r, c) + meshX(r, 2 + c); // Sum over tp.
  });
  t(1, [](int64_t r, int64_t c) { return meshX(r, c) + meshX(2 + r, c); });
  t(2, [](int64_t r, int64_t c) {
    return meshX(r, c) + meshX(r, 2 + c) + meshX(2 + r, c) +
           meshX(2 + r, 2 + c);
  });
  t(3, meshX);
  t(4, [](int64_t row, int64_t c) { // Member k = (dp, tp) = (k/2, k%2).
    int64_t k = row / 2, r = row % 2;
    return meshX(2 * (k / 2) + r, 2 * (k % 2) + c);
  });
  t(5, [](int64_t r, int64_t c) { return meshX(2 + r, 2 + c); });
  t(6, [](int64_t r, int64_t c) { return meshX(r, c) + meshX(2 + r, c); });
  t(7, [](int64_t row, int64_t tp) {
    int64_t dp = row / 4, i = (row % 4) / 2, r = row % 2;
    return meshX(2 * dp + r, 2 * i + tp);
  });
  // Row p: the group indices, for axesMask 0 .. 3, of the rank at mesh
  // position p = (dp, tp): alone 0, in its dp group dp, in its tp group tp,
  // in the whole mesh p.
  e.push_back(makeTensor(o[8].name, DataType::Int64, o[8].shape, [](int64_t k) {
    int64_t position = k / 4, mask = k % 4;
    int64_t dp = position / 2, tp = position % 2;
    return double(mask == 0 ? 0 : mask == 1 ? dp : mask == 2 ? tp : position);
  }));
  return e;
}

TEST_F(Mpi, FourRankMesh) {
  writeTensor(makeTensor("x", DataType::Float, {4, 4},
                         [](int64_t k) { return meshX(k / 4, k % 4); }));
  // The device order changes which rank holds which block, not the result.
  for (std::vector<uint32_t> order :
       {std::vector<uint32_t>{}, std::vector<uint32_t>{0, 2, 1, 3},
        std::vector<uint32_t>{3, 1, 2, 0}}) {
    SCOPED_TRACE("device order of " + std::to_string(order.size()));
    plan::Plan p = meshPlan(code, order);
    writePlan(p, "mesh.bin");
    std::string sub = "out" + std::to_string(order.empty() ? 0 : order[1]);
    Launch l = launch(4, "mesh.bin --input x.pb --output-dir " + sub);
    ASSERT_EQ(l.exitCode, 0) << l.err;
    EXPECT_TRUE(l.errorLines().empty()) << l.err;
    std::vector<HostTensor> want = meshExpected(p);
    for (size_t k = 0; k < want.size(); ++k)
      expectOutput(sub, int(k), want[k]);
  }
}

TEST_F(Mpi, WorldMismatch) {
  // A 2-rank plan under one process of mpirun.
  writePlan(twoRankPlan(code, "bad_root"), "two.bin");
  expectFailure(launch(1, "two.bin --output-dir out"),
                {"error: plan.bin needs 2 ranks (mesh tp=2) but dnnc-run was "
                 "launched as 1 process (mpirun/srun"});

  writeTensor(makeTensor("x", DataType::Float, {4, 4},
                         [](int64_t k) { return meshX(k / 4, k % 4); }));
  writePlan(meshPlan(code, {}), "mesh.bin");
  // A 4-rank plan under 2 processes: both say so.
  expectFailure(launch(2, "mesh.bin --input x.pb --output-dir out"),
                {"error: rank 0: plan.bin needs 4 ranks (mesh dp=2xtp=2) but "
                 "dnnc-run was launched as 2 processes",
                 "error: rank 1: plan.bin needs 4 ranks"});
  // A 2-rank plan under 4 processes: all four say so.
  expectFailure(launch(4, "two.bin --output-dir out"),
                {"error: rank 0: plan.bin needs 2 ranks (mesh tp=2) but "
                 "dnnc-run was launched as 4 processes",
                 "error: rank 1: plan.bin", "error: rank 2: plan.bin",
                 "error: rank 3: plan.bin"});
  EXPECT_TRUE(dir.list("out").empty());
}

} // namespace

int main(int argc, char **argv) {
  ::testing::InitGoogleTest(&argc, argv);
  if (mpirunPath().empty()) {
    std::printf("mpirun not found: the MPI tests are skipped\n");
    return 77; // CTest SKIP_RETURN_CODE.
  }
  return RUN_ALL_TESTS();
}
