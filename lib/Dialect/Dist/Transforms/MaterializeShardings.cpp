//===- MaterializeShardings.cpp - Explicit shardings and reshards -*- C++ -*-===//
//
// Part of the dnnc project.
//
//===----------------------------------------------------------------------===//
//
// The common last step of the sharding passes: once every op's factor
// sharding is chosen, store the value shardings and insert the reshards the
// ops need (materializeShardings), so that partitioning sees a program in
// which every op's operands already have the layout it computes with.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Dialect/Dist/Transforms/FactorSharding.h"
#include "dnnc/Dialect/Dnn/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"

using namespace mlir;
using namespace dnnc;
using namespace dnnc::dist;

FailureOr<ShardingTarget> dnnc::dist::getShardingTarget(ModuleOp module) {
  ShardingTarget target;
  for (auto mesh : module.getOps<MeshOp>()) {
    if (target.mesh) {
      mesh.emitError("sharding needs a single device mesh, but the module "
                     "also has @")
          << target.mesh.getSymName();
      return failure();
    }
    target.mesh = mesh;
  }
  auto func = module.lookupSymbol<func::FuncOp>("main");
  if (!target.mesh || !func || func.isExternal())
    return ShardingTarget();
  if (!func.getBody().hasOneBlock()) {
    func.emitOpError("must have a single block to be sharded");
    return failure();
  }
  target.func = func;
  return target;
}
namespace {
/// The state of one materialization.
class Materializer {
public:
  Materializer(FunctionOpInterface func, MeshOp mesh, bool remarks)
      : func(func), mesh(mesh), remarks(remarks),
        meshRef(FlatSymbolRefAttr::get(mesh.getSymNameAttr())) {}

  /// Runs on the whole function.
  LogicalResult run(FactorChooser choose);

  /// Number of reshards created.
  int64_t numReshards = 0;

private:
  /// Returns the sharding of `value` (replicated for untracked values).
  ShardingAttr shardingOf(Value value);
  /// Returns `value` in layout `to`: itself when it has it, else a (shared)
  /// `dist.reshard`. `user` and `operand` describe the use for the remark.
  Value reshard(Value value, ShardingAttr to, Operation *user,
                unsigned operand);
  /// Returns the replicated sharding of a value of type `type`.
  ShardingAttr replicated(Type type) {
    auto tensor = cast<RankedTensorType>(type);
    return ShardingAttr::getReplicated(func->getContext(), meshRef,
                                       tensor.getRank());
  }

  FunctionOpInterface func;
  MeshOp mesh;
  bool remarks;
  FlatSymbolRefAttr meshRef;
  llvm::DenseMap<Value, ShardingAttr> shardings;
  llvm::DenseMap<std::pair<Value, Attribute>, Value> reshards;
};
} // namespace

ShardingAttr Materializer::shardingOf(Value value) {
  if (ShardingAttr known = shardings.lookup(value))
    return known;
  return replicated(value.getType());
}

Value Materializer::reshard(Value value, ShardingAttr to, Operation *user,
                            unsigned operand) {
  ShardingAttr from = shardingOf(value);
  if (from == to)
    return value;
  Value &cached = reshards[{value, to}];
  if (cached)
    return cached;
  OpBuilder b(func->getContext());
  if (Operation *def = value.getDefiningOp())
    b.setInsertionPointAfter(def);
  else
    b.setInsertionPointToStart(cast<BlockArgument>(value).getOwner());
  Location loc = user ? user->getLoc() : value.getLoc();
  auto op = ReshardOp::create(b, loc, value, from, to);
  setStoredSharding(op.getResult(), to);
  shardings[op.getResult()] = to;
  cached = op.getResult();
  ++numReshards;
  if (remarks && user)
    user->emitRemark() << "'" << user->getName() << "' needs a reshard of "
                       << "operand #" << operand << " from " << from << " to "
                       << to;
  return cached;
}

LogicalResult Materializer::run(FactorChooser choose) {
  Block &body = func.getFunctionBody().front();
  for (BlockArgument arg : body.getArguments()) {
    if (!isa<RankedTensorType>(arg.getType()))
      return func.emitError("argument #")
             << arg.getArgNumber() << " is not a ranked tensor";
    ShardingAttr stored = getStoredSharding(arg);
    if (!stored) {
      stored = replicated(arg.getType());
      setStoredSharding(arg, stored);
    }
    shardings[arg] = stored;
  }

  for (Operation &op : llvm::make_early_inc_range(body)) {
    if (auto annotate = dyn_cast<AnnotateOp>(op)) {
      Value result = reshard(annotate.getInput(), annotate.getSharding(),
                             nullptr, 0);
      annotate.getResult().replaceAllUsesWith(result);
      annotate.erase();
      continue;
    }
    if (auto existing = dyn_cast<ReshardOp>(op)) {
      if (shardings.count(existing.getResult()))
        continue; // Created here.
      existing.setFromAttr(shardingOf(existing.getInput()));
      setStoredSharding(existing.getResult(), existing.getTo());
      shardings[existing.getResult()] = existing.getTo();
      continue;
    }
    if (op.hasTrait<OpTrait::IsTerminator>()) {
      for (OpOperand &operand : op.getOpOperands()) {
        unsigned index = operand.getOperandNumber();
        auto to = func.getResultAttrOfType<ShardingAttr>(
            index, DistDialect::getShardingAttrName());
        // A training step's new parameter or state: in its argument's
        // layout, which the next step reads it in.
        if (auto updates = func.getResultAttrOfType<IntegerAttr>(
                index, dnn::kUpdatesAttrName);
            !to && updates && updates.getInt() >= 0 &&
            updates.getInt() < int64_t(body.getNumArguments()))
          to = shardings.lookup(body.getArgument(updates.getInt()));
        if (!to)
          to = shardingOf(operand.get()).getWithoutPartial();
        operand.set(reshard(operand.get(), to, nullptr, index));
        func.setResultAttr(index, DistDialect::getShardingAttrName(), to);
      }
      continue;
    }
    if (op.getNumRegions() != 0)
      return op.emitOpError("cannot be sharded: it has regions");
    for (Type type : llvm::concat<Type>(op.getOperandTypes(),
                                        op.getResultTypes()))
      if (!isa<RankedTensorType>(type))
        return op.emitOpError("cannot be sharded: it has a value of type ")
               << type << ", not a ranked tensor";

    dnn::ShardingRuleAttr rule = dnn::getShardingRule(&op);
    if (!rule) {
      // No rule: run it on whole tensors.
      for (OpOperand &operand : op.getOpOperands())
        operand.set(reshard(operand.get(), replicated(operand.get().getType()),
                            &op, operand.getOperandNumber()));
      for (Value result : op.getResults()) {
        shardings[result] = replicated(result.getType());
        setStoredSharding(result, shardings[result]);
      }
      continue;
    }
    SmallVector<ShardingAttr> operandShardings = llvm::map_to_vector(
        op.getOperands(), [&](Value v) { return shardingOf(v); });
    FactorSharding fs = choose(&op, rule, operandShardings);
    for (OpOperand &operand : op.getOpOperands()) {
      unsigned index = operand.getOperandNumber();
      operand.set(
          reshard(operand.get(), fs.getOperandSharding(index), &op, index));
    }
    for (OpResult result : op.getResults()) {
      ShardingAttr sharding = fs.getResultSharding(result.getResultNumber());
      shardings[result] = sharding;
      setStoredSharding(result, sharding);
    }
  }
  return success();
}

FailureOr<int64_t> dnnc::dist::materializeShardings(FunctionOpInterface func,
                                                    MeshOp mesh,
                                                    FactorChooser choose,
                                                    bool remarks) {
  Materializer materializer(func, mesh, remarks);
  if (failed(materializer.run(choose)))
    return failure();
  return materializer.numReshards;
}
