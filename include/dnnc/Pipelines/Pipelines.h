//===- Pipelines.h - dnnc's phase pipelines ---------------------*- C++ -*-===//
//
// The pass pipelines of dnnc's phases, built in a library so that `dnnc`,
// `dnnc-opt` and tests share one definition.
//
//===----------------------------------------------------------------------===//

#ifndef DNNC_PIPELINES_PIPELINES_H
#define DNNC_PIPELINES_PIPELINES_H

#include "dnnc/Dialect/Dnn/IR/Dnn.h"

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

/// Options of the plan phase (`dnnc --mesh --parallel --sharding`).
struct PlanOptions {
  /// The mesh axes, `NAME=SIZE[:intra|inter],...` outermost first, as
  /// `dist-create-mesh` takes them. Empty: one device, no mesh, and the
  /// plan and partition phases run no `dist` pass.
  std::string meshAxes;
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
  /// When above 1: no mesh is given, the data- and tensor-parallel degrees
  /// over this many devices are searched (`dnnc-search-parallelism`).
  int64_t searchDevices = 0;
  /// The cluster the search prices plans on (preset or JSON file).
  std::string cluster = "cpu-local";
  /// Whether the search may put several ranks on one device (a one-node
  /// cluster grows to the device count).
  bool oversubscribe = false;
  /// What the search prices: "infer" or "train".
  std::string mode = "infer";
  /// Degrees the search keeps (0: searched).
  int64_t forcedDp = 0, forcedTp = 0, forcedPp = 0;
  /// Micro-batches the search keeps (0: searched).
  int64_t microbatches = 0;
  /// Samples per micro-batch of one data-parallel replica the search keeps
  /// (0: searched; see `dnnc --micro-batch-size`).
  int64_t microbatchSize = 0;
  /// The schedule the search keeps ("gpipe", "1f1b", "interleaved"; empty:
  /// searched) and the virtual stages per rank of the interleaved one (0:
  /// the default).
  std::string schedule;
  int64_t chunks = 0;
  /// Activation recomputation and ZeRO-1: "auto", "on" or "off".
  std::string recompute = "auto", zero = "auto";
  /// Whether the search may choose pipelines and micro-batches (plans that
  /// are not executed).
  bool searchPipelines = false;
  /// Whether the search shows progress on stderr.
  bool progress = false;
  /// The code generation target of the device phase: "cpu" or "cuda".
  std::string target = "cpu";
  /// `dnnc --precision`: fp32, tf32, bf16 or fp16. Applied at the start of
  /// the plan phase (dnn-convert-precision after dnn-outline-weights), so
  /// the planner prices it; the packager rounds the weights to match.
  dnn::Precision precision = dnn::Precision::FP32;

  /// Returns true if the program runs on one device (no mesh axes).
  bool isSingleDevice() const {
    return llvm::StringRef(meshAxes).empty() && searchDevices <= 1;
  }
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

/// Adds the `partition` phase to `pm`: SPMD partitioning into the per-rank
/// program (dist-partition).
void buildPartitionPipeline(mlir::OpPassManager &pm);

/// Adds every pipeline up to and including `phase` to `pm`; `options`
/// configure the plan phase (the partition phase is skipped for a single
/// device) and the precision of the device phase, which lowers for the cpu
/// target.
void buildPipelineUpTo(mlir::OpPassManager &pm, Phase phase,
                       const PlanOptions &options = {});

/// Registers the pipelines with the global registry (`dnnc-graph`,
/// `dnnc-plan` and `dnnc-partition` in `dnnc-opt`).
void registerPipelines();

} // namespace dnnc

#endif // DNNC_PIPELINES_PIPELINES_H
