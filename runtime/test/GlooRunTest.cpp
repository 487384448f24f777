//===- GlooRunTest.cpp - dnnc-run launched torchrun-style ------*- C++ -*-===//
//
// The plans of MpiTest.cpp (MultiRankRun.h) launched as torchrun does:
// one dnnc-run process per rank with RANK, WORLD_SIZE, LOCAL_RANK,
// MASTER_ADDR=127.0.0.1 and a free MASTER_PORT, no MPI. The collective
// kernels, the send/recv kernels and the pipeline-stage transfers then run
// on Gloo; the outputs must be exactly those of the MPI runs (the data are
// exact in every dtype). Error cases: misuse on both ranks, on one rank (it
// aborts after DNNC_RUN_ABORT_GRACE and the other, waiting in a Gloo
// collective or receive, fails at once), a load error on one rank, and
// world-size mismatches; every rank exits non-zero within seconds.
//
//===----------------------------------------------------------------------===//

#include "MultiRankRun.h"

#include <gtest/gtest.h>

using namespace dnnc;
using namespace dnnc::test;

namespace {

/// Multi-rank runs launched torchrun-style.
class GlooRun : public MultiRankRun {
protected:
  Launch launch(int ranks, const std::string &args,
                const std::string &env = "") override {
    return launchTorchrun(dir, ranks, args, env);
  }
};

TEST_F(GlooRun, TwoRankCollectives) {
  plan::Plan p = suite2Plan(code);
  writePlan(p, "plan.bin");
  std::string inputs = writeSuite2Inputs();
  Launch l = launch(2, "plan.bin " + inputs + " --output-dir out --repeat 2");
  ASSERT_EQ(l.exitCode, 0) << l.err;
  // Rank 0 alone prints the timing.
  EXPECT_EQ(std::count(l.out.begin(), l.out.end(), '\n'), 1) << l.out;
  EXPECT_EQ(l.out.compare(0, 11, "time: mean "), 0) << l.out;
  EXPECT_EQ(l.err, "");
  std::vector<HostTensor> want = suite2Expected(p);
  ASSERT_EQ(dir.list("out").size(), want.size());
  for (size_t k = 0; k < want.size(); ++k)
    expectOutput("out", int(k), want[k]);
}

TEST_F(GlooRun, FourRankMesh) {
  std::string input = writeMeshInput();
  // Row, column and whole-mesh groups; the device order changes which rank
  // holds which block, not the result.
  for (std::vector<uint32_t> order :
       {std::vector<uint32_t>{}, std::vector<uint32_t>{0, 2, 1, 3},
        std::vector<uint32_t>{3, 1, 2, 0}}) {
    SCOPED_TRACE("device order of " + std::to_string(order.size()));
    plan::Plan p = meshPlan(code, order);
    writePlan(p, "mesh.bin");
    std::string sub = "out" + std::to_string(order.empty() ? 0 : order[1]);
    Launch l = launch(4, "mesh.bin " + input + " --output-dir " + sub);
    ASSERT_EQ(l.exitCode, 0) << l.err;
    EXPECT_EQ(l.err, "");
    std::vector<HostTensor> want = meshExpected(p);
    for (size_t k = 0; k < want.size(); ++k)
      expectOutput(sub, int(k), want[k]);
  }
}

TEST_F(GlooRun, TwoRankPipeline) {
  // Rank 0 computes stage0 on each micro-batch and sends the activation
  // over Gloo; rank 1 receives it, computes stage1 and writes both blocks
  // of the output, which rank 0 assembles.
  std::string stages = readBytes(testCodePath("test_code"));
  ASSERT_FALSE(stages.empty());
  const std::vector<float> w = {1, 0, 2, -1, 0.5, 1, 0, 3, -2, 1, 1, 0};
  const std::vector<float> x = {1, 2, 3, 4, 5, 6, -1, 0.5, 2, 0, -2, 1};
  writePlan(makePipelinePlan(stages, w, 2), "pipe.bin");
  writeTensor(floatTensor("x", {4, 3}, x));
  Launch l = launch(2, "pipe.bin --input x.pb --output-dir out --repeat 3");
  ASSERT_EQ(l.exitCode, 0) << l.err;
  EXPECT_EQ(l.err, "");
  expectOutput("out", 0, floatTensor("out", {4, 4}, pipelineReference(x, w)));

  // Rank 0 fails in its first step, so rank 1 waits in a Gloo receive:
  // rank 0 reports the step and aborts after the grace period, which ends
  // rank 1's receive at once (not after DNNC_GLOO_TIMEOUT_S).
  plan::Plan broken = makePipelinePlan(stages, w, 2);
  broken.ranks[0].functions[0].symbol = "bad_gemm";
  writePlan(broken, "broken.bin");
  expectFailure(launch(2, "broken.bin --input x.pb --output-dir bad"),
                {"error: rank 0 step 0 (compute bad_gemm (mb 0)): runtime "
                 "kernel dnnc_rt_gemm_f32",
                 "error: rank 1 step 0 (recv buffer 0 (mb 0) from rank 0 tag "
                 "5): receiving 32 bytes from rank 0 (tag 5) over Gloo: ",
                 "error: rank 1: lost the connection to rank 0 (127.0.0.1:"});
  EXPECT_TRUE(dir.list("bad").empty());
}

TEST_F(GlooRun, TwoRankErrors) {
  // Misuse on both ranks alike: both report, nobody aborts.
  writePlan(twoRankPlan(code, "bad_root"), "two.bin");
  expectFailure(launch(2, "two.bin --output-dir out"),
                {"error: rank 0 (entry bad_root): runtime kernel "
                 "dnnc_rt_broadcast(axesMask=1, dtype=1, count=4, root=5): "
                 "root 5 is not an index in the group (size 2)",
                 "error: rank 1 (entry bad_root)"});

  // Misuse on rank 1 only: rank 0 waits in the Gloo all_reduce, so rank 1
  // reports, waits DNNC_RUN_ABORT_GRACE (1 s) and aborts; rank 0's
  // all_reduce then fails on the closed connection (and the agreement has
  // rank 1's status already).
  writePlan(twoRankPlan(code, "diverge"), "diverge.bin");
  expectFailure(launch(2, "diverge.bin --output-dir out"),
                {"error: rank 1 (entry diverge): runtime kernel "
                 "dnnc_rt_all_reduce(axesMask=1, dtype=8, op=0, count=4): "
                 "unsupported dtype 8",
                 "error: rank 0 (entry diverge): runtime kernel "
                 "dnnc_rt_all_reduce(axesMask=1, dtype=1, op=0, count=4): "
                 "allreduce over the Gloo context of ranks 0 and 1 failed: "});

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

TEST_F(GlooRun, WorldMismatch) {
  writePlan(twoRankPlan(code, "bad_root"), "two.bin");
  // RANK=0 WORLD_SIZE=1 is a process alone.
  expectFailure(launch(1, "two.bin --output-dir out"),
                {"error: plan.bin needs 2 ranks (mesh tp=2) but dnnc-run runs "
                 "as a single process"});
  std::string input = writeMeshInput();
  writePlan(meshPlan(code, {}), "mesh.bin");
  // A 4-rank plan as WORLD_SIZE=2: both say so.
  expectFailure(launch(2, "mesh.bin " + input + " --output-dir out"),
                {"error: rank 0: plan.bin needs 4 ranks (mesh dp=2xtp=2) but "
                 "dnnc-run was launched as 2 processes (RANK/WORLD_SIZE over "
                 "TCP, ",
                 "error: rank 1: plan.bin needs 4 ranks"});
  EXPECT_TRUE(dir.list("out").empty());
}

} // namespace
