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
#include <functional>
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
  /// Number of micro-batches one run streams through the ranks' steps
  /// (>= 1). Every Input, Output and Activation buffer has one instance per
  /// micro-batch.
  uint32_t microbatches = 1;
  /// Per model input (same order as `inputs`): the dim along which the
  /// input is cut into `microbatches` equal consecutive blocks, micro-batch
  /// `m` holding block `m`; -1 when every micro-batch reads the same
  /// tensor. Empty means -1 for every input (always the case when
  /// `microbatches` is 1).
  std::vector<int32_t> inputMicrobatchDims;
  /// Per model output: the dim along which the micro-batches' results are
  /// concatenated (micro-batch `m` writes block `m`); -1 when the output is
  /// the same for every micro-batch (micro-batch 0's copy is written).
  /// Empty means -1 for every output.
  std::vector<int32_t> outputMicrobatchDims;
  /// The tensors Weight and State buffers hold blocks of, whole: name,
  /// dtype as stored, global shape (weights in the order the compiler
  /// outlined them, then the optimizer states). Empty: the buffers'
  /// blocks are not described (then a weight holds its whole tensor, and
  /// `dnnc-run --export-dir` has nothing to assemble).
  std::vector<TensorDesc> parameters;
};

/// What a rank buffer holds.
enum class BufferRole : uint8_t {
  /// A block of a model input, uploaded before each run.
  Input,
  /// A block of a model output, read back after each run.
  Output,
  /// A block of a weight, uploaded once from RANK_WEIGHTS.
  Weight,
  /// A value passed between pipeline stages: written by one of the rank's
  /// functions and sent, or received and read by one of them.
  Activation,
  /// Training: an optimizer state, zero before the first step and carried
  /// from step to step (not stored in the plan).
  State,
  /// Training: the new value of buffer `index` (a Weight, State or
  /// Accumulator of the same dtype and shape) that a function computes;
  /// right after each Compute step of a function writing it, the two
  /// buffers trade places, so that it becomes that buffer's value.
  Update,
  /// Training: the number of the step (1 at the first), a float32 scalar
  /// the runtime sets before each step.
  Step,
  /// Training with micro-batches: a sum over the micro-batches of a step
  /// (a gradient, the loss), zero at the start of every run; each
  /// micro-batch's function writes the sum so far plus its share into an
  /// Update of it, and the step's final part reads it.
  Accumulator
};

/// One entry of a rank's buffer list (RankProgram::buffers), which the
/// rank's functions receive through FunctionDesc::args.
struct BufferDesc {
  /// Input (filled from model input `index`), Output (read back as model
  /// output `index`), Weight (filled from the rank's weights) or Activation
  /// (written by a function or received from another rank).
  BufferRole role = BufferRole::Input;
  /// Model input/output index for Input/Output buffers; the parameter
  /// (ModelInfo::parameters) for Weight and State buffers when the plan
  /// lists them (else 0); the updated buffer for Update buffers; 0 for the
  /// other roles.
  uint32_t index = 0;
  /// Weights: byte offset into `RankProgram::weights` (a multiple of 64);
  /// other roles: 0.
  uint64_t offset = 0;
  /// Byte size of the buffer: always the dense size of `tensor`.
  uint64_t size = 0;
  /// The buffer's local dtype and shape (and a name for diagnostics).
  TensorDesc tensor;
  /// Inputs and outputs: which block of the model tensor the buffer holds,
  /// as the offset of the block in the global tensor per dimension (the
  /// block's shape is `tensor.shape`). Empty means the whole tensor
  /// (`tensor.shape` is then the global shape). With micro-batches these
  /// are the offsets of micro-batch 0's block, inside micro-batch 0's part of
  /// the tensor (see blockOffsets). Weights and states: the block of their
  /// parameter, when the plan lists parameters. Activations: empty.
  std::vector<int64_t> sliceOffsets;
  /// Outputs: true when this rank's copy of its block is the one written to
  /// the model output; false for a replica of a block another rank writes.
  /// The blocks written by all ranks tile each model output exactly. Inputs,
  /// weights and activations: always true (the default).
  bool ownsOutput = true;
  /// Inputs only: the buffer holds its block of the whole model input (all
  /// micro-batches), the same for every micro-batch: it has one instance
  /// and its block is not shifted per micro-batch. The compiler uses such
  /// a copy where a value must be computed over the whole batch (e.g. an
  /// index computation spanning the batch). False for other roles.
  bool wholeBatch = false;
};

/// One function of a rank's code: `extern "C" void symbol(void **buffers)`.
struct FunctionDesc {
  /// The exported symbol in the rank's code.
  std::string symbol;
  /// The rank buffers (indices into RankProgram::buffers) the function
  /// receives, in order: `buffers[i]` of the call is buffer `args[i]`
  /// (of the step's micro-batch).
  std::vector<uint32_t> args;
};

/// What one step of a rank's schedule does.
enum class StepKind : uint8_t {
  /// Calls function `index` on the buffers of micro-batch `microbatch`.
  Compute,
  /// Sends buffer `index` (an Activation) of `microbatch` to rank `peer`.
  /// The send does not wait for the receiver; a run ends only after every
  /// send has completed.
  Send,
  /// Receives buffer `index` (an Activation) of `microbatch` from rank
  /// `peer`, waiting until it has arrived.
  Recv
};

/// One step of a rank's schedule.
struct Step {
  /// What the step does.
  StepKind kind = StepKind::Compute;
  /// Compute: the function; Send/Recv: the buffer.
  uint32_t index = 0;
  /// The micro-batch, 0 .. ModelInfo::microbatches - 1.
  uint32_t microbatch = 0;
  /// Send/Recv: the other rank; Compute: 0.
  uint32_t peer = 0;
  /// Send/Recv: the message tag (< kMaxTag), equal on both sides. Messages
  /// between two ranks with the same tag arrive in the order they were
  /// sent. Compute: 0.
  uint32_t tag = 0;
};

/// Receives consecutive chunks of bytes (WeightPiece::emit).
using ByteSink = std::function<void(std::string_view)>;

/// Bytes of a rank's weights that writePlan produces while it writes them,
/// so that a compiler can hand over its weights without copying them into
/// RankProgram::weights first (the memory of a plan is then the weights
/// once, not twice).
struct WeightPiece {
  /// Offset in the rank's weight bytes (a multiple of kAlignment).
  uint64_t offset = 0;
  /// Byte count.
  uint64_t size = 0;
  /// Calls the sink with consecutive chunks of `size` bytes in all. Called
  /// once per pass of the writer (checksum, then write): it must produce
  /// the same bytes each time.
  std::function<void(const ByteSink &)> emit;
};

/// Everything one rank runs (its RANK_META, RANK_CODE and RANK_WEIGHTS).
struct RankProgram {
  /// The rank, 0 .. worldSize-1.
  uint32_t rank = 0;
  /// The rank's buffers. Weights have one instance; Input, Output and
  /// Activation buffers one per micro-batch.
  std::vector<BufferDesc> buffers;
  /// The functions of `code` the schedule calls (at least one).
  std::vector<FunctionDesc> functions;
  /// What one run does, in order. A plan without pipeline stages has one
  /// step: Compute function 0 on micro-batch 0.
  std::vector<Step> steps;
  /// The code: for target `cpu`, the bytes of an ELF shared object.
  std::string code;
  /// Weight bytes, little-endian, each weight at a 64-byte aligned offset.
  std::string weights;
  /// For writePlan only, instead of `weights` (then empty): the weight
  /// bytes as pieces in ascending, non-overlapping offset order; the bytes
  /// between them are zeros. readPlan always fills `weights`.
  std::vector<WeightPiece> weightPieces;

  /// Byte size of the weights: of `weights`, or up to the end of the last
  /// piece.
  uint64_t weightsSize() const {
    return weightPieces.empty()
               ? weights.size()
               : weightPieces.back().offset + weightPieces.back().size;
  }
};

/// A whole plan.bin.
struct Plan {
  /// Target, mesh and model signature.
  ModelInfo model;
  /// Rank programs, ordered by rank (all of them, or the one a reader was
  /// asked for).
  std::vector<RankProgram> ranks;
};

/// Gives `program` the schedule of a plan without pipeline stages: one
/// function `symbol` that receives every buffer in order, and one step that
/// computes it on micro-batch 0.
void setSingleFunction(RankProgram &program, const std::string &symbol);

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

/// Writes `plan` to `path` in format version 6 (kFormatVersion). Validates the
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
/// names, world size vs mesh and device order, dtypes and shapes,
/// micro-batches and their dims, one program per rank, function symbols and
/// arguments, steps, buffer roles, indices, sizes, slices and weight bounds,
/// and (when every rank is present) that every send has its matching receive
/// and that the output blocks tile each model output. With `allowRankSubset`,
/// `plan.ranks` may hold any ascending subset of the ranks (what readPlan
/// returns for ReadOptions::rank).
bool verifyPlan(const Plan &plan, std::string &error,
                bool allowRankSubset = false);

/// One rank's block of a model output: the instance of an Output buffer of
/// that rank for one micro-batch.
struct OutputBlock {
  /// The rank holding the block.
  uint32_t rank = 0;
  /// The model output index.
  uint32_t output = 0;
  /// The micro-batch whose instance of the buffer holds the block.
  uint32_t microbatch = 0;
  /// Offset of the block in the global tensor (one entry per dimension).
  std::vector<int64_t> offsets;
  /// Shape of the block.
  std::vector<int64_t> shape;
  /// True for the copy that is written: BufferDesc::ownsOutput, and for an
  /// output without a micro-batch dim only on micro-batch 0.
  bool owns = true;
};

/// The micro-batch dim of model input (`input`) or output `index`, or -1
/// (also when the model's dim list is empty).
int32_t microbatchDim(const ModelInfo &model, bool input, uint32_t index);

/// The offsets in its model tensor of the block that the instance of Input
/// or Output buffer `buffer` for `microbatch` holds: `sliceOffsets` (zeros
/// when empty) plus `microbatch * (global extent / microbatches)` along the
/// tensor's micro-batch dim. Other roles: `sliceOffsets` or zeros.
std::vector<int64_t> blockOffsets(const ModelInfo &model,
                                  const BufferDesc &buffer,
                                  uint32_t microbatch);

/// The output blocks of `program`: one per (Output buffer, micro-batch), in
/// buffer order and micro-batches ascending within a buffer.
std::vector<OutputBlock> outputBlocks(const ModelInfo &model,
                                      const RankProgram &program);

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

/// The lowercase name of a buffer role: "input", "output", "weight" or
/// "activation".
const char *bufferRoleName(BufferRole role);

/// A human-readable multi-line description of `plan` (target, mesh,
/// micro-batches, inputs, outputs, and per rank its code size, buffers,
/// functions and steps), as
/// `dnnc-run --print-plan` prints it.
std::string describePlan(const Plan &plan);

/// One step of `program` as describePlan prints it:
/// "compute dnnc_entry_stage_1 (mb 1)", "send buffer 7 (mb 1) to rank 2 tag
/// 3" or "recv buffer 5 (mb 1) from rank 0 tag 2".
std::string describeStep(const RankProgram &program, const Step &step);

} // namespace dnnc::plan

#endif // DNNC_RUNTIME_PLAN_H
