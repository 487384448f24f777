//===- Package.cpp - plan.bin packaging ---------------------*- C++ -*-===//
//
// Builds the plan::Plan of a lowered module from its #dist.plan: model
// signature, and for every rank of the mesh its buffer list (with the block
// of each model input and output it holds), its weights (its block of each
// weight, raw little-endian bytes, 64-byte aligned), its functions and its
// steps.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Target/Package/Package.h"
#include "dnnc/Dialect/Dist/IR/DistDialect.h"
#include "dnnc/Dialect/Dist/IR/PipelineSchedule.h"
#include "dnnc/Runtime/Mesh.h"
#include "dnnc/Target/Common/RuntimeABI.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;
namespace plan = dnnc::plan;
namespace dist = dnnc::dist;

/// Dense byte size of a described tensor.
static uint64_t byteSize(const plan::TensorDesc &desc) {
  uint64_t n = 1;
  for (int64_t d : desc.shape)
    n *= static_cast<uint64_t>(d);
  return n * static_cast<uint64_t>(plan::dtypeByteSize(desc.dtype));
}

/// Emits `count` copies of the `eltSize` bytes at `element` to `sink`, in
/// chunks of about 64 KiB.
static void emitRepeated(const char *element, size_t eltSize, int64_t count,
                         const plan::ByteSink &sink) {
  constexpr size_t kChunkBytes = 64 * 1024;
  size_t perChunk = std::max<size_t>(1, kChunkBytes / std::max<size_t>(1, eltSize));
  std::string chunk;
  for (size_t i = 0; i < perChunk && int64_t(i) < count; ++i)
    chunk.append(element, eltSize);
  for (int64_t done = 0; done < count;) {
    int64_t n = std::min<int64_t>(count - done, int64_t(perChunk));
    sink(std::string_view(chunk.data(), size_t(n) * eltSize));
    done += n;
  }
}

/// Returns the raw little-endian bytes of i1 `value`, one byte per element.
static std::string boolBytes(DenseElementsAttr value) {
  std::string out;
  out.reserve(value.getNumElements());
  for (bool b : value.getValues<bool>())
    out.push_back(b ? 1 : 0);
  return out;
}

/// Emits to `sink` the block of the row-major tensor `data` (shape
/// `globalShape`, `eltSize` bytes per element) that starts at `offsets` and
/// has the shape `blockShape`, one row (innermost dim) per chunk.
static void emitBlock(ArrayRef<char> data, ArrayRef<int64_t> globalShape,
                      ArrayRef<int64_t> offsets, ArrayRef<int64_t> blockShape,
                      size_t eltSize, const plan::ByteSink &sink) {
  size_t rank = globalShape.size();
  if (rank == 0) {
    sink(std::string_view(data.data(), eltSize));
    return;
  }
  if (llvm::is_contained(blockShape, 0))
    return;
  // Element strides of the global tensor.
  SmallVector<int64_t> strides(rank, 1);
  for (size_t d = rank - 1; d > 0; --d)
    strides[d - 1] = strides[d] * globalShape[d];
  size_t rowBytes = static_cast<size_t>(blockShape.back()) * eltSize;
  // Odometer over the block's rows (every dim but the innermost).
  SmallVector<int64_t> index(rank, 0);
  while (true) {
    int64_t start = 0;
    for (size_t d = 0; d < rank; ++d)
      start += (offsets[d] + index[d]) * strides[d];
    sink(std::string_view(data.data() + static_cast<size_t>(start) * eltSize,
                          rowBytes));
    int64_t d = static_cast<int64_t>(rank) - 2;
    for (; d >= 0; --d) {
      if (++index[d] < blockShape[d])
        break;
      index[d] = 0;
    }
    if (d < 0)
      return;
  }
}

/// Emits to `sink` the bytes of the block of weight `value` (row-major,
/// shape `globalShape`) at `offsets` with shape `blockShape` (the whole
/// value when `offsets` is empty). Splats are expanded to the block's size
/// only; i1 values take one byte each. The bytes are read from the
/// attribute where they lie: nothing is copied but i1 values.
static void emitWeightBlock(DenseElementsAttr value,
                            ArrayRef<int64_t> globalShape,
                            ArrayRef<int64_t> offsets,
                            ArrayRef<int64_t> blockShape, size_t eltSize,
                            const plan::ByteSink &sink) {
  bool whole = offsets.empty() || blockShape == globalShape;
  int64_t count = 1;
  for (int64_t d : blockShape)
    count *= d;
  bool isBool = value.getElementType().isInteger(1);
  if (value.isSplat()) {
    char boolByte = isBool && value.getSplatValue<bool>() ? 1 : 0;
    ArrayRef<char> element =
        isBool ? ArrayRef<char>(&boolByte, 1) : value.getRawData();
    emitRepeated(element.data(), element.size(), count, sink);
    return;
  }
  std::string bytes;
  ArrayRef<char> data = value.getRawData();
  if (isBool) {
    bytes = boolBytes(value);
    data = ArrayRef<char>(bytes.data(), bytes.size());
  }
  if (whole) {
    sink(std::string_view(data.data(), data.size()));
    return;
  }
  emitBlock(data, globalShape, offsets, blockShape, eltSize, sink);
}

namespace {
/// Expands a #dist.plan into the programs of the ranks.
class Packager {
public:
  /// Packages `record` into `plan`.
  Packager(dist::PlanAttr record, plan::Plan &plan)
      : record(record), plan(plan), shape(record.getShape()),
        order(record.getDeviceOrder()) {}

  /// Fills the model signature and the programs; false with `error` set.
  bool run(StringRef target, std::string &error);

private:
  /// Fills the model inputs and outputs and their micro-batch dims.
  bool collectSignature(std::string &error);
  /// Fills the one program of an unpipelined rank.
  void collectProgram(plan::RankProgram &rank, ArrayRef<int64_t> coords);
  /// Fills the functions, buffers and steps of a pipelined rank.
  void collectPipelinedProgram(plan::RankProgram &rank,
                               ArrayRef<int64_t> coords);
  /// Returns the buffer of `buffer` on the device at `coords`.
  plan::BufferDesc describeBuffer(dist::PlanBufferAttr buffer,
                                  ArrayRef<int64_t> coords,
                                  plan::RankProgram &rank);
  /// Returns the block offsets of `buffer` at `coords` (empty: whole).
  std::vector<int64_t> blockOffsets(dist::PlanBufferAttr buffer,
                                    ArrayRef<int64_t> coords) const;
  /// Returns true if the device at `coords` writes its block of `output`.
  bool ownsOutput(dist::PlanBufferAttr output, ArrayRef<int64_t> coords) const;

  dist::PlanAttr record;
  plan::Plan &plan;
  /// The mesh axis sizes and device order (empty: identity).
  SmallVector<int64_t> shape;
  ArrayRef<int64_t> order;
  /// The pipeline axis position, if the plan has one.
  std::optional<unsigned> pipelineAxis;
  /// The stage transfers (position = tag), the one into each received
  /// buffer and those out of each sent one; the same for every rank.
  SmallVector<dist::PlanTransferAttr> transfers;
  llvm::DenseMap<int64_t, unsigned> transferInto;
  llvm::DenseMap<int64_t, SmallVector<unsigned>> transfersOutOf;
  /// The parameter (ModelInfo::parameters) of every weight and state.
  llvm::DenseMap<Attribute, uint32_t> parameterIndex;
};
} // namespace

/// Describes buffer `buffer` of a plan (its local or global type).
static plan::TensorDesc describeTensor(dist::PlanBufferAttr buffer,
                                       bool global) {
  RankedTensorType type = global ? buffer.getGlobal() : buffer.getType();
  plan::TensorDesc desc;
  desc.name = buffer.getName().str();
  desc.dtype = dnnc::getONNXDataType(type.getElementType());
  desc.shape.assign(type.getShape().begin(), type.getShape().end());
  return desc;
}

std::vector<int64_t> Packager::blockOffsets(dist::PlanBufferAttr buffer,
                                            ArrayRef<int64_t> coords) const {
  dist::ShardingAttr sharding = buffer.getSharding();
  if (!sharding || !sharding.isSplit())
    return {};
  std::vector<int64_t> offsets;
  ArrayRef<int64_t> local = buffer.getType().getShape();
  for (size_t d = 0; d < local.size(); ++d) {
    int64_t block = 0;
    for (StringAttr axis : sharding.getDimAxes(d)) {
      unsigned index = *record.getAxisIndex(axis.getValue());
      block = block * shape[index] + coords[index];
    }
    offsets.push_back(block * local[d]);
  }
  return offsets;
}

/// Returns true if the device at `coords` writes its block of `output`:
/// its coordinate is 0 on every mesh axis the output's sharding does not
/// use (the lowest mesh position among the replicas), the pipeline axis
/// excepted (only the devices of the stage computing the output hold it).
bool Packager::ownsOutput(dist::PlanBufferAttr output,
                          ArrayRef<int64_t> coords) const {
  dist::ShardingAttr sharding = output.getSharding();
  for (unsigned index = 0, e = coords.size(); index < e; ++index) {
    if (pipelineAxis && index == *pipelineAxis)
      continue;
    StringRef axis = record.getAxis(index).getName().getValue();
    if (coords[index] != 0 && (!sharding || !sharding.usesAxis(axis)))
      return false;
  }
  return true;
}

plan::BufferDesc Packager::describeBuffer(dist::PlanBufferAttr value,
                                          ArrayRef<int64_t> coords,
                                          plan::RankProgram &rank) {
  plan::BufferDesc buffer;
  buffer.tensor = describeTensor(value, /*global=*/false);
  buffer.size = byteSize(buffer.tensor);
  std::vector<int64_t> offsets = blockOffsets(value, coords);
  switch (value.getRole()) {
  case dist::BufferRole::Output:
    buffer.role = plan::BufferRole::Output;
    buffer.index = static_cast<uint32_t>(value.getIndex());
    buffer.sliceOffsets = std::move(offsets);
    buffer.ownsOutput = ownsOutput(value, coords);
    break;
  case dist::BufferRole::Weight: {
    buffer.role = plan::BufferRole::Weight;
    buffer.index = parameterIndex.lookup(value);
    buffer.sliceOffsets = offsets;
    // A piece at the next aligned offset, read from the attribute when the
    // plan is written (the weights are not copied).
    buffer.offset = plan::alignTo(rank.weightsSize(), plan::kAlignment);
    rank.weightPieces.push_back(
        {buffer.offset, buffer.size,
         [weight = value.getWeight(),
          global = llvm::to_vector(value.getGlobal().getShape()), offsets,
          local = buffer.tensor.shape,
          eltSize = plan::dtypeByteSize(buffer.tensor.dtype)](
             const plan::ByteSink &sink) {
           emitWeightBlock(weight, global, offsets, local, eltSize, sink);
         }});
    break;
  }
  case dist::BufferRole::Input:
    buffer.role = plan::BufferRole::Input;
    buffer.index = static_cast<uint32_t>(value.getIndex());
    buffer.sliceOffsets = std::move(offsets);
    break;
  case dist::BufferRole::Activation:
    buffer.role = plan::BufferRole::Activation;
    break;
  case dist::BufferRole::State:
    buffer.role = plan::BufferRole::State;
    buffer.index = parameterIndex.lookup(value);
    buffer.sliceOffsets = std::move(offsets);
    break;
  case dist::BufferRole::Update:
    // The updated buffer is an argument: its position is its number.
    buffer.role = plan::BufferRole::Update;
    buffer.index = static_cast<uint32_t>(value.getIndex());
    break;
  case dist::BufferRole::Step:
    buffer.role = plan::BufferRole::Step;
    break;
  case dist::BufferRole::Accumulator:
    buffer.role = plan::BufferRole::Accumulator;
    break;
  }
  return buffer;
}

bool Packager::collectSignature(std::string &error) {
  for (dist::PlanBufferAttr buffer : record.getBufferList()) {
    if (buffer.getRole() == dist::BufferRole::Input &&
        buffer.getIndex() == int64_t(plan.model.inputs.size()))
      plan.model.inputs.push_back(describeTensor(buffer, /*global=*/true));
    if (buffer.getRole() == dist::BufferRole::Output &&
        buffer.getIndex() == int64_t(plan.model.outputs.size()))
      plan.model.outputs.push_back(describeTensor(buffer, /*global=*/true));
  }
  // The parameters: every weight, then every state, named uniquely (two
  // outlined constants may carry the same node name).
  llvm::StringSet<> names;
  for (dist::BufferRole role :
       {dist::BufferRole::Weight, dist::BufferRole::State})
    for (dist::PlanBufferAttr buffer : record.getBufferList()) {
      if (buffer.getRole() != role || parameterIndex.count(buffer))
        continue;
      plan::TensorDesc desc = describeTensor(buffer, /*global=*/true);
      std::string name = desc.name;
      for (unsigned k = 1; !names.insert(desc.name).second; ++k)
        desc.name = name + "#" + std::to_string(k);
      parameterIndex[buffer] = uint32_t(plan.model.parameters.size());
      plan.model.parameters.push_back(std::move(desc));
    }
  dist::PipelineAttr pipeline = record.getPipeline();
  if (!pipeline)
    return true;
  if (pipeline.getMicrobatches() > int64_t(plan::kMaxMicrobatches)) {
    error = "the pipeline has " + std::to_string(pipeline.getMicrobatches()) +
            " micro-batches; plan.bin holds at most " +
            std::to_string(plan::kMaxMicrobatches);
    return false;
  }
  if (record.getTransfers().size() > plan::kMaxTag) {
    error = "@main has more than " + std::to_string(plan::kMaxTag) +
            " transfers between stages";
    return false;
  }
  plan.model.microbatches = static_cast<uint32_t>(pipeline.getMicrobatches());
  bool split = llvm::any_of(record.getBufferList(), [](auto buffer) {
    return buffer.getRole() != dist::BufferRole::Output &&
           buffer.getMicrobatchDim() >= 0;
  });
  if (pipeline.getMicrobatches() <= 1 || !split)
    return true;
  plan.model.inputMicrobatchDims.assign(plan.model.inputs.size(), -1);
  plan.model.outputMicrobatchDims.assign(plan.model.outputs.size(), -1);
  for (dist::PlanBufferAttr buffer : record.getBufferList()) {
    int64_t dim = buffer.getMicrobatchDim();
    if (dim < 0)
      continue;
    if (buffer.getRole() == dist::BufferRole::Input) {
      plan.model.inputMicrobatchDims[buffer.getIndex()] = dim;
      plan.model.inputs[buffer.getIndex()].shape[dim] *=
          pipeline.getMicrobatches();
    } else if (buffer.getRole() == dist::BufferRole::Output) {
      plan.model.outputMicrobatchDims[buffer.getIndex()] = dim;
      plan.model.outputs[buffer.getIndex()].shape[dim] *=
          pipeline.getMicrobatches();
    }
  }
  return true;
}

void Packager::collectProgram(plan::RankProgram &rank,
                              ArrayRef<int64_t> coords) {
  // The buffer list of the device phase's calling convention (arguments in
  // order, then results as out-params), each buffer holding the rank's
  // block.
  auto function = *record.getFunctionList().begin();
  for (int64_t b : function.getBuffers().asArrayRef())
    rank.buffers.push_back(describeBuffer(record.getBuffer(b), coords, rank));
  plan::setSingleFunction(rank, function.getSymbol().str());
}

void Packager::collectPipelinedProgram(plan::RankProgram &rank,
                                       ArrayRef<int64_t> coords) {
  dist::PipelineAttr pipeline = record.getPipeline();
  auto rankOfStage = [&](int64_t stage) {
    return pipeline.getStageRank(stage);
  };
  int64_t pipelineRank = pipelineAxis ? coords[*pipelineAxis] : 0;
  // The rank holding `stage` with this rank's other coordinates.
  auto peerOf = [&](int64_t stage) -> uint32_t {
    SmallVector<int64_t> peer(coords);
    peer[*pipelineAxis] = rankOfStage(stage);
    return static_cast<uint32_t>(plan::meshDeviceId(shape, order, peer));
  };
  // The rank's buffer of each plan buffer, created on first use.
  llvm::DenseMap<int64_t, uint32_t> bufferOf;
  auto addBuffer = [&](plan::BufferDesc buffer) {
    rank.buffers.push_back(std::move(buffer));
    return static_cast<uint32_t>(rank.buffers.size() - 1);
  };
  struct Message {
    uint32_t buffer, peer, tag;
  };
  llvm::DenseMap<int64_t, uint32_t> functionOf;
  // The buffer each plan buffer sent by another device arrives in.
  llvm::DenseMap<int64_t, uint32_t> receivedFrom;
  llvm::DenseMap<int64_t, SmallVector<Message>> receives, sends;
  for (dist::PlanFunctionAttr planFunction : record.getFunctionList()) {
    int64_t stage = planFunction.getStage();
    if (rankOfStage(stage) != pipelineRank)
      continue;
    plan::FunctionDesc function;
    function.symbol = planFunction.getSymbol().str();
    for (int64_t b : planFunction.getBuffers().asArrayRef()) {
      dist::PlanBufferAttr value = record.getBuffer(b);
      if (auto it = bufferOf.find(b); it != bufferOf.end()) {
        function.args.push_back(it->second);
        continue;
      }
      auto into = transferInto.find(b);
      if (into != transferInto.end()) {
        dist::PlanTransferAttr transfer = transfers[into->second];
        if (rankOfStage(transfer.getFrom()) == pipelineRank) {
          // Computed on this device: the sender's buffer itself.
          function.args.push_back(bufferOf.lookup(transfer.getSource()));
          continue;
        }
        // Received for an earlier stage of this device already (a forward
        // stage's input that its backward reads too): that buffer.
        if (auto received = receivedFrom.find(transfer.getSource());
            received != receivedFrom.end()) {
          bufferOf[b] = received->second;
          function.args.push_back(received->second);
          continue;
        }
      }
      plan::BufferDesc buffer = describeBuffer(value, coords, rank);
      // An input without a micro-batch dim of its own, while the model
      // input has one: the whole batch.
      buffer.wholeBatch =
          value.getRole() == dist::BufferRole::Input &&
          value.getMicrobatchDim() < 0 &&
          plan::microbatchDim(plan.model, /*input=*/true, value.getIndex()) >=
              0;
      uint32_t created = addBuffer(std::move(buffer));
      bufferOf[b] = created;
      function.args.push_back(created);
      if (into != transferInto.end()) {
        receives[stage].push_back(
            {created, peerOf(transfers[into->second].getFrom()), into->second});
        receivedFrom[transfers[into->second].getSource()] = created;
      }
      // One send per other device: the transfer to its earliest stage (the
      // device keeps the value for its later stages).
      llvm::SmallMapVector<int64_t, unsigned, 4> firstTo;
      for (unsigned tag : transfersOutOf.lookup(b)) {
        int64_t to = rankOfStage(transfers[tag].getTo());
        if (to == pipelineRank)
          continue;
        auto [it, inserted] = firstTo.try_emplace(to, tag);
        if (!inserted &&
            transfers[tag].getTo() < transfers[it->second].getTo())
          it->second = tag;
      }
      for (auto [to, tag] : firstTo)
        sends[stage].push_back({created, peerOf(transfers[tag].getTo()), tag});
    }
    functionOf[stage] = rank.functions.size();
    rank.functions.push_back(std::move(function));
  }
  // An update names the buffer it replaces by its plan position: the
  // rank's buffer of that position (an argument of the same function).
  for (uint32_t created = 0; created < rank.buffers.size(); ++created) {
    if (rank.buffers[created].role != plan::BufferRole::Update)
      continue;
    int64_t target = rank.buffers[created].index;
    auto it = bufferOf.find(target);
    uint32_t index = it != bufferOf.end()
                         ? it->second
                         : addBuffer(describeBuffer(record.getBuffer(target),
                                                    coords, rank));
    bufferOf[target] = index;
    rank.buffers[created].index = index;
  }

  // The schedule: the forwards (and backwards) of the micro-batches in the
  // pipeline order of this rank, then the final part of a training step.
  auto run = [&](int64_t stage, uint32_t microbatch) {
    for (const Message &m : receives.lookup(stage))
      rank.steps.push_back(
          {plan::StepKind::Recv, m.buffer, microbatch, m.peer, m.tag});
    rank.steps.push_back(
        {plan::StepKind::Compute, functionOf.lookup(stage), microbatch, 0, 0});
    for (const Message &m : sends.lookup(stage))
      rank.steps.push_back(
          {plan::StepKind::Send, m.buffer, microbatch, m.peer, m.tag});
  };
  bool training = pipeline.isTrainingStep();
  for (const dist::WorkBlock &block :
       dist::getRankOrder(pipeline.getStages(), pipeline.getChunks(),
                          pipeline.getMicrobatches(), pipeline.getSchedule(),
                          pipelineRank, training))
    run(block.backward ? pipeline.getBackwardStage(block.stage) : block.stage,
        static_cast<uint32_t>(block.microbatch));
  if (training)
    for (int64_t stage = pipeline.getFinalStage(0, 0);
         stage < pipeline.getNumStages(); ++stage)
      if (rankOfStage(stage) == pipelineRank)
        run(stage, 0);
}

bool Packager::run(StringRef target, std::string &error) {
  plan.model = plan::ModelInfo();
  plan.model.target = target.str();
  int64_t numDevices = plan::meshSize(shape);
  if (numDevices > 65536) {
    error = "the mesh has " + std::to_string(numDevices) +
            " devices; plan.bin holds at most 65536 ranks";
    return false;
  }
  plan.model.worldSize = static_cast<uint32_t>(numDevices);
  for (unsigned i = 0, e = shape.size(); i < e; ++i)
    plan.model.meshAxes.emplace_back(
        record.getAxis(i).getName().getValue().str(), shape[i]);
  for (int64_t device : order)
    plan.model.deviceOrder.push_back(static_cast<uint32_t>(device));
  if (dist::PipelineAttr pipeline = record.getPipeline())
    if (StringAttr axis = pipeline.getAxis())
      pipelineAxis = record.getAxisIndex(axis.getValue());
  transfers = llvm::to_vector(record.getTransferList());
  for (auto [tag, transfer] : llvm::enumerate(transfers)) {
    transferInto[transfer.getTarget()] = tag;
    transfersOutOf[transfer.getSource()].push_back(tag);
  }
  if (!collectSignature(error))
    return false;
  plan.ranks.assign(plan.model.worldSize, plan::RankProgram());
  for (uint32_t r = 0; r < plan.model.worldSize; ++r) {
    plan::RankProgram &rank = plan.ranks[r];
    rank.rank = r;
    std::vector<int64_t> coords;
    plan::meshMultiIndex(shape, order, r, coords);
    if (record.getPipeline())
      collectPipelinedProgram(rank, coords);
    else
      collectProgram(rank, coords);
  }
  return true;
}

bool dnnc::collectPlan(ModuleOp module, StringRef target, plan::Plan &plan,
                       std::string &error) {
  auto record = module->getAttrOfType<dist::PlanAttr>(
      dist::DistDialect::getPlanAttrName());
  if (!record) {
    error = "the module has no dist.plan (dnnc-record-plan runs first in the "
            "device pipelines)";
    return false;
  }
  return Packager(record, plan).run(target, error);
}
