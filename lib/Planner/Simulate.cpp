//===- Simulate.cpp - Discrete-event simulation of a plan -------*- C++ -*-===//
//
// Part of the dnnc project.
//
//===----------------------------------------------------------------------===//
//
// Implements simulatePlan: device clocks advanced step by step, collectives
// synchronizing their groups, and the Chrome trace of the result.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Planner/Simulate.h"
#include "dnnc/Planner/PlanCost.h"

#include "llvm/Support/JSON.h"

#include <algorithm>

using namespace mlir;
using namespace dnnc;
using namespace dnnc::planner;

namespace {
/// Streams Chrome trace events (https://ui.perfetto.dev opens them).
class TraceWriter {
public:
  /// Starts a trace of `devices` lanes on `os` (null: writes nothing).
  TraceWriter(llvm::raw_ostream *os, int64_t devices) : os(os) {
    if (!os)
      return;
    *os << "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[";
    for (int64_t device = 0; device < devices; ++device) {
      separate();
      *os << "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":0,\"tid\":"
          << device << ",\"args\":{\"name\":\"device " << device << "\"}}";
    }
  }

  /// Writes a complete event of `seconds` starting at `start` on `device`.
  void event(int64_t device, llvm::StringRef name, llvm::StringRef category,
             double start, double seconds) {
    if (!os || seconds <= 0)
      return;
    separate();
    *os << "{\"name\":" << llvm::json::Value(name.str())
        << ",\"cat\":\"" << category << "\",\"ph\":\"X\",\"pid\":0,\"tid\":"
        << device << ",\"ts\":" << llvm::format("%.3f", start * 1e6)
        << ",\"dur\":" << llvm::format("%.3f", seconds * 1e6) << "}";
  }

  /// Ends the trace.
  ~TraceWriter() {
    if (os)
      *os << "]}\n";
  }

private:
  /// Writes the comma between events.
  void separate() {
    if (!first)
      *os << ",";
    *os << "\n";
    first = false;
  }

  llvm::raw_ostream *os;
  bool first = true;
};
} // namespace

SimulationResult dnnc::planner::simulatePlan(ModuleOp module,
                                             const CostModel &model,
                                             llvm::raw_ostream *trace) {
  SimulationResult result;
  auto meshes = llvm::to_vector(module.getOps<dist::MeshOp>());
  dist::MeshOp mesh = meshes.empty() ? dist::MeshOp() : meshes.front();
  auto func = module.lookupSymbol<func::FuncOp>("main");
  result.devices = mesh ? mesh.getNumDevices() : 1;
  TraceWriter writer(trace, result.devices);
  if (!func || func.isExternal())
    return result;

  SmallVector<double> clock(result.devices, 0), busy(result.devices, 0);
  SmallVector<bool> seen(result.devices);
  forEachPlanStep(func, mesh, model, [&](const PlanStep &step) {
    if (!step.isCollective || !mesh) {
      for (int64_t device = 0; device < result.devices; ++device) {
        writer.event(device, step.name,
                     step.isCollective ? "communication" : "compute",
                     clock[device], step.seconds);
        clock[device] += step.seconds;
        busy[device] += step.seconds;
      }
      return;
    }
    // Each group starts when its last member arrives.
    std::fill(seen.begin(), seen.end(), false);
    for (int64_t device = 0; device < result.devices; ++device) {
      if (seen[device])
        continue;
      SmallVector<int64_t> group = mesh.getGroupDevices(device, step.axes);
      double start = 0;
      for (int64_t member : group)
        start = std::max(start, clock[member]);
      for (int64_t member : group) {
        seen[member] = true;
        writer.event(member, "wait", "idle", clock[member],
                     start - clock[member]);
        writer.event(member, step.name, "communication", start, step.seconds);
        clock[member] = start + step.seconds;
        busy[member] += step.seconds;
      }
    }
  });
  result.stepSeconds = *std::max_element(clock.begin(), clock.end());
  if (result.stepSeconds > 0) {
    double idle = 0;
    for (double time : busy)
      idle += result.stepSeconds - time;
    result.idleFraction = idle / (result.devices * result.stepSeconds);
  }
  return result;
}
