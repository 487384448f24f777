//===- PlanVerifier.cpp - Semantic checks of a plan ------------*- C++ -*-===//
//
// verifyPlan: the "Validity" rules of docs/plan-format.md, shared by the
// writer (refuses to write an invalid plan) and the reader (refuses to return
// one).
//
//===----------------------------------------------------------------------===//

#include "dnnc/Runtime/Plan.h"

#include <set>

namespace dnnc::plan {

/// Checks a target name: 1..kMaxTargetLength of [a-z0-9_].
static bool isValidTarget(const std::string &target) {
  if (target.empty() || target.size() > kMaxTargetLength)
    return false;
  for (char c : target)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'))
      return false;
  return true;
}

/// Checks a C identifier of at most kMaxNameLength bytes.
static bool isCIdentifier(const std::string &name) {
  if (name.empty() || name.size() > kMaxNameLength)
    return false;
  for (size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    if (!alpha && (i == 0 || !(c >= '0' && c <= '9')))
      return false;
  }
  return true;
}

/// Checks dtype and shape of `desc`, sets its byte size; `what` names it.
static bool checkTensor(const TensorDesc &desc, const std::string &what,
                        uint64_t &bytes, std::string &error) {
  if (desc.name.size() > kMaxNameLength) {
    error = what + ": name longer than " + std::to_string(kMaxNameLength) +
            " bytes";
    return false;
  }
  if (!isSupportedDType(desc.dtype)) {
    error = what + ": unsupported dtype code " + std::to_string(desc.dtype);
    return false;
  }
  if (desc.shape.size() > kMaxTensorRank) {
    error = what + ": rank " + std::to_string(desc.shape.size()) +
            " exceeds the limit of " + std::to_string(kMaxTensorRank);
    return false;
  }
  for (int64_t dim : desc.shape) {
    if (dim < 0) {
      error = what + ": negative dimension in shape " + formatShape(desc.shape);
      return false;
    }
  }
  if (!checkedByteSize(desc.dtype, desc.shape, bytes)) {
    error = what + ": shape " + formatShape(desc.shape) +
            " is too large (more than 2^48 bytes)";
    return false;
  }
  return true;
}

/// Checks a list of model inputs or outputs; `kind` is "input"/"output".
static bool checkSignature(const std::vector<TensorDesc> &tensors,
                           const char *kind, std::string &error) {
  std::set<std::string> names;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const TensorDesc &t = tensors[i];
    std::string what = "model " + std::string(kind) + " " + std::to_string(i) +
                       " '" + t.name.substr(0, 200) + "'";
    if (t.name.empty()) {
      error = "model " + std::string(kind) + " " + std::to_string(i) +
              " has an empty name";
      return false;
    }
    uint64_t bytes = 0;
    if (!checkTensor(t, what, bytes, error))
      return false;
    if (!names.insert(t.name).second) {
      error = what + ": duplicate name";
      return false;
    }
  }
  return true;
}

/// Checks the model section.
static bool checkModel(const ModelInfo &model, std::string &error) {
  if (!isValidTarget(model.target)) {
    error = "invalid target name '" + model.target.substr(0, 80) +
            "' (expected 1 to 64 characters of [a-z0-9_], e.g. cpu or cuda)";
    return false;
  }
  if (model.worldSize < 1 || model.worldSize > kMaxWorldSize) {
    error = "world size " + std::to_string(model.worldSize) +
            " is out of range (1 to " + std::to_string(kMaxWorldSize) + ")";
    return false;
  }
  if (model.meshAxes.size() > kMaxMeshAxes) {
    error = std::to_string(model.meshAxes.size()) +
            " mesh axes exceed the limit of " + std::to_string(kMaxMeshAxes);
    return false;
  }
  std::set<std::string> axisNames;
  uint64_t product = 1;
  for (const auto &[name, size] : model.meshAxes) {
    if (name.empty() || name.size() > kMaxNameLength) {
      error = "mesh axis with an empty or overlong name";
      return false;
    }
    if (!axisNames.insert(name).second) {
      error = "duplicate mesh axis '" + name + "'";
      return false;
    }
    if (size < 1 || size > int64_t(kMaxWorldSize)) {
      error =
          "mesh axis '" + name + "' has invalid size " + std::to_string(size);
      return false;
    }
    product *= uint64_t(size);
    if (product > kMaxWorldSize) {
      error =
          "mesh has more than " + std::to_string(kMaxWorldSize) + " devices";
      return false;
    }
  }
  if (!model.meshAxes.empty() && product != model.worldSize) {
    error = "mesh size " + std::to_string(product) +
            " does not match world size " + std::to_string(model.worldSize);
    return false;
  }
  return checkSignature(model.inputs, "input", error) &&
         checkSignature(model.outputs, "output", error);
}

/// Checks one rank program against the model.
static bool checkRank(const ModelInfo &model, const RankProgram &program,
                      std::string &error) {
  std::string rankName = "rank " + std::to_string(program.rank);
  if (!isCIdentifier(program.entry)) {
    error = rankName + ": entry symbol '" + program.entry.substr(0, 80) +
            "' is not a C identifier";
    return false;
  }
  if (program.code.empty()) {
    error = rankName + ": no code";
    return false;
  }
  std::vector<bool> outputSeen(model.outputs.size(), false);
  for (size_t i = 0; i < program.buffers.size(); ++i) {
    const BufferDesc &b = program.buffers[i];
    std::string what = rankName + " buffer " + std::to_string(i) + " (" +
                       bufferRoleName(b.role) + " '" +
                       b.tensor.name.substr(0, 200) + "')";
    uint64_t bytes = 0;
    if (!checkTensor(b.tensor, what, bytes, error))
      return false;
    if (b.size != bytes) {
      error = what + ": size " + std::to_string(b.size) + " does not match " +
              formatTensorType(b.tensor.dtype, b.tensor.shape) + " (" +
              std::to_string(bytes) + " bytes)";
      return false;
    }
    switch (b.role) {
    case BufferRole::Input:
    case BufferRole::Output: {
      bool isInput = b.role == BufferRole::Input;
      const std::vector<TensorDesc> &list =
          isInput ? model.inputs : model.outputs;
      if (b.index >= list.size()) {
        error = what + ": model " + (isInput ? "input" : "output") + " index " +
                std::to_string(b.index) + " is out of range (" +
                std::to_string(list.size()) + " " +
                (isInput ? "inputs" : "outputs") + ")";
        return false;
      }
      if (b.offset != 0) {
        error = what + ": offset must be 0 for an " + bufferRoleName(b.role);
        return false;
      }
      const TensorDesc &global = list[b.index];
      bool fits = global.dtype == b.tensor.dtype &&
                  global.shape.size() == b.tensor.shape.size();
      for (size_t d = 0; fits && d < global.shape.size(); ++d)
        fits = b.tensor.shape[d] <= global.shape[d];
      if (!fits) {
        error = what + ": " + formatTensorType(b.tensor.dtype, b.tensor.shape) +
                " is not a part of model " + bufferRoleName(b.role) + " '" +
                global.name + "' " +
                formatTensorType(global.dtype, global.shape);
        return false;
      }
      if (!isInput) {
        if (outputSeen[b.index]) {
          error = what + ": model output '" + global.name +
                  "' is written by two buffers";
          return false;
        }
        outputSeen[b.index] = true;
      }
      break;
    }
    case BufferRole::Weight:
      if (b.index != 0) {
        error = what + ": index must be 0 for a weight";
        return false;
      }
      if (b.offset % kAlignment != 0) {
        error = what + ": offset " + std::to_string(b.offset) +
                " is not a multiple of " + std::to_string(kAlignment);
        return false;
      }
      if (b.offset > program.weights.size() ||
          b.size > program.weights.size() - b.offset) {
        error = what + ": bytes [" + std::to_string(b.offset) + ", " +
                std::to_string(b.offset + b.size) +
                ") lie outside the rank's weights (" +
                std::to_string(program.weights.size()) + " bytes)";
        return false;
      }
      break;
    default:
      error = what + ": invalid role " + std::to_string(int(b.role));
      return false;
    }
  }
  return true;
}

bool verifyPlan(const Plan &plan, std::string &error, bool allowRankSubset) {
  if (!checkModel(plan.model, error))
    return false;
  if (!allowRankSubset && plan.ranks.size() != plan.model.worldSize) {
    error = "world size is " + std::to_string(plan.model.worldSize) +
            " but the plan has " + std::to_string(plan.ranks.size()) +
            " rank programs";
    return false;
  }
  for (size_t i = 0; i < plan.ranks.size(); ++i) {
    uint32_t rank = plan.ranks[i].rank;
    bool ok = allowRankSubset ? rank < plan.model.worldSize &&
                                    (i == 0 || rank > plan.ranks[i - 1].rank)
                              : rank == i;
    if (!ok) {
      error = "rank programs are not ordered by rank 0 .. " +
              std::to_string(plan.model.worldSize - 1) + " (entry " +
              std::to_string(i) + " is rank " + std::to_string(rank) + ")";
      return false;
    }
    if (!checkRank(plan.model, plan.ranks[i], error))
      return false;
  }
  return true;
}

} // namespace dnnc::plan
