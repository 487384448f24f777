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
  /// Returns true if `value` is computed from weights and constants alone.
  bool isFree(Value value) const {
    if (auto arg = dyn_cast<BlockArgument>(value))
      return dnn::isWeightArgument(func, arg.getArgNumber());
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
    bool free = op.getNumRegions() == 0 && isMemoryEffectFree(&op) &&
                llvm::all_of(op.getOperands(),
                             [&](Value operand) { return isFree(operand); });
    if (free) {
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
    if (failed(StageBuilder(main, pipeline.getNumVirtualStages()).run()))
      return signalPassFailure();
  }
};
} // namespace
