//===- Training.h - Data and checkpoints of dnnc-run --train ---*- C++ -*-===//
//
// What `dnnc-run --train` needs besides a Session: the training samples
// (one `.npy` per model input, cut into global batches in order) and the
// checkpoints (per rank, the parameters and optimizer states, written
// atomically, with a manifest naming the step and the plan).
//
//===----------------------------------------------------------------------===//

#ifndef DNNC_RUNTIME_TRAINING_H
#define DNNC_RUNTIME_TRAINING_H

#include "dnnc/Runtime/HostTensor.h"
#include "dnnc/Runtime/Plan.h"

#include <cstdint>
#include <string>
#include <vector>

namespace dnnc::rt {

/// The samples of `--data DIR`: `DIR/NAME.npy` for every model input NAME,
/// each of shape `[S, d1, ...]` where the model input is `[B, d1, ...]` (B
/// the global batch) and of the model input's dtype, S the same for all.
/// Step `k` (0-based) reads samples `[j * B, (j + 1) * B)` with
/// `j = k mod (S / B)`: the batches in order, again from the start once
/// they are used up (a last partial batch is skipped).
class TrainingData {
public:
  /// Loads the files; errors name the file and what is wrong.
  bool load(const std::string &dir, const plan::ModelInfo &model,
            std::string &error);

  /// The number of samples S.
  uint64_t numSamples() const { return samples; }
  /// The number of whole batches in the data.
  uint64_t numBatches() const { return samples / batch; }

  /// The model inputs of step `step` (0-based), in model-input order.
  void getBatch(uint64_t step, std::vector<HostTensor> &inputs) const;

private:
  /// One array per model input.
  std::vector<HostTensor> arrays;
  /// The model inputs (name, dtype, global shape).
  std::vector<plan::TensorDesc> inputs;
  /// S and B.
  uint64_t samples = 0, batch = 1;
};

/// A checkpoint's description: `DIR/step-K/MANIFEST`.
struct CheckpointManifest {
  /// The number of training steps done.
  uint64_t step = 0;
  /// The launch it was written by: ranks, and the fingerprint of the plan
  /// (checkpointFingerprint of rank 0).
  uint32_t worldSize = 0;
  std::string plan;
};

/// A fingerprint of what a rank's state looks like under `plan` (its mesh,
/// signature and the names, roles and types of the rank's buffers): a
/// checkpoint is resumed only by a plan with the same fingerprint.
std::string checkpointFingerprint(const plan::Plan &plan, uint32_t rank);

/// The directory of the checkpoint after `step` steps in `dir`.
std::string checkpointPath(const std::string &dir, uint64_t step);

/// Writes `state` (Session::getState) as `path` (a rank's shard, written to
/// a temporary file and renamed), headed by `fingerprint`.
bool writeCheckpointShard(const std::string &path,
                          const std::string &fingerprint,
                          const std::vector<HostTensor> &state,
                          std::string &error);

/// Reads a shard writeCheckpointShard wrote; fails when its fingerprint is
/// not `fingerprint` (a checkpoint of another plan or rank).
bool readCheckpointShard(const std::string &path,
                         const std::string &fingerprint,
                         std::vector<HostTensor> &state, std::string &error);

/// Writes `DIR/step-K/MANIFEST` atomically and then `DIR/latest` (the name
/// of the newest complete checkpoint).
bool writeCheckpointManifest(const std::string &dir,
                             const CheckpointManifest &manifest,
                             std::string &error);

/// Reads the newest complete checkpoint of `dir` (`DIR/latest`, then its
/// MANIFEST) into `manifest`.
bool readLatestCheckpoint(const std::string &dir, CheckpointManifest &manifest,
                          std::string &error);

} // namespace dnnc::rt

#endif // DNNC_RUNTIME_TRAINING_H
