//===- MultiRankRun.h - dnnc-run on several ranks, for tests ---*- C++ -*-===//
//
// Shared by MpiTest.cpp (mpirun) and GlooRunTest.cpp (torchrun-style
// launches over Gloo): hand-written plans over test/Inputs/collectives_code.c
// (compiled at build time), which calls every collective kernel with known
// data — a 2-rank suite (mesh tp=2), a 4-rank suite (mesh dp=2 x tp=2 with
// any device order) and small 2-rank plans for the error cases — with their
// inputs and expected outputs, and a fixture that writes them, launches
// dnnc-run and checks what rank 0 assembled.
//
//===----------------------------------------------------------------------===//

#ifndef DNNC_RUNTIME_TEST_MULTIRANKRUN_H
#define DNNC_RUNTIME_TEST_MULTIRANKRUN_H

#include "ForkedWorld.h"
#include "TestUtil.h"
#include "dnnc/Runtime/TensorProto.h"

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <sys/wait.h>
#include <unistd.h>

namespace dnnc::test {

using plan::BufferRole;
using plan::DataType;
using rt::HostTensor;

/// Bits of a float16 or bfloat16 for a float that it represents exactly.
inline uint16_t exactHalf(float f, bool bf16) {
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
inline HostTensor makeTensor(const std::string &name, DataType dtype,
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
  /// The launcher's exit code; -1 when killed by a signal.
  int exitCode = -1;
  /// Its duration.
  double seconds = 0;
  /// What the ranks wrote to stdout and stderr.
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

/// Runs `dnnc-run ARGS` as `ranks` processes launched torchrun-style in
/// `dir` (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR=127.0.0.1, a free
/// MASTER_PORT, and the assignments of `env`), each under `timeout -k 5
/// 60`. The exit code is the first non-zero one (rank order); `out` and
/// `err` concatenate the ranks' streams in rank order.
inline Launch launchTorchrun(const TempDir &dir, int ranks,
                             const std::string &args,
                             const std::string &env) {
  std::string port = std::to_string(freePort());
  std::string script = "cd '" + dir.path() + "' || exit 99; pids=;";
  for (int r = 0; r < ranks; ++r) {
    std::string rank = std::to_string(r);
    script += " env -u OMPI_COMM_WORLD_RANK -u OMPI_COMM_WORLD_SIZE -u "
              "PMI_RANK -u PMI_SIZE -u SLURM_PROCID -u SLURM_STEP_ID "
              "DNNC_RUN_ABORT_GRACE=1 RANK=" +
              rank + " WORLD_SIZE=" + std::to_string(ranks) +
              " LOCAL_RANK=" + rank + " MASTER_ADDR=127.0.0.1 MASTER_PORT=" +
              port + " " + env + " timeout -k 5 60 '" + DNNC_RUN_PATH + "' " +
              args + " >stdout" + rank + ".txt 2>stderr" + rank +
              ".txt & pids=\"$pids $!\";";
  }
  script += " rc=0; for p in $pids; do wait $p; c=$?; "
            "if [ $rc = 0 ]; then rc=$c; fi; done; exit $rc";
  auto start = std::chrono::steady_clock::now();
  int status = std::system(script.c_str());
  Launch l;
  l.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  l.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  for (int r = 0; r < ranks; ++r) {
    std::string rank = std::to_string(r);
    l.out += readBytes(dir.file("stdout" + rank + ".txt"));
    l.err += readBytes(dir.file("stderr" + rank + ".txt"));
    ::unlink(dir.file("stdout" + rank + ".txt").c_str());
    ::unlink(dir.file("stderr" + rank + ".txt").c_str());
  }
  return l;
}

/// A test that writes plans and inputs into a fresh directory and launches
/// `dnnc-run` on several ranks; derived fixtures say how (launch()).
class MultiRankRun : public ::testing::Test {
protected:
  void SetUp() override {
    code = readBytes(testCodePath("collectives_code"));
    ASSERT_FALSE(code.empty());
  }

  /// Runs `dnnc-run ARGS` on `ranks` ranks in the directory, with the
  /// environment assignments `env` and DNNC_RUN_ABORT_GRACE=1, killing what
  /// runs after 60 s.
  virtual Launch launch(int ranks, const std::string &args,
                        const std::string &env = "") = 0;

  /// Writes `p` as `name` in the directory.
  void writePlan(const plan::Plan &p, const std::string &name) {
    std::string error;
    ASSERT_TRUE(plan::writePlan(p, dir.file(name), error)) << error;
  }

  /// Writes `t` as `NAME.pb` in the directory.
  void writeTensor(const HostTensor &t) {
    std::string bytes, error;
    ASSERT_TRUE(rt::encodeTensorProto(t, bytes, error)) << error;
    writeBytes(dir.file(t.name + ".pb"), bytes);
  }

  /// Writes the inputs of the suite2 plan; returns their --input options.
  std::string writeSuite2Inputs();

  /// Writes the input of the mesh plans; returns its --input option.
  std::string writeMeshInput();

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

  /// Where the plans, inputs and outputs go.
  TempDir dir;
  /// test/Inputs/collectives_code.c, compiled.
  std::string code;
};

//===----------------------------------------------------------------------===//
// Two ranks, mesh tp=2
//===----------------------------------------------------------------------===//

/// Element k of the [4x6] inputs.
inline double xAt(int64_t k) { return double(k) * 0.5 - 3; }
inline double dAt(int64_t k) { return double(k) * 0.25 + 1; }
inline double iAt(int64_t k) { return double(k * 3 - 35); }
inline double lAt(int64_t k) { return double(k - 11); }
inline double bfAt(int64_t k) { return double(k) * 0.25 - 2; }
inline double flagAt(int64_t k) { return k % 3 == 0; }

/// The suite2 plan of collectives_code.c.
inline plan::Plan suite2Plan(const std::string &code) {
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
inline std::vector<HostTensor> suite2Expected(const plan::Plan &p) {
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

/// A 2-rank plan running `entry` on buffers (params, out f32[4]).
inline plan::Plan twoRankPlan(const std::string &code,
                              const std::string &entry) {
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

//===----------------------------------------------------------------------===//
// Four ranks, mesh dp=2 x tp=2
//===----------------------------------------------------------------------===//

/// Element (r, c) of the [4x4] input.
inline double meshX(int64_t r, int64_t c) { return double(r * 4 + c) - 5; }

/// The suite_mesh plan with device order `order` (empty: identity).
inline plan::Plan meshPlan(const std::string &code,
                           std::vector<uint32_t> order) {
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

inline std::vector<HostTensor> meshExpected(const plan::Plan &p) {
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

inline std::string MultiRankRun::writeSuite2Inputs() {
  writeTensor(makeTensor("x", DataType::Float, {4, 6}, xAt));
  writeTensor(makeTensor("d", DataType::Double, {4, 6}, dAt));
  writeTensor(makeTensor("i", DataType::Int32, {4, 6}, iAt));
  writeTensor(makeTensor("l", DataType::Int64, {4, 6}, lAt));
  writeTensor(makeTensor("h", DataType::Float16, {4, 6}, xAt));
  writeTensor(makeTensor("bf", DataType::BFloat16, {4, 6}, bfAt));
  writeTensor(makeTensor("flags", DataType::Bool, {4, 6}, flagAt));
  return "--input x.pb --input d.pb --input i.pb --input l.pb "
         "--input h.pb --input bf.pb --input flags.pb";
}

inline std::string MultiRankRun::writeMeshInput() {
  writeTensor(makeTensor("x", DataType::Float, {4, 4},
                         [](int64_t k) { return meshX(k / 4, k % 4); }));
  return "--input x.pb";
}

} // namespace dnnc::test

#endif // DNNC_RUNTIME_TEST_MULTIRANKRUN_H
