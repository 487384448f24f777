//===- MaterializeStages.cpp - Stage regions from stage attributes -*- C++
//-*-===//
//
// Part of the dnnc project.
//
//===----------------------------------------------------------------------===//
//
// Implements `dist-materialize-stages`: the `dist.stage` attributes of
// @main's ops become `dist.stage` regions, and every value a later stage
// uses goes through a `dist.transfer`. Values computed from weights and
// constants alone are copied into the stages that use them instead.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Dialect/Dist/Transforms/FactorSharding.h"
#include "dnnc/Dialect/Dist/Transforms/Passes.h"
#include "dnnc/Dialect/Dnn/IR/DnnCost.h"
#include "dnnc/Dialect/Dnn/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"

#include <functional>
#include <limits>

namespace dnnc::dist {
#define GEN_PASS_DEF_MATERIALIZESTAGESPASS
#include "dnnc/Dialect/Dist/Transforms/Passes.h.inc"
} // namespace dnnc::dist

using namespace mlir;
using namespace dnnc;
using namespace dnnc::dist;

/// Returns true if argument `index` of `func` is a value every stage may
/// compute from on its own: a weight (an optimizer state included) or the
/// training step's number.
static bool isFreeArgument(func::FuncOp func, unsigned index) {
  return dnn::isWeightArgument(func, index) ||
         func.getArgAttr(index, dnn::kStepAttrName);
}

/// Returns true if `op` can be copied into each stage that uses it: it
/// computes from free values (`isFree`) alone.
static bool isFreeOp(Operation &op, llvm::function_ref<bool(Value)> isFree) {
  return op.getNumRegions() == 0 && isMemoryEffectFree(&op) &&
         llvm::all_of(op.getOperands(), isFree);
}

namespace {
/// Builds the staged body of one function.
class StageBuilder {
public:
  StageBuilder(func::FuncOp func, PipelineAttr pipeline)
      : func(func), pipeline(pipeline), numStages(pipeline.getNumStages()) {}

  /// Rewrites the function; on failure, errors were emitted and the
  /// function is unchanged.
  LogicalResult run();

private:
  /// Returns true if `value` is computed from weights, the step number and
  /// constants alone.
  bool isFree(Value value) const {
    if (auto arg = dyn_cast<BlockArgument>(value))
      return isFreeArgument(func, arg.getArgNumber());
    return freeOps.contains(value.getDefiningOp());
  }

  /// Returns the value `value` (of the old body) has inside stage `stage`,
  /// cloning free ops into it and using transfers for values of earlier
  /// stages.
  Value lookup(Value value, int64_t stage);

  /// Returns the stage that computes `value` (the stage owning an
  /// argument), or -1 for a value every stage has (another argument, a free
  /// value).
  int64_t stageOfValue(Value value) const {
    if (auto arg = dyn_cast<BlockArgument>(value)) {
      auto it = argStage.find(arg);
      return it == argStage.end() ? -1 : it->second;
    }
    auto it = stageOf.find(value.getDefiningOp());
    return it == stageOf.end() ? -1 : it->second;
  }

  /// Returns the stage stage `stage` receives `value` from (perhaps itself),
  /// or -1 when it has the value: an argument, on the rank owning it or
  /// owned by none, or a free value.
  int64_t sourceStage(Value value, int64_t stage) const {
    int64_t from = stageOfValue(value);
    if (from >= 0 && isa<BlockArgument>(value) &&
        pipeline.getStageRank(from) == pipeline.getStageRank(stage))
      return -1;
    return from;
  }

  func::FuncOp func;
  PipelineAttr pipeline;
  int64_t numStages;
  /// Ops computed from weights and constants alone.
  llvm::DenseSet<Operation *> freeOps;
  /// The stage of every other op.
  llvm::DenseMap<Operation *, int64_t> stageOf;
  /// Arguments that one stage owns (`dist.stage` on the argument: a sum over
  /// micro-batches that another rank reads), with their stage; stages on
  /// other ranks receive them by transfer. Other arguments are absent.
  llvm::DenseMap<Value, int64_t> argStage;
  /// Per stage, the old values it yields for later stages, in order.
  SmallVector<llvm::SetVector<Value>> yields;
  /// Old value and later stage -> the transfer result carrying it there.
  llvm::DenseMap<std::pair<Value, int64_t>, Value> transfers;
  /// Per stage, old values to their copies inside the stage.
  SmallVector<IRMapping> mappings;
  OpBuilder builder{func.getContext()};
};
} // namespace

Value StageBuilder::lookup(Value value, int64_t stage) {
  IRMapping &mapping = mappings[stage];
  if (Value mapped = mapping.lookupOrNull(value))
    return mapped;
  // (Arguments are mapped in every stage, except one owned by a stage of
  // another rank: that comes by transfer.)
  Operation *def = value.getDefiningOp();
  if (def && freeOps.contains(def)) {
    // Copy the free op (and, recursively, its operands) into the stage.
    for (Value operand : def->getOperands())
      lookup(operand, stage);
    Operation *copy = builder.clone(*def, mapping);
    copy->removeAttr(DistDialect::getStageAttrName());
    return mapping.lookup(value);
  }
  Value transferred = transfers.lookup({value, stage});
  if (transferred)
    mapping.map(value, transferred);
  return transferred;
}

LogicalResult StageBuilder::run() {
  Block &body = func.getBody().front();
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  StringAttr stageName =
      StringAttr::get(func.getContext(), DistDialect::getStageAttrName());

  // Arguments owned by a stage.
  for (BlockArgument arg : body.getArguments()) {
    auto attr =
        func.getArgAttrOfType<IntegerAttr>(arg.getArgNumber(), stageName);
    if (!attr)
      continue;
    if (attr.getInt() < 0 || attr.getInt() >= numStages)
      return func.emitOpError()
             << "argument #" << arg.getArgNumber() << " is in stage "
             << attr.getInt() << " but the pipeline has " << numStages;
    argStage[arg] = attr.getInt();
  }

  // Free ops, and the stage of every other op (the attribute, else the
  // latest stage of its operands).
  for (Operation &op : body.without_terminator()) {
    if (isFreeOp(op, [&](Value operand) { return isFree(operand); })) {
      freeOps.insert(&op);
      continue;
    }
    int64_t stage = 0;
    for (Value operand : op.getOperands())
      if (!isa<BlockArgument>(operand))
        stage = std::max(stage, stageOfValue(operand));
    if (auto attr =
            op.getAttrOfType<IntegerAttr>(DistDialect::getStageAttrName())) {
      if (attr.getInt() < stage)
        return op.emitOpError()
               << "is in stage " << attr.getInt()
               << " but uses a value computed in stage " << stage
               << " (stages may only use values of earlier stages)";
      stage = attr.getInt();
    }
    if (stage >= numStages)
      return op.emitOpError() << "is in stage " << stage
                              << " but the pipeline has " << numStages;
    for (Value operand : op.getOperands())
      if (int64_t from = sourceStage(operand, stage);
          from > stage && isa<BlockArgument>(operand))
        return op.emitOpError()
               << "is in stage " << stage << " but uses argument #"
               << cast<BlockArgument>(operand).getArgNumber()
               << ", which stage " << from << " owns";
    stageOf[&op] = stage;
  }

  // What each stage yields: values used by later stages, and returned
  // values (those computed by no stage are yielded by the last one).
  yields.resize(numStages);
  SmallVector<llvm::SetVector<std::pair<Value, int64_t>>> outgoing(numStages);
  auto use = [&](Value value, int64_t stage) {
    int64_t from = sourceStage(value, stage);
    if (from < 0 || from == stage)
      return;
    yields[from].insert(value);
    outgoing[from].insert({value, stage});
  };
  for (Operation &op : body.without_terminator())
    if (auto it = stageOf.find(&op); it != stageOf.end())
      for (Value operand : op.getOperands())
        use(operand, it->second);
  // A returned value is yielded by the stage the result names
  // (`dist.stage`: a parameter's new value on each rank that holds it),
  // else by the stage computing it.
  SmallVector<int64_t> returnStage;
  for (OpOperand &operand : ret->getOpOperands()) {
    int64_t from = stageOfValue(operand.get());
    int64_t stage = from < 0 ? numStages - 1 : from;
    if (auto attr = func.getResultAttrOfType<IntegerAttr>(
            operand.getOperandNumber(), stageName)) {
      stage = attr.getInt();
      if (stage < 0 || stage >= numStages ||
          sourceStage(operand.get(), stage) > stage)
        return func.emitOpError()
               << "result #" << operand.getOperandNumber() << " is yielded by "
               << "stage " << stage << " but computed in stage " << from
               << " of " << numStages;
      use(operand.get(), stage);
    }
    returnStage.push_back(stage);
  }
  // Returned values are yielded once per return operand, after the
  // transferred ones, so that no stage result is both sent and written as
  // a model output.
  SmallVector<int64_t> returnIndex;
  SmallVector<SmallVector<Value>> returnYields(numStages);
  for (auto [operand, stage] :
       llvm::zip_equal(ret.getOperands(), returnStage)) {
    returnIndex.push_back(yields[stage].size() + returnYields[stage].size());
    returnYields[stage].push_back(operand);
  }

  // Build the new body: each stage, then its outgoing transfers.
  auto newBody = std::make_unique<Block>();
  IRMapping argMapping;
  for (BlockArgument arg : body.getArguments())
    argMapping.map(arg, newBody->addArgument(arg.getType(), arg.getLoc()));
  mappings.resize(numStages);
  for (auto [stage, mapping] : llvm::enumerate(mappings))
    for (BlockArgument arg : body.getArguments())
      if (sourceStage(arg, int64_t(stage)) < 0)
        mapping.map(arg, argMapping.lookup(arg));
  SmallVector<SmallVector<Value>> stageResults(numStages);
  MLIRContext *context = func.getContext();
  for (int64_t stage = 0; stage < numStages; ++stage) {
    builder.setInsertionPointToEnd(newBody.get());
    SmallVector<Value> yieldedValues(yields[stage].begin(),
                                     yields[stage].end());
    llvm::append_range(yieldedValues, returnYields[stage]);
    SmallVector<Type> types = llvm::map_to_vector(
        yieldedValues, [](Value value) { return value.getType(); });
    auto stageOp =
        StageOp::create(builder, func.getLoc(), types,
                        builder.getI64IntegerAttr(stage), FlatSymbolRefAttr());
    // Shardings of the results, when every yielded value has one.
    SmallVector<Attribute> shardings;
    for (Value value : yieldedValues)
      if (ShardingAttr sharding = getStoredSharding(value))
        shardings.push_back(sharding);
    if (!yieldedValues.empty() && shardings.size() == yieldedValues.size())
      stageOp->setAttr(DistDialect::getShardingsAttrName(),
                       ArrayAttr::get(context, shardings));
    Block *stageBody = builder.createBlock(&stageOp.getRegion());
    builder.setInsertionPointToEnd(stageBody);
    for (Operation &op : body.without_terminator()) {
      auto it = stageOf.find(&op);
      if (it == stageOf.end() || it->second != stage)
        continue;
      for (Value operand : op.getOperands())
        lookup(operand, stage);
      Operation *copy = builder.clone(op, mappings[stage]);
      copy->removeAttr(DistDialect::getStageAttrName());
    }
    SmallVector<Value> yielded = llvm::map_to_vector(
        yieldedValues, [&](Value value) { return lookup(value, stage); });
    YieldOp::create(builder, func.getLoc(), yielded);
    llvm::append_range(stageResults[stage], stageOp.getResults());

    // Transfers to later stages, right after the stage.
    builder.setInsertionPointAfter(stageOp);
    for (auto [value, dst] : outgoing[stage]) {
      unsigned index = llvm::find(yields[stage], value) - yields[stage].begin();
      auto transfer = TransferOp::create(
          builder, value.getLoc(), stageOp.getResult(index),
          builder.getI64IntegerAttr(stage), builder.getI64IntegerAttr(dst));
      if (ShardingAttr sharding = getStoredSharding(value))
        setStoredSharding(transfer.getResult(), sharding);
      transfers[{value, dst}] = transfer.getResult();
    }
  }
  builder.setInsertionPointToEnd(newBody.get());
  SmallVector<Value> returned;
  for (auto [stage, index] : llvm::zip_equal(returnStage, returnIndex))
    returned.push_back(stageResults[stage][index]);
  func::ReturnOp::create(builder, ret.getLoc(), returned);

  body.dropAllDefinedValueUses();
  body.erase();
  func.getBody().push_back(newBody.release());
  for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i)
    func.removeArgAttr(i, stageName);
  for (unsigned i = 0, e = func.getNumResults(); i < e; ++i)
    func.removeResultAttr(i, stageName);
  return success();
}

namespace {
/// Prepares the stages of a training step: accumulators for the sums over
/// micro-batches, and the stage of every op in the numbering of a training
/// pipeline (#dist.pipeline's `updateRounds`).
class TrainingStages {
public:
  TrainingStages(func::FuncOp func, PipelineAttr pipeline)
      : func(func), pipeline(pipeline),
        numStages(pipeline.getNumVirtualStages()),
        numRanks(pipeline.getStages()) {}

  /// Rewrites the function; returns the number of rounds of the step's
  /// final part, or failure (with an error).
  FailureOr<int64_t> run();

private:
  /// Replaces each dist.microbatch_sum by an accumulator argument.
  void addAccumulators();
  /// Returns the pipeline rank of stage `stage` of the training pipeline.
  int64_t rankOf(int64_t stage) const {
    return pipeline.getStageRank(stage);
  }
  /// Returns the name of argument `index` for diagnostics.
  std::string argName(unsigned index) {
    if (auto name = func.getArgAttrOfType<StringAttr>(index,
                                                      dnn::kNameAttrName))
      return name.getValue().str();
    return "#" + std::to_string(index);
  }
  /// Fills `usedOn` from the stages known so far.
  void computeUses();
  /// Recomputation: each backward stage computes again the values of its
  /// forward stage it reads (all of them, or those of the ops in `only`),
  /// from that stage's inputs (or the values it keeps), which the forward
  /// then no longer keeps for it.
  void recomputeForwards(const llvm::DenseSet<Operation *> *only);
  /// Gives each other rank that uses an updated argument (a parameter two
  /// ranks' stages share, such as tied embeddings; the loss scale) a result
  /// updating its copy: the new value, transferred to its final part; and
  /// moves each update after the last read of the old value on its rank.
  /// Returns the number of rounds of the final part, at least
  /// `totalRounds` (those of its ops).
  int64_t replicateUpdates(int64_t totalRounds);
  /// Checks that each returned accumulator is added to on the last rank.
  LogicalResult checkRanks();

  func::FuncOp func;
  PipelineAttr pipeline;
  /// Virtual stages (forwards) and pipeline ranks.
  int64_t numStages, numRanks;
  /// Accumulator arguments and the op adding each micro-batch's share.
  llvm::MapVector<BlockArgument, Operation *> accumulators;
  /// The stage of every op that is not free.
  llvm::DenseMap<Operation *, int64_t> stageOf;
  /// The pipeline ranks each value is used on (through free ops, by their
  /// users), by the ops `stageOf` holds.
  llvm::DenseMap<Value, llvm::SmallSetVector<int64_t, 4>> usedOn;
  /// Accumulator arguments read on another rank, with the stage owning
  /// them (their rank's first round of the final part).
  llvm::MapVector<unsigned, int64_t> ownedArguments;
};
} // namespace

void TrainingStages::addAccumulators() {
  MLIRContext *context = func.getContext();
  Block &body = func.getBody().front();
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  SmallVector<MicrobatchSumOp> sums(body.getOps<MicrobatchSumOp>());
  for (MicrobatchSumOp sum : sums) {
    OpBuilder builder(sum);
    auto type = cast<RankedTensorType>(sum.getType());
    ShardingAttr sharding = getStoredSharding(sum.getResult());
    unsigned index = func.getNumArguments();
    SmallVector<NamedAttribute> argAttrs = {
        builder.getNamedAttr(
            dnn::kNameAttrName,
            builder.getStringAttr("accumulator " +
                                  std::to_string(accumulators.size()))),
        builder.getNamedAttr(DistDialect::getAccumulatorAttrName(),
                             builder.getUnitAttr())};
    if (sharding)
      argAttrs.push_back(
          builder.getNamedAttr(DistDialect::getShardingAttrName(), sharding));
    (void)func.insertArgument(index, type,
                              DictionaryAttr::get(context, argAttrs),
                              sum.getLoc());
    BlockArgument accumulator = func.getArgument(index);
    Value share = sum.getInput();
    if (sum.getMean()) {
      // A mean over micro-batches: each adds its share over their count.
      auto scale = dnn::ConstantOp::create(
          builder, sum.getLoc(),
          DenseElementsAttr::get(
              type, builder.getFloatAttr(type.getElementType(),
                                         1.0 / pipeline.getMicrobatches())));
      auto scaled = dnn::MulOp::create(builder, sum.getLoc(), type, share,
                                       scale.getResult());
      if (sharding) {
        setStoredSharding(scale.getResult(), sharding);
        setStoredSharding(scaled.getResult(), sharding);
      }
      copyPipelineStage(sum, scale);
      copyPipelineStage(sum, scaled);
      share = scaled.getResult();
    }
    auto add =
        dnn::AddOp::create(builder, sum.getLoc(), type, accumulator, share);
    if (sharding)
      setStoredSharding(add.getResult(), sharding);
    copyPipelineStage(sum, add);
    SmallVector<NamedAttribute> resultAttrs = {builder.getNamedAttr(
        dnn::kUpdatesAttrName, builder.getI64IntegerAttr(index))};
    if (sharding)
      resultAttrs.push_back(
          builder.getNamedAttr(DistDialect::getShardingAttrName(), sharding));
    (void)func.insertResult(func.getNumResults(), type,
                            DictionaryAttr::get(context, resultAttrs));
    ret->insertOperands(ret->getNumOperands(), add.getResult());
    sum.getResult().replaceAllUsesWith(accumulator);
    sum.erase();
    accumulators[accumulator] = add;
  }
}

FailureOr<int64_t> TrainingStages::run() {
  addAccumulators();
  Block &body = func.getBody().front();
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  llvm::DenseSet<Operation *> freeOps;
  auto isFree = [&](Value value) {
    if (auto arg = dyn_cast<BlockArgument>(value))
      return isFreeArgument(func, arg.getArgNumber());
    return freeOps.contains(value.getDefiningOp());
  };
  auto stageOfValue = [&](Value value) -> int64_t {
    Operation *def = value.getDefiningOp();
    auto it = def ? stageOf.find(def) : stageOf.end();
    return it == stageOf.end() ? -1 : it->second;
  };

  // The step's final part: the ops computing from accumulators (their
  // adders excepted: those run per micro-batch).
  llvm::DenseSet<Value> stepValues;
  for (auto &entry : accumulators)
    stepValues.insert(entry.first);
  llvm::DenseSet<Operation *> adders, stepOps;
  for (auto &entry : accumulators)
    adders.insert(entry.second);
  for (Operation &op : body.without_terminator()) {
    if (isFreeOp(op, isFree)) {
      freeOps.insert(&op);
      continue;
    }
    if (adders.contains(&op) ||
        llvm::none_of(op.getOperands(),
                      [&](Value v) { return stepValues.contains(v); }))
      continue;
    stepOps.insert(&op);
    for (Value result : op.getResults())
      stepValues.insert(result);
  }

  // The forwards and backwards as marked (unmarked ops after their
  // operands).
  for (Operation &op : body.without_terminator()) {
    if (freeOps.contains(&op) || stepOps.contains(&op))
      continue;
    int64_t stage = 0;
    for (Value operand : op.getOperands())
      stage = std::max(stage, stageOfValue(operand));
    if (auto attr =
            op.getAttrOfType<IntegerAttr>(DistDialect::getStageAttrName())) {
      int64_t marked = op.hasAttr(DistDialect::getBackwardAttrName())
                           ? pipeline.getBackwardStage(attr.getInt())
                           : attr.getInt();
      if (marked < stage)
        return op.emitOpError()
               << "is in stage " << marked << " of the training step but "
               << "uses a value of its stage " << stage
               << " (stages may only use values of earlier stages)";
      stage = marked;
    }
    stageOf[&op] = stage;
  }

  // The ranks each parameter is used on by the forwards and backwards.
  computeUses();

  // Where each value of the final part ends up: the rank of the parameter
  // its update writes, or the last rank for a model output. A value needed
  // on one rank runs there (a parameter's update, a broadcast clipping
  // factor); one needed on several (the gradient norm) runs on the rank of
  // its latest operand. Each in the first round after every operand.
  llvm::DenseMap<Operation *, llvm::SmallSetVector<int64_t, 4>> neededOn;
  SmallVector<Operation *> ordered;
  for (Operation &op : body.without_terminator())
    if (stepOps.contains(&op))
      ordered.push_back(&op);
  for (Operation *op : llvm::reverse(ordered)) {
    llvm::SmallSetVector<int64_t, 4> &ranks = neededOn[op];
    for (OpOperand &use : op->getUses()) {
      Operation *user = use.getOwner();
      if (user == ret) {
        unsigned i = use.getOperandNumber();
        auto target =
            func.getResultAttrOfType<IntegerAttr>(i, dnn::kUpdatesAttrName);
        if (!target) {
          ranks.insert(numRanks - 1);
        } else if (!func.getArgAttr(target.getInt(), dnn::kStateAttrName)) {
          for (int64_t rank : usedOn[func.getArgument(target.getInt())])
            ranks.insert(rank);
        }
      } else if (stepOps.contains(user)) {
        ranks.insert(neededOn[user].begin(), neededOn[user].end());
      }
    }
  }
  // An expansion needed on several ranks (a clipping factor broadcast to
  // a shape parameters of several ranks share) is copied to each, so that
  // the small value travels instead of the large one.
  auto numElements = [](Value value) {
    auto type = dyn_cast<RankedTensorType>(value.getType());
    return type && type.hasStaticShape() ? type.getNumElements() : 0;
  };
  for (Operation *op : SmallVector<Operation *>(ordered)) {
    if (neededOn[op].size() < 2 || op->getNumResults() != 1 ||
        op->getNumRegions() != 0 ||
        llvm::any_of(op->getOperands(), [&](Value operand) {
          return numElements(operand) >= numElements(op->getResult(0));
        }))
      continue;
    OpBuilder builder(op->getContext());
    builder.setInsertionPointAfter(op);
    for (int64_t rank : SmallVector<int64_t>(neededOn[op].begin(),
                                             neededOn[op].end())) {
      Operation *copy = nullptr;
      for (OpOperand &use :
           llvm::make_early_inc_range(op->getResult(0).getUses())) {
        Operation *user = use.getOwner();
        if (!stepOps.contains(user) || neededOn[user].size() != 1 ||
            neededOn[user].front() != rank)
          continue;
        if (!copy) {
          copy = builder.clone(*op);
          stepOps.insert(copy);
          neededOn[copy].insert(rank);
        }
        use.set(copy->getResult(0));
      }
    }
  }
  ordered.clear();
  for (Operation &op : body.without_terminator())
    if (stepOps.contains(&op))
      ordered.push_back(&op);

  int64_t rounds = 0;
  for (Operation *op : ordered) {
    if (op->use_empty() && op->getNumResults() > 0) {
      // Every use went to copies.
      stepOps.erase(op);
      op->erase();
      continue;
    }
    int64_t latest = 0, rank = -1;
    for (Value operand : op->getOperands()) {
      int64_t stage = stageOfValue(operand);
      if (stage > latest) {
        latest = stage;
        if (stage >= pipeline.getFinalStage(0, 0))
          rank = rankOf(stage);
      }
    }
    const llvm::SmallSetVector<int64_t, 4> &ranks = neededOn[op];
    if (ranks.size() == 1)
      rank = ranks.front();
    // Else the rank of an accumulator it reads.
    if (rank < 0)
      for (Value operand : op->getOperands())
        if (auto arg = dyn_cast<BlockArgument>(operand);
            arg && accumulators.count(arg))
          rank = rankOf(stageOf.lookup(accumulators.lookup(arg)));
    if (rank < 0)
      rank = numRanks - 1;
    for (Value operand : op->getOperands()) {
      // A value of one micro-batch's stages reaches the final part on its
      // own rank only (every micro-batch computed the same value).
      int64_t stage = stageOfValue(operand);
      if (stage >= 0 && stage < pipeline.getFinalStage(0, 0) &&
          rankOf(stage) != rank)
        return op->emitOpError()
               << "is part of the training step's final part on pipeline "
                  "rank "
               << rank << " but uses a value computed per micro-batch on "
               << "pipeline rank " << rankOf(stage);
    }
    // A sum over micro-batches that another rank added to comes from that
    // rank's first round (its final part's stage owning the sum).
    for (Value operand : op->getOperands()) {
      auto arg = dyn_cast<BlockArgument>(operand);
      if (!arg || !accumulators.count(arg))
        continue;
      int64_t owner = rankOf(stageOf.lookup(accumulators.lookup(arg)));
      if (owner == rank)
        continue;
      ownedArguments[arg.getArgNumber()] = pipeline.getFinalStage(0, owner);
      latest = std::max(latest, pipeline.getFinalStage(0, owner));
    }
    int64_t round = 0;
    while (pipeline.getFinalStage(round, rank) < latest)
      ++round;
    rounds = std::max(rounds, round + 1);
    stageOf[op] = pipeline.getFinalStage(round, rank);
  }
  if (rounds == 0)
    return func.emitOpError()
           << "is a training step without a final part (no op uses the sums "
              "over micro-batches)";
  if (pipeline.getRecompute() == Recompute::Full) {
    recomputeForwards(nullptr);
  } else if (pipeline.getRecompute() == Recompute::Selective) {
    // The attention cores of the forwards (the values of one forward stage
    // its backward reads again).
    auto isForward = [&](Operation *op) {
      auto it = stageOf.find(op);
      return it != stageOf.end() && it->second < numStages;
    };
    SmallVector<Operation *> cores = dnn::findRecomputableCores(
        body,
        [&](Value value) {
          if (auto arg = dyn_cast<BlockArgument>(value))
            return !isFreeArgument(func, arg.getArgNumber());
          return isForward(value.getDefiningOp());
        },
        isForward);
    llvm::DenseSet<Operation *> recomputed(cores.begin(), cores.end());
    recomputeForwards(&recomputed);
  }
  rounds = replicateUpdates(rounds);
  // The numbering of StageBuilder: explicit stages on every staged op.
  Builder builder(func.getContext());
  for (auto [op, stage] : stageOf) {
    op->setAttr(DistDialect::getStageAttrName(),
                builder.getI64IntegerAttr(stage));
    op->removeAttr(DistDialect::getBackwardAttrName());
  }
  for (Operation *op : freeOps) {
    op->removeAttr(DistDialect::getStageAttrName());
    op->removeAttr(DistDialect::getBackwardAttrName());
  }
  for (auto [index, stage] : ownedArguments)
    func.setArgAttr(index, DistDialect::getStageAttrName(),
                    builder.getI64IntegerAttr(stage));
  if (failed(checkRanks()))
    return failure();
  return rounds;
}

int64_t TrainingStages::replicateUpdates(int64_t totalRounds) {
  Block &body = func.getBody().front();
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  usedOn.clear();
  computeUses();
  int64_t lastRank = numRanks - 1;
  // A read by the step's last stage: a value the step returns (the loss
  // scale used) is computed there from the old copy.
  constexpr int64_t kLastStage = std::numeric_limits<int64_t>::max();
  // The latest stage on pipeline rank `rank` that reads `value` (through
  // free ops), or -1.
  std::function<int64_t(Value, int64_t)> lastRead = [&](Value value,
                                                        int64_t rank) {
    int64_t last = -1;
    for (Operation *user : value.getUsers()) {
      if (user == ret) {
        if (rank == lastRank)
          last = kLastStage;
      } else if (auto it = stageOf.find(user); it != stageOf.end()) {
        if (rankOf(it->second) == rank)
          last = std::max(last, it->second);
      } else {
        for (Value result : user->getResults())
          last = std::max(last, lastRead(result, rank));
      }
    }
    return last;
  };
  // Each rank's copy of an updated argument is written by a stage of its
  // final part after the new value is computed and after the rank's last
  // read of the old one (the runtime writes an update when the stage
  // yielding it ends): the stage computing it, or another that receives
  // it.
  Builder builder(func.getContext());
  StringAttr stageName = builder.getStringAttr(DistDialect::getStageAttrName());
  int64_t rounds = totalRounds;
  SmallVector<unsigned> inLastStage;
  for (unsigned i = 0, e = func.getNumResults(); i < e; ++i) {
    auto target =
        func.getResultAttrOfType<IntegerAttr>(i, dnn::kUpdatesAttrName);
    if (!target || accumulators.count(func.getArgument(target.getInt())))
      continue;
    Value value = ret.getOperand(i);
    auto it = stageOf.find(value.getDefiningOp());
    if (it == stageOf.end())
      continue;
    int64_t from = it->second;
    BlockArgument updated = func.getArgument(target.getInt());
    llvm::SmallSetVector<int64_t, 4> ranks;
    ranks.insert(rankOf(from));
    ranks.insert(usedOn[updated].begin(), usedOn[updated].end());
    for (int64_t rank : ranks) {
      int64_t after = std::max(from, lastRead(updated, rank));
      unsigned index = i;
      if (rank != rankOf(from)) {
        index = func.getNumResults();
        (void)func.insertResult(index, value.getType(),
                                func.getResultAttrDict(i));
        ret->insertOperands(index, value);
      }
      if (after == kLastStage) {
        inLastStage.push_back(index);
        continue;
      }
      int64_t round = 0;
      while (pipeline.getFinalStage(round, rank) < after)
        ++round;
      rounds = std::max(rounds, round + 1);
      if (pipeline.getFinalStage(round, rank) != from)
        func.setResultAttr(
            index, stageName,
            builder.getI64IntegerAttr(pipeline.getFinalStage(round, rank)));
    }
  }
  for (unsigned index : inLastStage)
    func.setResultAttr(index, stageName,
                       builder.getI64IntegerAttr(
                           pipeline.getFinalStage(rounds - 1, lastRank)));
  return rounds;
}

void TrainingStages::recomputeForwards(
    const llvm::DenseSet<Operation *> *only) {
  // (value, backward stage) -> its copy in that stage.
  llvm::DenseMap<std::pair<Value, int64_t>, Value> copies;
  std::function<Value(Value, int64_t, Operation *)> recompute =
      [&](Value value, int64_t stage, Operation *before) -> Value {
    Operation *def = value.getDefiningOp();
    auto it = def ? stageOf.find(def) : stageOf.end();
    if (it == stageOf.end() || pipeline.getBackwardStage(it->second) != stage ||
        (only && !only->contains(def)))
      return value;
    if (Value copy = copies.lookup({value, stage}))
      return copy;
    IRMapping mapping;
    for (Value operand : def->getOperands())
      mapping.map(operand, recompute(operand, stage, before));
    OpBuilder builder(before);
    Operation *clone = builder.clone(*def, mapping);
    stageOf[clone] = stage;
    for (auto [original, copied] :
         llvm::zip_equal(def->getResults(), clone->getResults()))
      copies[{original, stage}] = copied;
    return copies.lookup({value, stage});
  };
  SmallVector<Operation *> ops = llvm::map_to_vector(
      func.getBody().front().without_terminator(),
      [](Operation &op) { return &op; });
  for (Operation *op : ops) {
    auto it = stageOf.find(op);
    if (it == stageOf.end() || it->second < numStages ||
        it->second >= pipeline.getFinalStage(0, 0))
      continue;
    int64_t stage = it->second;
    for (OpOperand &use : op->getOpOperands())
      use.set(recompute(use.get(), stage, op));
  }
}

void TrainingStages::computeUses() {
  Block &body = func.getBody().front();
  for (Operation &op : llvm::reverse(body.without_terminator())) {
    llvm::SmallSetVector<int64_t, 4> ranks;
    if (auto it = stageOf.find(&op); it != stageOf.end()) {
      ranks.insert(rankOf(it->second));
    } else {
      for (Value result : op.getResults())
        ranks.insert(usedOn[result].begin(), usedOn[result].end());
    }
    for (Value operand : op.getOperands())
      usedOn[operand].insert(ranks.begin(), ranks.end());
  }
}

LogicalResult TrainingStages::checkRanks() {
  Block &body = func.getBody().front();
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  int64_t lastRank = numRanks - 1;
  for (auto [accumulator, add] : accumulators) {
    int64_t rank = rankOf(stageOf.lookup(add));
    if (llvm::is_contained(ret.getOperands(), Value(accumulator)) &&
        rank != lastRank)
      return add->emitOpError()
             << "adds to a sum over micro-batches on pipeline rank " << rank
             << " that the step returns, but the step's outputs are written "
                "by the last rank "
             << lastRank << " (a loss not computed in the last stage)";
  }
  return success();
}

namespace {
/// Materializes the stages of @main; see Passes.td.
struct MaterializeStagesPass
    : public dnnc::dist::impl::MaterializeStagesPassBase<
          MaterializeStagesPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto pipeline =
        module->getAttrOfType<PipelineAttr>(DistDialect::getPipelineAttrName());
    auto main = module.lookupSymbol<func::FuncOp>("main");
    if (!pipeline || !pipeline.isPipelined() || !main || main.isExternal() ||
        !main.getBody().front().getOps<StageOp>().empty())
      return;
    if (!main.getBody().front().getOps<MicrobatchSumOp>().empty()) {
      // A training step: forwards, backwards, and its final part.
      FailureOr<int64_t> rounds = TrainingStages(main, pipeline).run();
      if (failed(rounds))
        return signalPassFailure();
      pipeline = PipelineAttr::get(
          &getContext(), pipeline.getAxis(), pipeline.getStages(),
          pipeline.getChunks(), pipeline.getMicrobatches(),
          pipeline.getSchedule(), pipeline.getRecompute(), pipeline.getZero(),
          *rounds);
      module->setAttr(DistDialect::getPipelineAttrName(), pipeline);
    }
    if (failed(StageBuilder(main, pipeline).run()))
      return signalPassFailure();
  }
};
} // namespace
