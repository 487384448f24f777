//===- SearchParallelism.cpp - Degrees from the cost model ------*- C++ -*-===//
//
// Part of the dnnc project.
//
//===----------------------------------------------------------------------===//
//
// Implements `dnnc-search-parallelism`: every factorization of the device
// count into data- and tensor-parallel degrees is propagated on a copy of
// the module and priced with the cost model; the fastest plan that fits in
// memory is applied.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Dialect/Dist/Transforms/FactorSharding.h"
#include "dnnc/Planner/Passes.h"
#include "dnnc/Planner/PlanCost.h"

#include "mlir/IR/Builders.h"

#include <chrono>
#include <cmath>
#include <limits>

namespace dnnc::planner {
#define GEN_PASS_DEF_SEARCHPARALLELISMPASS
#include "dnnc/Planner/Passes.h.inc"
} // namespace dnnc::planner

using namespace mlir;
using namespace dnnc;
using namespace dnnc::planner;

namespace {
/// One pair of degrees and its estimate.
struct Candidate {
  int64_t dp = 1;
  int64_t tp = 1;
  PlanEstimate estimate;
};

/// Chooses the degrees; see Passes.td.
struct SearchParallelismPass
    : public dnnc::planner::impl::SearchParallelismPassBase<
          SearchParallelismPass> {
  using Base::Base;

  void runOnOperation() override;

private:
  /// Gives `module` the mesh of degrees `dp` x `tp` on `cluster` (axes of
  /// size 1 left out) and propagates shardings over it. Returns the mesh
  /// (null for one device), or failure.
  FailureOr<dist::MeshOp> shard(ModuleOp module, int64_t dp, int64_t tp,
                                const Cluster &cluster);
};
} // namespace

FailureOr<dist::MeshOp> SearchParallelismPass::shard(ModuleOp module,
                                                     int64_t dp, int64_t tp,
                                                     const Cluster &cluster) {
  SmallVector<std::pair<StringRef, int64_t>> axes;
  if (dp > 1)
    axes.push_back({"dp", dp});
  if (tp > 1)
    axes.push_back({"tp", tp});
  if (axes.empty())
    return dist::MeshOp();
  std::vector<int64_t> shape;
  for (auto &axis : axes)
    shape.push_back(axis.second);
  std::vector<bool> intra = getIntraNodeAxes(cluster, shape);
  MLIRContext *context = module.getContext();
  SmallVector<dist::MeshAxisAttr> meshAxes;
  for (auto [index, axis] : llvm::enumerate(axes))
    meshAxes.push_back(dist::MeshAxisAttr::get(
        context, StringAttr::get(context, axis.first), axis.second,
        intra[index] ? dist::LinkClass::Intra : dist::LinkClass::Inter));
  OpBuilder builder = OpBuilder::atBlockBegin(module.getBody());
  auto mesh = dist::MeshOp::create(builder, module.getLoc(), "mesh", meshAxes);
  if (failed(dist::propagateShardings(module, dp > 1 ? "dp" : "",
                                      tp > 1 ? "tp" : "", /*remarks=*/false)))
    return failure();
  return mesh;
}

void SearchParallelismPass::runOnOperation() {
  auto start = std::chrono::steady_clock::now();
  ModuleOp module = getOperation();
  MLIRContext *context = &getContext();
  if (!module.getOps<dist::MeshOp>().empty()) {
    module.emitError("dnnc-search-parallelism expects a module without a "
                     "dist.mesh: it chooses the mesh itself");
    return signalPassFailure();
  }
  auto func = module.lookupSymbol<func::FuncOp>("main");
  if (!func || func.isExternal())
    return;
  std::string error;
  std::optional<Cluster> loaded = loadCluster(cluster, error);
  if (!loaded) {
    module.emitError("cluster '") << cluster.getValue() << "': " << error;
    return signalPassFailure();
  }
  if (oversubscribe && loaded->numNodes == 1 &&
      devices > loaded->getNumDevices())
    loaded->devicesPerNode = devices;
  if (mode != "infer" && mode != "train") {
    module.emitError("mode '") << mode << "' is not 'infer' or 'train'";
    return signalPassFailure();
  }
  if (devices < 1 || devices > loaded->getNumDevices()) {
    module.emitError("cannot plan for ")
        << devices.getValue() << " devices on cluster '" << loaded->name << "' of "
        << loaded->getNumDevices();
    return signalPassFailure();
  }
  CostModel model(*loaded, mode == "train" ? Mode::Train : Mode::Infer);

  // Price every factorization devices = dp x tp the forced degrees allow.
  SmallVector<Candidate> candidates;
  for (int64_t t = 1; t <= devices; ++t) {
    if (devices % t != 0 || (tp > 0 && t != tp) ||
        (dp > 0 && devices / t != dp))
      continue;
    OwningOpRef<ModuleOp> copy(module.clone());
    FailureOr<dist::MeshOp> mesh = shard(*copy, devices / t, t, *loaded);
    if (failed(mesh))
      return signalPassFailure();
    Candidate candidate;
    candidate.dp = devices / t;
    candidate.tp = t;
    candidate.estimate = estimatePlan(
        copy->lookupSymbol<func::FuncOp>("main"), *mesh, model);
    candidates.push_back(candidate);
    ++numCandidates;
  }
  if (candidates.empty()) {
    module.emitError("no data/tensor-parallel degrees multiply to ")
        << devices.getValue() << " devices with the forced degrees (dp="
        << dp.getValue() << ", tp=" << tp.getValue() << ")";
    return signalPassFailure();
  }

  double capacity = static_cast<double>(loaded->device.memoryBytes);
  const Candidate *best = nullptr;
  double smallestMemory = std::numeric_limits<double>::infinity();
  for (const Candidate &candidate : candidates) {
    double memory = candidate.estimate.getMemoryBytes();
    smallestMemory = std::min(smallestMemory, memory);
    if (memory > capacity)
      continue;
    // The fastest; between equally fast plans, the one that needs less
    // memory (e.g. tensor parallelism over replicas that split nothing).
    double step = candidate.estimate.getStepSeconds();
    if (!best || step < best->estimate.getStepSeconds() ||
        (step == best->estimate.getStepSeconds() &&
         memory < best->estimate.getMemoryBytes()))
      best = &candidate;
  }
  if (!best) {
    module.emitError("no plan fits in memory: the smallest needs ")
        << static_cast<int64_t>(smallestMemory) << " bytes per device, a "
        << loaded->device.name << " of cluster '" << loaded->name
        << "' has " << loaded->device.memoryBytes;
    return signalPassFailure();
  }

  if (failed(shard(module, best->dp, best->tp, *loaded)))
    return signalPassFailure();
  double searchSeconds = std::chrono::duration<double>(
                             std::chrono::steady_clock::now() - start)
                             .count();
  Builder b(context);
  const PlanEstimate &e = best->estimate;
  module->setAttr(
      "dnnc.plan",
      b.getDictionaryAttr({
          b.getNamedAttr("dp", b.getI64IntegerAttr(best->dp)),
          b.getNamedAttr("tp", b.getI64IntegerAttr(best->tp)),
          b.getNamedAttr("step_time_s", b.getF64FloatAttr(e.getStepSeconds())),
          b.getNamedAttr("compute_time_s", b.getF64FloatAttr(e.computeSeconds)),
          b.getNamedAttr("communication_time_s",
                         b.getF64FloatAttr(e.communicationSeconds)),
          b.getNamedAttr("memory_bytes",
                         b.getI64IntegerAttr(std::llround(e.getMemoryBytes()))),
          b.getNamedAttr("model_flops",
                         b.getI64IntegerAttr(std::llround(e.modelFlops))),
          b.getNamedAttr("search_time_s", b.getF64FloatAttr(searchSeconds)),
          b.getNamedAttr("candidates",
                         b.getI64IntegerAttr(candidates.size())),
      }));
}
