//===- PlanPrinter.cpp - Human-readable plan description -------*- C++ -*-===//
//
// describePlan, the text `dnnc-run --print-plan` prints.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Runtime/Plan.h"

namespace dnnc::plan {

static std::string quoted(const std::string &name) { return "'" + name + "'"; }

/// ", micro-batch dim 0" for a dim >= 0, "" for -1.
static std::string microbatchSuffix(int32_t dim) {
  return dim < 0 ? "" : ", micro-batch dim " + std::to_string(dim);
}

std::string describeStep(const RankProgram &program, const Step &step) {
  std::string mb = " (mb " + std::to_string(step.microbatch) + ")";
  switch (step.kind) {
  case StepKind::Compute:
    if (step.index < program.functions.size())
      return "compute " + program.functions[step.index].symbol + mb;
    return "compute function " + std::to_string(step.index) + mb;
  case StepKind::Send:
    return "send buffer " + std::to_string(step.index) + mb + " to rank " +
           std::to_string(step.peer) + " tag " + std::to_string(step.tag);
  case StepKind::Recv:
    return "recv buffer " + std::to_string(step.index) + mb + " from rank " +
           std::to_string(step.peer) + " tag " + std::to_string(step.tag);
  }
  return "invalid step";
}

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
  out += ", micro-batches " + std::to_string(m.microbatches) + "\n";
  out += "inputs:\n";
  for (size_t i = 0; i < m.inputs.size(); ++i)
    out += "  " + std::to_string(i) + " " + quoted(m.inputs[i].name) + " " +
           formatTensorType(m.inputs[i].dtype, m.inputs[i].shape) +
           microbatchSuffix(microbatchDim(m, true, uint32_t(i))) + "\n";
  out += "outputs:\n";
  for (size_t i = 0; i < m.outputs.size(); ++i)
    out += "  " + std::to_string(i) + " " + quoted(m.outputs[i].name) + " " +
           formatTensorType(m.outputs[i].dtype, m.outputs[i].shape) +
           microbatchSuffix(microbatchDim(m, false, uint32_t(i))) + "\n";
  if (!m.parameters.empty()) {
    out += "parameters:\n";
    for (size_t i = 0; i < m.parameters.size(); ++i)
      out += "  " + std::to_string(i) + " " + quoted(m.parameters[i].name) +
             " " +
             formatTensorType(m.parameters[i].dtype, m.parameters[i].shape) +
             "\n";
  }
  for (const RankProgram &r : plan.ranks) {
    out += "rank " + std::to_string(r.rank) + ": code " +
           std::to_string(r.code.size()) + " bytes, weights " +
           std::to_string(r.weightsSize()) + " bytes, " +
           std::to_string(r.buffers.size()) + " buffers, " +
           std::to_string(r.functions.size()) + " functions, " +
           std::to_string(r.steps.size()) + " steps\n";
    for (size_t i = 0; i < r.buffers.size(); ++i) {
      const BufferDesc &b = r.buffers[i];
      out += "  " + std::to_string(i) + " " + bufferRoleName(b.role);
      if (b.role == BufferRole::Input || b.role == BufferRole::Output ||
          ((b.role == BufferRole::Weight || b.role == BufferRole::State) &&
           !m.parameters.empty()))
        out += " " + std::to_string(b.index);
      out += " " + quoted(b.tensor.name) + " " +
             formatTensorType(b.tensor.dtype, b.tensor.shape);
      if (b.role == BufferRole::Weight)
        out += " at " + std::to_string(b.offset);
      if (b.role == BufferRole::Update)
        out += " -> buffer " + std::to_string(b.index);
      if (!b.sliceOffsets.empty())
        out += " block at [" + formatShape(b.sliceOffsets) + "]";
      if (b.role == BufferRole::Output && !b.ownsOutput)
        out += " replica";
      if (b.wholeBatch)
        out += " whole batch";
      out += " (" + std::to_string(b.size) + " bytes)\n";
    }
    for (size_t i = 0; i < r.functions.size(); ++i) {
      const FunctionDesc &f = r.functions[i];
      out += "  function " + std::to_string(i) + ": " + f.symbol + "(";
      for (size_t a = 0; a < f.args.size(); ++a)
        out += (a ? ", " : "") + std::to_string(f.args[a]);
      out += ")\n";
    }
    for (size_t i = 0; i < r.steps.size(); ++i)
      out += "  step " + std::to_string(i) + ": " +
             describeStep(r, r.steps[i]) + "\n";
  }
  return out;
}

} // namespace dnnc::plan
