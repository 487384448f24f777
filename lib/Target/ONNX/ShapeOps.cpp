//===- ShapeOps.cpp - ONNX shape and data-movement ops ----------*- C++ -*-===//
//
// The shape and data-movement op family: Reshape, Flatten, (Un)Squeeze,
// Transpose, Concat, Split, Slice, Expand, and, composed, Tile,
// DepthToSpace, SpaceToDepth, Trilu and Pad.
//
//===----------------------------------------------------------------------===//

#include "OpHandlers.h"

#include <limits>
#include <numeric>

using namespace mlir;
using namespace dnnc;
using namespace dnnc::onnx_import;
namespace dnn = dnnc::dnn;

static LogicalResult setReshaped(NodeImporter &n, ArrayRef<int64_t> shape) {
  return n.setResult(n.reshape(n.input(0), shape));
}

LogicalResult dnnc::onnx_import::importReshape(NodeImporter &n) {
  if (failed(n.checkArity(2, 2, 1)))
    return failure();
  auto target = n.constantInts(1, "shape");
  if (failed(target))
    return failure();
  auto allowZero = n.getInt("allowzero", 0);
  if (failed(allowZero))
    return failure();
  ArrayRef<int64_t> in = shapeOf(n.input(0));
  SmallVector<int64_t> shape;
  int inferIdx = -1;
  for (auto [i, d] : llvm::enumerate(*target)) {
    if (d == 0 && !*allowZero) {
      if (i >= in.size())
        return n.fail("shape entry 0 at index " + Twine(i) +
                      " copies a dimension the input does not have");
      shape.push_back(in[i]);
    } else if (d == -1) {
      if (inferIdx >= 0)
        return n.fail("shape has more than one -1");
      inferIdx = i;
      shape.push_back(1);
    } else if (d < 0) {
      return n.fail("shape has negative dimension " + Twine(d));
    } else {
      shape.push_back(d);
    }
  }
  // The target comes from the model: bound it before multiplying it out.
  if (failed(checkSize(n, shape)))
    return failure();
  int64_t total = product(in), known = product(shape);
  // A re-batched graph (dnnc --batch on a fixed batch): a shape whose first
  // entry states the old batch (or a multiple, as batch x heads) scales
  // with it when the data grew by the batch factor.
  if (n.rebatch.factor > 1 && inferIdx < 0 && !shape.empty() &&
      (*target)[0] > 0 && (*target)[0] % n.rebatch.from == 0 &&
      known != total && known * n.rebatch.factor == total) {
    shape[0] *= n.rebatch.factor;
    known = total;
  }
  if (inferIdx >= 0) {
    if (known == 0 || total % known != 0)
      return n.fail("cannot infer the -1 dimension reshaping " + Twine(total) +
                    " elements");
    shape[inferIdx] = total / known;
  }
  if (product(shape) != total)
    return n.fail("cannot reshape " + Twine(total) + " elements to " +
                  Twine(product(shape)) + " (shape mismatch)");
  return setReshaped(n, shape);
}

LogicalResult dnnc::onnx_import::importFlatten(NodeImporter &n) {
  if (failed(n.checkArity(1, 1, 1)))
    return failure();
  ArrayRef<int64_t> in = shapeOf(n.input(0));
  int64_t rank = in.size();
  auto axis = n.getInt("axis", 1);
  if (failed(axis))
    return failure();
  if (*axis < -rank || *axis > rank)
    return n.fail("axis " + Twine(*axis) + " is out of range");
  int64_t a = *axis < 0 ? *axis + rank : *axis;
  return setReshaped(n, {product(in.take_front(a)), product(in.drop_front(a))});
}

LogicalResult dnnc::onnx_import::importSqueeze(NodeImporter &n) {
  if (failed(n.checkArity(1, n.opset >= 13 ? 2 : 1, 1)))
    return failure();
  auto axes = axesAttrOrInput(n, 13);
  if (failed(axes))
    return failure();
  ArrayRef<int64_t> in = shapeOf(n.input(0));
  SmallVector<int64_t> drop;
  if (*axes) {
    auto norm = normAxes(n, **axes, in.size());
    if (failed(norm))
      return failure();
    drop = *norm;
    for (int64_t a : drop)
      if (in[a] != 1)
        return n.fail("cannot squeeze dimension " + Twine(a) + " of extent " +
                      Twine(in[a]));
  } else {
    for (auto [i, d] : llvm::enumerate(in))
      if (d == 1)
        drop.push_back(i);
  }
  SmallVector<int64_t> shape;
  for (auto [i, d] : llvm::enumerate(in))
    if (!llvm::is_contained(drop, static_cast<int64_t>(i)))
      shape.push_back(d);
  return setReshaped(n, shape);
}

LogicalResult dnnc::onnx_import::importUnsqueeze(NodeImporter &n) {
  if (failed(n.checkArity(1, n.opset >= 13 ? 2 : 1, 1)))
    return failure();
  auto axes = axesAttrOrInput(n, 13);
  if (failed(axes))
    return failure();
  if (!*axes)
    return n.fail("axes are required");
  ArrayRef<int64_t> in = shapeOf(n.input(0));
  int64_t outRank = in.size() + (*axes)->size();
  auto norm = normAxes(n, **axes, outRank);
  if (failed(norm))
    return failure();
  SmallVector<int64_t> shape;
  size_t next = 0;
  for (int64_t i = 0; i < outRank; ++i)
    shape.push_back(llvm::is_contained(*norm, i) ? 1 : in[next++]);
  return setReshaped(n, shape);
}

LogicalResult dnnc::onnx_import::importTranspose(NodeImporter &n) {
  if (failed(n.checkArity(1, 1, 1)))
    return failure();
  Value x = n.input(0);
  auto perm = n.getInts("perm");
  if (failed(perm))
    return failure();
  SmallVector<int64_t> p;
  if (*perm)
    p = **perm;
  else
    for (int64_t i = rankOf(x) - 1; i >= 0; --i)
      p.push_back(i);
  return n.setResult(
      n.build<dnn::TransposeOp>({}, x, n.b.getDenseI64ArrayAttr(p)));
}

LogicalResult dnnc::onnx_import::importConcat(NodeImporter &n) {
  if (failed(n.checkArity(1, std::numeric_limits<int>::max(), 1)))
    return failure();
  auto axis = n.getInt("axis", std::numeric_limits<int64_t>::min());
  if (failed(axis))
    return failure();
  if (*axis == std::numeric_limits<int64_t>::min())
    return n.fail("required attribute 'axis' is missing");
  SmallVector<Value> inputs;
  for (int i = 0; i < n.numInputs(); ++i)
    if (n.hasInput(i))
      inputs.push_back(n.input(i));
  auto a = normAxis(n, *axis, rankOf(inputs[0]));
  if (failed(a))
    return failure();
  auto r =
      n.build<dnn::ConcatOp>({}, ValueRange(inputs), n.b.getI64IntegerAttr(*a));
  if (failed(r))
    return failure();
  n.setOutput(0, *r);
  return success();
}

LogicalResult dnnc::onnx_import::importSplit(NodeImporter &n) {
  if (failed(n.checkArity(1, n.opset >= 13 ? 2 : 1,
                          std::numeric_limits<int>::max())))
    return failure();
  Value x = n.input(0);
  auto axisAttr = n.getInt("axis", 0);
  if (failed(axisAttr))
    return failure();
  auto axis = normAxis(n, *axisAttr, rankOf(x));
  if (failed(axis))
    return failure();
  int64_t extent = shapeOf(x)[*axis];
  int64_t numOutputs = n.node.output_size();
  SmallVector<int64_t> sizes;
  if (n.opset >= 13 && n.hasInput(1)) {
    auto s = n.constantInts(1, "split");
    if (failed(s))
      return failure();
    sizes = *s;
  } else if (n.opset < 13) {
    auto s = n.getInts("split");
    if (failed(s))
      return failure();
    if (*s)
      sizes = **s;
  }
  if (sizes.empty()) {
    auto num = n.getInt("num_outputs", numOutputs);
    if (failed(num))
      return failure();
    if (*num < 1 || *num != numOutputs)
      return n.fail("num_outputs does not match the number of outputs");
    int64_t chunk = (extent + *num - 1) / *num;
    if (n.opset < 18 && extent % *num != 0)
      return n.fail("dimension of extent " + Twine(extent) +
                    " cannot be split evenly into " + Twine(*num));
    for (int64_t i = 0, left = extent; i < *num; ++i, left -= chunk)
      sizes.push_back(std::max<int64_t>(0, std::min(chunk, left)));
  }
  if (static_cast<int64_t>(sizes.size()) != numOutputs)
    return n.fail("split has " + Twine(sizes.size()) + " sizes for " +
                  Twine(numOutputs) + " outputs");
  if (llvm::any_of(sizes, [](int64_t s) { return s < 0; }) ||
      product(sizes) < 0 ||
      std::accumulate(sizes.begin(), sizes.end(), int64_t(0)) != extent)
    return n.fail("split sizes do not add up to the dimension's extent " +
                  Twine(extent));
  int64_t offset = 0;
  for (int64_t i = 0; i < numOutputs; ++i) {
    auto r = sliceAxis(n, x, *axis, offset, sizes[i], 1);
    if (failed(r))
      return failure();
    n.setOutput(i, *r);
    offset += sizes[i];
  }
  return success();
}

LogicalResult dnnc::onnx_import::importSlice(NodeImporter &n) {
  if (failed(n.checkArity(n.opset < 10 ? 1 : 3, n.opset < 10 ? 1 : 5, 1)))
    return failure();
  Value x = n.input(0);
  int64_t rank = rankOf(x);
  SmallVector<int64_t> starts, ends, axes, steps;
  if (n.opset < 10) {
    auto s = n.getRequiredInts("starts");
    auto e = n.getRequiredInts("ends");
    auto a = n.getInts("axes");
    if (failed(s) || failed(e) || failed(a))
      return failure();
    starts = *s;
    ends = *e;
    if (*a)
      axes = **a;
  } else {
    auto s = n.constantInts(1, "starts");
    if (failed(s))
      return failure();
    auto e = n.constantInts(2, "ends");
    if (failed(e))
      return failure();
    starts = *s;
    ends = *e;
    if (n.hasInput(3)) {
      auto a = n.constantInts(3, "axes");
      if (failed(a))
        return failure();
      axes = *a;
    }
    if (n.hasInput(4)) {
      auto st = n.constantInts(4, "steps");
      if (failed(st))
        return failure();
      steps = *st;
    }
  }
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i)
      axes.push_back(i);
  if (steps.empty())
    steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() ||
      steps.size() != starts.size())
    return n.fail("starts, ends, axes and steps differ in length");
  SmallVector<int64_t> outStarts(rank, 0), outSteps(rank, 1);
  SmallVector<int64_t> shape(shapeOf(x));
  SmallVector<bool> seen(rank, false);
  for (size_t i = 0; i < starts.size(); ++i) {
    auto a = normAxis(n, axes[i], rank);
    if (failed(a))
      return failure();
    if (seen[*a])
      return n.fail("axes contain a duplicate");
    seen[*a] = true;
    int64_t dim = shape[*a], step = steps[i];
    if (step == 0)
      return n.fail("step is zero");
    int64_t s = starts[i], e = ends[i];
    if (s < 0)
      s = s < -dim ? -1 : s + dim;
    if (e < 0)
      e = e < -dim ? -1 : e + dim;
    int64_t size;
    if (step > 0) {
      s = std::clamp<int64_t>(s, 0, dim);
      e = std::clamp<int64_t>(e, 0, dim);
      size = e > s ? (e - s + step - 1) / step : 0;
    } else {
      s = std::clamp<int64_t>(s, -1, dim - 1);
      e = std::clamp<int64_t>(e, -1, dim - 1);
      size = s > e ? (s - e + (-step) - 1) / (-step) : 0;
    }
    outStarts[*a] = size > 0 ? s : 0;
    outSteps[*a] = step;
    shape[*a] = size;
  }
  return n.setResult(n.build<dnn::SliceOp>(
      RankedTensorType::get(shape, eltOf(x)), x,
      n.b.getDenseI64ArrayAttr(outStarts), n.b.getDenseI64ArrayAttr(outSteps)));
}

LogicalResult dnnc::onnx_import::importExpand(NodeImporter &n) {
  if (failed(n.checkArity(2, 2, 1)))
    return failure();
  auto target = n.constantInts(1, "shape");
  if (failed(target))
    return failure();
  Value x = n.input(0);
  auto shape = dnn::broadcastShapes(shapeOf(x), *target);
  if (failed(shape))
    return n.fail("input shape is not broadcastable to the requested shape");
  return n.setResult(n.broadcastTo(x, *shape));
}

/// Tile-6 (constant repeats): x reshaped to `[1, d0, 1, d1, ...]`, broadcast
/// to `[r0, d0, r1, d1, ...]` and reshaped to `[r0 * d0, r1 * d1, ...]`.
LogicalResult dnnc::onnx_import::importTile(NodeImporter &n) {
  if (failed(n.checkArity(2, 2, 1)))
    return failure();
  Value x = n.input(0);
  auto repeats = n.constantInts(1, "repeats");
  if (failed(repeats))
    return failure();
  if ((int64_t)repeats->size() != rankOf(x))
    return n.fail("repeats has " + Twine(repeats->size()) +
                  " values for an input of rank " + Twine(rankOf(x)));
  SmallVector<int64_t> split, spread, result;
  for (auto [d, r] : llvm::zip(shapeOf(x), *repeats)) {
    if (r < 0)
      return n.fail("repeats must be non-negative");
    split.append({1, d});
    spread.append({r, d});
  }
  if (failed(checkSize(n, spread)))
    return failure();
  for (auto [d, r] : llvm::zip(shapeOf(x), *repeats))
    result.push_back(r * d);
  Composer c(n);
  return c.finish(
      c.reshape(c.broadcastTo(c.reshape(x, split), spread), result));
}

/// DepthToSpace-1 (DCR; mode CRD from opset 11) and SpaceToDepth-1: a
/// reshape, a transpose and a reshape of `[N, C, H, W]`.
LogicalResult dnnc::onnx_import::importDepthToSpace(NodeImporter &n) {
  if (failed(n.checkArity(1, 1, 1)))
    return failure();
  Value x = n.input(0);
  auto block = n.getInt("blocksize", 0);
  auto mode = n.getString("mode", "DCR");
  if (failed(block) || failed(mode))
    return failure();
  if (rankOf(x) != 4)
    return n.fail("input must be [N, C, H, W]");
  if (*mode != "DCR" && *mode != "CRD")
    return n.fail("attribute 'mode' must be 'DCR' or 'CRD', got '" + *mode +
                  "'");
  int64_t b = *block, N = shapeOf(x)[0], C = shapeOf(x)[1], H = shapeOf(x)[2],
          W = shapeOf(x)[3];
  if (b <= 0 || b > C / b || C % (b * b) != 0)
    return n.fail("blocksize " + Twine(b) + " must be positive and its " +
                  "square must divide the " + Twine(C) + " channels");
  Composer c(n);
  Value split = *mode == "DCR"
                    ? c.transpose(c.reshape(x, {N, b, b, C / (b * b), H, W}),
                                  {0, 3, 4, 1, 5, 2})
                    : c.transpose(c.reshape(x, {N, C / (b * b), b, b, H, W}),
                                  {0, 1, 4, 2, 5, 3});
  return c.finish(c.reshape(split, {N, C / (b * b), H * b, W * b}));
}

LogicalResult dnnc::onnx_import::importSpaceToDepth(NodeImporter &n) {
  if (failed(n.checkArity(1, 1, 1)))
    return failure();
  Value x = n.input(0);
  auto block = n.getInt("blocksize", 0);
  if (failed(block))
    return failure();
  if (rankOf(x) != 4)
    return n.fail("input must be [N, C, H, W]");
  int64_t b = *block, N = shapeOf(x)[0], C = shapeOf(x)[1], H = shapeOf(x)[2],
          W = shapeOf(x)[3];
  if (b <= 0 || H % b != 0 || W % b != 0)
    return n.fail("blocksize " + Twine(b) + " must be positive and divide " +
                  "the height " + Twine(H) + " and width " + Twine(W));
  Composer c(n);
  Value split =
      c.transpose(c.reshape(x, {N, C, H / b, b, W / b, b}), {0, 3, 5, 1, 2, 4});
  return c.finish(c.reshape(split, {N, C * b * b, H / b, W / b}));
}

/// Trilu-14 (constant k): x where the diagonal offset `col - row` is
/// `>= k` (upper) or `<= k` (lower) in the last two dimensions, else 0.
LogicalResult dnnc::onnx_import::importTrilu(NodeImporter &n) {
  if (failed(n.checkArity(1, 2, 1)))
    return failure();
  Value x = n.input(0);
  if (rankOf(x) < 2)
    return n.fail("input must have rank 2 or more");
  auto upper = n.getInt("upper", 1);
  if (failed(upper))
    return failure();
  int64_t k = 0;
  if (n.hasInput(1)) {
    auto v = n.constantInts(1, "k");
    if (failed(v))
      return failure();
    if (v->size() != 1)
      return n.fail("k must hold one value");
    k = v->front();
  }
  // The offsets from a row index `[rows, 1]` and a column index `[cols]`
  // (no `rows x cols` constant).
  int64_t rows = shapeOf(x)[rankOf(x) - 2], cols = shapeOf(x).back();
  Composer c(n);
  auto index = [&](int64_t extent, ArrayRef<int64_t> shape) {
    SmallVector<int64_t> values(extent);
    std::iota(values.begin(), values.end(), 0);
    return c.broadcastTo(c.reshape(n.constantI64(values), shape), shapeOf(x));
  };
  Value offset =
      c.binary<dnn::SubOp>(index(cols, {cols}), index(rows, {rows, 1}));
  Value bound = c.splat(offset, k);
  Value keep = *upper ? c.compare<dnn::GreaterEqualOp>(offset, bound)
                      : c.compare<dnn::LessEqualOp>(offset, bound);
  return c.finish(c.select(keep, x, c.splat(x, 0.0)));
}

/// Pad-2 (pads as an attribute) and Pad-11 (pads, constant_value and, from
/// opset 18, axes as inputs): per padded axis, the input between the parts
/// that `mode` makes (constant, edge, reflect, wrap), or a slice where a pad
/// is negative.
LogicalResult dnnc::onnx_import::importPad(NodeImporter &n) {
  bool asInputs = n.opset >= 11;
  if (failed(n.checkArity(1, asInputs ? 4 : 1, 1)))
    return failure();
  Value x = n.input(0);
  int64_t rank = rankOf(x);
  auto mode = n.getString("mode", "constant");
  if (failed(mode))
    return failure();
  bool wrapAllowed = n.opset >= 19;
  if (*mode != "constant" && *mode != "edge" && *mode != "reflect" &&
      (*mode != "wrap" || !wrapAllowed))
    return n.fail("attribute 'mode' must be constant, edge, reflect" +
                  Twine(wrapAllowed ? " or wrap" : " (wrap from opset 19)") +
                  ", got '" + *mode + "'");
  SmallVector<int64_t> pads;
  // The padding value: `padValue` (Pad-11's input 2) or `value`.
  Value padValue;
  double value = 0;
  SmallVector<int64_t> axes;
  if (asInputs) {
    auto p = n.constantInts(1, "pads");
    if (failed(p))
      return failure();
    pads = *p;
    if (n.hasInput(2)) {
      padValue = n.input(2);
      if (eltOf(padValue) != eltOf(x) || product(shapeOf(padValue)) != 1)
        return n.fail("constant_value (input 2) must be one value of the "
                      "input's element type");
    }
    if (n.hasInput(3)) {
      auto a = n.constantInts(3, "axes");
      if (failed(a))
        return failure();
      for (int64_t axis : *a) {
        auto norm = normAxis(n, axis, rank);
        if (failed(norm))
          return failure();
        axes.push_back(*norm);
      }
    }
  } else {
    auto p = n.getRequiredInts("pads");
    auto v = n.getFloat("value", 0.0f);
    if (failed(p) || failed(v))
      return failure();
    pads = *p;
    value = *v;
  }
  if (axes.empty())
    for (int64_t i = 0; i < rank; ++i)
      axes.push_back(i);
  int64_t count = axes.size();
  if ((int64_t)pads.size() != 2 * count)
    return n.fail("pads has " + Twine(pads.size()) + " values for " +
                  Twine(count) + " axes (it needs 2 per axis)");
  Composer c(n);
  for (int64_t i = 0; i < count; ++i) {
    int64_t axis = axes[i], before = pads[i], after = pads[i + count];
    if (!x)
      break;
    // Negative pads crop.
    int64_t extent = shapeOf(x)[axis];
    if (before < -extent || after < -extent ||
        std::min<int64_t>(before, 0) + std::min<int64_t>(after, 0) < -extent)
      return n.fail("pads crop more elements than the axis extent " +
                    Twine(extent));
    if (before > kMaxElements || after > kMaxElements)
      return n.fail("pads of more than 2^40 elements");
    int64_t cropBefore = std::max<int64_t>(-before, 0);
    int64_t cropAfter = std::max<int64_t>(-after, 0);
    if (cropBefore || cropAfter) {
      x = c.slice(x, axis, cropBefore, extent - cropBefore - cropAfter);
      extent -= cropBefore + cropAfter;
    }
    before = std::max<int64_t>(before, 0);
    after = std::max<int64_t>(after, 0);
    if (!x || (!before && !after))
      continue;
    SmallVector<int64_t> padded(shapeOf(x));
    padded[axis] += before + after;
    if (failed(checkSize(n, padded)))
      return failure();
    if (extent == 0 && *mode != "constant")
      return n.fail("mode '" + *mode + "' cannot pad an empty axis");
    if (*mode == "reflect" && (before >= extent || after >= extent))
      return n.fail("reflect pads must be smaller than the axis extent " +
                    Twine(extent));
    Value lo, hi;
    SmallVector<int64_t> loShape(shapeOf(x)), hiShape(shapeOf(x));
    loShape[axis] = before;
    hiShape[axis] = after;
    if (*mode == "constant") {
      auto fill = [&](ArrayRef<int64_t> shape) {
        return padValue ? c.broadcastTo(c.reshape(padValue, {}), shape)
                        : c.fill(RankedTensorType::get(shape, eltOf(x)), value);
      };
      lo = before ? fill(loShape) : nullptr;
      hi = after ? fill(hiShape) : nullptr;
    } else if (*mode == "edge") {
      lo = before ? c.broadcastTo(c.slice(x, axis, 0, 1), loShape) : nullptr;
      hi = after ? c.broadcastTo(c.slice(x, axis, extent - 1, 1), hiShape)
                 : nullptr;
    } else if (*mode == "reflect") {
      // Elements before..1 and extent-2..extent-1-after (edge not repeated).
      lo = before ? c.slice(x, axis, before, before, -1) : nullptr;
      hi = after ? c.slice(x, axis, extent - 2, after, -1) : nullptr;
    } else {
      // wrap: the last `before` elements first, the first `after` ones last
      // (pads past one period repeat it).
      if (before > extent || after > extent)
        return n.fail("wrap pads must not exceed the axis extent " +
                      Twine(extent));
      lo = before ? c.slice(x, axis, extent - before, before) : nullptr;
      hi = after ? c.slice(x, axis, 0, after) : nullptr;
    }
    x = c.concat({lo, x, hi}, axis);
  }
  return c.finish(x);
}
