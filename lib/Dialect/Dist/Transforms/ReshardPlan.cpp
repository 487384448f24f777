//===- ReshardPlan.cpp - The collectives of a reshard -----------*- C++ -*-===//
//
// Part of the dnnc project.
//
//===----------------------------------------------------------------------===//
//
// Implements planReshard: partial sums first, then the axes that leave a
// dimension one at a time (minor-most first; an all-to-all when the axis
// lands at the minor end of another dimension's split, else an all-gather),
// then one local slice for the axes still to add.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Dialect/Dist/Transforms/ReshardPlan.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/STLExtras.h"

#include <optional>

using namespace mlir;
using namespace dnnc;
using namespace dnnc::dist;

FailureOr<SmallVector<ReshardStep>>
dnnc::dist::planReshard(ArrayRef<int64_t> localShape, ShardingAttr from,
                        ShardingAttr to, MeshOp mesh, std::string &reason) {
  int64_t rank = localShape.size();
  if (from.getRank() != rank || to.getRank() != rank) {
    reason = "shardings of rank " + std::to_string(from.getRank()) + " and " +
             std::to_string(to.getRank()) + " for a tensor of rank " +
             std::to_string(rank);
    return failure();
  }
  for (StringAttr axis : to.getPartial())
    if (!llvm::is_contained(from.getPartial(), axis)) {
      reason = "it would turn a value into partial sums over \"" +
               axis.getValue().str() + "\", which is not supported";
      return failure();
    }

  SmallVector<ReshardStep> steps;
  // `current` is the layout of the value, `shape` its local shape.
  SmallVector<SmallVector<StringAttr>> current;
  for (int64_t dim = 0; dim < rank; ++dim)
    current.emplace_back(from.getDimAxes(dim));
  SmallVector<int64_t> shape(localShape);
  auto target = [&](int64_t dim) { return to.getDimAxes(dim); };
  // Whether `dim` holds axes beyond its common prefix with the target.
  auto hasExcess = [&](int64_t dim) {
    ArrayRef<StringAttr> have = current[dim], want = target(dim);
    size_t length = 0;
    while (length < have.size() && length < want.size() &&
           have[length] == want[length])
      ++length;
    return have.size() > length;
  };
  auto divides = [&](int64_t dim, int64_t size) {
    return ShapedType::isDynamic(shape[dim]) || shape[dim] % size == 0;
  };
  auto divide = [&](int64_t dim, int64_t size) {
    if (!ShapedType::isDynamic(shape[dim]))
      shape[dim] /= size;
  };
  auto multiply = [&](int64_t dim, int64_t size) {
    if (!ShapedType::isDynamic(shape[dim]))
      shape[dim] *= size;
  };
  auto addStep = [&](ReshardStep::Kind kind, ArrayRef<StringAttr> axes,
                     int64_t dim = -1, int64_t concatDim = -1) {
    ReshardStep step{kind, SmallVector<StringAttr>(axes), dim, concatDim,
                     ShardingAttr(), shape};
    steps.push_back(std::move(step));
  };

  // 1. Partial sums that `to` does not keep, in mesh order (the group
  // order). When `to` splits one dim further over exactly those axes, a
  // reduce-scatter completes the sums and splits at once.
  SmallVector<StringAttr> sumAxes;
  for (StringAttr axis : from.getPartial())
    if (!llvm::is_contained(to.getPartial(), axis))
      sumAxes.push_back(axis);
  llvm::stable_sort(sumAxes, [&](StringAttr a, StringAttr b) {
    return *mesh.getAxisIndex(a) < *mesh.getAxisIndex(b);
  });
  if (!sumAxes.empty()) {
    int64_t groupSize = mesh.getGroupSize(sumAxes);
    std::optional<int64_t> scatterDim;
    for (int64_t dim = 0; dim < rank && !scatterDim; ++dim) {
      ArrayRef<StringAttr> want = target(dim);
      size_t have = current[dim].size();
      if (hasExcess(dim) || want.size() < have + sumAxes.size() ||
          want.slice(have, sumAxes.size()) != ArrayRef(sumAxes) ||
          ShapedType::isDynamic(shape[dim]) || shape[dim] % groupSize != 0)
        continue;
      scatterDim = dim;
    }
    if (scatterDim) {
      divide(*scatterDim, groupSize);
      llvm::append_range(current[*scatterDim], sumAxes);
      addStep(ReshardStep::Kind::ReduceScatter, sumAxes, *scatterDim);
    } else {
      addStep(ReshardStep::Kind::AllReduce, sumAxes);
    }
  }

  // 2. Axes that leave a dim, minor-most first: an axis that moves to the
  // minor end of another dim's split goes there with one all-to-all; any
  // other is gathered on its own (a one-axis group is order-safe), those
  // that leave the tensor first, which may free a dim for a later move.
  while (true) {
    std::optional<std::pair<int64_t, int64_t>> move;
    for (int64_t dim = 0; dim < rank && !move; ++dim) {
      if (!hasExcess(dim))
        continue;
      StringAttr axis = current[dim].back();
      std::optional<unsigned> toDim = to.getDimOfAxis(axis);
      if (!toDim || *toDim == dim)
        continue;
      ArrayRef<StringAttr> want = target(*toDim);
      size_t position = llvm::find(want, axis) - want.begin();
      if (ArrayRef<StringAttr>(current[*toDim]) != want.take_front(position) ||
          !divides(*toDim, mesh.getAxisSize(axis)))
        continue;
      move = {dim, static_cast<int64_t>(*toDim)};
    }
    if (move) {
      auto [srcDim, dstDim] = *move;
      StringAttr axis = current[srcDim].pop_back_val();
      current[dstDim].push_back(axis);
      multiply(srcDim, mesh.getAxisSize(axis));
      divide(dstDim, mesh.getAxisSize(axis));
      addStep(ReshardStep::Kind::AllToAll, axis, dstDim, srcDim);
      continue;
    }
    std::optional<int64_t> gatherDim;
    for (int64_t dim = 0; dim < rank && !gatherDim; ++dim) {
      if (!hasExcess(dim))
        continue;
      std::optional<unsigned> toDim = to.getDimOfAxis(current[dim].back());
      if (!toDim || *toDim == dim)
        gatherDim = dim;
    }
    for (int64_t dim = 0; dim < rank && !gatherDim; ++dim)
      if (hasExcess(dim))
        gatherDim = dim;
    if (!gatherDim)
      break;
    StringAttr axis = current[*gatherDim].pop_back_val();
    multiply(*gatherDim, mesh.getAxisSize(axis));
    addStep(ReshardStep::Kind::AllGather, axis, *gatherDim);
  }

  // 3. Every dim's axes are now a prefix of its target: one local slice
  // cuts the remaining axes of every dim.
  MLIRContext *context = mesh.getContext();
  SmallVector<AxisListAttr> extra;
  bool anyExtra = false;
  for (int64_t dim = 0; dim < rank; ++dim) {
    ArrayRef<StringAttr> remaining =
        target(dim).drop_front(current[dim].size());
    anyExtra |= !remaining.empty();
    extra.push_back(AxisListAttr::get(context, remaining));
    if (!remaining.empty())
      divide(dim, mesh.getGroupSize(remaining));
  }
  if (anyExtra) {
    addStep(ReshardStep::Kind::Slice, {});
    steps.back().slice = ShardingAttr::get(
        context, FlatSymbolRefAttr::get(mesh.getSymNameAttr()), extra,
        ArrayRef<StringAttr>());
  }
  return steps;
}
