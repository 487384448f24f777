//===- PipelineTest.cpp - Pipeline stages, schedules, simulation -*- C++
//-*-===//
//
// Part of the dnnc project.
//
//===----------------------------------------------------------------------===//
//
// Unit tests of the planner's pipeline model on profiles built by hand (a
// chain of layers with round costs) and on a made-up cluster with round
// numbers: stage times (train multipliers, recomputation), transfers, the
// pipeline formula, memory with the micro-batches each schedule keeps in
// flight, ZeRO and recomputation; the stage split (balance, cut points,
// memory caps) against brute force over every split of small random
// profiles; and the discrete-event simulation against the closed forms of
// balanced GPipe, 1F1B and interleaved pipelines.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Planner/Pipeline.h"
#include "dnnc/Planner/Simulate.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <random>
#include <set>

using namespace mlir;
using namespace dnnc;
using namespace dnnc::planner;

namespace {

/// Relative tolerance of the time and memory comparisons.
constexpr double kTolerance = 1e-9;

/// Expects `actual` to equal `expected` up to a relative `kTolerance`.
#define EXPECT_CLOSE(actual, expected)                                         \
  EXPECT_NEAR((actual), (expected), std::abs(expected) * kTolerance)

/// A made-up cluster: 2 nodes of 4 devices of 1 TFLOP/s f16 matrix work
/// (0.1 TFLOP/s on vector units), 100 GB/s of memory, 1 TB of memory
/// each; links of 10 GB/s inside a node and 1 GB/s between nodes, without
/// latency (the cost model also gets no launch overhead), so that times
/// are plain quotients.
Cluster getTestCluster() {
  Cluster cluster;
  cluster.name = "test";
  cluster.numNodes = 2;
  cluster.devicesPerNode = 4;
  DeviceSpec &device = cluster.device;
  device.name = "TestGPU";
  device.peakFlops[static_cast<int>(DType::F32)] = 1e12;
  device.peakFlops[static_cast<int>(DType::F16)] = 1e12;
  device.vectorFlops = 1e11;
  device.memoryBytes = 1000000000000ull;
  device.memoryBandwidth = 1e11;
  cluster.intraNode = {"intra", 1e10, 0};
  cluster.interNode = {"inter", 1e9, 0};
  return cluster;
}

/// The layers of a hand-built chain: each is a matmul (its weight, its
/// result) followed by a non-matrix op (its result), every value used only
/// by the next op, the last one by the return.
struct ChainSpec {
  /// Layers.
  int64_t layers = 4;
  /// FLOPs of each matmul (whole batch): 4 ms at 1 TFLOP/s.
  double matmulFlops = 4e9;
  /// Bytes of each non-matrix op (whole batch): 4 ms at 100 GB/s.
  double vectorBytes = 4e8;
  /// Result bytes of the matmul and of the non-matrix op (whole batch).
  double matmulResult = 8e6, vectorResult = 4e6;
  /// Local bytes of each layer's weight (f16).
  double weightBytes = 1e6;
};

/// Fixture: a context for element types, the test cluster, and builders of
/// profiles.
class PipelineTest : public ::testing::Test {
protected:
  /// Returns a model of the test cluster in `mode`, without launch overhead.
  CostModel getModel(Mode mode) const {
    CostModel model(cluster, mode);
    model.setLaunchOverhead(0);
    return model;
  }

  /// Returns the f16 type.
  Type getF16() { return Float16Type::get(&context); }

  /// Returns the seconds one micro-batch of a step of `m` spends adding
  /// one layer's weight gradient of `spec` to its accumulator on the test
  /// cluster (read both, write the sum, at 100 GB/s; none for one
  /// micro-batch).
  static double accumulateSeconds(const ChainSpec &spec, int64_t m) {
    return m > 1 ? 3 * spec.weightBytes / 1e11 : 0;
  }

  /// Returns the chain `spec` describes: 2 items per layer, cut points at
  /// the layer boundaries (items 2, 4, ...), `crossing[c]` the result of
  /// item c - 1.
  PlanProfile makeChain(const ChainSpec &spec) {
    PlanProfile profile;
    for (int64_t layer = 0; layer < spec.layers; ++layer) {
      ProfileWeight weight;
      weight.localBytes = spec.weightBytes;
      weight.elementBytes = 2;
      profile.weights.push_back(weight);

      ProfileItem matmul;
      matmul.name = "mm" + std::to_string(layer);
      matmul.cost = dnn::OpCost{spec.matmulFlops, 0, 0, /*isMatrix=*/true};
      matmul.elementType = getF16();
      matmul.resultBytes = spec.matmulResult;
      // The backward pass reads every result (as if each op kept its own).
      matmul.savedBytes = spec.matmulResult;
      matmul.weights.push_back(layer);
      profile.items.push_back(matmul);

      ProfileItem vector;
      vector.name = "act" + std::to_string(layer);
      vector.cost = dnn::OpCost{0, spec.vectorBytes / 2, spec.vectorBytes / 2,
                                /*isMatrix=*/false};
      vector.elementType = getF16();
      vector.resultBytes = spec.vectorResult;
      vector.savedBytes = spec.vectorResult;
      profile.items.push_back(vector);
      if (layer > 0)
        profile.cuts.push_back(2 * layer);
    }
    profile.crossing.push_back(0);
    for (const ProfileItem &item : profile.items)
      profile.crossing.push_back(item.resultBytes);
    profile.localBatch = 64;
    profile.finalize();
    return profile;
  }

  /// Returns a configuration of `stages` ranks and `microbatches`
  /// micro-batches over the inter-node link.
  PipelineConfig makeConfig(int64_t stages, int64_t microbatches,
                            Schedule schedule = Schedule::OneFOneB,
                            int64_t chunks = 1) {
    PipelineConfig config;
    config.stages = stages;
    config.chunks = chunks;
    config.microbatches = microbatches;
    config.schedule = schedule;
    config.ppLink = cluster.interNode;
    config.dpLink = cluster.intraNode;
    return config;
  }

  MLIRContext context;
  Cluster cluster = getTestCluster();
};

/// Returns the slowest virtual stage's seconds per micro-batch.
double getMaxStageSeconds(const PipelineEstimate &estimate) {
  double slowest = 0;
  for (const StageEstimate &stage : estimate.stages)
    slowest = std::max(slowest, stage.getMicrobatchSeconds());
  return slowest;
}

/// Calls `visit` with every split of `profile` into `stages` non-empty
/// stages at its cut points (boundaries from 0 to the item count).
void forEachSplit(const PlanProfile &profile, int64_t stages,
                  const std::function<void(ArrayRef<int64_t>)> &visit) {
  int64_t n = profile.items.size();
  int64_t numCuts = profile.cuts.size();
  SmallVector<int64_t> boundaries = {0};
  std::function<void(int64_t)> recurse = [&](int64_t firstCut) {
    if (static_cast<int64_t>(boundaries.size()) == stages) {
      boundaries.push_back(n);
      visit(boundaries);
      boundaries.pop_back();
      return;
    }
    for (int64_t c = firstCut; c < numCuts; ++c) {
      boundaries.push_back(profile.cuts[c]);
      recurse(c + 1);
      boundaries.pop_back();
    }
  };
  recurse(0);
}

/// Expects `boundaries` to be a split of `profile` into `stages` non-empty
/// stages at cut points: every item in exactly one stage.
void expectValidSplit(const PlanProfile &profile, ArrayRef<int64_t> boundaries,
                      int64_t stages) {
  ASSERT_EQ(static_cast<int64_t>(boundaries.size()), stages + 1);
  EXPECT_EQ(boundaries.front(), 0);
  EXPECT_EQ(boundaries.back(), static_cast<int64_t>(profile.items.size()));
  for (size_t k = 0; k + 1 < boundaries.size(); ++k)
    EXPECT_LT(boundaries[k], boundaries[k + 1]) << "stage " << k << " empty";
  for (size_t k = 1; k + 1 < boundaries.size(); ++k)
    EXPECT_TRUE(llvm::is_contained(profile.cuts, boundaries[k]))
        << "boundary " << boundaries[k] << " is not a cut point";
}

//===----------------------------------------------------------------------===//
// Schedules
//===----------------------------------------------------------------------===//

TEST_F(PipelineTest, MicrobatchesInFlight) {
  // GPipe keeps every micro-batch of the step.
  PipelineConfig gpipe = makeConfig(4, 8, Schedule::GPipe);
  for (int64_t rank = 0; rank < 4; ++rank)
    EXPECT_EQ(getMicrobatchesInFlight(gpipe, rank), 8);
  // 1F1B: p - rank, at most m.
  PipelineConfig oneFOneB = makeConfig(4, 8);
  EXPECT_EQ(getMicrobatchesInFlight(oneFOneB, 0), 4);
  EXPECT_EQ(getMicrobatchesInFlight(oneFOneB, 1), 3);
  EXPECT_EQ(getMicrobatchesInFlight(oneFOneB, 3), 1);
  oneFOneB.microbatches = 2;
  EXPECT_EQ(getMicrobatchesInFlight(oneFOneB, 0), 2);
  EXPECT_EQ(getMicrobatchesInFlight(oneFOneB, 2), 2);
  EXPECT_EQ(getMicrobatchesInFlight(oneFOneB, 3), 1);
  // Interleaved, p = 4, v = 2: Megatron-LM warms up (p - rank - 1) * 2 +
  // (v - 1) * p chunk micro-batches, plus the one in the steady state; in
  // units of the rank's v chunks: rank 0 (6 + 4 + 1) / 2, rank 3 (4 + 1) / 2.
  PipelineConfig interleaved = makeConfig(4, 8, Schedule::Interleaved, 2);
  EXPECT_DOUBLE_EQ(getMicrobatchesInFlight(interleaved, 0), 5.5);
  EXPECT_DOUBLE_EQ(getMicrobatchesInFlight(interleaved, 1), 4.5);
  EXPECT_DOUBLE_EQ(getMicrobatchesInFlight(interleaved, 3), 2.5);
  // With m = p rank 0 runs all 8 forwards of its chunks in the warm-up: the
  // whole step is in flight.
  interleaved.microbatches = 4;
  EXPECT_DOUBLE_EQ(getMicrobatchesInFlight(interleaved, 0), 4);
  EXPECT_DOUBLE_EQ(getMicrobatchesInFlight(interleaved, 3), 2.5);
}

//===----------------------------------------------------------------------===//
// Stage estimates
//===----------------------------------------------------------------------===//

TEST_F(PipelineTest, StageTimesTrain) {
  PlanProfile profile = makeChain(ChainSpec());
  CostModel model = getModel(Mode::Train);
  PipelineConfig config = makeConfig(2, 4);
  PipelineEstimate estimate =
      estimatePipeline(profile, config, {0, 4, 8}, model);
  ASSERT_EQ(estimate.stages.size(), 2u);
  // Per micro-batch (a quarter of the batch) each layer's matmul takes 1 ms
  // forward and 2 ms backward (x3 in all), its non-matrix op 1 ms forward
  // and 1 ms backward (x2); the backward adds the layer's weight gradient
  // to its accumulator.
  double a = accumulateSeconds(ChainSpec(), 4);
  const StageEstimate &first = estimate.stages[0];
  EXPECT_EQ(first.begin, 0);
  EXPECT_EQ(first.end, 4);
  EXPECT_CLOSE(first.forwardCompute, 2 * (1e-3 + 1e-3));
  EXPECT_CLOSE(first.backwardCompute, 2 * (2e-3 + 1e-3 + a));
  EXPECT_EQ(first.forwardCommunication, 0);
  EXPECT_EQ(first.backwardCommunication, 0);
  // The boundary value (4 MB, 1 MB per micro-batch) crosses the 1 GB/s
  // link forward and its gradient backward: 2 x 1 ms.
  EXPECT_CLOSE(first.transferSeconds, 2e-3);
  EXPECT_CLOSE(first.getMicrobatchSeconds(), 12e-3 + 2 * a);
  // The last stage sends nothing.
  EXPECT_EQ(estimate.stages[1].transferSeconds, 0);
  EXPECT_CLOSE(estimate.stages[1].getMicrobatchSeconds(), 10e-3 + 2 * a);

  // Recomputation runs the forward again in the backward pass.
  config.recompute = Recompute::Full;
  PipelineEstimate recomputed =
      estimatePipeline(profile, config, {0, 4, 8}, model);
  EXPECT_CLOSE(recomputed.stages[0].forwardCompute, 4e-3);
  EXPECT_CLOSE(recomputed.stages[0].backwardCompute, 6e-3 + 4e-3 + 2 * a);
}

TEST_F(PipelineTest, FixedOperandsAreReadWholePerMicrobatch) {
  // A non-matrix op of 4e8 bytes, half of them a weight's: each of 4
  // micro-batches moves a quarter of the other half and all of the weight.
  ChainSpec spec;
  spec.layers = 1;
  PlanProfile profile = makeChain(spec);
  profile.items[1].fixedBytes = 2e8;
  CostModel model = getModel(Mode::Infer);
  PipelineEstimate estimate =
      estimatePipeline(profile, makeConfig(1, 4), {0, 2}, model);
  // The matmul: 1 ms per micro-batch; the op (5e7 + 2e8) B at 100 GB/s.
  EXPECT_CLOSE(estimate.stages[0].forwardCompute, 1e-3 + 2.5e-3);
  // One micro-batch: the whole op, 4 ms.
  estimate = estimatePipeline(profile, makeConfig(1, 1), {0, 2}, model);
  EXPECT_CLOSE(estimate.stages[0].forwardCompute, 4e-3 + 4e-3);
}

TEST_F(PipelineTest, StageTimesInfer) {
  PlanProfile profile = makeChain(ChainSpec());
  CostModel model = getModel(Mode::Infer);
  PipelineConfig config = makeConfig(2, 4, Schedule::GPipe);
  PipelineEstimate estimate =
      estimatePipeline(profile, config, {0, 4, 8}, model);
  EXPECT_CLOSE(estimate.stages[0].forwardCompute, 4e-3);
  EXPECT_EQ(estimate.stages[0].backwardCompute, 0);
  // Forward only: one transfer.
  EXPECT_CLOSE(estimate.stages[0].transferSeconds, 1e-3);
  EXPECT_CLOSE(estimate.pipelineSeconds, 4 * 5e-3 + 4e-3);
  EXPECT_EQ(estimate.gradientSyncSeconds, 0);
  EXPECT_EQ(estimate.optimizerSeconds, 0);
}

TEST_F(PipelineTest, StageTimesOnPreset) {
  std::string error;
  std::optional<Cluster> a100 = loadCluster("a100-80g-x2nodes", error);
  ASSERT_TRUE(a100) << error;
  CostModel model(*a100, Mode::Train);
  PlanProfile profile = makeChain(ChainSpec());
  PipelineConfig config = makeConfig(2, 4);
  config.ppLink = a100->interNode;
  PipelineEstimate estimate =
      estimatePipeline(profile, config, {0, 4, 8}, model);
  // Two matmuls of 1e9 FLOPs per micro-batch at the f16 peak times the
  // matrix efficiency, plus two memory-bound non-matrix ops of 1e8 bytes;
  // each op pays the launch overhead in its forward and backward passes.
  const DeviceSpec &device = a100->device;
  double launch = model.getLaunchOverhead();
  double matmul =
      1e9 / (device.getPeakFlops(DType::F16) * device.matrixEfficiency);
  double vector = 1e8 / device.memoryBandwidth;
  ASSERT_GT(matmul, 0);
  EXPECT_CLOSE(estimate.stages[0].forwardCompute,
               2 * (matmul + launch) + 2 * (vector + launch));
  // Each layer's weight gradient (1 MB) is added to its accumulator.
  double accumulate = 3 * 1e6 / device.memoryBandwidth + launch;
  EXPECT_CLOSE(estimate.stages[0].backwardCompute, 2 * 2 * (matmul + launch) +
                                                       2 * (vector + launch) +
                                                       2 * accumulate);
  // One send of 1 MB each way over InfiniBand: launch, bytes, latency.
  const LinkSpec &link = a100->interNode;
  EXPECT_CLOSE(estimate.stages[0].transferSeconds,
               2 * (launch + 1e6 / link.bandwidth + link.latency));
}

TEST_F(PipelineTest, PipelineTimeFormula) {
  PlanProfile profile = makeChain(ChainSpec());
  CostModel model = getModel(Mode::Train);
  // A layer is 5 ms per micro-batch (plus a, its gradient's accumulation),
  // a transfer 2 ms.
  double a = accumulateSeconds(ChainSpec(), 4);
  PipelineConfig config = makeConfig(2, 4);
  PipelineEstimate balanced =
      estimatePipeline(profile, config, {0, 4, 8}, model);
  // W = (12, 10) ms: m * max + (sum - max).
  double w0 = 12e-3 + 2 * a, w1 = 10e-3 + 2 * a;
  EXPECT_CLOSE(balanced.pipelineSeconds, 4 * w0 + w1);
  EXPECT_CLOSE(balanced.bubbleFraction,
               1 - 4 * (w0 + w1) / (2 * (4 * w0 + w1)));
  PipelineEstimate skewed = estimatePipeline(profile, config, {0, 2, 8}, model);
  // W = (7, 15) ms.
  EXPECT_CLOSE(skewed.pipelineSeconds, 4 * (15e-3 + 3 * a) + 7e-3 + a);
  EXPECT_GT(skewed.pipelineSeconds, balanced.pipelineSeconds);

  // Interleaved, 2 chunks per rank: rank 0 runs virtual stages 0 and 2
  // (7 ms each), rank 1 stages 1 (7 ms) and 3 (5 ms, no transfer); the
  // fill and drain are divided by v.
  PipelineConfig interleaved = makeConfig(2, 4, Schedule::Interleaved, 2);
  PipelineEstimate estimate =
      estimatePipeline(profile, interleaved, {0, 2, 4, 6, 8}, model);
  ASSERT_EQ(estimate.stages.size(), 4u);
  EXPECT_CLOSE(estimate.pipelineSeconds,
               4 * (14e-3 + 2 * a) + (26e-3 - 14e-3 + 2 * a) / 2);
  // The busiest rank computes m * (its forwards and backwards), then its
  // optimizer step (2 x 16 B per parameter of its two layers at 100 GB/s).
  EXPECT_CLOSE(estimate.computeSeconds,
               4 * 2 * (5e-3 + a) + 2 * (2 * 8e6) / 1e11);
  EXPECT_CLOSE(estimate.communicationSeconds, 4 * 2 * 2e-3);

  // Without weights' gradients to synchronise (dp = 1) the optimizer is
  // the rest of the step: 2 x 16 B per parameter at 100 GB/s.
  EXPECT_EQ(balanced.gradientSyncSeconds, 0);
  EXPECT_CLOSE(balanced.optimizerSeconds, 2 * (2 * 8e6) / 1e11);
  EXPECT_CLOSE(balanced.getStepSeconds(),
               balanced.pipelineSeconds + balanced.optimizerSeconds);
}

TEST_F(PipelineTest, GradientSynchronisation) {
  PlanProfile profile = makeChain(ChainSpec());
  CostModel model = getModel(Mode::Train);
  PipelineConfig config = makeConfig(2, 4);
  config.dp = 4;
  PipelineEstimate estimate =
      estimatePipeline(profile, config, {0, 4, 8}, model);
  // A ring all-reduce of the stage's 2 MB of gradients over 4 devices at
  // 10 GB/s.
  EXPECT_CLOSE(estimate.stages[0].gradientSyncSeconds,
               2 * 3.0 / 4 * 2e6 / 1e10);
  EXPECT_CLOSE(estimate.gradientSyncSeconds, 2 * 3.0 / 4 * 2e6 / 1e10);
  // ZeRO moves the same bytes.
  config.zero = true;
  EXPECT_CLOSE(
      estimatePipeline(profile, config, {0, 4, 8}, model).gradientSyncSeconds,
      estimate.gradientSyncSeconds);
}

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

TEST_F(PipelineTest, MemoryPerSchedule) {
  ChainSpec spec;
  PlanProfile profile = makeChain(spec);
  CostModel model = getModel(Mode::Train);
  // Two layers per rank: 2 x 16 B per parameter of weight state, and 2 x
  // 12 MB of activations per batch, 6 MB per micro-batch of a quarter.
  double weights = 2 * 8 * spec.weightBytes;
  double activations = 2 * (spec.matmulResult + spec.vectorResult) / 4;

  PipelineEstimate gpipe = estimatePipeline(
      profile, makeConfig(2, 4, Schedule::GPipe), {0, 4, 8}, model);
  EXPECT_CLOSE(gpipe.stages[0].weightBytes, weights);
  EXPECT_CLOSE(gpipe.stages[0].activationBytes, activations);
  ASSERT_EQ(gpipe.deviceMemory.size(), 2u);
  EXPECT_CLOSE(gpipe.deviceMemory[0], weights + 4 * activations);
  EXPECT_CLOSE(gpipe.deviceMemory[1], weights + 4 * activations);

  PipelineEstimate oneFOneB =
      estimatePipeline(profile, makeConfig(2, 4), {0, 4, 8}, model);
  EXPECT_CLOSE(oneFOneB.deviceMemory[0], weights + 2 * activations);
  EXPECT_CLOSE(oneFOneB.deviceMemory[1], weights + 1 * activations);
  EXPECT_CLOSE(oneFOneB.getPeakMemoryBytes(), weights + 2 * activations);

  // Interleaved: each rank holds two one-layer chunks; rank 0 keeps
  // (2 + 2 + 1) / 2 of them in flight, rank 1 (2 + 1) / 2.
  PipelineEstimate interleaved =
      estimatePipeline(profile, makeConfig(2, 4, Schedule::Interleaved, 2),
                       {0, 2, 4, 6, 8}, model);
  EXPECT_CLOSE(interleaved.deviceMemory[0], weights + 2.5 * activations);
  EXPECT_CLOSE(interleaved.deviceMemory[1], weights + 1.5 * activations);

  // Inference keeps no activations for a backward pass: the most bytes
  // alive at once for one micro-batch (the 4 MB crossing into the matmul
  // and its 8 MB result), whatever the schedule.
  CostModel infer = getModel(Mode::Infer);
  PipelineEstimate inference = estimatePipeline(
      profile, makeConfig(2, 4, Schedule::GPipe), {0, 4, 8}, infer);
  EXPECT_CLOSE(inference.deviceMemory[1],
               2 * spec.weightBytes + (4e6 + 8e6) / 4);
}

TEST_F(PipelineTest, ZeroShrinksWeightMemory) {
  ChainSpec spec;
  PlanProfile profile = makeChain(spec);
  CostModel model = getModel(Mode::Train);
  PipelineConfig config = makeConfig(2, 4);
  config.dp = 4;
  PipelineEstimate plain = estimatePipeline(profile, config, {0, 4, 8}, model);
  config.zero = true;
  PipelineEstimate zero = estimatePipeline(profile, config, {0, 4, 8}, model);
  // f16: 2 B parameters + 2 B gradients + 12 B of states, the states split
  // over the 4 data-parallel replicas: 16 -> 7 B per parameter.
  EXPECT_CLOSE(plain.stages[1].weightBytes, 2 * 8 * spec.weightBytes);
  EXPECT_CLOSE(zero.stages[1].weightBytes, 2 * 3.5 * spec.weightBytes);
  EXPECT_CLOSE(plain.deviceMemory[1] - zero.deviceMemory[1],
               2 * 4.5 * spec.weightBytes);
  // Activations are untouched, and so is the optimizer's traffic per byte
  // of state: it shrinks with the state.
  EXPECT_CLOSE(zero.stages[1].activationBytes, plain.stages[1].activationBytes);
  EXPECT_LT(zero.optimizerSeconds, plain.optimizerSeconds);
}

TEST_F(PipelineTest, RecomputationShrinksActivationMemory) {
  ChainSpec spec;
  PlanProfile profile = makeChain(spec);
  CostModel model = getModel(Mode::Train);
  PipelineConfig config = makeConfig(2, 4);
  PipelineEstimate plain = estimatePipeline(profile, config, {0, 4, 8}, model);
  config.recompute = Recompute::Full;
  PipelineEstimate recomputed =
      estimatePipeline(profile, config, {0, 4, 8}, model);
  // Stage 1 (layers 2 and 3) keeps the input of each of its layers (the
  // 4 MB crossing cut points 4 and 6) per micro-batch, and one layer's
  // activations (12 MB) once, while it is recomputed; per micro-batch of a
  // quarter.
  const StageEstimate &last = recomputed.stages[1];
  EXPECT_CLOSE(last.activationBytes, 2 * spec.vectorResult / 4);
  EXPECT_CLOSE(last.transientBytes,
               (spec.matmulResult + spec.vectorResult) / 4);
  // Stage 0 keeps the graph input (not counted: crossing[0] is 0) and the
  // input of layer 1.
  EXPECT_CLOSE(recomputed.stages[0].activationBytes, spec.vectorResult / 4);
  // Rank 0 keeps 2 micro-batches in flight, rank 1 one.
  double weights = 2 * 8 * spec.weightBytes;
  EXPECT_CLOSE(recomputed.deviceMemory[0],
               weights + 2 * spec.vectorResult / 4 +
                   (spec.matmulResult + spec.vectorResult) / 4);
  EXPECT_CLOSE(recomputed.deviceMemory[1],
               weights + 2 * spec.vectorResult / 4 +
                   (spec.matmulResult + spec.vectorResult) / 4);
  EXPECT_LT(recomputed.deviceMemory[0], plain.deviceMemory[0]);
  EXPECT_LT(recomputed.deviceMemory[1], plain.deviceMemory[1]);
  // ... for a slower step.
  EXPECT_GT(recomputed.getStepSeconds(), plain.getStepSeconds());
}

//===----------------------------------------------------------------------===//
// Stage split
//===----------------------------------------------------------------------===//

TEST_F(PipelineTest, SplitUniformChainIsBalanced) {
  ChainSpec spec;
  spec.layers = 12;
  PlanProfile profile = makeChain(spec);
  int64_t n = profile.items.size();
  double infinity = std::numeric_limits<double>::infinity();
  for (Mode mode : {Mode::Train, Mode::Infer}) {
    CostModel model = getModel(mode);
    for (auto [stages, chunks] : {std::pair<int64_t, int64_t>{1, 1},
                                  {2, 1},
                                  {3, 1},
                                  {4, 1},
                                  {6, 1},
                                  {12, 1},
                                  {2, 2},
                                  {3, 2},
                                  {2, 3}}) {
      SCOPED_TRACE("p=" + std::to_string(stages) +
                   " v=" + std::to_string(chunks) +
                   (mode == Mode::Train ? " train" : " infer"));
      PipelineConfig config = makeConfig(
          stages, 4, chunks > 1 ? Schedule::Interleaved : Schedule::OneFOneB,
          chunks);
      std::optional<SmallVector<int64_t>> boundaries =
          splitStages(profile, config, model, infinity);
      ASSERT_TRUE(boundaries);
      int64_t virtualStages = stages * chunks;
      expectValidSplit(profile, *boundaries, virtualStages);
      // Equal op counts: 12 / (p v) layers of 2 ops each.
      for (int64_t k = 0; k <= virtualStages; ++k)
        EXPECT_EQ((*boundaries)[k], k * n / virtualStages);
    }
  }
}

TEST_F(PipelineTest, SplitTooFewCutPoints) {
  PlanProfile profile = makeChain(ChainSpec());
  CostModel model = getModel(Mode::Train);
  double minMemory = 0;
  // 4 layers cannot make 5 non-empty stages.
  EXPECT_FALSE(splitStages(profile, makeConfig(5, 1), model,
                           std::numeric_limits<double>::infinity(),
                           &minMemory));
  EXPECT_TRUE(std::isinf(minMemory));
  EXPECT_TRUE(splitStages(profile, makeConfig(4, 1), model,
                          std::numeric_limits<double>::infinity()));
}

TEST_F(PipelineTest, SplitRespectsMemoryCap) {
  ChainSpec spec;
  spec.layers = 8;
  PlanProfile profile = makeChain(spec);
  CostModel model = getModel(Mode::Train);
  PipelineConfig config = makeConfig(4, 4);
  double infinity = std::numeric_limits<double>::infinity();

  // The smallest peak memory of any split, and the fastest split.
  double smallest = infinity;
  SmallVector<int64_t> smallestSplit;
  forEachSplit(profile, 4, [&](ArrayRef<int64_t> boundaries) {
    double peak = estimatePipeline(profile, config, boundaries, model)
                      .getPeakMemoryBytes();
    if (peak < smallest) {
      smallest = peak;
      smallestSplit.assign(boundaries.begin(), boundaries.end());
    }
  });
  std::optional<SmallVector<int64_t>> fastest =
      splitStages(profile, config, model, infinity);
  ASSERT_TRUE(fastest);
  double balancedPeak =
      estimatePipeline(profile, config, *fastest, model).getPeakMemoryBytes();
  // 1F1B keeps more micro-batches on the first ranks: the balanced split
  // is not the smallest.
  ASSERT_LT(smallest, balancedPeak);

  // Below the smallest: no split, and the smallest is reported.
  double minMemory = 0;
  EXPECT_FALSE(
      splitStages(profile, config, model, smallest * (1 - 1e-3), &minMemory));
  EXPECT_NEAR(minMemory, smallest, smallest * 1e-5);

  // At the smallest: the split fits, and nothing faster fits.
  for (double cap : {smallest, (smallest + balancedPeak) / 2}) {
    std::optional<SmallVector<int64_t>> capped =
        splitStages(profile, config, model, cap);
    ASSERT_TRUE(capped) << "cap " << cap;
    expectValidSplit(profile, *capped, 4);
    PipelineEstimate estimate =
        estimatePipeline(profile, config, *capped, model);
    EXPECT_LE(estimate.getPeakMemoryBytes(), cap);
    double best = infinity;
    forEachSplit(profile, 4, [&](ArrayRef<int64_t> boundaries) {
      PipelineEstimate other =
          estimatePipeline(profile, config, boundaries, model);
      if (other.getPeakMemoryBytes() <= cap)
        best = std::min(best, getMaxStageSeconds(other));
    });
    EXPECT_CLOSE(getMaxStageSeconds(estimate), best);
  }
}

/// Returns a random profile of `numItems` items with quantised costs (so
/// that different splits differ by far more than the split's bisection
/// precision), random cut points (at least `minCuts`), weights and
/// crossings.
PlanProfile makeRandomProfile(std::mt19937 &random, Type elementType,
                              int64_t numItems, int64_t minCuts) {
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(random);
  };
  PlanProfile profile;
  for (int64_t i = 0; i < numItems; ++i) {
    ProfileItem item;
    item.name = "op" + std::to_string(i);
    item.elementType = elementType;
    switch (pick(0, 3)) {
    case 0: // a matmul: 0.1 to 2 ms on the whole batch
      item.cost =
          dnn::OpCost{1e8 * static_cast<double>(pick(1, 20)), 0, 0, true};
      break;
    case 1: // a memory-bound op
      item.cost =
          dnn::OpCost{0, 1e7 * static_cast<double>(pick(1, 20)), 0, false};
      break;
    case 2: // a free op
      break;
    case 3: // a compute-bound vector op
      item.cost =
          dnn::OpCost{1e7 * static_cast<double>(pick(1, 20)), 0, 0, false};
      break;
    }
    item.resultBytes = 1e5 * static_cast<double>(pick(0, 50));
    item.savedBytes = 1e5 * static_cast<double>(pick(0, 50));
    if (pick(0, 3) == 0) {
      item.recomputable = true;
      item.recomputableBytes = item.savedBytes * pick(0, 4) / 4;
    }
    if (pick(0, 1)) {
      ProfileWeight weight;
      weight.localBytes = 1e6 * static_cast<double>(pick(1, 10));
      weight.elementBytes = 2;
      item.weights.push_back(profile.weights.size());
      profile.weights.push_back(weight);
    }
    // Sometimes a weight used again later (tied embeddings).
    if (!profile.weights.empty() && pick(0, 5) == 0) {
      unsigned tied = pick(0, profile.weights.size() - 1);
      if (!llvm::is_contained(item.weights, tied))
        item.weights.push_back(tied);
    }
    profile.items.push_back(item);
  }
  for (int64_t c = 0; c <= numItems; ++c)
    profile.crossing.push_back(1e5 * static_cast<double>(pick(0, 50)));
  profile.crossing.front() = 0;
  while (static_cast<int64_t>(profile.cuts.size()) < minCuts) {
    profile.cuts.clear();
    for (int64_t c = 1; c < numItems; ++c)
      if (pick(0, 2) != 0)
        profile.cuts.push_back(c);
  }
  profile.localBatch = 16;
  profile.finalize();
  return profile;
}

TEST_F(PipelineTest, SplitMatchesBruteForce) {
  // Before the exact search backed the greedy fill, about one profile in
  // ten failed here; 30000 trials pass (a second).
  constexpr int kTrials = 2000;
  std::mt19937 random(20261202);
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(random);
  };
  double infinity = std::numeric_limits<double>::infinity();
  int checked = 0;
  for (int trial = 0; trial < kTrials; ++trial) {
    int64_t stages = pick(2, 4);
    int64_t chunks = pick(0, 2) == 0 ? 2 : 1;
    int64_t virtualStages = stages * chunks;
    PlanProfile profile = makeRandomProfile(
        random, getF16(), pick(virtualStages + 1, 13), virtualStages - 1);
    Mode mode = pick(0, 3) == 0 ? Mode::Infer : Mode::Train;
    CostModel model = getModel(mode);
    Schedule schedule = chunks > 1   ? Schedule::Interleaved
                        : pick(0, 1) ? Schedule::GPipe
                                     : Schedule::OneFOneB;
    PipelineConfig config =
        makeConfig(stages, int64_t{1} << pick(0, 3), schedule, chunks);
    config.recompute = mode == Mode::Train ? static_cast<Recompute>(pick(0, 2)) : Recompute::Off;
    config.dp = pick(1, 2);
    config.zero = config.dp > 1 && pick(0, 1);
    if (pick(0, 1))
      config.ppLink = cluster.intraNode;
    SCOPED_TRACE("trial " + std::to_string(trial) + ": p=" +
                 std::to_string(stages) + " v=" + std::to_string(chunks) +
                 " m=" + std::to_string(config.microbatches) + " " +
                 dist::stringifySchedule(schedule).str() +
                 (mode == Mode::Train ? " train" : " infer") +
                 (config.recompute != Recompute::Off ? " recompute=" + dist::stringifyRecompute(config.recompute).str() : "") + ", " +
                 std::to_string(profile.items.size()) + " items, " +
                 std::to_string(profile.cuts.size()) + " cuts");

    // Brute force: the fastest split, the smallest memory, and the fastest
    // under a cap between the two extremes.
    double fastest = infinity, smallest = infinity, largest = 0;
    std::vector<std::pair<double, double>> splits; // (seconds, memory)
    forEachSplit(profile, virtualStages, [&](ArrayRef<int64_t> boundaries) {
      PipelineEstimate estimate =
          estimatePipeline(profile, config, boundaries, model);
      double seconds = getMaxStageSeconds(estimate);
      double memory = estimate.getPeakMemoryBytes();
      fastest = std::min(fastest, seconds);
      smallest = std::min(smallest, memory);
      largest = std::max(largest, memory);
      splits.emplace_back(seconds, memory);
    });
    ASSERT_FALSE(splits.empty());

    std::optional<SmallVector<int64_t>> split =
        splitStages(profile, config, model, infinity);
    ASSERT_TRUE(split);
    expectValidSplit(profile, *split, virtualStages);
    EXPECT_CLOSE(
        getMaxStageSeconds(estimatePipeline(profile, config, *split, model)),
        fastest);
    ++checked;

    // With one chunk per rank each device's memory is its stage's, and the
    // split is exact under a memory cap too.
    if (chunks > 1)
      continue;
    double minMemory = 0;
    if (smallest > 0) {
      EXPECT_FALSE(splitStages(profile, config, model, smallest * (1 - 1e-3),
                               &minMemory));
      EXPECT_NEAR(minMemory, smallest, smallest * 1e-5);
    }
    double cap = smallest + (largest - smallest) * 0.3;
    double best = infinity;
    for (auto [seconds, memory] : splits)
      if (memory <= cap)
        best = std::min(best, seconds);
    std::optional<SmallVector<int64_t>> capped =
        splitStages(profile, config, model, cap);
    ASSERT_TRUE(capped);
    PipelineEstimate estimate =
        estimatePipeline(profile, config, *capped, model);
    EXPECT_LE(estimate.getPeakMemoryBytes(), cap);
    EXPECT_CLOSE(getMaxStageSeconds(estimate), best);
  }
  EXPECT_EQ(checked, kTrials);
}

//===----------------------------------------------------------------------===//
// Simulation
//===----------------------------------------------------------------------===//

/// The blocks and lanes of a simulated trace.
struct TraceSummary {
  /// Lanes (`tid`) with events.
  std::set<int64_t> lanes;
  /// Complete events per category.
  std::map<std::string, int64_t> events;
  /// Forward and backward blocks ("F<mb> stage <k>") on lane 0.
  int64_t blocksOnLaneZero = 0;
};

/// Parses `json`, a Chrome trace, failing the test if it is not one.
TraceSummary summariseTrace(llvm::StringRef json) {
  TraceSummary summary;
  llvm::Expected<llvm::json::Value> value = llvm::json::parse(json);
  if (!value) {
    ADD_FAILURE() << "invalid trace JSON: "
                  << llvm::toString(value.takeError());
    return summary;
  }
  const llvm::json::Object *root = value->getAsObject();
  const llvm::json::Array *events =
      root ? root->getArray("traceEvents") : nullptr;
  if (!events) {
    ADD_FAILURE() << "no traceEvents";
    return summary;
  }
  for (const llvm::json::Value &event : *events) {
    const llvm::json::Object *object = event.getAsObject();
    if (!object)
      continue;
    std::optional<int64_t> tid = object->getInteger("tid");
    if (tid)
      summary.lanes.insert(*tid);
    if (object->getString("ph") != "X")
      continue;
    llvm::StringRef category = object->getString("cat").value_or("");
    ++summary.events[category.str()];
    llvm::StringRef name = object->getString("name").value_or("");
    if (tid == 0 && category == "compute" &&
        (name.starts_with("F") || name.starts_with("B")))
      ++summary.blocksOnLaneZero;
  }
  return summary;
}

TEST_F(PipelineTest, SimulateBalancedOneFOneB) {
  // Uniform layers, nothing crossing the stage boundaries (no transfer
  // time: no latency, no launch overhead): f = 2 ms and b = 3 ms per layer
  // and micro-batch of a quarter.
  ChainSpec spec;
  spec.layers = 8;
  spec.matmulResult = spec.vectorResult = 0;
  PlanProfile profile = makeChain(spec);
  CostModel model = getModel(Mode::Train);
  for (int64_t m : {1, 4, 8}) {
    SCOPED_TRACE("m=" + std::to_string(m));
    int64_t p = 4;
    PipelineConfig config = makeConfig(p, m);
    SmallVector<int64_t> boundaries = {0, 4, 8, 12, 16};
    double f = 2 * 2e-3 * 4 / m,
           b = 2 * (3e-3 * 4 / m + accumulateSeconds(spec, m));
    PipelineEstimate estimate =
        estimatePipeline(profile, config, boundaries, model);
    EXPECT_CLOSE(estimate.stages[1].forwardCompute, f);
    EXPECT_CLOSE(estimate.stages[1].backwardCompute, b);
    // The optimizer of each rank's two layers of weights after the
    // pipeline; no gradient all-reduce with dp = 1.
    double optimizer = 2 * (2 * 8 * spec.weightBytes) / 1e11;
    double pipeline = (m + p - 1) * (f + b);
    std::string trace;
    llvm::raw_string_ostream os(trace);
    SimulationResult result =
        simulatePipeline(profile, config, boundaries, model, 8, &os);
    EXPECT_EQ(result.devices, 8);
    EXPECT_CLOSE(result.stepSeconds, pipeline + optimizer);
    EXPECT_CLOSE(result.stepSeconds, estimate.getStepSeconds());
    EXPECT_NEAR(result.idleFraction, (p - 1) * (f + b) / (pipeline + optimizer),
                1e-9);
    EXPECT_NEAR(estimate.bubbleFraction,
                static_cast<double>(p - 1) / static_cast<double>(m + p - 1),
                1e-9);

    TraceSummary summary = summariseTrace(trace);
    EXPECT_EQ(summary.lanes.size(), 8u);
    // Every forward and backward of rank 0 ran; ranks idle in the bubble.
    EXPECT_EQ(summary.blocksOnLaneZero, 2 * m);
    EXPECT_GT(summary.events["compute"], 0);
    EXPECT_GT(summary.events["idle"], 0);
  }
}

TEST_F(PipelineTest, SimulateWithoutPipeline) {
  // One stage, one micro-batch: the step is the estimate, nothing idles.
  PlanProfile profile = makeChain(ChainSpec());
  CostModel model = getModel(Mode::Train);
  PipelineConfig config = makeConfig(1, 1);
  config.dp = 2;
  PipelineEstimate estimate = estimatePipeline(profile, config, {0, 8}, model);
  SimulationResult result = simulatePipeline(profile, config, {0, 8}, model, 2);
  EXPECT_CLOSE(result.stepSeconds, estimate.getStepSeconds());
  EXPECT_GT(estimate.gradientSyncSeconds, 0);
  EXPECT_EQ(result.idleFraction, 0);
}

TEST_F(PipelineTest, SimulateGPipeEqualsOneFOneB) {
  ChainSpec spec;
  spec.layers = 8;
  spec.matmulResult = spec.vectorResult = 0;
  PlanProfile profile = makeChain(spec);
  CostModel model = getModel(Mode::Train);
  SmallVector<int64_t> boundaries = {0, 4, 8, 12, 16};
  SimulationResult gpipe = simulatePipeline(
      profile, makeConfig(4, 8, Schedule::GPipe), boundaries, model, 4);
  SimulationResult oneFOneB =
      simulatePipeline(profile, makeConfig(4, 8), boundaries, model, 4);
  EXPECT_CLOSE(gpipe.stepSeconds, oneFOneB.stepSeconds);
  EXPECT_NEAR(gpipe.idleFraction, oneFOneB.idleFraction, 1e-9);
  // ... but GPipe keeps every micro-batch alive.
  PlanProfile withActivations = makeChain(ChainSpec{8});
  EXPECT_GT(
      estimatePipeline(withActivations, makeConfig(4, 8, Schedule::GPipe),
                       boundaries, model)
          .getPeakMemoryBytes(),
      estimatePipeline(withActivations, makeConfig(4, 8), boundaries, model)
          .getPeakMemoryBytes());
}

TEST_F(PipelineTest, SimulateInterleavedShrinksTheBubble) {
  ChainSpec spec;
  spec.layers = 8;
  spec.matmulResult = spec.vectorResult = 0;
  PlanProfile profile = makeChain(spec);
  CostModel model = getModel(Mode::Train);
  int64_t p = 4, m = 8;
  SimulationResult oneFOneB =
      simulatePipeline(profile, makeConfig(p, m), {0, 4, 8, 12, 16}, model, p);
  std::string trace;
  llvm::raw_string_ostream os(trace);
  PipelineConfig config = makeConfig(p, m, Schedule::Interleaved, 2);
  SmallVector<int64_t> boundaries = {0, 2, 4, 6, 8, 10, 12, 14, 16};
  SimulationResult interleaved =
      simulatePipeline(profile, config, boundaries, model, p, &os);
  EXPECT_LT(interleaved.idleFraction, oneFOneB.idleFraction);
  EXPECT_LT(interleaved.stepSeconds, oneFOneB.stepSeconds);
  // Every block of rank 0's two chunks ran.
  EXPECT_EQ(summariseTrace(trace).blocksOnLaneZero, 2 * 2 * m);
  // One chunk of one micro-batch is c = 2.5 ms (f + b of one layer at an
  // eighth of the batch) and its gradient's accumulation; the fill and
  // drain shrink from (p - 1) v c to (p - 1) c: (m v + p - 1) c, and the
  // estimate agrees.
  double c = (2e-3 + 3e-3) / 2 + accumulateSeconds(spec, m);
  double optimizer = 2 * (2 * 8 * spec.weightBytes) / 1e11;
  EXPECT_CLOSE(interleaved.stepSeconds, (m * 2 + p - 1) * c + optimizer);
  EXPECT_CLOSE(
      estimatePipeline(profile, config, boundaries, model).getStepSeconds(),
      interleaved.stepSeconds);
}

TEST_F(PipelineTest, SimulateInference) {
  // Forward only: GPipe's (m + p - 1) f.
  ChainSpec spec;
  spec.matmulResult = spec.vectorResult = 0;
  PlanProfile profile = makeChain(spec);
  CostModel model = getModel(Mode::Infer);
  SimulationResult result = simulatePipeline(
      profile, makeConfig(2, 4, Schedule::GPipe), {0, 4, 8}, model, 2);
  double f = 4e-3;
  EXPECT_CLOSE(result.stepSeconds, (4 + 2 - 1) * f);
  EXPECT_NEAR(result.idleFraction, 1.0 / 5, 1e-9);
}

} // namespace
