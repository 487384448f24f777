//===- DnnGradients.cpp - reverse-mode rules of the dnn ops ---*- C++ -*-===//
//
// The DnnGradientOpInterface rules: for each differentiable op, the
// cotangents of its operands from those of its results, built from dnn ops
// (so the gradient program is sharded, partitioned and lowered like any
// other). Attached to the ops as external models by the dialect.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Dialect/Dnn/IR/Dnn.h"
#include "dnnc/Dialect/Dnn/IR/ValueBuilder.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/TypeUtilities.h"

#include <limits>
#include <numeric>

using namespace mlir;
using namespace dnnc::dnn;

namespace {
/// Returns the dims `[first, rank)`.
static SmallVector<int64_t> dimsFrom(int64_t first, int64_t rank) {
  SmallVector<int64_t> dims;
  for (int64_t d = first; d < rank; ++d)
    dims.push_back(d);
  return dims;
}

/// Returns the number of elements of `type` over `dims`.
static int64_t countOver(Type type, ArrayRef<int64_t> dims) {
  auto tensor = cast<RankedTensorType>(type);
  int64_t n = 1;
  for (int64_t d : dims)
    n *= tensor.getDimSize(d);
  return n;
}
} // namespace

//===----------------------------------------------------------------------===//
// Rules. Each takes the op, the builder, the result cotangents (non-null:
// ops without any are skipped by the caller) and the operand cotangents to
// fill; it fails with a diagnostic on the op.
//===----------------------------------------------------------------------===//

/// dy of a one-result op.
static Value single(ArrayRef<Value> dys) { return dys.front(); }

/// Unary ops: dx = dy * f'(x), written with x and y.
template <typename OpT>
static LogicalResult unaryRule(OpT op, ValueBuilder &g, ArrayRef<Value> dys,
                               SmallVectorImpl<Value> &dxs) {
  Value x = op->getOperand(0), y = op->getResult(0), dy = single(dys);
  Value dx;
  if constexpr (std::is_same_v<OpT, NegOp>) {
    dx = g.neg(dy);
  } else if constexpr (std::is_same_v<OpT, ReluOp>) {
    dx = g.where(g.compare<GreaterOp>(x, g.splat(x, 0.0)), dy);
  } else if constexpr (std::is_same_v<OpT, LeakyReluOp>) {
    Value positive = g.compare<GreaterOp>(x, g.splat(x, 0.0));
    dx = g.make<SelectOp>(dy.getType(), positive, dy,
                          g.scale(dy, op.getAlpha().convertToDouble()));
  } else if constexpr (std::is_same_v<OpT, AbsOp>) {
    Value negative = g.compare<LessOp>(x, g.splat(x, 0.0));
    dx = g.make<SelectOp>(dy.getType(), negative, g.neg(dy), dy);
  } else if constexpr (std::is_same_v<OpT, TanhOp>) {
    dx = g.mul(dy, g.sub(g.splat(y, 1.0), g.mul(y, y)));
  } else if constexpr (std::is_same_v<OpT, SigmoidOp>) {
    dx = g.mul(dy, g.mul(y, g.sub(g.splat(y, 1.0), y)));
  } else if constexpr (std::is_same_v<OpT, ExpOp>) {
    dx = g.mul(dy, y);
  } else if constexpr (std::is_same_v<OpT, LogOp>) {
    dx = g.div(dy, x);
  } else if constexpr (std::is_same_v<OpT, SqrtOp>) {
    dx = g.div(dy, g.scale(y, 2.0));
  } else if constexpr (std::is_same_v<OpT, ReciprocalOp>) {
    dx = g.neg(g.mul(dy, g.mul(y, y)));
  } else if constexpr (std::is_same_v<OpT, SinOp>) {
    dx = g.mul(dy, g.make<CosOp>(x.getType(), x));
  } else if constexpr (std::is_same_v<OpT, CosOp>) {
    dx = g.neg(g.mul(dy, g.make<SinOp>(x.getType(), x)));
  } else if constexpr (std::is_same_v<OpT, TanOp>) {
    dx = g.mul(dy, g.add(g.splat(y, 1.0), g.mul(y, y)));
  } else if constexpr (std::is_same_v<OpT, SinhOp>) {
    dx = g.mul(dy, g.make<CoshOp>(x.getType(), x));
  } else if constexpr (std::is_same_v<OpT, CoshOp>) {
    dx = g.mul(dy, g.make<SinhOp>(x.getType(), x));
  } else if constexpr (std::is_same_v<OpT, ErfOp>) {
    // 2 / sqrt(pi) * exp(-x^2)
    Value e = g.make<ExpOp>(x.getType(), g.neg(g.mul(x, x)));
    dx = g.mul(dy, g.scale(e, 1.1283791670955126));
  } else if constexpr (std::is_same_v<OpT, AsinOp> ||
                       std::is_same_v<OpT, AcosOp>) {
    Value root = g.make<SqrtOp>(x.getType(),
                                g.sub(g.splat(x, 1.0), g.mul(x, x)));
    dx = g.div(dy, root);
    if constexpr (std::is_same_v<OpT, AcosOp>)
      dx = g.neg(dx);
  } else if constexpr (std::is_same_v<OpT, AtanOp>) {
    dx = g.div(dy, g.add(g.splat(x, 1.0), g.mul(x, x)));
  } else if constexpr (std::is_same_v<OpT, AsinhOp>) {
    dx = g.div(dy, g.make<SqrtOp>(x.getType(),
                                  g.add(g.mul(x, x), g.splat(x, 1.0))));
  } else if constexpr (std::is_same_v<OpT, AcoshOp>) {
    dx = g.div(dy, g.make<SqrtOp>(x.getType(),
                                  g.sub(g.mul(x, x), g.splat(x, 1.0))));
  } else if constexpr (std::is_same_v<OpT, AtanhOp>) {
    dx = g.div(dy, g.sub(g.splat(x, 1.0), g.mul(x, x)));
  } else if constexpr (std::is_same_v<OpT, GeluOp>) {
    if (op.getApproximation() == GeluApproximation::Tanh) {
      // y = 0.5 x (1 + t), t = tanh(c (x + k x^3)):
      // y' = 0.5 (1 + t) + 0.5 x (1 - t^2) c (1 + 3 k x^2).
      constexpr double c = 0.7978845608028654, k = 0.044715;
      Value x2 = g.mul(x, x);
      Value inner = g.scale(g.add(x, g.scale(g.mul(x2, x), k)), c);
      Value t = g.make<TanhOp>(x.getType(), inner);
      Value one = g.splat(x, 1.0);
      Value left = g.scale(g.add(one, t), 0.5);
      Value right = g.mul(g.scale(x, 0.5 * c),
                          g.mul(g.sub(one, g.mul(t, t)),
                                g.add(one, g.scale(x2, 3 * k))));
      dx = g.mul(dy, g.add(left, right));
    } else {
      // y' = Phi(x) + x phi(x).
      Value cdf = g.scale(
          g.add(g.splat(x, 1.0),
                g.make<ErfOp>(x.getType(), g.scale(x, 0.7071067811865476))),
          0.5);
      Value pdf = g.scale(
          g.make<ExpOp>(x.getType(), g.scale(g.mul(x, x), -0.5)),
          0.3989422804014327);
      dx = g.mul(dy, g.add(cdf, g.mul(x, pdf)));
    }
  } else {
    static_assert(sizeof(OpT) == 0, "no unary rule");
  }
  dxs.push_back(dx);
  return success();
}

/// Piecewise-constant ops (floor, ceil, round): zero gradient.
static LogicalResult zeroRule(Operation *op, ValueBuilder &,
                              ArrayRef<Value>, SmallVectorImpl<Value> &dxs) {
  dxs.assign(op->getNumOperands(), Value());
  return success();
}

/// Binary elementwise ops on operands of one type.
template <typename OpT>
static LogicalResult binaryRule(OpT op, ValueBuilder &g, ArrayRef<Value> dys,
                                SmallVectorImpl<Value> &dxs) {
  Value lhs = op.getLhs(), rhs = op.getRhs(), dy = single(dys);
  if constexpr (std::is_same_v<OpT, AddOp>) {
    dxs.assign({dy, dy});
  } else if constexpr (std::is_same_v<OpT, SubOp>) {
    dxs.assign({dy, g.neg(dy)});
  } else if constexpr (std::is_same_v<OpT, MulOp>) {
    dxs.assign({g.mul(dy, rhs), g.mul(dy, lhs)});
  } else if constexpr (std::is_same_v<OpT, DivOp>) {
    Value dl = g.div(dy, rhs);
    dxs.assign({dl, g.neg(g.mul(dl, op.getResult()))});
  } else if constexpr (std::is_same_v<OpT, PowOp>) {
    // d/dlhs = rhs * lhs^(rhs - 1); d/drhs = lhs^rhs * log(lhs).
    Value lower = g.make<PowOp>(lhs.getType(), lhs,
                                g.sub(rhs, g.splat(rhs, 1.0)));
    Value dl = g.mul(dy, g.mul(rhs, lower));
    Value dr = g.mul(dy, g.mul(op.getResult(),
                               g.make<LogOp>(lhs.getType(), lhs)));
    dxs.assign({dl, dr});
  } else if constexpr (std::is_same_v<OpT, MaxOp> ||
                       std::is_same_v<OpT, MinOp>) {
    // Ties go to the left operand.
    Value left = std::is_same_v<OpT, MaxOp>
                     ? g.compare<GreaterEqualOp>(lhs, rhs)
                     : g.compare<LessEqualOp>(lhs, rhs);
    Value zero = g.splat(dy, 0.0);
    dxs.assign({g.make<SelectOp>(dy.getType(), left, dy, zero),
           g.make<SelectOp>(dy.getType(), left, zero, dy)});
  } else {
    static_assert(sizeof(OpT) == 0, "no binary rule");
  }
  if (!isa<FloatType>(getElementTypeOrSelf(lhs.getType())))
    dxs.assign({Value(), Value()});
  return success();
}

static LogicalResult rule(SelectOp op, ValueBuilder &g, ArrayRef<Value> dys,
                          SmallVectorImpl<Value> &dxs) {
  Value dy = single(dys), zero = g.splat(dy, 0.0);
  dxs.assign({Value(),
         g.make<SelectOp>(dy.getType(), op.getCondition(), dy, zero),
         g.make<SelectOp>(dy.getType(), op.getCondition(), zero, dy)});
  return success();
}

static LogicalResult rule(CastOp op, ValueBuilder &g, ArrayRef<Value> dys,
                          SmallVectorImpl<Value> &dxs) {
  Type from = getElementTypeOrSelf(op.getInput().getType());
  Type to = getElementTypeOrSelf(op.getType());
  if (!isa<FloatType>(from) || !isa<FloatType>(to)) {
    dxs.assign({Value()});
    return success();
  }
  dxs.assign({g.convert(single(dys), from)});
  return success();
}

static LogicalResult rule(ReshapeOp op, ValueBuilder &g, ArrayRef<Value> dys,
                          SmallVectorImpl<Value> &dxs) {
  dxs.assign({g.reshape(single(dys), op.getInput().getType())});
  return success();
}

static LogicalResult rule(BroadcastInDimOp op, ValueBuilder &g,
                          ArrayRef<Value> dys, SmallVectorImpl<Value> &dxs) {
  // Sum over the result dims the input does not map to and over the mapped
  // dims it broadcasts (extent 1 to more); then reshape to the input.
  auto in = cast<RankedTensorType>(op.getInput().getType());
  auto out = cast<RankedTensorType>(op.getType());
  ArrayRef<int64_t> dims = op.getDims();
  SmallVector<int64_t> axes;
  for (int64_t d = 0; d < out.getRank(); ++d) {
    auto it = llvm::find(dims, d);
    if (it == dims.end() ||
        (in.getDimSize(it - dims.begin()) == 1 && out.getDimSize(d) != 1))
      axes.push_back(d);
  }
  Value dy = single(dys);
  Value summed = axes.empty() ? dy : g.sumKeep(dy, axes);
  dxs.assign({g.reshape(summed, in)});
  return success();
}

static LogicalResult rule(TransposeOp op, ValueBuilder &g, ArrayRef<Value> dys,
                          SmallVectorImpl<Value> &dxs) {
  ArrayRef<int64_t> perm = op.getPermutation();
  SmallVector<int64_t> inverse(perm.size());
  for (auto [i, p] : llvm::enumerate(perm))
    inverse[p] = i;
  dxs.assign({g.transpose(single(dys), inverse)});
  return success();
}

static LogicalResult rule(ConcatOp op, ValueBuilder &g, ArrayRef<Value> dys,
                          SmallVectorImpl<Value> &dxs) {
  Value dy = single(dys);
  int64_t axis = op.getAxis();
  int64_t offset = 0;
  auto out = cast<RankedTensorType>(op.getType());
  for (Value input : op.getInputs()) {
    auto type = cast<RankedTensorType>(input.getType());
    SmallVector<int64_t> starts(out.getRank(), 0), steps(out.getRank(), 1);
    starts[axis] = offset;
    offset += type.getDimSize(axis);
    if (!isa<FloatType>(type.getElementType())) {
      dxs.push_back(Value());
      continue;
    }
    dxs.push_back(g.make<SliceOp>(type, dy, g.b.getDenseI64ArrayAttr(starts),
                                  g.b.getDenseI64ArrayAttr(steps)));
  }
  return success();
}

static LogicalResult rule(MatMulOp op, ValueBuilder &g, ArrayRef<Value> dys,
                          SmallVectorImpl<Value> &dxs) {
  // y = lhs @ rhs with lhs [B..., M, K] and rhs [K, N] or [B..., K, N].
  Value lhs = op.getLhs(), rhs = op.getRhs(), dy = single(dys);
  auto lt = cast<RankedTensorType>(lhs.getType());
  auto rt = cast<RankedTensorType>(rhs.getType());
  if (!isa<FloatType>(lt.getElementType())) {
    dxs.assign({Value(), Value()});
    return success();
  }
  Value dl = g.make<MatMulOp>(lt, dy, g.swapLast(rhs));
  Value dr;
  if (rt.getRank() == 2 && lt.getRank() > 2) {
    // Shared weights: sum over the batch, as one [K, B*M] x [B*M, N].
    int64_t rows = lt.getNumElements() / lt.getShape().back();
    auto dyt = cast<RankedTensorType>(dy.getType());
    Value l2 = g.reshape(lhs, lt.clone({rows, lt.getShape().back()}));
    Value d2 = g.reshape(dy, dyt.clone({rows, dyt.getShape().back()}));
    dr = g.make<MatMulOp>(rt, g.swapLast(l2), d2);
  } else {
    dr = g.make<MatMulOp>(rt, g.swapLast(lhs), dy);
  }
  dxs.assign({dl, dr});
  return success();
}

static LogicalResult rule(EinsumOp op, ValueBuilder &g, ArrayRef<Value> dys,
                          SmallVectorImpl<Value> &dxs) {
  // "a,b->c": the cotangent of input i is the einsum of the cotangent and
  // the other inputs onto i's labels; labels only i has (summed away) are
  // broadcast back.
  StringRef equation = op.getEquation();
  auto [lhs, out] = equation.split("->");
  SmallVector<StringRef> ins;
  lhs.split(ins, ',');
  Value dy = single(dys);
  for (auto [i, input] : llvm::enumerate(op.getInputs())) {
    auto type = cast<RankedTensorType>(input.getType());
    if (!isa<FloatType>(type.getElementType())) {
      dxs.push_back(Value());
      continue;
    }
    std::string available = out.str();
    SmallVector<Value> operands = {dy};
    std::string terms = out.str();
    for (auto [j, other] : llvm::enumerate(op.getInputs()))
      if (j != i) {
        terms += "," + ins[j].str();
        available += ins[j].str();
        operands.push_back(other);
      }
    StringRef labels = ins[i];
    if (llvm::any_of(labels, [&](char c) {
          return llvm::count(labels, c) > 1;
        }))
      return op.emitOpError("gradient of an einsum with a repeated label "
                            "in one input is not supported yet");
    std::string kept;
    SmallVector<int64_t> keptShape, keptDims;
    for (auto [d, c] : llvm::enumerate(labels))
      if (available.find(c) != std::string::npos) {
        kept.push_back(c);
        keptShape.push_back(type.getDimSize(d));
        keptDims.push_back(d);
      }
    Value grad = g.make<EinsumOp>(type.clone(keptShape), ValueRange(operands),
                                  g.b.getStringAttr(terms + "->" + kept));
    if (kept.size() != labels.size())
      grad = g.make<BroadcastInDimOp>(type, grad,
                                      g.b.getDenseI64ArrayAttr(keptDims));
    dxs.push_back(grad);
  }
  return success();
}

static LogicalResult rule(SoftmaxOp op, ValueBuilder &g, ArrayRef<Value> dys,
                          SmallVectorImpl<Value> &dxs) {
  // dx = y * (dy - sum(dy * y, axis)).
  Value y = op.getResult(), dy = single(dys);
  int64_t axis = op.getAxis();
  Value dot = g.expand(g.sumKeep(g.mul(dy, y), {axis}), y.getType());
  dxs.assign({g.mul(y, g.sub(dy, dot))});
  return success();
}

static LogicalResult rule(LogSoftmaxOp op, ValueBuilder &g, ArrayRef<Value> dys,
                          SmallVectorImpl<Value> &dxs) {
  // dx = dy - exp(y) * sum(dy, axis).
  Value y = op.getResult(), dy = single(dys);
  int64_t axis = op.getAxis();
  Value total = g.expand(g.sumKeep(dy, {axis}), y.getType());
  dxs.assign({g.sub(dy, g.mul(g.make<ExpOp>(y.getType(), y), total))});
  return success();
}

static LogicalResult rule(LayerNormOp op, ValueBuilder &g, ArrayRef<Value> dys,
                          SmallVectorImpl<Value> &dxs) {
  if (dys[1] || dys[2])
    return op.emitOpError("gradient through the mean or inverse standard "
                          "deviation results of a layer norm is not "
                          "supported");
  Value x = op.getInput(), scale = op.getScale(), dy = dys[0];
  auto type = cast<RankedTensorType>(x.getType());
  Type elt = type.getElementType();
  int64_t axis = op.getAxis(), rank = type.getRank();
  SmallVector<int64_t> normDims = dimsFrom(axis, rank);
  SmallVector<int64_t> leadDims = dimsFrom(0, axis);
  double n = countOver(type, normDims);
  // x_hat = (x - mean) * inv_std_dev, with the statistics broadcast.
  Value mean = g.expand(g.convert(op.getMean(), elt), type);
  Value isd = g.expand(g.convert(op.getInvStdDev(), elt), type);
  Value xhat = g.mul(g.sub(x, mean), isd);
  // scale and bias have shape x.shape[axis:]: broadcast over the lead dims.
  auto scaleType = cast<RankedTensorType>(scale.getType());
  Value scaleFull = g.make<BroadcastInDimOp>(
      type, scale, g.b.getDenseI64ArrayAttr(normDims));
  Value dxhat = g.mul(dy, scaleFull);
  // dx = isd / n * (n * dxhat - sum(dxhat) - xhat * sum(dxhat * xhat)).
  Value sum1 = g.expand(g.sumKeep(dxhat, normDims), type);
  Value sum2 = g.expand(g.sumKeep(g.mul(dxhat, xhat), normDims), type);
  Value inner = g.sub(g.sub(g.scale(dxhat, n), sum1), g.mul(xhat, sum2));
  Value dx = g.mul(g.scale(isd, 1.0 / n), inner);
  // dscale = sum over the lead dims of dy * x_hat; dbias of dy.
  auto overLead = [&](Value v) {
    if (leadDims.empty())
      return g.reshape(v, scaleType);
    return g.reshape(g.sumKeep(v, leadDims), scaleType);
  };
  dxs.assign({dx, overLead(g.mul(dy, xhat))});
  if (op.getBias())
    dxs.push_back(overLead(dy));
  return success();
}

/// Reductions: the cotangent broadcast back over the reduced axes.
template <typename OpT>
static LogicalResult reduceRule(OpT op, ValueBuilder &g, ArrayRef<Value> dys,
                                SmallVectorImpl<Value> &dxs) {
  Value x = op.getInput(), y = op.getResult(), dy = single(dys);
  auto type = cast<RankedTensorType>(x.getType());
  if (!isa<FloatType>(type.getElementType())) {
    dxs.assign({Value()});
    return success();
  }
  ArrayRef<int64_t> axes = op.getAxes();
  SmallVector<int64_t> keptShape(type.getShape());
  for (int64_t a : axes)
    keptShape[a] = 1;
  auto keptType = type.clone(keptShape);
  Value dyFull = g.expand(g.reshape(dy, keptType), type);
  if constexpr (std::is_same_v<OpT, ReduceSumOp>) {
    dxs.assign({dyFull});
  } else if constexpr (std::is_same_v<OpT, ReduceMeanOp>) {
    dxs.assign({g.scale(dyFull, 1.0 / countOver(type, axes))});
  } else if constexpr (std::is_same_v<OpT, ReduceProdOp>) {
    Value yFull = g.expand(g.reshape(y, keptType), type);
    dxs.assign({g.div(g.mul(dyFull, yFull), x)});
  } else {
    // Max and min: shared evenly among the elements equal to the result.
    Value yFull = g.expand(g.reshape(y, keptType), type);
    Value hit = g.compare<EqualOp>(x, yFull);
    Value ones = g.make<SelectOp>(type, hit, g.splat(type, 1.0),
                                  g.splat(type, 0.0));
    Value count = g.expand(g.sumKeep(ones, axes), type);
    dxs.assign({g.div(g.mul(ones, dyFull), count)});
  }
  return success();
}

static LogicalResult rule(DropoutOp op, ValueBuilder &g, ArrayRef<Value> dys,
                          SmallVectorImpl<Value> &dxs) {
  // y = x * mask / (1 - ratio): dx = dy * mask / (1 - ratio).
  Value dy = dys[0];
  if (!dy) {
    dxs.assign({Value(), Value()});
    return success();
  }
  auto type = cast<RankedTensorType>(dy.getType());
  Value ratio = g.make<BroadcastInDimOp>(type, op.getRatio(),
                                         g.b.getDenseI64ArrayAttr({}));
  Value keep = g.sub(g.splat(type, 1.0), ratio);
  Value zero = g.splat(type, 0.0);
  Value kept = g.make<SelectOp>(type, op.getMask(), g.div(dy, keep), zero);
  dxs.assign({kept, Value()});
  return success();
}

/// `x` sliced along `dim` to `[start, start + size)`.
static Value sliceDim(ValueBuilder &g, Value x, int64_t dim, int64_t start,
                      int64_t size, int64_t step = 1) {
  auto type = cast<RankedTensorType>(x.getType());
  if (start == 0 && step == 1 && size == type.getDimSize(dim))
    return x;
  SmallVector<int64_t> starts(type.getRank(), 0), steps(type.getRank(), 1);
  SmallVector<int64_t> shape(type.getShape());
  starts[dim] = start;
  steps[dim] = step;
  shape[dim] = size;
  return g.make<SliceOp>(type.clone(shape), x,
                         g.b.getDenseI64ArrayAttr(starts),
                         g.b.getDenseI64ArrayAttr(steps));
}

/// `x` with `factor - 1` zeros after each element along `dim`, the trailing
/// zeros dropped: extent `(n - 1) * factor + 1`.
static Value dilateDim(ValueBuilder &g, Value x, int64_t dim, int64_t factor) {
  if (factor == 1)
    return x;
  auto type = cast<RankedTensorType>(x.getType());
  int64_t n = type.getDimSize(dim);
  SmallVector<int64_t> split(type.getShape());
  split.insert(split.begin() + dim + 1, 1);
  Value unit = g.reshape(x, type.clone(split));
  SmallVector<int64_t> zerosShape(split);
  zerosShape[dim + 1] = factor - 1;
  Value zeros = g.splat(type.clone(zerosShape), 0.0);
  SmallVector<int64_t> joined(split);
  joined[dim + 1] = factor;
  Value both = g.make<ConcatOp>(type.clone(joined), ValueRange{unit, zeros},
                                g.b.getI64IntegerAttr(dim + 1));
  SmallVector<int64_t> flat(type.getShape());
  flat[dim] = n * factor;
  return sliceDim(g, g.reshape(both, type.clone(flat)), dim, 0,
                  (n - 1) * factor + 1);
}

/// A `dnn.conv` of `x` by `w` with `type` as result.
static Value conv(ValueBuilder &g, Type type, Value x, Value w,
                  ArrayRef<int64_t> strides, ArrayRef<int64_t> pads,
                  ArrayRef<int64_t> dilations, int64_t group) {
  return g.make<ConvOp>(type, x, w, Value(), g.b.getDenseI64ArrayAttr(strides),
                        g.b.getDenseI64ArrayAttr(pads),
                        g.b.getDenseI64ArrayAttr(dilations),
                        g.b.getI64IntegerAttr(group));
}

static LogicalResult rule(ConvOp op, ValueBuilder &g, ArrayRef<Value> dys,
                          SmallVectorImpl<Value> &dxs) {
  // x [N, C, S...], w [M, C/G, K...], dy [N, M, O...].
  Value x = op.getInput(), w = op.getWeight(), dy = single(dys);
  auto xt = cast<RankedTensorType>(x.getType());
  auto wt = cast<RankedTensorType>(w.getType());
  auto dyt = cast<RankedTensorType>(dy.getType());
  int64_t rank = xt.getRank(), spatial = rank - 2, groups = op.getGroup();
  ArrayRef<int64_t> strides = op.getStrides(), pads = op.getPads(),
                    dilations = op.getDilations();
  int64_t channels = xt.getDimSize(1), outputs = wt.getDimSize(0);
  int64_t cg = channels / groups, mg = outputs / groups;

  // dx: the cotangent dilated by the strides, padded to a full correlation,
  // by the flipped weights with input and output channels swapped.
  Value d = dy;
  SmallVector<int64_t> padsX(2 * spatial);
  for (int64_t i = 0; i < spatial; ++i) {
    int64_t dim = 2 + i;
    d = dilateDim(g, d, dim, strides[i]);
    int64_t extent = cast<RankedTensorType>(d.getType()).getDimSize(dim);
    int64_t keff = dilations[i] * (wt.getDimSize(dim) - 1) + 1;
    int64_t begin = keff - 1 - pads[i];
    int64_t end = xt.getDimSize(dim) + keff - 1 - extent - begin;
    // Negative pads: positions that only met padding, cropped.
    if (begin < 0) {
      d = sliceDim(g, d, dim, -begin, extent + begin);
      extent += begin;
      begin = 0;
    }
    if (end < 0) {
      d = sliceDim(g, d, dim, 0, extent + end);
      end = 0;
    }
    padsX[i] = begin;
    padsX[spatial + i] = end;
  }
  // [M, C/G, K...] -> [G, M/G, C/G, K...] -> [G, C/G, M/G, K...] ->
  // [C, M/G, K...], flipped along K.
  SmallVector<int64_t> grouped = {groups, mg, cg};
  grouped.append(wt.getShape().begin() + 2, wt.getShape().end());
  Value wf = g.reshape(w, wt.clone(grouped));
  SmallVector<int64_t> perm = {0, 2, 1};
  for (int64_t i = 0; i < spatial; ++i)
    perm.push_back(3 + i);
  wf = g.transpose(wf, perm);
  SmallVector<int64_t> swapped = {channels, mg};
  swapped.append(wt.getShape().begin() + 2, wt.getShape().end());
  wf = g.reshape(wf, wt.clone(swapped));
  for (int64_t i = 0; i < spatial; ++i) {
    int64_t k = wt.getDimSize(2 + i);
    wf = sliceDim(g, wf, 2 + i, k - 1, k, -1);
  }
  SmallVector<int64_t> ones(spatial, 1);
  Value dx = conv(g, xt, d, wf, ones, padsX, dilations, groups);

  // dw, per group: the input (channels as batch) correlated with the
  // cotangent (outputs as filters, the batch as channels), strides and
  // dilations exchanged, cropped to the kernel.
  SmallVector<Value> parts;
  SmallVector<int64_t> swap01 = {1, 0};
  for (int64_t i = 0; i < spatial; ++i)
    swap01.push_back(2 + i);
  for (int64_t grp = 0; grp < groups; ++grp) {
    Value xg = g.transpose(sliceDim(g, x, 1, grp * cg, cg), swap01);
    Value dyg = g.transpose(sliceDim(g, dy, 1, grp * mg, mg), swap01);
    SmallVector<int64_t> shape = {cg, mg};
    for (int64_t i = 0; i < spatial; ++i) {
      int64_t span = xt.getDimSize(2 + i) + pads[i] + pads[spatial + i] -
                     (strides[i] * (dyt.getDimSize(2 + i) - 1) + 1);
      shape.push_back(span / dilations[i] + 1);
    }
    Value r = conv(g, xt.clone(shape), xg, dyg, dilations, pads, strides, 1);
    for (int64_t i = 0; i < spatial; ++i)
      r = sliceDim(g, r, 2 + i, 0, wt.getDimSize(2 + i));
    parts.push_back(g.transpose(r, swap01));
  }
  Value dw = parts.size() == 1
                 ? parts.front()
                 : g.make<ConcatOp>(wt, ValueRange(parts),
                                    g.b.getI64IntegerAttr(0));
  dxs.assign({dx, dw});
  if (Value bias = op.getBias()) {
    SmallVector<int64_t> axes = {0};
    for (int64_t i = 0; i < spatial; ++i)
      axes.push_back(2 + i);
    dxs.push_back(g.make<ReduceSumOp>(bias.getType(), dy,
                                      g.b.getDenseI64ArrayAttr(axes),
                                      g.b.getBoolAttr(false)));
  }
  return success();
}

/// `x` with `before` and `after` elements of `value` added along `dim`.
static Value padDim(ValueBuilder &g, Value x, int64_t dim, int64_t before,
                    int64_t after, double value) {
  if (before == 0 && after == 0)
    return x;
  auto type = cast<RankedTensorType>(x.getType());
  SmallVector<Value> parts;
  auto block = [&](int64_t extent) {
    SmallVector<int64_t> shape(type.getShape());
    shape[dim] = extent;
    return g.splat(type.clone(shape), value);
  };
  if (before > 0)
    parts.push_back(block(before));
  parts.push_back(x);
  if (after > 0)
    parts.push_back(block(after));
  SmallVector<int64_t> shape(type.getShape());
  shape[dim] += before + after;
  return g.make<ConcatOp>(type.clone(shape), ValueRange(parts),
                          g.b.getI64IntegerAttr(dim));
}

static LogicalResult rule(SliceOp op, ValueBuilder &g, ArrayRef<Value> dys,
                          SmallVectorImpl<Value> &dxs) {
  // The cotangent scattered back into zeros, one dim at a time: reversed
  // for a negative step, dilated by the step, padded to the start.
  auto in = cast<RankedTensorType>(op.getInput().getType());
  auto out = cast<RankedTensorType>(op.getType());
  Value dx = single(dys);
  for (int64_t d = 0; d < in.getRank(); ++d) {
    int64_t n = out.getDimSize(d);
    int64_t start = op.getStarts()[d], step = op.getSteps()[d];
    if (n == 0)
      return op.emitOpError("gradient of an empty slice is not supported");
    if (step < 0) {
      dx = sliceDim(g, dx, d, n - 1, n, -1);
      start += (n - 1) * step;
      step = -step;
    }
    dx = dilateDim(g, dx, d, step);
    int64_t covered = (n - 1) * step + 1;
    dx = padDim(g, dx, d, start, in.getDimSize(d) - start - covered, 0.0);
  }
  dxs.assign({dx});
  return success();
}

/// Pooling: each window position (offset `k` in the window) reads the
/// strided slice `k * dilation + o * stride` of the padded input. The
/// cotangent of each window goes to its elements (max: the first maximum
/// in window order; average: every counted element, divided by the count),
/// put back by dilating by the stride and padding to the offset, summed
/// over the offsets and cropped to the input.
template <typename OpT>
static LogicalResult poolRule(OpT op, ValueBuilder &g, ArrayRef<Value> dys,
                              SmallVectorImpl<Value> &dxs) {
  constexpr bool isMax = std::is_same_v<OpT, MaxPoolOp>;
  Value x = op.getInput(), y = op.getResult(), dy = single(dys);
  auto xt = cast<RankedTensorType>(x.getType());
  auto yt = cast<RankedTensorType>(y.getType());
  int64_t spatial = xt.getRank() - 2;
  ArrayRef<int64_t> kernel = op.getKernel(), strides = op.getStrides(),
                    pads = op.getPads();
  SmallVector<int64_t> dilations(spatial, 1);
  if constexpr (isMax)
    dilations.assign(op.getDilations().begin(), op.getDilations().end());
  // The padded extents: pads, plus what ceil_mode windows reach beyond.
  SmallVector<int64_t> extra(spatial);
  Value padded = x;
  Value inBounds = g.splat(xt, 1.0);
  double padValue = isMax ? -std::numeric_limits<double>::infinity() : 0.0;
  for (int64_t i = 0; i < spatial; ++i) {
    int64_t dim = 2 + i;
    int64_t reach = strides[i] * (yt.getDimSize(dim) - 1) +
                    dilations[i] * (kernel[i] - 1) + 1;
    int64_t have = xt.getDimSize(dim) + pads[i] + pads[spatial + i];
    extra[i] = std::max<int64_t>(0, reach - have);
    int64_t end = pads[spatial + i] + extra[i];
    padded = padDim(g, padded, dim, pads[i], end, padValue);
    if constexpr (!isMax) {
      // Counted positions: the input, and the pads with count_include_pad.
      double padCount = op.getCountIncludePad() ? 1.0 : 0.0;
      Value counted = padDim(g, inBounds, dim, pads[i], pads[spatial + i],
                             padCount);
      inBounds = padDim(g, counted, dim, 0, extra[i], 0.0);
    }
  }
  auto windowSlice = [&](Value v, ArrayRef<int64_t> offset) {
    for (int64_t i = 0; i < spatial; ++i)
      v = sliceDim(g, v, 2 + i, offset[i] * dilations[i],
                   yt.getDimSize(2 + i), strides[i]);
    return v;
  };
  // Every offset of the window, in row-major order.
  SmallVector<SmallVector<int64_t>> offsets = {{}};
  for (int64_t i = 0; i < spatial; ++i) {
    SmallVector<SmallVector<int64_t>> next;
    for (const auto &prefix : offsets)
      for (int64_t k = 0; k < kernel[i]; ++k) {
        next.push_back(prefix);
        next.back().push_back(k);
      }
    offsets = std::move(next);
  }
  Value share;
  if constexpr (!isMax) {
    Value count;
    for (const auto &offset : offsets) {
      Value c = windowSlice(inBounds, offset);
      count = count ? g.add(count, c) : c;
    }
    share = g.div(dy, count);
  }
  auto boolType = yt.clone(g.b.getI1Type());
  Value taken;
  Value grad;
  for (const auto &offset : offsets) {
    Value contribution;
    if constexpr (isMax) {
      Value hit = g.compare<EqualOp>(windowSlice(padded, offset), y);
      if (taken)
        hit = g.make<AndOp>(boolType, hit, g.make<NotOp>(boolType, taken));
      taken = taken ? g.make<OrOp>(boolType, taken, hit) : hit;
      contribution = g.where(hit, dy);
    } else {
      contribution = g.mul(share, windowSlice(inBounds, offset));
    }
    // Back to the padded positions of this offset.
    for (int64_t i = 0; i < spatial; ++i) {
      int64_t dim = 2 + i;
      contribution = dilateDim(g, contribution, dim, strides[i]);
      int64_t length =
          cast<RankedTensorType>(contribution.getType()).getDimSize(dim);
      int64_t begin = offset[i] * dilations[i];
      int64_t total = cast<RankedTensorType>(padded.getType()).getDimSize(dim);
      contribution =
          padDim(g, contribution, dim, begin, total - begin - length, 0.0);
    }
    grad = grad ? g.add(grad, contribution) : contribution;
  }
  for (int64_t i = 0; i < spatial; ++i)
    grad = sliceDim(g, grad, 2 + i, pads[i], xt.getDimSize(2 + i));
  dxs.assign({grad});
  return success();
}

/// The one-hot encoding of the class indices `indices` (shape I, negative
/// ones counting from the end) over `classes` classes: `I + [classes]` of
/// `elementType`, 1 where the last coordinate is the index.
static Value oneHot(ValueBuilder &g, Value indices, int64_t classes,
                    Type elementType) {
  auto idxType = cast<RankedTensorType>(indices.getType());
  Type idxElt = idxType.getElementType();
  int64_t rank = idxType.getRank();
  SmallVector<int64_t> shape(idxType.getShape());
  shape.push_back(classes);
  auto fullIdx = RankedTensorType::get(shape, idxElt);
  // Negative indices count from the end.
  auto splatIdx = [&](RankedTensorType type, int64_t v) -> Value {
    return ConstantOp::create(
        g.b, g.loc,
        DenseElementsAttr::get(type, g.b.getIntegerAttr(idxElt, v)));
  };
  Value negative = g.compare<LessOp>(indices, splatIdx(idxType, 0));
  Value wrapped = g.make<SelectOp>(
      idxType, negative,
      g.make<AddOp>(idxType, indices, splatIdx(idxType, classes)), indices);
  SmallVector<int64_t> leading(rank);
  std::iota(leading.begin(), leading.end(), 0);
  Value idx = g.make<BroadcastInDimOp>(fullIdx, wrapped,
                                       g.b.getDenseI64ArrayAttr(leading));
  SmallVector<APInt> values;
  unsigned width = idxElt.getIntOrFloatBitWidth();
  for (int64_t c = 0; c < classes; ++c)
    values.push_back(APInt(width, c, /*isSigned=*/true));
  Value iota = ConstantOp::create(
      g.b, g.loc,
      DenseElementsAttr::get(RankedTensorType::get({classes}, idxElt),
                             values));
  Value iotaFull = g.make<BroadcastInDimOp>(
      fullIdx, iota, g.b.getDenseI64ArrayAttr({rank}));
  Value hit = g.compare<EqualOp>(idx, iotaFull);
  auto out = RankedTensorType::get(shape, elementType);
  return g.make<SelectOp>(out, hit, g.splat(out, 1.0), g.splat(out, 0.0));
}

static LogicalResult rule(GatherOp op, ValueBuilder &g, ArrayRef<Value> dys,
                          SmallVectorImpl<Value> &dxs) {
  // The cotangent summed into the gathered rows: an einsum of dy with the
  // one-hot encoding of the indices (memory |indices| x extent).
  auto data = cast<RankedTensorType>(op.getData().getType());
  if (!isa<FloatType>(data.getElementType())) {
    dxs.assign({Value(), Value()});
    return success();
  }
  auto idxType = cast<RankedTensorType>(op.getIndices().getType());
  int64_t axis = op.getAxis(), k = idxType.getRank();
  int64_t rank = data.getRank();
  if (rank + k + 1 > 26)
    return op.emitOpError("gradient of a gather of rank above 25 is not "
                          "supported");
  Value hot =
      oneHot(g, op.getIndices(), data.getDimSize(axis), data.getElementType());
  // Labels: a.. for data dims before the axis, then the index dims, then
  // the data dims after it; `z` is the axis.
  std::string pre, idx, post;
  char next = 'a';
  for (int64_t d = 0; d < axis; ++d)
    pre.push_back(next++);
  for (int64_t d = 0; d < k; ++d)
    idx.push_back(next++);
  for (int64_t d = axis + 1; d < rank; ++d)
    post.push_back(next++);
  std::string equation =
      pre + idx + post + "," + idx + "z->" + pre + "z" + post;
  Value grad = g.make<EinsumOp>(data, ValueRange{single(dys), hot},
                                g.b.getStringAttr(equation));
  dxs.assign({grad, Value()});
  return success();
}

static LogicalResult rule(SoftmaxCrossEntropyOp op, ValueBuilder &g,
                          ArrayRef<Value> dys, SmallVectorImpl<Value> &dxs) {
  // With lp = log_softmax(scores, 1), w the applied per-element weights and
  // g the per-element cotangent of the loss: d lp = -onehot * w * g (plus
  // the cotangent of the log_prob result), then through log_softmax.
  Value scores = op.getScores(), labels = op.getLabels();
  Value lp = op.getLogProb();
  auto type = cast<RankedTensorType>(scores.getType());
  auto labelType = cast<RankedTensorType>(labels.getType());
  Type elt = type.getElementType();
  int64_t classes = type.getDimSize(1), k = labelType.getRank();
  auto perElement = labelType.clone(elt);
  Value dlp = dys[1];
  if (Value dloss = dys[0]) {
    Value safe = labels;
    Value keep;
    if (std::optional<int64_t> ignore = op.getIgnoreIndex()) {
      Value ignored = ConstantOp::create(
          g.b, g.loc,
          DenseElementsAttr::get(
              labelType,
              g.b.getIntegerAttr(labelType.getElementType(), *ignore)));
      Value hitIgnore = g.compare<EqualOp>(labels, ignored);
      Value zero = ConstantOp::create(
          g.b, g.loc,
          DenseElementsAttr::get(
              labelType, g.b.getIntegerAttr(labelType.getElementType(), 0)));
      safe = g.make<SelectOp>(labelType, hitIgnore, zero, labels);
      keep = g.make<SelectOp>(perElement, hitIgnore,
                              g.splat(perElement, 0.0),
                              g.splat(perElement, 1.0));
    }
    Value w = keep ? keep : g.splat(perElement, 1.0);
    if (Value weights = op.getWeights())
      w = g.mul(w, g.make<GatherOp>(perElement, weights, safe,
                                    g.b.getI64IntegerAttr(0)));
    Value perLoss;
    switch (op.getReduction()) {
    case LossReduction::None:
      perLoss = dloss;
      break;
    case LossReduction::Sum:
      perLoss = g.make<BroadcastInDimOp>(perElement,
                                         g.reshape(dloss, RankedTensorType::get(
                                                              {}, elt)),
                                         g.b.getDenseI64ArrayAttr({}));
      break;
    case LossReduction::Mean: {
      SmallVector<int64_t> all(k);
      std::iota(all.begin(), all.end(), 0);
      auto scalar = RankedTensorType::get({}, elt);
      Value total = g.make<ReduceSumOp>(scalar, w,
                                        g.b.getDenseI64ArrayAttr(all),
                                        g.b.getBoolAttr(false));
      Value share = g.div(g.reshape(dloss, scalar), total);
      perLoss = g.make<BroadcastInDimOp>(perElement, share,
                                         g.b.getDenseI64ArrayAttr({}));
      break;
    }
    }
    Value scale = g.neg(g.mul(w, perLoss));
    // One-hot as [N, D..., C], moved to [N, C, D...].
    Value hot = oneHot(g, safe, classes, elt);
    SmallVector<int64_t> perm = {0, k};
    for (int64_t d = 1; d < k; ++d)
      perm.push_back(d);
    hot = g.transpose(hot, perm);
    SmallVector<int64_t> dims = {0};
    for (int64_t d = 2; d <= k; ++d)
      dims.push_back(d);
    Value spread = g.make<BroadcastInDimOp>(type, scale,
                                            g.b.getDenseI64ArrayAttr(dims));
    Value fromLoss = g.mul(hot, spread);
    dlp = dlp ? g.add(dlp, fromLoss) : fromLoss;
  }
  // Through log_softmax along axis 1.
  Value total = g.expand(g.sumKeep(dlp, {1}), type);
  Value dscores = g.sub(dlp, g.mul(g.make<ExpOp>(type, lp), total));
  dxs.assign({dscores, Value()});
  if (op.getWeights())
    dxs.push_back(Value());
  return success();
}

//===----------------------------------------------------------------------===//
// External models
//===----------------------------------------------------------------------===//

namespace {
/// Forwards the interface to the rule for `OpT`.
template <typename OpT>
struct GradientModel
    : public DnnGradientOpInterface::ExternalModel<GradientModel<OpT>, OpT> {
  LogicalResult buildGradients(Operation *op, OpBuilder &b,
                               ArrayRef<Value> resultGrads,
                               SmallVectorImpl<Value> &operandGrads) const {
    ValueBuilder g(b, op);
    operandGrads.clear();
    LogicalResult result = success();
    if constexpr (llvm::is_one_of<OpT, FloorOp, CeilOp, RoundOp>::value)
      result = zeroRule(op, g, resultGrads, operandGrads);
    else if constexpr (llvm::is_one_of<OpT, AddOp, SubOp, MulOp, DivOp,
                                       PowOp, MaxOp, MinOp>::value)
      result = binaryRule(cast<OpT>(op), g, resultGrads, operandGrads);
    else if constexpr (llvm::is_one_of<OpT, MaxPoolOp, AvgPoolOp>::value)
      result = poolRule(cast<OpT>(op), g, resultGrads, operandGrads);
    else if constexpr (llvm::is_one_of<OpT, ReduceSumOp, ReduceMeanOp,
                                       ReduceMaxOp, ReduceMinOp,
                                       ReduceProdOp>::value)
      result = reduceRule(cast<OpT>(op), g, resultGrads, operandGrads);
    else if constexpr (llvm::is_one_of<
                           OpT, NegOp, ReluOp, LeakyReluOp, AbsOp, TanhOp,
                           SigmoidOp, ExpOp, LogOp, SqrtOp, ReciprocalOp,
                           SinOp, CosOp, TanOp, SinhOp, CoshOp, ErfOp, AsinOp,
                           AcosOp, AtanOp, AsinhOp, AcoshOp, AtanhOp,
                           GeluOp>::value)
      result = unaryRule(cast<OpT>(op), g, resultGrads, operandGrads);
    else
      result = rule(cast<OpT>(op), g, resultGrads, operandGrads);
    if (succeeded(result))
      assert(operandGrads.size() == op->getNumOperands() &&
             "a rule gives one cotangent per operand");
    return result;
  }
};

/// Attaches GradientModel to each of `OpTs`.
template <typename... OpTs> void attachGradientModels(MLIRContext &ctx) {
  (OpTs::template attachInterface<GradientModel<OpTs>>(ctx), ...);
}
} // namespace

void DnnDialect::registerGradientModels() {
  attachGradientModels<
      FloorOp, CeilOp, RoundOp, AddOp, SubOp, MulOp, DivOp, PowOp, MaxOp,
      MinOp, ReduceSumOp, ReduceMeanOp, ReduceMaxOp, ReduceMinOp, ReduceProdOp,
      NegOp, ReluOp, LeakyReluOp, AbsOp, TanhOp, SigmoidOp, ExpOp, LogOp,
      SqrtOp, ReciprocalOp, SinOp, CosOp, TanOp, SinhOp, CoshOp, ErfOp, AsinOp,
      AcosOp, AtanOp, AsinhOp, AcoshOp, AtanhOp, GeluOp, SelectOp, CastOp,
      ReshapeOp, BroadcastInDimOp, TransposeOp, SliceOp, ConcatOp, MatMulOp,
      EinsumOp, SoftmaxOp, LogSoftmaxOp, LayerNormOp, DropoutOp, GatherOp,
      SoftmaxCrossEntropyOp, ConvOp, MaxPoolOp, AvgPoolOp>(
      *getContext());
}
