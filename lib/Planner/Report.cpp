//===- Report.cpp - Human- and machine-readable plan reports ----*- C++ -*-===//
//
// Part of the dnnc project.
//
//===----------------------------------------------------------------------===//
//
// Implements buildPlanReport: the totals of the plan (from `dnnc.plan` or
// estimatePlan), the MFU, and the per-node table of `--explain`, whose op
// times are priced like estimatePlan prices them (each op on the shards its
// factor sharding cuts it into).
//
//===----------------------------------------------------------------------===//

#include "dnnc/Planner/Report.h"
#include "dnnc/Dialect/Dist/Transforms/FactorSharding.h"
#include "dnnc/Dialect/Dnn/Transforms/Passes.h"
#include "dnnc/Planner/PlanCost.h"

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

PlanReport dnnc::planner::buildPlanReport(ModuleOp module,
                                          const Cluster &cluster, Mode mode) {
  auto func = module.lookupSymbol<func::FuncOp>("main");
  if (func && func.isExternal())
    func = nullptr;
  auto meshes = module.getOps<dist::MeshOp>();
  dist::MeshOp mesh = meshes.empty() ? dist::MeshOp() : *meshes.begin();
  CostModel model(cluster, mode);
  PlanEstimate estimate;
  if (func)
    estimate = estimatePlan(func, mesh, model);

  // Degrees and devices from the mesh axes.
  int64_t dp = 1, tp = 1, devices = 1;
  if (mesh) {
    for (unsigned i = 0, e = mesh.getNumAxes(); i < e; ++i) {
      dist::MeshAxisAttr axis = mesh.getAxis(i);
      devices *= axis.getSize();
      if (axis.getName().getValue() == "dp")
        dp = axis.getSize();
      else if (axis.getName().getValue() == "tp")
        tp = axis.getSize();
    }
  }

  // Totals: the search's when it ran, the estimate's otherwise.
  double step = estimate.getStepSeconds();
  double compute = estimate.computeSeconds;
  double communication = estimate.communicationSeconds;
  double memory = estimate.getMemoryBytes();
  double flops = estimate.modelFlops;
  double searchSeconds = 0;
  int64_t candidates = 0;
  if (auto plan = module->getAttrOfType<DictionaryAttr>("dnnc.plan")) {
    auto getInt = [&](StringRef name, int64_t fallback) {
      auto attr = plan.getAs<IntegerAttr>(name);
      return attr ? attr.getInt() : fallback;
    };
    auto getFloat = [&](StringRef name, double fallback) {
      auto attr = plan.getAs<FloatAttr>(name);
      return attr ? attr.getValueAsDouble() : fallback;
    };
    dp = getInt("dp", dp);
    tp = getInt("tp", tp);
    step = getFloat("step_time_s", step);
    compute = getFloat("compute_time_s", compute);
    communication = getFloat("communication_time_s", communication);
    memory = static_cast<double>(
        getInt("memory_bytes", static_cast<int64_t>(std::llround(memory))));
    flops = static_cast<double>(
        getInt("model_flops", static_cast<int64_t>(std::llround(flops))));
    searchSeconds = getFloat("search_time_s", 0);
    candidates = getInt("candidates", 0);
  }
  double peak = getMfuPeak(func, cluster);
  double mfu = step > 0 && peak > 0 && std::isfinite(step)
                   ? flops / (step * static_cast<double>(devices) * peak)
                   : 0;
  const char *modeName = mode == Mode::Train ? "train" : "infer";

  PlanReport report;
  report.json = llvm::json::Object{
      {"degrees", llvm::json::Object{{"dp", dp}, {"tp", tp}, {"pp", 1}}},
      {"microbatches", 1},
      {"schedule", "none"},
      {"step_time_s", step},
      {"compute_time_s", compute},
      {"communication_time_s", communication},
      {"search_time_s", searchSeconds},
      {"peak_memory_bytes", static_cast<int64_t>(std::llround(memory))},
      {"model_flops", static_cast<int64_t>(std::llround(flops))},
      {"mfu", mfu},
      {"cluster", cluster.name},
      {"mode", modeName},
      {"devices", devices},
  };

  // The table: consecutive ops of one node form a row; reshards are
  // counted apart.
  SmallVector<NodeRow> rows;
  int64_t numReshards = 0;
  double reshardSeconds = 0;
  if (func) {
    for (Operation &op : func.getBody().front().without_terminator()) {
      if (auto reshard = dyn_cast<dist::ReshardOp>(op)) {
        ++numReshards;
        if (mesh)
          reshardSeconds +=
              model.getReshardTime(reshard.getInput().getType(),
                                   dist::getStoredSharding(reshard.getInput()),
                                   reshard.getTo(), mesh);
        continue;
      }
      std::string node = dnn::getNodeName(op.getLoc()).str();
      if (node.empty())
        node = "<unnamed>";
      if (rows.empty() || rows.back().node != node)
        rows.push_back(NodeRow{node, {}, "", 0});
      NodeRow &row = rows.back();
      StringRef name = op.getName().getStringRef();
      row.ops.push_back(name.substr(name.find('.') + 1));
      row.seconds += model.getOpTime(&op, getOpShards(&op, mesh));
      std::string sharding;
      for (OpResult result : op.getResults())
        sharding += (result.getResultNumber() ? "; " : "") +
                    formatSharding(dist::getStoredSharding(result));
      row.sharding = sharding.empty() ? "-" : sharding;
    }
  }

  llvm::raw_string_ostream os(report.explanation);
  os << "plan: dp=" << dp << " tp=" << tp << " pp=1 on " << devices
     << (devices == 1 ? " device" : " devices") << " of cluster "
     << cluster.name << " (" << modeName << "): step " << formatSeconds(step)
     << " (compute " << formatSeconds(compute) << ", communication "
     << formatSeconds(communication) << "), memory " << formatBytes(memory)
     << " per device, MFU " << llvm::formatv("{0:f2}%", mfu * 100);
  if (candidates > 0)
    os << ", searched " << candidates << " candidates in "
       << formatSeconds(searchSeconds);
  os << "\n";

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
     << llvm::left_justify("ops", opsWidth) << "  "
     << llvm::left_justify("result sharding", shardingWidth) << "  "
     << "est. time\n";
  for (auto [row, ops] : llvm::zip(rows, opsColumn))
    os << llvm::left_justify(row.node, nodeWidth) << "  "
       << llvm::left_justify(ops, opsWidth) << "  "
       << llvm::left_justify(row.sharding, shardingWidth) << "  "
       << formatSeconds(row.seconds) << "\n";
  os << "reshards: " << numReshards << " (" << formatSeconds(reshardSeconds)
     << "); other communication (pending reductions, gradient all-reduces): "
     << formatSeconds(
            std::max(0.0, estimate.communicationSeconds - reshardSeconds))
     << "\n";
  return report;
}
