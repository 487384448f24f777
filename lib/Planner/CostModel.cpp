//===- CostModel.cpp - Time and memory of sharded programs ------*- C++ -*-===//
//
// Part of the dnnc project.
//
//===----------------------------------------------------------------------===//
//
// The planner's cost model: a roofline per op on its local block, alpha-beta
// ring collectives over the link class of their mesh axes, reshards priced
// as the sequence `dist-partition` emits for them, and weight memory with
// mixed-precision Adam states in train mode. The formulas are listed in
// CostModel.h.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Planner/CostModel.h"
#include "dnnc/Dialect/Dist/Transforms/ReshardPlan.h"

#include "dnnc/Dialect/Dnn/IR/Dnn.h"
#include "dnnc/Dialect/Dnn/Transforms/Passes.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Debug.h"

#include <algorithm>
#include <cassert>
#include <limits>

#define DEBUG_TYPE "dnnc-cost-model"

using namespace mlir;
using namespace dnnc;
using namespace dnnc::planner;

/// The time of something the model cannot price (an impossible reshard).
static constexpr double kInfinity = std::numeric_limits<double>::infinity();

//===----------------------------------------------------------------------===//
// Construction
//===----------------------------------------------------------------------===//

CostModel::CostModel(const Cluster &cluster, Mode mode)
    : cluster(cluster), mode(mode),
      launchOverhead(getDefaultLaunchOverhead(cluster)) {}

double CostModel::getDefaultLaunchOverhead(const Cluster &cluster) {
  auto namesCpu = [](const std::string &name) {
    return llvm::StringRef(name).contains_insensitive("cpu");
  };
  return namesCpu(cluster.device.name) || namesCpu(cluster.name)
             ? kCpuLaunchOverhead
             : kGpuLaunchOverhead;
}

//===----------------------------------------------------------------------===//
// Ops
//===----------------------------------------------------------------------===//

std::optional<DType> CostModel::getMatrixType(Type elementType) const {
  if (elementType.isF64())
    return DType::F64;
  if (elementType.isF32())
    return useTF32 ? DType::TF32 : DType::F32;
  if (elementType.isF16())
    return DType::F16;
  if (elementType.isBF16())
    return DType::BF16;
  if (elementType.isInteger(8))
    return DType::I8;
  return std::nullopt;
}

double CostModel::getPeakFlops(Type elementType, bool isMatrix) const {
  if (isMatrix) {
    if (std::optional<DType> type = getMatrixType(elementType)) {
      double peak = cluster.device.getPeakFlops(*type);
      if (peak > 0)
        return peak * cluster.device.matrixEfficiency;
    }
  }
  return cluster.device.vectorFlops;
}

double CostModel::getTrainMultiplier(bool isMatrix) const {
  if (mode == Mode::Infer)
    return 1;
  return isMatrix ? 3 : 2;
}

double CostModel::getOpTime(const dnn::OpCost &cost, Type elementType,
                            int64_t shards) const {
  if (cost.flops <= 0 && cost.getBytes() <= 0)
    return 0;
  double blocks = static_cast<double>(std::max<int64_t>(shards, 1));
  double peak = getPeakFlops(elementType, cost.isMatrix);
  double bandwidth = cluster.device.memoryBandwidth;
  double compute = peak > 0 ? cost.flops / blocks / peak : 0;
  double memory = bandwidth > 0 ? cost.getBytes() / blocks / bandwidth : 0;
  return getTrainMultiplier(cost.isMatrix) *
         (std::max(compute, memory) + launchOverhead);
}

Type CostModel::getComputeElementType(Operation *op) {
  for (Value value : llvm::concat<Value>(op->getOperands(), op->getResults()))
    if (auto shaped = dyn_cast<ShapedType>(value.getType()))
      return shaped.getElementType();
  return Float32Type::get(op->getContext());
}

double CostModel::getOpTime(Operation *op, int64_t shards) const {
  auto iface = dyn_cast<dnn::DnnCostOpInterface>(op);
  if (!iface)
    return 0;
  Type elementType = getComputeElementType(op);
  return getOpTime(iface.getCost(), elementType, shards);
}

//===----------------------------------------------------------------------===//
// Collectives
//===----------------------------------------------------------------------===//

double CostModel::getCollectiveTime(CollectiveKind kind, double bytes,
                                    int64_t groupSize,
                                    const LinkSpec &link) const {
  if (groupSize <= 1)
    return 0;
  assert(link.bandwidth > 0 && "links need a positive bandwidth");
  double g = static_cast<double>(groupSize);
  double steps = g - 1;
  double transfer = bytes / link.bandwidth;
  // Each collective is one kernel (NCCL) or library call (MPI): one launch.
  double launch = launchOverhead;
  switch (kind) {
  case CollectiveKind::AllReduce:
    // Reduce-scatter then all-gather around the ring.
    return launch + 2 * steps / g * transfer + 2 * steps * link.latency;
  case CollectiveKind::AllGather:
    // Every device receives the G - 1 other blocks of `bytes`.
    return launch + steps * transfer + steps * link.latency;
  case CollectiveKind::ReduceScatter:
  case CollectiveKind::AllToAll:
    // Every device sends (G - 1) / G of its input.
    return launch + steps / g * transfer + steps * link.latency;
  case CollectiveKind::Broadcast:
    // Pipelined along the ring: the buffer once, the latency per hop.
    return launch + transfer + steps * link.latency;
  case CollectiveKind::SendRecv:
    return launch + transfer + link.latency;
  }
  llvm_unreachable("unknown collective kind");
}

const LinkSpec &CostModel::getLink(dist::MeshOp mesh,
                                   ArrayRef<StringAttr> axes) const {
  for (StringAttr axis : axes)
    if (mesh.getAxisLink(axis.getValue()) == dist::LinkClass::Inter)
      return cluster.interNode;
  return cluster.intraNode;
}

//===----------------------------------------------------------------------===//
// Reshards
//===----------------------------------------------------------------------===//

/// Returns true if `sharding` fits a static `shape` on `mesh`: the rank
/// matches, every axis exists, and every split dimension divides evenly.
static bool fits(dist::ShardingAttr sharding, ArrayRef<int64_t> shape,
                 dist::MeshOp mesh) {
  if (sharding.getRank() != static_cast<int64_t>(shape.size()))
    return false;
  for (StringAttr axis : sharding.getUsedAxes())
    if (!mesh.hasAxis(axis.getValue()))
      return false;
  for (auto [dim, size] : llvm::enumerate(shape))
    if (size % sharding.getNumShards(dim, mesh) != 0)
      return false;
  return true;
}

double CostModel::getReshardTime(RankedTensorType type, dist::ShardingAttr from,
                                 dist::ShardingAttr to,
                                 dist::MeshOp mesh) const {
  if (!type.hasStaticShape() || !fits(from, type.getShape(), mesh) ||
      !fits(to, type.getShape(), mesh))
    return kInfinity;
  // The steps `dist-partition` emits (dist::planReshard), each priced on its
  // local input with the link of its axes.
  std::string reason;
  SmallVector<int64_t> shape = from.getLocalShape(type.getShape(), mesh);
  FailureOr<SmallVector<dist::ReshardStep>> steps =
      dist::planReshard(shape, from, to, mesh, reason);
  if (failed(steps))
    return kInfinity;
  double time = 0;
  for (const dist::ReshardStep &step : *steps) {
    time += getReshardStepTime(step, shape, type.getElementType(), mesh);
    shape = step.shape;
  }
  return time;
}

double CostModel::getReshardStepTime(const dist::ReshardStep &step,
                                     ArrayRef<int64_t> inShape,
                                     Type elementType,
                                     dist::MeshOp mesh) const {
  double elementBytes = static_cast<double>(dnn::getElementBytes(elementType));
  auto bytesOf = [&](ArrayRef<int64_t> extents) {
    double elements = 1;
    for (int64_t size : extents)
      elements *= static_cast<double>(size);
    return elements * elementBytes;
  };
  double inBytes = bytesOf(inShape);
  std::optional<CollectiveKind> kind;
  switch (step.kind) {
  case dist::ReshardStep::Kind::AllReduce:
    kind = CollectiveKind::AllReduce;
    break;
  case dist::ReshardStep::Kind::ReduceScatter:
    kind = CollectiveKind::ReduceScatter;
    break;
  case dist::ReshardStep::Kind::AllToAll:
    kind = CollectiveKind::AllToAll;
    break;
  case dist::ReshardStep::Kind::AllGather:
    kind = CollectiveKind::AllGather;
    break;
  case dist::ReshardStep::Kind::Slice:
    // A copy of the kept block: read and written once at memory bandwidth,
    // no launch (it fuses into its consumer).
    if (cluster.device.memoryBandwidth <= 0)
      return 0;
    return 2 * bytesOf(step.shape) / cluster.device.memoryBandwidth;
  }
  LLVM_DEBUG(llvm::dbgs() << "reshard step " << static_cast<int>(step.kind)
                          << " over " << dist::formatAxes(step.axes) << " of "
                          << inBytes << " B\n");
  return getCollectiveTime(*kind, inBytes, mesh.getGroupSize(step.axes),
                           getLink(mesh, step.axes));
}

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

void CostModel::usePrecisionOf(Operation *module) {
  setUseTF32(dnn::getModulePrecision(module) == dnn::Precision::TF32);
}

double CostModel::getWeightMemory(double localBytes, int64_t elementBytes,
                                  int64_t zeroShards) const {
  if (mode == Mode::Infer || elementBytes <= 0)
    return localBytes;
  double e = static_cast<double>(elementBytes);
  double params = localBytes / e;
  // Mixed precision keeps an fp32 master copy and fp32 Adam moments (12 B);
  // 4-byte and wider parameters are their own master copy.
  double stateBytes = elementBytes < 4 ? 12 : 2 * e;
  double shards = static_cast<double>(std::max<int64_t>(zeroShards, 1));
  return localBytes + localBytes + params * stateBytes / shards;
}
