//===- Training.cpp - Data and checkpoints of dnnc-run --train -*- C++ -*-===//
//
// Training samples from .npy files and per-rank checkpoint shards.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Runtime/Training.h"
#include "dnnc/Runtime/FileUtil.h"
#include "dnnc/Runtime/TensorFile.h"
#include "dnnc/Runtime/TensorProto.h"

#include <cerrno>
#include <cstring>
#include <sys/stat.h>

namespace dnnc::rt {

using plan::formatTensorType;

bool TrainingData::load(const std::string &dir, const plan::ModelInfo &model,
                        std::string &error) {
  arrays.clear();
  inputs = model.inputs;
  samples = 0;
  batch = 1;
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    error = "--data '" + dir + "' is not a directory";
    return false;
  }
  std::string first;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const plan::TensorDesc &input = inputs[i];
    std::string path = dir + "/" + input.name + ".npy";
    if (input.shape.empty() || input.shape[0] < 1) {
      error = "model input '" + input.name + "' " +
              formatTensorType(input.dtype, input.shape) +
              " has no batch dimension to cut samples along";
      return false;
    }
    HostTensor array;
    if (::stat(path.c_str(), &st) != 0) {
      error = "--data '" + dir + "': no file " + input.name +
              ".npy for model input '" + input.name + "' " +
              formatTensorType(input.dtype, input.shape);
      return false;
    }
    if (!readTensorFile(path, array, error)) {
      error = "'" + path + "': " + error;
      return false;
    }
    std::vector<int64_t> sample(input.shape.begin() + 1, input.shape.end());
    bool shapeOk = !array.shape.empty() &&
                   std::vector<int64_t>(array.shape.begin() + 1,
                                        array.shape.end()) == sample;
    if (array.dtype != input.dtype || !shapeOk) {
      std::string rest =
          sample.empty() ? "" : " x " + plan::formatShape(sample);
      error = "'" + path + "' holds " +
              formatTensorType(array.dtype, array.shape) + "; model input '" +
              input.name + "' " + formatTensorType(input.dtype, input.shape) +
              " needs " + plan::dtypeName(input.dtype) + "[S" + rest +
              "] (S samples)";
      return false;
    }
    uint64_t count = uint64_t(array.shape[0]);
    if (i == 0) {
      samples = count;
      batch = uint64_t(input.shape[0]);
      first = path;
    } else if (count != samples) {
      error = "--data '" + dir + "': '" + path + "' holds " +
              std::to_string(count) + " samples but '" + first + "' " +
              std::to_string(samples);
      return false;
    } else if (uint64_t(input.shape[0]) != batch) {
      error = "model inputs '" + inputs[0].name + "' and '" + input.name +
              "' have different batch sizes";
      return false;
    }
    arrays.push_back(std::move(array));
  }
  if (inputs.empty()) {
    error = "the plan has no model inputs to read from --data";
    return false;
  }
  if (samples < batch) {
    error = "--data '" + dir + "' holds " + std::to_string(samples) +
            " samples, fewer than one global batch (" + std::to_string(batch) +
            ")";
    return false;
  }
  return true;
}

void TrainingData::getBatch(uint64_t step,
                            std::vector<HostTensor> &batchInputs) const {
  uint64_t first = (step % numBatches()) * batch;
  batchInputs.resize(arrays.size());
  for (size_t i = 0; i < arrays.size(); ++i) {
    const HostTensor &array = arrays[i];
    HostTensor &t = batchInputs[i];
    t.name = inputs[i].name;
    t.dtype = array.dtype;
    t.shape = inputs[i].shape;
    size_t sampleBytes = array.data.size() / size_t(array.shape[0]);
    t.data.assign(array.data, first * sampleBytes, batch * sampleBytes);
  }
}

//===----------------------------------------------------------------------===//
// Checkpoints
//===----------------------------------------------------------------------===//

/// The first line of a shard and of a manifest.
static const char kShardMagic[] = "dnnc-checkpoint-shard 1\n";
static const char kManifestMagic[] = "dnnc-checkpoint 1\n";

std::string checkpointFingerprint(const plan::Plan &plan, uint32_t rank) {
  // FNV-1a over what the state depends on: the mesh, the signature and the
  // rank's buffers (names, roles, types), not the weights or the code.
  std::string text = std::to_string(plan.model.worldSize) + ";";
  for (const auto &[axis, size] : plan.model.meshAxes)
    text += axis + "=" + std::to_string(size) + ";";
  for (const plan::TensorDesc &t : plan.model.inputs)
    text += "in " + t.name + formatTensorType(t.dtype, t.shape) + ";";
  for (const plan::RankProgram &program : plan.ranks) {
    if (program.rank != rank)
      continue;
    for (const plan::BufferDesc &b : program.buffers)
      text += std::string(plan::bufferRoleName(b.role)) + " " + b.tensor.name +
              formatTensorType(b.tensor.dtype, b.tensor.shape) + ";";
  }
  uint64_t hash = 1469598103934665603ull;
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 1099511628211ull;
  }
  char hex[17];
  std::snprintf(hex, sizeof(hex), "%016llx",
                static_cast<unsigned long long>(hash));
  return hex;
}

std::string checkpointPath(const std::string &dir, uint64_t step) {
  return dir + "/step-" + std::to_string(step);
}

/// Appends `value` as 8 little-endian bytes.
static void putU64(std::string &out, uint64_t value) {
  for (int i = 0; i < 8; ++i)
    out.push_back(char((value >> (8 * i)) & 0xff));
}

/// Reads 8 little-endian bytes at `at`.
static bool getU64(const std::string &in, size_t &at, uint64_t &value) {
  if (in.size() - at < 8)
    return false;
  value = 0;
  for (int i = 0; i < 8; ++i)
    value |= uint64_t(static_cast<unsigned char>(in[at + i])) << (8 * i);
  at += 8;
  return true;
}

bool writeCheckpointShard(const std::string &path,
                          const std::string &fingerprint,
                          const std::vector<HostTensor> &state,
                          std::string &error) {
  std::string bytes = kShardMagic;
  bytes += "plan " + fingerprint + "\n";
  putU64(bytes, state.size());
  std::string proto;
  for (const HostTensor &t : state) {
    if (!encodeTensorProto(t, proto, error))
      return false;
    putU64(bytes, proto.size());
    bytes += proto;
  }
  plan::AtomicFile file;
  if (!file.open(path, error) ||
      !file.write(bytes.data(), bytes.size(), error) || !file.commit(error)) {
    error = "checkpoint '" + path + "': " + error;
    return false;
  }
  return true;
}

bool readCheckpointShard(const std::string &path,
                         const std::string &fingerprint,
                         std::vector<HostTensor> &state, std::string &error) {
  std::string bytes;
  if (!plan::readWholeFile(path, bytes, uint64_t(1) << 46, error))
    return false;
  auto fail = [&](const std::string &message) {
    error = "checkpoint '" + path + "': " + message;
    return false;
  };
  std::string head = std::string(kShardMagic) + "plan ";
  if (bytes.compare(0, head.size(), head) != 0)
    return fail("not a dnnc checkpoint shard");
  size_t at = head.size();
  size_t eol = bytes.find('\n', at);
  if (eol == std::string::npos)
    return fail("truncated");
  if (bytes.substr(at, eol - at) != fingerprint)
    return fail("written by another plan (its buffers, mesh or inputs "
                "differ from this plan.bin's)");
  at = eol + 1;
  uint64_t count = 0;
  if (!getU64(bytes, at, count) || count > bytes.size())
    return fail("truncated");
  state.clear();
  for (uint64_t i = 0; i < count; ++i) {
    uint64_t size = 0;
    if (!getU64(bytes, at, size) || size > bytes.size() - at)
      return fail("truncated");
    HostTensor t;
    if (!decodeTensorProto(std::string_view(bytes).substr(at, size), t, error))
      return fail("tensor " + std::to_string(i) + ": " + error);
    at += size;
    state.push_back(std::move(t));
  }
  if (at != bytes.size())
    return fail("trailing bytes");
  return true;
}

bool writeCheckpointManifest(const std::string &dir,
                             const CheckpointManifest &manifest,
                             std::string &error) {
  std::string text = kManifestMagic;
  text += "step " + std::to_string(manifest.step) + "\n";
  text += "world_size " + std::to_string(manifest.worldSize) + "\n";
  text += "plan " + manifest.plan + "\n";
  std::string name = "step-" + std::to_string(manifest.step);
  plan::AtomicFile file, latest;
  if (!file.open(dir + "/" + name + "/MANIFEST", error) ||
      !file.write(text.data(), text.size(), error) || !file.commit(error) ||
      !latest.open(dir + "/latest", error) ||
      !latest.write((name + "\n").data(), name.size() + 1, error) ||
      !latest.commit(error)) {
    error = "checkpoint in '" + dir + "': " + error;
    return false;
  }
  return true;
}

bool readLatestCheckpoint(const std::string &dir, CheckpointManifest &manifest,
                          std::string &error) {
  std::string name, text;
  if (!plan::readWholeFile(dir + "/latest", name, 4096, error)) {
    error = "--resume: no complete checkpoint in '" + dir + "' (" + error +
            ")";
    return false;
  }
  while (!name.empty() && (name.back() == '\n' || name.back() == '\r'))
    name.pop_back();
  if (name.compare(0, 5, "step-") != 0 ||
      name.find('/') != std::string::npos) {
    error = "--resume: '" + dir + "/latest' does not name a checkpoint";
    return false;
  }
  std::string path = dir + "/" + name + "/MANIFEST";
  if (!plan::readWholeFile(path, text, 1 << 20, error))
    return false;
  auto field = [&](const std::string &key, std::string &value) {
    size_t at = text.find("\n" + key + " ");
    if (at == std::string::npos)
      return false;
    at += key.size() + 2;
    value = text.substr(at, text.find('\n', at) - at);
    return !value.empty();
  };
  std::string step, world;
  char *end = nullptr;
  if (text.compare(0, std::strlen(kManifestMagic), kManifestMagic) != 0 ||
      !field("step", step) || !field("world_size", world) ||
      !field("plan", manifest.plan)) {
    error = "'" + path + "' is not a dnnc checkpoint manifest";
    return false;
  }
  manifest.step = std::strtoull(step.c_str(), &end, 10);
  manifest.worldSize = uint32_t(std::strtoul(world.c_str(), &end, 10));
  if ("step-" + std::to_string(manifest.step) != name) {
    error = "'" + path + "' describes step " + step + ", not " + name;
    return false;
  }
  return true;
}

} // namespace dnnc::rt
