//===- Pipeline.h - Pipeline stages, micro-batches, schedules ---*- C++ -*-===//
//
// Part of the dnnc project.
//
//===----------------------------------------------------------------------===//
//
// The planner's model of pipeline parallelism. A sharded `@main` (every
// value carries its sharding on the stage mesh) is summarised once as a
// `PlanProfile`: its ops in program order with their costs on local
// blocks, the collectives each implies, the bytes of activations they keep
// and the bytes that cross each point of the program. A pipeline
// configuration (stages, virtual chunks per stage, micro-batches,
// schedule, recomputation, ZeRO) is then split and priced on the profile
// without touching the IR, so the search can try thousands of them.
//
// Time of one step (seconds; per micro-batch, W_d is the forward (+
// backward in training) time of the chunks device d runs, transfers
// included; a micro-batch reads the weights of its ops whole, and in
// training adds each weight gradient to an accumulator):
//
//   pipeline   m * max_d W_d + (sum_d W_d - max_d W_d) / v
//              (GPipe and 1F1B: v = 1, the classic (m - 1) * max + sum;
//              interleaved 1F1B with v chunks per device divides the fill
//              and drain bubble by v)
//   + gradient synchronisation (training): per device, a ring all-reduce
//              of its gradients over the data-parallel axis (ZeRO: a
//              reduce-scatter and an all-gather, the same volume), and of
//              weights replicated along other axes over those
//   + optimizer (training): every byte of parameters, gradients and
//              optimizer states read and written once at memory bandwidth.
//
// Memory of device d: the weights of its chunks (with gradients and
// optimizer states in training, states sharded over `dp` with ZeRO) plus
// the activations of a micro-batch times the micro-batches in flight:
// GPipe m; 1F1B min(m, p - d); interleaved min(m, ((p - d - 1) * 2 +
// (v - 1) * p + 1) / v) (Megatron-LM's warm-up counts). The activations of
// a micro-batch are the values the backward pass reads (Korthikanti et al.
// 2022, "Reducing Activation Recomputation in Large Transformer Models":
// a matrix product keeps its activation operands, a nonlinearity its input
// or result, a dropout its mask; sums, reshapes and collectives nothing),
// each counted once at its local size. Selective recomputation drops the
// values of the attention cores (the ops from one activation-by-activation
// product to the next: scores, softmax, dropout) and keeps the largest
// layer's core once; full recomputation keeps only each layer's input (the
// values crossing its cut points), plus the largest layer's saved values
// once. In inference, the most bytes alive at once.
//
//===----------------------------------------------------------------------===//

#ifndef DNNC_PLANNER_PIPELINE_H
#define DNNC_PLANNER_PIPELINE_H

#include "dnnc/Dialect/Dist/IR/PipelineSchedule.h"
#include "dnnc/Planner/CostModel.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>
#include <vector>

namespace dnnc::planner {

/// The pipeline schedules (`dist::Schedule`, the `dist.pipeline` enum).
using Schedule = dist::Schedule;

/// What the backward pass recomputes (`dist::Recompute`).
using Recompute = dist::Recompute;

/// One block of work of a pipeline rank (`dist::WorkBlock`).
using WorkBlock = dist::WorkBlock;

/// A collective one program item runs, on the local blocks of the whole
/// local batch (a micro-batch moves its share of the bytes).
struct ProfileCollective {
  /// Which collective.
  CollectiveKind kind = CollectiveKind::AllReduce;
  /// Bytes per device for the whole local batch (see getCollectiveTime).
  double bytes = 0;
  /// Devices in the group.
  int64_t groupSize = 1;
  /// The link its group spans (owned by the cost model's cluster).
  const LinkSpec *link = nullptr;
};

/// One op of the per-device program, in program order.
struct ProfileItem {
  /// The ONNX node (or the op name) it comes from.
  std::string name;
  /// True for a `dist.reshard` (its collectives are all it does).
  bool isReshard = false;
  /// The cost of the op on whole tensors (no cost: a free op).
  std::optional<dnn::OpCost> cost;
  /// The element type its FLOPs run on.
  mlir::Type elementType;
  /// The blocks its iteration space is cut into on the mesh.
  int64_t shards = 1;
  /// True when it fuses into its only user (both non-matrix ops): its
  /// result is neither written nor read back (the cost's bytes already
  /// exclude it) and it has no launch of its own.
  bool fused = false;
  /// Its collectives (reshard steps, pending reductions).
  llvm::SmallVector<ProfileCollective, 2> collectives;
  /// Bytes of local slices it copies (read and written at memory bandwidth).
  double copyBytes = 0;
  /// Local bytes of its operands that do not depend on graph inputs
  /// (weights, constants and values made from them alone): every
  /// micro-batch reads them whole.
  double fixedBytes = 0;
  /// Local bytes of its activation results (those depending on graph
  /// inputs; values made from weights and constants alone are the same for
  /// every micro-batch and not kept) for the whole local batch.
  double resultBytes = 0;
  /// Local bytes of the activations the backward pass reads that this item
  /// is the first to need (results of earlier items, graph inputs, its own
  /// results: see the file comment), for the whole local batch.
  double savedBytes = 0;
  /// The part of `savedBytes` made by items that selective recomputation
  /// runs again (their values are not kept).
  double recomputableBytes = 0;
  /// True when selective recomputation runs it again in the backward pass
  /// (an op of an attention core).
  bool recomputable = false;
  /// Indices into `PlanProfile::weights` of the weights it uses.
  llvm::SmallVector<unsigned, 2> weights;
};

/// A weight (function argument holding parameters).
struct ProfileWeight {
  /// Bytes of its local block.
  double localBytes = 0;
  /// Bytes per element.
  int64_t elementBytes = 4;
  /// The devices its gradient is summed over besides the data-parallel
  /// and pipeline axes: those of the mesh axes it is replicated on that
  /// split the work of an op using it (its gradient is partial there); 1
  /// if none.
  int64_t replicatedGroup = 1;
  /// The link of that group (owned by the cost model's cluster).
  const LinkSpec *replicatedLink = nullptr;
};

/// Maxima over ranges of a fixed sequence in O(1) (a sparse table).
class RangeMax {
public:
  /// Indexes `values`.
  void build(llvm::ArrayRef<double> values);
  /// Returns the largest value in [begin, end) (0 when empty).
  double get(int64_t begin, int64_t end) const;

private:
  /// `levels[j][i]`: the maximum of values [i, i + 2^j).
  llvm::SmallVector<llvm::SmallVector<double>> levels;
};

/// A sharded program summarised for pipeline planning.
struct PlanProfile {
  /// The ops of `@main` (terminator excluded), in program order.
  std::vector<ProfileItem> items;
  /// The weights.
  llvm::SmallVector<ProfileWeight> weights;
  /// `crossing[c]`, c in [0, items.size()]: local bytes of the values made
  /// before item c and used by item c or later, activations only (weights,
  /// graph inputs and values made from weights and constants alone are
  /// excluded: each stage has its own), for the whole local batch. What a
  /// stage boundary at c transfers.
  llvm::SmallVector<double> crossing;
  /// The points where a stage may begin (ascending, in (0, items.size())):
  /// the local minima of `crossing` (layer boundaries of a transformer).
  llvm::SmallVector<int64_t> cuts;
  /// The cut points full recomputation keeps the crossing values of (its
  /// checkpoints, ascending): one per repeated layer, as Megatron-LM keeps
  /// each transformer layer's input; every cut point when the program has
  /// no repeated layers (finalize fills them in when left empty).
  llvm::SmallVector<int64_t> checkpoints;
  /// The batch size micro-batches are cut from (dim 0 of the first graph
  /// input; 0 when unknown) on one device before micro-batching: the global
  /// batch divided by the data-parallel shards already in the mesh.
  int64_t localBatch = 0;
  /// FLOPs of one step of the whole model (training: forward and backward).
  double modelFlops = 0;

  /// Derived by `finalize` from the above:
  /// the bytes alive while item i runs (crossing[i] + its results);
  RangeMax live;
  /// the saved bytes (see ProfileItem::savedBytes) of each layer (the
  /// items between consecutive checkpoints, and from the last one to the
  /// end), and their recomputable part;
  RangeMax layerSaved, layerRecomputable;
  /// `checkpointCrossing[j]`: the sum of `crossing` at the first j
  /// checkpoints.
  llvm::SmallVector<double> checkpointCrossing;

  /// Computes the derived members; call after filling the others.
  void finalize();
  /// Returns the index of the layer (between checkpoints) holding item
  /// `item`.
  int64_t getLayer(int64_t item) const;
};

/// Returns the bytes of `value`'s block on one device of `mesh` (its stored
/// sharding; the whole tensor without a mesh or a sharding), 0 for a value
/// that is not a ranked tensor.
double getLocalBytes(mlir::Value value, dist::MeshOp mesh);

/// Summarises `func`, sharded on `mesh` (null: one device), for `model`.
/// Chains of non-matrix ops are priced fused, as the device lowering's
/// generated kernels run them: a non-matrix result whose only user is a
/// non-matrix op costs neither its write nor its read, and one launch.
/// The profile refers to the links of `model`'s cluster: use it while
/// `model` lives. Axes named `dpAxis` or `ppAxis` (either may be empty or
/// absent) are left out of weight replication: gradients over the data-parallel
/// axis are priced by the pipeline estimate, and the pipeline axis holds
/// different stages.
PlanProfile buildPlanProfile(mlir::func::FuncOp func, dist::MeshOp mesh,
                             const CostModel &model, llvm::StringRef dpAxis,
                             llvm::StringRef ppAxis);

/// Summarises the ops of `body`, a block of `func` (the body of a
/// `dist.stage`), as above; values from outside the block count as
/// computed from weights.
PlanProfile buildPlanProfile(mlir::func::FuncOp func, mlir::Block &body,
                             dist::MeshOp mesh, const CostModel &model,
                             llvm::StringRef dpAxis, llvm::StringRef ppAxis);

/// A pipeline (and data-parallel) configuration to price on a profile.
struct PipelineConfig {
  /// Pipeline ranks (devices along the pipeline axis), >= 1.
  int64_t stages = 1;
  /// Model chunks per pipeline rank (interleaved schedule), >= 1.
  int64_t chunks = 1;
  /// Micro-batches per step, >= 1; divides the profile's local batch
  /// divided by `batchShards`.
  int64_t microbatches = 1;
  /// The schedule.
  Schedule schedule = Schedule::GPipe;
  /// The profile's program computes one of this many micro-batches (a
  /// program split by dist-split-microbatches: `microbatches`), else 1: its
  /// batch-proportional costs are then already per micro-batch.
  int64_t profileMicrobatches = 1;
  /// What the backward pass recomputes (training).
  Recompute recompute = Recompute::Off;
  /// Shard optimizer states over the data-parallel axis (ZeRO-1).
  bool zero = false;
  /// The data-parallel degree (gradient all-reduce group, ZeRO shards).
  int64_t dp = 1;
  /// Further division of the profile's batch: `dp` when the profile was
  /// built on a mesh without the data-parallel axis, else 1.
  int64_t batchShards = 1;
  /// The link of the data-parallel axis.
  LinkSpec dpLink;
  /// The link between consecutive pipeline ranks.
  LinkSpec ppLink;

  /// Returns the number of virtual stages, `stages * chunks`.
  int64_t getNumVirtualStages() const { return stages * chunks; }
};

/// Returns the order in which pipeline rank `rank` runs its blocks under
/// `config` (`dist::getRankOrder`).
inline llvm::SmallVector<WorkBlock>
getRankOrder(const PipelineConfig &config, int64_t rank, bool train) {
  return dist::getRankOrder(config.stages, config.chunks, config.microbatches,
                            config.schedule, rank, train);
}

/// The estimate of one virtual stage, per micro-batch.
struct StageEstimate {
  /// First item and one past the last.
  int64_t begin = 0, end = 0;
  /// Seconds of the forward pass of one micro-batch: compute part.
  double forwardCompute = 0;
  /// Seconds of the forward pass of one micro-batch: collectives.
  double forwardCommunication = 0;
  /// Seconds of the backward pass (with recomputation) of one micro-batch:
  /// compute part (0 in inference).
  double backwardCompute = 0;
  /// Seconds of the backward pass: collectives (each forward collective
  /// has a transpose of the same volume).
  double backwardCommunication = 0;
  /// Seconds to send one micro-batch's boundary values to the next stage
  /// (and, in training, their gradients back); 0 for the last stage.
  double transferSeconds = 0;
  /// The part of the transfers a forward block of this stage sends (its
  /// outputs to later stages), and a backward block (the gradients of its
  /// inputs to earlier stages), per micro-batch.
  double forwardSendSeconds = 0, backwardSendSeconds = 0;
  /// Bytes of weights (with gradients and optimizer states in training).
  double weightBytes = 0;
  /// Bytes of activations kept per micro-batch in flight.
  double activationBytes = 0;
  /// Bytes needed once (recomputation: the largest layer's activations, or
  /// its attention cores with selective recomputation).
  double transientBytes = 0;
  /// Seconds of the gradient synchronisation of its weights (training).
  double gradientSyncSeconds = 0;
  /// Seconds of the optimizer step of its weights (training).
  double optimizerSeconds = 0;

  /// Returns the seconds one micro-batch keeps its device busy here.
  double getMicrobatchSeconds() const {
    return forwardCompute + forwardCommunication + backwardCompute +
           backwardCommunication + transferSeconds;
  }
};

/// The estimate of one step of a pipelined plan.
struct PipelineEstimate {
  /// The configuration.
  PipelineConfig config;
  /// `getNumVirtualStages() + 1` item indices: virtual stage k holds items
  /// [boundaries[k], boundaries[k + 1]); it runs on pipeline rank
  /// k % stages.
  llvm::SmallVector<int64_t> boundaries;
  /// Per virtual stage.
  std::vector<StageEstimate> stages;
  /// Bytes each pipeline rank holds at its peak.
  llvm::SmallVector<double> deviceMemory;
  /// Seconds of the pipelined forward/backward passes.
  double pipelineSeconds = 0;
  /// Seconds of gradient synchronisation and optimizer after them.
  double gradientSyncSeconds = 0, optimizerSeconds = 0;
  /// Busy seconds of the busiest pipeline rank: compute and communication.
  double computeSeconds = 0, communicationSeconds = 0;
  /// Share of device time idle in the pipeline (1 - busy / (ranks * time)).
  double bubbleFraction = 0;
  /// Per profile item: the seconds one micro-batch spends in it (compute
  /// and collectives, forward and backward, as its stage is priced; a fused
  /// item without its launch, which its consumer pays). A stage's
  /// micro-batch seconds are the sum over its items plus its transfer.
  llvm::SmallVector<double> itemSeconds;

  /// Returns the step time.
  double getStepSeconds() const {
    return pipelineSeconds + gradientSyncSeconds + optimizerSeconds;
  }
  /// Returns the largest memory of a device.
  double getPeakMemoryBytes() const;
};

/// Prices `config` on `profile` with the stage split `boundaries` (see
/// PipelineEstimate::boundaries) and `model` (its mode).
PipelineEstimate estimatePipeline(const PlanProfile &profile,
                                  const PipelineConfig &config,
                                  llvm::ArrayRef<int64_t> boundaries,
                                  const CostModel &model);

/// Splits `profile` into `config.getNumVirtualStages()` non-empty stages at
/// its cut points, contiguous in program order (every item in exactly one
/// stage), minimising the slowest stage's time per micro-batch subject to
/// every device's memory <= `capacityBytes` (a bisection on the time bound
/// with a greedy fill, which is exact for contiguous splits). Returns the
/// boundaries, or nullopt when no split fits (or there are too few cut
/// points); then `minMemoryBytes` (when given) is set to the smallest peak
/// device memory a split reaches.
std::optional<llvm::SmallVector<int64_t>>
splitStages(const PlanProfile &profile, const PipelineConfig &config,
            const CostModel &model, double capacityBytes,
            double *minMemoryBytes = nullptr);

/// Returns the micro-batches alive at once on pipeline rank `rank` (of
/// `config.stages`) under the schedule (see the file comment); fractional
/// for the interleaved schedule (in units of all of the rank's chunks).
double getMicrobatchesInFlight(const PipelineConfig &config, int64_t rank);

/// What a module after the plan phase says about its plan, before any
/// pricing.
struct PlannedModule {
  /// Its `@main`, and its mesh (null: one device).
  mlir::func::FuncOp main;
  dist::MeshOp mesh;
  /// The configuration: `dist.pipeline` (none: one stage, one micro-batch),
  /// the data-parallel degree and the links of the data-parallel (`dp`) and
  /// pipeline axes.
  PipelineConfig config;
  /// True when the module has a `dist.pipeline`.
  bool pipelined = false;
  /// The data-parallel (`dp` when the mesh has it) and pipeline axes (empty:
  /// none).
  llvm::StringRef dpAxis, ppAxis;
  /// Devices of the mesh (1 without one).
  int64_t devices = 1;
};

/// Reads the plan of `module` as above. Fails, with an error, when it has no
/// `@main` body or several meshes.
mlir::FailureOr<PlannedModule> readPlannedModule(mlir::ModuleOp module,
                                                 const CostModel &model);

/// A plan read back from a module after the plan phase.
struct ModulePlan {
  /// The profile of `@main` on the module's mesh.
  PlanProfile profile;
  /// The configuration: `dist.pipeline` (none: one stage, one micro-batch),
  /// the data-parallel axis `dp` when the mesh has one, recomputation and
  /// ZeRO from the `dnnc.plan` module attribute when present.
  PipelineConfig config;
  /// The stage boundaries read off the `dist.stage` of the ops.
  llvm::SmallVector<int64_t> boundaries;
  /// Devices of the mesh (1 without one).
  int64_t devices = 1;
};

/// Reads the plan of `module`. Fails, with an error, when it has no `@main`
/// body, several meshes, or `dist.stage`s that do not form the pipeline's
/// contiguous, non-empty, ordered stages.
mlir::FailureOr<ModulePlan> readModulePlan(mlir::ModuleOp module,
                                           const CostModel &model);

} // namespace dnnc::planner

#endif // DNNC_PLANNER_PIPELINE_H
