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
#include "dnnc/Dialect/Dist/Transforms/ReshardPlan.h"
#include "dnnc/Dialect/Dnn/Transforms/Passes.h"

#include "llvm/ADT/DenseMap.h"

using namespace mlir;
using namespace dnnc;
using namespace dnnc::planner;

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

int64_t dnnc::planner::getOpShards(Operation *op, dist::MeshOp mesh) {
  dnn::ShardingRuleAttr rule = dnn::getShardingRule(op);
  if (!mesh || !rule)
    return 1;
  SmallVector<dist::ShardingAttr> operands =
      llvm::map_to_vector(op->getOperands(), dist::getStoredSharding);
  SmallVector<dist::ShardingAttr> results =
      llvm::map_to_vector(op->getResults(), dist::getStoredSharding);
  dist::FactorSharding fs =
      dist::inferFactorSharding(rule, mesh, operands, results);
  int64_t shards = 1;
  for (int64_t f = 0, e = rule.getNumFactors(); f < e; ++f)
    shards *= fs.getNumShards(f);
  return shards;
}

/// Returns the bytes of a local block of shape `shape` of `type`'s elements.
static double getBlockBytes(ArrayRef<int64_t> shape, Type elementType) {
  double elements = 1;
  for (int64_t extent : shape)
    elements *= static_cast<double>(extent);
  return elements * dnn::getElementBytes(elementType);
}

/// Returns the local shape of `value` (its stored sharding on `mesh`).
static SmallVector<int64_t> getLocalShape(Value value, dist::MeshOp mesh) {
  auto type = cast<RankedTensorType>(value.getType());
  dist::ShardingAttr sharding =
      mesh ? dist::getStoredSharding(value) : dist::ShardingAttr();
  return sharding ? sharding.getLocalShape(type.getShape(), mesh)
                  : SmallVector<int64_t>(type.getShape());
}

/// Returns the name of the op `dist-partition` emits for a reshard step.
static const char *getStepName(dist::ReshardStep::Kind kind) {
  switch (kind) {
  case dist::ReshardStep::Kind::AllReduce:
    return "all_reduce";
  case dist::ReshardStep::Kind::ReduceScatter:
    return "reduce_scatter";
  case dist::ReshardStep::Kind::AllToAll:
    return "all_to_all";
  case dist::ReshardStep::Kind::AllGather:
    return "all_gather";
  case dist::ReshardStep::Kind::Slice:
    return "shard_slice";
  }
  return "";
}

void dnnc::planner::forEachPlanStep(
    func::FuncOp func, dist::MeshOp mesh, const CostModel &model,
    function_ref<void(const PlanStep &)> visit) {
  auto allReduce = [&](double bytes, ArrayRef<StringAttr> axes) {
    PlanStep step;
    step.name = "all_reduce";
    step.isCollective = true;
    step.axes.assign(axes.begin(), axes.end());
    step.seconds = model.getCollectiveTime(CollectiveKind::AllReduce, bytes,
                                           mesh.getGroupSize(axes),
                                           model.getLink(mesh, axes));
    visit(step);
  };
  Block &body = func.getBody().front();
  for (Operation &op : body) {
    if (auto reshard = dyn_cast<dist::ReshardOp>(op)) {
      if (!mesh)
        continue;
      Value input = reshard.getInput();
      SmallVector<int64_t> shape = getLocalShape(input, mesh);
      std::string reason;
      FailureOr<SmallVector<dist::ReshardStep>> steps = dist::planReshard(
          shape, dist::getStoredSharding(input), reshard.getTo(), mesh,
          reason);
      if (failed(steps))
        continue;
      for (const dist::ReshardStep &reshardStep : *steps) {
        PlanStep step;
        step.isCollective = reshardStep.kind != dist::ReshardStep::Kind::Slice;
        step.name = getStepName(reshardStep.kind);
        step.axes = reshardStep.axes;
        step.seconds = model.getReshardStepTime(
            reshardStep, shape,
            cast<RankedTensorType>(input.getType()).getElementType(), mesh);
        visit(step);
        shape = reshardStep.shape;
      }
      continue;
    }
    if (!dnn::getShardingRule(&op))
      continue;
    PlanStep step;
    StringRef node = dnn::getNodeName(op.getLoc());
    std::string opName = op.getName().stripDialect().str();
    step.name = node.empty() ? opName : (node + " (" + opName + ")").str();
    step.seconds = model.getOpTime(&op, getOpShards(&op, mesh));
    visit(step);
    if (!mesh)
      continue;
    SmallVector<dist::ShardingAttr> operands =
        llvm::map_to_vector(op.getOperands(), dist::getStoredSharding);
    SmallVector<dist::ShardingAttr> results =
        llvm::map_to_vector(op.getResults(), dist::getStoredSharding);
    dist::FactorSharding fs = dist::inferFactorSharding(
        dnn::getShardingRule(&op), mesh, operands, results);
    for (OpResult result : op.getResults())
      for (auto &[kind, axes] :
           fs.getPendingReductions(result.getResultNumber()))
        allReduce(getBlockBytes(getLocalShape(result, mesh),
                                cast<RankedTensorType>(result.getType())
                                    .getElementType()),
                  axes);
  }
  // Training: the gradients of weights replicated along some axes.
  if (model.getMode() != Mode::Train || !mesh)
    return;
  for (BlockArgument arg : body.getArguments()) {
    if (!dnn::isWeightArgument(func, arg.getArgNumber()))
      continue;
    dist::ShardingAttr sharding = dist::getStoredSharding(arg);
    SmallVector<StringAttr> axes =
        sharding ? getReplicatedAxes(sharding, mesh) : SmallVector<StringAttr>();
    if (axes.empty())
      continue;
    allReduce(getBlockBytes(getLocalShape(arg, mesh),
                            cast<RankedTensorType>(arg.getType())
                                .getElementType()),
              axes);
  }
}

PlanEstimate dnnc::planner::estimatePlan(func::FuncOp func, dist::MeshOp mesh,
                                         const CostModel &model) {
  PlanEstimate estimate;
  forEachPlanStep(func, mesh, model, [&](const PlanStep &step) {
    (step.isCollective ? estimate.communicationSeconds
                       : estimate.computeSeconds) += step.seconds;
  });

  bool train = model.getMode() == Mode::Train;
  // Bytes of the local block of `value` on one device.
  auto localBytes = [&](Value value) -> double {
    return getBlockBytes(
        getLocalShape(value, mesh),
        cast<RankedTensorType>(value.getType()).getElementType());
  };
  Block &body = func.getBody().front();
  // Weights, with their gradients and optimizer states in training.
  for (BlockArgument arg : body.getArguments())
    if (dnn::isWeightArgument(func, arg.getArgNumber()))
      estimate.weightBytes += model.getWeightMemory(
          localBytes(arg),
          dnn::getElementBytes(
              cast<RankedTensorType>(arg.getType()).getElementType()));

  // The last op that uses each value, for the inference liveness scan.
  llvm::DenseMap<Value, Operation *> lastUse;
  for (Operation &op : body)
    for (Value operand : op.getOperands())
      lastUse[operand] = &op;
  double live = 0;
  for (BlockArgument arg : body.getArguments())
    if (!dnn::isWeightArgument(func, arg.getArgNumber()))
      live += localBytes(arg);
  estimate.activationBytes = live;

  for (Operation &op : body) {
    if (auto costly = dyn_cast<dnn::DnnCostOpInterface>(op)) {
      dnn::OpCost cost = costly.getCost();
      estimate.modelFlops +=
          cost.flops * model.getTrainMultiplier(cost.isMatrix);
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
      if (arg && dnn::isWeightArgument(func, arg.getArgNumber()))
        continue;
      if (lastUse.lookup(operand) == &op &&
          isa<RankedTensorType>(operand.getType()))
        live -= localBytes(operand);
    }
  }
  return estimate;
}
