//===- Plan.h - In-memory plan.bin, reader and writer -----------*- C++ -*-===//
//
// The C++ view of a plan.bin (docs/plan-format.md) and the functions that
// read, write and validate it. This is the DNNCPlan library (`dnnc_plan`):
// C++17 and the standard library only, so that both the compiler (which
// writes plans) and the runtime (which reads them) link it.
//
// Every function reports failure by returning false and setting `error` to
// one line without a trailing newline or an "error: " prefix; none of them
// throws on malformed input, and the reader never allocates more than the
// size of the file it reads.
//
//===----------------------------------------------------------------------===//

#ifndef DNNC_RUNTIME_PLAN_H
#define DNNC_RUNTIME_PLAN_H

#include "dnnc/Runtime/DataType.h"
#include "dnnc/Runtime/PlanFormat.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace dnnc::plan {

/// A named tensor type: a model input or output, or a rank buffer.
struct TensorDesc {
  /// Tensor name (model inputs/outputs: the ONNX graph input/output name).
  std::string name;
  /// ONNX `TensorProto.DataType` code (see DataType.h).
  int32_t dtype = 0;
  /// Static shape, row-major; empty for a scalar.
  std::vector<int64_t> shape;
};

/// Global information about the plan (the MODEL section).
struct ModelInfo {
  /// The target the rank code was built for: "cpu" or "cuda".
  std::string target;
  /// Number of ranks; equals the product of the mesh axis sizes when there
  /// are mesh axes.
  uint32_t worldSize = 1;
  /// The device mesh: (axis name, axis size), outermost first. Mesh
  /// positions are numbered row-major over the axes (the first axis is the
  /// most significant); no axes means one implicit axis of `worldSize`.
  std::vector<std::pair<std::string, int64_t>> meshAxes;
  /// The rank at each mesh position: `deviceOrder[p]` runs mesh position
  /// `p`. Empty means the identity (rank p at position p); otherwise a
  /// permutation of 0 .. worldSize-1.
  std::vector<uint32_t> deviceOrder;
  /// Model (graph) inputs in ONNX graph order, with global shapes.
  std::vector<TensorDesc> inputs;
  /// Model (graph) outputs in ONNX graph order, with global shapes.
  std::vector<TensorDesc> outputs;
};

/// What a rank buffer holds.
enum class BufferRole : uint8_t { Input, Output, Weight };

/// One entry of a rank's buffer list: the i-th entry is `buffers[i]` of the
/// rank's entry function.
struct BufferDesc {
  /// Input (filled from model input `index`), Output (read back as model
  /// output `index`) or Weight (filled from the rank's weights).
  BufferRole role = BufferRole::Input;
  /// Model input/output index for Input/Output buffers; 0 for weights.
  uint32_t index = 0;
  /// Weights: byte offset into `RankProgram::weights` (a multiple of 64);
  /// inputs and outputs: 0.
  uint64_t offset = 0;
  /// Byte size of the buffer: always the dense size of `tensor`.
  uint64_t size = 0;
  /// The buffer's local dtype and shape (and a name for diagnostics).
  TensorDesc tensor;
  /// Inputs and outputs: which block of the model tensor the buffer holds,
  /// as the offset of the block in the global tensor per dimension (the
  /// block's shape is `tensor.shape`). Empty means the whole tensor
  /// (`tensor.shape` is then the global shape). Weights: empty.
  std::vector<int64_t> sliceOffsets;
  /// Outputs: true when this rank's copy of its block is the one written to
  /// the model output; false for a replica of a block another rank writes.
  /// The blocks written by all ranks tile each model output exactly. Inputs
  /// and weights: always true (the default).
  bool ownsOutput = true;
};

/// Everything one rank runs (its RANK_META, RANK_CODE and RANK_WEIGHTS).
struct RankProgram {
  /// The rank, 0 .. worldSize-1.
  uint32_t rank = 0;
  /// The exported symbol `extern "C" void entry(void **buffers)` in `code`.
  std::string entry;
  /// The buffers `entry` receives, in order.
  std::vector<BufferDesc> buffers;
  /// The code: for target `cpu`, the bytes of an ELF shared object.
  std::string code;
  /// Weight bytes, little-endian, each weight at a 64-byte aligned offset.
  std::string weights;
};

/// A whole plan.bin.
struct Plan {
  /// Target, mesh and model signature.
  ModelInfo model;
  /// Rank programs, ordered by rank (all of them, or the one a reader was
  /// asked for).
  std::vector<RankProgram> ranks;
};

/// `ReadOptions::rank` value that loads every rank.
inline constexpr uint32_t kAllRanks = 0xffffffffu;

/// `ReadOptions::rank` value that loads no rank: only the MODEL section.
inline constexpr uint32_t kNoRanks = 0xfffffffeu;

/// How much of a plan to load.
struct ReadOptions {
  /// Load (and checksum) only this rank's sections, all with kAllRanks, or
  /// none with kNoRanks. The header, the section table, the MODEL section
  /// and the layout of every section are validated either way.
  uint32_t rank = kAllRanks;
};

/// Writes `plan` to `path` in format version 2 (kFormatVersion). Validates the
/// plan first (verifyPlan). Writes a temporary file next to `path` and renames
/// it over `path`, so `path` is either the complete new plan or left untouched.
bool writePlan(const Plan &plan, const std::string &path, std::string &error);

/// Reads and fully validates the plan.bin at `path` into `plan`: header,
/// format version, file size, section table checksum and layout, every
/// payload checksum, every count, string length, dtype, shape and buffer
/// bound, and finally verifyPlan. Errors name the file.
bool readPlan(const std::string &path, Plan &plan, std::string &error,
              const ReadOptions &options = {});

/// Serializes `plan` into `bytes` (the exact content writePlan writes).
bool encodePlan(const Plan &plan, std::string &bytes, std::string &error);

/// Parses a plan.bin held in memory, with the checks of readPlan.
bool decodePlan(std::string_view bytes, Plan &plan, std::string &error,
                const ReadOptions &options = {});

/// Checks the semantic rules of docs/plan-format.md ("Validity"): target and
/// names, world size vs mesh and device order, dtypes and shapes, one program
/// per rank, entry symbols, buffer roles, indices, sizes, slices and weight
/// bounds, and (when every rank is present) that the output blocks tile each
/// model output. With `allowRankSubset`, `plan.ranks` may hold any ascending
/// subset of the ranks (what readPlan returns for ReadOptions::rank).
bool verifyPlan(const Plan &plan, std::string &error,
                bool allowRankSubset = false);

/// One rank's block of a model output (an Output buffer of that rank).
struct OutputBlock {
  /// The rank holding the block.
  uint32_t rank = 0;
  /// The model output index.
  uint32_t output = 0;
  /// Offset of the block in the global tensor (one entry per dimension).
  std::vector<int64_t> offsets;
  /// Shape of the block.
  std::vector<int64_t> shape;
  /// True for the copy that is written (BufferDesc::ownsOutput).
  bool owns = true;
};

/// The output blocks of `program` (sliceOffsets made explicit).
std::vector<OutputBlock> outputBlocks(const RankProgram &program);

/// Checks that `blocks` (the output blocks of every rank, each already inside
/// its model output) describe each model output completely: the written
/// blocks tile it exactly (no gap, no overlap) and every replica equals a
/// written block. verifyPlan applies it to a whole plan; dnnc-run to the
/// blocks the ranks report when each rank read only its own sections.
bool checkOutputBlocks(const ModelInfo &model,
                       const std::vector<OutputBlock> &blocks,
                       std::string &error);

/// Appends `bytes` to a RANK_WEIGHTS blob at the next 64-byte aligned offset
/// (zero padding in between) and returns that offset: the `offset` of the
/// weight's BufferDesc.
uint64_t appendWeight(std::string &weights, std::string_view bytes);

/// The lowercase name of a buffer role: "input", "output" or "weight".
const char *bufferRoleName(BufferRole role);

/// A human-readable multi-line description of `plan` (target, mesh, inputs,
/// outputs, and per rank its entry, code size and buffer list), as
/// `dnnc-run --print-plan` prints it.
std::string describePlan(const Plan &plan);

} // namespace dnnc::plan

#endif // DNNC_RUNTIME_PLAN_H
