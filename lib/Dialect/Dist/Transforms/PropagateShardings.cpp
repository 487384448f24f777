//===- PropagateShardings.cpp - Sharding propagation ------------*- C++ -*-===//
//
// Part of the dnnc project.
//
//===----------------------------------------------------------------------===//
//
// Implements `dist-propagate-shardings`: from the seeds (stored shardings,
// annotations, the data- and tensor-parallel options) a worklist spreads
// splits through the ops' sharding rules, forwards and backwards, to every
// value a split reaches; the rest is replicated; then the shardings are made
// explicit with reshards where ops disagree (materializeShardings).
//
//===----------------------------------------------------------------------===//

#include "dnnc/Dialect/Dist/Transforms/FactorSharding.h"
#include "dnnc/Dialect/Dist/Transforms/Passes.h"
#include "dnnc/Dialect/Dnn/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"

#include <deque>

namespace dnnc::dist {
#define GEN_PASS_DEF_PROPAGATESHARDINGSPASS
#define GEN_PASS_DEF_SPLITCONSTANTEXPRESSIONSPASS
#include "dnnc/Dialect/Dist/Transforms/Passes.h.inc"
} // namespace dnnc::dist

using namespace mlir;
using namespace dnnc;
using namespace dnnc::dist;

/// Returns true if `value` is an argument of `func` that holds a weight
/// (`dnn.weight`, or `dnn.weight_ref` when its value was not read).
static bool isWeight(func::FuncOp func, Value value) {
  auto arg = dyn_cast<BlockArgument>(value);
  return arg && arg.getOwner() == &func.getBody().front() &&
         dnn::isWeightArgument(func, arg.getArgNumber());
}

/// Returns true if `value` is a weight argument of `func`, possibly behind
/// transposes (weights that `--plan-only` did not read, so that the graph
/// phase could not fold their transposes) and casts (the bf16/f16 copy of a
/// mixed-precision training step's f32 master weight).
static bool isWeightOrTransposed(func::FuncOp func, Value value) {
  while (isa_and_nonnull<dnn::TransposeOp, dnn::CastOp>(value.getDefiningOp()))
    value = value.getDefiningOp()->getOperand(0);
  return isWeight(func, value);
}

/// Returns true if `value` is computed from constants alone by ops cheap
/// to repeat: a constant, or a broadcast, reshape, transpose or cast of one.
static bool isConstantExpression(Value value) {
  Operation *def = value.getDefiningOp();
  if (!def)
    return false;
  if (def->hasTrait<OpTrait::ConstantLike>())
    return true;
  if (!isa<dnn::BroadcastInDimOp, dnn::ReshapeOp, dnn::TransposeOp,
           dnn::CastOp>(def))
    return false;
  return isConstantExpression(def->getOperand(0));
}

void dnnc::dist::splitConstantExpressions(func::FuncOp func) {
  SmallVector<Operation *> shared;
  func.walk([&](Operation *op) {
    if (op->getNumResults() == 1 && !op->getResult(0).hasOneUse() &&
        !op->getResult(0).use_empty() &&
        isConstantExpression(op->getResult(0)))
      shared.push_back(op);
  });
  // Later ops first: copies of a consumer then find their operands' copies
  // made below.
  for (Operation *op : llvm::reverse(shared)) {
    SmallVector<OpOperand *> uses = llvm::map_to_vector(
        op->getResult(0).getUses(), [](OpOperand &use) { return &use; });
    // Each copy right before its user: it is computed where it is needed
    // instead of staying live from the original's position, in the
    // user's pipeline stage.
    for (OpOperand *use : llvm::drop_begin(uses)) {
      Operation *user = use->getOwner();
      OpBuilder b(user);
      Operation *copy = b.clone(*op);
      if (Attribute stage = user->getAttr(DistDialect::getStageAttrName()))
        copy->setAttr(DistDialect::getStageAttrName(), stage);
      else
        copy->removeAttr(DistDialect::getStageAttrName());
      use->set(copy->getResult(0));
    }
  }
}

namespace {
/// Spreads shardings over the values of one function.
class Propagation {
public:
  Propagation(func::FuncOp func, MeshOp mesh)
      : func(func), mesh(mesh),
        meshRef(FlatSymbolRefAttr::get(mesh.getSymNameAttr())) {}

  /// Records the seeds found in the IR and queues every op.
  void seedFromIR();
  /// Splits dim 0 of every graph input over `axis` where it divides.
  void seedDataParallel(StringAttr axis);
  /// Megatron-style column/row splits of matmul weights over `axis`.
  void seedTensorParallel(StringAttr axis);
  /// ZeRO-1: pins every weight argument's layout, then splits every
  /// optimizer state further over `axis`.
  void seedOptimizerStates(StringAttr axis);
  /// Processes the worklist until no value changes.
  void run();
  /// Returns the sharding found for `value`, or null.
  ShardingAttr lookup(Value value) const { return known.lookup(value); }

private:
  /// Sets the sharding of an unknown `value`, or refines the sharding that
  /// propagation found for it, and queues its neighbours. A `pinned` value
  /// (a seed) is never changed afterwards.
  void assign(Value value, ShardingAttr sharding, bool pinned = false);
  /// Propagates through one op.
  void visit(Operation *op);
  /// Returns the factor sharding of `op` from the known shardings.
  FactorSharding infer(Operation *op, dnn::ShardingRuleAttr rule);

  func::FuncOp func;
  MeshOp mesh;
  FlatSymbolRefAttr meshRef;
  llvm::DenseMap<Value, ShardingAttr> known;
  llvm::DenseSet<Value> pinnedValues;
  /// The ops to visit, first in first out, each at most once at a time.
  std::deque<Operation *> worklist;
  /// The ops in `worklist`.
  llvm::DenseSet<Operation *> queued;

  /// Queues `op` unless it is queued already.
  void enqueue(Operation *op) {
    if (queued.insert(op).second)
      worklist.push_back(op);
  }
};
} // namespace

/// Returns true if `refined` splits every dim at least as `base` does (the
/// axes of `base` are a prefix of those of `refined`, dim by dim) and some
/// dim further. Partial axes are not compared.
static bool isRefinement(ShardingAttr refined, ShardingAttr base) {
  if (refined.getRank() != base.getRank() || refined.getMesh() != base.getMesh())
    return false;
  bool more = false;
  for (int64_t dim = 0, e = base.getRank(); dim < e; ++dim) {
    ArrayRef<StringAttr> b = base.getDimAxes(dim), r = refined.getDimAxes(dim);
    if (r.size() < b.size() || r.take_front(b.size()) != b)
      return false;
    more |= r.size() > b.size();
  }
  return more;
}

void Propagation::assign(Value value, ShardingAttr sharding, bool pinned) {
  auto it = known.find(value);
  if (it != known.end()) {
    // A value found by propagation may be split further; seeds are kept.
    if (pinnedValues.contains(value) || !isRefinement(sharding, it->second))
      return;
    it->second = sharding;
  } else {
    known[value] = sharding;
  }
  if (pinned)
    pinnedValues.insert(value);
  if (Operation *def = value.getDefiningOp())
    enqueue(def);
  for (Operation *user : value.getUsers())
    enqueue(user);
}

void Propagation::seedFromIR() {
  Block &body = func.getBody().front();
  for (BlockArgument arg : body.getArguments())
    if (ShardingAttr stored = getStoredSharding(arg))
      assign(arg, stored, /*pinned=*/true);
  for (Operation &op : body) {
    enqueue(&op);
    if (auto annotate = dyn_cast<AnnotateOp>(op)) {
      assign(annotate.getResult(), annotate.getSharding(), /*pinned=*/true);
      continue;
    }
    if (auto reshard = dyn_cast<ReshardOp>(op)) {
      assign(reshard.getResult(), reshard.getTo(), /*pinned=*/true);
      continue;
    }
    if (op.hasTrait<OpTrait::IsTerminator>()) {
      for (OpOperand &operand : op.getOpOperands())
        if (auto stored = func.getResultAttrOfType<ShardingAttr>(
                operand.getOperandNumber(),
                DistDialect::getShardingAttrName()))
          assign(operand.get(), stored, /*pinned=*/true);
      continue;
    }
    for (Value result : op.getResults())
      if (ShardingAttr stored = getStoredSharding(result))
        assign(result, stored, /*pinned=*/true);
  }
}

void Propagation::seedDataParallel(StringAttr axis) {
  int64_t size = mesh.getAxisSize(axis);
  for (BlockArgument arg : func.getArguments()) {
    auto type = cast<RankedTensorType>(arg.getType());
    if (known.count(arg) || isWeight(func, arg) || type.getRank() == 0 ||
        type.getDimSize(0) % size != 0)
      continue;
    SmallVector<AxisListAttr> dims(
        type.getRank(),
        AxisListAttr::get(func.getContext(), ArrayRef<StringAttr>()));
    dims[0] = AxisListAttr::get(func.getContext(), ArrayRef<StringAttr>(axis));
    assign(arg, ShardingAttr::get(func.getContext(), meshRef, dims, {}),
           /*pinned=*/true);
  }
}

void Propagation::seedTensorParallel(StringAttr axis) {
  SmallVector<dnn::MatMulOp> matmuls;
  func.walk([&](dnn::MatMulOp op) { matmuls.push_back(op); });
  for (dnn::MatMulOp matmul : matmuls) {
    run();
    // The weight: an unsharded matrix argument, or a transpose of one.
    std::optional<unsigned> weightIndex;
    for (OpOperand &operand : matmul->getOpOperands())
      if (isWeightOrTransposed(func, operand.get()) &&
          !known.count(operand.get()) &&
          cast<RankedTensorType>(operand.get().getType()).getRank() == 2)
        weightIndex = operand.getOperandNumber();
    if (!weightIndex)
      continue;
    dnn::ShardingRuleAttr rule = dnn::getShardingRule(matmul);
    FactorSharding fs = infer(matmul, rule);
    if (fs.usesAxis(axis))
      continue; // Row parallel (or otherwise split): propagation decides.
    // Column parallel: split the weight's factor that reaches the result.
    dnn::TensorMappingAttr mapping = rule.getOperandMapping(*weightIndex);
    for (int64_t dim = mapping.getRank() - 1; dim >= 0; --dim) {
      ArrayRef<int64_t> factors = mapping.getDimFactors(dim);
      if (factors.size() != 1 || !rule.isParallel(factors[0]))
        continue;
      FactorSharding column = fs;
      if (!column.trySplit(factors[0], {axis}))
        continue;
      assign(matmul->getOperand(*weightIndex),
             column.getOperandSharding(*weightIndex), /*pinned=*/true);
      break;
    }
  }
  run();
}

void Propagation::seedOptimizerStates(StringAttr axis) {
  run();
  int64_t size = mesh.getAxisSize(axis);
  MLIRContext *context = func.getContext();
  auto replicatedOf = [&](Type type) {
    return ShardingAttr::getReplicated(
        context, meshRef, cast<RankedTensorType>(type).getRank());
  };
  // The parameters keep their layout: only the update is split.
  SmallVector<BlockArgument> states;
  for (BlockArgument arg : func.getArguments()) {
    if (func.getArgAttr(arg.getArgNumber(), dnn::kStateAttrName)) {
      states.push_back(arg);
      continue;
    }
    if (!isWeight(func, arg) || pinnedValues.contains(arg))
      continue;
    ShardingAttr sharding = known.lookup(arg);
    known[arg] = sharding ? sharding : replicatedOf(arg.getType());
    pinnedValues.insert(arg);
  }
  for (BlockArgument state : states) {
    if (pinnedValues.contains(state))
      continue;
    ShardingAttr base = known.lookup(state);
    if (!base)
      base = replicatedOf(state.getType());
    if (base.usesAxis(axis.getValue()))
      continue;
    auto type = cast<RankedTensorType>(state.getType());
    for (int64_t dim = 0; dim < type.getRank(); ++dim) {
      int64_t parts = 1;
      for (StringAttr a : base.getDimAxes(dim))
        parts *= mesh.getAxisSize(a);
      if (type.getDimSize(dim) % (parts * size) != 0)
        continue;
      SmallVector<AxisListAttr> dims;
      for (int64_t d = 0; d < type.getRank(); ++d) {
        SmallVector<StringAttr> axes(base.getDimAxes(d));
        if (d == dim)
          axes.push_back(axis);
        dims.push_back(AxisListAttr::get(context, axes));
      }
      known.erase(state);
      assign(state, ShardingAttr::get(context, meshRef, dims, {}),
             /*pinned=*/true);
      break;
    }
  }
  run();
}

FactorSharding Propagation::infer(Operation *op, dnn::ShardingRuleAttr rule) {
  SmallVector<ShardingAttr> operands = llvm::map_to_vector(
      op->getOperands(), [&](Value v) { return known.lookup(v); });
  SmallVector<ShardingAttr> results = llvm::map_to_vector(
      op->getResults(), [&](Value v) { return known.lookup(v); });
  return inferFactorSharding(rule, mesh, operands, results);
}

void Propagation::visit(Operation *op) {
  if (auto annotate = dyn_cast<AnnotateOp>(op)) {
    // Backwards only: the annotation pins its own result.
    ShardingAttr pinned = annotate.getSharding().getWithoutPartial();
    if (pinned.isSplit())
      assign(annotate.getInput(), pinned);
    return;
  }
  dnn::ShardingRuleAttr rule = dnn::getShardingRule(op);
  if (!rule)
    return;
  FactorSharding fs = infer(op, rule);
  if (!fs.isSplit())
    return;
  for (OpOperand &operand : op->getOpOperands()) {
    ShardingAttr derived = fs.getOperandSharding(operand.getOperandNumber());
    if (derived.isSplit())
      assign(operand.get(), derived);
  }
  for (OpResult result : op->getResults()) {
    ShardingAttr derived = fs.getResultSharding(result.getResultNumber());
    if (!derived.isReplicated())
      assign(result, derived);
  }
}

void Propagation::run() {
  while (!worklist.empty()) {
    Operation *op = worklist.front();
    worklist.pop_front();
    queued.erase(op);
    visit(op);
  }
}

LogicalResult dnnc::dist::propagateShardings(ModuleOp module,
                                             StringRef dpAxis,
                                             StringRef tpAxis, bool remarks,
                                             int64_t *numReshards,
                                             StringRef zeroAxis) {
  FailureOr<ShardingTarget> target = getShardingTarget(module);
  if (failed(target))
    return failure();
  if (!*target)
    return success();
  MeshOp mesh = target->mesh;
  func::FuncOp func = target->func;
  for (StringRef name : {dpAxis, tpAxis, zeroAxis})
    if (!name.empty() && !mesh.hasAxis(name))
      return mesh.emitError("the mesh has no axis '")
             << name << "' to shard over";
  splitConstantExpressions(func);
  Propagation propagation(func, mesh);
  MLIRContext *context = module.getContext();
  propagation.seedFromIR();
  propagation.run();
  if (!dpAxis.empty()) {
    propagation.seedDataParallel(StringAttr::get(context, dpAxis));
    propagation.run();
  }
  if (!tpAxis.empty())
    propagation.seedTensorParallel(StringAttr::get(context, tpAxis));
  if (!zeroAxis.empty())
    propagation.seedOptimizerStates(StringAttr::get(context, zeroAxis));

  for (BlockArgument arg : func.getArguments())
    if (ShardingAttr found = propagation.lookup(arg))
      setStoredSharding(arg, found.getWithoutPartial());
  FailureOr<int64_t> reshards = materializeShardings(
      func, mesh,
      [&](Operation *op, dnn::ShardingRuleAttr rule,
          ArrayRef<ShardingAttr> operandShardings) {
        // Operands first (their current layout), then what propagation
        // found for the results.
        SmallVector<ShardingAttr> results = llvm::map_to_vector(
            op->getResults(), [&](Value v) { return propagation.lookup(v); });
        return inferFactorSharding(rule, mesh, operandShardings, results);
      },
      remarks);
  if (failed(reshards))
    return failure();
  if (numReshards)
    *numReshards = *reshards;
  return success();
}

bool dnnc::dist::isAxisUsed(ModuleOp module, StringRef axis) {
  bool used = false;
  module.walk([&](Operation *op) {
    if (auto fn = dyn_cast<FunctionOpInterface>(op)) {
      for (unsigned i = 0, e = fn.getNumArguments(); i < e && !used; ++i)
        if (ShardingAttr sharding = getArgSharding(fn, i))
          used = sharding.usesAxis(axis);
      for (unsigned i = 0, e = fn.getNumResults(); i < e && !used; ++i)
        if (ShardingAttr sharding = getFuncResultSharding(fn, i))
          used = sharding.usesAxis(axis);
    }
    for (ShardingAttr sharding : getOpShardings(op))
      used |= sharding && sharding.usesAxis(axis);
    return used ? WalkResult::interrupt() : WalkResult::advance();
  });
  return used;
}

namespace {
/// Copies shared constant expressions per use; see Passes.td.
struct SplitConstantExpressionsPass
    : public dnnc::dist::impl::SplitConstantExpressionsPassBase<
          SplitConstantExpressionsPass> {
  void runOnOperation() override { splitConstantExpressions(getOperation()); }
};

/// Propagates shardings; see Passes.td.
struct PropagateShardingsPass
    : public dnnc::dist::impl::PropagateShardingsPassBase<
          PropagateShardingsPass> {
  using Base::Base;

  void runOnOperation() override {
    int64_t reshards = 0;
    ModuleOp module = getOperation();
    if (failed(propagateShardings(module, dpAxis, tpAxis,
                                  /*remarks=*/true, &reshards, zeroAxis)))
      return signalPassFailure();
    numReshards += reshards;
    // A degree asked for must divide some work: a plan that replicates
    // everything over it would repeat the same work on every device.
    auto meshes = module.getOps<MeshOp>();
    if (meshes.empty())
      return;
    MeshOp mesh = *meshes.begin();
    std::pair<StringRef, StringRef> seeds[] = {
        {dpAxis, "no graph input has a dimension 0 it divides (the batch)"},
        {tpAxis, "no matmul weight has a dimension it divides, and nothing "
                 "it would split reaches a splittable op"}};
    for (auto [axis, reason] : seeds) {
      if (axis.empty() || mesh.getAxisSize(axis) <= 1 ||
          isAxisUsed(module, axis))
        continue;
      mesh.emitError("mesh axis '")
          << axis << "' of size " << mesh.getAxisSize(axis)
          << " splits no tensor: " << reason;
      return signalPassFailure();
    }
  }
};
} // namespace
