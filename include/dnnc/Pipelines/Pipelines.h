//===- Pipelines.h - dnnc's phase pipelines ---------------------*- C++ -*-===//
//
// The pass pipelines of dnnc's phases, built in a library so that `dnnc`,
// `dnnc-opt` and tests share one definition.
//
//===----------------------------------------------------------------------===//

#ifndef DNNC_PIPELINES_PIPELINES_H
#define DNNC_PIPELINES_PIPELINES_H

#include "dnnc/Dialect/Dist/IR/DistAttrs.h"
#include "dnnc/Dialect/Dist/Transforms/Passes.h"
#include "dnnc/Dialect/Dnn/IR/Dnn.h"
#include "dnnc/Dialect/Dnn/Transforms/Passes.h"
#include "dnnc/Planner/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>

namespace dnnc {

/// The phases of `dnnc --compile-to`, in order. Import is a translation (no
/// pass pipeline); the others are pass pipelines on the imported module.
enum class Phase { Import, Graph, Plan, Partition, Device };

/// Parses a phase name (`import`, `graph`, `plan`, `partition`, `device`).
std::optional<Phase> parsePhase(llvm::StringRef name);

/// How the plan phase chooses the shardings.
enum class ShardingMode {
  /// Propagate from the seeds the data/tensor-parallel axes give
  /// (`dist-propagate-shardings`); without seeds everything is replicated.
  Auto,
  /// Replicate everything: propagation with no seeds.
  Replicate,
  /// Shard every op it can, pseudo-randomly per seed
  /// (`dist-stress-shardings`, a test mode for partitioning).
  Stress,
};

/// The code generation target of the device phase.
enum class Target {
  /// LLVM for this CPU (or another `--target-cpu`), BLAS, MPI.
  CPU,
  /// CUDA C++ built by nvcc, cuBLASLt, NCCL.
  CUDA,
};

/// Options of the phases after import, typed: what `dnnc`'s command line
/// is parsed into once (structured mesh, enums, the cluster loaded once)
/// and handed to the pipelines.
struct PlanOptions {
  /// The mesh axes, outermost first, each with its link class. Empty: one
  /// device (unless `search`), no mesh, and the plan and partition phases
  /// run no `dist` pass.
  llvm::SmallVector<dist::MeshAxisSpec> mesh;
  /// The mesh axis dim 0 of every graph input is split over (data
  /// parallelism), or empty.
  std::string dpAxis;
  /// The mesh axis of Megatron-style tensor parallelism, or empty.
  std::string tpAxis;
  /// How shardings are chosen.
  ShardingMode sharding = ShardingMode::Auto;
  /// The seed of `ShardingMode::Stress`.
  uint64_t seed = 0;
  /// A sharding-spec JSON file (`dist-apply-sharding-spec`), or empty.
  std::string shardingSpec;
  /// When set (and over more than one device): no mesh is given, the plan
  /// is searched (`dnnc-search-parallelism`) with this configuration.
  std::optional<planner::SearchParallelismConfig> search;
  /// The code generation target of the device phase.
  Target target = Target::CPU;
  /// `dnnc --precision`. Applied at the start of the plan phase
  /// (dnn-convert-precision after dnn-outline-weights), so the planner
  /// prices it; the packager rounds the weights to match. A training step
  /// converts its forward graph before dnn-autodiff instead (mixed
  /// precision: the parameters stay f32 masters).
  dnn::Precision precision = dnn::Precision::FP32;
  /// Dynamic loss scaling of a training step: the initial loss scale
  /// (dnn-autodiff{loss-scale}); 0: the loss is not scaled.
  double lossScale = 0.0;
  /// `dnnc --mode=grad` or `train`: the graph phase ends with dnn-autodiff
  /// on this loss output (empty: the only output). None: inference.
  std::optional<std::string> lossOutput;
  /// `dnnc --loss=KIND:OUTPUT,TARGET`: dnn-add-loss runs before the
  /// gradient (which then differentiates its `loss`).
  std::optional<dnn::AddLossPassOptions> addLoss;
  /// `dnnc --mode=train`: the gradient is by the parameters alone and
  /// dnn-apply-optimizer makes it one training step.
  std::optional<dnn::ApplyOptimizerPassOptions> optimizer;
  /// With `optimizer` and a data-parallel axis: ZeRO-1, the optimizer
  /// states split over `dpAxis` (`dist-propagate-shardings{zero-axis}`).
  bool zero = false;
  /// A training step run as a pipeline (or over micro-batches): the
  /// pipeline, and the stages of its forward ops (dist-assign-stages runs
  /// before dnn-autodiff); then the partition phase runs even on one
  /// device.
  std::optional<dist::AssignStagesPassOptions> stages;

  /// Returns true if the plan is searched over more than one device.
  bool isSearched() const { return search && search->devices > 1; }

  /// Returns true if the program runs on one device (no mesh axes).
  bool isSingleDevice() const { return mesh.empty() && !isSearched(); }
};

/// Adds the `graph` phase (canonicalize, fold constants, transpose constant
/// weights, CSE, check shardings) to `pm`.
void buildGraphPipeline(mlir::OpPassManager &pm);

/// Adds the `plan` phase to `pm`: large constants become `@main` arguments
/// carrying `dnn.weight` (dnn-outline-weights), so that partitioning gives
/// each rank its block of every weight; then, unless `options` is a single
/// device, the mesh is created (dist-create-mesh), shardings are chosen
/// (dist-propagate-shardings or dist-stress-shardings) and checked
/// (dist-check-shardings).
void buildPlanPipeline(mlir::OpPassManager &pm, const PlanOptions &options);

/// Adds the `device` phase for `options.target` and `options.precision`.
void buildDevicePipeline(mlir::OpPassManager &pm, const PlanOptions &options);

/// Adds the `partition` phase to `pm`: SPMD partitioning into the per-rank
/// program (dist-partition).
void buildPartitionPipeline(mlir::OpPassManager &pm);

/// Adds every pipeline up to and including `phase` to `pm`; `options`
/// configure the plan phase (the partition phase is skipped for a single
/// device) and the target and precision of the device phase.
void buildPipelineUpTo(mlir::OpPassManager &pm, Phase phase,
                       const PlanOptions &options = {});

/// Registers the pipelines with the global registry (`dnnc-graph`,
/// `dnnc-plan` and `dnnc-partition` in `dnnc-opt`).
void registerPipelines();

} // namespace dnnc

#endif // DNNC_PIPELINES_PIPELINES_H
