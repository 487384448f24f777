//===- Partition.cpp - SPMD partitioning ------------------------*- C++ -*-===//
//
// Part of the dnnc project.
//
//===----------------------------------------------------------------------===//
//
// Implements `dist-partition`: rewrites `@main`, whose every value carries a
// sharding, into the program every rank runs. Values get their local types,
// every `dnn` op is rebuilt on its local operands (with the attributes that
// hold global extents localized), reductions of kind max, min, prod and mean
// over a split factor are completed with an all-reduce, and every
// `dist.reshard` becomes a sequence of collectives and local slices. The
// new body is built in a separate block and swapped in only when the whole
// function was partitioned, so a failure leaves the function unchanged.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Dialect/Dist/Transforms/FactorSharding.h"
#include "dnnc/Dialect/Dist/Transforms/Passes.h"
#include "dnnc/Dialect/Dnn/Transforms/Passes.h"
#include "dnnc/Dialect/Dist/Transforms/ReshardPlan.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "dist-partition"

namespace dnnc::dist {
#define GEN_PASS_DEF_PARTITIONPASS
#include "dnnc/Dialect/Dist/Transforms/Passes.h.inc"
} // namespace dnnc::dist

using namespace mlir;
using namespace dnnc;
using namespace dnnc::dist;

/// Returns true if `a` and `b` hold the same axes, in any order.
static bool sameAxisSet(ArrayRef<StringAttr> a, ArrayRef<StringAttr> b) {
  return a.size() == b.size() && llvm::all_of(a, [&](StringAttr axis) {
           return llvm::is_contained(b, axis);
         });
}

/// Returns true if `a` and `b` split every dim over the same axes and have
/// the same partial axes (in any order).
static bool sameSharding(ShardingAttr a, ShardingAttr b) {
  return a.getMesh() == b.getMesh() && a.getDims() == b.getDims() &&
         sameAxisSet(a.getPartial(), b.getPartial());
}

/// Returns the reduction a `dist` collective applies for a reduction factor
/// of kind `kind`, or nothing for a kind that is not a reduction.
static std::optional<ReductionKind> getCollectiveKind(dnn::FactorKind kind) {
  switch (kind) {
  case dnn::FactorKind::Sum:
    return ReductionKind::Sum;
  case dnn::FactorKind::Max:
    return ReductionKind::Max;
  case dnn::FactorKind::Min:
    return ReductionKind::Min;
  case dnn::FactorKind::Prod:
    return ReductionKind::Prod;
  case dnn::FactorKind::Mean:
    return ReductionKind::Mean;
  default:
    return std::nullopt;
  }
}

namespace {
/// Rewrites one function into its per-rank program.
class FunctionPartitioner {
public:
  /// Prepares the partitioning of `func` over `mesh`.
  FunctionPartitioner(func::FuncOp func, MeshOp mesh)
      : func(func), mesh(mesh),
        meshRef(FlatSymbolRefAttr::get(mesh.getSymNameAttr())) {}

  /// Partitions the function in place. On failure, errors have been
  /// reported and the function is unchanged.
  LogicalResult run();

private:
  /// Returns the stored sharding of the global `value` (the `to` of a
  /// reshard result), or null after an error on `user` when it has none or
  /// one on another mesh.
  ShardingAttr getValueSharding(Value value, Operation *user);

  /// Checks that `sharding` is on the module's mesh and fits the global
  /// type `type` (`verifyShardingForType`), so that local types can be
  /// computed. `emitError` starts a diagnostic naming the value.
  LogicalResult checkSharding(ShardingAttr sharding, Type type,
                              function_ref<InFlightDiagnostic()> emitError);

  /// Returns the local value of the global `value`.
  Value lookupLocal(Value value) const { return mapping.lookup(value); }

  /// Partitions the `dnn` op `op` (one with a sharding rule).
  LogicalResult partitionDnnOp(Operation *op);

  /// Partitions `op`: its result becomes the local value of its operand
  /// converted from `from` to `to` by collectives.
  LogicalResult partitionReshard(ReshardOp op);

  /// Emits the collectives and slices that turn `value`, the local block of
  /// a tensor of global type `globalType` laid out as `from`, into its block
  /// under `to`, at the insertion point of `builder`. Returns the new local
  /// value, or failure after an error on `op`.
  FailureOr<Value> emitReshard(Operation *op, Value value,
                               RankedTensorType globalType, ShardingAttr from,
                               ShardingAttr to);

  /// Returns `value` (a local tensor with a static dim 0) on the devices
  /// whose coordinates on `axes` are all 0 and zeros on the others of their
  /// group, for a term that only one of the devices holding partial sums
  /// over `axes` may add. Built on the local values, before `op`'s local
  /// form: the value and zeros concatenated along dim 0, of which each
  /// device keeps its block (`dist.shard_slice`).
  FailureOr<Value> emitOnGroupLeader(Operation *op, Value value,
                                     ArrayRef<StringAttr> axes);

  /// Rewrites the terminator `op`.
  LogicalResult partitionReturn(func::ReturnOp op);

  /// Partitions the ops of `block` (the function body or a stage body) at
  /// the builder's insertion point.
  LogicalResult partitionOps(Block &block);

  /// Partitions the body of the pipeline stage `op` into a new stage op
  /// whose results have the local types of the yielded values.
  LogicalResult partitionStage(StageOp op);

  /// Rewrites the micro-batch slice `op` onto the local block of its
  /// operand (which must be whole along the sliced dim).
  LogicalResult partitionMicrobatchSlice(MicrobatchSliceOp op);

  /// Rewrites the transfer `op` onto the local block of its value: each
  /// device sends its block to the device of the destination stage with the
  /// same coordinates on the other axes.
  LogicalResult partitionTransfer(TransferOp op);

  /// Verifies the new op `newOp` built for `op`; on failure, follows the
  /// verifier's diagnostic with an error on `op`.
  LogicalResult verifyNewOp(Operation *newOp, Operation *op);

  /// Returns `axes` sorted in mesh order.
  SmallVector<StringAttr> inMeshOrder(ArrayRef<StringAttr> axes);

  /// Returns an array attribute holding `axes`.
  ArrayAttr getAxesAttr(ArrayRef<StringAttr> axes) {
    return builder.getArrayAttr(llvm::to_vector_of<Attribute>(axes));
  }

  func::FuncOp func;
  MeshOp mesh;
  FlatSymbolRefAttr meshRef;
  OpBuilder builder{func.getContext()};
  /// Global values of the old body to local values of the new one.
  IRMapping mapping;
  /// Local results of the reshards emitted so far, by global input value
  /// and target sharding, for deduplication.
  llvm::DenseMap<std::pair<Value, Attribute>, Value> reshards;
  /// For a global value holding partial sums, the local result of the first
  /// reshard that completed them and its sharding: every later use starts
  /// from it, so that all uses see the same sums.
  llvm::DenseMap<Value, std::pair<Value, ShardingAttr>> completedSums;
};
} // namespace

ShardingAttr FunctionPartitioner::getValueSharding(Value value,
                                                   Operation *user) {
  ShardingAttr sharding;
  if (auto reshard = value.getDefiningOp<ReshardOp>())
    sharding = reshard.getTo();
  else
    sharding = getStoredSharding(value);
  if (!sharding) {
    InFlightDiagnostic diag = user->emitOpError()
                              << "cannot be partitioned: an operand has no "
                                 "sharding";
    if (Operation *def = value.getDefiningOp())
      diag.attachNote(def->getLoc())
          << "operand defined here without 'dist.shardings'";
    else
      diag.attachNote(func.getLoc())
          << "operand is argument #"
          << cast<BlockArgument>(value).getArgNumber() << " of @"
          << func.getSymName() << ", without 'dist.sharding'";
    return {};
  }
  if (sharding.getMesh() != meshRef) {
    user->emitOpError() << "an operand is sharded on " << sharding.getMesh()
                        << " but the module's mesh is " << meshRef;
    return {};
  }
  return sharding;
}

LogicalResult FunctionPartitioner::checkSharding(
    ShardingAttr sharding, Type type,
    function_ref<InFlightDiagnostic()> emitError) {
  if (sharding.getMesh() != meshRef)
    return emitError() << "is sharded on " << sharding.getMesh()
                       << " but the module's mesh is " << meshRef;
  if (!isa<RankedTensorType>(type))
    return emitError() << "is not a ranked tensor";
  return verifyShardingForType(sharding, mesh, type, [&] {
    return emitError() << "has an invalid sharding: ";
  });
}

SmallVector<StringAttr>
FunctionPartitioner::inMeshOrder(ArrayRef<StringAttr> axes) {
  SmallVector<StringAttr> sorted(axes);
  llvm::stable_sort(sorted, [&](StringAttr a, StringAttr b) {
    return *mesh.getAxisIndex(a) < *mesh.getAxisIndex(b);
  });
  return sorted;
}

LogicalResult FunctionPartitioner::verifyNewOp(Operation *newOp,
                                               Operation *op) {
  if (succeeded(verify(newOp, /*verifyRecursively=*/false)))
    return success();
  op->emitOpError() << "could not be partitioned: its local form '"
                    << newOp->getName() << "' does not verify (see above)";
  return failure();
}

FailureOr<Value>
FunctionPartitioner::emitOnGroupLeader(Operation *op, Value value,
                                       ArrayRef<StringAttr> axes) {
  Location loc = op->getLoc();
  MLIRContext *context = builder.getContext();
  auto type = cast<RankedTensorType>(value.getType());
  if (type.getRank() == 0 || type.isDynamicDim(0))
    return op->emitOpError() << "cannot be partitioned: a term added to its "
                                "partial sums has type "
                             << type << " (a static dim 0 is needed)";
  SmallVector<StringAttr> groupAxes = inMeshOrder(axes);
  int64_t groupSize = mesh.getGroupSize(groupAxes);
  SmallVector<int64_t> shape(type.getShape());
  shape[0] *= groupSize - 1;
  auto zeros = dnn::ConstantOp::create(
      builder, loc,
      DenseElementsAttr::get(type.clone(shape),
                             builder.getZeroAttr(type.getElementType())));
  shape[0] = type.getDimSize(0) * groupSize;
  auto whole = dnn::ConcatOp::create(builder, loc, type.clone(shape),
                                     ValueRange{value, zeros},
                                     builder.getI64IntegerAttr(0));
  SmallVector<AxisListAttr> dims(
      type.getRank(), AxisListAttr::get(context, ArrayRef<StringAttr>()));
  dims[0] = AxisListAttr::get(context, groupAxes);
  auto slice = ShardSliceOp::create(
      builder, loc, type, whole,
      ShardingAttr::get(context, meshRef, dims, ArrayRef<StringAttr>()));
  for (Operation *newOp :
       {zeros.getOperation(), whole.getOperation(), slice.getOperation()})
    if (failed(verifyNewOp(newOp, op)))
      return failure();
  return slice.getResult();
}

LogicalResult FunctionPartitioner::partitionDnnOp(Operation *op) {
  dnn::ShardingRuleAttr rule = dnn::getShardingRule(op);
  if (op->getNumRegions() != 0)
    return op->emitOpError() << "cannot be partitioned: it has regions";

  // The shardings the op computes with.
  SmallVector<ShardingAttr> operandShardings, resultShardings;
  for (Value operand : op->getOperands()) {
    ShardingAttr sharding = getValueSharding(operand, op);
    if (!sharding)
      return failure();
    operandShardings.push_back(sharding);
  }
  for (OpResult result : op->getResults()) {
    ShardingAttr sharding = getStoredSharding(result);
    if (!sharding)
      return op->emitOpError()
             << "cannot be partitioned: result #" << result.getResultNumber()
             << " has no sharding ('dist.shardings')";
    if (failed(checkSharding(sharding, result.getType(), [&] {
          return op->emitOpError() << "cannot be partitioned: result #"
                                   << result.getResultNumber() << " ";
        })))
      return failure();
    resultShardings.push_back(sharding);
  }
  // A sum of partial sums over the same axes, laid out alike (the adder of
  // an accumulator summing a data-parallel gradient over micro-batches), is
  // the partial sum of the sums: each device adds its shares.
  bool partialSum =
      isa<dnn::AddOp>(op) && resultShardings.front().isPartial() &&
      llvm::all_of(operandShardings, [&](ShardingAttr sharding) {
        return sameSharding(sharding, resultShardings.front());
      });
  bool consistent = true;
  FactorSharding fs = inferFactorSharding(rule, mesh, operandShardings,
                                          resultShardings, &consistent);
  if (!consistent && !partialSum)
    return op->emitOpError() << "cannot be partitioned: the shardings of its "
                                "operands and results do not agree with its "
                                "sharding rule "
                             << rule;
  for (auto [index, sharding] : llvm::enumerate(operandShardings)) {
    if (partialSum)
      break;
    if (sharding.isPartial())
      return op->emitOpError()
             << "cannot be partitioned: operand #" << index
             << " holds partial sums over " << formatAxes(sharding.getPartial())
             << " (a dist.reshard must complete them first)";
    ShardingAttr expected = fs.getOperandSharding(index);
    if (!sameSharding(sharding, expected))
      return op->emitOpError()
             << "cannot be partitioned: operand #" << index << " has sharding "
             << sharding << " but the op computes with " << expected;
  }
  for (auto [index, sharding] : llvm::enumerate(resultShardings)) {
    if (partialSum)
      break;
    ShardingAttr expected = fs.getResultSharding(index);
    if (!sameSharding(sharding, expected))
      return op->emitOpError()
             << "cannot be partitioned: result #" << index << " has sharding "
             << sharding << " but the op computes " << expected;
  }

  // Local result types (checkSharding made sure they are ranked tensors).
  SmallVector<Type> localTypes;
  for (auto [result, sharding] :
       llvm::zip_equal(op->getResults(), resultShardings))
    localTypes.push_back(
        sharding.getLocalType(cast<RankedTensorType>(result.getType()), mesh));

  // A convolution adds its bias to every output: with a split sum factor
  // (partial results) only one device per partial group may add it.
  Value leaderBias;
  auto conv = dyn_cast<dnn::ConvOp>(op);
  if (conv && conv.getBias() && resultShardings.front().isPartial()) {
    FailureOr<Value> masked = emitOnGroupLeader(
        op, lookupLocal(conv.getBias()), resultShardings.front().getPartial());
    if (failed(masked))
      return failure();
    leaderBias = *masked;
  }

  // An op without operands whose result is split has nothing to compute a
  // block from: it is built whole and each device keeps its block, except
  // for splat constants, whose blocks are the splat of the local type.
  Operation *newOp;
  bool sliceResults = op->getNumOperands() == 0 &&
                      llvm::any_of(resultShardings, [](ShardingAttr sharding) {
                        return sharding.isSplit();
                      });
  auto constant = dyn_cast<dnn::ConstantOp>(op);
  auto splat =
      constant ? dyn_cast<DenseElementsAttr>(constant.getValue()) : nullptr;
  if (splat && splat.isSplat()) {
    newOp = dnn::ConstantOp::create(
        builder, op->getLoc(),
        splat.resizeSplat(cast<ShapedType>(localTypes.front())));
    sliceResults = false;
  } else {
    newOp = builder.clone(*op, mapping);
    if (!sliceResults)
      for (auto [result, type] :
           llvm::zip_equal(newOp->getResults(), localTypes))
        result.setType(type);
  }
  // The per-rank program keeps shardings on @main's arguments and results
  // only: on op results they would describe global layouts of local values.
  newOp->removeAttr(DistDialect::getShardingsAttrName());
  // A pinned rule holds global factor sizes.
  newOp->removeAttr(dnn::DnnDialect::kShardingRuleAttrName);

  // Attributes that hold the global extent of a splittable dim. Every other
  // attribute of a dnn op is either about dims a rule never splits (window
  // sizes, pads, slice bounds, concat and gather axes) or independent of
  // extents (permutations, reduced axes, equations).
  if (auto newConv = dyn_cast<dnn::ConvOp>(newOp)) {
    // Splitting the group factor leaves fewer groups on each device; the
    // channels per group are the weight's dim 1 whatever the split.
    int64_t inChannels = newConv.getInput().getType().getDimSize(1);
    int64_t perGroup = newConv.getWeight().getType().getDimSize(1);
    if (!ShapedType::isDynamic(inChannels) && perGroup > 0 &&
        inChannels % perGroup == 0)
      newConv.setGroupAttr(builder.getI64IntegerAttr(inChannels / perGroup));
    if (leaderBias)
      newConv.getBiasMutable().assign(leaderBias);
  }
  if (failed(verifyNewOp(newOp, op)))
    return failure();
  LLVM_DEBUG(llvm::dbgs() << "partitioned " << *newOp << "\n");

  for (auto [index, result] : llvm::enumerate(op->getResults())) {
    Value local = newOp->getResult(index);
    if (sliceResults) {
      ShardingAttr sharding = resultShardings[index];
      auto slice = ShardSliceOp::create(builder, op->getLoc(),
                                        localTypes[index], local, sharding);
      if (failed(verifyNewOp(slice, op)))
        return failure();
      local = slice;
    }
    // Reductions other than sums over a split factor, completed now.
    auto pending = fs.getPendingReductions(index);
    if (!pending.empty()) {
      if (pending.size() > 1 || resultShardings[index].isPartial())
        return op->emitOpError()
               << "cannot be partitioned: result #" << index
               << " combines split reductions of different kinds";
      std::optional<ReductionKind> kind =
          getCollectiveKind(pending.front().first);
      if (!kind)
        return op->emitOpError()
               << "cannot be partitioned: result #" << index
               << " has a pending reduction of kind '"
               << dnn::stringifyFactorKind(pending.front().first) << "'";
      auto reduce = AllReduceOp::create(
          builder, op->getLoc(), local,
          ReductionKindAttr::get(builder.getContext(), *kind), meshRef,
          getAxesAttr(inMeshOrder(pending.front().second)));
      if (failed(verifyNewOp(reduce, op)))
        return failure();
      local = reduce;
    }
    mapping.map(result, local);
  }
  return success();
}

FailureOr<Value> FunctionPartitioner::emitReshard(Operation *op, Value value,
                                                  RankedTensorType globalType,
                                                  ShardingAttr from,
                                                  ShardingAttr to) {
  Location loc = op->getLoc();
  auto type = cast<RankedTensorType>(value.getType());
  std::string reason;
  FailureOr<SmallVector<ReshardStep>> steps =
      planReshard(type.getShape(), from, to, mesh, reason);
  if (failed(steps))
    return op->emitOpError() << "cannot be partitioned: " << reason;
  MLIRContext *context = builder.getContext();
  auto sum = ReductionKindAttr::get(context, ReductionKind::Sum);
  for (const ReshardStep &step : *steps) {
    Type stepType = type.clone(step.shape);
    Operation *newOp = nullptr;
    switch (step.kind) {
    case ReshardStep::Kind::AllReduce:
      newOp = AllReduceOp::create(builder, loc, value, sum, meshRef,
                                  getAxesAttr(step.axes));
      break;
    case ReshardStep::Kind::ReduceScatter:
      newOp = ReduceScatterOp::create(builder, loc, stepType, value, sum,
                                      builder.getI64IntegerAttr(step.dim),
                                      meshRef, getAxesAttr(step.axes));
      break;
    case ReshardStep::Kind::AllToAll:
      newOp = AllToAllOp::create(builder, loc, stepType, value,
                                 builder.getI64IntegerAttr(step.dim),
                                 builder.getI64IntegerAttr(step.concatDim),
                                 meshRef, getAxesAttr(step.axes));
      break;
    case ReshardStep::Kind::AllGather:
      newOp = AllGatherOp::create(builder, loc, stepType, value,
                                  builder.getI64IntegerAttr(step.dim), meshRef,
                                  getAxesAttr(step.axes));
      break;
    case ReshardStep::Kind::Slice:
      newOp = ShardSliceOp::create(builder, loc, stepType, value, step.slice);
      break;
    }
    value = newOp->getResult(0);
    if (failed(verifyNewOp(newOp, op)))
      return failure();
  }

  RankedTensorType expected = to.getLocalType(globalType, mesh);
  if (value.getType() != expected)
    return op->emitOpError() << "could not be partitioned: the collectives "
                                "give a local type "
                             << value.getType() << " instead of " << expected;
  return value;
}

LogicalResult FunctionPartitioner::partitionReshard(ReshardOp op) {
  Value input = op.getInput();
  ShardingAttr from = getValueSharding(input, op);
  if (!from)
    return failure();
  if (ShardingAttr stated = op.getFromAttr();
      stated && !sameSharding(stated, from))
    return op.emitOpError() << "cannot be partitioned: 'from' is " << stated
                            << " but its operand has sharding " << from;
  ShardingAttr to = op.getTo();
  if (to.getMesh() != meshRef)
    return op.emitOpError() << "reshards to " << to.getMesh()
                            << " but the module's mesh is " << meshRef;
  auto key = std::make_pair(input, Attribute(to));
  if (Value done = reshards.lookup(key)) {
    mapping.map(op.getResult(), done);
    return success();
  }
  // Sums completed by different collectives differ in their last bits (an
  // all-reduce and a reduce-scatter add in different orders), and two uses
  // of one value must not see two values: an ArgMax composed of a max and a
  // comparison with it finds no maximum then. So the partial sums of a value
  // are completed once; later reshards move that result, which is exact.
  auto type = cast<RankedTensorType>(input.getType());
  Value source = lookupLocal(input);
  bool completes = from.isPartial() && !to.isPartial();
  if (completes) {
    if (auto it = completedSums.find(input); it != completedSums.end())
      std::tie(source, from) = it->second;
  }
  FailureOr<Value> local = sameSharding(from, to)
                               ? FailureOr<Value>(source)
                               : emitReshard(op, source, type, from, to);
  if (failed(local))
    return failure();
  if (completes)
    completedSums.try_emplace(input, *local, to);
  reshards[key] = *local;
  mapping.map(op.getResult(), *local);
  return success();
}

LogicalResult FunctionPartitioner::partitionReturn(func::ReturnOp op) {
  for (auto [index, operand] : llvm::enumerate(op.getOperands())) {
    ShardingAttr expected = getFuncResultSharding(func, index);
    if (!expected)
      return func.emitOpError()
             << "result #" << index << " has no 'dist.sharding'";
    ShardingAttr sharding = getValueSharding(operand, op);
    if (!sharding)
      return failure();
    if (!sameSharding(sharding, expected))
      return op.emitOpError()
             << "cannot be partitioned: operand #" << index << " has sharding "
             << sharding << " but the function returns it as " << expected;
  }
  SmallVector<Value> operands = llvm::map_to_vector(
      op.getOperands(), [&](Value operand) { return lookupLocal(operand); });
  func::ReturnOp::create(builder, op.getLoc(), operands);
  return success();
}

LogicalResult FunctionPartitioner::partitionOps(Block &block) {
  for (Operation &op : block) {
    LogicalResult done = failure();
    if (auto reshard = dyn_cast<ReshardOp>(op))
      done = partitionReshard(reshard);
    else if (auto ret = dyn_cast<func::ReturnOp>(op))
      done = partitionReturn(ret);
    else if (auto stage = dyn_cast<StageOp>(op))
      done = partitionStage(stage);
    else if (auto transfer = dyn_cast<TransferOp>(op))
      done = partitionTransfer(transfer);
    else if (auto slice = dyn_cast<MicrobatchSliceOp>(op))
      done = partitionMicrobatchSlice(slice);
    else if (auto yield = dyn_cast<YieldOp>(op)) {
      SmallVector<Value> values = llvm::map_to_vector(
          yield.getValues(), [&](Value value) { return lookupLocal(value); });
      YieldOp::create(builder, yield.getLoc(), values);
      done = success();
    } else if (dnn::getShardingRule(&op))
      done = partitionDnnOp(&op);
    else
      op.emitOpError() << "cannot be partitioned: only dnn ops, dist.reshard, "
                          "dist.stage, dist.transfer, dist.microbatch_slice "
                          "and func.return are supported in @"
                       << func.getSymName();
    if (failed(done))
      return failure();
  }
  return success();
}

LogicalResult FunctionPartitioner::partitionStage(StageOp op) {
  // Reshards are shared inside a stage only: a stage cannot use another
  // stage's values.
  auto outerReshards = reshards;
  auto body = std::make_unique<Block>();
  {
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToEnd(body.get());
    if (failed(partitionOps(*op.getBody()))) {
      body->dropAllDefinedValueUses();
      return failure();
    }
  }
  reshards = std::move(outerReshards);
  auto yield = cast<YieldOp>(body->back());
  auto stage =
      StageOp::create(builder, op.getLoc(), yield.getValues().getTypes(),
                      op.getStageAttr(), op.getMeshAttr());
  stage.getRegion().push_back(body.release());
  for (auto [oldResult, newResult] :
       llvm::zip_equal(op.getResults(), stage.getResults()))
    mapping.map(oldResult, newResult);
  return success();
}

LogicalResult
FunctionPartitioner::partitionMicrobatchSlice(MicrobatchSliceOp op) {
  ShardingAttr sharding = getValueSharding(op.getInput(), op);
  if (!sharding)
    return failure();
  int64_t dim = op.getDimAttr().getInt();
  ShardingAttr stored = getStoredSharding(op.getResult());
  if (sharding.isPartial() || !sharding.getDimAxes(dim).empty() ||
      (stored && !sameSharding(stored, sharding)))
    return op.emitOpError()
           << "cannot be partitioned: its operand must be whole along dim "
           << dim << " and its result keep the operand's sharding, got "
           << sharding << " and " << stored;
  RankedTensorType localType = sharding.getLocalType(
      cast<RankedTensorType>(op.getResult().getType()), mesh);
  auto slice = MicrobatchSliceOp::create(builder, op.getLoc(), localType,
                                         lookupLocal(op.getInput()),
                                         op.getDimAttr(), op.getCountAttr());
  if (failed(verifyNewOp(slice, op)))
    return failure();
  mapping.map(op.getResult(), slice.getResult());
  return success();
}

LogicalResult FunctionPartitioner::partitionTransfer(TransferOp op) {
  ShardingAttr sharding = getValueSharding(op.getInput(), op);
  if (!sharding)
    return failure();
  if (sharding.isPartial())
    return op.emitOpError() << "cannot be partitioned: it transfers partial "
                               "sums over "
                            << formatAxes(sharding.getPartial());
  if (ShardingAttr stored = getStoredSharding(op.getResult());
      stored && !sameSharding(stored, sharding))
    return op.emitOpError() << "cannot be partitioned: its result has sharding "
                            << stored << " but its operand " << sharding;
  auto transfer =
      TransferOp::create(builder, op.getLoc(), lookupLocal(op.getInput()),
                         op.getSrcStageAttr(), op.getDstStageAttr());
  if (failed(verifyNewOp(transfer, op)))
    return failure();
  mapping.map(op.getResult(), transfer.getResult());
  return success();
}

LogicalResult FunctionPartitioner::run() {
  Block &oldBody = func.getBody().front();

  // Local argument types.
  SmallVector<Type> argTypes;
  SmallVector<Location> argLocs;
  for (BlockArgument arg : oldBody.getArguments()) {
    unsigned index = arg.getArgNumber();
    auto emitError = [&] {
      return func.emitOpError() << "argument #" << index << " ";
    };
    ShardingAttr sharding = getArgSharding(func, index);
    if (!sharding)
      return emitError() << "has no 'dist.sharding'";
    if (failed(checkSharding(sharding, arg.getType(), emitError)))
      return failure();
    // (A sum over micro-batches accumulates each device's partial share:
    // its collective runs once, on the step's sum.)
    if (sharding.isPartial() &&
        !func.getArgAttr(index, DistDialect::getAccumulatorAttrName()))
      return emitError() << "holds partial sums over "
                         << formatAxes(sharding.getPartial())
                         << ", which a function argument may not (only an "
                            "accumulator)";
    argTypes.push_back(
        sharding.getLocalType(cast<RankedTensorType>(arg.getType()), mesh));
    argLocs.push_back(arg.getLoc());
  }
  SmallVector<Type> resultTypes;
  for (auto [index, type] : llvm::enumerate(func.getResultTypes())) {
    auto emitError = [&, index = index] {
      return func.emitOpError() << "result #" << index << " ";
    };
    ShardingAttr sharding = getFuncResultSharding(func, index);
    if (!sharding)
      return emitError() << "has no 'dist.sharding'";
    if (failed(checkSharding(sharding, type, emitError)))
      return failure();
    auto target =
        func.getResultAttrOfType<IntegerAttr>(index, dnn::kUpdatesAttrName);
    if (sharding.isPartial() &&
        !(target && func.getArgAttr(target.getInt(),
                                    DistDialect::getAccumulatorAttrName())))
      return emitError() << "holds partial sums over "
                         << formatAxes(sharding.getPartial())
                         << ", which a function result may not (only the "
                            "update of an accumulator)";
    resultTypes.push_back(
        sharding.getLocalType(cast<RankedTensorType>(type), mesh));
  }

  // Build the new body in a block of its own.
  auto newBody = std::make_unique<Block>();
  for (auto [oldArg, newArg] : llvm::zip_equal(
           oldBody.getArguments(), newBody->addArguments(argTypes, argLocs)))
    mapping.map(oldArg, newArg);
  builder.setInsertionPointToEnd(newBody.get());
  if (failed(partitionOps(oldBody))) {
    newBody->dropAllDefinedValueUses();
    return failure();
  }

  // Swap the bodies.
  oldBody.dropAllDefinedValueUses();
  oldBody.erase();
  func.getBody().push_back(newBody.release());
  func.setFunctionType(
      FunctionType::get(func.getContext(), argTypes, resultTypes));
  return success();
}

namespace {
/// Partitions @main; see Passes.td.
struct PartitionPass
    : public dnnc::dist::impl::PartitionPassBase<PartitionPass> {
  using Base::Base;

  void runOnOperation() override;
};
} // namespace

void PartitionPass::runOnOperation() {
  ModuleOp module = getOperation();
  FailureOr<ShardingTarget> target = getShardingTarget(module);
  if (failed(target))
    return signalPassFailure();
  if (!*target)
    return;
  func::FuncOp main = target->func;
  if (failed(FunctionPartitioner(main, target->mesh).run()))
    return signalPassFailure();

  // The result must be a well-formed per-rank program.
  OpPassManager checks(ModuleOp::getOperationName());
  checks.addPass(createCheckPartitionedPass());
  if (failed(runPipeline(checks, module))) {
    main.emitError() << "dist-partition produced an invalid per-rank program "
                        "(see the errors above)";
    signalPassFailure();
  }
}
