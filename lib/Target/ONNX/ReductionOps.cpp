//===- ReductionOps.cpp - ONNX reductions and normalisations ----*- C++ -*-===//
//
// The op family of reductions along axes: Softmax, LogSoftmax, the
// normalisations (Layer, Batch, Instance, RMS, MeanVariance, LRN), Reduce*,
// the losses, and, composed of reductions, ArgMax, ArgMin, Hardmax, TopK and
// CumSum.
//
//===----------------------------------------------------------------------===//

#include "OpHandlers.h"

#include "llvm/ADT/StringSwitch.h"

using namespace mlir;
using namespace dnnc;
using namespace dnnc::onnx_import;
namespace dnn = dnnc::dnn;

template <typename OpT>
LogicalResult dnnc::onnx_import::importSoftmax(NodeImporter &n) {
  if (failed(n.checkArity(1, 1, 1)))
    return failure();
  Value x = n.input(0);
  int64_t rank = rankOf(x);
  auto axisAttr = n.getInt("axis", n.opset >= 13 ? -1 : 1);
  if (failed(axisAttr))
    return failure();
  auto axis = normAxis(n, *axisAttr, std::max<int64_t>(rank, 1));
  if (failed(axis))
    return failure();
  if (n.opset >= 13) {
    auto r = n.build<OpT>(x.getType(), x, n.b.getI64IntegerAttr(*axis));
    if (failed(r))
      return failure();
    n.setOutput(0, *r);
    return success();
  }
  // Before opset 13 the input is coerced to 2-D around `axis`.
  ArrayRef<int64_t> shape = shapeOf(x);
  SmallVector<int64_t> flat = {product(shape.take_front(*axis)),
                               product(shape.drop_front(*axis))};
  auto f = n.reshape(x, flat);
  if (failed(f))
    return failure();
  auto r = n.build<OpT>(f->getType(), *f, n.b.getI64IntegerAttr(1));
  if (failed(r))
    return failure();
  return n.setResult(n.reshape(*r, shape));
}

LogicalResult dnnc::onnx_import::importLayerNorm(NodeImporter &n) {
  if (failed(n.checkArity(2, 3, 3)))
    return failure();
  Value x = n.input(0);
  auto axisAttr = n.getInt("axis", -1);
  auto eps = n.getFloat("epsilon", 1e-5f);
  auto stash = n.getInt("stash_type", 1);
  if (failed(axisAttr) || failed(eps) || failed(stash))
    return failure();
  auto axis = normAxis(n, *axisAttr, rankOf(x));
  if (failed(axis))
    return failure();
  ArrayRef<int64_t> norm = shapeOf(x).drop_front(*axis);
  auto scale = n.broadcastTo(n.input(1), norm);
  if (failed(scale))
    return failure();
  Value bias;
  if (n.hasInput(2)) {
    auto bb = n.broadcastTo(n.input(2), norm);
    if (failed(bb))
      return failure();
    bias = *bb;
  }
  auto results = n.buildOp<dnn::LayerNormOp>({}, x, *scale, bias,
                                             n.b.getI64IntegerAttr(*axis),
                                             n.b.getF32FloatAttr(*eps));
  if (failed(results))
    return failure();
  for (int i = 0; i < 3; ++i)
    n.setOutput(i, (*results)[i]);
  return success();
}

LogicalResult dnnc::onnx_import::importBatchNorm(NodeImporter &n) {
  if (failed(n.checkArity(5, 5, 3)))
    return failure();
  Value x = n.input(0), scale = n.input(1), bias = n.input(2),
        mean = n.input(3), var = n.input(4);
  if (rankOf(x) < 2)
    return n.fail("input must be [N, C, ...]");
  auto eps = n.getFloat("epsilon", 1e-5f);
  auto momentum = n.getFloat("momentum", 0.9f);
  auto trainingMode = n.getInt("training_mode", 0);
  if (failed(eps) || failed(momentum) || failed(trainingMode))
    return failure();
  // Before opset 9: `spatial` (statistics per channel when 1, the only
  // form dnnc takes) and, before 7, `is_test`.
  if (n.opset < 9) {
    auto spatial = n.getInt("spatial", 1);
    auto isTest = n.getInt("is_test", 0);
    if (failed(spatial) || failed(isTest))
      return failure();
    if (*spatial != 1)
      return n.fail("attribute 'spatial' must be 1 (per-channel statistics)");
    if (n.opset < 7 && *isTest == 0)
      return n.fail("training mode (is_test = 0) is supported from opset 14 "
                    "(training_mode = 1)");
  }
  bool training = n.opset >= 14 && *trainingMode != 0;
  if (!training && (n.wantsOutput(1) || n.wantsOutput(2)))
    return n.fail("running mean/var outputs need training_mode = 1");
  auto vecType = cast<RankedTensorType>(scale.getType());
  // Training: y = (x - mean) * k + bias, from the centered input already
  // computed for the variance (x * k - mean * k would cancel when the mean
  // is large against the spread).
  Value centeredX;
  if (training) {
    SmallVector<int64_t> axes = {0};
    for (int64_t i = 2; i < rankOf(x); ++i)
      axes.push_back(i);
    auto m = n.build<dnn::ReduceMeanOp>({}, x, n.b.getDenseI64ArrayAttr(axes),
                                        n.b.getBoolAttr(false));
    if (failed(m))
      return failure();
    auto mb = perChannel(n, *m, x);
    if (failed(mb))
      return failure();
    auto centered = n.build<dnn::SubOp>(x.getType(), x, *mb);
    if (failed(centered))
      return failure();
    auto sq = n.build<dnn::MulOp>(x.getType(), *centered, *centered);
    if (failed(sq))
      return failure();
    auto v = n.build<dnn::ReduceMeanOp>({}, *sq, n.b.getDenseI64ArrayAttr(axes),
                                        n.b.getBoolAttr(false));
    if (failed(v))
      return failure();
    // Running statistics: input * momentum + batch * (1 - momentum).
    auto running = [&](Value old, Value batch) -> FailureOr<Value> {
      auto a =
          n.build<dnn::MulOp>(vecType, old, n.splatFloat(vecType, *momentum));
      auto c = n.build<dnn::MulOp>(vecType, batch,
                                   n.splatFloat(vecType, 1.0 - *momentum));
      if (failed(a) || failed(c))
        return failure();
      return n.build<dnn::AddOp>(vecType, *a, *c);
    };
    // (Computed for a training step too, which updates the initializers
    // they come from, ONNX's outputs or not.)
    for (auto [i, old, batch] :
         {std::make_tuple(1, mean, *m), std::make_tuple(2, var, *v)}) {
      if (!n.wantsOutput(i) && !n.updateInitializer)
        continue;
      auto updated = running(old, batch);
      if (failed(updated) || failed(n.updateInput(2 + i, *updated)))
        return failure();
      n.setOutput(i, *updated);
    }
    mean = *m;
    var = *v;
    centeredX = *centered;
  }
  // k = scale / sqrt(var + eps); y = input * k + offset, where input and
  // offset are x and bias - mean * k (inference: per-channel constants
  // folded), or the centered x and bias (training).
  auto ve = n.build<dnn::AddOp>(vecType, var, n.splatFloat(vecType, *eps));
  if (failed(ve))
    return failure();
  auto sd = n.build<dnn::SqrtOp>(vecType, *ve);
  if (failed(sd))
    return failure();
  auto k = n.build<dnn::DivOp>(vecType, scale, *sd);
  if (failed(k))
    return failure();
  Value input = centeredX ? centeredX : x, offset = bias;
  if (!centeredX) {
    auto mk = n.build<dnn::MulOp>(vecType, mean, *k);
    if (failed(mk))
      return failure();
    auto shift = n.build<dnn::SubOp>(vecType, bias, *mk);
    if (failed(shift))
      return failure();
    offset = *shift;
  }
  auto kb = perChannel(n, *k, x);
  auto ob = perChannel(n, offset, x);
  if (failed(kb) || failed(ob))
    return failure();
  auto scaled = n.build<dnn::MulOp>(x.getType(), input, *kb);
  if (failed(scaled))
    return failure();
  return n.setResult(n.build<dnn::AddOp>(x.getType(), *scaled, *ob));
}

/// The axes and keepdims of a Reduce* node (`inputSince`: the opset from
/// which axes is an input), normalised and sorted; no axes with
/// `noop_with_empty_axes` set means "reduce nothing" (an empty list).
struct ReduceAxes {
  /// The reduced axes (empty: none).
  SmallVector<int64_t> axes;
  /// Whether reduced axes stay as extent-1 dimensions.
  bool keepDims;
};
static FailureOr<ReduceAxes> getReduceAxes(NodeImporter &n,
                                           int64_t inputSince) {
  if (failed(n.checkArity(1, n.opset >= inputSince ? 2 : 1, 1)))
    return failure();
  int64_t rank = rankOf(n.input(0));
  auto keepDims = n.getInt("keepdims", 1);
  auto noop = n.getInt("noop_with_empty_axes", 0);
  if (failed(keepDims) || failed(noop))
    return failure();
  auto axes = axesAttrOrInput(n, inputSince);
  if (failed(axes))
    return failure();
  ReduceAxes result{{}, *keepDims != 0};
  if (*axes && !(*axes)->empty()) {
    auto v = normAxes(n, **axes, rank);
    if (failed(v))
      return failure();
    result.axes = *v;
  } else if (!*noop) {
    for (int64_t i = 0; i < rank; ++i)
      result.axes.push_back(i);
  }
  return result;
}

/// Imports Reduce*; `inputSince` is the opset from which axes is an input.
template <typename OpT, int64_t InputSince>
LogicalResult dnnc::onnx_import::importReduce(NodeImporter &n) {
  auto r = getReduceAxes(n, InputSince);
  if (failed(r))
    return failure();
  Value x = n.input(0);
  if (r->axes.empty()) {
    n.setOutput(0, x);
    return success();
  }
  return n.setResult(n.build<OpT>({}, x, n.b.getDenseI64ArrayAttr(r->axes),
                                  n.b.getBoolAttr(r->keepDims)));
}

/// The `reduction` attribute of a loss node (default `mean`).
static FailureOr<dnn::LossReduction> getLossReduction(NodeImporter &n) {
  auto reduction = n.getString("reduction", "mean");
  if (failed(reduction))
    return failure();
  auto kind = llvm::StringSwitch<std::optional<dnn::LossReduction>>(*reduction)
                  .Case("none", dnn::LossReduction::None)
                  .Case("sum", dnn::LossReduction::Sum)
                  .Case("mean", dnn::LossReduction::Mean)
                  .Default(std::nullopt);
  if (!kind)
    return n.fail("unsupported reduction '" + *reduction + "'");
  return *kind;
}

/// The `ignore_index` attribute of a loss node, null when absent.
static FailureOr<IntegerAttr> getIgnoreIndex(NodeImporter &n) {
  if (!n.findAttr("ignore_index"))
    return IntegerAttr();
  auto v = n.getInt("ignore_index", 0);
  if (failed(v))
    return failure();
  return n.b.getI64IntegerAttr(*v);
}

LogicalResult dnnc::onnx_import::importSoftmaxCrossEntropy(NodeImporter &n) {
  if (failed(n.checkArity(2, 3, 2)))
    return failure();
  auto kind = getLossReduction(n);
  auto ignore = getIgnoreIndex(n);
  if (failed(kind) || failed(ignore))
    return failure();
  auto results = n.buildOp<dnn::SoftmaxCrossEntropyOp>(
      {}, n.input(0), n.input(1), n.hasInput(2) ? n.input(2) : Value(),
      dnn::LossReductionAttr::get(n.b.getContext(), *kind), *ignore);
  if (failed(results))
    return failure();
  n.setOutput(0, (*results)[0]);
  n.setOutput(1, (*results)[1]);
  return success();
}

//===----------------------------------------------------------------------===//
// Composite normalisations, losses, reductions and scans
//===----------------------------------------------------------------------===//

/// MeanVarianceNormalization-13, as its ONNX function body: `(x - E[x]) /
/// (sqrt(E[x^2] - E[x]^2) + 1e-9)` over `axes` (default 0, 2, 3).
LogicalResult
dnnc::onnx_import::importMeanVarianceNormalization(NodeImporter &n) {
  if (failed(n.checkArity(1, 1, 1)) || failed(requireFloatInput(n)))
    return failure();
  Value x = n.input(0);
  auto attr = n.getInts("axes");
  if (failed(attr))
    return failure();
  SmallVector<int64_t> given = *attr ? **attr : SmallVector<int64_t>{0, 2, 3};
  auto axes = normAxes(n, given, rankOf(x));
  if (failed(axes))
    return failure();
  Composer c(n);
  auto mean = [&](Value v) {
    return c.make<dnn::ReduceMeanOp>({}, v, n.b.getDenseI64ArrayAttr(*axes),
                                     n.b.getBoolAttr(true));
  };
  auto full = [&](Value v) { return c.broadcastTo(v, shapeOf(x)); };
  Value mx = mean(x);
  Value variance = c.binary<dnn::SubOp>(mean(c.binary<dnn::MulOp>(x, x)),
                                        c.binary<dnn::MulOp>(mx, mx));
  Value std = c.binary<dnn::AddOp>(c.unary<dnn::SqrtOp>(variance),
                                   c.splat(variance, 1e-9));
  return c.finish(
      c.binary<dnn::DivOp>(c.binary<dnn::SubOp>(x, full(mx)), full(std)));
}

/// NegativeLogLikelihoodLoss-12/13: `loss[n, d...] = -input[n, target[n,
/// d...], d...] * weight[target[n, d...]]`, zero where `target ==
/// ignore_index`; `mean` divides the sum by the sum of the applied weights
/// (the count of counted elements without `weight`). The picked element is a
/// masked sum over the class axis, so no index reaches outside the input.
LogicalResult
dnnc::onnx_import::importNegativeLogLikelihoodLoss(NodeImporter &n) {
  if (failed(n.checkArity(2, 3, 1)) || failed(requireFloatInput(n)))
    return failure();
  auto kind = getLossReduction(n);
  auto ignore = getIgnoreIndex(n);
  if (failed(kind) || failed(ignore))
    return failure();
  Value x = n.input(0), target = n.input(1);
  Value weight = n.hasInput(2) ? n.input(2) : Value();
  ArrayRef<int64_t> xs = shapeOf(x);
  int64_t rank = xs.size();
  if (rank < 2)
    return n.fail("input must be [N, C, D...], not of rank " + Twine(rank));
  if (!isa<IntegerType>(eltOf(target)))
    return n.fail("target must be an integer tensor");
  SmallVector<int64_t> targetShape(xs);
  targetShape.erase(targetShape.begin() + 1);
  if (shapeOf(target) != ArrayRef<int64_t>(targetShape))
    return n.fail("target must be [N, D...] of the input's shape without "
                  "its class dimension");
  int64_t classes = xs[1];
  if (weight &&
      (shapeOf(weight) != ArrayRef<int64_t>{classes} || eltOf(weight) !=
                                                            eltOf(x)))
    return n.fail("weight must be a 1-D tensor of " + Twine(classes) +
                  " elements of the input's type");
  Composer c(n);
  SmallVector<int64_t> keptShape(xs);
  keptShape[1] = 1;
  Value hit = c.compare<dnn::EqualOp>(
      c.broadcastTo(c.reshape(target, keptShape), xs),
      c.broadcastTo(c.ramp(eltOf(target), classes, rank, 1), xs));
  Value picked = c.reduce<dnn::ReduceSumOp>(
      c.select(hit, x, c.splat(x, 0.0)), {1}, /*keepDims=*/false);
  Value ignored;
  if (*ignore)
    ignored = c.compare<dnn::EqualOp>(
        target, c.splat(target, static_cast<double>(ignore->getInt())));
  Value applied;
  if (weight) {
    Value safe = ignored ? c.select(ignored, c.splat(target, 0.0), target)
                         : target;
    applied = c.gather(weight, safe, 0);
  }
  if (ignored)
    applied = c.select(ignored, c.splat(picked, 0.0),
                       applied ? applied : c.splat(picked, 1.0));
  Value loss = c.unary<dnn::NegOp>(
      weight ? c.binary<dnn::MulOp>(picked, applied) : picked);
  if (ignored)
    loss = c.select(ignored, c.splat(loss, 0.0), loss);
  switch (*kind) {
  case dnn::LossReduction::None:
    return c.finish(loss);
  case dnn::LossReduction::Sum:
    return c.finish(c.reduce<dnn::ReduceSumOp>(loss, {}, false));
  case dnn::LossReduction::Mean:
    if (!applied)
      return c.finish(c.reduce<dnn::ReduceMeanOp>(loss, {}, false));
    return c.finish(
        c.binary<dnn::DivOp>(c.reduce<dnn::ReduceSumOp>(loss, {}, false),
                             c.reduce<dnn::ReduceSumOp>(applied, {}, false)));
  }
  llvm_unreachable("unknown reduction");
}

/// The index (i64) of the first (or, with `last`, the last) largest (or,
/// without `max`, smallest) element of `x` along `axis`. A NaN counts as the
/// extreme when the reduction yields NaN, as in numpy.
static Value argExtreme(Composer &c, NodeImporter &n, Value x, int64_t axis,
                        bool max, bool last, bool keepDims) {
  ArrayRef<int64_t> xs = shapeOf(x);
  int64_t rank = xs.size(), extent = xs[axis];
  Value extreme = max ? c.reduce<dnn::ReduceMaxOp>(x, {axis}, true)
                      : c.reduce<dnn::ReduceMinOp>(x, {axis}, true);
  extreme = c.broadcastTo(extreme, xs);
  Value hit = c.compare<dnn::EqualOp>(x, extreme);
  if (isa<FloatType>(eltOf(x)))
    hit = c.binary<dnn::OrOp>(
        hit, c.binary<dnn::AndOp>(c.isNaN(x), c.isNaN(extreme)));
  Type i64 = n.b.getI64Type();
  Value position = c.broadcastTo(c.ramp(i64, extent, rank, axis), xs);
  Value candidates = c.select(
      hit, position,
      c.fill(RankedTensorType::get(xs, i64), last ? -1.0 : double(extent)));
  return last ? c.reduce<dnn::ReduceMaxOp>(candidates, {axis}, keepDims)
              : c.reduce<dnn::ReduceMinOp>(candidates, {axis}, keepDims);
}

/// ArgMax-13 / ArgMin-13 (and earlier): the index of the extreme element
/// along `axis` as i64, composed as a reduction, a comparison and a minimum
/// (maximum with `select_last_index`) over an index ramp.
template <bool IsMax>
LogicalResult dnnc::onnx_import::importArgExtreme(NodeImporter &n) {
  if (failed(n.checkArity(1, 1, 1)))
    return failure();
  auto axisAttr = n.getInt("axis", 0);
  auto keepDims = n.getInt("keepdims", 1);
  auto last = n.getInt("select_last_index", 0);
  if (failed(axisAttr) || failed(keepDims) || failed(last))
    return failure();
  Value x = n.input(0);
  if (isa<IntegerType>(eltOf(x)) && eltOf(x).isInteger(1))
    return n.fail("input must be a numeric tensor, not bool");
  auto axis = normAxis(n, *axisAttr, rankOf(x));
  if (failed(axis))
    return failure();
  if (shapeOf(x)[*axis] == 0)
    return n.fail("the reduced axis is empty");
  Composer c(n);
  return c.finish(
      argExtreme(c, n, x, *axis, IsMax, *last != 0, *keepDims != 0));
}

/// Hardmax-13 (and 1-11 on the 2-D coercion of the input at `axis`): one
/// where an element is the first largest along `axis`, zero elsewhere.
LogicalResult dnnc::onnx_import::importHardmax(NodeImporter &n) {
  if (failed(n.checkArity(1, 1, 1)) || failed(requireFloatInput(n)))
    return failure();
  auto axisAttr = n.getInt("axis", n.opset >= 13 ? -1 : 1);
  if (failed(axisAttr))
    return failure();
  Value x = n.input(0);
  ArrayRef<int64_t> xs = shapeOf(x);
  int64_t rank = xs.size();
  if (rank == 0)
    return n.fail("input must have rank 1 or more");
  auto axis = normAxis(n, *axisAttr, rank);
  if (failed(axis))
    return failure();
  Composer c(n);
  Value y = x;
  int64_t along = *axis;
  if (n.opset < 13) {
    y = c.reshape(x, {product(xs.take_front(*axis)),
                      product(xs.drop_front(*axis))});
    along = 1;
  }
  if (!y)
    return failure();
  ArrayRef<int64_t> ys = shapeOf(y);
  if (ys[along] == 0)
    return c.finish(x);
  Value index = argExtreme(c, n, y, along, /*max=*/true, /*last=*/false,
                           /*keepDims=*/true);
  Value hit = c.compare<dnn::EqualOp>(
      c.broadcastTo(index, ys),
      c.broadcastTo(c.ramp(n.b.getI64Type(), ys[along], ys.size(), along),
                    ys));
  Value result = c.select(hit, c.splat(y, 1.0), c.splat(y, 0.0));
  return c.finish(c.reshape(result, xs));
}

/// CumSum-11/14: the running sum along the constant `axis`, as log2(extent)
/// shifted additions (a Hillis-Steele scan); `exclusive` shifts the input by
/// one first, `reverse` runs the scan on the reversed axis.
LogicalResult dnnc::onnx_import::importCumSum(NodeImporter &n) {
  if (failed(n.checkArity(2, 2, 1)))
    return failure();
  auto axes = n.constantInts(1, "axis");
  auto exclusive = n.getInt("exclusive", 0);
  auto reverse = n.getInt("reverse", 0);
  if (failed(axes) || failed(exclusive) || failed(reverse))
    return failure();
  if (axes->size() != 1)
    return n.fail("axis must hold one value, not " + Twine(axes->size()));
  Value x = n.input(0);
  if (eltOf(x).isInteger(1))
    return n.fail("input must be a numeric tensor, not bool");
  auto axis = normAxis(n, axes->front(), rankOf(x));
  if (failed(axis))
    return failure();
  int64_t extent = shapeOf(x)[*axis];
  if (extent == 0) {
    n.setOutput(0, x);
    return success();
  }
  Composer c(n);
  // `v` moved `by` places up the axis, zeros filling the first places.
  auto shift = [&](Value v, int64_t by) {
    SmallVector<int64_t> zeroShape(shapeOf(x));
    zeroShape[*axis] = by;
    Value zeros = c.fill(RankedTensorType::get(zeroShape, eltOf(x)), 0.0);
    if (by >= extent)
      return c.slice(zeros, *axis, 0, extent);
    return c.concat({zeros, c.slice(v, *axis, 0, extent - by)}, *axis);
  };
  auto flip = [&](Value v) {
    return c.slice(v, *axis, extent - 1, extent, -1);
  };
  Value y = *reverse ? flip(x) : x;
  if (*exclusive)
    y = shift(y, 1);
  for (int64_t by = 1; by < extent; by *= 2)
    y = c.binary<dnn::AddOp>(y, shift(y, by));
  return c.finish(*reverse ? flip(y) : y);
}

/// LRN-13: `x / (bias + alpha / size * sum of x^2 over the channel window
/// [c - floor((size - 1) / 2), c + ceil((size - 1) / 2)])^beta`, the window
/// sum as `size` shifted slices of the zero-padded squares.
LogicalResult dnnc::onnx_import::importLRN(NodeImporter &n) {
  if (failed(n.checkArity(1, 1, 1)) || failed(requireFloatInput(n)))
    return failure();
  auto alpha = n.getFloat("alpha", 1e-4f);
  auto beta = n.getFloat("beta", 0.75f);
  auto bias = n.getFloat("bias", 1.0f);
  auto size = n.getInt("size", 0);
  if (failed(alpha) || failed(beta) || failed(bias) || failed(size))
    return failure();
  if (*size < 1)
    return n.fail("attribute 'size' must be positive");
  Value x = n.input(0);
  ArrayRef<int64_t> xs = shapeOf(x);
  if (xs.size() < 2)
    return n.fail("input must be [N, C, ...]");
  int64_t channels = xs[1];
  int64_t before = (*size - 1) / 2, after = *size - 1 - before;
  Composer c(n);
  auto zeros = [&](int64_t count) -> Value {
    if (count == 0)
      return nullptr;
    SmallVector<int64_t> shape(xs);
    shape[1] = count;
    return c.fill(RankedTensorType::get(shape, eltOf(x)), 0.0);
  };
  Value padded =
      c.concat({zeros(before), c.binary<dnn::MulOp>(x, x), zeros(after)}, 1);
  Value sum;
  for (int64_t j = 0; j < *size; ++j) {
    Value part = c.slice(padded, 1, j, channels);
    sum = sum ? c.binary<dnn::AddOp>(sum, part) : part;
  }
  Value base = c.binary<dnn::AddOp>(
      c.splat(x, *bias),
      c.binary<dnn::MulOp>(c.splat(x, *alpha / static_cast<double>(*size)),
                           sum));
  return c.finish(c.binary<dnn::DivOp>(
      x, c.binary<dnn::PowOp>(base, c.splat(x, *beta))));
}

/// TopK-1/10/11: the `k` (a compile-time input) largest (or smallest)
/// elements along `axis` and their i64 indices, in order, ties by lower
/// index. Composed from pairwise comparisons along the axis: an element's
/// rank counts the elements before it, and output slot `r` sums the element
/// of rank `r`. The pairs take `rows * extent^2` elements, so axes longer
/// than a few thousand are refused.
LogicalResult dnnc::onnx_import::importTopK(NodeImporter &n) {
  if (failed(n.checkArity(n.opset >= 10 ? 2 : 1, n.opset >= 10 ? 2 : 1, 2)))
    return failure();
  auto axisAttr = n.getInt("axis", -1);
  auto largest = n.getInt("largest", 1);
  auto sortedAttr = n.getInt("sorted", 1);
  if (failed(axisAttr) || failed(largest) || failed(sortedAttr))
    return failure();
  int64_t k;
  if (n.opset >= 10) {
    auto v = n.constantInts(1, "k");
    if (failed(v))
      return failure();
    if (v->size() != 1)
      return n.fail("k must hold one value");
    k = v->front();
  } else {
    auto v = n.getInt("k", -1);
    if (failed(v))
      return failure();
    k = *v;
  }
  Value x = n.input(0);
  ArrayRef<int64_t> xs = shapeOf(x);
  int64_t rank = xs.size();
  if (rank == 0)
    return n.fail("input must have rank 1 or more");
  if (eltOf(x).isInteger(1))
    return n.fail("input must be numeric, not bool");
  auto axis = normAxis(n, *axisAttr, rank);
  if (failed(axis))
    return failure();
  int64_t extent = xs[*axis];
  if (k < 0 || k > extent)
    return n.fail("k = " + Twine(k) + " is outside [0, " + Twine(extent) +
                  "]");
  int64_t rows = product(xs) / std::max<int64_t>(extent, 1);
  if (static_cast<double>(rows) * extent * extent > double(1 << 26))
    return n.fail("TopK over an axis of " + Twine(extent) + " elements (" +
                  Twine(rows) + " rows) is not supported: the composed "
                  "comparison needs rows * extent^2 elements");
  // Move the axis last: [R..., L].
  SmallVector<int64_t> perm, inverse(rank);
  for (int64_t d = 0; d < rank; ++d)
    if (d != *axis)
      perm.push_back(d);
  perm.push_back(*axis);
  for (int64_t d = 0; d < rank; ++d)
    inverse[perm[d]] = d;
  Composer c(n);
  Value y = *axis == rank - 1 ? x : c.transpose(x, perm);
  if (!y)
    return failure();
  SmallVector<int64_t> lead(shapeOf(y).drop_back());
  auto with = [&](std::initializer_list<int64_t> tail) {
    SmallVector<int64_t> s(lead);
    s.append(tail);
    return s;
  };
  SmallVector<int64_t> pairs = with({extent, extent});
  Type i64 = n.b.getI64Type();
  // [..., i, j]: x_j against x_i.
  Value xi = c.broadcastTo(c.reshape(y, with({extent, 1})), pairs);
  Value xj = c.broadcastTo(c.reshape(y, with({1, extent})), pairs);
  Value beats = *largest ? c.compare<dnn::GreaterOp>(xj, xi)
                         : c.compare<dnn::LessOp>(xj, xi);
  SmallVector<bool> earlier(extent * extent);
  for (int64_t i = 0; i < extent; ++i)
    for (int64_t j = 0; j < i; ++j)
      earlier[i * extent + j] = true;
  Value before = c.broadcastTo(
      n.constant(DenseElementsAttr::get(
          RankedTensorType::get({extent, extent}, n.b.getI1Type()),
          ArrayRef<bool>(earlier))),
      pairs);
  Value ahead = c.binary<dnn::OrOp>(
      beats,
      c.binary<dnn::AndOp>(c.compare<dnn::EqualOp>(xj, xi), before));
  Value rankOfElement = c.reduce<dnn::ReduceSumOp>(
      c.convert(ahead, i64), {static_cast<int64_t>(lead.size()) + 1}, false);
  // [..., r, i]: element i has rank r.
  SmallVector<int64_t> slots = with({k, extent});
  Value hit = c.compare<dnn::EqualOp>(
      c.broadcastTo(c.reshape(rankOfElement, with({1, extent})), slots),
      c.broadcastTo(c.ramp(i64, k, lead.size() + 2, lead.size()), slots));
  int64_t last = lead.size() + 1;
  Value values = c.reduce<dnn::ReduceSumOp>(
      c.select(hit, c.broadcastTo(c.reshape(y, with({1, extent})), slots),
               c.fill(RankedTensorType::get(slots, eltOf(x)), 0.0)),
      {last}, false);
  Value positions = c.reduce<dnn::ReduceSumOp>(
      c.select(hit,
               c.broadcastTo(c.ramp(i64, extent, lead.size() + 2, last),
                             slots),
               c.fill(RankedTensorType::get(slots, i64), 0.0)),
      {last}, false);
  if (*axis != rank - 1) {
    values = c.transpose(values, inverse);
    positions = c.transpose(positions, inverse);
  }
  if (failed(c.finish(values)))
    return failure();
  n.setOutput(1, positions);
  return success();
}

/// RMSNormalization-23: `x / sqrt(mean(x^2 over the axes from axis) +
/// epsilon) * scale`, in float32 for narrower inputs (stash_type 1) and
/// converted back.
LogicalResult dnnc::onnx_import::importRMSNormalization(NodeImporter &n) {
  if (failed(n.checkArity(2, 2, 1)) || failed(requireFloatInput(n)))
    return failure();
  auto axisAttr = n.getInt("axis", -1);
  auto eps = n.getFloat("epsilon", 1e-5f);
  auto stash = n.getInt("stash_type", 1);
  if (failed(axisAttr) || failed(eps) || failed(stash))
    return failure();
  Value x = n.input(0), scale = n.input(1);
  ArrayRef<int64_t> xs = shapeOf(x);
  int64_t rank = xs.size();
  if (rank == 0)
    return n.fail("input must have rank 1 or more");
  auto axis = normAxis(n, *axisAttr, rank);
  if (failed(axis))
    return failure();
  if (eltOf(scale) != eltOf(x))
    return n.fail("scale must have the input's element type");
  Type elt = eltOf(x);
  Type compute = cast<FloatType>(elt).getWidth() < 32 && *stash == 1
                     ? Type(n.b.getF32Type())
                     : elt;
  Composer c(n);
  Value xf = c.convert(x, compute);
  Value meanSquare = c.reduce<dnn::ReduceMeanOp>(
      c.binary<dnn::MulOp>(xf, xf),
      llvm::to_vector(llvm::seq<int64_t>(*axis, rank)), /*keepDims=*/true);
  Value rms = c.unary<dnn::SqrtOp>(
      c.binary<dnn::AddOp>(meanSquare, c.splat(meanSquare, *eps)));
  Value y = c.binary<dnn::MulOp>(
      c.binary<dnn::DivOp>(xf, c.broadcastTo(rms, xs)),
      c.broadcastTo(c.convert(scale, compute), xs));
  return c.finish(c.convert(y, elt));
}

/// InstanceNormalization-6: each `[n, c]` plane normalised by its own mean
/// and variance, then scaled and shifted per channel.
LogicalResult dnnc::onnx_import::importInstanceNorm(NodeImporter &n) {
  if (failed(n.checkArity(3, 3, 1)) || failed(requireFloatInput(n)))
    return failure();
  Value x = n.input(0);
  if (rankOf(x) < 3)
    return n.fail("input must be [N, C, D1, ...]");
  auto eps = n.getFloat("epsilon", 1e-5f);
  if (failed(eps))
    return failure();
  auto scale = perChannel(n, n.input(1), x);
  auto bias = perChannel(n, n.input(2), x);
  if (failed(scale) || failed(bias))
    return failure();
  SmallVector<int64_t> spatial;
  for (int64_t i = 2; i < rankOf(x); ++i)
    spatial.push_back(i);
  Composer c(n);
  auto mean = [&](Value v) {
    return c.broadcastTo(
        c.make<dnn::ReduceMeanOp>({}, v, n.b.getDenseI64ArrayAttr(spatial),
                                  n.b.getBoolAttr(true)),
        shapeOf(x));
  };
  Value centered = c.binary<dnn::SubOp>(x, mean(x));
  Value variance = mean(c.binary<dnn::MulOp>(centered, centered));
  Value normalized = c.binary<dnn::DivOp>(
      centered,
      c.unary<dnn::SqrtOp>(c.binary<dnn::AddOp>(variance, c.splat(x, *eps))));
  return c.finish(
      c.binary<dnn::AddOp>(c.binary<dnn::MulOp>(normalized, *scale), *bias));
}

/// ReduceSumSquare, ReduceL1, ReduceL2, ReduceLogSum and ReduceLogSumExp
/// (axes an input from opset 18): a sum of `x*x`, `|x|`, `x*x` (then sqrt),
/// `x` (then log), or `exp(x - max)` (then `log(.) + max`).
template <ReduceKind Kind>
LogicalResult dnnc::onnx_import::importReduceComposite(NodeImporter &n) {
  auto r = getReduceAxes(n, 18);
  if (failed(r))
    return failure();
  Value x = n.input(0);
  if (Kind != ReduceKind::SumSquare && Kind != ReduceKind::L1 &&
      failed(requireFloatInput(n)))
    return failure();
  Composer c(n);
  auto axes = n.b.getDenseI64ArrayAttr(r->axes);
  auto keep = [&](bool keepDims) { return n.b.getBoolAttr(keepDims); };
  auto sum = [&](Value v) -> Value {
    if (r->axes.empty())
      return v;
    return c.make<dnn::ReduceSumOp>({}, v, axes, keep(r->keepDims));
  };
  switch (Kind) {
  case ReduceKind::SumSquare:
    return c.finish(sum(c.binary<dnn::MulOp>(x, x)));
  case ReduceKind::L1:
    return c.finish(sum(c.unary<dnn::AbsOp>(x)));
  case ReduceKind::L2:
    return c.finish(c.unary<dnn::SqrtOp>(sum(c.binary<dnn::MulOp>(x, x))));
  case ReduceKind::LogSum:
    return c.finish(c.unary<dnn::LogOp>(sum(x)));
  case ReduceKind::LogSumExp: {
    if (r->axes.empty())
      return c.finish(x);
    // log(sum(exp(x - max))) + max, so that no exp overflows.
    Value max = c.make<dnn::ReduceMaxOp>({}, x, axes, keep(true));
    Value shifted = c.unary<dnn::ExpOp>(
        c.binary<dnn::SubOp>(x, c.broadcastTo(max, shapeOf(x))));
    Value logSum = c.unary<dnn::LogOp>(
        c.make<dnn::ReduceSumOp>({}, shifted, axes, keep(r->keepDims)));
    SmallVector<int64_t> reduced;
    for (auto [i, d] : llvm::enumerate(shapeOf(x)))
      if (!llvm::is_contained(r->axes, (int64_t)i))
        reduced.push_back(d);
    Value shift = r->keepDims ? max : c.reshape(max, reduced);
    return c.finish(c.binary<dnn::AddOp>(logSum, shift));
  }
  }
  llvm_unreachable("unknown reduction");
}

//===----------------------------------------------------------------------===//
// The instantiations the registry names
//===----------------------------------------------------------------------===//

namespace dnnc::onnx_import {
template LogicalResult importSoftmax<dnn::SoftmaxOp>(NodeImporter &);
template LogicalResult importSoftmax<dnn::LogSoftmaxOp>(NodeImporter &);
template LogicalResult importReduce<dnn::ReduceSumOp, 13>(NodeImporter &);
template LogicalResult importReduce<dnn::ReduceMeanOp, 18>(NodeImporter &);
template LogicalResult importReduce<dnn::ReduceMaxOp, 18>(NodeImporter &);
template LogicalResult importReduce<dnn::ReduceMinOp, 18>(NodeImporter &);
template LogicalResult importReduce<dnn::ReduceProdOp, 18>(NodeImporter &);
template LogicalResult importArgExtreme<true>(NodeImporter &);
template LogicalResult importArgExtreme<false>(NodeImporter &);
template LogicalResult
importReduceComposite<ReduceKind::SumSquare>(NodeImporter &);
template LogicalResult importReduceComposite<ReduceKind::L1>(NodeImporter &);
template LogicalResult importReduceComposite<ReduceKind::L2>(NodeImporter &);
template LogicalResult
importReduceComposite<ReduceKind::LogSum>(NodeImporter &);
template LogicalResult
importReduceComposite<ReduceKind::LogSumExp>(NodeImporter &);
} // namespace dnnc::onnx_import
