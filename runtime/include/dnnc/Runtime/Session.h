//===- Session.h - Running one rank of a plan ------------------*- C++ -*-===//
//
// Target-independent execution of one rank: a Session allocates every buffer
// of the rank's buffer list on a Backend, uploads the weights once, and then
// per run uploads the inputs, calls the entry and downloads the outputs.
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
  /// bindInputs returns them) to the input buffers: each buffer gets its
  /// block of the input (BufferDesc::sliceOffsets). Checks each dtype and
  /// shape against the model input.
  bool setInputs(const std::vector<HostTensor> &inputs, std::string &error);

  /// Runs the rank's entry once (synchronously).
  bool run(std::string &error);

  /// Downloads this rank's blocks of the model outputs, in model-output
  /// order, named after the model outputs (for a single-rank plan: the
  /// whole outputs). Outputs the rank does not hold have dtype 0.
  bool getOutputs(std::vector<HostTensor> &outputs, std::string &error);

  /// Where this rank's output blocks lie in the model outputs.
  std::vector<plan::OutputBlock> getOutputBlocks() const;

  /// The rank this session runs.
  uint32_t getRank() const { return rank; }

private:
  Session(const plan::Plan &plan, uint32_t rank, Backend &backend);

  plan::ModelInfo model;
  std::vector<plan::BufferDesc> bufferDescs;
  uint32_t rank;
  Backend &backend;
  std::vector<DeviceBuffer> buffers;
};

} // namespace dnnc::rt

#endif // DNNC_RUNTIME_SESSION_H
