//===- PlanPrinter.cpp - Human-readable plan description -------*- C++ -*-===//
//
// describePlan, the text `dnnc-run --print-plan` prints.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Runtime/Plan.h"

namespace dnnc::plan {

static std::string quoted(const std::string &name) { return "'" + name + "'"; }

std::string describePlan(const Plan &plan) {
  const ModelInfo &m = plan.model;
  std::string out = "plan: target " + m.target + ", world size " +
                    std::to_string(m.worldSize) + ", mesh ";
  if (m.meshAxes.empty())
    out += "(none)";
  for (size_t i = 0; i < m.meshAxes.size(); ++i)
    out += (i ? "x" : "") + m.meshAxes[i].first + "=" +
           std::to_string(m.meshAxes[i].second);
  if (!m.deviceOrder.empty()) {
    out += ", device order";
    for (uint32_t rank : m.deviceOrder)
      out += " " + std::to_string(rank);
  }
  out += "\n";
  out += "inputs:\n";
  for (size_t i = 0; i < m.inputs.size(); ++i)
    out += "  " + std::to_string(i) + " " + quoted(m.inputs[i].name) + " " +
           formatTensorType(m.inputs[i].dtype, m.inputs[i].shape) + "\n";
  out += "outputs:\n";
  for (size_t i = 0; i < m.outputs.size(); ++i)
    out += "  " + std::to_string(i) + " " + quoted(m.outputs[i].name) + " " +
           formatTensorType(m.outputs[i].dtype, m.outputs[i].shape) + "\n";
  for (const RankProgram &r : plan.ranks) {
    out += "rank " + std::to_string(r.rank) + ": entry " + r.entry + ", code " +
           std::to_string(r.code.size()) + " bytes, weights " +
           std::to_string(r.weights.size()) + " bytes, " +
           std::to_string(r.buffers.size()) + " buffers\n";
    for (size_t i = 0; i < r.buffers.size(); ++i) {
      const BufferDesc &b = r.buffers[i];
      out += "  " + std::to_string(i) + " " + bufferRoleName(b.role);
      if (b.role != BufferRole::Weight)
        out += " " + std::to_string(b.index);
      out += " " + quoted(b.tensor.name) + " " +
             formatTensorType(b.tensor.dtype, b.tensor.shape);
      if (b.role == BufferRole::Weight)
        out += " at " + std::to_string(b.offset);
      if (!b.sliceOffsets.empty())
        out += " block at [" + formatShape(b.sliceOffsets) + "]";
      if (b.role == BufferRole::Output && !b.ownsOutput)
        out += " replica";
      out += " (" + std::to_string(b.size) + " bytes)\n";
    }
  }
  return out;
}

} // namespace dnnc::plan
