//===- Pipelines.cpp - dnnc's phase pipelines ---------------*- C++ -*-===//
//
// Builds and registers the pass pipelines of dnnc's phases.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Pipelines/Pipelines.h"
#include "dnnc/Dialect/Dist/Transforms/Passes.h"
#include "dnnc/Dialect/Dnn/Transforms/Passes.h"
#include "dnnc/Planner/Passes.h"
#include "dnnc/Target/CPU/CPUTarget.h"
#include "dnnc/Target/CUDA/CUDATarget.h"

#include "mlir/Pass/PassOptions.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/StringSwitch.h"

using namespace mlir;

std::optional<dnnc::Phase> dnnc::parsePhase(llvm::StringRef name) {
  return llvm::StringSwitch<std::optional<Phase>>(name)
      .Case("import", Phase::Import)
      .Case("graph", Phase::Graph)
      .Case("plan", Phase::Plan)
      .Case("partition", Phase::Partition)
      .Case("device", Phase::Device)
      .Default(std::nullopt);
}

void dnnc::buildGraphPipeline(OpPassManager &pm) {
  pm.addPass(createCanonicalizerPass());
  pm.addPass(dnn::createFoldWeightTransposesPass());
  // After the folds (ONNX Split is a set of dnn.slice ops by then).
  pm.addPass(dnn::createSplitFusedProjectionsPass());
  // Written-out GELUs as one op: one kernel on every target, and what the
  // planner prices (one input kept for the backward pass, not five).
  pm.addPass(dnn::createFuseGeluPass());
  pm.addPass(createCSEPass());
  pm.addPass(dist::createCheckShardingsPass());
}

/// Adds the plan phase: `createMesh` creates the given mesh (null: none,
/// one device unless the plan is searched).
static void buildPlanPipeline(OpPassManager &pm,
                              const dnnc::PlanOptions &options,
                              std::unique_ptr<Pass> createMesh) {
  using namespace dnnc;
  // Weights become arguments before sharding: their `dist.sharding` then
  // tells the packager which block of each weight a rank holds.
  pm.addPass(dnn::createOutlineWeightsPass());
  // The precision the program runs in is the one planned and priced (bf16
  // or fp16 matrices at their peak, 2-byte activations and weights with
  // fp32 master copies and Adam states); the device phase finds it done.
  dnn::ConvertPrecisionPassOptions convertPrecision;
  convertPrecision.precision = options.precision;
  pm.addPass(dnn::createConvertPrecisionPass(convertPrecision));
  // The same program on one device as on a mesh (propagation and the
  // searches would split them too): priced and lowered alike.
  pm.addNestedPass<func::FuncOp>(dist::createSplitConstantExpressionsPass());
  if (options.isSearched()) {
    pm.addPass(planner::createSearchParallelismPass(*options.search));
    pm.addPass(dist::createCheckShardingsPass());
    return;
  }
  if (!createMesh)
    return;
  pm.addPass(std::move(createMesh));
  if (!options.shardingSpec.empty()) {
    dist::ApplyShardingSpecPassOptions spec;
    spec.spec = options.shardingSpec;
    pm.addPass(dist::createApplyShardingSpecPass(spec));
  }
  if (options.sharding == ShardingMode::Stress) {
    dist::StressShardingsPassOptions stress;
    stress.seed = options.seed;
    pm.addPass(dist::createStressShardingsPass(stress));
  } else {
    // Replicate: propagation without seeds replicates every value.
    dist::PropagateShardingsPassOptions propagate;
    if (options.sharding == ShardingMode::Auto) {
      propagate.dpAxis = options.dpAxis;
      propagate.tpAxis = options.tpAxis;
      if (options.zero && options.optimizer)
        propagate.zeroAxis = options.dpAxis;
    }
    pm.addPass(dist::createPropagateShardingsPass(propagate));
  }
  pm.addPass(dist::createCheckShardingsPass());
}

void dnnc::buildPlanPipeline(OpPassManager &pm, const PlanOptions &options) {
  ::buildPlanPipeline(pm, options,
                      options.mesh.empty()
                          ? nullptr
                          : dist::createCreateMeshPass(options.mesh));
}

void dnnc::buildDevicePipeline(OpPassManager &pm, const PlanOptions &options) {
  if (options.target == Target::CUDA)
    buildCUDADevicePipeline(pm, options.precision);
  else
    buildCPUDevicePipeline(pm, options.precision);
}

void dnnc::buildPartitionPipeline(OpPassManager &pm) {
  pm.addPass(dist::createSplitMicrobatchesPass());
  pm.addPass(dist::createMaterializeStagesPass());
  pm.addPass(dist::createPartitionPass());
  // Independent all-reduces (a training step's gradients) in buckets.
  pm.addPass(dist::createBucketAllReducesPass());
}

void dnnc::buildPipelineUpTo(OpPassManager &pm, Phase phase,
                             const PlanOptions &options) {
  if (phase >= Phase::Graph) {
    buildGraphPipeline(pm);
    if (options.lossOutput) {
      // The gradient program (and the training step), on the cleaned-up
      // graph; then the cleanup again (the forward ops nothing needs any
      // more go).
      if (options.addLoss)
        pm.addPass(dnn::createAddLossPass(*options.addLoss));
      // The stages of the forward ops; their gradient ops follow them.
      if (options.stages)
        pm.addPass(dist::createAssignStagesPass(*options.stages));
      // Mixed precision: the forward graph in bf16/f16 (its casts join the
      // stages of the ops next to them), the parameters f32 masters; the
      // gradient follows the forward's types.
      if (options.precision != dnn::Precision::FP32) {
        dnn::ConvertPrecisionPassOptions convertPrecision;
        convertPrecision.precision = options.precision;
        pm.addPass(dnn::createConvertPrecisionPass(convertPrecision));
      }
      dnn::AutodiffPassOptions autodiff;
      autodiff.loss = *options.lossOutput;
      autodiff.parametersOnly = options.optimizer.has_value();
      autodiff.lossScale = options.lossScale;
      pm.addPass(dnn::createAutodiffPass(autodiff));
      if (options.optimizer)
        pm.addPass(dnn::createApplyOptimizerPass(*options.optimizer));
      pm.addPass(createCanonicalizerPass());
      pm.addPass(createCSEPass());
    }
  }
  if (phase >= Phase::Plan)
    buildPlanPipeline(pm, options);
  if (phase >= Phase::Partition &&
      (!options.isSingleDevice() || options.stages))
    buildPartitionPipeline(pm);
  if (phase >= Phase::Device)
    buildDevicePipeline(pm, options);
}

namespace {
/// The options of the `dnnc-plan` pipeline (a `PlanOptions` for dnnc-opt).
struct PlanPipelineOptions : public PassPipelineOptions<PlanPipelineOptions> {
  /// The mesh axes, as `dist-create-mesh` takes them (that pass parses
  /// them; see `PlanOptions::mesh`).
  Option<std::string> mesh{
      *this, "mesh",
      llvm::cl::desc("Mesh axes, outermost first: NAME=SIZE[:intra|inter],... "
                     "(empty: one device)"),
      llvm::cl::init("")};
  /// See `PlanOptions::dpAxis`.
  Option<std::string> dpAxis{
      *this, "dp-axis",
      llvm::cl::desc("Split dim 0 of every graph input over this mesh axis"),
      llvm::cl::init("")};
  /// See `PlanOptions::tpAxis`.
  Option<std::string> tpAxis{
      *this, "tp-axis",
      llvm::cl::desc("Megatron-style tensor parallelism over this mesh axis"),
      llvm::cl::init("")};
  /// See `PlanOptions::sharding`.
  Option<dnnc::ShardingMode> sharding{
      *this, "sharding", llvm::cl::desc("How shardings are chosen"),
      llvm::cl::init(dnnc::ShardingMode::Auto),
      llvm::cl::values(clEnumValN(dnnc::ShardingMode::Auto, "auto",
                                  "propagate from the dp/tp seeds"),
                       clEnumValN(dnnc::ShardingMode::Replicate, "replicate",
                                  "replicate everything"),
                       clEnumValN(dnnc::ShardingMode::Stress, "stress",
                                  "shard every op pseudo-randomly (tests)"))};
  /// See `PlanOptions::seed`.
  Option<uint64_t> seed{*this, "seed",
                        llvm::cl::desc("Seed of sharding=stress"),
                        llvm::cl::init(0)};

  /// See `PlanOptions::shardingSpec`.
  Option<std::string> shardingSpec{
      *this, "sharding-spec",
      llvm::cl::desc("A sharding-spec JSON file seeding propagation"),
      llvm::cl::init("")};

  /// Returns the `PlanOptions` these options describe, but for the mesh.
  dnnc::PlanOptions toPlanOptions() const {
    dnnc::PlanOptions options;
    options.dpAxis = dpAxis;
    options.tpAxis = tpAxis;
    options.sharding = sharding;
    options.seed = seed;
    options.shardingSpec = shardingSpec;
    return options;
  }
};
} // namespace

void dnnc::registerPipelines() {
  registerCPUPipelines();
  PassPipelineRegistration<>(
      "dnnc-graph",
      "dnnc's graph phase: canonicalize and fold, transpose weights, split "
      "fused projections, CSE, "
      "check shardings",
      [](OpPassManager &pm) { buildGraphPipeline(pm); });
  PassPipelineRegistration<PlanPipelineOptions>(
      "dnnc-plan",
      "dnnc's plan phase: outline weights, create the mesh, choose and check "
      "shardings",
      [](OpPassManager &pm, const PlanPipelineOptions &options) {
        std::unique_ptr<Pass> createMesh;
        if (!llvm::StringRef(options.mesh).trim().empty()) {
          dist::CreateMeshPassOptions mesh;
          mesh.axes = options.mesh;
          createMesh = dist::createCreateMeshPass(mesh);
        }
        ::buildPlanPipeline(pm, options.toPlanOptions(),
                            std::move(createMesh));
      });
  PassPipelineRegistration<>(
      "dnnc-partition",
      "dnnc's partition phase: SPMD partitioning into the per-rank program",
      [](OpPassManager &pm) { buildPartitionPipeline(pm); });
}
