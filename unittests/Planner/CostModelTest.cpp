//===- CostModelTest.cpp - The planner's cost model -------------*- C++ -*-===//
//
// Part of the dnnc project.
//
//===----------------------------------------------------------------------===//
//
// Unit tests of the planner's cost model on a made-up cluster with round
// numbers: each collective against its hand-computed alpha-beta time, the
// roofline of a matmul and an add (compute- and memory-bound, sharded),
// the train-mode multipliers, reshard sequences (all-reduce, all-gather,
// all-to-all, reduce-scatter, local slices, over intra- and inter-node
// axes) and weight memory in both modes.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Planner/CostModel.h"

#include "dnnc/Dialect/Dist/IR/DistDialect.h"
#include "dnnc/Dialect/Dnn/IR/Dnn.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

using namespace mlir;
using namespace dnnc;
using namespace dnnc::planner;

namespace {

/// Relative tolerance of the time comparisons.
constexpr double kTolerance = 1e-9;

/// Expects `actual` to equal `expected` up to a relative `kTolerance`.
#define EXPECT_TIME(actual, expected)                                          \
  EXPECT_NEAR((actual), (expected), std::abs(expected) * kTolerance)

/// A made-up cluster: 2 nodes of 4 devices of 1 TFLOP/s f32 (4 in f16 and
/// bf16, 8 in TF32; 0.5 on vector units) and 100 GB/s of memory; links of
/// 10 GB/s and 1 us inside a node, 1 GB/s and 10 us between nodes.
Cluster getTestCluster() {
  Cluster cluster;
  cluster.name = "test";
  cluster.numNodes = 2;
  cluster.devicesPerNode = 4;
  DeviceSpec &device = cluster.device;
  device.name = "TestGPU";
  device.peakFlops[static_cast<int>(DType::F32)] = 1e12;
  device.peakFlops[static_cast<int>(DType::TF32)] = 8e12;
  device.peakFlops[static_cast<int>(DType::F16)] = 4e12;
  device.peakFlops[static_cast<int>(DType::BF16)] = 4e12;
  device.vectorFlops = 0.5e12;
  device.memoryBytes = 16ull << 30;
  device.memoryBandwidth = 1e11;
  cluster.intraNode = {"intra", 1e10, 1e-6};
  cluster.interNode = {"inter", 1e9, 1e-5};
  return cluster;
}

/// Fixture: a context with the dialects the tests parse.
class CostModelTest : public ::testing::Test {
protected:
  CostModelTest() {
    context
        .loadDialect<dnn::DnnDialect, dist::DistDialect, func::FuncDialect>();
  }

  /// Parses `source` into a module, failing the test if it does not parse.
  OwningOpRef<ModuleOp> parse(llvm::StringRef source) {
    OwningOpRef<ModuleOp> module =
        parseSourceString<ModuleOp>(source, &context);
    EXPECT_TRUE(module) << "could not parse:\n" << source.str();
    return module;
  }

  /// Returns the first op named `name` in `module`.
  static Operation *findOp(ModuleOp module, llvm::StringRef name) {
    Operation *found = nullptr;
    module->walk([&](Operation *op) {
      if (!found && op->getName().getStringRef() == name)
        found = op;
    });
    EXPECT_TRUE(found) << "no " << name.str();
    return found;
  }

  /// Parses a `#dist.sharding` attribute.
  dist::ShardingAttr sharding(llvm::StringRef text) {
    auto attr =
        dyn_cast_or_null<dist::ShardingAttr>(parseAttribute(text, &context));
    EXPECT_TRUE(attr) << "not a sharding: " << text.str();
    return attr;
  }

  MLIRContext context;
  Cluster cluster = getTestCluster();
};

//===----------------------------------------------------------------------===//
// Collectives
//===----------------------------------------------------------------------===//

TEST_F(CostModelTest, Collectives) {
  CostModel model(cluster, Mode::Infer);
  const LinkSpec &link = cluster.intraNode;
  // 1 MB over 4 devices at 10 GB/s (1e-4 s for the whole buffer), 1 us.
  double bytes = 1e6;
  // Every collective is one launch.
  double launch = model.getLaunchOverhead();
  ASSERT_GT(launch, 0);
  EXPECT_TIME(
      model.getCollectiveTime(CollectiveKind::AllReduce, bytes, 4, link),
      launch + 2 * 3.0 / 4 * 1e-4 + 2 * 3 * 1e-6);
  // The local input is a quarter of the result: 3 blocks of 1 MB arrive.
  EXPECT_TIME(
      model.getCollectiveTime(CollectiveKind::AllGather, bytes, 4, link),
      launch + 3 * 1e-4 + 3 * 1e-6);
  EXPECT_TIME(
      model.getCollectiveTime(CollectiveKind::ReduceScatter, bytes, 4, link),
      launch + 3.0 / 4 * 1e-4 + 3 * 1e-6);
  EXPECT_TIME(model.getCollectiveTime(CollectiveKind::AllToAll, bytes, 4, link),
              launch + 3.0 / 4 * 1e-4 + 3 * 1e-6);
  EXPECT_TIME(
      model.getCollectiveTime(CollectiveKind::Broadcast, bytes, 4, link),
      launch + 1e-4 + 3 * 1e-6);
  EXPECT_TIME(model.getCollectiveTime(CollectiveKind::SendRecv, bytes, 2, link),
              launch + 1e-4 + 1e-6);
  // Over the slower link.
  EXPECT_TIME(model.getCollectiveTime(CollectiveKind::AllReduce, bytes, 2,
                                      cluster.interNode),
              launch + 2 * 1.0 / 2 * 1e-3 + 2 * 1e-5);
}

TEST_F(CostModelTest, CollectivesOfOneDeviceAreFree) {
  CostModel model(cluster, Mode::Train);
  for (CollectiveKind kind :
       {CollectiveKind::AllReduce, CollectiveKind::AllGather,
        CollectiveKind::ReduceScatter, CollectiveKind::AllToAll,
        CollectiveKind::Broadcast, CollectiveKind::SendRecv})
    EXPECT_EQ(model.getCollectiveTime(kind, 1e6, 1, cluster.interNode), 0);
}

TEST_F(CostModelTest, Link) {
  OwningOpRef<ModuleOp> module =
      parse(R"mlir(dist.mesh @m ["x" = 2 : intra, "y" = 4 : inter])mlir");
  auto mesh = cast<dist::MeshOp>(findOp(*module, "dist.mesh"));
  CostModel model(cluster, Mode::Infer);
  auto x = StringAttr::get(&context, "x"), y = StringAttr::get(&context, "y");
  EXPECT_EQ(&model.getLink(mesh, {x}), &model.getCluster().intraNode);
  EXPECT_EQ(&model.getLink(mesh, {y}), &model.getCluster().interNode);
  EXPECT_EQ(&model.getLink(mesh, {x, y}), &model.getCluster().interNode);
  EXPECT_EQ(&model.getLink(mesh, {}), &model.getCluster().intraNode);
}

//===----------------------------------------------------------------------===//
// Ops
//===----------------------------------------------------------------------===//

/// A square and a skinny f32 matmul, an f16 and an i32 matmul, and an add.
constexpr llvm::StringLiteral kOps = R"mlir(
func.func @ops(%a: tensor<1024x1024xf32>, %v: tensor<1024x1xf32>,
               %h: tensor<1024x1024xf16>, %i: tensor<64x64xi32>) {
  %0 = dnn.matmul %a, %a : (tensor<1024x1024xf32>, tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
  %1 = dnn.matmul %a, %v : (tensor<1024x1024xf32>, tensor<1024x1xf32>) -> tensor<1024x1xf32>
  %2 = dnn.matmul %h, %h : (tensor<1024x1024xf16>, tensor<1024x1024xf16>) -> tensor<1024x1024xf16>
  %3 = dnn.matmul %i, %i : (tensor<64x64xi32>, tensor<64x64xi32>) -> tensor<64x64xi32>
  %4 = dnn.add %a, %a : tensor<1024x1024xf32>
  %5 = dnn.reshape %a : tensor<1024x1024xf32> -> tensor<1048576xf32>
  return
}
)mlir";

/// Returns the ops of `kOps` in order (the func's body without the return).
SmallVector<Operation *> getOps(ModuleOp module) {
  SmallVector<Operation *> ops;
  module->walk([&](Operation *op) {
    if (op->getDialect() && op->getDialect()->getNamespace() ==
                                dnn::DnnDialect::getDialectNamespace())
      ops.push_back(op);
  });
  return ops;
}

TEST_F(CostModelTest, MatMulComputeBound) {
  OwningOpRef<ModuleOp> module = parse(kOps);
  SmallVector<Operation *> ops = getOps(*module);
  CostModel model(cluster, Mode::Infer);
  model.setLaunchOverhead(0);
  // 2 * 1024^3 FLOPs at 1 TFLOP/s; 12 MiB at 100 GB/s is 10x less.
  double flops = 2.0 * 1024 * 1024 * 1024;
  EXPECT_TIME(model.getOpTime(ops[0]), flops / 1e12);
  // Cut into 4 blocks.
  EXPECT_TIME(model.getOpTime(ops[0], 4), flops / 4 / 1e12);
  // f16 runs at the f16 peak.
  EXPECT_TIME(model.getOpTime(ops[2]), flops / 4e12);
  // f32 at the TF32 peak only when asked for.
  model.setUseTF32(true);
  EXPECT_TIME(model.getOpTime(ops[0]), flops / 8e12);
  // i32 has no matrix units: the vector peak (64^3 * 2 FLOPs; 48 KiB of
  // memory is 4x less).
  EXPECT_TIME(model.getOpTime(ops[3]), 2.0 * 64 * 64 * 64 / 0.5e12);
}

TEST_F(CostModelTest, MatMulMemoryBound) {
  OwningOpRef<ModuleOp> module = parse(kOps);
  SmallVector<Operation *> ops = getOps(*module);
  CostModel model(cluster, Mode::Infer);
  model.setLaunchOverhead(0);
  // Matrix-vector: 2 * 1024 * 1024 FLOPs (2.1 us) against the matrix, the
  // vector and the result at 100 GB/s (42 us).
  double bytes = (1024.0 * 1024 + 1024 + 1024) * 4;
  EXPECT_TIME(model.getOpTime(ops[1]), bytes / 1e11);
  EXPECT_TIME(model.getOpTime(ops[1], 2), bytes / 2 / 1e11);
}

TEST_F(CostModelTest, AddMemoryAndComputeBound) {
  OwningOpRef<ModuleOp> module = parse(kOps);
  SmallVector<Operation *> ops = getOps(*module);
  double elements = 1024.0 * 1024;
  {
    CostModel model(cluster, Mode::Infer);
    model.setLaunchOverhead(0);
    // 3 tensors of 4 MiB at 100 GB/s; 1M FLOPs at 0.5 TFLOP/s is 60x less.
    EXPECT_TIME(model.getOpTime(ops[4]), 3 * elements * 4 / 1e11);
    EXPECT_TIME(model.getOpTime(ops[4], 8), 3 * elements * 4 / 8 / 1e11);
  }
  {
    // A device with slow vector units: compute-bound.
    Cluster slow = cluster;
    slow.device.vectorFlops = 1e9;
    CostModel model(slow, Mode::Infer);
    model.setLaunchOverhead(0);
    EXPECT_TIME(model.getOpTime(ops[4]), elements / 1e9);
    EXPECT_TIME(model.getOpTime(ops[4], 4), elements / 4 / 1e9);
  }
}

TEST_F(CostModelTest, LaunchOverhead) {
  OwningOpRef<ModuleOp> module = parse(kOps);
  SmallVector<Operation *> ops = getOps(*module);
  CostModel model(cluster, Mode::Infer);
  EXPECT_EQ(model.getLaunchOverhead(), kGpuLaunchOverhead);
  double elements = 1024.0 * 1024;
  EXPECT_TIME(model.getOpTime(ops[4]),
              3 * elements * 4 / 1e11 + kGpuLaunchOverhead);
  // A reshape is a view: no time at all.
  EXPECT_EQ(model.getOpTime(ops[5]), 0);

  Cluster cpu = cluster;
  cpu.device.name = "CPU core (avx2)";
  EXPECT_EQ(CostModel::getDefaultLaunchOverhead(cpu), kCpuLaunchOverhead);
  cpu.device.name = "socket";
  cpu.name = "cpu-local";
  EXPECT_EQ(CostModel::getDefaultLaunchOverhead(cpu), kCpuLaunchOverhead);
}

TEST_F(CostModelTest, TrainMultiplier) {
  OwningOpRef<ModuleOp> module = parse(kOps);
  SmallVector<Operation *> ops = getOps(*module);
  CostModel infer(cluster, Mode::Infer);
  CostModel train(cluster, Mode::Train);
  EXPECT_EQ(infer.getTrainMultiplier(true), 1);
  EXPECT_EQ(train.getTrainMultiplier(true), 3);
  EXPECT_EQ(train.getTrainMultiplier(false), 2);
  // Matmul: forward, data gradient, weight gradient (launches included).
  EXPECT_TIME(train.getOpTime(ops[0]), 3 * infer.getOpTime(ops[0]));
  EXPECT_TIME(train.getOpTime(ops[0], 4), 3 * infer.getOpTime(ops[0], 4));
  // Add: forward and one backward pass.
  EXPECT_TIME(train.getOpTime(ops[4]), 2 * infer.getOpTime(ops[4]));
  EXPECT_EQ(train.getOpTime(ops[5]), 0);
}

//===----------------------------------------------------------------------===//
// Reshards
//===----------------------------------------------------------------------===//

/// Fixture: a 2 x 4 mesh, "x" inside a node, "y" across nodes, and a
/// tensor<8x16xf32> (512 bytes).
class ReshardTest : public CostModelTest {
protected:
  void SetUp() override {
    module =
        parse(R"mlir(dist.mesh @m ["x" = 2 : intra, "y" = 4 : inter])mlir");
    mesh = cast<dist::MeshOp>(findOp(*module, "dist.mesh"));
    type = RankedTensorType::get({8, 16}, Float32Type::get(&context));
    // The collectives' alpha-beta terms are what these tests check.
    model.setLaunchOverhead(0);
  }

  /// Returns the reshard time of `type` from `from` to `to`.
  double reshard(llvm::StringRef from, llvm::StringRef to) {
    return model.getReshardTime(type, sharding(from), sharding(to), mesh);
  }

  OwningOpRef<ModuleOp> module;
  dist::MeshOp mesh;
  RankedTensorType type;
  CostModel model{cluster, Mode::Infer};
};

TEST_F(ReshardTest, Unchanged) {
  EXPECT_EQ(
      reshard("#dist.sharding<@m, [{}, {}]>", "#dist.sharding<@m, [{}, {}]>"),
      0);
  EXPECT_EQ(reshard(R"(#dist.sharding<@m, [{"x"}, {"y"}]>)",
                    R"(#dist.sharding<@m, [{"x"}, {"y"}]>)"),
            0);
}

TEST_F(ReshardTest, PartialToReplicatedIsOneAllReduce) {
  // All 512 bytes over "x" (2 devices, intra).
  EXPECT_TIME(reshard(R"(#dist.sharding<@m, [{}, {}], partial = {"x"}>)",
                      "#dist.sharding<@m, [{}, {}]>"),
              2 * 1.0 / 2 * 512 / 1e10 + 2 * 1e-6);
  // Over both axes: one all-reduce of 8 devices on the inter-node link.
  EXPECT_TIME(reshard(R"(#dist.sharding<@m, [{}, {}], partial = {"y", "x"}>)",
                      "#dist.sharding<@m, [{}, {}]>"),
              2 * 7.0 / 8 * 512 / 1e9 + 2 * 7 * 1e-5);
  // Keeping "y" partial completes only "x".
  EXPECT_TIME(reshard(R"(#dist.sharding<@m, [{}, {}], partial = {"x", "y"}>)",
                      R"(#dist.sharding<@m, [{}, {}], partial = {"y"}>)"),
              2 * 1.0 / 2 * 512 / 1e10 + 2 * 1e-6);
}

TEST_F(ReshardTest, PartialToSplitIsOneReduceScatter) {
  EXPECT_TIME(reshard(R"(#dist.sharding<@m, [{}, {}], partial = {"x"}>)",
                      R"(#dist.sharding<@m, [{"x"}, {}]>)"),
              1.0 / 2 * 512 / 1e10 + 1e-6);
}

TEST_F(ReshardTest, SplitToReplicatedIsAllGather) {
  // The local input is 4x16 (256 bytes).
  EXPECT_TIME(reshard(R"(#dist.sharding<@m, [{"x"}, {}]>)",
                      "#dist.sharding<@m, [{}, {}]>"),
              256 / 1e10 + 1e-6);
  // Over the inter-node axis: 2x16 (128 bytes), 3 blocks arrive.
  EXPECT_TIME(reshard(R"(#dist.sharding<@m, [{"y"}, {}]>)",
                      "#dist.sharding<@m, [{}, {}]>"),
              3 * 128 / 1e9 + 3 * 1e-5);
  // Two axes on one dim: "y" (minor) first from 1x16, then "x" from 4x16.
  EXPECT_TIME(reshard(R"(#dist.sharding<@m, [{"x", "y"}, {}]>)",
                      "#dist.sharding<@m, [{}, {}]>"),
              (3 * 64 / 1e9 + 3 * 1e-5) + (256 / 1e10 + 1e-6));
}

TEST_F(ReshardTest, AxisMoveIsAllToAll) {
  // 4x16 -> 8x8: half of the 256 local bytes leave.
  EXPECT_TIME(reshard(R"(#dist.sharding<@m, [{"x"}, {}]>)",
                      R"(#dist.sharding<@m, [{}, {"x"}]>)"),
              1.0 / 2 * 256 / 1e10 + 1e-6);
  // Over "y": 2x16 (128 bytes) -> 8x4.
  EXPECT_TIME(reshard(R"(#dist.sharding<@m, [{"y"}, {}]>)",
                      R"(#dist.sharding<@m, [{}, {"y"}]>)"),
              3.0 / 4 * 128 / 1e9 + 3 * 1e-5);
}

TEST_F(ReshardTest, SplitOfReplicatedIsALocalCopy) {
  // Keeps a 8x4 block (128 bytes): read and written at 100 GB/s.
  EXPECT_TIME(reshard("#dist.sharding<@m, [{}, {}]>",
                      R"(#dist.sharding<@m, [{}, {"y"}]>)"),
              2 * 128 / 1e11);
  // A gather then a slice: "x" leaves dim 0 (not a move: dim 1 wants "y"
  // before it), then a slice cuts dim 1 over "y", "x".
  EXPECT_TIME(reshard(R"(#dist.sharding<@m, [{"x"}, {}]>)",
                      R"(#dist.sharding<@m, [{}, {"y", "x"}]>)"),
              (256 / 1e10 + 1e-6) + 2 * 64 / 1e11);
}

TEST_F(ReshardTest, Unsupported) {
  double infinity = std::numeric_limits<double>::infinity();
  // New partial axes.
  EXPECT_EQ(reshard("#dist.sharding<@m, [{}, {}]>",
                    R"(#dist.sharding<@m, [{}, {}], partial = {"x"}>)"),
            infinity);
  // An axis the mesh lacks, a wrong rank.
  EXPECT_EQ(reshard(R"(#dist.sharding<@m, [{"z"}, {}]>)",
                    "#dist.sharding<@m, [{}, {}]>"),
            infinity);
  EXPECT_EQ(reshard("#dist.sharding<@m, [{}]>", "#dist.sharding<@m, [{}, {}]>"),
            infinity);
  // 3 rows do not split over 2 devices.
  auto odd = RankedTensorType::get({3, 16}, Float32Type::get(&context));
  EXPECT_EQ(
      model.getReshardTime(odd, sharding(R"(#dist.sharding<@m, [{"x"}, {}]>)"),
                           sharding("#dist.sharding<@m, [{}, {}]>"), mesh),
      infinity);
}

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

TEST_F(CostModelTest, WeightMemory) {
  CostModel infer(cluster, Mode::Infer);
  EXPECT_EQ(infer.getWeightMemory(1000, 2), 1000);
  EXPECT_EQ(infer.getWeightMemory(4000, 4, 8), 4000);

  CostModel train(cluster, Mode::Train);
  // 500 f16 parameters: 2 + 2 + 12 bytes each.
  EXPECT_EQ(train.getWeightMemory(1000, 2), 500 * 16);
  // The 12 bytes of states are split over 4 devices.
  EXPECT_EQ(train.getWeightMemory(1000, 2, 4), 500 * (2 + 2 + 3));
  // 1000 f32 parameters: 4 + 4 + 8 bytes each; states over 2 devices.
  EXPECT_EQ(train.getWeightMemory(4000, 4), 1000 * 16);
  EXPECT_EQ(train.getWeightMemory(4000, 4, 2), 1000 * (4 + 4 + 4));
}

} // namespace
