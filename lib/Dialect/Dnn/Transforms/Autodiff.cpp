//===- Autodiff.cpp - reverse-mode gradient of @main's loss ---*- C++ -*-===//
//
// Implements dnn-autodiff: @main rewritten to return its loss and the
// gradients of the loss with respect to its floating-point arguments, from
// the ops' gradient rules (DnnGradientOpInterface).
//
//===----------------------------------------------------------------------===//

#include "dnnc/Dialect/Dnn/IR/Dnn.h"
#include "dnnc/Dialect/Dnn/IR/ValueBuilder.h"
#include "dnnc/Dialect/Dnn/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseSet.h"

#include <cmath>
#include <numeric>

namespace dnnc::dnn {
#define GEN_PASS_DEF_AUTODIFFPASS
#include "dnnc/Dialect/Dnn/Transforms/Passes.h.inc"
} // namespace dnnc::dnn

using namespace mlir;
using namespace dnnc::dnn;

/// Returns true for floating-point tensors.
static bool isFloatTensor(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && isa<FloatType>(tensor.getElementType());
}

/// Rewrites each softmax cross-entropy of `func` that averages over the
/// applied weights (`mean` with an ignore_index or class weights) as its
/// sum over the total of those weights, a function of the labels alone.
static void decomposeWeightedMeanLosses(func::FuncOp func) {
  SmallVector<SoftmaxCrossEntropyOp> losses;
  func.walk([&](SoftmaxCrossEntropyOp op) {
    if (op.getReduction() == LossReduction::Mean &&
        (op.getWeights() || op.getIgnoreIndex()))
      losses.push_back(op);
  });
  for (SoftmaxCrossEntropyOp op : losses) {
    OpBuilder b(op);
    ValueBuilder v(b, op.getLoc());
    Operation *first = op->getPrevNode();
    auto sum = SoftmaxCrossEntropyOp::create(
        b, op.getLoc(), op->getResultTypes(), op.getScores(), op.getLabels(),
        op.getWeights(),
        LossReductionAttr::get(b.getContext(), LossReduction::Sum),
        op.getIgnoreIndexAttr());
    Value labels = op.getLabels();
    auto labelType = cast<RankedTensorType>(labels.getType());
    auto scalar = cast<RankedTensorType>(op.getLoss().getType());
    auto perElement = labelType.clone(scalar.getElementType());
    Value weight = v.splat(perElement, 1.0);
    Value safe = labels;
    if (std::optional<int64_t> ignore = op.getIgnoreIndex()) {
      auto constant = [&](int64_t value) {
        return ConstantOp::create(
                   b, op.getLoc(),
                   DenseElementsAttr::get(
                       labelType,
                       b.getIntegerAttr(labelType.getElementType(), value)))
            .getResult();
      };
      Value ignored = v.compare<EqualOp>(labels, constant(*ignore));
      safe = v.make<SelectOp>(labelType, ignored, constant(0), labels);
      weight = v.make<SelectOp>(perElement, ignored, v.splat(perElement, 0.0),
                                weight);
    }
    if (Value weights = op.getWeights())
      weight = v.mul(weight, v.make<GatherOp>(perElement, weights, safe,
                                              b.getI64IntegerAttr(0)));
    SmallVector<int64_t> axes(labelType.getRank());
    std::iota(axes.begin(), axes.end(), 0);
    Value total = v.make<ReduceSumOp>(scalar.clone(scalar.getShape()), weight,
                                      b.getDenseI64ArrayAttr(axes),
                                      b.getBoolAttr(false));
    if (total.getType() != scalar)
      total = v.reshape(total, scalar);
    Value loss = v.div(sum.getLoss(), total);
    // The new ops keep the loss's pipeline stage.
    for (Operation *built = first ? first->getNextNode()
                                  : &op->getBlock()->front();
         built != op; built = built->getNextNode())
      for (NamedAttribute attr : op->getDiscardableAttrs())
        built->setAttr(attr.getName(), attr.getValue());
    op.getLoss().replaceAllUsesWith(loss);
    op.getLogProb().replaceAllUsesWith(sum.getLogProb());
    op.erase();
  }
}

/// Builds the loss scale `init * 2^exponent` (`exponent` a scalar f32).
static Value buildLossScale(OpBuilder &b, Location loc, Value exponent,
                            double init) {
  ValueBuilder v(b, loc);
  auto type = cast<RankedTensorType>(exponent.getType());
  return v.mul(v.splat(type, init),
               v.make<PowOp>(type, v.splat(type, 2.0), exponent));
}

namespace {
/// Builds the gradient of one function; see the pass description.
class GradientBuilder {
public:
  /// Differentiates `loss`, a value of `func`, by the arguments for which
  /// `wrt` holds, seeding the reverse pass with 1, or with the loss scale
  /// `lossScaleInit * 2^exponent` when `exponent` is given.
  GradientBuilder(func::FuncOp func, Value loss,
                  llvm::function_ref<bool(BlockArgument)> wrt,
                  Value exponent, double lossScaleInit)
      : func(func), loss(loss), wrt(wrt), exponent(exponent),
        lossScaleInit(lossScaleInit) {}

  /// Appends the gradient ops before the return and returns one gradient
  /// per differentiated argument, in order (zeros where no path reaches);
  /// fails with a diagnostic.
  FailureOr<SmallVector<Value>> run(OpBuilder &b);

private:
  /// Marks the values that depend on a float argument and lead to the loss.
  void analyzeActivity();
  /// Adds `grad` to the cotangent of `value`.
  void accumulate(OpBuilder &b, Value value, Value grad);

  func::FuncOp func;
  Value loss;
  /// Selects the arguments to differentiate by.
  llvm::function_ref<bool(BlockArgument)> wrt;
  /// The loss scale's exponent (null: the loss is not scaled).
  Value exponent;
  /// The loss scale at exponent 0.
  double lossScaleInit;

public:
  /// The loss's cotangent the reverse pass started from (after run()).
  Value seed;
  /// Values on a path from a float argument to the loss.
  llvm::DenseSet<Value> active;
  /// The cotangent of every active value reached so far.
  llvm::DenseMap<Value, Value> cotangent;
};
} // namespace

void GradientBuilder::analyzeActivity() {
  Block &body = func.getBody().front();
  // Forward: values that depend on a float argument.
  llvm::DenseSet<Value> varied;
  for (BlockArgument arg : body.getArguments())
    if (wrt(arg))
      varied.insert(arg);
  for (Operation &op : body)
    if (llvm::any_of(op.getOperands(),
                     [&](Value v) { return varied.contains(v); }))
      for (Value result : op.getResults())
        if (isFloatTensor(result.getType()))
          varied.insert(result);
  // Backward: values the loss depends on.
  llvm::DenseSet<Value> useful;
  useful.insert(loss);
  for (Operation &op : llvm::reverse(body))
    if (llvm::any_of(op.getResults(),
                     [&](Value v) { return useful.contains(v); }))
      for (Value operand : op.getOperands())
        useful.insert(operand);
  for (Value v : varied)
    if (useful.contains(v))
      active.insert(v);
}

void GradientBuilder::accumulate(OpBuilder &b, Value value, Value grad) {
  auto [it, inserted] = cotangent.try_emplace(value, grad);
  if (!inserted)
    it->second = AddOp::create(b, value.getLoc(), grad.getType(), it->second,
                               grad)
                     .getResult();
}

FailureOr<SmallVector<Value>> GradientBuilder::run(OpBuilder &b) {
  analyzeActivity();
  Block &body = func.getBody().front();
  Operation *terminator = body.getTerminator();
  b.setInsertionPoint(terminator);
  auto lossType = cast<RankedTensorType>(loss.getType());
  Operation *before = terminator->getPrevNode();
  if (exponent) {
    seed = buildLossScale(b, loss.getLoc(), exponent, lossScaleInit);
    ValueBuilder v(b, loss.getLoc());
    if (seed.getType() != lossType)
      seed = v.reshape(v.convert(seed, lossType.getElementType()), lossType);
  } else {
    auto one = DenseElementsAttr::get(
        lossType, b.getFloatAttr(lossType.getElementType(), 1.0));
    seed = ConstantOp::create(b, loss.getLoc(), one);
  }
  if (Operation *def = loss.getDefiningOp())
    if (Attribute stage = def->getAttr(kStageAttrName))
      for (Operation *built = before ? before->getNextNode() : &body.front();
           built != terminator; built = built->getNextNode()) {
        built->setAttr(kStageAttrName, stage);
        built->setAttr(kBackwardAttrName, b.getUnitAttr());
      }
  cotangent[loss] = seed;
  // The forward ops in reverse order (the gradient ops are appended after
  // them, before the return, so the walk stops at the terminator).
  SmallVector<Operation *> forward;
  for (Operation &op : body.without_terminator())
    forward.push_back(&op);
  for (Operation *op : llvm::reverse(forward)) {
    SmallVector<Value> resultGrads;
    bool any = false;
    for (Value result : op->getResults()) {
      Value grad = active.contains(result) ? cotangent.lookup(result)
                                           : Value();
      resultGrads.push_back(grad);
      any |= bool(grad);
    }
    if (!any)
      continue;
    auto rule = dyn_cast<DnnGradientOpInterface>(op);
    if (!rule)
      return op->emitError() << "dnn-autodiff: '" << op->getName()
                             << "' has no gradient rule, and it is on a path "
                                "from a differentiated value to the loss";
    SmallVector<Value> operandGrads;
    Operation *last = terminator->getPrevNode();
    if (failed(rule.buildGradients(b, resultGrads, operandGrads)))
      return op->emitError()
             << "dnn-autodiff: cannot differentiate '" << op->getName() << "'";
    for (auto [operand, grad] : llvm::zip(op->getOperands(), operandGrads))
      if (grad && active.contains(operand))
        accumulate(b, operand, grad);
    // The ops the rule and the sums built run in the backward of the
    // forward op's pipeline stage, if it has one.
    if (Attribute stage = op->getAttr(kStageAttrName))
      for (Operation *built = last->getNextNode(); built != terminator;
           built = built->getNextNode()) {
        built->setAttr(kStageAttrName, stage);
        built->setAttr(kBackwardAttrName, b.getUnitAttr());
      }
  }
  SmallVector<Value> grads;
  for (BlockArgument arg : body.getArguments()) {
    if (!wrt(arg))
      continue;
    Value grad = cotangent.lookup(arg);
    if (!grad) {
      auto type = cast<RankedTensorType>(arg.getType());
      grad = ConstantOp::create(
          b, arg.getLoc(),
          DenseElementsAttr::get(type,
                                 b.getFloatAttr(type.getElementType(), 0.0)));
    }
    grads.push_back(grad);
  }
  return grads;
}

namespace {
/// Rewrites @main to return its loss and gradients.
class AutodiffPass
    : public dnnc::dnn::impl::AutodiffPassBase<AutodiffPass> {
public:
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    func::FuncOp main = lookupMain(module, "dnn-autodiff");
    if (!main)
      return signalPassFailure();
    decomposeWeightedMeanLosses(main);
    FailureOr<unsigned> lossIndex = findLoss(main);
    if (failed(lossIndex))
      return signalPassFailure();
    Operation *terminator = main.getBody().front().getTerminator();
    Value lossValue = terminator->getOperand(*lossIndex);
    OpBuilder b(terminator);
    auto wrt = [&](BlockArgument arg) {
      return isFloatTensor(arg.getType()) &&
             !main.getArgAttr(arg.getArgNumber(), kLossScaleAttrName) &&
             (!parametersOnly ||
              main.getArgAttr(arg.getArgNumber(), kTrainableAttrName));
    };
    // The loss scale's exponent: a state starting at 0.
    Value exponent;
    if (lossScale != 0.0) {
      if (!(lossScale > 0.0 && std::isfinite(lossScale))) {
        main.emitError() << "dnn-autodiff: loss-scale=" << lossScale
                         << ": expected a finite number > 0";
        return signalPassFailure();
      }
      auto scalar = RankedTensorType::get({}, b.getF32Type());
      unsigned index = main.getNumArguments();
      if (failed(main.insertArgument(
              index, scalar,
              b.getDictionaryAttr(
                  {b.getNamedAttr(kNameAttrName,
                                  b.getStringAttr("loss_scale_exponent")),
                   b.getNamedAttr(kWeightAttrName, b.getZeroAttr(scalar)),
                   b.getNamedAttr(kStateAttrName, b.getUnitAttr()),
                   b.getNamedAttr(kLossScaleAttrName,
                                  b.getF64FloatAttr(lossScale))}),
              main.getLoc())))
        return signalPassFailure();
      exponent = main.getArgument(index);
    }
    // The ops built from here on are the gradient's.
    Operation *lastForward = terminator->getPrevNode();
    GradientBuilder builder(main, lossValue, wrt, exponent, lossScale);
    FailureOr<SmallVector<Value>> grads = builder.run(b);
    if (failed(grads))
      return signalPassFailure();
    // A program stored in bf16 or f16 (dnn-convert-precision): gradient
    // ops that reduce compute in f32, as the forward ones do.
    if (auto precision =
            module->getAttrOfType<PrecisionAttr>(kPrecisionAttrName))
      if (FloatType reduced = getReducedFloatType(&getContext(),
                                                  precision.getValue())) {
        SmallVector<Operation *> built;
        for (Operation *op = lastForward ? lastForward->getNextNode()
                                         : &main.getBody().front().front();
             op != terminator; op = op->getNextNode())
          built.push_back(op);
        computeInF32(built, reduced);
      }

    // The new signature: the loss, then one gradient per float argument.
    StringAttr lossName = main.getResultAttrOfType<StringAttr>(
        *lossIndex, kNameAttrName);
    SmallVector<Value> results = {lossValue};
    SmallVector<DictionaryAttr> resultAttrs = {
        b.getDictionaryAttr(b.getNamedAttr(
            kNameAttrName,
            lossName ? lossName : b.getStringAttr("loss")))};
    if (exponent) {
      // The scale the gradients carry (computed once, in the backward of
      // the loss's stage).
      results.push_back(builder.seed);
      resultAttrs.push_back(b.getDictionaryAttr(
          {b.getNamedAttr(kNameAttrName, b.getStringAttr("loss_scale")),
           b.getNamedAttr(kLossScaleAttrName,
                          b.getF64FloatAttr(lossScale))}));
    }
    // The buffers' new values, as they were.
    appendUpdateResults(main, results, resultAttrs);
    unsigned g = 0;
    for (BlockArgument arg : main.getArguments()) {
      if (!wrt(arg))
        continue;
      auto name = main.getArgAttrOfType<StringAttr>(arg.getArgNumber(),
                                                    kNameAttrName);
      std::string argName = name ? name.str()
                                 : "arg" + std::to_string(arg.getArgNumber());
      results.push_back((*grads)[g++]);
      resultAttrs.push_back(b.getDictionaryAttr(
          {b.getNamedAttr(kNameAttrName, b.getStringAttr(argName + "_grad")),
           b.getNamedAttr(kGradientOfAttrName,
                          b.getI64IntegerAttr(arg.getArgNumber()))}));
    }
    b.setInsertionPoint(terminator);
    func::ReturnOp::create(b, terminator->getLoc(), results);
    terminator->erase();
    main.setFunctionType(b.getFunctionType(
        main.getArgumentTypes(), ValueRange(results).getTypes()));
    main.setAllResultAttrs(resultAttrs);
  }

private:
  /// The index of the loss among @main's results; fails with an error.
  FailureOr<unsigned> findLoss(func::FuncOp main) {
    // (The buffers' new values are not candidates.)
    SmallVector<unsigned> outputs;
    for (unsigned i = 0, e = main.getNumResults(); i < e; ++i)
      if (!main.getResultAttr(i, kUpdatesAttrName))
        outputs.push_back(i);
    unsigned index = 0;
    if (loss.empty()) {
      if (outputs.size() != 1) {
        main.emitError() << "dnn-autodiff: @main has " << outputs.size()
                         << " results; name the loss among them";
        return failure();
      }
      index = outputs.front();
    } else {
      bool found = false;
      for (unsigned i : outputs)
        if (auto name = main.getResultAttrOfType<StringAttr>(i, kNameAttrName);
            name && name.getValue() == loss) {
          index = i;
          found = true;
        }
      if (!found) {
        main.emitError() << "dnn-autodiff: the loss '" << loss
                         << "' is not an output of the graph";
        return failure();
      }
    }
    auto type = dyn_cast<RankedTensorType>(main.getResultTypes()[index]);
    if (!type || !isa<FloatType>(type.getElementType()) ||
        type.getNumElements() != 1) {
      std::string text;
      llvm::raw_string_ostream os(text);
      os << main.getResultTypes()[index];
      main.emitError() << "dnn-autodiff: the loss must be a floating-point "
                          "tensor of one element, not "
                       << text
                       << " (dnnc: name the loss output with "
                          "--loss-output=NAME, or add a loss with "
                          "--loss=KIND:OUTPUT,TARGET)";
      return failure();
    }
    return index;
  }
};
} // namespace
