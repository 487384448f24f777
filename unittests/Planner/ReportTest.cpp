//===- ReportTest.cpp - The plan report adds up -------------------*- C++ -*-===//
//
// Part of the dnnc project.
//
//===----------------------------------------------------------------------===//
//
// Unit tests of `buildPlanReport` on a small MLP (a bias, an elementwise
// chain, a constant shared by two ops) run through the plan phase's passes:
// the per-node rows and the reshards sum to the busiest rank's share of the
// step, the step parts sum to the step, and the same replicated program is
// priced the same on one device and on meshes of 2 and 4 devices, for
// inference and training.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Planner/Cluster.h"
#include "dnnc/Planner/Report.h"

#include "dnnc/Dialect/Dist/IR/DistDialect.h"
#include "dnnc/Dialect/Dist/Transforms/Passes.h"
#include "dnnc/Dialect/Dnn/IR/Dnn.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

using namespace mlir;
using namespace dnnc;
using namespace dnnc::planner;

namespace {

/// A two-layer MLP whose zero constant is shared by two elementwise ops
/// (as exporters and CSE share them), with a bias broadcast.
constexpr const char *kModule = R"mlir(
func.func @main(%x: tensor<64x128xf32>,
    %w1: tensor<128x256xf32> {dnn.weight = dense<0.01> : tensor<128x256xf32>},
    %b1: tensor<256xf32> {dnn.weight = dense<0.1> : tensor<256xf32>},
    %w2: tensor<256x128xf32> {dnn.weight = dense<0.02> : tensor<256x128xf32>})
    -> tensor<64x128xf32> {
  %c = dnn.constant dense<0.5> : tensor<64x256xf32>
  %y = dnn.matmul %x, %w1 : (tensor<64x128xf32>, tensor<128x256xf32>) -> tensor<64x256xf32>
  %bb = dnn.broadcast_in_dim %b1, dims = [1] : tensor<256xf32> -> tensor<64x256xf32>
  %z = dnn.add %y, %bb : tensor<64x256xf32>
  %m = dnn.mul %z, %c : tensor<64x256xf32>
  %r = dnn.relu %m : tensor<64x256xf32>
  %a = dnn.add %r, %c : tensor<64x256xf32>
  %o = dnn.matmul %a, %w2 : (tensor<64x256xf32>, tensor<256x128xf32>) -> tensor<64x128xf32>
  return %o : tensor<64x128xf32>
}
)mlir";

/// The report of kModule after the plan phase's passes on the mesh `axes`
/// (`NAME=SIZE:intra,...`; empty: one device), Megatron-sharded over
/// `tpAxis` when given, replicated otherwise.
llvm::json::Object planReport(MLIRContext &context, Mode mode,
                              const std::string &axes,
                              const std::string &tpAxis = "") {
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(kModule, &context);
  EXPECT_TRUE(module);
  PassManager pm(&context);
  pm.addNestedPass<func::FuncOp>(dist::createSplitConstantExpressionsPass());
  if (!axes.empty()) {
    dist::CreateMeshPassOptions mesh;
    mesh.axes = axes;
    pm.addPass(dist::createCreateMeshPass(mesh));
    dist::PropagateShardingsPassOptions propagate;
    propagate.tpAxis = tpAxis;
    pm.addPass(dist::createPropagateShardingsPass(propagate));
  }
  EXPECT_TRUE(succeeded(pm.run(*module)));
  std::string error;
  std::optional<Cluster> cluster = loadCluster("h100x8", error);
  EXPECT_TRUE(cluster) << error;
  return buildPlanReport(*module, *cluster, mode).json;
}

/// Expects the rows and reshards of `report` to sum to its busiest rank's
/// share of the step, and its step parts to sum to the step.
void expectAddsUp(const llvm::json::Object &report) {
  double step = *report.getNumber("step_time_s");
  const llvm::json::Object *parts = report.getObject("step_parts");
  ASSERT_TRUE(parts);
  double rows = *report.getNumber("reshard_s");
  for (const llvm::json::Value &node : *report.getArray("nodes"))
    rows += *node.getAsObject()->getNumber("seconds");
  double opsAndReshards = *parts->getNumber("ops_and_reshards_s");
  EXPECT_GT(step, 0);
  EXPECT_NEAR(rows, opsAndReshards, 1e-9 * step);
  double sum = 0;
  for (const char *key : {"ops_and_reshards_s", "stage_transfers_s",
                          "fill_and_drain_s", "gradient_sync_s",
                          "optimizer_s"})
    sum += *parts->getNumber(key);
  EXPECT_NEAR(sum, step, 1e-9 * step);
}

class ReportTest : public ::testing::TestWithParam<Mode> {
protected:
  ReportTest() {
    context.loadDialect<dnn::DnnDialect, dist::DistDialect,
                        func::FuncDialect>();
  }
  MLIRContext context;
};

TEST_P(ReportTest, RowsAddUpToTheStep) {
  expectAddsUp(planReport(context, GetParam(), ""));
  expectAddsUp(planReport(context, GetParam(), "x=2:intra"));
  // Megatron-sharded: reshards (the row-parallel all-reduce) included.
  llvm::json::Object sharded = planReport(context, GetParam(), "tp=2:intra",
                                          "tp");
  EXPECT_GT(*sharded.getNumber("reshard_s"), 0);
  expectAddsUp(sharded);
}

TEST_P(ReportTest, ReplicatedCostsTheSameOnAnyMesh) {
  double one = *planReport(context, GetParam(), "").getNumber("step_time_s");
  for (const char *axes : {"x=2:intra", "x=2:intra,y=2:intra"}) {
    llvm::json::Object report = planReport(context, GetParam(), axes);
    EXPECT_NEAR(*report.getNumber("step_time_s"), one, 1e-12 * one) << axes;
  }
}

INSTANTIATE_TEST_SUITE_P(Modes, ReportTest,
                         ::testing::Values(Mode::Infer, Mode::Train),
                         [](const ::testing::TestParamInfo<Mode> &info) {
                           return info.param == Mode::Train ? "Train"
                                                            : "Infer";
                         });

} // namespace
