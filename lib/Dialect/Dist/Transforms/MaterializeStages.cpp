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
#include "dnnc/Dialect/Dnn/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"

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
  StageBuilder(func::FuncOp func, int64_t numStages)
      : func(func), numStages(numStages) {}

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

  func::FuncOp func;
  int64_t numStages;
  /// Ops computed from weights and constants alone.
  llvm::DenseSet<Operation *> freeOps;
  /// The stage of every other op.
  llvm::DenseMap<Operation *, int64_t> stageOf;
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
  if (isa<BlockArgument>(value))
    return value;
  Operation *def = value.getDefiningOp();
  if (freeOps.contains(def)) {
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

  // Free ops, and the stage of every other op (the attribute, else the
  // latest stage of its operands).
  for (Operation &op : body.without_terminator()) {
    if (isFreeOp(op, [&](Value operand) { return isFree(operand); })) {
      freeOps.insert(&op);
      continue;
    }
    int64_t stage = 0;
    for (Value operand : op.getOperands())
      if (Operation *def = operand.getDefiningOp(); def && stageOf.count(def))
        stage = std::max(stage, stageOf[def]);
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
    stageOf[&op] = stage;
  }

  // What each stage yields: values used by later stages, and returned
  // values (those computed by no stage are yielded by the last one).
  yields.resize(numStages);
  SmallVector<llvm::SetVector<std::pair<Value, int64_t>>> outgoing(numStages);
  for (Operation &op : body.without_terminator()) {
    auto it = stageOf.find(&op);
    if (it == stageOf.end())
      continue;
    for (Value operand : op.getOperands()) {
      Operation *def = operand.getDefiningOp();
      if (!def || !stageOf.count(def) || stageOf[def] == it->second)
        continue;
      yields[stageOf[def]].insert(operand);
      outgoing[stageOf[def]].insert({operand, it->second});
    }
  }
  // Returned values are yielded once per return operand, after the
  // transferred ones, so that no stage result is both sent and written as
  // a model output.
  SmallVector<int64_t> returnStage, returnIndex;
  SmallVector<SmallVector<Value>> returnYields(numStages);
  for (Value operand : ret.getOperands()) {
    Operation *def = operand.getDefiningOp();
    int64_t stage = def && stageOf.count(def) ? stageOf[def] : numStages - 1;
    returnStage.push_back(stage);
    returnIndex.push_back(yields[stage].size() + returnYields[stage].size());
    returnYields[stage].push_back(operand);
  }

  // Build the new body: each stage, then its outgoing transfers.
  auto newBody = std::make_unique<Block>();
  IRMapping argMapping;
  for (BlockArgument arg : body.getArguments())
    argMapping.map(arg, newBody->addArgument(arg.getType(), arg.getLoc()));
  mappings.resize(numStages);
  for (IRMapping &mapping : mappings)
    for (BlockArgument arg : body.getArguments())
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
  return success();
}

namespace {
/// Prepares the stages of a training step: accumulators for the sums over
/// micro-batches, and the stage of every op in the numbering of a training
/// pipeline (#dist.pipeline's `update_rounds`).
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
  /// Returns the pipeline rank of stage `stage` once the rounds are known.
  int64_t rankOf(int64_t stage) const {
    int64_t v = numStages;
    if (stage < v)
      return stage % numRanks;
    if (stage < 2 * v)
      return (2 * v - 1 - stage) % numRanks;
    return (stage - 2 * v) % numRanks;
  }
  /// Returns the name of argument `index` for diagnostics.
  std::string argName(unsigned index) {
    if (auto name = func.getArgAttrOfType<StringAttr>(index,
                                                      dnn::kNameAttrName))
      return name.getValue().str();
    return "#" + std::to_string(index);
  }
  /// Checks that each accumulator is read on the rank adding to it, and
  /// that each updated argument is used on the rank updating it alone.
  LogicalResult checkRanks();

  func::FuncOp func;
  PipelineAttr pipeline;
  /// Virtual stages (forwards) and pipeline ranks.
  int64_t numStages, numRanks;
  /// Accumulator arguments and the op adding each micro-batch's share.
  llvm::MapVector<BlockArgument, Operation *> accumulators;
  /// The stage of every op that is not free.
  llvm::DenseMap<Operation *, int64_t> stageOf;
  /// The pipeline rank of each accumulator.
  llvm::DenseMap<Value, int64_t> rankOfValue;
};
} // namespace

void TrainingStages::addAccumulators() {
  MLIRContext *context = func.getContext();
  Block &body = func.getBody().front();
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  SmallVector<MicrobatchSumOp> sums(body.getOps<MicrobatchSumOp>());
  for (MicrobatchSumOp sum : sums) {
    OpBuilder builder(sum);
    auto copyStage = [&](Operation *to) {
      for (StringRef name : {DistDialect::getStageAttrName(),
                             DistDialect::getBackwardAttrName()})
        if (Attribute attr = sum->getAttr(name))
          to->setAttr(name, attr);
    };
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
      copyStage(scale);
      copyStage(scaled);
      share = scaled.getResult();
    }
    auto add =
        dnn::AddOp::create(builder, sum.getLoc(), type, accumulator, share);
    if (sharding)
      setStoredSharding(add.getResult(), sharding);
    copyStage(add);
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

  // The step's final part: the ops computing from accumulators. Each value
  // of it comes from one accumulator (besides values shared by all, such
  // as the clipping factor), or mixes several (the gradient norm).
  llvm::DenseSet<Value> stepValues;
  llvm::DenseMap<Value, Value> sourceOf;
  for (auto &entry : accumulators) {
    stepValues.insert(entry.first);
    sourceOf[entry.first] = entry.first;
  }
  llvm::DenseSet<Operation *> adders;
  for (auto &entry : accumulators)
    adders.insert(entry.second);
  SmallVector<Operation *> stepOps;
  for (Operation &op : body.without_terminator()) {
    if (isFreeOp(op, isFree)) {
      freeOps.insert(&op);
      continue;
    }
    // An accumulator's adder runs per micro-batch.
    if (adders.contains(&op))
      continue;
    Value source;
    bool isStep = false, mixed = false;
    for (Value operand : op.getOperands()) {
      if (!stepValues.contains(operand))
        continue;
      isStep = true;
      Value from = sourceOf.lookup(operand);
      if (from && source && from != source)
        mixed = true;
      else if (from)
        source = from;
    }
    if (!isStep)
      continue;
    stepOps.push_back(&op);
    for (Value result : op.getResults()) {
      stepValues.insert(result);
      sourceOf[result] = mixed ? Value() : source;
    }
  }
  // A mixing value goes where it is used, when that is one rank's part (a
  // broadcast clipping factor): the accumulators its users come from.
  llvm::DenseMap<Operation *, llvm::SmallSetVector<Value, 4>> usersFrom;
  for (Operation *op : llvm::reverse(stepOps)) {
    if (sourceOf.lookup(op->getResult(0)))
      continue;
    llvm::SmallSetVector<Value, 4> &from = usersFrom[op];
    for (Operation *user : op->getUsers()) {
      if (Value source = user->getNumResults()
                             ? sourceOf.lookup(user->getResult(0))
                             : Value())
        from.insert(source);
      else if (usersFrom.count(user))
        from.insert(usersFrom[user].begin(), usersFrom[user].end());
    }
  }

  // The stages: forwards and backwards as marked (unmarked ops after their
  // operands), the final part in rounds of the ranks (an op in the first
  // round after every operand).
  llvm::DenseSet<Operation *> isStepOp(stepOps.begin(), stepOps.end());
  int64_t rounds = 0;
  for (Operation &op : body.without_terminator()) {
    if (freeOps.contains(&op))
      continue;
    int64_t latest = 0;
    for (Value operand : op.getOperands())
      latest = std::max(latest, stageOfValue(operand));
    if (isStepOp.contains(&op)) {
      Value source = sourceOf.lookup(op.getResult(0));
      int64_t rank = -1;
      if (source) {
        rank = rankOfValue.lookup(source);
      } else {
        llvm::SmallSetVector<int64_t, 4> ranks;
        for (Value from : usersFrom[&op])
          ranks.insert(rankOfValue.lookup(from));
        if (ranks.size() == 1)
          rank = ranks.front();
      }
      for (Value operand : op.getOperands()) {
        int64_t stage = stageOfValue(operand);
        if (stage >= 2 * numStages && rank < 0)
          rank = rankOf(stage);
        // A value of one micro-batch's stages reaches the final part on its
        // own rank only (every micro-batch computed the same value).
        if (stage >= 0 && stage < 2 * numStages && rank >= 0 &&
            rankOf(stage) != rank)
          return op.emitOpError()
                 << "is part of the training step's final part on pipeline "
                    "rank "
                 << rank << " but uses a value computed per micro-batch on "
                 << "pipeline rank " << rankOf(stage);
      }
      if (rank < 0)
        rank = numRanks - 1;
      int64_t round = 0;
      while (2 * numStages + round * numRanks + rank < latest)
        ++round;
      rounds = std::max(rounds, round + 1);
      stageOf[&op] = 2 * numStages + round * numRanks + rank;
      continue;
    }
    int64_t stage = latest;
    if (auto attr =
            op.getAttrOfType<IntegerAttr>(DistDialect::getStageAttrName())) {
      stage = op.hasAttr(DistDialect::getBackwardAttrName())
                  ? 2 * numStages - 1 - attr.getInt()
                  : attr.getInt();
      if (stage < latest)
        return op.emitOpError()
               << "is in stage " << stage << " of the training step but uses "
               << "a value of its stage " << latest
               << " (stages may only use values of earlier stages)";
    }
    stageOf[&op] = stage;
    if (auto add = llvm::find_if(accumulators,
                                 [&](auto &entry) {
                                   return entry.second == &op;
                                 });
        add != accumulators.end())
      rankOfValue[add->first] = rankOf(stage);
  }
  if (rounds == 0)
    return func.emitOpError()
           << "is a training step without a final part (no op uses the sums "
              "over micro-batches)";
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
  if (failed(checkRanks()))
    return failure();
  return rounds;
}

LogicalResult TrainingStages::checkRanks() {
  Block &body = func.getBody().front();
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  int64_t lastRank = numRanks - 1;
  // The ranks each value is used on (through free ops, on their users').
  llvm::DenseMap<Value, llvm::SmallSetVector<int64_t, 4>> usedOn;
  for (Operation &op : llvm::reverse(body.without_terminator())) {
    llvm::SmallSetVector<int64_t, 4> ranks;
    auto it = stageOf.find(&op);
    if (it != stageOf.end()) {
      ranks.insert(rankOf(it->second));
    } else {
      for (Value result : op.getResults())
        for (int64_t rank : usedOn[result])
          ranks.insert(rank);
    }
    for (Value operand : op.getOperands())
      for (int64_t rank : ranks)
        usedOn[operand].insert(rank);
  }
  // Returned arguments are yielded by the last stage.
  for (Value operand : ret.getOperands())
    if (isa<BlockArgument>(operand))
      usedOn[operand].insert(lastRank);
  for (auto [accumulator, add] : accumulators) {
    int64_t rank = rankOf(stageOf.lookup(add));
    auto fail = [&, add = add](int64_t other) {
      return add->emitOpError()
             << "adds to a sum over micro-batches on pipeline rank " << rank
             << ", but pipeline rank " << other
             << " reads it (a value summed on one rank and needed whole on "
                "another: a parameter shared by stages of two ranks, or a "
                "loss not computed in the last stage)";
    };
    for (Operation *user : accumulator.getUsers()) {
      auto it = stageOf.find(user);
      if (it != stageOf.end() && rankOf(it->second) != rank) {
        InFlightDiagnostic diag = fail(rankOf(it->second));
        diag.attachNote(user->getLoc()) << "read here: " << *user;
        return diag;
      }
    }
    if (llvm::is_contained(ret.getOperands(), Value(accumulator)) &&
        rank != lastRank)
      return fail(lastRank);
  }
  for (unsigned i = 0, e = func.getNumResults(); i < e; ++i) {
    auto target = func.getResultAttrOfType<IntegerAttr>(i,
                                                        dnn::kUpdatesAttrName);
    if (!target || accumulators.count(func.getArgument(target.getInt())))
      continue;
    Operation *def = ret.getOperand(i).getDefiningOp();
    if (!def || !stageOf.count(def))
      continue;
    int64_t rank = rankOf(stageOf.lookup(def));
    for (int64_t other : usedOn[func.getArgument(target.getInt())])
      if (other != rank)
        return func.emitOpError()
               << "updates '" << argName(target.getInt())
               << "' on pipeline rank " << rank << ", but pipeline rank "
               << other
               << " uses it too (a parameter shared by stages on two ranks, "
                  "such as tied embeddings): pipeline-parallel training "
                  "needs each parameter in the stages of one rank";
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
    if (failed(StageBuilder(main, pipeline.getNumStages()).run()))
      return signalPassFailure();
  }
};
} // namespace
