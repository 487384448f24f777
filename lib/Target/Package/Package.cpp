//===- Package.cpp - plan.bin packaging ---------------------*- C++ -*-===//
//
// Builds the plan::Plan of a compiled module: model signature, and for every
// rank of the mesh its buffer list (with the block of each model input and
// output it holds) and its weights (its block of each weight, raw
// little-endian bytes, 64-byte aligned).
//
//===----------------------------------------------------------------------===//

#include "dnnc/Target/Package/Package.h"
#include "dnnc/Dialect/Dist/IR/DistOps.h"
#include "dnnc/Dialect/Dist/IR/PipelineSchedule.h"
#include "dnnc/Dialect/Dnn/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"

using namespace mlir;
namespace plan = dnnc::plan;
namespace dist = dnnc::dist;

int32_t dnnc::getONNXDataType(Type type) {
  // ONNX TensorProto.DataType codes.
  if (type.isF32())
    return 1;
  if (type.isF64())
    return 11;
  if (type.isF16())
    return 10;
  if (type.isBF16())
    return 16;
  auto i = dyn_cast<IntegerType>(type);
  if (!i)
    return -1;
  bool u = i.isUnsigned();
  switch (i.getWidth()) {
  case 1:
    return 9;
  case 8:
    return u ? 2 : 3;
  case 16:
    return u ? 4 : 5;
  case 32:
    return u ? 12 : 6;
  case 64:
    return u ? 13 : 7;
  default:
    return -1;
  }
}

/// Describes a tensor of `type` named `name`.
static bool describe(StringRef name, Type type, plan::TensorDesc &desc,
                     std::string &error) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape()) {
    error = "'" + name.str() + "' is not a statically shaped tensor";
    return false;
  }
  int32_t code = dnnc::getONNXDataType(tensor.getElementType());
  if (code < 0) {
    std::string t;
    llvm::raw_string_ostream os(t);
    os << tensor.getElementType();
    error = "'" + name.str() + "' has element type " + t +
            ", which plan.bin cannot hold";
    return false;
  }
  desc.name = name.str();
  desc.dtype = code;
  desc.shape.assign(tensor.getShape().begin(), tensor.getShape().end());
  return true;
}

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

/// Formats a shape as `AxBxC` (`scalar` for rank 0).
static std::string formatShape(ArrayRef<int64_t> shape) {
  if (shape.empty())
    return "scalar";
  std::string text;
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? "x" : "") + std::to_string(shape[i]);
  return text;
}

namespace {
/// An argument or result of @main as the packager sees it.
struct SignatureValue {
  /// The buffer's local (per-rank) type, named after the value.
  plan::TensorDesc local;
  /// The model tensor's global type (equal to `local` when not split).
  plan::TensorDesc global;
  /// The global layout (`dist.sharding`), or null: whole on every rank.
  dist::ShardingAttr sharding;
  /// Weights: the global value (`dnn.weight`); null for inputs and results.
  DenseElementsAttr weight;
  /// Inputs and outputs: the model input/output index.
  uint32_t index = 0;
};
} // namespace

/// Fills `value` from argument or result `what` of @main: its local type
/// `type`, its `sharding` (or null) on `mesh` (or null), its name and, for a
/// weight, its global value. Fails with `error` naming `what`.
static bool describeValue(StringRef what, StringRef name, Type type,
                          dist::ShardingAttr sharding, dist::MeshOp mesh,
                          DenseElementsAttr weight, SignatureValue &value,
                          std::string &error) {
  auto fail = [&](const Twine &message) {
    error = (what + " ('" + name + "'): " + message).str();
    return false;
  };
  if (!describe(name, type, value.local, error))
    return false;
  value.global = value.local;
  value.sharding = sharding;
  value.weight = weight;
  if (sharding) {
    if (!mesh)
      return fail("its dist.sharding names @" + sharding.getMesh().getValue() +
                  ", but the module has no dist.mesh");
    if (sharding.getMesh().getValue() != mesh.getSymName())
      return fail("its dist.sharding names @" + sharding.getMesh().getValue() +
                  ", which is not the module's dist.mesh @" +
                  mesh.getSymName());
    if (sharding.isPartial())
      return fail("its dist.sharding holds partial sums; a model input, "
                  "output or weight must hold final values");
    if (sharding.getRank() != static_cast<int64_t>(value.local.shape.size()))
      return fail("its dist.sharding has rank " + Twine(sharding.getRank()) +
                  ", its type " + Twine(value.local.shape.size()));
    for (StringAttr axis : sharding.getUsedAxes())
      if (!mesh.hasAxis(axis.getValue()))
        return fail("its dist.sharding uses axis '" + axis.getValue() +
                    "', which mesh @" + mesh.getSymName() + " does not have");
    for (size_t d = 0; d < value.local.shape.size(); ++d)
      value.global.shape[d] *= sharding.getNumShards(d, mesh);
  }
  if (weight) {
    ArrayRef<int64_t> valueShape = weight.getType().getShape();
    if (ArrayRef<int64_t>(value.global.shape) != valueShape)
      return fail("its dnn.weight has shape " + formatShape(valueShape) +
                  ", but its type and sharding give the global shape " +
                  formatShape(value.global.shape));
    if (!weight.isSplat() && !weight.getElementType().isInteger(1) &&
        weight.getRawData().size() != byteSize(value.global))
      return fail("its dnn.weight is not stored densely");
  }
  return true;
}

/// Returns the offset, per dimension, of the block of `value` that the
/// device at mesh coordinates `coords` holds: block index (the row-major
/// linearization of its coordinates on the dim's axes) times the local
/// extent. Empty when the value is not split.
static std::vector<int64_t> blockOffsets(const SignatureValue &value,
                                         dist::MeshOp mesh,
                                         ArrayRef<int64_t> coords) {
  if (!value.sharding || !value.sharding.isSplit())
    return {};
  std::vector<int64_t> offsets;
  for (size_t d = 0; d < value.local.shape.size(); ++d) {
    int64_t block = 0;
    for (StringAttr axis : value.sharding.getDimAxes(d)) {
      unsigned index = *mesh.getAxisIndex(axis.getValue());
      block = block * mesh.getAxis(index).getSize() + coords[index];
    }
    offsets.push_back(block * value.local.shape[d]);
  }
  return offsets;
}

/// Returns true if the device at `coords` writes its block of output
/// `value`: its coordinate is 0 on every mesh axis the output's sharding
/// does not use (the lowest mesh position among the replicas), the
/// pipeline axis `pipelineAxis` excepted (only the devices of the stage
/// computing the output hold it).
static bool ownsOutput(const SignatureValue &value, dist::MeshOp mesh,
                       ArrayRef<int64_t> coords, StringRef pipelineAxis = {}) {
  for (unsigned index = 0, e = coords.size(); index < e; ++index) {
    StringRef axis = mesh.getAxis(index).getName().getValue();
    if (axis == pipelineAxis)
      continue;
    if (coords[index] != 0 &&
        (!value.sharding || !value.sharding.usesAxis(axis)))
      return false;
  }
  return true;
}

/// Returns the buffer describing argument or result `value` on the device
/// at `coords` (a model input, weight or output; see collectPlanSignature).
static plan::BufferDesc describeBuffer(const SignatureValue &value,
                                       bool isResult, dist::MeshOp mesh,
                                       ArrayRef<int64_t> coords,
                                       StringRef pipelineAxis,
                                       plan::RankProgram &rank) {
  plan::BufferDesc buffer;
  buffer.tensor = value.local;
  buffer.size = byteSize(value.local);
  std::vector<int64_t> offsets = blockOffsets(value, mesh, coords);
  if (isResult) {
    buffer.role = plan::BufferRole::Output;
    buffer.index = value.index;
    buffer.sliceOffsets = std::move(offsets);
    buffer.ownsOutput = !mesh || ownsOutput(value, mesh, coords, pipelineAxis);
  } else if (value.weight) {
    buffer.role = plan::BufferRole::Weight;
    // A piece at the next aligned offset, read from the attribute when the
    // plan is written (the weights are not copied).
    buffer.offset = plan::alignTo(rank.weightsSize(), plan::kAlignment);
    rank.weightPieces.push_back(
        {buffer.offset, buffer.size,
         [weight = value.weight, global = value.global.shape, offsets,
          local = value.local.shape,
          eltSize = plan::dtypeByteSize(value.local.dtype)](
             const plan::ByteSink &sink) {
           emitWeightBlock(weight, global, offsets, local, eltSize, sink);
         }});
  } else {
    buffer.role = plan::BufferRole::Input;
    buffer.index = value.index;
    buffer.sliceOffsets = std::move(offsets);
  }
  return buffer;
}

/// The programs of a pipelined plan; see collectPlanSignature.
static bool collectPipelinedPrograms(ModuleOp module, func::FuncOp main,
                                     dist::MeshOp mesh,
                                     ArrayRef<SignatureValue> args,
                                     ArrayRef<SignatureValue> results,
                                     plan::Plan &plan, std::string &error) {
  auto pipeline = module->getAttrOfType<dist::PipelineAttr>(
      dist::DistDialect::getPipelineAttrName());
  if (!pipeline) {
    error = "@main has pipeline stages but the module has no dist.pipeline";
    return false;
  }
  if (pipeline.getMicrobatches() > int64_t(plan::kMaxMicrobatches)) {
    error = "the pipeline has " + std::to_string(pipeline.getMicrobatches()) +
            " micro-batches; plan.bin holds at most " +
            std::to_string(plan::kMaxMicrobatches);
    return false;
  }
  StringRef pipelineAxis;
  std::optional<unsigned> axisIndex;
  if (StringAttr axis = pipeline.getAxis()) {
    pipelineAxis = axis.getValue();
    axisIndex = mesh ? mesh.getAxisIndex(pipelineAxis) : std::nullopt;
    if (!axisIndex) {
      error = "dist.pipeline names axis '" + pipelineAxis.str() +
              "', which the module's mesh does not have";
      return false;
    }
  }
  plan.model.microbatches = static_cast<uint32_t>(pipeline.getMicrobatches());
  bool split = false;
  for (unsigned i = 0, e = main.getNumArguments(); i < e; ++i)
    if (main.getArgAttr(i, dist::DistDialect::getMicrobatchDimAttrName()))
      split = true;
  if (pipeline.getMicrobatches() > 1 && split) {
    plan.model.inputMicrobatchDims.assign(plan.model.inputs.size(), -1);
    plan.model.outputMicrobatchDims.assign(plan.model.outputs.size(), -1);
    for (unsigned i = 0, e = main.getNumArguments(); i < e; ++i)
      if (auto dim = main.getArgAttrOfType<IntegerAttr>(
              i, dist::DistDialect::getMicrobatchDimAttrName());
          dim && !args[i].weight) {
        plan.model.inputMicrobatchDims[args[i].index] = dim.getInt();
        plan.model.inputs[args[i].index].shape[dim.getInt()] *=
            pipeline.getMicrobatches();
      }
    for (unsigned i = 0, e = main.getNumResults(); i < e; ++i)
      if (auto dim = main.getResultAttrOfType<IntegerAttr>(
              i, dist::DistDialect::getMicrobatchDimAttrName())) {
        plan.model.outputMicrobatchDims[results[i].index] = dim.getInt();
        plan.model.outputs[results[i].index].shape[dim.getInt()] *=
            pipeline.getMicrobatches();
      }
  }

  // The stages and transfers of @main.
  Block &body = main.getBody().front();
  SmallVector<dist::StageOp> stages;
  llvm::DenseMap<Operation *, unsigned> transferIndex;
  for (Operation &op : body) {
    if (auto stage = dyn_cast<dist::StageOp>(op)) {
      if (stage.getStageAttr().getInt() !=
          static_cast<int64_t>(stages.size())) {
        error = "@main's stages are not numbered 0, 1, ... in order";
        return false;
      }
      stages.push_back(stage);
    } else if (isa<dist::TransferOp>(op)) {
      unsigned index = transferIndex.size();
      if (index >= plan::kMaxTag) {
        error = "@main has more than " + std::to_string(plan::kMaxTag) +
                " transfers between stages";
        return false;
      }
      transferIndex[&op] = index;
    }
  }
  int64_t ranksPerPipeline = pipeline.getStages();
  if (static_cast<int64_t>(stages.size()) != pipeline.getNumVirtualStages()) {
    error = "@main has " + std::to_string(stages.size()) +
            " stages but dist.pipeline describes " +
            std::to_string(pipeline.getNumVirtualStages());
    return false;
  }
  auto rankOfStage = [&](int64_t stage) { return stage % ranksPerPipeline; };

  plan.ranks.assign(plan.model.worldSize, plan::RankProgram());
  for (uint32_t r = 0; r < plan.model.worldSize; ++r) {
    plan::RankProgram &rank = plan.ranks[r];
    rank.rank = r;
    SmallVector<int64_t> coords;
    if (mesh)
      coords = mesh.getMultiIndex(r);
    int64_t pipelineRank = axisIndex ? coords[*axisIndex] : 0;
    // The rank holding `stage` with this rank's other coordinates.
    auto peerOf = [&](int64_t stage) -> uint32_t {
      SmallVector<int64_t> peer(coords);
      peer[*axisIndex] = rankOfStage(stage);
      return static_cast<uint32_t>(mesh.getDeviceId(peer));
    };
    // Buffers, created on first use.
    llvm::DenseMap<Value, uint32_t> bufferOf;
    auto addBuffer = [&](plan::BufferDesc buffer) {
      rank.buffers.push_back(std::move(buffer));
      return static_cast<uint32_t>(rank.buffers.size() - 1);
    };
    auto activation = [&](Value value, StringRef name) -> FailureOr<uint32_t> {
      plan::BufferDesc buffer;
      buffer.role = plan::BufferRole::Activation;
      if (!describe(name, value.getType(), buffer.tensor, error))
        return failure();
      buffer.size = byteSize(buffer.tensor);
      return addBuffer(std::move(buffer));
    };
    // Per stage of this rank: its function, receives and sends.
    struct Message {
      uint32_t buffer, peer, tag;
    };
    llvm::DenseMap<int64_t, uint32_t> functionOf;
    llvm::DenseMap<int64_t, SmallVector<Message>> receives, sends;
    for (dist::StageOp stage : stages) {
      int64_t index = stage.getStageAttr().getInt();
      if (rankOfStage(index) != pipelineRank)
        continue;
      plan::FunctionDesc function;
      function.symbol = dnnc::getEntrySymbol(dist::getStageFunctionName(index));
      for (Value input : dist::getStageInputs(stage)) {
        if (auto arg = dyn_cast<BlockArgument>(input)) {
          auto [it, inserted] = bufferOf.try_emplace(input, 0);
          if (inserted) {
            const SignatureValue &value = args[arg.getArgNumber()];
            plan::BufferDesc buffer =
                describeBuffer(value, /*isResult=*/false, mesh, coords,
                               pipelineAxis, rank);
            // An input without a micro-batch dim of its own, while the
            // model input has one: the whole batch.
            buffer.wholeBatch =
                !value.weight &&
                !main.getArgAttr(
                    arg.getArgNumber(),
                    dist::DistDialect::getMicrobatchDimAttrName()) &&
                plan::microbatchDim(plan.model, /*input=*/true, value.index) >=
                    0;
            it->second = addBuffer(std::move(buffer));
          }
          function.args.push_back(it->second);
          continue;
        }
        auto transfer = input.getDefiningOp<dist::TransferOp>();
        if (!transfer) {
          error = "stage " + std::to_string(index) +
                  " uses a value that is neither an argument of @main nor "
                  "a transfer";
          return false;
        }
        int64_t source = transfer.getSrcStageAttr().getInt();
        if (rankOfStage(source) == pipelineRank) {
          // Computed on this device: the sender's buffer itself.
          function.args.push_back(bufferOf.lookup(transfer.getInput()));
          continue;
        }
        FailureOr<uint32_t> buffer = activation(
            input, "transfer " + std::to_string(transferIndex[transfer]));
        if (failed(buffer))
          return false;
        receives[index].push_back(
            {*buffer, peerOf(source), transferIndex[transfer]});
        function.args.push_back(*buffer);
      }
      for (OpResult result : stage.getResults()) {
        uint32_t buffer = 0;
        bool isOutput = false;
        for (OpOperand &use : result.getUses())
          if (isa<func::ReturnOp>(use.getOwner())) {
            buffer = addBuffer(describeBuffer(results[use.getOperandNumber()],
                                              /*isResult=*/true, mesh, coords,
                                              pipelineAxis, rank));
            isOutput = true;
          }
        if (!isOutput) {
          FailureOr<uint32_t> created =
              activation(result, "stage " + std::to_string(index) + " result " +
                                     std::to_string(result.getResultNumber()));
          if (failed(created))
            return false;
          buffer = *created;
        }
        bufferOf[result] = buffer;
        function.args.push_back(buffer);
        for (Operation *user : result.getUsers())
          if (auto transfer = dyn_cast<dist::TransferOp>(user)) {
            if (isOutput) {
              error = "stage " + std::to_string(index) +
                      " returns a value that it also transfers";
              return false;
            }
            int64_t destination = transfer.getDstStageAttr().getInt();
            if (rankOfStage(destination) != pipelineRank)
              sends[index].push_back(
                  {buffer, peerOf(destination), transferIndex[transfer]});
          }
      }
      functionOf[index] = rank.functions.size();
      rank.functions.push_back(std::move(function));
    }

    // The schedule: forwards in the pipeline order of this rank.
    for (const dist::WorkBlock &block :
         dist::getRankOrder(pipeline.getStages(), pipeline.getChunks(),
                            pipeline.getMicrobatches(), pipeline.getSchedule(),
                            pipelineRank, /*train=*/false)) {
      uint32_t microbatch = static_cast<uint32_t>(block.microbatch);
      for (const Message &m : receives.lookup(block.stage))
        rank.steps.push_back(
            {plan::StepKind::Recv, m.buffer, microbatch, m.peer, m.tag});
      rank.steps.push_back({plan::StepKind::Compute,
                            functionOf.lookup(block.stage), microbatch, 0, 0});
      for (const Message &m : sends.lookup(block.stage))
        rank.steps.push_back(
            {plan::StepKind::Send, m.buffer, microbatch, m.peer, m.tag});
    }
  }
  return true;
}

bool dnnc::collectPlanSignature(ModuleOp module, StringRef target,
                                plan::Plan &plan, std::string &error) {
  auto main = module.lookupSymbol<func::FuncOp>("main");
  if (!main || main.isExternal()) {
    error = "the module has no function @main";
    return false;
  }
  auto meshes = llvm::to_vector(module.getOps<dist::MeshOp>());
  if (meshes.size() > 1) {
    error = "the module has " + std::to_string(meshes.size()) +
            " dist.mesh ops; a plan runs on one mesh";
    return false;
  }
  dist::MeshOp mesh = meshes.empty() ? dist::MeshOp() : meshes.front();

  plan.model = plan::ModelInfo();
  plan.model.target = target.str();
  plan.model.worldSize = 1;
  if (mesh) {
    int64_t numDevices = mesh.getNumDevices();
    if (numDevices > 65536) {
      error = "mesh @" + mesh.getSymName().str() + " has " +
              std::to_string(numDevices) +
              " devices; plan.bin holds at most 65536 ranks";
      return false;
    }
    plan.model.worldSize = static_cast<uint32_t>(numDevices);
    for (unsigned i = 0, e = mesh.getNumAxes(); i < e; ++i) {
      dist::MeshAxisAttr axis = mesh.getAxis(i);
      plan.model.meshAxes.emplace_back(axis.getName().str(), axis.getSize());
    }
    if (std::optional<ArrayRef<int64_t>> devices = mesh.getDevices())
      for (int64_t device : *devices)
        plan.model.deviceOrder.push_back(static_cast<uint32_t>(device));
  }

  auto nameOf = [](DictionaryAttr attrs, StringRef fallback) {
    if (attrs)
      if (auto n = attrs.getAs<StringAttr>(dnn::kNameAttrName))
        return n.getValue().str();
    return fallback.str();
  };
  bool pipelined = !main.getBody().front().getOps<dist::StageOp>().empty();
  // The type the weights are stored in (`--precision`, as the plan phase
  // converted the module), or null.
  FloatType reduced =
      pipelined ? nullptr
                : dnn::getReducedFloatType(module.getContext(),
                                           dnn::getModulePrecision(module));
  // The signature, from @main's arguments (inputs and weights) and results.
  SmallVector<SignatureValue> args, results;
  for (unsigned i = 0, e = main.getNumArguments(); i < e; ++i) {
    DictionaryAttr attrs = main.getArgAttrDict(i);
    auto weight =
        attrs ? attrs.getAs<DenseElementsAttr>(dnn::kWeightAttrName) : nullptr;
    Type type = main.getArgument(i).getType();
    if (weight && reduced && weight.getElementType().isF32()) {
      weight = dnn::convertWeightValue(weight, reduced);
      type = cast<RankedTensorType>(type).clone(reduced);
    }
    SignatureValue value;
    if (!describeValue("argument #" + std::to_string(i),
                       nameOf(attrs, "arg" + std::to_string(i)), type,
                       dist::getArgSharding(main, i), mesh, weight, value,
                       error))
      return false;
    if (!weight) {
      // A second argument of the same name is a copy of that input (the
      // whole batch of an input split into micro-batches).
      value.index = plan.model.inputs.size();
      for (const SignatureValue &other : args)
        if (!other.weight && other.global.name == value.global.name)
          value.index = other.index;
      if (value.index == plan.model.inputs.size())
        plan.model.inputs.push_back(value.global);
    }
    args.push_back(std::move(value));
  }
  for (unsigned i = 0, e = main.getNumResults(); i < e; ++i) {
    SignatureValue value;
    if (!describeValue(
            "result #" + std::to_string(i),
            nameOf(main.getResultAttrDict(i), "output" + std::to_string(i)),
            main.getResultTypes()[i], dist::getFuncResultSharding(main, i),
            mesh, nullptr, value, error))
      return false;
    value.index = plan.model.outputs.size();
    plan.model.outputs.push_back(value.global);
    results.push_back(std::move(value));
  }

  if (pipelined)
    return collectPipelinedPrograms(module, main, mesh, args, results, plan,
                                    error);

  // One program per rank: the buffer list of the device phase's calling
  // convention (arguments in order, then results as out-params), each
  // buffer holding the rank's block.
  plan.ranks.assign(plan.model.worldSize, plan::RankProgram());
  for (uint32_t r = 0; r < plan.model.worldSize; ++r) {
    plan::RankProgram &rank = plan.ranks[r];
    rank.rank = r;
    SmallVector<int64_t> coords;
    if (mesh)
      coords = mesh.getMultiIndex(r);
    for (const SignatureValue &value : args)
      rank.buffers.push_back(describeBuffer(value, /*isResult=*/false, mesh,
                                            coords, {}, rank));
    for (const SignatureValue &value : results)
      rank.buffers.push_back(describeBuffer(value, /*isResult=*/true, mesh,
                                            coords, {}, rank));
    plan::setSingleFunction(rank, dnnc::getEntrySymbol("main"));
  }
  return true;
}
