//===- PlanVerifier.cpp - Semantic checks of a plan ------------*- C++ -*-===//
//
// verifyPlan: the "Validity" rules of docs/plan-format.md, shared by the
// writer (refuses to write an invalid plan) and the reader (refuses to return
// one).
//
//===----------------------------------------------------------------------===//

#include "dnnc/Runtime/Mesh.h"
#include "dnnc/Runtime/Plan.h"

#include <map>
#include <set>
#include <tuple>

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

/// Returns true if buffer `b` holds a block of `whole` (a tensor of
/// `global`'s dtype and rank, shaped `shape`): the whole of it without
/// slice offsets, else the block of `b`'s shape at its offsets.
static bool isBlockOf(const BufferDesc &b, const TensorDesc &global,
                      const std::vector<int64_t> &shape) {
  if (global.dtype != b.tensor.dtype ||
      shape.size() != b.tensor.shape.size())
    return false;
  if (b.sliceOffsets.empty())
    return b.tensor.shape == shape;
  if (b.sliceOffsets.size() != shape.size())
    return false;
  // Overflow-free: every dimension and offset is below 2^48.
  for (size_t d = 0; d < shape.size(); ++d)
    if (b.sliceOffsets[d] < 0 || b.sliceOffsets[d] > shape[d] ||
        b.tensor.shape[d] > shape[d] - b.sliceOffsets[d])
      return false;
  return true;
}

/// Checks the parameter block a Weight or State buffer `b` holds: without
/// a parameter list, index 0 and no slice offsets; with one, a parameter of
/// the buffer's dtype and rank whose shape holds the block.
static bool checkParameterBlock(const ModelInfo &model, const BufferDesc &b,
                                const std::string &what, std::string &error) {
  if (!b.ownsOutput) {
    error = what + ": ownsOutput must be true";
    return false;
  }
  if (model.parameters.empty()) {
    if (b.index != 0 || !b.sliceOffsets.empty()) {
      error = what + ": index 0 and no slice offsets without a parameter "
                     "list";
      return false;
    }
    return true;
  }
  if (b.index >= model.parameters.size()) {
    error = what + ": parameter index " + std::to_string(b.index) +
            " is out of range (" + std::to_string(model.parameters.size()) +
            " parameters)";
    return false;
  }
  const TensorDesc &global = model.parameters[b.index];
  if (!isBlockOf(b, global, global.shape)) {
    error = what + ": " + formatTensorType(b.tensor.dtype, b.tensor.shape) +
            (b.sliceOffsets.empty()
                 ? std::string(" (whole)")
                 : " at offsets [" + formatShape(b.sliceOffsets) + "]") +
            " is not a block of parameter '" + global.name + "' " +
            formatTensorType(global.dtype, global.shape);
    return false;
  }
  return true;
}

/// Checks the micro-batch dims of the model inputs or outputs `tensors`;
/// `kind` is "input"/"output".
static bool checkMicrobatchDims(const ModelInfo &model,
                                const std::vector<TensorDesc> &tensors,
                                const std::vector<int32_t> &dims,
                                const char *kind, std::string &error) {
  if (dims.empty())
    return true;
  if (dims.size() != tensors.size()) {
    error = std::string(kind) + " micro-batch dims have " +
            std::to_string(dims.size()) + " entries; expected 0 or the " +
            kind + " count " + std::to_string(tensors.size());
    return false;
  }
  for (size_t i = 0; i < dims.size(); ++i) {
    const TensorDesc &t = tensors[i];
    int32_t dim = dims[i];
    if (dim == -1)
      continue;
    std::string what = "model " + std::string(kind) + " " + std::to_string(i) +
                       " '" + t.name.substr(0, 200) + "' " +
                       formatTensorType(t.dtype, t.shape);
    if (dim < 0 || size_t(dim) >= t.shape.size()) {
      error = what + ": micro-batch dim " + std::to_string(dim) +
              " is neither -1 nor a dim of the tensor";
      return false;
    }
    if (t.shape[dim] % model.microbatches != 0) {
      error = what + ": dim " + std::to_string(dim) + " (extent " +
              std::to_string(t.shape[dim]) + ") is not divisible by the " +
              std::to_string(model.microbatches) + " micro-batches";
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
  if (!model.deviceOrder.empty()) {
    if (model.deviceOrder.size() != model.worldSize) {
      error = "device order has " + std::to_string(model.deviceOrder.size()) +
              " entries; expected the world size " +
              std::to_string(model.worldSize);
      return false;
    }
    std::vector<int64_t> order(model.deviceOrder.begin(),
                               model.deviceOrder.end());
    int64_t p = invalidDeviceOrderPosition(order, model.worldSize);
    if (p >= 0) {
      error = "device order is not a permutation of the ranks 0 .. " +
              std::to_string(model.worldSize - 1) + " (position " +
              std::to_string(p) + " holds rank " +
              std::to_string(model.deviceOrder[p]) + ")";
      return false;
    }
  }
  if (!checkSignature(model.inputs, "input", error) ||
      !checkSignature(model.outputs, "output", error) ||
      !checkSignature(model.parameters, "parameter", error))
    return false;
  if (model.microbatches < 1 || model.microbatches > kMaxMicrobatches) {
    error = "micro-batch count " + std::to_string(model.microbatches) +
            " is out of range (1 to " + std::to_string(kMaxMicrobatches) + ")";
    return false;
  }
  return checkMicrobatchDims(model, model.inputs, model.inputMicrobatchDims,
                             "input", error) &&
         checkMicrobatchDims(model, model.outputs, model.outputMicrobatchDims,
                             "output", error);
}

/// The shape of the part of the model input/output of Input/Output buffer
/// `b` that one micro-batch holds: the global shape, divided by the number
/// of micro-batches along the tensor's micro-batch dim.
static std::vector<int64_t> microbatchShape(const ModelInfo &model,
                                            const BufferDesc &b) {
  bool isInput = b.role == BufferRole::Input;
  std::vector<int64_t> shape =
      (isInput ? model.inputs : model.outputs)[b.index].shape;
  int32_t dim = microbatchDim(model, isInput, b.index);
  if (dim >= 0 && !b.wholeBatch)
    shape[dim] /= model.microbatches;
  return shape;
}

/// "compute", "send" or "recv".
static const char *stepKindName(StepKind kind) {
  switch (kind) {
  case StepKind::Compute:
    return "compute";
  case StepKind::Send:
    return "send";
  case StepKind::Recv:
    return "recv";
  }
  return "unknown";
}

/// Checks the functions and steps of `program`.
static bool checkSchedule(const ModelInfo &model, const RankProgram &program,
                          const std::string &rankName, std::string &error) {
  if (program.functions.empty()) {
    error = rankName + ": no functions";
    return false;
  }
  for (size_t i = 0; i < program.functions.size(); ++i) {
    const FunctionDesc &f = program.functions[i];
    std::string what = rankName + " function " + std::to_string(i);
    if (!isCIdentifier(f.symbol)) {
      error = what + ": symbol '" + f.symbol.substr(0, 80) +
              "' is not a C identifier";
      return false;
    }
    for (size_t a = 0; a < f.args.size(); ++a) {
      if (f.args[a] >= program.buffers.size()) {
        error = what + " ('" + f.symbol + "'): argument " + std::to_string(a) +
                " is buffer " + std::to_string(f.args[a]) + ", out of range (" +
                std::to_string(program.buffers.size()) + " buffers)";
        return false;
      }
    }
  }
  for (size_t i = 0; i < program.steps.size(); ++i) {
    const Step &step = program.steps[i];
    std::string what = rankName + " step " + std::to_string(i) + " (" +
                       stepKindName(step.kind) + ")";
    if (step.microbatch >= model.microbatches) {
      error = what + ": micro-batch " + std::to_string(step.microbatch) +
              " is out of range (" + std::to_string(model.microbatches) +
              " micro-batches)";
      return false;
    }
    if (step.kind == StepKind::Compute) {
      if (step.index >= program.functions.size()) {
        error = what + ": function " + std::to_string(step.index) +
                " is out of range (" +
                std::to_string(program.functions.size()) + " functions)";
        return false;
      }
      if (step.peer != 0 || step.tag != 0) {
        error = what + ": peer and tag must be 0 for a compute step";
        return false;
      }
      continue;
    }
    if (step.index >= program.buffers.size() ||
        program.buffers[step.index].role != BufferRole::Activation) {
      error = what + ": buffer " + std::to_string(step.index) +
              (step.index >= program.buffers.size()
                   ? " is out of range (" +
                         std::to_string(program.buffers.size()) + " buffers)"
                   : std::string(" is an ") +
                         bufferRoleName(program.buffers[step.index].role) +
                         ", not an activation");
      return false;
    }
    if (step.peer >= model.worldSize || step.peer == program.rank) {
      error = what + ": peer rank " + std::to_string(step.peer) +
              (step.peer == program.rank
                   ? " is the rank itself"
                   : " is out of range (world size " +
                         std::to_string(model.worldSize) + ")");
      return false;
    }
    if (step.tag >= kMaxTag) {
      error = what + ": tag " + std::to_string(step.tag) +
              " is out of range (below " + std::to_string(kMaxTag) + ")";
      return false;
    }
  }
  return true;
}

/// Checks that the sends and receives of all ranks pair up: between two
/// ranks and for one tag, the k-th send of the sender matches the k-th
/// receive of the receiver (the order in which messages with one tag
/// arrive), and the two carry the same micro-batch and byte size.
static bool checkMessages(const Plan &plan, std::string &error) {
  struct Message {
    uint32_t rank;
    size_t step;
    uint32_t microbatch;
    uint64_t bytes;
  };
  // (sender, receiver, tag) -> the sends / receives in schedule order.
  using Key = std::tuple<uint32_t, uint32_t, uint32_t>;
  std::map<Key, std::vector<Message>> sends, recvs;
  for (const RankProgram &program : plan.ranks) {
    for (size_t i = 0; i < program.steps.size(); ++i) {
      const Step &step = program.steps[i];
      if (step.kind == StepKind::Compute)
        continue;
      Message message{program.rank, i, step.microbatch,
                      program.buffers[step.index].size};
      if (step.kind == StepKind::Send)
        sends[{program.rank, step.peer, step.tag}].push_back(message);
      else
        recvs[{step.peer, program.rank, step.tag}].push_back(message);
    }
  }
  auto describe = [](const Key &key, uint32_t microbatch) {
    return "from rank " + std::to_string(std::get<0>(key)) + " to rank " +
           std::to_string(std::get<1>(key)) + " with tag " +
           std::to_string(std::get<2>(key)) + " and micro-batch " +
           std::to_string(microbatch);
  };
  auto unmatched = [&](const Key &key, const Message &m, bool isSend) {
    error = "rank " + std::to_string(m.rank) + " step " +
            std::to_string(m.step) + ": the message " +
            describe(key, m.microbatch) + " has no matching " +
            (isSend ? "recv on rank " + std::to_string(std::get<1>(key))
                    : "send on rank " + std::to_string(std::get<0>(key)));
    return false;
  };
  for (const auto &[key, list] : sends) {
    auto it = recvs.find(key);
    size_t matched = it == recvs.end() ? 0 : it->second.size();
    for (size_t k = 0; k < list.size(); ++k) {
      const Message &send = list[k];
      if (k >= matched)
        return unmatched(key, send, true);
      const Message &recv = it->second[k];
      if (send.microbatch != recv.microbatch) {
        error = "rank " + std::to_string(send.rank) + " step " +
                std::to_string(send.step) + " sends the message " +
                describe(key, send.microbatch) + ", but rank " +
                std::to_string(recv.rank) + " step " +
                std::to_string(recv.step) +
                " (the matching recv: messages with one tag arrive in "
                "order) receives micro-batch " +
                std::to_string(recv.microbatch);
        return false;
      }
      if (send.bytes != recv.bytes) {
        error =
            "rank " + std::to_string(send.rank) + " step " +
            std::to_string(send.step) + " sends " + std::to_string(send.bytes) +
            " bytes " + describe(key, send.microbatch) + ", but rank " +
            std::to_string(recv.rank) + " step " + std::to_string(recv.step) +
            " receives " + std::to_string(recv.bytes) + " bytes";
        return false;
      }
    }
    if (matched > list.size())
      return unmatched(key, it->second[list.size()], false);
  }
  for (const auto &[key, list] : recvs)
    if (!sends.count(key))
      return unmatched(key, list.front(), false);
  return true;
}

/// Checks one rank program against the model.
static bool checkRank(const ModelInfo &model, const RankProgram &program,
                      std::string &error) {
  std::string rankName = "rank " + std::to_string(program.rank);
  if (program.code.empty()) {
    error = rankName + ": no code";
    return false;
  }
  if (!program.weightPieces.empty() && !program.weights.empty()) {
    error = rankName + ": both weight bytes and weight pieces";
    return false;
  }
  uint64_t pieceEnd = 0;
  for (const WeightPiece &piece : program.weightPieces) {
    if (piece.offset % kAlignment != 0 || piece.offset < pieceEnd ||
        piece.size > UINT64_MAX / 2 - piece.offset || !piece.emit) {
      error = rankName + ": weight piece at offset " +
              std::to_string(piece.offset) +
              " is unaligned, overlaps the one before or has no bytes";
      return false;
    }
    pieceEnd = piece.offset + piece.size;
  }
  std::vector<bool> outputSeen(model.outputs.size(), false);
  std::vector<bool> updated(program.buffers.size(), false);
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
    if (b.wholeBatch && b.role != BufferRole::Input) {
      error = what + ": only an input may hold the whole batch";
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
      // The block must lie inside the micro-batch's part of the tensor.
      std::vector<int64_t> part = microbatchShape(model, b);
      if (!isBlockOf(b, global, part)) {
        std::string where =
            b.sliceOffsets.empty()
                ? " (no slice offsets: the whole tensor)"
                : " at offsets [" + formatShape(b.sliceOffsets) + "]";
        error = what + ": " + formatTensorType(b.tensor.dtype, b.tensor.shape) +
                where + " is not a part of model " + bufferRoleName(b.role) +
                " '" + global.name + "' " +
                formatTensorType(global.dtype, global.shape);
        if (part != global.shape)
          error += " (one micro-batch's part: [" + formatShape(part) + "])";
        return false;
      }
      if (isInput && !b.ownsOutput) {
        error = what + ": ownsOutput is false on an input (it is meaningful "
                       "for outputs only and must keep its default, true)";
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
      if (!checkParameterBlock(model, b, what, error))
        return false;
      if (b.offset % kAlignment != 0) {
        error = what + ": offset " + std::to_string(b.offset) +
                " is not a multiple of " + std::to_string(kAlignment);
        return false;
      }
      if (b.offset > program.weightsSize() ||
          b.size > program.weightsSize() - b.offset) {
        error = what + ": bytes [" + std::to_string(b.offset) + ", " +
                std::to_string(b.offset + b.size) +
                ") lie outside the rank's weights (" +
                std::to_string(program.weightsSize()) + " bytes)";
        return false;
      }
      break;
    case BufferRole::State:
      if (!checkParameterBlock(model, b, what, error))
        return false;
      if (b.offset != 0) {
        error = what + ": offset must be 0 for a state";
        return false;
      }
      break;
    case BufferRole::Activation:
    case BufferRole::Accumulator:
    case BufferRole::Step:
      if (b.index != 0 || b.offset != 0 || !b.sliceOffsets.empty() ||
          !b.ownsOutput) {
        error = what + ": " + bufferRoleName(b.role) +
                " buffers have index 0, offset 0, no slice offsets and "
                "ownsOutput true";
        return false;
      }
      if (b.role == BufferRole::Step &&
          (b.tensor.dtype != int32_t(DataType::Float) ||
           !b.tensor.shape.empty())) {
        error = what + ": the step number is a float32 scalar, not " +
                formatTensorType(b.tensor.dtype, b.tensor.shape);
        return false;
      }
      break;
    case BufferRole::Update: {
      if (b.offset != 0 || !b.sliceOffsets.empty() || !b.ownsOutput) {
        error = what + ": an update has offset 0, no slice offsets and "
                       "ownsOutput true";
        return false;
      }
      const BufferDesc *target = b.index < program.buffers.size()
                                     ? &program.buffers[b.index]
                                     : nullptr;
      if (!target || (target->role != BufferRole::Weight &&
                      target->role != BufferRole::State &&
                      target->role != BufferRole::Accumulator)) {
        error = what + ": updates buffer " + std::to_string(b.index) +
                ", which is not a weight, optimizer state or accumulator";
        return false;
      }
      if (target->tensor.dtype != b.tensor.dtype ||
          target->tensor.shape != b.tensor.shape) {
        error = what + ": " + formatTensorType(b.tensor.dtype, b.tensor.shape) +
                " cannot update buffer " + std::to_string(b.index) + " of " +
                formatTensorType(target->tensor.dtype, target->tensor.shape);
        return false;
      }
      if (updated[b.index]) {
        error = what + ": buffer " + std::to_string(b.index) +
                " is updated twice";
        return false;
      }
      updated[b.index] = true;
      break;
    }
    default:
      error = what + ": invalid role " + std::to_string(int(b.role));
      return false;
    }
  }
  return checkSchedule(model, program, rankName, error);
}

int32_t microbatchDim(const ModelInfo &model, bool input, uint32_t index) {
  const std::vector<int32_t> &dims =
      input ? model.inputMicrobatchDims : model.outputMicrobatchDims;
  return index < dims.size() ? dims[index] : -1;
}

std::vector<int64_t> blockOffsets(const ModelInfo &model,
                                  const BufferDesc &buffer,
                                  uint32_t microbatch) {
  std::vector<int64_t> offsets = buffer.sliceOffsets;
  if (offsets.empty())
    offsets.assign(buffer.tensor.shape.size(), 0);
  bool isInput = buffer.role == BufferRole::Input;
  if (!isInput && buffer.role != BufferRole::Output)
    return offsets;
  const std::vector<TensorDesc> &list = isInput ? model.inputs : model.outputs;
  int32_t dim = microbatchDim(model, isInput, buffer.index);
  if (dim >= 0 && !buffer.wholeBatch && buffer.index < list.size() && size_t(dim) < offsets.size() &&
      size_t(dim) < list[buffer.index].shape.size())
    offsets[dim] += int64_t(microbatch) *
                    (list[buffer.index].shape[dim] / model.microbatches);
  return offsets;
}

std::vector<OutputBlock> outputBlocks(const ModelInfo &model,
                                      const RankProgram &program) {
  std::vector<OutputBlock> blocks;
  for (const BufferDesc &b : program.buffers) {
    if (b.role != BufferRole::Output)
      continue;
    bool split = microbatchDim(model, false, b.index) >= 0;
    for (uint32_t m = 0; m < model.microbatches; ++m) {
      OutputBlock block;
      block.rank = program.rank;
      block.output = b.index;
      block.microbatch = m;
      block.shape = b.tensor.shape;
      block.offsets = blockOffsets(model, b, m);
      block.owns = b.ownsOutput && (split || m == 0);
      blocks.push_back(std::move(block));
    }
  }
  return blocks;
}

/// "rank 1 (offsets [2x0], shape [2x3])" or "rank 1 micro-batch 2 (...)":
/// a block for diagnostics.
static std::string describeBlock(const OutputBlock &b) {
  std::string microbatch =
      b.microbatch ? " micro-batch " + std::to_string(b.microbatch) : "";
  return "rank " + std::to_string(b.rank) + microbatch + " (offsets [" +
         formatShape(b.offsets) + "], shape [" + formatShape(b.shape) + "])";
}

/// The number of elements of `shape` (whose product is known to be small).
static uint64_t volume(const std::vector<int64_t> &shape) {
  uint64_t n = 1;
  for (int64_t d : shape)
    n *= uint64_t(d);
  return n;
}

/// True when blocks `a` and `b` share an element.
static bool overlap(const OutputBlock &a, const OutputBlock &b) {
  for (size_t d = 0; d < a.shape.size(); ++d)
    if (a.offsets[d] + a.shape[d] <= b.offsets[d] ||
        b.offsets[d] + b.shape[d] <= a.offsets[d])
      return false;
  return true;
}

/// The error for two written blocks that overlap.
static std::string overlapError(const std::string &what, const OutputBlock &a,
                                const OutputBlock &b) {
  return what + ": the blocks written by " + describeBlock(a) + " and " +
         describeBlock(b) +
         " overlap (mark all but one copy of a replicated block ownsOutput = "
         "false)";
}

/// Largest number of written blocks of one output checked pairwise when they
/// do not form a grid.
static constexpr size_t kMaxPairwiseBlocks = 4096;

/// Largest number of output blocks (ranks x output buffers x micro-batches)
/// a whole plan may have; a bound on the work of checking them.
static constexpr uint64_t kMaxOutputBlocks = uint64_t(1) << 20;

/// Checks that the non-empty `written` blocks, each inside `global`, tile it
/// exactly.
static bool checkTiling(const TensorDesc &global,
                        const std::vector<const OutputBlock *> &written,
                        std::string &error) {
  std::string what = "model output '" + global.name + "' " +
                     formatTensorType(global.dtype, global.shape);
  uint64_t covered = 0;
  for (const OutputBlock *b : written)
    covered += volume(b->shape); // Each at most 2^48: no overflow.
  auto coverError = [&]() {
    error = what + ": the written blocks cover " + std::to_string(covered) +
            " of its " + std::to_string(volume(global.shape)) +
            " elements (every element must be written by exactly one rank)";
    return false;
  };

  // Grid tilings (every sharding dnnc produces): along each dimension the
  // distinct block intervals partition [0, size). Then two blocks overlap
  // exactly when their offsets are equal, and distinct blocks cover the
  // tensor exactly when there are as many as grid cells.
  bool grid = true;
  uint64_t cells = 1;
  for (size_t d = 0; grid && d < global.shape.size(); ++d) {
    std::map<int64_t, int64_t> intervals; // begin -> end
    for (const OutputBlock *b : written) {
      auto [it, inserted] =
          intervals.emplace(b->offsets[d], b->offsets[d] + b->shape[d]);
      grid = grid && it->second == b->offsets[d] + b->shape[d];
    }
    int64_t cursor = 0;
    for (const auto &[begin, end] : intervals) {
      grid = grid && begin == cursor;
      cursor = end;
    }
    grid = grid && cursor == global.shape[d];
    cells *= intervals.size(); // At most the element count.
  }
  if (grid) {
    std::map<std::vector<int64_t>, const OutputBlock *> seen;
    for (const OutputBlock *b : written) {
      auto [it, inserted] = seen.emplace(b->offsets, b);
      if (!inserted) {
        error = overlapError(what, *it->second, *b);
        return false;
      }
    }
    return seen.size() == cells || coverError();
  }

  // Anything else: pairwise disjoint blocks whose volumes add up.
  if (written.size() > kMaxPairwiseBlocks) {
    error = what + ": its " + std::to_string(written.size()) +
            " written blocks do not form a grid (more than " +
            std::to_string(kMaxPairwiseBlocks) + " to check pairwise)";
    return false;
  }
  for (size_t i = 0; i < written.size(); ++i)
    for (size_t j = i + 1; j < written.size(); ++j)
      if (overlap(*written[i], *written[j])) {
        error = overlapError(what, *written[i], *written[j]);
        return false;
      }
  return covered == volume(global.shape) || coverError();
}

bool checkOutputBlocks(const ModelInfo &model,
                       const std::vector<OutputBlock> &blocks,
                       std::string &error) {
  std::vector<std::vector<const OutputBlock *>> written(model.outputs.size());
  std::vector<std::vector<const OutputBlock *>> replicas(model.outputs.size());
  for (const OutputBlock &b : blocks) {
    if (b.output >= model.outputs.size() ||
        b.offsets.size() != model.outputs[b.output].shape.size() ||
        b.shape.size() != b.offsets.size()) {
      error = "output block of " + describeBlock(b) +
              " does not match a model output";
      return false;
    }
    const TensorDesc &global = model.outputs[b.output];
    for (size_t d = 0; d < b.shape.size(); ++d) {
      if (b.offsets[d] < 0 || b.shape[d] < 0 ||
          b.offsets[d] > global.shape[d] ||
          b.shape[d] > global.shape[d] - b.offsets[d]) {
        error = "model output '" + global.name + "' " +
                formatTensorType(global.dtype, global.shape) +
                ": the block of " + describeBlock(b) + " lies outside it";
        return false;
      }
    }
    (b.owns ? written : replicas)[b.output].push_back(&b);
  }
  for (size_t k = 0; k < model.outputs.size(); ++k) {
    const TensorDesc &global = model.outputs[k];
    if (written[k].empty()) {
      error = "model output '" + global.name + "' " +
              formatTensorType(global.dtype, global.shape) +
              " is not written by any rank (no output buffer with "
              "ownsOutput = true)";
      return false;
    }
    // Empty blocks of a non-empty tensor hold nothing to write.
    std::vector<const OutputBlock *> nonEmpty;
    for (const OutputBlock *b : written[k])
      if (volume(b->shape) != 0 || volume(global.shape) == 0)
        nonEmpty.push_back(b);
    if (volume(global.shape) != 0 && !checkTiling(global, nonEmpty, error))
      return false;
    std::set<std::pair<std::vector<int64_t>, std::vector<int64_t>>> owned;
    for (const OutputBlock *b : written[k])
      owned.insert({b->offsets, b->shape});
    for (const OutputBlock *b : replicas[k]) {
      if (!owned.count({b->offsets, b->shape})) {
        error = "model output '" + global.name + "': the replica held by " +
                describeBlock(*b) +
                " (ownsOutput = false) equals no block written by a rank";
        return false;
      }
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
  if (plan.ranks.size() != plan.model.worldSize)
    return true;
  if (!checkMessages(plan, error))
    return false;
  // Every (rank, output buffer, micro-batch) is a block to check: bound
  // their number before building them (a hostile plan may claim 2^16
  // ranks and 2^16 micro-batches).
  uint64_t count = 0;
  for (const RankProgram &program : plan.ranks)
    for (const BufferDesc &b : program.buffers)
      if (b.role == BufferRole::Output)
        count += plan.model.microbatches;
  if (count > kMaxOutputBlocks) {
    error = "the plan has " + std::to_string(count) +
            " output blocks (ranks x output buffers x micro-batches), more "
            "than the " + std::to_string(kMaxOutputBlocks) + " it may have";
    return false;
  }
  std::vector<OutputBlock> blocks;
  for (const RankProgram &program : plan.ranks) {
    std::vector<OutputBlock> mine = outputBlocks(plan.model, program);
    blocks.insert(blocks.end(), mine.begin(), mine.end());
  }
  return checkOutputBlocks(plan.model, blocks, error);
}

} // namespace dnnc::plan
