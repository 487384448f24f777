//===- IndexingOps.cpp - ONNX gather and scatter ops ------------*- C++ -*-===//
//
// The indexing op family: Gather, and, composed of gathers, selects and
// constants, GatherElements, GatherND, OneHot, Compress, ReverseSequence,
// ScatterElements (and Scatter) and ScatterND.
//
//===----------------------------------------------------------------------===//

#include "OpHandlers.h"

#include "llvm/ADT/StringSwitch.h"

using namespace mlir;
using namespace dnnc;
using namespace dnnc::onnx_import;
namespace dnn = dnnc::dnn;

LogicalResult dnnc::onnx_import::importGather(NodeImporter &n) {
  if (failed(n.checkArity(2, 2, 1)))
    return failure();
  Value data = n.input(0), indices = n.input(1);
  auto axisAttr = n.getInt("axis", 0);
  if (failed(axisAttr))
    return failure();
  auto axis = normAxis(n, *axisAttr, rankOf(data));
  if (failed(axis))
    return failure();
  if (DenseElementsAttr idx = NodeImporter::getConstant(indices)) {
    int64_t extent = shapeOf(data)[*axis];
    for (const APInt &v : idx.getValues<APInt>())
      if (v.getSExtValue() < -extent || v.getSExtValue() >= extent)
        return n.fail("index " + Twine(v.getSExtValue()) +
                      " is out of range for an axis of extent " +
                      Twine(extent));
  }
  auto r =
      n.build<dnn::GatherOp>({}, data, indices, n.b.getI64IntegerAttr(*axis));
  if (failed(r))
    return failure();
  n.setOutput(0, *r);
  return success();
}

/// `out[i...] = data[i... with index[i...] at axis]` for the in-range i64
/// `index` of rank data's (extents no larger than data's off the axis): a
/// Gather from the flattened data at the linear offsets of those positions
/// (the index scaled by the axis stride plus ramps of the other dimensions).
static Value gatherAlong(Composer &c, NodeImporter &n, Value data, Value index,
                         int64_t axis) {
  if (!index)
    return nullptr;
  ArrayRef<int64_t> ds = shapeOf(data), is = shapeOf(index);
  int64_t rank = ds.size();
  Type i64 = n.b.getI64Type();
  Value offset = index;
  int64_t stride = product(ds.drop_front(axis + 1));
  if (stride != 1)
    offset = c.binary<dnn::MulOp>(offset, c.splat(offset, stride));
  for (int64_t d = 0; d < rank; ++d) {
    if (d == axis || is[d] == 1)
      continue;
    offset = c.binary<dnn::AddOp>(
        offset, c.broadcastTo(c.ramp(i64, is[d], rank, d,
                                     product(ds.drop_front(d + 1))),
                              is));
  }
  return c.gather(c.reshape(data, {product(ds)}), offset, 0);
}

/// GatherElements-11/13: `out[i...] = data[i... with index[i...] at axis]`,
/// as a Gather from the flattened data at the linear offsets of those
/// positions (the index scaled by the axis stride plus ramps of the other
/// dimensions).
LogicalResult dnnc::onnx_import::importGatherElements(NodeImporter &n) {
  if (failed(n.checkArity(2, 2, 1)))
    return failure();
  auto axisAttr = n.getInt("axis", 0);
  if (failed(axisAttr))
    return failure();
  Value data = n.input(0), indices = n.input(1);
  ArrayRef<int64_t> ds = shapeOf(data), is = shapeOf(indices);
  int64_t rank = ds.size();
  if (!isa<IntegerType>(eltOf(indices)))
    return n.fail("indices must be an integer tensor");
  if (static_cast<int64_t>(is.size()) != rank)
    return n.fail("data (rank " + Twine(rank) + ") and indices (rank " +
                  Twine(is.size()) + ") must have the same rank");
  auto axis = normAxis(n, *axisAttr, std::max<int64_t>(rank, 1));
  if (failed(axis))
    return failure();
  for (int64_t d = 0; d < rank; ++d)
    if (d != *axis && is[d] > ds[d])
      return n.fail("indices dimension " + Twine(d) + " (" + Twine(is[d]) +
                    ") exceeds the data's (" + Twine(ds[d]) + ")");
  if (DenseElementsAttr idx = NodeImporter::getConstant(indices)) {
    for (const APInt &v : idx.getValues<APInt>())
      if (v.getSExtValue() < -ds[*axis] || v.getSExtValue() >= ds[*axis])
        return n.fail("index " + Twine(v.getSExtValue()) +
                      " is out of range for an axis of extent " +
                      Twine(ds[*axis]));
  }
  Composer c(n);
  if (product(is) == 0 || rank == 0)
    return c.finish(c.fill(RankedTensorType::get(is, eltOf(data)), 0.0));
  return c.finish(
      gatherAlong(c, n, data, c.wrapIndices(indices, ds[*axis]), *axis));
}

/// GatherND-11/12/13: slices of `data` addressed by the last dimension of
/// `indices` (after `batch_dims` shared leading dimensions), as a Gather from
/// `data` with the batch and addressed dimensions flattened into one, at the
/// linear offsets of the index tuples.
LogicalResult dnnc::onnx_import::importGatherND(NodeImporter &n) {
  if (failed(n.checkArity(2, 2, 1)))
    return failure();
  auto batchAttr = n.getInt("batch_dims", 0);
  if (failed(batchAttr))
    return failure();
  Value data = n.input(0), indices = n.input(1);
  ArrayRef<int64_t> ds = shapeOf(data), is = shapeOf(indices);
  int64_t r = ds.size(), q = is.size(), b = *batchAttr;
  if (!isa<IntegerType>(eltOf(indices)))
    return n.fail("indices must be an integer tensor");
  if (r < 1 || q < 1)
    return n.fail("data and indices must have rank 1 or more");
  if (b < 0 || b >= std::min(r, q))
    return n.fail("batch_dims " + Twine(b) + " must be in [0, " +
                  Twine(std::min(r, q)) + ")");
  int64_t k = is.back();
  if (k < 1 || k > r - b)
    return n.fail("the last indices dimension (" + Twine(k) +
                  ") must be in [1, " + Twine(r - b) + "]");
  if (ds.take_front(b) != is.take_front(b))
    return n.fail("the first batch_dims dimensions of data and indices "
                  "differ");
  if (DenseElementsAttr idx = NodeImporter::getConstant(indices)) {
    int64_t i = 0;
    for (const APInt &v : idx.getValues<APInt>()) {
      int64_t extent = ds[b + i++ % k];
      if (v.getSExtValue() < -extent || v.getSExtValue() >= extent)
        return n.fail("index " + Twine(v.getSExtValue()) +
                      " is out of range for an axis of extent " +
                      Twine(extent));
    }
  }
  SmallVector<int64_t> lead(is.drop_back());
  SmallVector<int64_t> resultShape(lead);
  llvm::append_range(resultShape, ds.drop_front(b + k));
  Composer c(n);
  if (product(resultShape) == 0)
    return c.finish(c.fill(RankedTensorType::get(resultShape, eltOf(data)),
                           0.0));
  Type i64 = n.b.getI64Type();
  int64_t leadRank = lead.size();
  Value offset;
  for (int64_t j = 0; j < k; ++j) {
    Value column = c.reshape(c.slice(indices, q - 1, j, 1), lead);
    Value term = c.wrapIndices(column, ds[b + j]);
    int64_t stride = product(ds.slice(b + j + 1, k - j - 1));
    if (stride != 1)
      term = c.binary<dnn::MulOp>(term, c.splat(term, stride));
    offset = offset ? c.binary<dnn::AddOp>(offset, term) : term;
  }
  for (int64_t d = 0; d < b; ++d)
    if (lead[d] != 1)
      offset = c.binary<dnn::AddOp>(
          offset, c.broadcastTo(c.ramp(i64, lead[d], leadRank, d,
                                       product(ds.slice(d + 1, b + k - d - 1))),
                                lead));
  SmallVector<int64_t> flatShape{product(ds.take_front(b + k))};
  llvm::append_range(flatShape, ds.drop_front(b + k));
  return c.finish(c.gather(c.reshape(data, flatShape), offset, 0));
}

/// OneHot-9/11: `values[1]` where the wrapped (negative ones count from
/// `depth`) index equals the position along the new `axis`, `values[0]`
/// elsewhere; `depth` is a compile-time input.
LogicalResult dnnc::onnx_import::importOneHot(NodeImporter &n) {
  if (failed(n.checkArity(3, 3, 1)))
    return failure();
  auto depth = scalarInt(n, 1, "depth");
  auto axisAttr = n.getInt("axis", -1);
  if (failed(depth) || failed(axisAttr))
    return failure();
  Value indices = n.input(0), values = n.input(2);
  if (*depth < 1)
    return n.fail("depth must be positive, not " + Twine(*depth));
  if (shapeOf(values) != ArrayRef<int64_t>{2})
    return n.fail("values must be [off_value, on_value]");
  if (eltOf(indices).isInteger(1))
    return n.fail("indices must be numeric, not bool");
  int64_t rank = rankOf(indices) + 1;
  auto axis = normAxis(n, *axisAttr, rank);
  if (failed(axis))
    return failure();
  SmallVector<int64_t> outShape(shapeOf(indices));
  outShape.insert(outShape.begin() + *axis, *depth);
  if (failed(checkSize(n, outShape)))
    return failure();
  SmallVector<int64_t> kept(shapeOf(indices));
  kept.insert(kept.begin() + *axis, 1);
  Composer c(n);
  Value index = c.wrapIndices(indices, *depth);
  Value hit = c.compare<dnn::EqualOp>(
      c.broadcastTo(c.reshape(index, kept), outShape),
      c.broadcastTo(c.ramp(n.b.getI64Type(), *depth, rank, *axis), outShape));
  auto pick = [&](int64_t k) {
    return c.broadcastTo(c.reshape(c.slice(values, 0, k, 1), {}), outShape);
  };
  return c.finish(c.select(hit, pick(1), pick(0)));
}

/// Compress-11: the slices along `axis` (of the flattened input without
/// one) whose entry of the compile-time `condition` is true, as a Gather.
LogicalResult dnnc::onnx_import::importCompress(NodeImporter &n) {
  if (failed(n.checkArity(2, 2, 1)))
    return failure();
  Value x = n.input(0);
  if (!eltOf(n.input(1)).isInteger(1) || rankOf(n.input(1)) != 1)
    return n.fail("condition must be a 1-D bool tensor");
  auto condition = n.constantInts(1, "condition");
  if (failed(condition))
    return failure();
  Composer c(n);
  int64_t axis = 0;
  if (n.findAttr("axis")) {
    auto a = n.getInt("axis", 0);
    if (failed(a))
      return failure();
    auto v = normAxis(n, *a, rankOf(x));
    if (failed(v))
      return failure();
    axis = *v;
  } else {
    x = c.reshape(x, {product(shapeOf(x))});
  }
  if (!x)
    return failure();
  int64_t extent = shapeOf(x)[axis];
  if (static_cast<int64_t>(condition->size()) > extent)
    return n.fail("condition has " + Twine(condition->size()) +
                  " entries for an axis of extent " + Twine(extent));
  SmallVector<int64_t> kept;
  for (auto [i, v] : llvm::enumerate(*condition))
    if (v)
      kept.push_back(static_cast<int64_t>(i));
  return c.finish(c.gather(x, n.constantI64(kept), axis));
}

/// ReverseSequence-10: each batch entry's first `sequence_lens[b]` steps
/// along `time_axis` reversed (the lengths a compile-time input), as a
/// Gather along the time axis with a constant index per (time, batch).
LogicalResult dnnc::onnx_import::importReverseSequence(NodeImporter &n) {
  if (failed(n.checkArity(2, 2, 1)))
    return failure();
  auto lens = n.constantInts(1, "sequence_lens");
  auto batchAttr = n.getInt("batch_axis", 1);
  auto timeAttr = n.getInt("time_axis", 0);
  if (failed(lens) || failed(batchAttr) || failed(timeAttr))
    return failure();
  Value x = n.input(0);
  ArrayRef<int64_t> xs = shapeOf(x);
  int64_t rank = xs.size();
  if (rank < 2)
    return n.fail("input must have rank 2 or more");
  int64_t batchAxis = *batchAttr, timeAxis = *timeAttr;
  if (!((batchAxis == 0 && timeAxis == 1) ||
        (batchAxis == 1 && timeAxis == 0)))
    return n.fail("batch_axis and time_axis must be 0 and 1 in some order");
  int64_t batch = xs[batchAxis], time = xs[timeAxis];
  if (static_cast<int64_t>(lens->size()) != batch)
    return n.fail("sequence_lens has " + Twine(lens->size()) +
                  " entries for a batch of " + Twine(batch));
  SmallVector<int64_t> indexShape(rank, 1);
  indexShape[batchAxis] = batch;
  indexShape[timeAxis] = time;
  SmallVector<int64_t> index(batch * time);
  for (int64_t b = 0; b < batch; ++b) {
    int64_t len = (*lens)[b];
    if (len < 0 || len > time)
      return n.fail("sequence_lens[" + Twine(b) + "] = " + Twine(len) +
                    " is outside [0, " + Twine(time) + "]");
    for (int64_t t = 0; t < time; ++t) {
      int64_t at = batchAxis == 0 ? b * time + t : t * batch + b;
      index[at] = t < len ? len - 1 - t : t;
    }
  }
  Composer c(n);
  if (product(xs) == 0)
    return c.finish(x);
  Value indexConst = n.constant(DenseElementsAttr::get(
      RankedTensorType::get(indexShape, n.b.getI64Type()),
      ArrayRef<int64_t>(index)));
  return c.finish(
      gatherAlong(c, n, x, c.broadcastTo(indexConst, xs), timeAxis));
}

/// How a scatter combines an update with the element it lands on.
enum class ScatterReduction { None, Add, Mul, Max, Min };

/// Reads the `reduction` attribute of ScatterElements/ScatterND.
static FailureOr<ScatterReduction> getScatterReduction(NodeImporter &n) {
  auto name = n.getString("reduction", "none");
  if (failed(name))
    return failure();
  auto kind = llvm::StringSwitch<std::optional<ScatterReduction>>(*name)
                  .Case("none", ScatterReduction::None)
                  .Case("add", ScatterReduction::Add)
                  .Case("mul", ScatterReduction::Mul)
                  .Case("max", ScatterReduction::Max)
                  .Case("min", ScatterReduction::Min)
                  .Default(std::nullopt);
  if (!kind)
    return n.fail("unsupported reduction '" + *name + "'");
  return *kind;
}

/// `data` with update `u` (of the flattened `updates`) combined into the
/// element at linear offset `targets[u]`, in update order: one round per
/// update that lands on an already updated element, each a Gather of the
/// updates at constant positions and a select. Without reduction the last
/// update of an element wins.
static Value scatterComposed(Composer &c, NodeImporter &n, Value data,
                             Value updates, ArrayRef<int64_t> targets,
                             ScatterReduction reduction) {
  ArrayRef<int64_t> ds = shapeOf(data);
  int64_t size = product(ds);
  // The updates of each element, in order.
  SmallVector<SmallVector<int64_t, 1>> landing(size);
  for (auto [u, p] : llvm::enumerate(targets)) {
    if (reduction == ScatterReduction::None)
      landing[p].clear();
    landing[p].push_back(static_cast<int64_t>(u));
  }
  size_t rounds = 0;
  for (const auto &l : landing)
    rounds = std::max(rounds, l.size());
  Value out = c.reshape(data, {size});
  Value flatUpdates = c.reshape(updates, {product(shapeOf(updates))});
  Type i64 = n.b.getI64Type();
  for (size_t r = 0; r < rounds; ++r) {
    SmallVector<int64_t> source(size, 0);
    SmallVector<bool> hit(size, false);
    for (int64_t p = 0; p < size; ++p) {
      if (r < landing[p].size()) {
        source[p] = landing[p][r];
        hit[p] = true;
      }
    }
    Value picked = c.gather(
        flatUpdates,
        n.constant(DenseElementsAttr::get(RankedTensorType::get({size}, i64),
                                          ArrayRef<int64_t>(source))),
        0);
    Value combined = picked;
    switch (reduction) {
    case ScatterReduction::None:
      break;
    case ScatterReduction::Add:
      combined = c.binary<dnn::AddOp>(out, picked);
      break;
    case ScatterReduction::Mul:
      combined = c.binary<dnn::MulOp>(out, picked);
      break;
    case ScatterReduction::Max:
      combined = c.binary<dnn::MaxOp>(out, picked);
      break;
    case ScatterReduction::Min:
      combined = c.binary<dnn::MinOp>(out, picked);
      break;
    }
    Value mask = n.constant(DenseElementsAttr::get(
        RankedTensorType::get({size}, n.b.getI1Type()), ArrayRef<bool>(hit)));
    out = c.select(mask, combined, out);
  }
  return c.reshape(out, ds);
}

/// ScatterElements-11/13/16/18 and Scatter-9: `data` with `updates[j...]`
/// written to (or, with `reduction`, combined into) the element at `j...`
/// with `indices[j...]` along `axis`; the indices are a compile-time input.
LogicalResult dnnc::onnx_import::importScatterElements(NodeImporter &n) {
  if (failed(n.checkArity(3, 3, 1)))
    return failure();
  auto reduction = getScatterReduction(n);
  auto axisAttr = n.getInt("axis", 0);
  if (failed(reduction) || failed(axisAttr))
    return failure();
  Value data = n.input(0), indices = n.input(1), updates = n.input(2);
  ArrayRef<int64_t> ds = shapeOf(data), is = shapeOf(indices);
  int64_t rank = ds.size();
  if (static_cast<int64_t>(is.size()) != rank || shapeOf(updates) != is)
    return n.fail("indices and updates must have one shape, of the data's "
                  "rank");
  if (eltOf(updates) != eltOf(data))
    return n.fail("updates must have the data's element type");
  if (rank == 0)
    return n.fail("data must have rank 1 or more");
  auto axis = normAxis(n, *axisAttr, rank);
  if (failed(axis))
    return failure();
  for (int64_t d = 0; d < rank; ++d)
    if (d != *axis && is[d] > ds[d])
      return n.fail("indices dimension " + Twine(d) + " (" + Twine(is[d]) +
                    ") exceeds the data's (" + Twine(ds[d]) + ")");
  auto values = n.constantInts(1, "indices");
  if (failed(values))
    return failure();
  SmallVector<int64_t> targets;
  SmallVector<int64_t> position(rank, 0);
  for (int64_t v : *values) {
    if (v < -ds[*axis] || v >= ds[*axis])
      return n.fail("index " + Twine(v) +
                    " is out of range for an axis of extent " +
                    Twine(ds[*axis]));
    int64_t offset = 0;
    for (int64_t d = 0; d < rank; ++d)
      offset = offset * ds[d] +
               (d == *axis ? (v < 0 ? v + ds[d] : v) : position[d]);
    targets.push_back(offset);
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++position[d] < is[d])
        break;
      position[d] = 0;
    }
  }
  Composer c(n);
  if (targets.empty() || product(ds) == 0)
    return c.finish(data);
  return c.finish(scatterComposed(c, n, data, updates, targets, *reduction));
}

/// ScatterND-11/13/16/18: `data` with the slices `updates[i...]` written to
/// (or combined into) the slices of `data` the tuples `indices[i...]`
/// address; the indices are a compile-time input.
LogicalResult dnnc::onnx_import::importScatterND(NodeImporter &n) {
  if (failed(n.checkArity(3, 3, 1)))
    return failure();
  auto reduction = getScatterReduction(n);
  if (failed(reduction))
    return failure();
  Value data = n.input(0), indices = n.input(1), updates = n.input(2);
  ArrayRef<int64_t> ds = shapeOf(data), is = shapeOf(indices);
  int64_t r = ds.size(), q = is.size();
  if (r < 1 || q < 1)
    return n.fail("data and indices must have rank 1 or more");
  int64_t k = is.back();
  if (k < 1 || k > r)
    return n.fail("the last indices dimension (" + Twine(k) +
                  ") must be in [1, " + Twine(r) + "]");
  SmallVector<int64_t> updatesShape(is.drop_back());
  llvm::append_range(updatesShape, ds.drop_front(k));
  if (shapeOf(updates) != ArrayRef<int64_t>(updatesShape))
    return n.fail("updates must be indices.shape[:-1] + data.shape[k:]");
  if (eltOf(updates) != eltOf(data))
    return n.fail("updates must have the data's element type");
  auto values = n.constantInts(1, "indices");
  if (failed(values))
    return failure();
  int64_t slice = product(ds.drop_front(k));
  SmallVector<int64_t> targets;
  for (size_t t = 0; t + k <= values->size(); t += k) {
    int64_t offset = 0;
    for (int64_t j = 0; j < k; ++j) {
      int64_t v = (*values)[t + j], extent = ds[j];
      if (v < -extent || v >= extent)
        return n.fail("index " + Twine(v) +
                      " is out of range for an axis of extent " +
                      Twine(extent));
      offset = offset * extent + (v < 0 ? v + extent : v);
    }
    for (int64_t e = 0; e < slice; ++e)
      targets.push_back(offset * slice + e);
  }
  Composer c(n);
  if (targets.empty() || product(ds) == 0)
    return c.finish(data);
  return c.finish(scatterComposed(c, n, data, updates, targets, *reduction));
}
