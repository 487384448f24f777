//===- StressShardings.cpp - Pseudo-random shardings for tests --*- C++ -*-===//
//
// Part of the dnnc project.
//
//===----------------------------------------------------------------------===//
//
// Implements `dist-stress-shardings`: every argument, result and op of
// @main is split over every mesh axis it can take, on dims and factors
// chosen by a seeded generator, so that partitioning and the collectives
// are exercised on graphs too small for the search to shard.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Dialect/Dist/Transforms/FactorSharding.h"
#include "dnnc/Dialect/Dist/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace dnnc::dist {
#define GEN_PASS_DEF_STRESSSHARDINGSPASS
#include "dnnc/Dialect/Dist/Transforms/Passes.h.inc"
} // namespace dnnc::dist

using namespace mlir;
using namespace dnnc;
using namespace dnnc::dist;

namespace {
/// A small deterministic generator (splitmix64), the same on every platform.
class Random {
public:
  explicit Random(uint64_t seed) : state(seed) {}

  /// Returns the next 64 random bits.
  uint64_t next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }

  /// Returns a number in [0, n), n > 0.
  uint64_t below(uint64_t n) { return next() % n; }

  /// Shuffles `values` in place (Fisher-Yates).
  template <typename T> void shuffle(MutableArrayRef<T> values) {
    for (size_t i = values.size(); i > 1; --i)
      std::swap(values[i - 1], values[below(i)]);
  }

private:
  uint64_t state;
};

/// Chooses pseudo-random shardings; see Passes.td.
struct StressShardingsPass
    : public dnnc::dist::impl::StressShardingsPassBase<StressShardingsPass> {
  using Base::Base;

  void runOnOperation() override;

private:
  /// Returns the mesh axes in a random order.
  SmallVector<StringAttr> shuffledAxes(MeshOp mesh, Random &random);
  /// Returns a random sharding of a tensor of type `type`: each axis splits
  /// a random dim it divides (possibly one already split).
  ShardingAttr chooseTensor(MeshOp mesh, RankedTensorType type,
                            Random &random);
};
} // namespace

SmallVector<StringAttr> StressShardingsPass::shuffledAxes(MeshOp mesh,
                                                          Random &random) {
  SmallVector<StringAttr> axes;
  for (unsigned i = 0, e = mesh.getNumAxes(); i < e; ++i)
    if (mesh.getAxis(i).getSize() > 1)
      axes.push_back(mesh.getAxis(i).getName());
  random.shuffle(MutableArrayRef<StringAttr>(axes));
  return axes;
}

ShardingAttr StressShardingsPass::chooseTensor(MeshOp mesh,
                                               RankedTensorType type,
                                               Random &random) {
  int64_t rank = type.getRank();
  SmallVector<SmallVector<StringAttr>> dims(rank);
  SmallVector<int64_t> shards(rank, 1);
  for (StringAttr axis : shuffledAxes(mesh, random)) {
    int64_t size = mesh.getAxisSize(axis);
    SmallVector<int64_t> candidates;
    for (int64_t dim = 0; dim < rank; ++dim)
      if (type.getDimSize(dim) % (shards[dim] * size) == 0)
        candidates.push_back(dim);
    if (candidates.empty())
      continue;
    int64_t dim = candidates[random.below(candidates.size())];
    dims[dim].push_back(axis);
    shards[dim] *= size;
  }
  SmallVector<AxisListAttr> lists = llvm::map_to_vector(
      dims, [&](ArrayRef<StringAttr> axes) {
        return AxisListAttr::get(&getContext(), axes);
      });
  return ShardingAttr::get(&getContext(),
                           FlatSymbolRefAttr::get(mesh.getSymNameAttr()),
                           lists, {});
}

void StressShardingsPass::runOnOperation() {
  FailureOr<ShardingTarget> target = getShardingTarget(getOperation());
  if (failed(target))
    return signalPassFailure();
  if (!*target)
    return;
  MeshOp mesh = target->mesh;
  func::FuncOp func = target->func;
  Random random(seed);
  for (BlockArgument arg : func.getArguments())
    if (auto type = dyn_cast<RankedTensorType>(arg.getType()))
      setStoredSharding(arg, chooseTensor(mesh, type, random));
  for (unsigned i = 0, e = func.getNumResults(); i < e; ++i)
    if (auto type = dyn_cast<RankedTensorType>(func.getResultTypes()[i]))
      func.setResultAttr(i, DistDialect::getShardingAttrName(),
                         chooseTensor(mesh, type, random));

  FailureOr<int64_t> reshards = materializeShardings(
      func, mesh,
      [&](Operation *op, dnn::ShardingRuleAttr rule,
          ArrayRef<ShardingAttr> operandShardings) {
        FactorSharding fs(rule, mesh);
        SmallVector<int64_t> factors;
        for (int64_t f = 0, e = rule.getNumFactors(); f < e; ++f)
          if (rule.canSplit(f))
            factors.push_back(f);
        for (StringAttr axis : shuffledAxes(mesh, random)) {
          random.shuffle(MutableArrayRef<int64_t>(factors));
          for (int64_t factor : factors)
            if (fs.trySplit(factor, {axis}))
              break;
        }
        return fs;
      },
      /*remarks=*/false);
  if (failed(reshards))
    return signalPassFailure();
}
