//===- SplitMicrobatches.cpp - One micro-batch of @main ---------*- C++ -*-===//
//
// Part of the dnnc project.
//
//===----------------------------------------------------------------------===//
//
// Implements `dist-split-microbatches`: follows the batch dim of the graph
// inputs through the ops' sharding rules and divides it by the number of
// micro-batches, so that @main computes one micro-batch. The runtime runs
// the program once per micro-batch (docs/runtime.md).
//
//===----------------------------------------------------------------------===//

#include "dnnc/Dialect/Dist/Transforms/FactorSharding.h"
#include "dnnc/Dialect/Dist/Transforms/Microbatches.h"
#include "dnnc/Dialect/Dist/Transforms/Passes.h"
#include "dnnc/Dialect/Dnn/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "dist-split-microbatches"

namespace dnnc::dist {
#define GEN_PASS_DEF_SPLITMICROBATCHESPASS
#include "dnnc/Dialect/Dist/Transforms/Passes.h.inc"
} // namespace dnnc::dist

using namespace mlir;
using namespace dnnc;
using namespace dnnc::dist;

/// Returns the major factor of size > 1 of `factors` (a dim's factors,
/// major to minor), or -1.
static int64_t getMajorFactor(dnn::ShardingRuleAttr rule,
                              ArrayRef<int64_t> factors) {
  for (int64_t factor : factors)
    if (rule.getFactorSize(factor) > 1)
      return factor;
  return -1;
}

/// Returns `type` with dim `dim` divided by `count`.
static RankedTensorType divideDim(Type type, int64_t dim, int64_t count) {
  auto tensor = cast<RankedTensorType>(type);
  SmallVector<int64_t> shape(tensor.getShape());
  shape[dim] /= count;
  return tensor.clone(shape);
}

namespace {
/// Splits one function into micro-batches.
class MicrobatchSplitter {
public:
  /// Splits `func` into `count` micro-batches; `forwardOnly`: `func` is the
  /// forward graph of a training step (checkTrainingSplit), its weights
  /// standing for the parameters.
  MicrobatchSplitter(func::FuncOp func, int64_t count, bool forwardOnly = false)
      : func(func), count(count), forwardOnly(forwardOnly) {}

  /// Rewrites the function; on failure, errors were emitted (the function
  /// may have been partly rewritten: the pass fails).
  LogicalResult run();

private:
  /// Returns the batch dim of `value`, or -1 (the value is whole: the same
  /// for every micro-batch).
  int64_t getBatchDim(Value value) const {
    auto it = batchDims.find(value);
    return it == batchDims.end() ? -1 : it->second;
  }

  /// Follows the batch through `op`.
  LogicalResult visit(Operation *op);

  /// Training: returns true if `op` can compute its share of a sum over the
  /// batch per micro-batch: the factor holding its operands' batch dims is
  /// a `sum` or `mean` reduction, divisible, held by no result, and the
  /// major part of every operand dim holding it. Sets `batch` and `kind`.
  bool canReduce(Operation *op, dnn::ShardingRuleAttr rule, int64_t &batch,
                 dnn::FactorKind &kind);

  /// Training: makes every used result of `op` (a share of a sum over the
  /// batch, or its widening cast) a `dist.microbatch_sum` (with `mean` for a
  /// mean) of the same sharding, partial ones included.
  void sumOverMicrobatches(Operation *op, bool mean);

  /// Returns the factor holding the batch dims of `op`'s operands (each as
  /// the major part of its dim), or -1 when they disagree or none has one.
  int64_t getOperandBatchFactor(Operation *op, dnn::ShardingRuleAttr rule);

  /// Cuts the whole operands of `op` that hold factor `batch` into the
  /// running micro-batch's block.
  void sliceWholeOperands(Operation *op, dnn::ShardingRuleAttr rule,
                          int64_t batch);

  /// Returns true if `op` can compute on micro-batches: the factor holding
  /// its operands' batch dims is parallel and divisible, and every operand
  /// and result holding it holds it as the major part of a dim. Sets
  /// `batch` to that factor.
  bool canSplit(Operation *op, dnn::ShardingRuleAttr rule, int64_t &batch);

  /// Returns the whole (every micro-batch) version of `value`: `value`
  /// itself when whole, else a copy of the ops computing it, from whole
  /// copies of the graph inputs.
  Value getWhole(Value value);

  /// Returns the block of the whole `value` that micro-batch `m` uses along
  /// `dim`, for use by `user`: a resized splat, or a dist.microbatch_slice
  /// (with reshards around it when the value's sharding splits `dim`).
  Value sliceWhole(Value value, int64_t dim, Operation *user);

  /// Returns the whole copy of graph input `arg`: a new argument of the
  /// same type and attributes (dist.microbatch_dim excepted).
  Value getWholeArgument(BlockArgument arg);

  func::FuncOp func;
  int64_t count;
  bool forwardOnly;
  /// The batch dim of every value computed per micro-batch.
  llvm::DenseMap<Value, int64_t> batchDims;
  /// Whole copies of values computed per micro-batch.
  llvm::DenseMap<Value, Value> wholeCopies;
  /// Micro-batch blocks of whole values, by value, dim, stage and whether
  /// in its backward.
  llvm::DenseMap<std::tuple<Value, int64_t, Attribute, Attribute>, Value> slices;
  /// Splat constants resized for micro-batches (erased when unused).
  llvm::SetVector<Operation *> replacedSplats;
  /// Number of ops copied to compute values over the whole batch.
  int64_t wholeOps = 0;
  /// True when the function is a training step (it has results updating
  /// its arguments): sums over the batch become sums over micro-batches.
  bool training = false;
  /// Training: values that depend on a trainable parameter.
  llvm::DenseSet<Value> onParameters;
  /// Training: values of the whole step (sums over micro-batches and what
  /// is computed from them).
  llvm::DenseSet<Value> stepValues;
  /// Training: ops computing a share of a sum over micro-batches (their
  /// operands are retyped, their results are not).
  llvm::SetVector<Operation *> reducingOps;
};
} // namespace

int64_t MicrobatchSplitter::getOperandBatchFactor(Operation *op,
                                                 dnn::ShardingRuleAttr rule) {
  int64_t batch = -1;
  for (auto [index, operand] : llvm::enumerate(op->getOperands())) {
    int64_t dim = getBatchDim(operand);
    if (dim < 0)
      continue;
    int64_t factor =
        getMajorFactor(rule, rule.getOperandDimFactors(index, dim));
    if (factor < 0 || (batch >= 0 && factor != batch))
      return -1;
    batch = factor;
  }
  if (batch < 0 || rule.getFactorSize(batch) % count != 0)
    return -1;
  for (int64_t index = 0, e = op->getNumOperands(); index < e; ++index) {
    dnn::TensorMappingAttr mapping = rule.getOperandMapping(index);
    std::optional<int64_t> dim = mapping.getDimOfFactor(batch);
    if (dim && getMajorFactor(rule, mapping.getDimFactors(*dim)) != batch)
      return -1;
  }
  return batch;
}

bool MicrobatchSplitter::canReduce(Operation *op, dnn::ShardingRuleAttr rule,
                                   int64_t &batch, dnn::FactorKind &kind) {
  batch = getOperandBatchFactor(op, rule);
  if (batch < 0)
    return false;
  kind = rule.getFactorKind(batch);
  if (kind != dnn::FactorKind::Sum && kind != dnn::FactorKind::Mean)
    return false;
  // Results holding the factor (a loss op's per-element log-probabilities)
  // are split like the operands.
  bool reduces = false;
  for (int64_t index = 0, e = op->getNumResults(); index < e; ++index) {
    dnn::TensorMappingAttr mapping = rule.getResultMapping(index);
    std::optional<int64_t> dim = mapping.getDimOfFactor(batch);
    if (!dim)
      reduces = true;
    else if (getMajorFactor(rule, mapping.getDimFactors(*dim)) != batch)
      return false;
  }
  return reduces;
}

void MicrobatchSplitter::sliceWholeOperands(Operation *op,
                                            dnn::ShardingRuleAttr rule,
                                            int64_t batch) {
  for (OpOperand &use : op->getOpOperands()) {
    std::optional<int64_t> dim =
        rule.getOperandMapping(use.getOperandNumber()).getDimOfFactor(batch);
    if (!dim || getBatchDim(use.get()) >= 0)
      continue;
    Value whole = use.get();
    use.set(sliceWhole(whole, *dim, op));
    if (onParameters.contains(whole))
      onParameters.insert(use.get());
  }
}

/// Returns the only user of `value` if it is a `dnn.cast` to a wider float
/// type (a bf16/f16 weight gradient made f32 for its master weight).
static dnn::CastOp getWideningCast(Value value) {
  if (!value.hasOneUse())
    return nullptr;
  auto cast = dyn_cast<dnn::CastOp>(*value.getUsers().begin());
  if (!cast)
    return nullptr;
  auto from = dyn_cast<FloatType>(getElementTypeOrSelf(value));
  auto to = dyn_cast<FloatType>(getElementTypeOrSelf(cast.getType()));
  return from && to && to.getWidth() > from.getWidth() ? cast : nullptr;
}

void MicrobatchSplitter::sumOverMicrobatches(Operation *op, bool mean) {
  OpBuilder builder(op->getContext());
  for (OpResult opResult : op->getResults()) {
    if (opResult.use_empty() || getBatchDim(opResult) >= 0)
      continue;
    // A share in bf16/f16 that is widened right away is summed widened:
    // the accumulator keeps f32, as a master gradient does.
    Operation *def = op;
    Value result = opResult;
    if (dnn::CastOp cast = getWideningCast(opResult)) {
      // (In the share's stage: the cast of a master weight the gradient
      // cast mirrors is free, its stage the first user's.)
      copyPipelineStage(op, cast);
      def = cast;
      result = cast.getResult();
    }
    builder.setInsertionPointAfter(def);
    // The sum over micro-batches adds the shares as they are: a partial sum
    // over mesh axes (a data-parallel gradient) stays partial, so that its
    // collective (all-reduce, or ZeRO's reduce-scatter) runs once per step,
    // on the sum, instead of once per micro-batch.
    auto sum = MicrobatchSumOp::create(builder, result.getLoc(),
                                       result.getType(), result, mean);
    if (ShardingAttr sharding = getStoredSharding(result))
      setStoredSharding(sum.getResult(), sharding);
    copyPipelineStage(def, sum);
    result.replaceAllUsesExcept(sum.getResult(), sum.getOperation());
    stepValues.insert(sum.getResult());
  }
}

bool MicrobatchSplitter::canSplit(Operation *op, dnn::ShardingRuleAttr rule,
                                  int64_t &batch) {
  batch = getOperandBatchFactor(op, rule);
  if (batch < 0 || !rule.isParallel(batch))
    return false;
  for (int64_t index = 0, e = op->getNumResults(); index < e; ++index) {
    dnn::TensorMappingAttr mapping = rule.getResultMapping(index);
    std::optional<int64_t> dim = mapping.getDimOfFactor(batch);
    if (!dim || getMajorFactor(rule, mapping.getDimFactors(*dim)) != batch)
      return false;
  }
  return true;
}

Value MicrobatchSplitter::getWholeArgument(BlockArgument arg) {
  unsigned index = func.getNumArguments();
  SmallVector<NamedAttribute> attrs;
  for (NamedAttribute attr : func.getArgAttrDict(arg.getArgNumber())
                                 ? func.getArgAttrDict(arg.getArgNumber())
                                 : DictionaryAttr::get(func.getContext()))
    if (attr.getName() != DistDialect::getMicrobatchDimAttrName())
      attrs.push_back(attr);
  if (failed(func.insertArgument(index, arg.getType(),
                                 DictionaryAttr::get(func.getContext(), attrs),
                                 arg.getLoc())))
    return {};
  return func.getArgument(index);
}

Value MicrobatchSplitter::getWhole(Value root) {
  if (getBatchDim(root) < 0)
    return root;
  // Post-order over the split values `root` depends on.
  SmallVector<std::pair<Value, bool>> stack = {{root, false}};
  while (!stack.empty()) {
    auto [value, expanded] = stack.pop_back_val();
    if (getBatchDim(value) < 0 || wholeCopies.count(value))
      continue;
    if (auto arg = dyn_cast<BlockArgument>(value)) {
      wholeCopies[value] = getWholeArgument(arg);
      continue;
    }
    Operation *def = value.getDefiningOp();
    // A micro-batch block cut from a whole value (sliceWhole): that value.
    if (auto slice = dyn_cast<MicrobatchSliceOp>(def)) {
      wholeCopies[value] = slice.getInput();
      continue;
    }
    if (!expanded) {
      stack.push_back({value, true});
      for (Value operand : def->getOperands())
        if (getBatchDim(operand) >= 0 && !wholeCopies.count(operand))
          stack.push_back({operand, false});
      continue;
    }
    // The operands are whole now: copy the op (its types are still those
    // of the whole batch) on them.
    OpBuilder builder(def);
    IRMapping mapping;
    for (Value operand : def->getOperands())
      if (Value whole = wholeCopies.lookup(operand))
        mapping.map(operand, whole);
    Operation *copy = builder.clone(*def, mapping);
    ++wholeOps;
    for (auto [original, copied] :
         llvm::zip_equal(def->getResults(), copy->getResults()))
      wholeCopies[original] = copied;
  }
  return wholeCopies.lookup(root);
}

Value MicrobatchSplitter::sliceWhole(Value value, int64_t dim,
                                     Operation *user) {
  Attribute stage = user->getAttr(DistDialect::getStageAttrName());
  Attribute backward = user->getAttr(DistDialect::getBackwardAttrName());
  auto key = std::make_tuple(value, dim, stage, backward);
  if (Value done = slices.lookup(key))
    return done;
  OpBuilder builder(user);
  auto setStage = [&](Operation *op) { copyPipelineStage(user, op); };
  Value result;
  auto constant = value.getDefiningOp<dnn::ConstantOp>();
  auto splat = constant ? dyn_cast<SplatElementsAttr>(constant.getValue())
                        : SplatElementsAttr();
  ShardingAttr sharding = getStoredSharding(value);
  if (splat) {
    // Created at the whole type and retyped with the other split values.
    auto resized = dnn::ConstantOp::create(builder, constant.getLoc(), splat);
    if (sharding)
      setStoredSharding(resized.getResult(), sharding);
    setStage(resized);
    result = resized.getResult();
    replacedSplats.insert(constant);
  } else {
    // The slice needs the whole extent of `dim` on every device.
    Value input = value;
    ShardingAttr whole = sharding;
    if (sharding && !sharding.getDimAxes(dim).empty()) {
      SmallVector<AxisListAttr> dims(sharding.getDims());
      dims[dim] = AxisListAttr::get(func.getContext(), ArrayRef<StringAttr>());
      whole = ShardingAttr::get(func.getContext(), sharding.getMesh(), dims,
                                sharding.getPartial());
      auto gather =
          ReshardOp::create(builder, value.getLoc(), value, sharding, whole);
      setStoredSharding(gather.getResult(), whole);
      setStage(gather);
      input = gather.getResult();
    }
    auto slice = MicrobatchSliceOp::create(
        builder, value.getLoc(), input.getType(), input,
        builder.getI64IntegerAttr(dim), builder.getI64IntegerAttr(count));
    if (whole)
      setStoredSharding(slice.getResult(), whole);
    setStage(slice);
    result = slice.getResult();
    if (whole != sharding) {
      auto split =
          ReshardOp::create(builder, value.getLoc(), result, whole, sharding);
      setStoredSharding(split.getResult(), sharding);
      setStage(split);
      batchDims[result] = dim;
      result = split.getResult();
    }
  }
  batchDims[result] = dim;
  slices[key] = result;
  return result;
}

LogicalResult MicrobatchSplitter::visit(Operation *op) {
  bool carries = llvm::any_of(op->getOperands(), [&](Value operand) {
    return getBatchDim(operand) >= 0;
  });
  if (training && llvm::any_of(op->getOperands(), [&](Value operand) {
        return stepValues.contains(operand);
      })) {
    if (carries)
      return op->emitOpError()
             << "cannot be split into " << count
             << " micro-batches: it uses a sum over the whole batch (a "
                "dist.microbatch_sum, known only once every micro-batch "
                "ran) together with one micro-batch's values (a batch "
                "statistic, such as a BatchNormalization's in training "
                "mode: train without pipeline stages and micro-batches, or "
                "with the batch norm in eval mode)";
    for (Value result : op->getResults())
      stepValues.insert(result);
    return success();
  }
  if (!carries)
    return success();
  // Reshards and annotations keep the layout's dims.
  if (isa<ReshardOp, AnnotateOp>(op)) {
    batchDims[op->getResult(0)] = getBatchDim(op->getOperand(0));
    return success();
  }
  dnn::ShardingRuleAttr rule = dnn::getShardingRule(op);
  int64_t batch = -1;
  if (rule && canSplit(op, rule, batch)) {
    // Per micro-batch: whole operands holding the batch factor are cut.
    sliceWholeOperands(op, rule, batch);
    for (auto [index, result] : llvm::enumerate(op->getResults()))
      batchDims[result] = *rule.getResultMapping(index).getDimOfFactor(batch);
    return success();
  }
  bool onParameter = training && llvm::any_of(op->getOperands(), [&](Value v) {
                       return onParameters.contains(v);
                     });
  dnn::FactorKind kind;
  if (onParameter && rule && canReduce(op, rule, batch, kind)) {
    // A share of a sum over the batch (a weight gradient, the loss) per
    // micro-batch, summed over the step's micro-batches. A sum that does
    // not depend on the parameters (a count of labels) is computed over
    // the whole batch below instead, so that each micro-batch can use it.
    sliceWholeOperands(op, rule, batch);
    reducingOps.insert(op);
    for (auto [index, result] : llvm::enumerate(op->getResults()))
      if (std::optional<int64_t> dim =
              rule.getResultMapping(index).getDimOfFactor(batch))
        batchDims[result] = *dim;
    sumOverMicrobatches(op, kind == dnn::FactorKind::Mean);
    return success();
  }
  // (Not in the forward-only check: whether this is an error depends on
  // which weights the step trains, which a forward graph does not say; the
  // step's own split reports it.)
  if (onParameter && !forwardOnly)
    return op->emitOpError()
           << "cannot be split into " << count
           << " micro-batches: it needs the whole batch (it reduces over it "
              "by other than a sum, or meets it in a dim where it is not the "
              "major factor), and it depends on the trained parameters, so "
              "computing it over the whole batch for each micro-batch would "
              "count its gradient once per micro-batch";
  // Over the whole batch: every operand whole.
  for (OpOperand &use : op->getOpOperands()) {
    if (getBatchDim(use.get()) < 0)
      continue;
    Value whole = getWhole(use.get());
    if (!whole)
      return op->emitOpError() << "cannot be split into " << count
                               << " micro-batches: no whole copy of operand #"
                               << use.getOperandNumber();
    use.set(whole);
  }
  return success();
}

LogicalResult MicrobatchSplitter::run() {
  Block &body = func.getBody().front();
  MLIRContext *context = func.getContext();
  // Seeds: dim 0 of the graph inputs that it divides.
  for (BlockArgument arg : body.getArguments()) {
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    if (dnn::isWeightArgument(func, arg.getArgNumber()) || !type ||
        type.getRank() == 0 || type.isDynamicDim(0) ||
        type.getDimSize(0) % count != 0)
      continue;
    batchDims[arg] = 0;
  }
  if (batchDims.empty())
    return func.emitOpError()
           << "cannot be split into " << count
           << " micro-batches: no graph input has a dim 0 divisible by "
           << count;
  training = forwardOnly || dnn::isTrainingStep(func);
  if (training) {
    for (BlockArgument arg : body.getArguments())
      if (forwardOnly ? dnn::isWeightArgument(func, arg.getArgNumber())
                      : bool(func.getArgAttr(arg.getArgNumber(),
                                             dnn::kTrainableAttrName)))
        onParameters.insert(arg);
    for (Operation &op : body.without_terminator()) {
      if (forwardOnly)
        if (auto constant = dyn_cast<dnn::ConstantOp>(op);
            constant && !constant.getValue().isSplat() &&
            isa<FloatType>(constant.getValue().getElementType()) &&
            cast<ShapedType>(constant.getValue().getType()).getRank() > 0)
          onParameters.insert(constant.getResult());
      if (llvm::any_of(op.getOperands(),
                       [&](Value v) { return onParameters.contains(v); }))
        for (Value result : op.getResults())
          onParameters.insert(result);
    }
  }
  SmallVector<Operation *> ops = llvm::map_to_vector(
      body.without_terminator(), [](Operation &op) { return &op; });
  for (Operation *op : ops)
    if (failed(visit(op)))
      return failure();
  for (Operation *constant : replacedSplats)
    if (constant->use_empty())
      constant->erase();
  if (wholeOps > 0)
    LLVM_DEBUG(llvm::dbgs()
               << wholeOps << " ops copied over the whole batch\n");

  // Retype: every value with a batch dim, then the function.
  auto i64 = [&](int64_t value) {
    return IntegerAttr::get(IntegerType::get(context, 64), value);
  };
  for (BlockArgument arg : body.getArguments())
    if (int64_t dim = getBatchDim(arg); dim >= 0) {
      arg.setType(divideDim(arg.getType(), dim, count));
      func.setArgAttr(arg.getArgNumber(),
                      DistDialect::getMicrobatchDimAttrName(), i64(dim));
    }
  for (Operation &op : body.without_terminator()) {
    // A reducing op keeps its result types; its operands changed.
    bool changed = reducingOps.contains(&op);
    for (OpResult result : op.getResults())
      if (int64_t dim = getBatchDim(result); dim >= 0) {
        result.setType(divideDim(result.getType(), dim, count));
        changed = true;
      }
    if (!changed)
      continue;
    // Splat constants hold a value of the old type.
    if (auto constant = dyn_cast<dnn::ConstantOp>(op))
      if (auto splat = dyn_cast<SplatElementsAttr>(constant.getValue()))
        constant.setValueAttr(splat.resizeSplat(
            cast<ShapedType>(constant.getResult().getType())));
    // A pinned rule holds the old factor sizes.
    op.removeAttr(dnn::DnnDialect::kShardingRuleAttrName);
    if (failed(verify(&op, /*verifyRecursively=*/false)))
      return op.emitOpError() << "does not verify once split into " << count
                              << " micro-batches (see above)";
    for (OpResult result : op.getResults())
      if (ShardingAttr sharding = getStoredSharding(result))
        if (MeshOp mesh = lookupMesh(&op, sharding.getMesh());
            mesh &&
            failed(verifyShardingForType(sharding, mesh, result.getType(), [&] {
              return op.emitOpError()
                     << "cannot be split into " << count
                     << " micro-batches: its sharding no longer "
                        "fits: ";
            })))
          return failure();
  }
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  for (auto [index, operand] : llvm::enumerate(ret.getOperands()))
    if (int64_t dim = getBatchDim(operand); dim >= 0)
      func.setResultAttr(index, DistDialect::getMicrobatchDimAttrName(),
                         i64(dim));
  func.setFunctionType(FunctionType::get(context, body.getArgumentTypes(),
                                         ret.getOperandTypes()));
  return success();
}

LogicalResult dnnc::dist::splitMicrobatches(func::FuncOp func, int64_t count) {
  return MicrobatchSplitter(func, count).run();
}

LogicalResult dnnc::dist::checkTrainingSplit(func::FuncOp func,
                                             std::string &reason) {
  OwningOpRef<func::FuncOp> copy(func.clone());
  std::string first;
  ScopedDiagnosticHandler handler(func.getContext(), [&](Diagnostic &d) {
    if (first.empty())
      first = d.str();
    return success();
  });
  if (succeeded(MicrobatchSplitter(*copy, 1, /*forwardOnly=*/true).run()))
    return success();
  reason = first;
  return failure();
}

namespace {
/// Splits @main into micro-batches; see Passes.td.
struct SplitMicrobatchesPass
    : public dnnc::dist::impl::SplitMicrobatchesPassBase<
          SplitMicrobatchesPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto pipeline =
        module->getAttrOfType<PipelineAttr>(DistDialect::getPipelineAttrName());
    int64_t count = pipeline ? pipeline.getMicrobatches() : 1;
    auto main = module.lookupSymbol<func::FuncOp>("main");
    if (!main || main.isExternal())
      return;
    // A pipelined training step is split even into one micro-batch: its
    // sums over the batch become the step's accumulators.
    if (count <= 1 &&
        !(dnn::isTrainingStep(main) && pipeline && pipeline.isPipelined()))
      return;
    // Split already (the planner shards executed plans on one micro-batch).
    for (unsigned i = 0, e = main.getNumArguments(); i < e; ++i)
      if (main.getArgAttr(i, DistDialect::getMicrobatchDimAttrName()))
        return;
    if (failed(splitMicrobatches(main, count)))
      return signalPassFailure();
  }
};
} // namespace
