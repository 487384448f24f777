//===- PlanCost.cpp - The estimated cost of a sharded program ---*- C++ -*-===//
//
// Part of the dnnc project.
//
//===----------------------------------------------------------------------===//
//
// Implements getOpShards and estimatePlan (one stage of the pipeline
// model).
//
//===----------------------------------------------------------------------===//

#include "dnnc/Planner/PlanCost.h"
#include "dnnc/Dialect/Dist/Transforms/FactorSharding.h"
#include "dnnc/Planner/Pipeline.h"

using namespace mlir;
using namespace dnnc;
using namespace dnnc::planner;

int64_t dnnc::planner::getOpShards(Operation *op, dist::MeshOp mesh) {
  dnn::ShardingRuleAttr rule = dnn::getShardingRule(op);
  if (!mesh || !rule)
    return 1;
  dist::FactorSharding fs = dist::getStoredFactorSharding(op, rule, mesh);
  int64_t shards = 1;
  for (int64_t f = 0, e = rule.getNumFactors(); f < e; ++f)
    shards *= fs.getNumShards(f);
  return shards;
}

PlanEstimate dnnc::planner::estimatePlan(func::FuncOp func, dist::MeshOp mesh,
                                         const CostModel &model) {
  PlanProfile profile = buildPlanProfile(func, mesh, model, "", "");
  PipelineEstimate pipeline =
      estimatePipeline(profile, PipelineConfig(),
                       {0, static_cast<int64_t>(profile.items.size())}, model);
  PlanEstimate estimate;
  estimate.computeSeconds = pipeline.computeSeconds;
  estimate.communicationSeconds = pipeline.communicationSeconds;
  const StageEstimate &stage = pipeline.stages.front();
  estimate.weightBytes = stage.weightBytes;
  estimate.activationBytes = stage.activationBytes + stage.transientBytes;
  estimate.modelFlops = profile.modelFlops;
  return estimate;
}
