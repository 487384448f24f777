//===- MpiTest.cpp - dnnc-run under mpirun ---------------------*- C++ -*-===//
//
// Multi-rank runs of hand-written plans (MultiRankRun.h):
// test/Inputs/collectives_code.c (compiled at build time) calls every
// collective kernel with known data; the tests pack it into 2-rank (mesh
// tp=2) and 4-rank (mesh dp=2 x tp=2, identity and permuted device order)
// plans with sliced inputs and outputs, run `mpirun -np N dnnc-run ...`,
// and check the outputs rank 0 assembled.
// Error cases check that every rank exits non-zero with an `error:` line
// and that nothing hangs: a world size that does not match the plan, a
// load error on one rank, kernel misuse on one rank (the rank aborts the
// launch after DNNC_RUN_ABORT_GRACE) and on every rank.
//
// The binary exits 77 (CTest SKIP_RETURN_CODE) when mpirun is missing.
//
//===----------------------------------------------------------------------===//

#include "MultiRankRun.h"

#include <gtest/gtest.h>

using namespace dnnc;
using namespace dnnc::test;

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

/// Multi-rank runs under mpirun.
class Mpi : public MultiRankRun {
protected:
  void SetUp() override {
    MultiRankRun::SetUp();
    mpirun = mpirunPath();
    flags = launcherFlags(mpirun);
  }

  /// Runs `mpirun -np N dnnc-run ARGS` in the directory (at most 60 s).
  Launch launch(int ranks, const std::string &args,
                const std::string &env = "") override {
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

  /// The launcher and its flags.
  std::string mpirun, flags;
};

//===----------------------------------------------------------------------===//
// Two ranks, mesh tp=2
//===----------------------------------------------------------------------===//

TEST_F(Mpi, TwoRankCollectives) {
  plan::Plan p = suite2Plan(code);
  writePlan(p, "plan.bin");
  std::string inputs = writeSuite2Inputs();
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

TEST_F(Mpi, FourRankMesh) {
  writeMeshInput();
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

  writeMeshInput();
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
