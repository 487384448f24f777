//===- Session.cpp - Running one rank of a plan ----------------*- C++ -*-===//
//
// Input binding and the target-independent part of running a rank: buffer
// allocation, weight upload, input upload, entry call, output download.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Runtime/Session.h"
#include "dnnc/Runtime/TensorBlock.h"

namespace dnnc::rt {

using plan::BufferDesc;
using plan::BufferRole;
using plan::TensorDesc;

static std::string typeOf(int32_t dtype, const std::vector<int64_t> &shape) {
  return plan::formatTensorType(dtype, shape);
}

/// "'x' float32[2x3], 'y' int64[]".
static std::string listInputs(const plan::ModelInfo &model) {
  std::string list;
  for (const TensorDesc &t : model.inputs)
    list +=
        (list.empty() ? "'" : ", '") + t.name + "' " + typeOf(t.dtype, t.shape);
  return list.empty() ? "none" : list;
}

bool bindInputs(const plan::ModelInfo &model, std::vector<InputFile> &files,
                std::vector<HostTensor> &ordered, std::string &error) {
  size_t expected = model.inputs.size();
  if (files.size() != expected) {
    error = "the model has " + std::to_string(expected) + " input" +
            (expected == 1 ? "" : "s") + " (" + listInputs(model) + ") but " +
            std::to_string(files.size()) + " --input file" +
            (files.size() == 1 ? " was" : "s were") + " given";
    return false;
  }
  // Which file binds each model input; -1 while unbound.
  std::vector<int64_t> boundBy(expected, -1);
  auto bind = [&](size_t input, size_t file, const char *how) {
    if (boundBy[input] >= 0) {
      error = "model input '" + model.inputs[input].name +
              "' is given twice: by '" + files[boundBy[input]].path +
              "' and by '" + files[file].path + "' (" + how + ")";
      return false;
    }
    boundBy[input] = static_cast<int64_t>(file);
    return true;
  };
  // Named tensors first, then unnamed ones by their position.
  for (size_t f = 0; f < files.size(); ++f) {
    const std::string &name = files[f].tensor.name;
    if (name.empty())
      continue;
    size_t input = 0;
    while (input < expected && model.inputs[input].name != name)
      ++input;
    if (input == expected) {
      error = "input file '" + files[f].path + "' holds tensor '" + name +
              "', which is not a model input (inputs: " + listInputs(model) +
              ")";
      return false;
    }
    if (!bind(input, f, "by name"))
      return false;
  }
  for (size_t f = 0; f < files.size(); ++f)
    if (files[f].tensor.name.empty() && !bind(f, f, "by position"))
      return false;

  ordered.assign(expected, HostTensor());
  for (size_t i = 0; i < expected; ++i) {
    const TensorDesc &want = model.inputs[i];
    InputFile &file = files[boundBy[i]];
    if (file.tensor.dtype != want.dtype || file.tensor.shape != want.shape) {
      error = "input '" + want.name + "' ('" + file.path + "'): expected " +
              typeOf(want.dtype, want.shape) + ", got " +
              typeOf(file.tensor.dtype, file.tensor.shape);
      return false;
    }
    ordered[i] = std::move(file.tensor);
    ordered[i].name = want.name;
  }
  return true;
}

Session::Session(const plan::Plan &plan, uint32_t rank, Backend &backend)
    : model(plan.model), rank(rank), backend(backend) {}

Session::~Session() {
  for (DeviceBuffer &b : buffers)
    backend.deallocate(b);
}

std::unique_ptr<Session> Session::create(const plan::Plan &plan, uint32_t rank,
                                         Backend &backend, std::string &error) {
  if (plan.model.target != backend.target()) {
    error = "plan.bin was built for target '" + plan.model.target +
            "'; this backend runs '" + backend.target() + "'";
    return nullptr;
  }
  const plan::RankProgram *program = nullptr;
  for (const plan::RankProgram &p : plan.ranks)
    if (p.rank == rank)
      program = &p;
  if (!program) {
    error = "the plan holds no program for rank " + std::to_string(rank);
    return nullptr;
  }
  std::string rankName = "rank " + std::to_string(rank);

  // A single-rank plan's one program must write every output whole (the
  // reader checked this already; plans built in memory may not have been).
  if (plan.model.worldSize == 1 &&
      !plan::checkOutputBlocks(plan.model, plan::outputBlocks(*program), error))
    return nullptr;
  if (!backend.connect(plan.model, error))
    return nullptr;

  std::unique_ptr<Session> session(new Session(plan, rank, backend));
  session->bufferDescs = program->buffers;
  if (!backend.loadProgram(*program, error))
    return nullptr;
  for (size_t i = 0; i < program->buffers.size(); ++i) {
    const BufferDesc &b = program->buffers[i];
    DeviceBuffer buffer;
    if (!backend.allocate(b.size, buffer, error)) {
      error = rankName + " buffer " + std::to_string(i) + " ('" +
              b.tensor.name + "'): " + error;
      return nullptr;
    }
    session->buffers.push_back(buffer);
    if (b.role == BufferRole::Weight &&
        !backend.copyToDevice(buffer, program->weights.data() + b.offset,
                              b.size, error))
      return nullptr;
  }
  return session;
}

bool Session::setInputs(const std::vector<HostTensor> &inputs,
                        std::string &error) {
  if (inputs.size() != model.inputs.size()) {
    error = "expected " + std::to_string(model.inputs.size()) +
            " inputs, got " + std::to_string(inputs.size());
    return false;
  }
  std::string block;
  for (size_t i = 0; i < bufferDescs.size(); ++i) {
    const BufferDesc &b = bufferDescs[i];
    if (b.role != BufferRole::Input)
      continue;
    const HostTensor &t = inputs[b.index];
    const TensorDesc &global = model.inputs[b.index];
    uint64_t bytes = 0;
    if (t.dtype != global.dtype || t.shape != global.shape ||
        !plan::checkedByteSize(t.dtype, t.shape, bytes) ||
        t.data.size() != bytes) {
      error = "input '" + global.name + "': expected " +
              typeOf(global.dtype, global.shape) + ", got " +
              typeOf(t.dtype, t.shape) + " (" + std::to_string(t.data.size()) +
              " bytes)";
      return false;
    }
    const char *data = t.data.data();
    if (!b.sliceOffsets.empty()) { // This rank's block of the input.
      block.assign(b.size, '\0');
      extractBlock(t.data.data(), t.shape, b.sliceOffsets, b.tensor.shape,
                   size_t(plan::dtypeByteSize(t.dtype)), &block[0]);
      data = block.data();
    }
    if (!backend.copyToDevice(buffers[i], data, b.size, error))
      return false;
  }
  return true;
}

bool Session::run(std::string &error) {
  std::vector<void *> pointers;
  pointers.reserve(buffers.size());
  for (const DeviceBuffer &b : buffers)
    pointers.push_back(b.data);
  return backend.run(pointers, error);
}

std::vector<plan::OutputBlock> Session::getOutputBlocks() const {
  plan::RankProgram program;
  program.rank = rank;
  program.buffers = bufferDescs;
  return plan::outputBlocks(program);
}

bool Session::getOutputs(std::vector<HostTensor> &outputs, std::string &error) {
  outputs.assign(model.outputs.size(), HostTensor());
  for (size_t i = 0; i < bufferDescs.size(); ++i) {
    const BufferDesc &b = bufferDescs[i];
    if (b.role != BufferRole::Output)
      continue;
    HostTensor &t = outputs[b.index];
    t.name = model.outputs[b.index].name;
    t.dtype = b.tensor.dtype;
    t.shape = b.tensor.shape;
    t.data.assign(b.size, '\0');
    if (!backend.copyToHost(&t.data[0], buffers[i], b.size, error))
      return false;
  }
  return true;
}

} // namespace dnnc::rt
