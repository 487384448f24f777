//===- Session.cpp - Running one rank of a plan ----------------*- C++ -*-===//
//
// Input binding and the target-independent part of running a rank: buffer
// allocation, weight upload, input upload, entry call, output download.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Runtime/Session.h"
#include "dnnc/Runtime/TensorBlock.h"

#include <algorithm>
#include <chrono>

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
  backend.releaseWorkspace();
  for (std::vector<DeviceBuffer> &instances : buffers)
    for (DeviceBuffer &b : instances)
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
      !plan::checkOutputBlocks(plan.model,
                               plan::outputBlocks(plan.model, *program), error))
    return nullptr;
  if (!backend.connect(plan.model, error))
    return nullptr;

  std::unique_ptr<Session> session(new Session(plan, rank, backend));
  session->program.rank = program->rank;
  session->program.buffers = program->buffers;
  session->program.functions = program->functions;
  session->program.steps = program->steps;
  if (!backend.loadProgram(*program, error))
    return nullptr;
  uint32_t microbatches = plan.model.microbatches;
  for (size_t i = 0; i < program->buffers.size(); ++i) {
    const BufferDesc &b = program->buffers[i];
    bool isWeight = b.role == BufferRole::Weight;
    // Weights and the training buffers have one instance.
    bool single = isWeight || b.wholeBatch || b.role == BufferRole::State ||
                  b.role == BufferRole::Update || b.role == BufferRole::Step ||
                  b.role == BufferRole::Accumulator;
    session->buffers.emplace_back();
    for (uint32_t m = 0; m < (single ? 1 : microbatches); ++m) {
      DeviceBuffer buffer;
      if (!backend.allocate(b.size, buffer, error)) {
        error = rankName + " buffer " + std::to_string(i) + " ('" +
                b.tensor.name + "'" +
                (isWeight ? "" : ", micro-batch " + std::to_string(m)) +
                "): " + error;
        return nullptr;
      }
      session->buffers.back().push_back(buffer);
    }
    if (b.role == BufferRole::Accumulator)
      session->accumulators.push_back(uint32_t(i));
    if (isWeight && !backend.copyToDevice(session->buffers.back()[0],
                                          program->weights.data() + b.offset,
                                          b.size, error))
      return nullptr;
  }
  for (const plan::FunctionDesc &f : program->functions) {
    session->updatesOf.emplace_back();
    for (uint32_t arg : f.args)
      if (program->buffers[arg].role == BufferRole::Update)
        session->updatesOf.back().push_back(arg);
  }
  return session;
}

const DeviceBuffer &Session::instance(uint32_t index,
                                      uint32_t microbatch) const {
  const std::vector<DeviceBuffer> &instances = buffers[index];
  return instances[instances.size() == 1 ? 0 : microbatch];
}

bool Session::setInputs(const std::vector<HostTensor> &inputs,
                        std::string &error) {
  if (inputs.size() != model.inputs.size()) {
    error = "expected " + std::to_string(model.inputs.size()) +
            " inputs, got " + std::to_string(inputs.size());
    return false;
  }
  std::string block;
  for (size_t i = 0; i < program.buffers.size(); ++i) {
    const BufferDesc &b = program.buffers[i];
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
    for (uint32_t m = 0; m < buffers[i].size(); ++m) {
      const char *data = t.data.data();
      if (b.tensor.shape != t.shape) { // This micro-batch's block.
        block.assign(b.size, '\0');
        extractBlock(t.data.data(), t.shape, plan::blockOffsets(model, b, m),
                     b.tensor.shape, size_t(plan::dtypeByteSize(t.dtype)),
                     &block[0]);
        data = block.data();
      }
      if (!backend.copyToDevice(buffers[i][m], data, b.size, error))
        return false;
    }
  }
  return true;
}

bool Session::runStep(size_t i, std::string &error) {
  const plan::Step &step = program.steps[i];
  switch (step.kind) {
  case plan::StepKind::Compute: {
    const plan::FunctionDesc &f = program.functions[step.index];
    pointers.clear();
    for (uint32_t arg : f.args)
      pointers.push_back(instance(arg, step.microbatch).data);
    ActiveBackend active(backend); // dnnc_rt_workspace
    if (!backend.run(step.index, step.microbatch, pointers, error))
      return false;
    // The function wrote the new value of each updated buffer into its
    // Update buffer: the two trade places, so that later steps (and the
    // next run) read the new value and the next update overwrites the old.
    for (uint32_t arg : updatesOf[step.index])
      std::swap(buffers[arg][0], buffers[program.buffers[arg].index][0]);
    return true;
  }
  case plan::StepKind::Send: {
    const DeviceBuffer &b = instance(step.index, step.microbatch);
    return backend.send(b, program.buffers[step.index].size, step.peer,
                        step.tag, error);
  }
  case plan::StepKind::Recv: {
    const DeviceBuffer &b = instance(step.index, step.microbatch);
    return backend.recv(b, program.buffers[step.index].size, step.peer,
                        step.tag, error);
  }
  }
  error = "internal error: invalid step kind";
  return false;
}

bool Session::run(std::string &error) {
  std::string rankName = "rank " + std::to_string(rank);
  // Sums over the micro-batches of a training step start at zero.
  for (uint32_t i : accumulators)
    if (!backend.fillZero(buffers[i][0], program.buffers[i].size, error)) {
      error = rankName + " accumulator " + std::to_string(i) + ": " + error;
      return false;
    }
  using Clock = std::chrono::steady_clock;
  Clock::time_point begin = Clock::now();
  auto seconds = [&] {
    return std::chrono::duration<double>(Clock::now() - begin).count();
  };
  if (stepTimes)
    stepTimes->clear();
  for (size_t i = 0; i < program.steps.size(); ++i) {
    double start = stepTimes ? seconds() : 0;
    bool ok = runStep(i, error);
    // The step's own time: a device backend finishes its work first.
    if (ok && stepTimes) {
      ok = backend.synchronize(error);
      stepTimes->push_back({i, start, seconds()});
    }
    if (ok)
      continue;
    const plan::Step &step = program.steps[i];
    // A plan without stages keeps the short form "rank R (entry E): ...".
    if (program.steps.size() == 1 && step.kind == plan::StepKind::Compute)
      error = rankName + " (entry " + program.functions[step.index].symbol +
              "): " + error;
    else
      error = rankName + " step " + std::to_string(i) + " (" +
              plan::describeStep(program, step) + "): " + error;
    // Let the sends already started finish before reporting.
    std::string ignored;
    backend.waitSends(ignored);
    return false;
  }
  if (!backend.waitSends(error)) {
    error = rankName + ": completing the sends of the run: " + error;
    return false;
  }
  return true;
}

bool Session::isTraining() const {
  return std::any_of(program.buffers.begin(), program.buffers.end(),
                     [](const BufferDesc &b) {
                       return b.role == BufferRole::Update;
                     });
}

bool Session::setStep(uint64_t step, std::string &error) {
  float value = float(step);
  for (size_t i = 0; i < program.buffers.size(); ++i)
    if (program.buffers[i].role == BufferRole::Step &&
        !backend.copyToDevice(buffers[i][0], &value, sizeof(value), error))
      return false;
  return true;
}

bool Session::getBuffer(size_t index, HostTensor &tensor,
                        std::string &error) {
  const BufferDesc &b = program.buffers[index];
  tensor.name = b.tensor.name;
  tensor.dtype = b.tensor.dtype;
  tensor.shape = b.tensor.shape;
  tensor.data.assign(b.size, '\0');
  return backend.copyToHost(&tensor.data[0], buffers[index][0], b.size, error);
}

bool Session::getState(std::vector<HostTensor> &state, std::string &error) {
  state.clear();
  for (size_t i = 0; i < program.buffers.size(); ++i) {
    const BufferDesc &b = program.buffers[i];
    if (b.role != BufferRole::Weight && b.role != BufferRole::State)
      continue;
    state.emplace_back();
    if (!getBuffer(i, state.back(), error))
      return false;
  }
  return true;
}

bool Session::setState(const std::vector<HostTensor> &state,
                       std::string &error) {
  size_t next = 0;
  for (size_t i = 0; i < program.buffers.size(); ++i) {
    const BufferDesc &b = program.buffers[i];
    if (b.role != BufferRole::Weight && b.role != BufferRole::State)
      continue;
    if (next == state.size()) {
      error = "the saved state has " + std::to_string(state.size()) +
              " tensors; this rank holds more";
      return false;
    }
    const HostTensor &t = state[next++];
    if (t.name != b.tensor.name || t.dtype != b.tensor.dtype ||
        t.shape != b.tensor.shape || t.data.size() != b.size) {
      error = "saved tensor '" + t.name + "' " + typeOf(t.dtype, t.shape) +
              " does not match buffer '" + b.tensor.name + "' " +
              typeOf(b.tensor.dtype, b.tensor.shape);
      return false;
    }
    if (!backend.copyToDevice(buffers[i][0], t.data.data(), b.size, error))
      return false;
  }
  if (next != state.size()) {
    error = "the saved state has " + std::to_string(state.size()) +
            " tensors; this rank holds " + std::to_string(next);
    return false;
  }
  return true;
}

std::vector<plan::OutputBlock> Session::getOutputBlocks() const {
  return plan::outputBlocks(model, program);
}

bool Session::getOutputs(std::vector<HostTensor> &outputs, std::string &error) {
  outputs.clear();
  for (size_t i = 0; i < program.buffers.size(); ++i) {
    const BufferDesc &b = program.buffers[i];
    if (b.role != BufferRole::Output)
      continue;
    // The same order as plan::outputBlocks: buffers, then micro-batches.
    for (uint32_t m = 0; m < model.microbatches; ++m) {
      HostTensor t;
      t.name = model.outputs[b.index].name;
      t.dtype = b.tensor.dtype;
      t.shape = b.tensor.shape;
      t.data.assign(b.size, '\0');
      if (!backend.copyToHost(&t.data[0], buffers[i][m], b.size, error))
        return false;
      outputs.push_back(std::move(t));
    }
  }
  return true;
}

bool Session::getModelOutputs(std::vector<HostTensor> &outputs,
                              std::string &error) {
  std::vector<HostTensor> local;
  if (!getOutputs(local, error))
    return false;
  std::vector<plan::OutputBlock> blocks = getOutputBlocks();
  outputs.assign(model.outputs.size(), HostTensor());
  for (size_t i = 0; i < blocks.size(); ++i) {
    const plan::OutputBlock &b = blocks[i];
    if (!b.owns)
      continue;
    const TensorDesc &desc = model.outputs[b.output];
    HostTensor &global = outputs[b.output];
    if (global.dtype == 0) {
      uint64_t bytes = 0;
      plan::checkedByteSize(desc.dtype, desc.shape, bytes);
      global.name = desc.name;
      global.dtype = desc.dtype;
      global.shape = desc.shape;
      global.data.assign(bytes, '\0');
    }
    if (!local[i].data.empty())
      insertBlock(&global.data[0], desc.shape, b.offsets, b.shape,
                  size_t(plan::dtypeByteSize(desc.dtype)),
                  local[i].data.data());
  }
  return true;
}

} // namespace dnnc::rt
