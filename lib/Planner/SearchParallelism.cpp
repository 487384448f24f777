//===- SearchParallelism.cpp - Plans from the cost model --------*- C++ -*-===//
//
// Part of the dnnc project.
//
//===----------------------------------------------------------------------===//
//
// Implements `dnnc-search-parallelism`: one sharded profile per tensor-
// parallel degree, then every pipeline / data-parallel / micro-batch /
// schedule / recomputation configuration split and priced on it; the
// fastest plan that fits in memory is applied.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Dialect/Dist/IR/DistDialect.h"
#include "dnnc/Dialect/Dist/Transforms/FactorSharding.h"
#include "dnnc/Dialect/Dist/Transforms/Microbatches.h"
#include "dnnc/Dialect/Dnn/Transforms/Passes.h"
#include "dnnc/Planner/Passes.h"
#include "dnnc/Planner/Pipeline.h"
#include "dnnc/Planner/SearchShardings.h"

#include "mlir/IR/Builders.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <map>
#include <vector>
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
/// A plan the search priced.
struct Candidate {
  int64_t dp = 1, tp = 1;
  /// Whether the per-op shardings come from the exact per-op search
  /// (`searchOpShardings` over the tp axis) rather than propagation.
  bool searched = false;
  PipelineConfig config;
  PipelineEstimate estimate;
  /// Stage boundaries counted in ops other than `dist.reshard`, which the
  /// final propagation may place differently.
  SmallVector<int64_t> opBoundaries;
};


/// The best candidate the search priced for one (dp, tp, pp): what
/// `--explain` lists so that a user sees which degrees were considered and
/// why they lost.
struct Alternative {
  PipelineConfig config;
  /// Its step seconds and peak memory per device; when no split fits the
  /// memory, `fits` is false and `memory` the smallest any split needs.
  double step = std::numeric_limits<double>::infinity();
  double memory = std::numeric_limits<double>::infinity();
  bool fits = false;
  /// When this candidate was applied (it was among the fastest), its step
  /// and memory as applied on its final mesh, which decide; infinite
  /// otherwise.
  double appliedStep = std::numeric_limits<double>::infinity();
  double appliedMemory = std::numeric_limits<double>::infinity();
};

/// The most alternatives `dnnc.plan` records.
constexpr size_t kMaxAlternatives = 8;

/// The fastest candidates of each kind of profile (propagated, searched)
/// kept to be applied for real (see the end of
/// SearchParallelismPass::runOnOperation).
constexpr size_t kRankedCandidates = 8;

/// The most model chunks per pipeline rank the search tries for the
/// interleaved schedule.
constexpr int64_t kMaxChunks = 8;

/// Chooses the plan; see Passes.td.
struct SearchParallelismPass
    : public dnnc::planner::impl::SearchParallelismPassBase<
          SearchParallelismPass> {
  using Base::Base;

  /// Creates the pass searching `config` (the options are not read).
  explicit SearchParallelismPass(SearchParallelismConfig config)
      : searchConfig(std::move(config)), hasConfig(true) {}

  void runOnOperation() override;

private:
  /// Reads the textual options (dnnc-opt) into `searchConfig`: loads the cluster
  /// and parses schedule, recompute and zero. Reports and fails on a bad
  /// value.
  LogicalResult readOptions(ModuleOp module);

  /// What is searched.
  SearchParallelismConfig searchConfig;
  /// Whether `searchConfig` was given in C++ rather than read from the options.
  bool hasConfig = false;

  /// Gives `module` the mesh `pp x dp x tp` on `cluster` (axes of size 1
  /// left out) and propagates shardings over it. Returns the mesh (null for
  /// one device), or failure.
  FailureOr<dist::MeshOp> shard(ModuleOp module, int64_t pp, int64_t dp,
                                int64_t tp, const Cluster &cluster);

  /// Applies `best` to `module`: mesh, shardings (propagated, then the
  /// per-op search when `best.searched`), stages, `dist.pipeline`, and the
  /// recomputation and ZeRO entries of `dnnc.plan`. Returns the estimate of
  /// the applied plan, read back from the module.
  FailureOr<PipelineEstimate> apply(ModuleOp module, const Candidate &best,
                                    const Cluster &cluster,
                                    const CostModel &model);

  /// The model FLOPs of the last applied plan.
  double modelFlops = 0;

  /// Replaces the tp shardings of `module` (sharded by `shard` on `mesh`)
  /// with the optimum of the per-op search under `model`.
  LogicalResult searchTensorShardings(ModuleOp module, dist::MeshOp mesh,
                                      const CostModel &model);
};
} // namespace

LogicalResult
SearchParallelismPass::searchTensorShardings(ModuleOp module, dist::MeshOp mesh,
                                             const CostModel &model) {
  SmallVector<StringAttr> axes = {StringAttr::get(module.getContext(), "tp")};
  return searchOpShardings(module.lookupSymbol<func::FuncOp>("main"), mesh,
                           model, axes);
}

FailureOr<PipelineEstimate>
SearchParallelismPass::apply(ModuleOp module, const Candidate &best,
                             const Cluster &cluster, const CostModel &model) {
  const PipelineConfig &config = best.config;
  Builder b(module.getContext());
  auto func = module.lookupSymbol<func::FuncOp>("main");
  bool pipelined = config.stages > 1 || config.microbatches > 1;
  // Every op of `fn` in its stage (counted without reshards: the profile's
  // items, the ops of the sharded program).
  auto assignStages = [&](func::FuncOp fn) {
    int64_t opIndex = 0, stage = 0;
    for (Operation &op : fn.getBody().front().without_terminator()) {
      if (!isa<dist::ReshardOp>(op)) {
        while (stage + 1 < static_cast<int64_t>(best.opBoundaries.size()) - 1 &&
               opIndex >= best.opBoundaries[stage + 1])
          ++stage;
        ++opIndex;
      }
      op.setAttr(dist::DistDialect::getStageAttrName(),
                 b.getI64IntegerAttr(stage));
    }
  };
  // An executed plan with micro-batches is sharded on one micro-batch, so
  // that its shardings divide it.
  bool splitFirst = !searchConfig.pipeline && config.microbatches > 1;
  if (splitFirst) {
    // The stages are those of the whole-batch program once sharded (its
    // ops are the profile's items): found on a sharded copy, carried over
    // by op.
    StringRef idName = "dnnc.op_id";
    int64_t id = 0;
    for (Operation &op : func.getBody().front().without_terminator())
      op.setAttr(idName, b.getI64IntegerAttr(id++));
    {
      OwningOpRef<ModuleOp> copy(module.clone());
      FailureOr<dist::MeshOp> copyMesh =
          shard(*copy, config.stages, best.dp, best.tp, cluster);
      if (failed(copyMesh))
        return failure();
      if (best.searched &&
          failed(searchTensorShardings(*copy, *copyMesh, model)))
        return failure();
      auto copyFunc = copy->lookupSymbol<func::FuncOp>("main");
      assignStages(copyFunc);
      SmallVector<Attribute> stageOf(id);
      for (Operation &op : copyFunc.getBody().front().without_terminator())
        // Copies made by sharding carry the id too: the first one is the
        // original.
        if (auto opId = op.getAttrOfType<IntegerAttr>(idName);
            opId && !stageOf[opId.getInt()])
          stageOf[opId.getInt()] =
              op.getAttr(dist::DistDialect::getStageAttrName());
      for (Operation &op : func.getBody().front().without_terminator()) {
        auto opId = op.getAttrOfType<IntegerAttr>(idName);
        op.removeAttr(idName);
        if (opId && stageOf[opId.getInt()])
          op.setAttr(dist::DistDialect::getStageAttrName(),
                     stageOf[opId.getInt()]);
      }
    }
    if (failed(dist::splitMicrobatches(func, config.microbatches)))
      return failure();
  }
  FailureOr<dist::MeshOp> mesh =
      shard(module, config.stages, best.dp, best.tp, cluster);
  if (failed(mesh))
    return failure();
  if (best.searched && failed(searchTensorShardings(module, *mesh, model)))
    return failure();
  if (pipelined && !splitFirst)
    assignStages(func);
  if (pipelined || config.recompute != Recompute::Off || config.zero)
    module->setAttr(
        dist::DistDialect::getPipelineAttrName(),
        dist::PipelineAttr::get(
            module.getContext(),
            // Without pipeline ranks there is no pipeline axis in the mesh.
            config.stages > 1 ? b.getStringAttr("pp") : StringAttr(),
            config.stages, config.chunks, config.microbatches,
            config.schedule, config.recompute, config.zero,
            /*updateRounds=*/0));
  // The estimate of what was applied, read back from the module (after a
  // split into micro-batches, that of the whole batch).
  FailureOr<ModulePlan> plan = readModulePlan(module, model);
  if (failed(plan))
    return failure();
  modelFlops = plan->profile.modelFlops;
  if (splitFirst) {
    modelFlops *= config.microbatches;
    return best.estimate;
  }
  return estimatePipeline(plan->profile, plan->config, plan->boundaries, model);
}

/// Returns the divisors of `n` in increasing order.
static SmallVector<int64_t> getDivisors(int64_t n) {
  SmallVector<int64_t> divisors;
  for (int64_t d = 1; d <= n; ++d)
    if (n % d == 0)
      divisors.push_back(d);
  return divisors;
}

/// Returns the links of the pipeline and data-parallel axes of the mesh
/// `pp x dp x tp` on `cluster`.
static std::pair<LinkSpec, LinkSpec>
getLinks(const Cluster &cluster, int64_t pp, int64_t dp, int64_t tp) {
  std::vector<bool> intra = getIntraNodeAxes(cluster, {pp, dp, tp});
  auto link = [&](bool isIntra) {
    return isIntra || cluster.numNodes == 1 ? cluster.intraNode
                                            : cluster.interNode;
  };
  return {link(intra[0]), link(intra[1])};
}

FailureOr<dist::MeshOp> SearchParallelismPass::shard(ModuleOp module,
                                                     int64_t pp, int64_t dp,
                                                     int64_t tp,
                                                     const Cluster &cluster) {
  // Placed as the whole pp x dp x tp mesh (a size-1 axis changes no
  // group), then the axes of size 1 left out.
  SmallVector<dist::MeshAxisSpec> placed =
      placeMeshAxes(cluster, {{"pp", pp}, {"dp", dp}, {"tp", tp}});
  SmallVector<dist::MeshAxisSpec> specs;
  for (const dist::MeshAxisSpec &spec : placed)
    if (spec.size > 1)
      specs.push_back(spec);
  if (specs.empty())
    return dist::MeshOp();
  OpBuilder builder = OpBuilder::atBlockBegin(module.getBody());
  auto mesh = dist::MeshOp::create(builder, module.getLoc(), "mesh", specs);
  if (failed(dist::propagateShardings(module, dp > 1 ? "dp" : "",
                                      tp > 1 ? "tp" : "", /*remarks=*/false)))
    return failure();
  return mesh;
}

/// Returns the global batch: dim 0 of `func`'s first graph input of rank
/// >= 1 (0 when there is none or it is dynamic).
static int64_t getGlobalBatch(func::FuncOp func) {
  for (auto [index, type] : llvm::enumerate(func.getArgumentTypes())) {
    if (dnn::isWeightArgument(func, index))
      continue;
    auto ranked = dyn_cast<RankedTensorType>(type);
    if (!ranked || ranked.getRank() == 0)
      continue;
    return ShapedType::isDynamic(ranked.getDimSize(0)) ? 0
                                                       : ranked.getDimSize(0);
  }
  return 0;
}

/// Returns true if some value of `func` of leading dimension `batch` is
/// split along it over the mesh axis `axis` (the per-op search may split
/// the batch over the tensor-parallel axis of a profile priced with one
/// data-parallel replica).
static bool splitsBatchOver(func::FuncOp func, int64_t batch, StringRef axis) {
  if (batch <= 1)
    return false;
  auto splitsDim0 = [&](Type type, dist::ShardingAttr sharding) {
    auto ranked = dyn_cast<RankedTensorType>(type);
    if (!sharding || !ranked || ranked.getRank() == 0 ||
        ranked.getDimSize(0) != batch || sharding.getRank() == 0)
      return false;
    return llvm::any_of(sharding.getDimAxes(0), [&](StringAttr name) {
      return name.getValue() == axis;
    });
  };
  WalkResult result = func.walk([&](Operation *op) {
    auto shardings = dist::getOpShardings(op);
    for (auto [value, sharding] : llvm::zip(op->getResults(), shardings))
      if (splitsDim0(value.getType(), sharding))
        return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return result.wasInterrupted();
}

/// Converts item boundaries of `profile` into boundaries counted in ops
/// other than `dist.reshard`.
static SmallVector<int64_t> toOpBoundaries(const PlanProfile &profile,
                                           ArrayRef<int64_t> boundaries) {
  SmallVector<int64_t> ops;
  int64_t count = 0, item = 0;
  for (int64_t boundary : boundaries) {
    for (; item < boundary; ++item)
      if (!profile.items[item].isReshard)
        ++count;
    ops.push_back(count);
  }
  return ops;
}

/// Writes an in-place progress line on stderr.
static void showProgress(int64_t done, int64_t total, StringRef what) {
  llvm::errs() << llvm::formatv("\rsearching plans: {0}/{1} {2}", done, total,
                                what)
               << "\x1b[K";
  llvm::errs().flush();
}

/// The best candidate of each (dp, tp, pp).
using Alternatives =
    std::map<std::tuple<int64_t, int64_t, int64_t>, Alternative>;

/// Orders candidates by their estimates: the faster first; between equally
/// fast ones, the one that needs less memory.
static bool isFaster(const Candidate &a, const Candidate &b) {
  double x = a.estimate.getStepSeconds(), y = b.estimate.getStepSeconds();
  return x < y || (x == y && a.estimate.getPeakMemoryBytes() <
                                 b.estimate.getPeakMemoryBytes());
}

/// Returns true if `a` and `b` are the same pipeline choices (stages,
/// micro-batches, schedule, chunks, recomputation, ZeRO).
static bool isSameConfig(const PipelineConfig &a, const PipelineConfig &b) {
  return a.stages == b.stages && a.microbatches == b.microbatches &&
         a.schedule == b.schedule && a.chunks == b.chunks &&
         a.recompute == b.recompute && a.zero == b.zero;
}

/// Returns the `alternatives` entry of `dnnc.plan`: the best candidate of
/// each (dp, tp, pp), those that fit fastest first, then those that do not
/// by the memory they need, at most kMaxAlternatives.
static ArrayAttr getAlternativesAttr(Builder &b,
                                     const Alternatives &alternatives) {
  SmallVector<const Alternatives::value_type *> sorted;
  for (const auto &entry : alternatives)
    sorted.push_back(&entry);
  llvm::stable_sort(sorted, [](const auto *a, const auto *b) {
    const Alternative &x = a->second, &y = b->second;
    if (x.fits != y.fits)
      return x.fits;
    return x.fits ? x.step < y.step : x.memory < y.memory;
  });
  SmallVector<Attribute> entries;
  for (const auto *entry : llvm::ArrayRef(sorted).take_front(
           kMaxAlternatives)) {
    auto [dp, tp, pp] = entry->first;
    const Alternative *alternative = &entry->second;
    const PipelineConfig &config = alternative->config;
    SmallVector<NamedAttribute> fields = {
        b.getNamedAttr("dp", b.getI64IntegerAttr(dp)),
        b.getNamedAttr("tp", b.getI64IntegerAttr(tp)),
        b.getNamedAttr("pp", b.getI64IntegerAttr(pp)),
        b.getNamedAttr("microbatches",
                       b.getI64IntegerAttr(config.microbatches)),
        b.getNamedAttr("schedule", b.getStringAttr(dist::stringifySchedule(
                                       config.schedule))),
        b.getNamedAttr("recompute", b.getStringAttr(dist::stringifyRecompute(
                                        config.recompute))),
        b.getNamedAttr("fits", b.getBoolAttr(alternative->fits)),
        b.getNamedAttr("memory_bytes", b.getI64IntegerAttr(std::llround(
                                           std::min(alternative->memory,
                                                    9.0e18)))),
    };
    if (alternative->fits)
      fields.push_back(
          b.getNamedAttr("step_time_s", b.getF64FloatAttr(alternative->step)));
    if (std::isfinite(alternative->appliedStep)) {
      fields.push_back(b.getNamedAttr(
          "applied_step_time_s", b.getF64FloatAttr(alternative->appliedStep)));
      fields.push_back(b.getNamedAttr(
          "applied_memory_bytes",
          b.getI64IntegerAttr(std::llround(alternative->appliedMemory))));
    }
    entries.push_back(b.getDictionaryAttr(fields));
  }
  return b.getArrayAttr(entries);
}

LogicalResult SearchParallelismPass::readOptions(ModuleOp module) {
  SearchParallelismConfig read;
  std::string error;
  std::optional<Cluster> loaded = loadCluster(cluster, error);
  if (!loaded)
    return module.emitError("cluster '") << cluster.getValue() << "': "
                                         << error;
  read.cluster = *loaded;
  if (oversubscribe && read.cluster.numNodes == 1 &&
      devices > read.cluster.getNumDevices())
    read.cluster.devicesPerNode = devices;
  if (!schedule.empty()) {
    read.schedule = dist::symbolizeSchedule(schedule);
    if (!read.schedule)
      return module.emitError("schedule '")
             << schedule << "' is not gpipe, 1f1b or interleaved";
  }
  if (recompute != "auto") {
    read.recompute = dist::symbolizeRecompute(recompute);
    if (!read.recompute)
      return module.emitError(
                 "recompute takes auto, off, selective or full, not '")
             << recompute << "'";
  }
  if (zero == "on" || zero == "off")
    read.zero = zero == "on";
  else if (zero != "auto")
    return module.emitError("zero takes auto, on or off, not '")
           << zero << "'";
  read.devices = devices;
  read.mode = mode;
  read.dp = dp;
  read.tp = tp;
  read.pp = pp;
  read.microbatches = microbatches;
  read.microbatchSize = microbatchSize;
  read.chunks = chunks;
  read.pipeline = pipeline;
  read.progress = progress;
  searchConfig = std::move(read);
  return success();
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
  if (!hasConfig && failed(readOptions(module)))
    return signalPassFailure();
  const SearchParallelismConfig &c = searchConfig;
  const Cluster *loaded = &c.cluster;
  int64_t devices = c.devices;
  if (devices < 1 || devices > loaded->getNumDevices()) {
    module.emitError("cannot plan for ")
        << devices << " devices on cluster '" << loaded->name << "' of "
        << loaded->getNumDevices();
    return signalPassFailure();
  }
  // Recomputation: unless forced, each kind is tried (the fastest that fits
  // wins).
  SmallVector<Recompute> recomputes = {Recompute::Off};
  bool train = c.mode == Mode::Train;
  if (train && c.recompute)
    recomputes = {*c.recompute};
  else if (train)
    recomputes = {Recompute::Off, Recompute::Selective, Recompute::Full};
  if (c.dp < 0 || c.tp < 0 || c.pp < 0 || c.microbatches < 0 ||
      c.microbatchSize < 0 || c.chunks < 0) {
    module.emitError("forced degrees, micro-batches and chunks must not be "
                     "negative");
    return signalPassFailure();
  }
  int64_t dp = c.dp, tp = c.tp, pp = c.pp, microbatches = c.microbatches,
          microbatchSize = c.microbatchSize, chunks = c.chunks;
  bool pipeline = c.pipeline;
  // A training step whose forward needs the whole batch (the batch
  // statistics of a batch norm in training mode) cannot run per
  // micro-batch: no pipelines and micro-batches are searched for it.
  std::string unsplittable;
  if (train && pipeline &&
      failed(dist::checkTrainingSplit(func, unsplittable))) {
    pipeline = false;
    if (c.progress)
      llvm::errs() << "dnnc: searching without pipelines and micro-batches: "
                   << unsplittable << "\n";
  }
  std::optional<Schedule> forcedSchedule = c.schedule;
  CostModel model(*loaded, c.mode);
  model.usePrecisionOf(module);
  double capacity = static_cast<double>(loaded->device.memoryBytes);
  int64_t batch = getGlobalBatch(func);
  bool progressShown = false;

  SmallVector<int64_t> tpDegrees;
  for (int64_t t : getDivisors(devices))
    if (tp == 0 || t == tp)
      tpDegrees.push_back(t);

  // The fastest candidates of the propagated and of the searched profiles.
  std::vector<Candidate> ranked[2];
  Alternatives alternatives;
  double smallestMemory = std::numeric_limits<double>::infinity();
  int64_t candidates = 0;
  for (auto [tpIndex, t] : llvm::enumerate(tpDegrees)) {
    if (c.progress) {
      showProgress(tpIndex, tpDegrees.size(),
                   llvm::formatv("(profiling tp={0})", t).str());
      progressShown = true;
    }
    // One profile per tensor-parallel degree; data parallelism divides its
    // batch, pipelines cut it.
    OwningOpRef<ModuleOp> copy(module.clone());
    FailureOr<dist::MeshOp> mesh = shard(*copy, 1, 1, t, *loaded);
    if (failed(mesh))
      return signalPassFailure();
    // A degree that splits nothing would repeat the same work on every
    // device (and be reported as parallelism it is not).
    if (t > 1 && !dist::isAxisUsed(*copy, "tp"))
      continue;
    // Two profiles: the propagated (Megatron-seeded) shardings and the
    // exact per-op search over the tp axis (time only: it may replicate
    // weights the propagated plan splits, so both stay candidates).
    SmallVector<std::pair<PlanProfile, bool>, 2> profiles;
    profiles.emplace_back(
        buildPlanProfile(copy->lookupSymbol<func::FuncOp>("main"), *mesh, model,
                         "", ""),
        false);
    // Whether the searched profile splits the batch over tp: with d
    // replicas that holds only while tp still divides a replica's batch.
    bool batchOverTp = false;
    if (t > 1) {
      if (failed(searchTensorShardings(*copy, *mesh, model)))
        return signalPassFailure();
      auto main = copy->lookupSymbol<func::FuncOp>("main");
      // The per-op search may replicate everything (a small graph): then
      // its plan is no tensor-parallel plan of degree t.
      if (dist::isAxisUsed(*copy, "tp")) {
        profiles.emplace_back(buildPlanProfile(main, *mesh, model, "", ""),
                              true);
        batchOverTp = splitsBatchOver(main, batch, "tp");
      }
    }
    for (auto &[profile, searched] : profiles) {
      int64_t rest = devices / t;
      for (int64_t p : getDivisors(rest)) {
        if ((pp != 0 && p != pp) || (pp == 0 && p > 1 && !pipeline))
          continue;
        int64_t d = rest / p;
        if (dp != 0 && d != dp)
          continue;
        // Data parallelism splits the batch, so it must divide it (else
        // the replicas would repeat the same work).
        if (d > 1 && (batch == 0 || batch % d != 0))
          continue;
        if (searched && batchOverTp && (batch / d) % t != 0)
          continue;
        int64_t batchShards = d;
        int64_t local = batch == 0 ? 1 : batch / batchShards;
        auto [ppLink, dpLink] = getLinks(*loaded, p, d, t);
        SmallVector<int64_t> counts;
        if (microbatchSize != 0) {
          // Megatron's batch semantics: each replica's share of the batch
          // streams through in micro-batches of the given size.
          if (local % microbatchSize == 0)
            counts.push_back(local / microbatchSize);
        } else if (microbatches != 0) {
          if (local % microbatches == 0)
            counts.push_back(microbatches);
        } else if (!pipeline || (!train && p == 1)) {
          counts.push_back(1);
        } else {
          counts = getDivisors(local);
        }
        SmallVector<Schedule> schedules;
        if (forcedSchedule)
          schedules.push_back(*forcedSchedule);
        else if (!train)
          schedules.push_back(Schedule::GPipe);
        else if (p == 1)
          schedules.push_back(Schedule::OneFOneB);
        else
          schedules.append({Schedule::OneFOneB, Schedule::Interleaved});
        // Each schedule with its chunks per rank: interleaving tries every
        // count from 2 to kMaxChunks that leaves each virtual stage a
        // segment between cut points (Megatron-LM's tuned runs use 2 to 5),
        // unless --schedule gives it.
        SmallVector<std::pair<Schedule, int64_t>> variants;
        int64_t segments = static_cast<int64_t>(profile.cuts.size()) + 1;
        for (Schedule s : schedules) {
          if (s != Schedule::Interleaved) {
            variants.push_back({s, 1});
            continue;
          }
          if (chunks != 0) {
            variants.push_back({s, chunks});
            continue;
          }
          for (int64_t v = 2; v <= kMaxChunks && p * v <= segments; ++v)
            variants.push_back({s, v});
        }
        for (int64_t m : counts) {
          for (auto [s, v] : variants) {
            PipelineConfig config;
            config.stages = p;
            config.microbatches = m;
            config.schedule = s;
            config.chunks = v;
            // Megatron-LM's interleaving runs micro-batches in groups of p.
            if (s == Schedule::Interleaved && (p == 1 || m % p != 0))
              continue;
            config.dp = d;
            config.batchShards = batchShards;
            config.dpLink = dpLink;
            config.ppLink = ppLink;
            // ZeRO-1 moves the same bytes as the all-reduce and holds less:
            // on whenever it can be, unless turned off.
            config.zero = train && d > 1 && c.zero.value_or(true);
            for (Recompute r : recomputes) {
              config.recompute = r;
              ++candidates;
              ++numCandidates;
              double minMemory = std::numeric_limits<double>::infinity();
              std::optional<SmallVector<int64_t>> boundaries =
                  splitStages(profile, config, model, capacity, &minMemory);
              Alternative &alternative = alternatives[{d, t, p}];
              if (!boundaries) {
                smallestMemory = std::min(smallestMemory, minMemory);
                if (!alternative.fits && minMemory < alternative.memory) {
                  alternative.config = config;
                  alternative.memory = minMemory;
                }
                continue;
              }
              PipelineEstimate estimate =
                  estimatePipeline(profile, config, *boundaries, model);
              smallestMemory =
                  std::min(smallestMemory, estimate.getPeakMemoryBytes());
              double step = estimate.getStepSeconds();
              double memory = estimate.getPeakMemoryBytes();
              if (!alternative.fits || step < alternative.step) {
                alternative.config = config;
                alternative.step = step;
                alternative.memory = memory;
                alternative.fits = true;
              }
              // Kept in order (see isFaster), per kind of profile (the
              // per-op search's estimates move most once applied): the
              // fastest ones are applied for real at the end.
              std::vector<Candidate> &kept = ranked[searched ? 1 : 0];
              Candidate candidate{d, t, searched, config, estimate, {}};
              auto position =
                  llvm::upper_bound(kept, candidate, isFaster) - kept.begin();
              if (position < static_cast<int64_t>(kRankedCandidates)) {
                candidate.opBoundaries = toOpBoundaries(profile, *boundaries);
                kept.insert(kept.begin() + position, std::move(candidate));
                if (kept.size() > kRankedCandidates)
                  kept.pop_back();
              }
              break; // recomputation is tried only when the plan does not fit
            }
          }
        }
      }
    }
  }
  if (progressShown)
    llvm::errs() << "\r\x1b[K";

  if (ranked[0].empty() && ranked[1].empty()) {
    if (candidates == 0) {
      module.emitError("no plan over ")
          << devices << " devices with the forced choices (dp=" << dp
          << ", tp=" << tp << ", pp=" << pp
          << ", microbatches=" << microbatches
          << (microbatchSize != 0 ? ", micro-batch size=" +
                                        std::to_string(microbatchSize)
                                  : std::string())
          << ") and global batch " << batch
          << ": the degrees must multiply to the device count, dp and the "
             "micro-batches must divide the batch, and tp must split some "
             "tensor";
      return signalPassFailure();
    }
    if (!std::isfinite(smallestMemory)) {
      // No candidate could be cut into its stages at all: not a memory
      // question.
      module.emitError("no plan with ")
          << (pp > 0 ? "pp=" + std::to_string(pp)
                                : std::string("the stages tried"))
          << ": the program has fewer cut points between ops than stages "
             "need (too few ops to pipeline)";
      return signalPassFailure();
    }
    module.emitError("no plan fits in memory: the smallest needs ")
        << static_cast<int64_t>(smallestMemory) << " bytes per device, a "
        << loaded->device.name << " of cluster '" << loaded->name << "' has "
        << loaded->device.memoryBytes;
    return signalPassFailure();
  }

  // Apply the winner. The applied plan is estimated again on its final
  // mesh (data-parallel axis, the per-op search re-run there, reshards
  // placed by the final propagation), which can cost more time or memory
  // than the candidate's profile said: the fastest candidates are applied
  // to copies in the order of their estimates, and the one whose applied
  // plan fits and is fastest wins (a candidate estimated no faster than a
  // plan already applied cannot win).
  std::optional<Candidate> chosen;
  OwningOpRef<ModuleOp> chosenModule;
  FailureOr<PipelineEstimate> applied = failure();
  double chosenFlops = 0;
  double smallestApplied = std::numeric_limits<double>::infinity();
  std::vector<Candidate> tried = ranked[0];
  tried.insert(tried.end(), ranked[1].begin(), ranked[1].end());
  llvm::stable_sort(tried, isFaster);
  for (const Candidate &candidate : tried) {
    if (chosen &&
        candidate.estimate.getStepSeconds() >= applied->getStepSeconds())
      break;
    OwningOpRef<ModuleOp> trial(module.clone());
    FailureOr<PipelineEstimate> trialEstimate =
        apply(*trial, candidate, *loaded, model);
    if (failed(trialEstimate))
      return signalPassFailure();
    // The degrees reported are the applied ones: a dp or tp axis the
    // applied plan splits nothing over is not that plan.
    if ((candidate.dp > 1 && !dist::isAxisUsed(*trial, "dp")) ||
        (candidate.tp > 1 && !dist::isAxisUsed(*trial, "tp")))
      continue;
    double memory = trialEstimate->getPeakMemoryBytes();
    smallestApplied = std::min(smallestApplied, memory);
    // What --explain reports for the candidate's degrees: the applied plan
    // is the one that decides.
    auto found = alternatives.find(
        {candidate.dp, candidate.tp, candidate.config.stages});
    if (found != alternatives.end() &&
        isSameConfig(found->second.config, candidate.config) &&
        trialEstimate->getStepSeconds() < found->second.appliedStep) {
      found->second.appliedStep = trialEstimate->getStepSeconds();
      found->second.appliedMemory = memory;
    }
    if (memory > capacity ||
        (chosen &&
         trialEstimate->getStepSeconds() >= applied->getStepSeconds()))
      continue;
    chosen = candidate;
    chosenModule = std::move(trial);
    applied = trialEstimate;
    chosenFlops = modelFlops;
  }
  if (!chosen && !std::isfinite(smallestApplied)) {
    module.emitError("no plan: the applied plans of the ")
        << tried.size()
        << " fastest candidates split nothing over a dp or tp degree they "
           "have (a degree that applies to no tensor)";
    return signalPassFailure();
  }
  if (!chosen) {
    module.emitError("no plan fits in memory once applied: the ")
        << tried.size() << " fastest candidates need at least "
        << static_cast<int64_t>(smallestApplied)
        << " bytes per device on their final meshes, a "
        << loaded->device.name << " of cluster '" << loaded->name << "' has "
        << loaded->device.memoryBytes;
    return signalPassFailure();
  }
  // The module becomes the copy that was checked (applying again could
  // differ: the applied plan is what was priced).
  const Candidate *best = &*chosen;
  modelFlops = chosenFlops;
  module.getBody()->getOperations().clear();
  module.getBody()->getOperations().splice(
      module.getBody()->end(), chosenModule->getBody()->getOperations());
  for (NamedAttribute attr : (*chosenModule)->getDiscardableAttrs())
    module->setAttr(attr.getName(), attr.getValue());
  const PipelineConfig &config = best->config;
  const PipelineEstimate &e = *applied;
  bool pipelined = config.stages > 1 || config.microbatches > 1;
  Builder b(context);
  double searchSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  std::string scheduleName =
      pipelined ? dist::stringifySchedule(config.schedule).str() : "none";
  module->setAttr(
      "dnnc.plan",
      b.getDictionaryAttr({
          b.getNamedAttr("dp", b.getI64IntegerAttr(best->dp)),
          b.getNamedAttr("tp", b.getI64IntegerAttr(best->tp)),
          b.getNamedAttr("pp", b.getI64IntegerAttr(config.stages)),
          b.getNamedAttr("microbatches",
                         b.getI64IntegerAttr(config.microbatches)),
          b.getNamedAttr("schedule", b.getStringAttr(scheduleName)),
          b.getNamedAttr("chunks", b.getI64IntegerAttr(config.chunks)),
          b.getNamedAttr("recompute", b.getStringAttr(dist::stringifyRecompute(
                                          config.recompute))),
          b.getNamedAttr("zero", b.getBoolAttr(config.zero)),
          b.getNamedAttr(
              "sharding",
              b.getStringAttr(best->searched ? "search" : "propagation")),
          b.getNamedAttr("step_time_s", b.getF64FloatAttr(e.getStepSeconds())),
          b.getNamedAttr("compute_time_s", b.getF64FloatAttr(e.computeSeconds)),
          b.getNamedAttr("communication_time_s",
                         b.getF64FloatAttr(e.communicationSeconds)),
          b.getNamedAttr("bubble_fraction",
                         b.getF64FloatAttr(e.bubbleFraction)),
          b.getNamedAttr("memory_bytes", b.getI64IntegerAttr(std::llround(
                                             e.getPeakMemoryBytes()))),
          // A double: a step of a large model exceeds 2^63 FLOPs.
          b.getNamedAttr("model_flops", b.getF64FloatAttr(modelFlops)),
          b.getNamedAttr("search_time_s", b.getF64FloatAttr(searchSeconds)),
          b.getNamedAttr("candidates", b.getI64IntegerAttr(candidates)),
          b.getNamedAttr("alternatives",
                         getAlternativesAttr(b, alternatives)),
      }));
}

std::unique_ptr<Pass>
dnnc::planner::createSearchParallelismPass(SearchParallelismConfig config) {
  return std::make_unique<SearchParallelismPass>(std::move(config));
}
