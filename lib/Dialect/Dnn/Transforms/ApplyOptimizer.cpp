//===- ApplyOptimizer.cpp - one training step of @main --------*- C++ -*-===//
//
// Part of the dnnc project.
//
//===----------------------------------------------------------------------===//
//
// Implements dnn-apply-optimizer: the gradient program dnn-autodiff builds
// becomes one optimizer step (SGD or AdamW, with gradient clipping and a
// learning-rate schedule), written in dnn ops so that it is sharded,
// partitioned and fused like the rest of the program.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Dialect/Dnn/IR/ValueBuilder.h"
#include "dnnc/Dialect/Dnn/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace dnnc::dnn {
#define GEN_PASS_DEF_APPLYOPTIMIZERPASS
#include "dnnc/Dialect/Dnn/Transforms/Passes.h.inc"
} // namespace dnnc::dnn

using namespace mlir;
using namespace dnnc::dnn;

/// `value` as the shortest decimal that reads back the same.
static std::string formatNumber(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.17g", value);
  for (int digits = 1; digits < 17; ++digits) {
    char shorter[32];
    std::snprintf(shorter, sizeof(shorter), "%.*g", digits, value);
    if (std::strtod(shorter, nullptr) == value)
      return shorter;
  }
  return text;
}

std::string dnnc::dnn::checkOptimizerOptions(
    const ApplyOptimizerPassOptions &o) {
  auto expected = [](StringRef name, const std::string &value,
                     StringRef what) {
    return (name + "=" + value + ": expected " + what).str();
  };
  if (o.optimizer != "sgd" && o.optimizer != "adamw")
    return expected("optimizer", o.optimizer, "sgd or adamw");
  if (o.schedule != "constant" && o.schedule != "cosine")
    return expected("lr-schedule", o.schedule, "constant or cosine");
  std::pair<StringRef, double> rates[] = {{"lr", o.lr},
                                          {"momentum", o.momentum},
                                          {"weight-decay", o.weightDecay},
                                          {"eps", o.eps},
                                          {"clip-grad-norm", o.clipGradNorm}};
  for (auto [name, value] : rates)
    if (!(value >= 0.0 && std::isfinite(value)))
      return expected(name, formatNumber(value), "a finite number >= 0");
  if (!(o.beta1 >= 0.0 && o.beta1 < 1.0 && o.beta2 >= 0.0 && o.beta2 < 1.0))
    return expected("betas",
                    formatNumber(o.beta1) + "," + formatNumber(o.beta2),
                    "two numbers in [0, 1)");
  if (o.nesterov && (o.optimizer != "sgd" || o.momentum == 0.0))
    return "nesterov: needs optimizer=sgd and a momentum > 0";
  if (o.warmupSteps < 0)
    return expected("warmup-steps", std::to_string(o.warmupSteps),
                    "a count >= 0");
  if (o.totalSteps < 0)
    return expected("total-steps", std::to_string(o.totalSteps),
                    "a count >= 0");
  if (o.schedule == "cosine" && o.totalSteps <= o.warmupSteps)
    return "lr-schedule=cosine: needs total-steps greater than "
           "warmup-steps";
  return "";
}

namespace {
/// A parameter and what the step computes for it.
struct Parameter {
  /// The parameter's argument number.
  unsigned arg;
  /// Its gradient.
  Value grad;
  /// Its optimizer states' argument numbers.
  SmallVector<unsigned> states;
  /// Its new value.
  Value updated;
  /// Its states' new values (same order as `states`).
  SmallVector<Value> updatedStates;
};

/// Builds the step; see the pass description.
class StepBuilder {
public:
  /// Builds with `v` for the step number `step` under `o`.
  StepBuilder(ValueBuilder &v, Value step, ApplyOptimizerPassOptions o)
      : v(v), o(std::move(o)) {
    f64 = RankedTensorType::get({}, v.b.getF64Type());
    t = tUpdates = v.convert(step, v.b.getF64Type());
  }

  /// Counts AdamW's bias corrections by `updates` (a scalar f32, the
  /// updates made so far, this one included) instead of the step number:
  /// steps skipped by loss scaling do not count, as in PyTorch.
  void setUpdateCount(Value updates) {
    tUpdates = v.convert(updates, v.b.getF64Type());
  }

  /// A float64 scalar constant.
  Value scalar(double value) { return v.splat(f64, value); }

  /// The learning rate of the step (float64 scalar).
  Value learningRate() {
    // s = t - 1, the 0-based step.
    Value s = v.sub(t, scalar(1.0));
    Value factor = scalar(1.0);
    double warmup = double(o.warmupSteps);
    if (o.schedule == "cosine") {
      double span = std::max(1.0, double(o.totalSteps) - warmup);
      Value progress = v.make<MinOp>(
          f64, v.div(v.sub(s, scalar(warmup)), scalar(span)), scalar(1.0));
      progress = v.make<MaxOp>(f64, progress, scalar(0.0));
      Value cosine = v.make<CosOp>(f64, v.scale(progress, M_PI));
      factor = v.scale(v.add(scalar(1.0), cosine), 0.5);
    }
    if (o.warmupSteps > 0) {
      Value ramp = v.div(v.add(s, scalar(1.0)), scalar(warmup));
      Value warming = v.compare<LessOp>(s, scalar(warmup));
      factor = v.make<SelectOp>(f64, warming, ramp, factor);
    }
    return v.scale(factor, o.lr);
  }

  /// `x` (a float64 scalar) as a tensor of `type`.
  Value spread(Value x, Type type) {
    auto tensor = cast<RankedTensorType>(type);
    Value narrow = v.convert(x, tensor.getElementType());
    return v.make<BroadcastInDimOp>(type, narrow,
                                    v.b.getDenseI64ArrayAttr({}));
  }

  /// Scales every gradient so that their joint 2-norm is at most
  /// `clip-grad-norm`.
  void clip(MutableArrayRef<Parameter> params) {
    Value total;
    for (Parameter &p : params) {
      auto type = cast<RankedTensorType>(p.grad.getType());
      SmallVector<int64_t> axes;
      for (int64_t d = 0; d < type.getRank(); ++d)
        axes.push_back(d);
      auto scalarType = RankedTensorType::get({}, type.getElementType());
      Value squares = v.make<ReduceSumOp>(
          scalarType, v.mul(p.grad, p.grad), v.b.getDenseI64ArrayAttr(axes),
          v.b.getBoolAttr(false));
      if (total && total.getType() != scalarType)
        squares = v.convert(squares, getElementTypeOrSelf(total));
      total = total ? v.add(total, squares) : squares;
    }
    if (!total)
      return;
    Type type = total.getType();
    Value norm = v.make<SqrtOp>(type, total);
    Value coef = v.div(v.splat(type, o.clipGradNorm),
                       v.add(norm, v.splat(type, 1e-6)));
    coef = v.make<MinOp>(type, coef, v.splat(type, 1.0));
    for (Parameter &p : params) {
      Value c = v.convert(coef, getElementTypeOrSelf(p.grad));
      p.grad = v.mul(p.grad, v.make<BroadcastInDimOp>(
                                 p.grad.getType(), c,
                                 v.b.getDenseI64ArrayAttr({})));
    }
  }

  /// torch.optim.AdamW's update of `p` (states: exp_avg, exp_avg_sq).
  void adamw(Parameter &p, Value param, Value lr,
             ArrayRef<Value> stateArgs) {
    Type type = param.getType();
    Value m = stateArgs[0], sq = stateArgs[1], g = p.grad;
    if (o.weightDecay != 0.0)
      param = v.mul(param, spread(v.sub(scalar(1.0),
                                        v.scale(lr, o.weightDecay)),
                                  type));
    // exp_avg.lerp_(grad, 1 - beta1)
    Value m1 = v.add(m, v.mul(v.splat(type, 1.0 - o.beta1), v.sub(g, m)));
    // exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
    Value sq1 = v.add(v.mul(sq, v.splat(type, o.beta2)),
                      v.mul(v.mul(v.splat(type, 1.0 - o.beta2), g), g));
    Value bc1 =
        v.sub(scalar(1.0), v.make<PowOp>(f64, scalar(o.beta1), tUpdates));
    Value bc2 =
        v.sub(scalar(1.0), v.make<PowOp>(f64, scalar(o.beta2), tUpdates));
    Value stepSize = v.div(lr, bc1);
    Value bc2Sqrt = v.make<SqrtOp>(f64, bc2);
    // denom = (exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(eps)
    Value denom = v.add(v.div(v.make<SqrtOp>(type, sq1), spread(bc2Sqrt, type)),
                        v.splat(type, o.eps));
    // param.addcdiv_(exp_avg, denom, value=-step_size)
    p.updated = v.add(param, v.mul(spread(v.neg(stepSize), type),
                                   v.div(m1, denom)));
    p.updatedStates = {m1, sq1};
  }

  /// torch.optim.SGD's update of `p` (state: momentum_buffer, if any).
  void sgd(Parameter &p, Value param, Value lr, ArrayRef<Value> stateArgs) {
    Type type = param.getType();
    Value g = p.grad;
    if (o.weightDecay != 0.0)
      g = v.add(g, v.mul(v.splat(type, o.weightDecay), param));
    if (!stateArgs.empty()) {
      // buf.mul_(momentum).add_(grad): the buffer starts at zero, so the
      // first step gives `grad`, as PyTorch's clone does.
      Value buf = v.add(v.mul(stateArgs[0], v.splat(type, o.momentum)), g);
      p.updatedStates = {buf};
      g = o.nesterov ? v.add(g, v.mul(v.splat(type, o.momentum), buf)) : buf;
    }
    p.updated = v.add(param, v.mul(spread(v.neg(lr), type), g));
  }

private:
  /// Builds the ops.
  ValueBuilder &v;
  /// The optimizer's configuration.
  ApplyOptimizerPassOptions o;
  /// tensor<f64>.
  RankedTensorType f64;
  /// The step number as a float64 scalar.
  Value t;
  /// The number of updates made, this one included (float64 scalar): `t`
  /// unless loss scaling skipped steps.
  Value tUpdates;
};

/// Returns true if `value` is a constant zero splat: the gradient
/// dnn-autodiff gives an argument the loss does not depend on.
static bool isZeroConstant(Value value) {
  DenseElementsAttr attr;
  return matchPattern(value, m_Constant(&attr)) && attr.isSplat() &&
         isa<FloatType>(attr.getElementType()) &&
         attr.getSplatValue<APFloat>().isZero();
}

/// Appends a scalar f32 state argument named `name` (zero at the start) to
/// `main`; returns its number.
static FailureOr<unsigned> addScalarState(func::FuncOp main, StringRef name) {
  OpBuilder b(main.getContext());
  auto scalar = RankedTensorType::get({}, b.getF32Type());
  unsigned index = main.getNumArguments();
  if (failed(main.insertArgument(
          index, scalar,
          b.getDictionaryAttr(
              {b.getNamedAttr(kNameAttrName, b.getStringAttr(name)),
               b.getNamedAttr(kWeightAttrName, b.getZeroAttr(scalar)),
               b.getNamedAttr(kStateAttrName, b.getUnitAttr())}),
          main.getLoc())))
    return failure();
  return index;
}

/// Rewrites @main into a training step.
class ApplyOptimizerPass
    : public dnnc::dnn::impl::ApplyOptimizerPassBase<ApplyOptimizerPass> {
public:
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    func::FuncOp main = lookupMain(module, "dnn-apply-optimizer");
    if (!main)
      return signalPassFailure();
    if (failed(checkOptions(main)))
      return signalPassFailure();
    Operation *terminator = main.getBody().front().getTerminator();
    // The loss, the loss scale, and the parameters with a gradient.
    Value loss, lossScaleValue;
    DictionaryAttr lossAttrs;
    SmallVector<Parameter> params;
    // The buffers' new values (a batch norm's running statistics): updated
    // by the forward, skipped steps included (as in PyTorch).
    SmallVector<std::pair<Value, unsigned>> bufferUpdates;
    for (unsigned i = 0, e = main.getNumResults(); i < e; ++i) {
      auto of = main.getResultAttrOfType<IntegerAttr>(i, kGradientOfAttrName);
      Value value = terminator->getOperand(i);
      if (auto target =
              main.getResultAttrOfType<IntegerAttr>(i, kUpdatesAttrName)) {
        bufferUpdates.push_back({value, unsigned(target.getInt())});
        continue;
      }
      if (main.getResultAttr(i, kLossScaleAttrName)) {
        lossScaleValue = value;
        continue;
      }
      if (!of) {
        if (loss) {
          main.emitError("dnn-apply-optimizer: @main returns more than "
                         "one result that is not a gradient");
          return signalPassFailure();
        }
        loss = value;
        lossAttrs = main.getResultAttrDict(i);
        continue;
      }
      // PyTorch's optimizers skip parameters without a gradient.
      if (!isZeroConstant(value))
        params.push_back({unsigned(of.getInt()), value, {}, {}, {}});
    }
    if (!loss) {
      main.emitError("dnn-apply-optimizer: @main returns no loss");
      return signalPassFailure();
    }

    // The new arguments: the states, then the step.
    OpBuilder b(module.getContext());
    SmallVector<StringRef> stateNames;
    if (optimizer == "adamw")
      stateNames = {"exp_avg", "exp_avg_sq"};
    else if (momentum != 0.0)
      stateNames = {"momentum_buffer"};
    for (Parameter &p : params) {
      auto type = cast<RankedTensorType>(main.getArgument(p.arg).getType());
      auto name = main.getArgAttrOfType<StringAttr>(p.arg, kNameAttrName);
      for (StringRef state : stateNames) {
        std::string stateName =
            (name ? name.getValue() : StringRef("arg")).str() + "." +
            state.str();
        Attribute zero = b.getZeroAttr(type);
        unsigned index = main.getNumArguments();
        if (failed(main.insertArgument(
                index, type,
                b.getDictionaryAttr(
                    {b.getNamedAttr(kNameAttrName,
                                    b.getStringAttr(stateName)),
                     b.getNamedAttr(kWeightAttrName, zero),
                     b.getNamedAttr(kStateAttrName, b.getUnitAttr())}),
                main.getArgument(p.arg).getLoc())))
          return signalPassFailure();
        p.states.push_back(index);
      }
    }
    unsigned stepIndex = main.getNumArguments();
    if (failed(main.insertArgument(
            stepIndex, RankedTensorType::get({}, b.getF32Type()),
            b.getDictionaryAttr(
                {b.getNamedAttr(kNameAttrName, b.getStringAttr("step")),
                 b.getNamedAttr(kStepAttrName, b.getUnitAttr())}),
            main.getLoc())))
      return signalPassFailure();

    // Dynamic loss scaling (dnn-autodiff{loss-scale}): its states.
    std::optional<unsigned> exponentIndex, trackerIndex, updatesIndex;
    for (unsigned i = 0, e = main.getNumArguments(); i < e; ++i)
      if (main.getArgAttr(i, kLossScaleAttrName))
        exponentIndex = i;
    if (exponentIndex.has_value() != bool(lossScaleValue)) {
      main.emitError("dnn-apply-optimizer: a loss scale needs both the "
                     "dnn.loss_scale argument and result of "
                     "dnn-autodiff{loss-scale}");
      return signalPassFailure();
    }
    if (exponentIndex) {
      FailureOr<unsigned> tracker =
          addScalarState(main, "loss_scale_growth_tracker");
      if (failed(tracker))
        return signalPassFailure();
      trackerIndex = *tracker;
      if (optimizer == "adamw") {
        FailureOr<unsigned> updates = addScalarState(main, "optimizer_steps");
        if (failed(updates))
          return signalPassFailure();
        updatesIndex = *updates;
      }
    }

    // The update.
    b.setInsertionPoint(terminator);
    ValueBuilder v(b, NameLoc::get(b.getStringAttr("optimizer"),
                                   main.getLoc()));
    StepBuilder step(v, main.getArgument(stepIndex), getOptions());
    LossScaling scaling;
    if (exponentIndex) {
      scaling = unscale(v, lossScaleValue, params);
      if (updatesIndex) {
        Value count = main.getArgument(*updatesIndex);
        step.setUpdateCount(v.add(count, v.splat(count, 1.0)));
      }
    }
    if (clipGradNorm > 0.0)
      step.clip(params);
    Value lr = step.learningRate();
    for (Parameter &p : params) {
      SmallVector<Value> states;
      for (unsigned s : p.states)
        states.push_back(main.getArgument(s));
      if (optimizer == "adamw")
        step.adamw(p, main.getArgument(p.arg), lr, states);
      else
        step.sgd(p, main.getArgument(p.arg), lr, states);
    }
    // A step whose gradients are not all finite changes nothing but the
    // loss scale.
    SmallVector<std::pair<Value, unsigned>> scalingUpdates;
    if (exponentIndex) {
      auto keep = [&](Value updated, Value old) {
        auto type = cast<RankedTensorType>(old.getType());
        Value condition =
            type.getRank() == 0
                ? scaling.overflow
                : v.make<BroadcastInDimOp>(type.clone(b.getI1Type()),
                                           scaling.overflow,
                                           b.getDenseI64ArrayAttr({}));
        return v.make<SelectOp>(old.getType(), condition, old, updated);
      };
      for (Parameter &p : params) {
        p.updated = keep(p.updated, main.getArgument(p.arg));
        for (auto [value, arg] : llvm::zip_equal(p.updatedStates, p.states))
          value = keep(value, main.getArgument(arg));
      }
      Value exponent = main.getArgument(*exponentIndex);
      Value tracker = main.getArgument(*trackerIndex);
      Value one = v.splat(tracker, 1.0), zero = v.splat(tracker, 0.0);
      // torch.amp.GradScaler.update: halve the scale on an overflow; double
      // it after `growth-interval` steps in a row without one.
      Value good = v.add(tracker, one);
      Value grow = v.compare<GreaterEqualOp>(
          good, v.splat(tracker, double(lossScaleGrowthInterval)));
      Value newExponent = v.make<SelectOp>(
          exponent.getType(), scaling.overflow, v.sub(exponent, one),
          v.make<SelectOp>(exponent.getType(), grow, v.add(exponent, one),
                           exponent));
      Value newTracker = v.make<SelectOp>(
          tracker.getType(), scaling.overflow, zero,
          v.make<SelectOp>(tracker.getType(), grow, zero, good));
      scalingUpdates = {{newExponent, *exponentIndex},
                        {newTracker, *trackerIndex}};
      if (updatesIndex) {
        Value count = main.getArgument(*updatesIndex);
        scalingUpdates.push_back(
            {keep(v.add(count, v.splat(count, 1.0)), count), *updatesIndex});
      }
    }

    // The new results: the loss (and the loss scale of the step, and
    // whether it was skipped), the parameters, the states.
    SmallVector<Value> results = {loss};
    SmallVector<DictionaryAttr> attrs = {lossAttrs};
    if (exponentIndex) {
      Value skipped = v.make<SelectOp>(scaling.scale.getType(),
                                       scaling.overflow,
                                       v.splat(scaling.scale, 1.0),
                                       v.splat(scaling.scale, 0.0));
      results.append({scaling.scale, skipped});
      attrs.push_back(b.getDictionaryAttr(
          b.getNamedAttr(kNameAttrName, b.getStringAttr("loss_scale"))));
      attrs.push_back(b.getDictionaryAttr(b.getNamedAttr(
          kNameAttrName, b.getStringAttr("skipped_step"))));
    }
    auto addUpdate = [&](Value value, unsigned arg) {
      results.push_back(value);
      auto name = main.getArgAttrOfType<StringAttr>(arg, kNameAttrName);
      SmallVector<NamedAttribute> list = {
          b.getNamedAttr(kUpdatesAttrName, b.getI64IntegerAttr(arg))};
      if (name)
        list.push_back(b.getNamedAttr(kNameAttrName, name));
      attrs.push_back(b.getDictionaryAttr(list));
    };
    for (Parameter &p : params)
      addUpdate(p.updated, p.arg);
    for (auto [value, arg] : bufferUpdates)
      addUpdate(value, arg);
    for (Parameter &p : params)
      for (auto [value, arg] : llvm::zip_equal(p.updatedStates, p.states))
        addUpdate(value, arg);
    for (auto [value, arg] : scalingUpdates)
      addUpdate(value, arg);
    func::ReturnOp::create(b, terminator->getLoc(), results);
    terminator->erase();
    main.setFunctionType(b.getFunctionType(main.getArgumentTypes(),
                                           ValueRange(results).getTypes()));
    main.setAllResultAttrs(attrs);
  }

private:
  /// What unscaling found.
  struct LossScaling {
    /// The loss scale of the step (a scalar f32).
    Value scale;
    /// True when a gradient holds an infinity or a NaN (a scalar i1).
    Value overflow;
  };

  /// Divides every gradient by the loss scale `scale` and checks that they
  /// are finite (torch.amp.GradScaler.unscale_).
  LossScaling unscale(ValueBuilder &v, Value scale,
                      MutableArrayRef<Parameter> params) {
    Value inverse = v.div(v.splat(scale, 1.0), scale);
    // x * 0 is NaN exactly when x is not finite: the sum of those products
    // over every gradient is NaN when one is.
    Value check;
    for (Parameter &p : params) {
      auto type = cast<RankedTensorType>(p.grad.getType());
      Value factor = v.make<BroadcastInDimOp>(
          type, v.convert(inverse, type.getElementType()),
          v.b.getDenseI64ArrayAttr({}));
      p.grad = v.mul(p.grad, factor);
      SmallVector<int64_t> axes;
      for (int64_t d = 0; d < type.getRank(); ++d)
        axes.push_back(d);
      Value zeros = v.make<ReduceSumOp>(
          RankedTensorType::get({}, type.getElementType()),
          v.mul(p.grad, v.splat(type, 0.0)), v.b.getDenseI64ArrayAttr(axes),
          v.b.getBoolAttr(false));
      zeros = v.convert(zeros, getElementTypeOrSelf(scale));
      check = check ? v.add(check, zeros) : zeros;
    }
    Value overflow = check ? v.make<IsNaNOp>(
                                 cast<RankedTensorType>(check.getType())
                                     .clone(v.b.getI1Type()),
                                 check)
                           : v.compare<LessOp>(scale, v.splat(scale, 0.0));
    return {scale, overflow};
  }

  /// The pass's options as one struct.
  ApplyOptimizerPassOptions getOptions() const {
    ApplyOptimizerPassOptions o;
    o.optimizer = optimizer;
    o.lr = lr;
    o.momentum = momentum;
    o.nesterov = nesterov;
    o.weightDecay = weightDecay;
    o.beta1 = beta1;
    o.beta2 = beta2;
    o.eps = eps;
    o.clipGradNorm = clipGradNorm;
    o.schedule = schedule;
    o.warmupSteps = warmupSteps;
    o.totalSteps = totalSteps;
    return o;
  }

  /// Checks the options; fails with an error on @main.
  LogicalResult checkOptions(func::FuncOp main) {
    std::string problem = checkOptimizerOptions(getOptions());
    if (problem.empty())
      return success();
    return main.emitError("dnn-apply-optimizer: " + problem);
  }
};
} // namespace
