//===- Session.h - Running one rank of a plan ------------------*- C++ -*-===//
//
// Target-independent execution of one rank: a Session allocates every buffer
// of the rank's buffer list on a Backend (one instance per micro-batch for
// inputs, outputs and activations), uploads the weights once, and then per
// run uploads the inputs, executes the rank's steps (function calls, sends
// and receives between pipeline stages) and downloads the outputs.
// dnnc-run and the tests both drive plans through this class.
//
//===----------------------------------------------------------------------===//

#ifndef DNNC_RUNTIME_SESSION_H
#define DNNC_RUNTIME_SESSION_H

#include "dnnc/Runtime/Backend.h"
#include "dnnc/Runtime/HostTensor.h"
#include "dnnc/Runtime/Plan.h"

#include <memory>
#include <string>
#include <vector>

namespace dnnc::rt {

/// A tensor read from an input file, before it is matched to a model input.
struct InputFile {
  /// The file it came from (for diagnostics).
  std::string path;
  /// Its content; `tensor.name` may be empty.
  HostTensor tensor;
};

/// Matches input files to the model inputs: by tensor name when the name is
/// a model input, else (empty name) by position among the files. Checks the
/// count, unknown and duplicate names, dtypes and shapes. On success
/// `ordered[i]` is the tensor for model input i (moved out of `files`).
bool bindInputs(const plan::ModelInfo &model, std::vector<InputFile> &files,
                std::vector<HostTensor> &ordered, std::string &error);

/// One rank of a plan, ready to run on a backend.
class Session {
public:
  /// Prepares rank `rank` of `plan` (which must hold that rank's program) on
  /// `backend`: checks the target, connects the backend to the plan's mesh
  /// (its world must have the plan's world size), loads the code, allocates
  /// and zero-fills every buffer and uploads the weights. `backend` must
  /// outlive the session.
  static std::unique_ptr<Session> create(const plan::Plan &plan, uint32_t rank,
                                         Backend &backend, std::string &error);
  ~Session();
  Session(const Session &) = delete;
  Session &operator=(const Session &) = delete;

  /// Uploads `inputs` (whole model inputs in model-input order, as
  /// bindInputs returns them) to the input buffers: each instance of a
  /// buffer gets its micro-batch's block of the input (plan::blockOffsets).
  /// Checks each dtype and shape against the model input.
  bool setInputs(const std::vector<HostTensor> &inputs, std::string &error);

  /// Runs the rank's steps once, in order, and waits for its sends to
  /// complete. Errors name the rank, the step and what it did.
  bool run(std::string &error);

  /// Downloads this rank's output blocks: `outputs[i]` holds block `i` of
  /// getOutputBlocks() (its shape, named after its model output).
  bool getOutputs(std::vector<HostTensor> &outputs, std::string &error);

  /// Downloads this rank's output blocks and assembles them into whole
  /// model outputs, in model-output order (for a single-rank plan: the
  /// model outputs). Only written blocks (OutputBlock::owns) are placed;
  /// elements no written block of this rank covers are zero, and outputs
  /// for which the rank writes no block have dtype 0.
  bool getModelOutputs(std::vector<HostTensor> &outputs, std::string &error);

  /// Where this rank's output blocks lie in the model outputs: one per
  /// (Output buffer, micro-batch), as plan::outputBlocks returns them.
  std::vector<plan::OutputBlock> getOutputBlocks() const;

  /// The rank this session runs.
  uint32_t getRank() const { return rank; }

  /// The rank's buffer list.
  const std::vector<plan::BufferDesc> &getBuffers() const {
    return program.buffers;
  }

  /// Returns true for a training plan: a run is one training step, after
  /// which the parameters and optimizer states are the ones it computed
  /// (each function's Update buffers trade places with the buffers they
  /// update right after the call: nothing is copied).
  bool isTraining() const;

  /// Sets the step number (1 at the first step) that the training step's
  /// learning-rate schedule and bias corrections read.
  bool setStep(uint64_t step, std::string &error);

  /// Downloads buffer `index` (its first instance), named after it.
  bool getBuffer(size_t index, HostTensor &tensor, std::string &error);

  /// Downloads this rank's persistent state: every Weight and State buffer
  /// in buffer order, named after the buffer (a checkpoint's content).
  bool getState(std::vector<HostTensor> &state, std::string &error);

  /// Uploads a state getState returned (same names, types and order).
  bool setState(const std::vector<HostTensor> &state, std::string &error);

  /// The time one schedule step took in a run (see recordTimes).
  struct StepTime {
    /// The step's index in the rank's schedule.
    size_t step = 0;
    /// Seconds from the start of the run to its start and to its end.
    double start = 0, end = 0;
  };

  /// From the next run on, each run replaces `times` (null: none) with the
  /// times of its schedule steps, in order (a Recv's time is mostly the
  /// wait for its sender). The backend is synchronised after each step
  /// so that its time is its own.
  void recordTimes(std::vector<StepTime> *times) { stepTimes = times; }

  /// Returns the rank's schedule steps (the plan's, for the names of
  /// recorded times: plan::describeStep).
  const plan::RankProgram &getProgram() const { return program; }

private:
  Session(const plan::Plan &plan, uint32_t rank, Backend &backend);

  /// The instance of buffer `index` that micro-batch `microbatch` uses.
  const DeviceBuffer &instance(uint32_t index, uint32_t microbatch) const;

  /// Executes step `i` of the schedule.
  bool runStep(size_t i, std::string &error);

  /// The plan's model section.
  plan::ModelInfo model;
  /// The rank's buffers, functions and steps (no code, no weights).
  plan::RankProgram program;
  /// The rank this session runs.
  uint32_t rank;
  /// The device the buffers live on.
  Backend &backend;
  /// Per buffer: its instances, one for a weight, one per micro-batch for
  /// the other roles.
  std::vector<std::vector<DeviceBuffer>> buffers;
  /// Scratch for the argument pointers of a function call.
  std::vector<void *> pointers;
  /// Per function: its Update buffers, swapped after each call.
  std::vector<std::vector<uint32_t>> updatesOf;
  /// The Accumulator buffers, zeroed before each run.
  std::vector<uint32_t> accumulators;
  /// Where runs record their step times (recordTimes), or null.
  std::vector<StepTime> *stepTimes = nullptr;
};

} // namespace dnnc::rt

#endif // DNNC_RUNTIME_SESSION_H
