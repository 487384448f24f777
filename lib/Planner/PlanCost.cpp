//===- PlanCost.cpp - The estimated cost of a sharded program ---*- C++ -*-===//
//
// Part of the dnnc project.
//
//===----------------------------------------------------------------------===//
//
// Implements estimatePlan: one walk over @main that prices every op, reshard
// and pending reduction, the training gradient all-reduces, and the memory
// of weights and activations per device.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Planner/PlanCost.h"
#include "dnnc/Dialect/Dist/Transforms/FactorSharding.h"
#include "dnnc/Dialect/Dnn/Transforms/Passes.h"

#include "llvm/ADT/DenseMap.h"

using namespace mlir;
using namespace dnnc;
using namespace dnnc::planner;

/// Returns true if argument `index` of `func` holds a weight.
static bool isWeightArgument(func::FuncOp func, unsigned index) {
  return func.getArgAttr(index, dnn::kWeightAttrName) ||
         func.getArgAttr(index, dnn::kWeightRefAttrName);
}

/// Returns the mesh axes of size > 1 that `sharding` does not use: the
/// axes along which the value is replicated.
static SmallVector<StringAttr> getReplicatedAxes(dist::ShardingAttr sharding,
                                                 dist::MeshOp mesh) {
  SmallVector<StringAttr> axes;
  for (unsigned i = 0, e = mesh.getNumAxes(); i < e; ++i) {
    dist::MeshAxisAttr axis = mesh.getAxis(i);
    if (axis.getSize() > 1 && !sharding.usesAxis(axis.getName().getValue()))
      axes.push_back(axis.getName());
  }
  return axes;
}

PlanEstimate dnnc::planner::estimatePlan(func::FuncOp func, dist::MeshOp mesh,
                                         const CostModel &model) {
  PlanEstimate estimate;
  bool train = model.getMode() == Mode::Train;
  auto shardingOf = [&](Value value) -> dist::ShardingAttr {
    return mesh ? dist::getStoredSharding(value) : dist::ShardingAttr();
  };
  // Bytes of the local block of `value` on one device.
  auto localBytes = [&](Value value) -> double {
    auto type = cast<RankedTensorType>(value.getType());
    double elements = 1;
    dist::ShardingAttr sharding = shardingOf(value);
    SmallVector<int64_t> shape =
        sharding ? sharding.getLocalShape(type.getShape(), mesh)
                 : SmallVector<int64_t>(type.getShape());
    for (int64_t extent : shape)
      elements *= static_cast<double>(extent);
    return elements * dnn::getElementBytes(type.getElementType());
  };
  auto allReduceTime = [&](double bytes, ArrayRef<StringAttr> axes) {
    if (axes.empty())
      return 0.0;
    return model.getCollectiveTime(CollectiveKind::AllReduce, bytes,
                                   mesh.getGroupSize(axes),
                                   model.getLink(mesh, axes));
  };

  Block &body = func.getBody().front();
  // Weights, and in training the all-reduce of their gradients over the
  // axes they are replicated along.
  for (BlockArgument arg : body.getArguments()) {
    if (!isWeightArgument(func, arg.getArgNumber()))
      continue;
    double bytes = localBytes(arg);
    int64_t elementBytes = dnn::getElementBytes(
        cast<RankedTensorType>(arg.getType()).getElementType());
    estimate.weightBytes += model.getWeightMemory(bytes, elementBytes);
    if (train && mesh)
      if (dist::ShardingAttr sharding = shardingOf(arg))
        estimate.communicationSeconds +=
            allReduceTime(bytes, getReplicatedAxes(sharding, mesh));
  }

  // The last op that uses each value, for the inference liveness scan.
  llvm::DenseMap<Value, Operation *> lastUse;
  for (Operation &op : body)
    for (Value operand : op.getOperands())
      lastUse[operand] = &op;
  double live = 0;
  for (BlockArgument arg : body.getArguments())
    if (!isWeightArgument(func, arg.getArgNumber()))
      live += localBytes(arg);
  estimate.activationBytes = live;

  for (Operation &op : body) {
    if (auto reshard = dyn_cast<dist::ReshardOp>(op)) {
      if (mesh)
        estimate.communicationSeconds += model.getReshardTime(
            reshard.getInput().getType(), shardingOf(reshard.getInput()),
            reshard.getTo(), mesh);
    } else if (dnn::ShardingRuleAttr rule = dnn::getShardingRule(&op)) {
      int64_t shards = 1;
      if (mesh) {
        SmallVector<dist::ShardingAttr> operands =
            llvm::map_to_vector(op.getOperands(), shardingOf);
        SmallVector<dist::ShardingAttr> results =
            llvm::map_to_vector(op.getResults(), shardingOf);
        dist::FactorSharding fs =
            dist::inferFactorSharding(rule, mesh, operands, results);
        for (int64_t f = 0, e = rule.getNumFactors(); f < e; ++f)
          shards *= fs.getNumShards(f);
        for (OpResult result : op.getResults())
          for (auto &[kind, axes] :
               fs.getPendingReductions(result.getResultNumber()))
            estimate.communicationSeconds +=
                allReduceTime(localBytes(result), axes);
      }
      estimate.computeSeconds += model.getOpTime(&op, shards);
      if (auto costly = dyn_cast<dnn::DnnCostOpInterface>(op)) {
        dnn::OpCost cost = costly.getCost();
        estimate.modelFlops +=
            cost.flops * model.getTrainMultiplier(cost.isMatrix);
      }
    }
    // Activations: every result is kept for the backward pass in training;
    // in inference, values die after their last use.
    double produced = 0;
    for (Value result : op.getResults())
      if (isa<RankedTensorType>(result.getType()))
        produced += localBytes(result);
    if (train) {
      estimate.activationBytes += produced;
      continue;
    }
    live += produced;
    estimate.activationBytes = std::max(estimate.activationBytes, live);
    for (Value operand : op.getOperands()) {
      auto arg = dyn_cast<BlockArgument>(operand);
      if (arg && isWeightArgument(func, arg.getArgNumber()))
        continue;
      if (lastUse.lookup(operand) == &op &&
          isa<RankedTensorType>(operand.getType()))
        live -= localBytes(operand);
    }
  }
  return estimate;
}
