//===- Report.cpp - Human- and machine-readable plan reports ----*- C++ -*-===//
//
// Part of the dnnc project.
//
//===----------------------------------------------------------------------===//
//
// Implements buildPlanReport: the totals of the plan (the pipeline estimate
// of the plan the module holds), the MFU, the stages, and the per-node
// table of `--explain`, whose op times are priced on the shards each op's
// factor sharding cuts it into.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Planner/Report.h"
#include "dnnc/Dialect/Dist/Transforms/FactorSharding.h"
#include "dnnc/Dialect/Dnn/Transforms/Passes.h"
#include "dnnc/Dialect/Dist/IR/DistDialect.h"
#include "dnnc/Planner/PlanCost.h"
#include "dnnc/Planner/Pipeline.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>

using namespace mlir;
using namespace dnnc;
using namespace dnnc::planner;

/// The most characters a node name or sharding column is padded to; longer
/// entries overflow their column rather than widen every row.
static constexpr size_t kMaxColumnWidth = 48;

/// The most op names a row lists before it only counts them.
static constexpr size_t kMaxListedOps = 4;

/// Formats `seconds` with a unit that keeps 1 to 3 digits before the point.
static std::string formatSeconds(double seconds) {
  if (!std::isfinite(seconds))
    return "inf";
  if (seconds == 0)
    return "0 s";
  if (seconds < 1e-6)
    return llvm::formatv("{0:f2} ns", seconds * 1e9).str();
  if (seconds < 1e-3)
    return llvm::formatv("{0:f2} us", seconds * 1e6).str();
  if (seconds < 1)
    return llvm::formatv("{0:f2} ms", seconds * 1e3).str();
  return llvm::formatv("{0:f2} s", seconds).str();
}

/// Formats `bytes` in B, KiB, MiB, GiB or TiB.
static std::string formatBytes(double bytes) {
  static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  unsigned unit = 0;
  while (bytes >= 1024 && unit + 1 < std::size(units)) {
    bytes /= 1024;
    ++unit;
  }
  if (unit == 0)
    return llvm::formatv("{0} B", static_cast<int64_t>(bytes)).str();
  return llvm::formatv("{0:f2} {1}", bytes, units[unit]).str();
}

/// Formats `sharding` compactly, `[{"dp"}, {}, {"tp"}]` (with
/// ` partial {"tp"}` for partial sums); `-` for none.
static std::string formatSharding(dist::ShardingAttr sharding) {
  if (!sharding)
    return "-";
  std::string text = "[";
  for (int64_t dim = 0, e = sharding.getRank(); dim < e; ++dim)
    text += (dim ? ", " : "") + dist::formatAxes(sharding.getDimAxes(dim));
  text += "]";
  if (sharding.isPartial())
    text += " partial " + dist::formatAxes(sharding.getPartial());
  return text;
}

/// Returns the peak FLOP/s the MFU of `func` is measured against: the
/// device's BF16 matrix peak when most FLOPs run on bf16 or f16, its F32
/// matrix peak otherwise.
static double getMfuPeak(func::FuncOp func, const Cluster &cluster) {
  double halfFlops = 0, otherFlops = 0;
  if (func) {
    func.walk([&](dnn::DnnCostOpInterface op) {
      Type elementType;
      for (Value value : op->getOperands())
        if (auto shaped = dyn_cast<ShapedType>(value.getType())) {
          elementType = shaped.getElementType();
          break;
        }
      double flops = op.getCost().flops;
      if (isa_and_nonnull<BFloat16Type, Float16Type>(elementType))
        halfFlops += flops;
      else
        otherFlops += flops;
    });
  }
  return cluster.device.getPeakFlops(halfFlops > otherFlops ? DType::BF16
                                                            : DType::F32);
}

namespace {
/// One row of the `--explain` table: consecutive ops of one ONNX node.
struct NodeRow {
  /// The ONNX node name (`<unnamed>` for ops without one).
  std::string node;
  /// The pipeline stage of its ops.
  int64_t stage = 0;
  /// The op names, without their dialect.
  SmallVector<StringRef> ops;
  /// The result shardings of the group's last op.
  std::string sharding;
  /// The estimated seconds of the group's ops.
  double seconds = 0;
};
} // namespace

/// Formats the ops column of `row`: `3 (transpose, matmul, add)`, the names
/// elided after kMaxListedOps.
static std::string formatOps(const NodeRow &row) {
  std::string text = std::to_string(row.ops.size()) + " (";
  for (auto [index, name] : llvm::enumerate(row.ops)) {
    if (index == kMaxListedOps) {
      text += ", ...";
      break;
    }
    text += (index ? ", " : "") + name.str();
  }
  return text + ")";
}

/// The integer field `name` of `entry` (0 when absent).
static int64_t getInt(DictionaryAttr entry, StringRef name) {
  auto attr = entry.getAs<IntegerAttr>(name);
  return attr ? attr.getInt() : 0;
}

/// Returns the boolean `name` of `entry` (false when absent).
static bool getBool(DictionaryAttr entry, StringRef name) {
  auto attr = entry.getAs<BoolAttr>(name);
  return attr && attr.getValue();
}

/// The `alternatives` of `dnnc.plan` (see SearchParallelism) as JSON.
static llvm::json::Array getAlternativesJson(ArrayAttr alternatives) {
  llvm::json::Array array;
  if (!alternatives)
    return array;
  for (auto entry : alternatives.getAsRange<DictionaryAttr>()) {
    llvm::json::Object object{
        {"dp", getInt(entry, "dp")},
        {"tp", getInt(entry, "tp")},
        {"pp", getInt(entry, "pp")},
        {"microbatches", getInt(entry, "microbatches")},
        {"fits", getBool(entry, "fits")},
        {"memory_bytes", getInt(entry, "memory_bytes")},
    };
    if (auto schedule = entry.getAs<StringAttr>("schedule"))
      object["schedule"] = schedule.getValue();
    if (auto recompute = entry.getAs<StringAttr>("recompute"))
      object["recompute"] = recompute.getValue();
    if (auto step = entry.getAs<FloatAttr>("step_time_s"))
      object["step_time_s"] = step.getValueAsDouble();
    if (auto step = entry.getAs<FloatAttr>("applied_step_time_s")) {
      object["applied_step_time_s"] = step.getValueAsDouble();
      object["applied_memory_bytes"] = getInt(entry, "applied_memory_bytes");
    }
    array.push_back(std::move(object));
  }
  return array;
}

/// Prints the `alternatives` of a search: the best candidate of each
/// (dp, tp, pp), fastest first, with why it lost to the plan (`dp`, `tp`,
/// `pp`, step `step`): slower by how much, or more memory than a device
/// of `cluster` has.
static void printAlternatives(llvm::raw_ostream &os, ArrayAttr alternatives,
                              int64_t dp, int64_t tp, int64_t pp, double step,
                              const Cluster &cluster) {
  if (!alternatives || alternatives.empty())
    return;
  os << "candidates (the best of each dp x tp x pp the search priced):\n";
  for (auto entry : alternatives.getAsRange<DictionaryAttr>()) {
    int64_t d = getInt(entry, "dp"), t = getInt(entry, "tp"),
            p = getInt(entry, "pp");
    os << llvm::formatv("  dp={0} tp={1} pp={2}", d, t, p);
    auto schedule = entry.getAs<StringAttr>("schedule");
    if (p > 1 || getInt(entry, "microbatches") > 1)
      os << ", " << getInt(entry, "microbatches")
         << (getInt(entry, "microbatches") == 1 ? " micro-batch "
                                                 : " micro-batches ")
         << (schedule ? schedule.getValue() : "");
    auto recompute = entry.getAs<StringAttr>("recompute");
    if (recompute && recompute.getValue() != "off")
      os << ", " << recompute.getValue() << " recomputation";
    double memory = static_cast<double>(getInt(entry, "memory_bytes"));
    auto candidateStep = entry.getAs<FloatAttr>("step_time_s");
    if (!getBool(entry, "fits")) {
      if (memory >= 9.0e18)
        os << ": no split into its stages (too few cut points)\n";
      else
        os << ": does not fit, needs " << formatBytes(memory)
           << " per device, more than the "
           << formatBytes(static_cast<double>(cluster.device.memoryBytes))
           << " a device has\n";
      continue;
    }
    double seconds = candidateStep.getValueAsDouble();
    os << ": step " << formatSeconds(seconds) << ", memory "
       << formatBytes(memory);
    // The fastest candidates were applied on their final meshes (the
    // data-parallel axis, the final propagation's reshards): that estimate
    // decided.
    if (auto applied = entry.getAs<FloatAttr>("applied_step_time_s")) {
      seconds = applied.getValueAsDouble();
      double appliedMemory =
          static_cast<double>(getInt(entry, "applied_memory_bytes"));
      os << "; applied: step " << formatSeconds(seconds) << ", memory "
         << formatBytes(appliedMemory);
      if (appliedMemory > static_cast<double>(cluster.device.memoryBytes)) {
        os << ", more than the "
           << formatBytes(static_cast<double>(cluster.device.memoryBytes))
           << " a device has\n";
        continue;
      }
    }
    if (d == dp && t == tp && p == pp)
      os << " (chosen)";
    else if (step > 0)
      os << llvm::formatv(" ({0:f2}x the chosen step)", seconds / step);
    os << "\n";
  }
}

PlanReport dnnc::planner::buildPlanReport(ModuleOp module,
                                          const Cluster &cluster, Mode mode) {
  auto func = module.lookupSymbol<func::FuncOp>("main");
  if (func && func.isExternal())
    func = nullptr;
  auto meshes = module.getOps<dist::MeshOp>();
  dist::MeshOp mesh = meshes.empty() ? dist::MeshOp() : *meshes.begin();
  CostModel model(cluster, mode);
  model.usePrecisionOf(module);

  // The estimate of the plan as the module holds it (the search priced the
  // same thing); without a readable plan, an empty one.
  std::optional<ModulePlan> plan;
  PipelineEstimate estimate;
  if (func) {
    FailureOr<ModulePlan> read = readModulePlan(module, model);
    if (succeeded(read)) {
      plan = std::move(*read);
      estimate = estimatePipeline(plan->profile, plan->config,
                                  plan->boundaries, model);
    }
  }
  PipelineConfig config = plan ? plan->config : PipelineConfig();

  // Degrees and devices from the mesh axes.
  int64_t dp = 1, tp = 1, devices = 1;
  if (mesh) {
    devices = mesh.getNumDevices();
    for (unsigned i = 0, e = mesh.getNumAxes(); i < e; ++i) {
      dist::MeshAxisAttr axis = mesh.getAxis(i);
      if (axis.getName().getValue() == "dp")
        dp = axis.getSize();
      else if (axis.getName().getValue() == "tp")
        tp = axis.getSize();
    }
  }
  double step = estimate.getStepSeconds();
  double memory = estimate.getPeakMemoryBytes();
  double flops = plan ? plan->profile.modelFlops : 0;
  double searchSeconds = 0;
  int64_t candidates = 0;
  ArrayAttr alternatives;
  if (auto summary = module->getAttrOfType<DictionaryAttr>("dnnc.plan")) {
    if (auto attr = summary.getAs<FloatAttr>("search_time_s"))
      searchSeconds = attr.getValueAsDouble();
    if (auto attr = summary.getAs<IntegerAttr>("candidates"))
      candidates = attr.getInt();
    alternatives = summary.getAs<ArrayAttr>("alternatives");
  }
  double peak = getMfuPeak(func, cluster);
  double mfu = step > 0 && peak > 0 && std::isfinite(step)
                   ? flops / (step * static_cast<double>(devices) * peak)
                   : 0;
  // A compiled training step (dnnc --mode=train) is priced as the program
  // it is (Mode::Infer: forward, backward and update are all its ops), but
  // it trains.
  bool trainingStep = false;
  if (func)
    for (unsigned i = 0, e = func.getNumResults(); i < e; ++i)
      trainingStep |= bool(func.getResultAttr(i, dnn::kUpdatesAttrName));
  const char *modeName =
      mode == Mode::Train || trainingStep ? "train" : "infer";
  // The precision the program was planned in: dnn-convert-precision's
  // (dnnc --precision), else the model's own types.
  auto precisionAttr =
      module->getAttrOfType<dnn::PrecisionAttr>(dnn::kPrecisionAttrName);
  std::string precision =
      precisionAttr ? dnn::stringifyPrecision(precisionAttr.getValue()).str()
                    : "model types";
  bool pipelined = config.stages > 1 || config.microbatches > 1;
  std::string schedule =
      pipelined ? dist::stringifySchedule(config.schedule).str() : "none";

  llvm::json::Array stages;
  for (auto [index, stage] : llvm::enumerate(estimate.stages)) {
    int64_t rank = static_cast<int64_t>(index) % config.stages;
    stages.push_back(llvm::json::Object{
        {"stage", static_cast<int64_t>(index)},
        {"rank", rank},
        {"ops", stage.end - stage.begin},
        {"forward_s", stage.forwardCompute + stage.forwardCommunication},
        {"backward_s", stage.backwardCompute + stage.backwardCommunication},
        {"transfer_s", stage.transferSeconds},
        {"memory_bytes", static_cast<int64_t>(
                             std::llround(estimate.deviceMemory[rank]))},
    });
  }
  // The table: consecutive ops of one node (in one stage) form a row;
  // reshards are counted apart.
  // Each op's seconds per step as the estimate prices it (its profile
  // item, all micro-batches): the rows add up to the step (see the last
  // line of the table).
  double microbatches = static_cast<double>(
      std::max<int64_t>(config.microbatches, 1));
  auto opSeconds = [&](int64_t index) {
    return index < static_cast<int64_t>(estimate.itemSeconds.size())
               ? estimate.itemSeconds[index] * microbatches
               : 0.0;
  };
  SmallVector<NodeRow> rows;
  int64_t numReshards = 0;
  double reshardSeconds = 0;
  if (func) {
    int64_t index = -1;
    for (Operation &op : func.getBody().front().without_terminator()) {
      ++index;
      if (isa<dist::ReshardOp>(op)) {
        ++numReshards;
        reshardSeconds += opSeconds(index);
        continue;
      }
      std::string node = dnn::getNodeName(op.getLoc()).str();
      if (node.empty())
        node = "<unnamed>";
      auto stageAttr = op.getAttrOfType<IntegerAttr>(
          dist::DistDialect::getStageAttrName());
      int64_t stage = stageAttr ? stageAttr.getInt() : 0;
      if (rows.empty() || rows.back().node != node ||
          rows.back().stage != stage)
        rows.push_back(NodeRow{node, stage, {}, "", 0});
      NodeRow &row = rows.back();
      StringRef name = op.getName().getStringRef();
      row.ops.push_back(name.substr(name.find('.') + 1));
      row.seconds += opSeconds(index);
      std::string sharding;
      for (OpResult result : op.getResults())
        sharding += (result.getResultNumber() ? "; " : "") +
                    formatSharding(dist::getStoredSharding(result));
      row.sharding = sharding.empty() ? "-" : sharding;
    }
  }

  // The step as the sum of the rows: the busiest pipeline rank's ops and
  // reshards, its stage transfers, the other ranks' fill and drain, then
  // gradient synchronisation and the optimizer.
  int64_t ranks = std::max<int64_t>(config.stages, 1);
  SmallVector<double> work(ranks, 0), transfers(ranks, 0);
  for (auto [index, stage] : llvm::enumerate(estimate.stages)) {
    int64_t rank = static_cast<int64_t>(index) % ranks;
    work[rank] += stage.getMicrobatchSeconds();
    transfers[rank] += stage.transferSeconds;
  }
  int64_t busiest = std::max_element(work.begin(), work.end()) - work.begin();
  std::pair<const char *, double> stepParts[] = {
      {"ops and reshards",
       microbatches * (work[busiest] - transfers[busiest])},
      {"stage transfers", microbatches * transfers[busiest]},
      {"pipeline fill and drain",
       estimate.stages.empty()
           ? 0.0
           : estimate.pipelineSeconds - microbatches * work[busiest]},
      {"gradient synchronisation", estimate.gradientSyncSeconds},
      {"optimizer", estimate.optimizerSeconds}};
  llvm::json::Object parts{{"rank", busiest}};
  const char *partKeys[] = {"ops_and_reshards_s", "stage_transfers_s",
                            "fill_and_drain_s", "gradient_sync_s",
                            "optimizer_s"};
  for (auto [key, part] : llvm::zip(partKeys, stepParts))
    parts[key] = part.second;
  llvm::json::Array nodes;
  for (const NodeRow &row : rows)
    nodes.push_back(llvm::json::Object{{"node", row.node},
                                       {"stage", row.stage},
                                       {"ops", static_cast<int64_t>(
                                                   row.ops.size())},
                                       {"seconds", row.seconds}});

  PlanReport report;
  report.json = llvm::json::Object{
      {"degrees", llvm::json::Object{{"dp", dp}, {"tp", tp},
                                     {"pp", config.stages}}},
      {"microbatches", config.microbatches},
      {"schedule", schedule},
      {"chunks", config.chunks},
      {"recompute", dist::stringifyRecompute(config.recompute)},
      {"zero", config.zero},
      {"step_time_s", step},
      {"compute_time_s", estimate.computeSeconds},
      {"communication_time_s", estimate.communicationSeconds},
      {"bubble_fraction", estimate.bubbleFraction},
      {"search_time_s", searchSeconds},
      {"peak_memory_bytes", static_cast<int64_t>(std::llround(memory))},
      {"model_flops", flops},
      {"mfu", mfu},
      {"cluster", cluster.name},
      {"mode", modeName},
      {"precision", precision},
      {"devices", devices},
      {"stages", std::move(stages)},
      {"nodes", std::move(nodes)},
      {"reshard_s", reshardSeconds},
      {"step_parts", std::move(parts)},
      {"alternatives", getAlternativesJson(alternatives)},
  };


  llvm::raw_string_ostream os(report.explanation);
  os << "plan: dp=" << dp << " tp=" << tp << " pp=" << config.stages << " on "
     << devices << (devices == 1 ? " device" : " devices") << " of cluster "
     << cluster.name << " (" << modeName << ", " << precision
     << "): step " << formatSeconds(step)
     << " (compute " << formatSeconds(estimate.computeSeconds)
     << ", communication " << formatSeconds(estimate.communicationSeconds)
     << "), memory " << formatBytes(memory) << " per device, MFU "
     << llvm::formatv("{0:f2}%", mfu * 100);
  if (candidates > 0)
    os << ", searched " << candidates << " candidates in "
       << formatSeconds(searchSeconds);
  os << "\n";
  if (pipelined) {
    os << "pipeline: " << config.microbatches << " micro-batches, schedule "
       << schedule;
    if (config.chunks > 1)
      os << " (" << config.chunks << " chunks per rank)";
    os << ", bubble " << llvm::formatv("{0:f2}%", estimate.bubbleFraction * 100)
       << (config.recompute != Recompute::Off
               ? (", " + dist::stringifyRecompute(config.recompute) +
                  " activation recomputation")
                     .str()
               : "")
       << (config.zero ? ", ZeRO-1" : "") << "\n";
    os << "stage  rank  ops    fwd/micro-batch  bwd/micro-batch  memory/device\n";
    for (auto [index, stage] : llvm::enumerate(estimate.stages)) {
      int64_t rank = static_cast<int64_t>(index) % config.stages;
      os << llvm::left_justify(std::to_string(index), 5) << "  "
         << llvm::left_justify(std::to_string(rank), 4) << "  "
         << llvm::left_justify(std::to_string(stage.end - stage.begin), 5)
         << "  "
         << llvm::left_justify(
                formatSeconds(stage.forwardCompute +
                              stage.forwardCommunication),
                15)
         << "  "
         << llvm::left_justify(
                formatSeconds(stage.backwardCompute +
                              stage.backwardCommunication),
                15)
         << "  " << formatBytes(estimate.deviceMemory[rank]) << "\n";
    }
  }

  size_t nodeWidth = 4, opsWidth = 3, shardingWidth = 15;
  SmallVector<std::string> opsColumn;
  for (const NodeRow &row : rows) {
    opsColumn.push_back(formatOps(row));
    nodeWidth = std::max(nodeWidth, std::min(row.node.size(), kMaxColumnWidth));
    opsWidth = std::max(opsWidth, opsColumn.back().size());
    shardingWidth =
        std::max(shardingWidth, std::min(row.sharding.size(), kMaxColumnWidth));
  }
  os << llvm::left_justify("node", nodeWidth) << "  "
     << (pipelined ? "stage  " : "") << llvm::left_justify("ops", opsWidth)
     << "  " << llvm::left_justify("result sharding", shardingWidth) << "  "
     << "est. time\n";
  for (auto [row, ops] : llvm::zip(rows, opsColumn)) {
    os << llvm::left_justify(row.node, nodeWidth) << "  ";
    if (pipelined)
      os << llvm::left_justify(std::to_string(row.stage), 5) << "  ";
    os << llvm::left_justify(ops, opsWidth) << "  "
       << llvm::left_justify(row.sharding, shardingWidth) << "  "
       << formatSeconds(row.seconds) << "\n";
  }
  os << "reshards: " << numReshards << " (" << formatSeconds(reshardSeconds)
     << ")\n";
  // How the rows make the step (see the decomposition above).
  os << "step " << formatSeconds(step) << " = ops and reshards"
     << (config.stages > 1 ? " of pipeline rank " + std::to_string(busiest)
                           : "")
     << " " << formatSeconds(stepParts[0].second);
  for (auto [name, seconds] : ArrayRef(stepParts).drop_front())
    if (std::abs(seconds) > 1e-15)
      os << " + " << name << " " << formatSeconds(seconds);
  os << "\n";
  printAlternatives(os, alternatives, dp, tp, config.stages, step, cluster);
  return report;
}
