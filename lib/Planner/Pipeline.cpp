//===- Pipeline.cpp - Pipeline stages, micro-batches, schedules -*- C++ -*-===//
//
// Part of the dnnc project.
//
//===----------------------------------------------------------------------===//
//
// Implements the profile of a sharded program, the estimate of a pipeline
// configuration on it and the balanced stage split.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Planner/Pipeline.h"
#include "dnnc/Dialect/Dist/IR/DistDialect.h"
#include "dnnc/Dialect/Dist/Transforms/FactorSharding.h"
#include "dnnc/Dialect/Dist/Transforms/ReshardPlan.h"
#include "dnnc/Dialect/Dnn/Transforms/Passes.h"
#include "dnnc/Planner/PlanCost.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/Hashing.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace mlir;
using namespace dnnc;
using namespace dnnc::planner;

//===----------------------------------------------------------------------===//
// Profile
//===----------------------------------------------------------------------===//

/// Returns the bytes of a block of shape `shape` of `elementType`.
static double getBlockBytes(ArrayRef<int64_t> shape, Type elementType) {
  double elements = 1;
  for (int64_t extent : shape)
    elements *= static_cast<double>(extent);
  return elements * dnn::getElementBytes(elementType);
}

double dnnc::planner::getLocalBytes(Value value, dist::MeshOp mesh) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type)
    return 0;
  dist::ShardingAttr sharding =
      mesh ? dist::getStoredSharding(value) : dist::ShardingAttr();
  SmallVector<int64_t> shape =
      sharding ? sharding.getLocalShape(type.getShape(), mesh)
               : SmallVector<int64_t>(type.getShape());
  return getBlockBytes(shape, type.getElementType());
}

/// Maps a reshard step onto the collective the cost model prices.
static std::optional<CollectiveKind>
getCollectiveKind(dist::ReshardStep::Kind kind) {
  switch (kind) {
  case dist::ReshardStep::Kind::AllReduce:
    return CollectiveKind::AllReduce;
  case dist::ReshardStep::Kind::ReduceScatter:
    return CollectiveKind::ReduceScatter;
  case dist::ReshardStep::Kind::AllToAll:
    return CollectiveKind::AllToAll;
  case dist::ReshardStep::Kind::AllGather:
    return CollectiveKind::AllGather;
  case dist::ReshardStep::Kind::Slice:
    return std::nullopt;
  }
  return std::nullopt;
}

/// Returns the half-width of the window in which a cut point must hold the
/// smallest crossing: 16 items (about half a transformer layer), less for
/// small programs so that they still get cut points.
static int64_t getCutWindow(int64_t numItems) {
  return std::clamp<int64_t>(numItems / 16, 1, 16);
}

/// Appends to `saved` the values the backward pass of `op` reads, as
/// Korthikanti et al. (2022) count them: a matrix product its operands
/// whose partner needs a gradient; a nonlinearity, a normalization or a
/// power its input (softmax, exp, tanh, sigmoid, sqrt and reciprocal their
/// result, from which their derivative follows); a product or quotient the
/// operands the other side's gradient needs; max, min and pooling by max
/// their input; a dropout its mask; a select its condition; a gather its
/// indices. Sums, differences, negation, means, data movement, casts and
/// collectives read nothing; ops without a gradient (integer and boolean
/// results, rounding) neither. `needsGradient` says whether a value is an
/// activation or made from weights.
static void getSavedValues(Operation *op,
                           llvm::function_ref<bool(Value)> needsGradient,
                           SmallVectorImpl<Value> &saved) {
  auto others = [&](unsigned index) {
    for (auto [i, operand] : llvm::enumerate(op->getOperands()))
      if (i != index && needsGradient(operand))
        return true;
    return false;
  };
  if (isa<dist::ReshardOp, dnn::ConstantOp, dnn::AddOp, dnn::SubOp,
          dnn::NegOp, dnn::ReduceSumOp, dnn::ReduceMeanOp, dnn::ReshapeOp,
          dnn::BroadcastInDimOp, dnn::TransposeOp, dnn::ConcatOp,
          dnn::SliceOp, dnn::CastOp, dnn::AvgPoolOp, dnn::FloorOp,
          dnn::CeilOp, dnn::RoundOp>(op))
    return;
  if (auto dropout = dyn_cast<dnn::DropoutOp>(op)) {
    saved.push_back(dropout.getMask());
    return;
  }
  if (auto select = dyn_cast<dnn::SelectOp>(op)) {
    saved.push_back(select.getOperand(0));
    return;
  }
  if (auto gather = dyn_cast<dnn::GatherOp>(op)) {
    saved.push_back(gather.getIndices());
    return;
  }
  // No gradient flows through integer or boolean results.
  if (llvm::all_of(op->getResultTypes(), [](Type type) {
        auto shaped = dyn_cast<ShapedType>(type);
        return !shaped || !isa<FloatType>(shaped.getElementType());
      }))
    return;
  if (isa<dnn::SoftmaxOp, dnn::LogSoftmaxOp, dnn::ExpOp, dnn::TanhOp,
          dnn::SigmoidOp, dnn::SqrtOp, dnn::ReciprocalOp>(op)) {
    saved.push_back(op->getResult(0));
    return;
  }
  if (isa<dnn::MatMulOp, dnn::EinsumOp, dnn::ConvOp, dnn::MulOp>(op)) {
    for (auto [i, operand] : llvm::enumerate(op->getOperands()))
      if (others(i))
        saved.push_back(operand);
    return;
  }
  if (auto div = dyn_cast<dnn::DivOp>(op)) {
    if (needsGradient(div.getLhs()) || needsGradient(div.getRhs()))
      saved.push_back(div.getRhs());
    if (needsGradient(div.getRhs()))
      saved.push_back(div.getLhs());
    return;
  }
  if (isa<dnn::ReduceMaxOp, dnn::ReduceMinOp, dnn::ReduceProdOp,
          dnn::MaxPoolOp>(op)) {
    saved.push_back(op->getOperand(0));
    saved.push_back(op->getResult(0));
    return;
  }
  if (isa<dnn::MaxOp, dnn::MinOp, dnn::PowOp, dnn::SoftmaxCrossEntropyOp>(
          op)) {
    saved.append(op->operand_begin(), op->operand_end());
    return;
  }
  // Other elementwise nonlinearities and normalizations: the input.
  if (op->getNumOperands() > 0)
    saved.push_back(op->getOperand(0));
}

/// Marks the items selective recomputation runs again
/// (`dnn::findRecomputableCores`: the attention cores).
static void markRecomputable(Block &body, PlanProfile &profile,
                             const llvm::DenseMap<Operation *, int64_t> &position,
                             llvm::function_ref<bool(Value)> isActivation) {
  for (Operation *member : dnn::findRecomputableCores(
           body, isActivation, [](Operation *) { return true; }))
    if (auto it = position.find(member); it != position.end())
      profile.items[it->second].recomputable = true;
}

/// Returns the length, in items, of the layer `keys` (one per item: the op
/// and its shape class) repeats, or 0 when it repeats none: among the gaps
/// between consecutive occurrences of the three rarest keys that occur more
/// than once (at most 64), the one under which the most items equal the item that far
/// ahead, if those are at least one whole layer and half the items it
/// could match.
static int64_t findLayerPeriod(ArrayRef<llvm::hash_code> keys) {
  int64_t n = keys.size();
  llvm::DenseMap<size_t, SmallVector<int64_t, 2>> occurrences;
  for (auto [i, key] : llvm::enumerate(keys))
    occurrences[static_cast<size_t>(key)].push_back(i);
  SmallVector<const SmallVector<int64_t, 2> *> repeated;
  for (auto &[key, where] : occurrences)
    if (where.size() > 1)
      repeated.push_back(&where);
  llvm::sort(repeated, [](auto *a, auto *b) {
    return a->size() < b->size() || (a->size() == b->size() && a->front() <
                                                                  b->front());
  });
  llvm::SmallSetVector<int64_t, 16> candidates;
  for (const SmallVector<int64_t, 2> *where :
       ArrayRef(repeated).take_front(3))
    for (size_t j = 1; j < where->size() && candidates.size() < 64; ++j)
      candidates.insert((*where)[j] - (*where)[j - 1]);
  int64_t best = 0, bestMatches = 0;
  for (int64_t period : candidates) {
    if (period < 2 || 2 * period > n)
      continue;
    int64_t matches = 0;
    for (int64_t i = 0; i + period < n; ++i)
      matches += keys[i] == keys[i + period];
    if (matches > bestMatches ||
        (matches == bestMatches && period < best)) {
      best = period;
      bestMatches = matches;
    }
  }
  if (best == 0 || bestMatches < best || 2 * bestMatches < n - best)
    return 0;
  return best;
}

/// Returns the checkpoints of full recomputation (see
/// PlanProfile::checkpoints): from the start, the cut point of least
/// crossing (the latest of equals) within one `period` after the previous
/// checkpoint, or the first cut point past it; every cut point when
/// `period` is 0.
static SmallVector<int64_t> selectCheckpoints(const PlanProfile &profile,
                                              int64_t period) {
  if (period == 0)
    return profile.cuts;
  SmallVector<int64_t> checkpoints;
  ArrayRef<int64_t> cuts = profile.cuts;
  int64_t last = 0;
  size_t j = 0;
  while (j < cuts.size()) {
    size_t chosen = j;
    for (size_t k = j; k < cuts.size() && cuts[k] <= last + period; ++k)
      if (profile.crossing[cuts[k]] <= profile.crossing[cuts[chosen]])
        chosen = k;
    checkpoints.push_back(cuts[chosen]);
    last = cuts[chosen];
    j = chosen + 1;
  }
  return checkpoints;
}

PlanProfile dnnc::planner::buildPlanProfile(func::FuncOp func,
                                            dist::MeshOp mesh,
                                            const CostModel &model,
                                            StringRef dpAxis,
                                            StringRef ppAxis) {
  return buildPlanProfile(func, func.getBody().front(), mesh, model, dpAxis,
                          ppAxis);
}

PlanProfile dnnc::planner::buildPlanProfile(func::FuncOp func, Block &body,
                                            dist::MeshOp mesh,
                                            const CostModel &model,
                                            StringRef dpAxis,
                                            StringRef ppAxis) {
  PlanProfile profile;

  // Weights, and the batch the first graph input carries.
  llvm::DenseMap<Value, unsigned> weightIndex;
  for (BlockArgument arg : body.getArguments()) {
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    if (!type)
      continue;
    if (!dnn::isWeightArgument(func, arg.getArgNumber())) {
      if (profile.localBatch == 0 && type.getRank() > 0) {
        dist::ShardingAttr sharding =
            mesh ? dist::getStoredSharding(arg) : dist::ShardingAttr();
        SmallVector<int64_t> shape =
            sharding ? sharding.getLocalShape(type.getShape(), mesh)
                     : SmallVector<int64_t>(type.getShape());
        profile.localBatch = ShapedType::isDynamic(shape[0]) ? 0 : shape[0];
      }
      continue;
    }
    ProfileWeight weight;
    weight.localBytes = getLocalBytes(arg, mesh);
    weight.elementBytes = dnn::getElementBytes(type.getElementType());
    if (mesh) {
      // Its gradient is a partial sum over the axes that split the work of
      // an op using it but not the weight itself (activations split over
      // an axis the weight is replicated on); over the others every device
      // computes the same gradient.
      dist::ShardingAttr sharding = dist::getStoredSharding(arg);
      auto splitsUse = [&](StringRef name) {
        for (Operation *user : arg.getUsers())
          for (Value result : user->getResults())
            if (dist::ShardingAttr used = dist::getStoredSharding(result);
                used && used.usesAxis(name))
              return true;
        return false;
      };
      SmallVector<StringAttr> axes;
      for (unsigned i = 0, e = mesh.getNumAxes(); i < e; ++i) {
        dist::MeshAxisAttr axis = mesh.getAxis(i);
        StringRef name = axis.getName().getValue();
        if (axis.getSize() > 1 && name != dpAxis && name != ppAxis &&
            !(sharding && sharding.usesAxis(name)) && splitsUse(name))
          axes.push_back(axis.getName());
      }
      if (!axes.empty()) {
        weight.replicatedGroup = mesh.getGroupSize(axes);
        weight.replicatedLink = &model.getLink(mesh, axes);
      }
    }
    weightIndex[arg] = profile.weights.size();
    profile.weights.push_back(weight);
  }

  // Values that depend on graph inputs (activations); the others, made
  // from weights and constants alone (broadcast masks, scales), are the
  // same for every micro-batch: each stage makes its own and none is kept
  // for the backward pass.
  llvm::DenseSet<Value> activations;
  for (BlockArgument arg : body.getArguments())
    if (!weightIndex.count(arg))
      activations.insert(arg);
  auto isActivation = [&](Value value) { return activations.contains(value); };

  // Items, and a key per item for finding repeated layers: the op, its
  // operand count and its result's rank.
  llvm::DenseMap<Operation *, int64_t> position;
  SmallVector<llvm::hash_code> keys;
  for (Operation &op : body.without_terminator()) {
    position[&op] = profile.items.size();
    auto resultType = op.getNumResults() == 1
                          ? dyn_cast<ShapedType>(op.getResult(0).getType())
                          : ShapedType();
    keys.push_back(llvm::hash_combine(
        op.getName().getAsOpaquePointer(), op.getNumOperands(),
        resultType && resultType.hasRank() ? resultType.getRank() : -1));
    if (llvm::any_of(op.getOperands(), isActivation))
      for (Value result : op.getResults())
        activations.insert(result);
    ProfileItem item;
    StringRef node = dnn::getNodeName(op.getLoc());
    item.name = node.empty() ? op.getName().getStringRef().str() : node.str();
    for (Value operand : op.getOperands())
      if (auto it = weightIndex.find(operand); it != weightIndex.end())
        if (!llvm::is_contained(item.weights, it->second))
          item.weights.push_back(it->second);
    for (Value result : op.getResults())
      if (isActivation(result))
        item.resultBytes += getLocalBytes(result, mesh);

    if (auto reshard = dyn_cast<dist::ReshardOp>(op)) {
      item.isReshard = true;
      if (mesh) {
        Value input = reshard.getInput();
        auto type = cast<RankedTensorType>(input.getType());
        dist::ShardingAttr from = dist::getStoredSharding(input);
        SmallVector<int64_t> shape =
            from ? from.getLocalShape(type.getShape(), mesh)
                 : SmallVector<int64_t>(type.getShape());
        std::string reason;
        FailureOr<SmallVector<dist::ReshardStep>> steps =
            dist::planReshard(shape, from, reshard.getTo(), mesh, reason);
        if (succeeded(steps)) {
          for (const dist::ReshardStep &step : *steps) {
            std::optional<CollectiveKind> kind = getCollectiveKind(step.kind);
            if (!kind) {
              item.copyBytes +=
                  getBlockBytes(step.shape, type.getElementType());
            } else {
              ProfileCollective collective;
              collective.kind = *kind;
              collective.bytes = getBlockBytes(shape, type.getElementType());
              collective.groupSize = mesh.getGroupSize(step.axes);
              collective.link = &model.getLink(mesh, step.axes);
              item.collectives.push_back(collective);
            }
            shape = step.shape;
          }
        }
      }
      profile.items.push_back(std::move(item));
      continue;
    }

    if (auto costly = dyn_cast<dnn::DnnCostOpInterface>(op)) {
      item.cost = costly.getCost();
      for (Value operand :
           llvm::SetVector<Value>(op.operand_begin(), op.operand_end()))
        if (!isActivation(operand))
          item.fixedBytes += getLocalBytes(operand, mesh);
      item.elementType = CostModel::getComputeElementType(&op);
      item.shards = getOpShards(&op, mesh);
      profile.modelFlops +=
          item.cost->flops * model.getTrainMultiplier(item.cost->isMatrix);
    }
    dnn::ShardingRuleAttr rule = dnn::getShardingRule(&op);
    if (mesh && rule) {
      dist::FactorSharding fs = dist::getStoredFactorSharding(&op, rule, mesh);
      for (OpResult result : op.getResults())
        for (auto &[kind, axes] :
             fs.getPendingReductions(result.getResultNumber())) {
          ProfileCollective collective;
          collective.bytes = getLocalBytes(result, mesh);
          collective.groupSize = mesh.getGroupSize(axes);
          collective.link = &model.getLink(mesh, axes);
          item.collectives.push_back(collective);
        }
    }
    profile.items.push_back(std::move(item));
  }

  // Fusion: the generated kernels of the device lowering fuse chains of
  // non-matrix ops, so a non-matrix result whose only user is a non-matrix
  // op is neither written nor read back, and the pair is one launch. A
  // broadcast fuses into each of its users (the lowering gives every use a
  // copy of its own: an optimizer's learning rate broadcast to a weight's
  // shape is never written out).
  for (Operation &op : body.without_terminator()) {
    int64_t index = position[&op];
    ProfileItem &producer = profile.items[index];
    if (op.getNumResults() != 1 || !producer.cost || producer.cost->isMatrix)
      continue;
    if (isa<dnn::BroadcastInDimOp>(op) && !op.getResult(0).hasOneUse()) {
      auto type = dyn_cast<RankedTensorType>(op.getResult(0).getType());
      auto consumers = llvm::map_to_vector(
          op.getResult(0).getUsers(), [&](Operation *user) -> ProfileItem * {
            auto it = position.find(user);
            return it == position.end() ? nullptr : &profile.items[it->second];
          });
      if (!type || !type.hasStaticShape() ||
          llvm::any_of(consumers, [](ProfileItem *consumer) {
            return !consumer || !consumer->cost || consumer->cost->isMatrix ||
                   consumer->isReshard;
          }))
        continue;
      double bytes = getBlockBytes(type.getShape(), type.getElementType());
      producer.cost->bytesWritten =
          std::max(0.0, producer.cost->bytesWritten - bytes);
      for (ProfileItem *consumer :
           llvm::SetVector<ProfileItem *>(consumers.begin(), consumers.end()))
        consumer->cost->bytesRead =
            std::max(0.0, consumer->cost->bytesRead - bytes);
      producer.fused = true;
      continue;
    }
    if (!op.getResult(0).hasOneUse())
      continue;
    Operation *user = *op.getResult(0).getUsers().begin();
    auto it = position.find(user);
    if (it == position.end())
      continue;
    ProfileItem &consumer = profile.items[it->second];
    if (!consumer.cost || consumer.cost->isMatrix || consumer.isReshard)
      continue;
    auto type = dyn_cast<RankedTensorType>(op.getResult(0).getType());
    if (!type || !type.hasStaticShape())
      continue;
    double bytes = getBlockBytes(type.getShape(), type.getElementType());
    producer.cost->bytesWritten =
        std::max(0.0, producer.cost->bytesWritten - bytes);
    consumer.cost->bytesRead = std::max(0.0, consumer.cost->bytesRead - bytes);
    producer.fused = true;
  }

  // Values the backward pass reads, each counted once at the first item
  // that needs it; those made by the attention cores are recomputable.
  llvm::DenseSet<Value> fromWeights;
  for (auto &[arg, index] : weightIndex)
    fromWeights.insert(arg);
  for (Operation &op : body.without_terminator())
    if (llvm::any_of(op.getOperands(),
                     [&](Value v) { return fromWeights.contains(v); }))
      for (Value result : op.getResults())
        fromWeights.insert(result);
  auto needsGradient = [&](Value value) {
    return isActivation(value) || fromWeights.contains(value);
  };
  markRecomputable(body, profile, position, isActivation);
  llvm::DenseSet<Value> kept;
  for (Operation &op : body.without_terminator()) {
    ProfileItem &item = profile.items[position[&op]];
    SmallVector<Value, 4> saved;
    getSavedValues(&op, needsGradient, saved);
    for (Value value : saved) {
      if (!isActivation(value) || !kept.insert(value).second)
        continue;
      double bytes = getLocalBytes(value, mesh);
      item.savedBytes += bytes;
      Operation *def = value.getDefiningOp();
      if (def && def->getBlock() == &body &&
          profile.items[position[def]].recomputable)
        item.recomputableBytes += bytes;
    }
  }

  // Bytes crossing each point: a value made by item i (not a constant) and
  // last used by item u (the terminator: past the end) crosses (i, u].
  int64_t n = profile.items.size();
  SmallVector<double> delta(n + 2, 0);
  for (Operation &op : body.without_terminator()) {
    if (!llvm::any_of(op.getResults(), isActivation))
      continue;
    int64_t def = position[&op];
    for (Value result : op.getResults()) {
      int64_t last = def;
      for (Operation *user : result.getUsers()) {
        Operation *top = body.findAncestorOpInBlock(*user);
        if (!top)
          continue;
        auto it = position.find(top);
        last = std::max(last, it == position.end() ? n : it->second);
      }
      if (last <= def)
        continue;
      double bytes = getLocalBytes(result, mesh);
      delta[def + 1] += bytes;
      delta[last + 1] -= bytes;
    }
  }
  profile.crossing.assign(n + 1, 0);
  double running = 0;
  for (int64_t c = 0; c <= n; ++c) {
    running += delta[c];
    profile.crossing[c] = std::max(0.0, running);
  }

  // Cut points: the smallest crossing within a window, the last of a run
  // of equal ones, and only after an item that does work (a cut between
  // free ops is the same as the next one).
  int64_t window = getCutWindow(n);
  // A reshard stays with the op before it (its value's producer), and the
  // first stage holds some computation.
  int64_t firstWork = n;
  for (int64_t i = 0; i < n && firstWork == n; ++i)
    if (!profile.items[i].isReshard && profile.items[i].cost &&
        (profile.items[i].cost->flops > 0 ||
         profile.items[i].cost->getBytes() > 0))
      firstWork = i;
  for (int64_t c = firstWork + 1; c < n; ++c) {
    const ProfileItem &previous = profile.items[c - 1];
    if ((!previous.cost && previous.collectives.empty()) ||
        profile.items[c].isReshard)
      continue;
    bool minimal = true;
    for (int64_t other = std::max<int64_t>(1, c - window),
                 e = std::min<int64_t>(n - 1, c + window);
         other <= e && minimal; ++other)
      if (profile.crossing[other] < profile.crossing[c] ||
          (other > c && other == c + 1 &&
           profile.crossing[other] == profile.crossing[c] &&
           !profile.items[c].cost && profile.items[c].collectives.empty()))
        minimal = false;
    if (minimal)
      profile.cuts.push_back(c);
  }
  profile.checkpoints = selectCheckpoints(profile, findLayerPeriod(keys));
  profile.finalize();
  return profile;
}

void RangeMax::build(ArrayRef<double> values) {
  levels.clear();
  levels.emplace_back(values.begin(), values.end());
  for (size_t width = 1; 2 * width <= values.size(); width *= 2) {
    const SmallVector<double> &previous = levels.back();
    SmallVector<double> level(previous.size() - width);
    for (size_t i = 0; i < level.size(); ++i)
      level[i] = std::max(previous[i], previous[i + width]);
    levels.push_back(std::move(level));
  }
}

double RangeMax::get(int64_t begin, int64_t end) const {
  if (end <= begin || levels.empty())
    return 0;
  unsigned j = llvm::Log2_64(static_cast<uint64_t>(end - begin));
  return std::max(levels[j][begin], levels[j][end - (int64_t{1} << j)]);
}

void PlanProfile::finalize() {
  int64_t n = items.size();
  SmallVector<double> alive(n);
  for (int64_t i = 0; i < n; ++i)
    alive[i] = crossing[i] + items[i].resultBytes;
  live.build(alive);
  if (checkpoints.empty())
    checkpoints = cuts;
  SmallVector<double> saved(checkpoints.size() + 1, 0),
      recomputable(checkpoints.size() + 1, 0);
  for (int64_t i = 0; i < n; ++i) {
    saved[getLayer(i)] += items[i].savedBytes;
    recomputable[getLayer(i)] += items[i].recomputableBytes;
  }
  layerSaved.build(saved);
  layerRecomputable.build(recomputable);
  checkpointCrossing.assign(checkpoints.size() + 1, 0);
  for (size_t j = 0; j < checkpoints.size(); ++j)
    checkpointCrossing[j + 1] = checkpointCrossing[j] + crossing[checkpoints[j]];
}

int64_t PlanProfile::getLayer(int64_t item) const {
  return llvm::upper_bound(checkpoints, item) - checkpoints.begin();
}

//===----------------------------------------------------------------------===//
// Estimate
//===----------------------------------------------------------------------===//

double dnnc::planner::getMicrobatchesInFlight(const PipelineConfig &config,
                                              int64_t rank) {
  double m = static_cast<double>(config.microbatches);
  double p = static_cast<double>(config.stages);
  double v = static_cast<double>(config.chunks);
  double d = static_cast<double>(rank);
  switch (config.schedule) {
  case Schedule::GPipe:
    return m;
  case Schedule::OneFOneB:
    return std::min(m, p - d);
  case Schedule::Interleaved:
    return std::min(m, ((p - d - 1) * 2 + (v - 1) * p + 1) / v);
  }
  return m;
}

double PipelineEstimate::getPeakMemoryBytes() const {
  double peak = 0;
  for (double bytes : deviceMemory)
    peak = std::max(peak, bytes);
  return peak;
}

namespace {
/// Prefix sums of per-item quantities under one configuration, so that a
/// stage's estimate is O(1) apart from its weights.
class StagePricer {
public:
  StagePricer(const PlanProfile &profile, const PipelineConfig &config,
              const CostModel &model);

  /// Returns the estimate of a virtual stage of items [begin, end).
  StageEstimate price(int64_t begin, int64_t end) const;

  /// Returns the seconds one micro-batch of items [begin, end) takes.
  double getSeconds(int64_t begin, int64_t end) const {
    return sum(fwdCompute, begin, end) + sum(bwdCompute, begin, end) +
           sum(communication, begin, end) +
           sum(bwdCommunication, begin, end) + getTransferSeconds(end);
  }

  /// Returns the bytes a device holding items [begin, end) as one chunk
  /// keeps for one micro-batch in flight, and once.
  std::pair<double, double> getActivationBytes(int64_t begin,
                                               int64_t end) const;


  /// Returns the bytes of the weights first used in items [begin, end).
  double getWeightBytes(int64_t begin, int64_t end) const {
    return sum(weightMemory, begin, end);
  }

  /// Returns the seconds one micro-batch spends in item `i` (compute and
  /// collectives, forward and backward; no transfer): the stages' times
  /// are sums of these and their transfers.
  double getItemSeconds(int64_t i) const {
    return getSeconds(i, i + 1) - getTransferSeconds(i + 1);
  }

private:
  static double sum(ArrayRef<double> prefix, int64_t begin, int64_t end) {
    return prefix[end] - prefix[begin];
  }
  double getTransferSeconds(int64_t end) const;

  const PlanProfile &profile;
  const PipelineConfig &config;
  const CostModel &model;
  bool train;
  /// Batch divisor of a micro-batch: batch shards x micro-batches.
  double scale;
  /// Prefix sums (n + 1 entries). The backward pass includes what it
  /// recomputes; collectives run forward and (transposed) backward in
  /// training, and forward again where recomputed.
  SmallVector<double> fwdCompute, bwdCompute, communication, bwdCommunication,
      saved, recomputable, weightMemory, weightGradients, replicatedGradients;
  /// The largest replicated group of a weight first used before each item
  /// (prefix maximum is not a sum: kept per item).
  SmallVector<int64_t> replicatedGroup;
  SmallVector<const LinkSpec *> replicatedLink;
};
} // namespace

StagePricer::StagePricer(const PlanProfile &profile,
                         const PipelineConfig &config, const CostModel &model)
    : profile(profile), config(config), model(model),
      train(model.getMode() == Mode::Train) {
  scale = static_cast<double>(std::max<int64_t>(config.batchShards, 1) *
                              std::max<int64_t>(config.microbatches, 1)) /
          static_cast<double>(std::max<int64_t>(config.profileMicrobatches, 1));
  int64_t n = profile.items.size();
  fwdCompute.assign(n + 1, 0);
  bwdCompute.assign(n + 1, 0);
  communication.assign(n + 1, 0);
  bwdCommunication.assign(n + 1, 0);
  saved.assign(n + 1, 0);
  recomputable.assign(n + 1, 0);
  weightMemory.assign(n + 1, 0);
  weightGradients.assign(n + 1, 0);
  replicatedGradients.assign(n + 1, 0);
  replicatedGroup.assign(n, 1);
  replicatedLink.assign(n, nullptr);
  double bandwidth = model.getCluster().device.memoryBandwidth;
  SmallVector<bool> seen(profile.weights.size(), false);
  for (int64_t i = 0; i < n; ++i) {
    const ProfileItem &item = profile.items[i];
    double forward = 0, backward = 0, comm = 0;
    if (item.cost) {
      // One micro-batch of the local block: the batch-proportional FLOPs
      // and bytes shrink with it, the fixed operands are read whole.
      dnn::OpCost cost = *item.cost;
      double blocks = static_cast<double>(std::max<int64_t>(item.shards, 1));
      double bytes = cost.getBytes() / blocks;
      double fixed = std::min(item.fixedBytes, bytes);
      cost.flops /= blocks * scale;
      cost.bytesRead = (bytes - fixed) / scale + fixed;
      cost.bytesWritten = 0;
      double total = model.getOpTime(cost, item.elementType, 1);
      // A fused producer shares its consumer's launch.
      if (item.fused && total > 0)
        total = std::max(0.0, total - model.getTrainMultiplier(false) *
                                          model.getLaunchOverhead());
      forward = total / model.getTrainMultiplier(item.cost->isMatrix);
      backward = total - forward;
    }
    for (const ProfileCollective &collective : item.collectives)
      comm += model.getCollectiveTime(collective.kind, collective.bytes / scale,
                                      collective.groupSize, *collective.link);
    if (bandwidth > 0)
      forward += 2 * item.copyBytes / scale / bandwidth;
    bool recomputed =
        train && (config.recompute == Recompute::Full ||
                  (config.recompute == Recompute::Selective &&
                   item.recomputable));
    if (recomputed)
      backward += forward;
    double backwardComm = !train ? 0 : recomputed ? 2 * comm : comm;
    double memory = 0, gradients = 0, replicated = 0;
    for (unsigned w : item.weights) {
      if (seen[w])
        continue;
      seen[w] = true;
      const ProfileWeight &weight = profile.weights[w];
      // Each micro-batch of a step of several adds its share of the
      // gradient to an accumulator (reads both, writes the sum).
      if (train && config.microbatches > 1 && bandwidth > 0)
        backward +=
            3 * weight.localBytes / bandwidth + model.getLaunchOverhead();
      memory += model.getWeightMemory(weight.localBytes, weight.elementBytes,
                                      config.zero ? config.dp : 1);
      gradients += weight.localBytes;
      if (weight.replicatedGroup > 1) {
        replicated += weight.localBytes;
        if (weight.replicatedGroup > replicatedGroup[i]) {
          replicatedGroup[i] = weight.replicatedGroup;
          replicatedLink[i] = weight.replicatedLink;
        }
      }
    }
    fwdCompute[i + 1] = fwdCompute[i] + forward;
    bwdCompute[i + 1] = bwdCompute[i] + backward;
    communication[i + 1] = communication[i] + comm;
    bwdCommunication[i + 1] = bwdCommunication[i] + backwardComm;
    saved[i + 1] = saved[i] + item.savedBytes / scale;
    recomputable[i + 1] = recomputable[i] + item.recomputableBytes / scale;
    weightMemory[i + 1] = weightMemory[i] + memory;
    weightGradients[i + 1] = weightGradients[i] + gradients;
    replicatedGradients[i + 1] = replicatedGradients[i] + replicated;
  }
}

double StagePricer::getTransferSeconds(int64_t end) const {
  int64_t n = profile.items.size();
  if (end >= n || config.stages * config.chunks <= 1)
    return 0;
  double seconds =
      model.getCollectiveTime(CollectiveKind::SendRecv,
                              profile.crossing[end] / scale, 2, config.ppLink);
  return train ? 2 * seconds : seconds;
}

std::pair<double, double> StagePricer::getActivationBytes(int64_t begin,
                                                          int64_t end) const {
  if (end <= begin)
    return {0, 0};
  if (!train) // One micro-batch at a time: the most bytes alive at once.
    return {profile.live.get(begin, end) / scale, 0};
  if (config.recompute == Recompute::Off)
    return {sum(saved, begin, end), 0};
  // The layers (between checkpoints) the stage overlaps; one of them at a
  // time is recomputed.
  int64_t firstLayer = profile.getLayer(begin);
  int64_t lastLayer = profile.getLayer(end - 1);
  if (config.recompute == Recompute::Selective)
    return {sum(saved, begin, end) - sum(recomputable, begin, end),
            profile.layerRecomputable.get(firstLayer, lastLayer + 1) / scale};
  // Full recomputation keeps the stage input and the values crossing each
  // checkpoint inside, and one layer's saved values at a time while it is
  // recomputed.
  int64_t inside = llvm::lower_bound(profile.checkpoints, end) -
                   profile.checkpoints.begin();
  double kept = profile.crossing[begin] +
                profile.checkpointCrossing[inside] -
                profile.checkpointCrossing[firstLayer];
  double largest = profile.layerSaved.get(firstLayer, lastLayer + 1);
  return {kept / scale, largest / scale};
}

StageEstimate StagePricer::price(int64_t begin, int64_t end) const {
  StageEstimate stage;
  stage.begin = begin;
  stage.end = end;
  stage.forwardCompute = sum(fwdCompute, begin, end);
  double comm = sum(communication, begin, end);
  stage.forwardCommunication = comm;
  stage.backwardCompute = sum(bwdCompute, begin, end);
  stage.backwardCommunication = sum(bwdCommunication, begin, end);
  stage.transferSeconds = getTransferSeconds(end);
  // In training, half of a boundary's round trip each way: the activations
  // forward, their gradients back.
  stage.forwardSendSeconds =
      train ? stage.transferSeconds / 2 : stage.transferSeconds;
  stage.backwardSendSeconds =
      train && begin > 0 ? getTransferSeconds(begin) / 2 : 0;
  stage.weightBytes = getWeightBytes(begin, end);
  std::tie(stage.activationBytes, stage.transientBytes) =
      getActivationBytes(begin, end);
  if (!train)
    return stage;
  // Gradient synchronisation over the data-parallel axis and the axes
  // weights are replicated over; the optimizer reads and writes every
  // byte of weight state once.
  stage.gradientSyncSeconds = model.getCollectiveTime(
      CollectiveKind::AllReduce, sum(weightGradients, begin, end), config.dp,
      config.dpLink);
  int64_t group = 1;
  const LinkSpec *link = nullptr;
  for (int64_t i = begin; i < end; ++i)
    if (replicatedGroup[i] > group) {
      group = replicatedGroup[i];
      link = replicatedLink[i];
    }
  if (link)
    stage.gradientSyncSeconds += model.getCollectiveTime(
        CollectiveKind::AllReduce, sum(replicatedGradients, begin, end), group,
        *link);
  double bandwidth = model.getCluster().device.memoryBandwidth;
  if (bandwidth > 0)
    stage.optimizerSeconds = 2 * stage.weightBytes / bandwidth;
  return stage;
}

PipelineEstimate dnnc::planner::estimatePipeline(const PlanProfile &profile,
                                                 const PipelineConfig &config,
                                                 ArrayRef<int64_t> boundaries,
                                                 const CostModel &model) {
  PipelineEstimate estimate;
  estimate.config = config;
  estimate.boundaries.assign(boundaries.begin(), boundaries.end());
  StagePricer pricer(profile, config, model);
  int64_t ranks = std::max<int64_t>(config.stages, 1);
  double m = static_cast<double>(std::max<int64_t>(config.microbatches, 1));
  SmallVector<double> work(ranks, 0), compute(ranks, 0), comm(ranks, 0),
      sync(ranks, 0), optimizer(ranks, 0), weights(ranks, 0),
      activations(ranks, 0), transient(ranks, 0);
  estimate.itemSeconds.reserve(profile.items.size());
  for (int64_t i = 0, n = profile.items.size(); i < n; ++i)
    estimate.itemSeconds.push_back(pricer.getItemSeconds(i));
  for (size_t k = 0; k + 1 < boundaries.size(); ++k) {
    StageEstimate stage = pricer.price(boundaries[k], boundaries[k + 1]);
    int64_t rank = static_cast<int64_t>(k) % ranks;
    work[rank] += stage.getMicrobatchSeconds();
    compute[rank] += stage.forwardCompute + stage.backwardCompute;
    comm[rank] += stage.forwardCommunication + stage.backwardCommunication +
                  stage.transferSeconds;
    sync[rank] += stage.gradientSyncSeconds;
    optimizer[rank] += stage.optimizerSeconds;
    weights[rank] += stage.weightBytes;
    activations[rank] += stage.activationBytes;
    transient[rank] = std::max(transient[rank], stage.transientBytes);
    estimate.stages.push_back(stage);
  }
  bool train = model.getMode() == Mode::Train;
  double maxWork = 0, totalWork = 0;
  for (double w : work) {
    maxWork = std::max(maxWork, w);
    totalWork += w;
  }
  double v = static_cast<double>(std::max<int64_t>(config.chunks, 1));
  estimate.pipelineSeconds = m * maxWork + (totalWork - maxWork) / v;
  double busy = 0;
  for (int64_t rank = 0; rank < ranks; ++rank) {
    double inFlight = train ? getMicrobatchesInFlight(config, rank) : 1;
    // Activations per chunk are summed over the rank's chunks; the
    // interleaved count is in units of all of them.
    estimate.deviceMemory.push_back(
        weights[rank] + activations[rank] * inFlight + transient[rank]);
    estimate.gradientSyncSeconds =
        std::max(estimate.gradientSyncSeconds, sync[rank]);
    estimate.optimizerSeconds =
        std::max(estimate.optimizerSeconds, optimizer[rank]);
    estimate.computeSeconds =
        std::max(estimate.computeSeconds, m * compute[rank] + optimizer[rank]);
    estimate.communicationSeconds =
        std::max(estimate.communicationSeconds, m * comm[rank] + sync[rank]);
    busy += m * work[rank];
  }
  if (estimate.pipelineSeconds > 0)
    estimate.bubbleFraction =
        std::max(0.0, 1 - busy / (static_cast<double>(ranks) *
                                  estimate.pipelineSeconds));
  return estimate;
}

//===----------------------------------------------------------------------===//
// Split
//===----------------------------------------------------------------------===//

namespace {
/// The greedy fill of the stage split under a time and a memory bound.
class Splitter {
public:
  Splitter(const PlanProfile &profile, const PipelineConfig &config,
           const CostModel &model)
      : profile(profile), config(config), pricer(profile, config, model),
        train(model.getMode() == Mode::Train) {
    ends.assign(profile.cuts.begin(), profile.cuts.end());
    ends.push_back(profile.items.size());
    for (int64_t rank = 0; rank < config.stages; ++rank)
      inFlight.push_back(train ? getMicrobatchesInFlight(config, rank) : 1);
  }

  /// Returns boundaries of a split whose stages all take at most
  /// `timeBound` per micro-batch and fit `memoryBound`, or nullopt when
  /// there is none: the greedy fill when it succeeds, else the exact search.
  /// (The greedy fill alone is not exact: the time of a stage includes the
  /// transfer at its end, which varies from one cut point to the next, and
  /// its memory the micro-batches in flight on its rank; filling a stage as
  /// far as possible can leave the next one only ends with a slow transfer
  /// or a rank that keeps more micro-batches, where a shorter first stage
  /// would have fit. Then `fits` would not even grow with the bound.)
  std::optional<SmallVector<int64_t>> fill(double timeBound,
                                           double memoryBound) const {
    if (std::optional<SmallVector<int64_t>> greedy =
            fillGreedy(timeBound, memoryBound))
      return greedy;
    return fillExact(timeBound, memoryBound);
  }

  /// Fills the virtual stages in order, each as far as the bounds allow
  /// while leaving one segment for each later stage. Returns the
  /// boundaries, or nullopt when the items do not fit this way.
  std::optional<SmallVector<int64_t>> fillGreedy(double timeBound,
                                                 double memoryBound) const {
    int64_t stages = config.getNumVirtualStages();
    int64_t numEnds = ends.size();
    if (numEnds < stages)
      return std::nullopt;
    SmallVector<int64_t> boundaries = {0};
    SmallVector<double> weights(config.stages, 0),
        activations(config.stages, 0), transient(config.stages, 0);
    int64_t next = 0; // index into `ends` of the first candidate end
    for (int64_t k = 0; k < stages; ++k) {
      int64_t rank = k % config.stages;
      int64_t begin = boundaries.back();
      // The last stage must reach the end; the others leave room.
      int64_t lastAllowed = numEnds - (stages - k);
      int64_t chosen = -1;
      // The last stage takes everything left.
      for (int64_t e = k == stages - 1 ? numEnds - 1 : next; e <= lastAllowed;
           ++e) {
        int64_t end = ends[e];
        double seconds = pricer.getSeconds(begin, end);
        auto [kept, once] = pricer.getActivationBytes(begin, end);
        double memory = weights[rank] + pricer.getWeightBytes(begin, end) +
                        (activations[rank] + kept) * inFlight[rank] +
                        std::max(transient[rank], once);
        // A rank's chunks share its memory: filling the early chunks first
        // would starve the later ones, so each chunk gets an equal share.
        double chunkMemory =
            pricer.getWeightBytes(begin, end) + kept * inFlight[rank] + once;
        bool overMemory =
            memory > memoryBound ||
            (config.chunks > 1 && chunkMemory > memoryBound / config.chunks);
        // Memory and the time without the transfer only grow with the
        // end: past either bound, no later end can do.
        if (overMemory || seconds - pricer.getSeconds(end, end) > timeBound)
          break;
        if (seconds <= timeBound)
          chosen = e;
      }
      if (chosen < 0)
        return std::nullopt;
      int64_t end = ends[chosen];
      auto [kept, once] = pricer.getActivationBytes(begin, end);
      weights[rank] += pricer.getWeightBytes(begin, end);
      activations[rank] += kept;
      transient[rank] = std::max(transient[rank], once);
      boundaries.push_back(end);
      next = chosen + 1;
    }
    return boundaries;
  }

  /// Finds a split within the bounds over all splits: the positions
  /// (0: the first item; i + 1: `ends[i]`) each stage count can reach,
  /// stage by stage. A stage ending at a given position fits from a start
  /// if it fits from any later one, so only the last reachable start before
  /// each end is tried. Positions are searched within windows: below the
  /// farthest a split can reach, and not before the first the end can be
  /// reached from.
  std::optional<SmallVector<int64_t>> fillExact(double timeBound,
                                                double memoryBound) const {
    int64_t stages = config.getNumVirtualStages();
    int64_t numEnds = ends.size();
    if (stages < 1 || numEnds < stages)
      return std::nullopt;
    double stageMemory = getStageMemoryBound(memoryBound);
    // upper[k]: no split reaches beyond it with k stages (stage k ends at
    // most at the farthest end that fits it from upper[k], or one past
    // upper[k]); lower[k]: no split reaches the end with stages k and on
    // from before it (a stage that fits fits from any later start, apart
    // from the transfer at its end). A stage leaves one segment to each
    // later one.
    SmallVector<int64_t> upper(stages + 1, 0), lower(stages + 1, numEnds);
    for (int64_t k = 0; k < stages; ++k) {
      double rankInFlight = inFlight[k % config.stages];
      int64_t farthest = upper[k] + 1;
      for (int64_t to = upper[k] + 1; to <= numEnds - (stages - 1 - k); ++to) {
        StageCost cost = getStageCost(upper[k], to, rankInFlight);
        if (cost.compute > timeBound || cost.memory > stageMemory)
          break;
        if (cost.seconds <= timeBound)
          farthest = to;
      }
      upper[k + 1] = farthest;
    }
    for (int64_t k = stages - 1; k >= 0; --k) {
      double rankInFlight = inFlight[k % config.stages];
      int64_t from = lower[k + 1] - 1;
      for (; from > k; --from) {
        StageCost cost = getStageCost(from - 1, lower[k + 1], rankInFlight);
        if (cost.compute > timeBound || cost.memory > stageMemory)
          break;
      }
      lower[k] = from;
    }
    if (lower[0] > 0)
      return std::nullopt;

    // reached[k]: (position, the start it was reached from), ascending.
    std::vector<SmallVector<std::pair<int64_t, int64_t>>> reached(stages + 1);
    reached[0].push_back({0, -1});
    for (int64_t k = 0; k < stages; ++k) {
      const auto &starts = reached[k];
      if (starts.empty())
        return std::nullopt;
      double rankInFlight = inFlight[k % config.stages];
      int64_t last = k == stages - 1 ? numEnds : upper[k + 1];
      size_t start = 0; // the last start before `to`
      for (int64_t to = std::max(lower[k + 1], k + 1); to <= last; ++to) {
        while (start + 1 < starts.size() && starts[start + 1].first < to)
          ++start;
        int64_t from = starts[start].first;
        if (from >= to)
          continue;
        StageCost cost = getStageCost(from, to, rankInFlight);
        if (cost.seconds <= timeBound && cost.memory <= stageMemory) {
          reached[k + 1].push_back({to, from});
          continue;
        }
        // Past the bounds without the transfer, no later end fits from
        // this start: go on from the next one.
        if (cost.compute > timeBound || cost.memory > stageMemory) {
          if (start + 1 == starts.size())
            break;
          to = std::max(to, starts[start + 1].first);
        }
      }
    }
    if (reached[stages].empty() || reached[stages].back().first != numEnds)
      return std::nullopt;
    SmallVector<int64_t> boundaries(stages + 1, 0);
    int64_t position = numEnds;
    for (int64_t k = stages; k > 0; --k) {
      boundaries[k] = ends[position - 1];
      position = llvm::lower_bound(reached[k],
                                   std::pair<int64_t, int64_t>{position, -1})
                     ->second;
    }
    return boundaries;
  }

  /// Returns the time of the whole program as one stage.
  double getTotalSeconds() const {
    return pricer.getSeconds(0, profile.items.size());
  }

  /// Returns the slowest transfer at a stage end.
  double getMaxTransferSeconds() const {
    double slowest = 0;
    for (int64_t end : ends)
      slowest = std::max(slowest, pricer.getSeconds(end, end));
    return slowest;
  }

private:
  /// A stage's seconds per micro-batch, without its transfer, and memory.
  struct StageCost {
    double seconds = 0, compute = 0, memory = 0;
  };

  /// Returns the cost of the stage from position `from` to position `to`
  /// (see fillExact) with `microbatches` in flight, as one chunk of its
  /// rank.
  StageCost getStageCost(int64_t from, int64_t to, double microbatches) const {
    int64_t begin = from == 0 ? 0 : ends[from - 1], end = ends[to - 1];
    StageCost cost;
    cost.seconds = pricer.getSeconds(begin, end);
    cost.compute = cost.seconds - pricer.getSeconds(end, end);
    auto [kept, once] = pricer.getActivationBytes(begin, end);
    cost.memory =
        pricer.getWeightBytes(begin, end) + kept * microbatches + once;
    return cost;
  }

  /// Returns the memory one stage may take under `memoryBound` per device:
  /// all of it, or an equal share of the rank's chunks (as in fillGreedy;
  /// the shares then bound the rank's total).
  double getStageMemoryBound(double memoryBound) const {
    return config.chunks > 1 ? memoryBound / config.chunks : memoryBound;
  }

  const PlanProfile &profile;
  const PipelineConfig &config;
  StagePricer pricer;
  bool train;
  /// Candidate stage ends: the cut points, then the end.
  SmallVector<int64_t> ends;
  /// Micro-batches in flight per pipeline rank.
  SmallVector<double> inFlight;
};
} // namespace

/// Bisects for the smallest bound `fits` accepts in (0, hi]; returns it (or
/// infinity when even `hi` fails), and sets `rejected` (when given) to the
/// largest bound it saw rejected (0 if none).
template <typename Fits>
static double bisect(double hi, Fits fits, double *rejected = nullptr) {
  if (rejected)
    *rejected = 0;
  if (!(hi > 0) || !fits(hi))
    return std::numeric_limits<double>::infinity();
  double lo = 0;
  for (int iteration = 0; iteration < 48 && hi - lo > 1e-6 * hi; ++iteration) {
    double mid = 0.5 * (lo + hi);
    if (fits(mid))
      hi = mid;
    else
      lo = mid;
  }
  if (rejected)
    *rejected = lo;
  return hi;
}

/// Bisects for the smallest bound `fits` accepts, as above, probing first
/// with `fast`, which accepts only bounds `fits` accepts (the greedy fill):
/// the exact `fits` runs once when `fast` finds the same bound, the usual
/// case.
template <typename Fast, typename Fits>
static double bisect(double hi, Fast fast, Fits fits) {
  double rejected = 0;
  double bound = bisect(hi, fast, &rejected);
  if (std::isfinite(bound) && !(rejected > 0 && fits(rejected)))
    return bound;
  return bisect(std::isfinite(bound) ? rejected : hi, fits);
}

std::optional<SmallVector<int64_t>>
dnnc::planner::splitStages(const PlanProfile &profile,
                           const PipelineConfig &config, const CostModel &model,
                           double capacityBytes, double *minMemoryBytes) {
  double infinity = std::numeric_limits<double>::infinity();
  if (profile.items.empty())
    return std::nullopt;
  Splitter splitter(profile, config, model);
  double total = splitter.getTotalSeconds();
  // Pad the bound for transfers, which the single stage has none of: no
  // stage of any split takes longer than all the items and a transfer.
  double hi = std::max(total, 1e-12) * 2 + 1 + splitter.getMaxTransferSeconds();
  double bound = bisect(
      hi,
      [&](double seconds) {
        return splitter.fillGreedy(seconds, capacityBytes).has_value();
      },
      [&](double seconds) {
        return splitter.fill(seconds, capacityBytes).has_value();
      });
  if (std::isfinite(bound))
    return splitter.fill(bound, capacityBytes);
  if (minMemoryBytes) {
    *minMemoryBytes = infinity;
    if (splitter.fill(infinity, infinity)) {
      // The smallest memory bound any split fits, up to the bisection's
      // precision.
      double memoryHi = 1;
      while (!splitter.fill(infinity, memoryHi) && memoryHi < 1e30)
        memoryHi *= 2;
      *minMemoryBytes = bisect(
          memoryHi,
          [&](double bytes) {
            return splitter.fillGreedy(infinity, bytes).has_value();
          },
          [&](double bytes) {
            return splitter.fill(infinity, bytes).has_value();
          });
    }
  }
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// Reading a module's plan
//===----------------------------------------------------------------------===//

FailureOr<PlannedModule>
dnnc::planner::readPlannedModule(ModuleOp module, const CostModel &model) {
  PlannedModule planned;
  planned.main = module.lookupSymbol<func::FuncOp>("main");
  if (!planned.main || planned.main.isExternal())
    return module.emitError("the plan needs a @main with a body");
  auto meshes = llvm::to_vector(module.getOps<dist::MeshOp>());
  if (meshes.size() > 1)
    return module.emitError("the plan needs at most one dist.mesh");
  dist::MeshOp mesh = meshes.empty() ? dist::MeshOp() : meshes.front();
  planned.mesh = mesh;

  PipelineConfig &config = planned.config;
  if (auto pipeline = module->getAttrOfType<dist::PipelineAttr>(
          dist::DistDialect::getPipelineAttrName())) {
    planned.pipelined = true;
    config.stages = pipeline.getStages();
    config.chunks = pipeline.getChunks();
    config.microbatches = pipeline.getMicrobatches();
    config.schedule = pipeline.getSchedule();
    config.recompute = pipeline.getRecompute();
    config.zero = pipeline.getZero();
    if (StringAttr axis = pipeline.getAxis())
      planned.ppAxis = axis.getValue();
  }
  if (mesh) {
    planned.devices = mesh.getNumDevices();
    for (unsigned i = 0, e = mesh.getNumAxes(); i < e; ++i) {
      dist::MeshAxisAttr axis = mesh.getAxis(i);
      SmallVector<StringAttr> axes = {axis.getName()};
      if (axis.getName().getValue() == "dp") {
        planned.dpAxis = "dp";
        config.dp = axis.getSize();
        config.dpLink = model.getLink(mesh, axes);
      }
      if (!planned.ppAxis.empty() &&
          axis.getName().getValue() == planned.ppAxis)
        config.ppLink = model.getLink(mesh, axes);
    }
  }
  return planned;
}

FailureOr<ModulePlan> dnnc::planner::readModulePlan(ModuleOp module,
                                                    const CostModel &model) {
  FailureOr<PlannedModule> planned = readPlannedModule(module, model);
  if (failed(planned))
    return failure();
  func::FuncOp func = planned->main;
  ModulePlan plan;
  plan.devices = planned->devices;
  plan.config = planned->config;
  PipelineConfig &config = plan.config;
  plan.profile = buildPlanProfile(func, planned->mesh, model, planned->dpAxis,
                                  planned->ppAxis);
  // An executed plan's program may compute one micro-batch already.
  for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i)
    if (func.getArgAttr(i, dist::DistDialect::getMicrobatchDimAttrName()))
      config.profileMicrobatches = config.microbatches;

  // Boundaries where the stage changes; ops without one stay in the stage
  // of the op before them.
  int64_t stages = config.getNumVirtualStages();
  plan.boundaries.push_back(0);
  int64_t current = 0, index = 0;
  for (Operation &op : func.getBody().front().without_terminator()) {
    auto stage =
        op.getAttrOfType<IntegerAttr>(dist::DistDialect::getStageAttrName());
    if (stage && stage.getInt() != current) {
      if (stage.getInt() != current + 1 || index == plan.boundaries.back())
        return op.emitError("stage ")
               << stage.getInt() << " follows stage " << current
               << ": pipeline stages must be contiguous, non-empty and in "
                  "order";
      current = stage.getInt();
      plan.boundaries.push_back(index);
    }
    ++index;
  }
  plan.boundaries.push_back(index);
  if (current + 1 != stages)
    return module.emitError("the pipeline has ")
           << stages << " stages but @main's ops reach stage " << current;
  return plan;
}
