//===- RecordPlan.cpp - keep what packaging needs -------------*- C++ -*-===//
//
// Implements dnnc-record-plan: the mesh, pipeline, buffers, functions and
// stage transfers of a partitioned module, recorded as its #dist.plan before
// lowering erases the dist ops and rewrites @main.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Dialect/Dist/IR/DistOps.h"
#include "dnnc/Dialect/Dnn/IR/Dnn.h"
#include "dnnc/Dialect/Dnn/Transforms/Passes.h"
#include "dnnc/Target/Common/Passes.h"
#include "dnnc/Target/Common/RuntimeABI.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"

namespace dnnc {
#define GEN_PASS_DEF_RECORDPLANPASS
#include "dnnc/Target/Common/Passes.h.inc"
} // namespace dnnc

using namespace mlir;
namespace dist = dnnc::dist;
namespace dnn = dnnc::dnn;

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
/// Builds the #dist.plan of one module; see the pass description.
class PlanRecorder {
public:
  /// Records `module`, whose @main is `main` and mesh `mesh` (or null).
  PlanRecorder(ModuleOp module, func::FuncOp main, dist::MeshOp mesh)
      : module(module), main(main), mesh(mesh), ctx(module.getContext()) {}

  /// Returns the plan, or null with `error` set.
  dist::PlanAttr record(std::string &error);

private:
  /// Appends the buffer of argument or result `what` of @main (named `name`,
  /// local type `type`); fails with `error` naming `what`.
  LogicalResult addSignatureBuffer(StringRef what, StringRef name, Type type,
                                   dist::BufferRole role, int64_t index,
                                   dist::ShardingAttr sharding,
                                   DenseElementsAttr weight,
                                   IntegerAttr microbatchDim);
  /// Appends an activation buffer named `name` of type `type`.
  FailureOr<int64_t> addActivation(StringRef name, Type type);
  /// Records @main's stages and transfers under `pipeline`.
  LogicalResult recordStages(dist::PipelineAttr pipeline);
  /// Sets `error` and fails.
  LogicalResult fail(const Twine &message) {
    error = message.str();
    return failure();
  }

  ModuleOp module;
  func::FuncOp main;
  dist::MeshOp mesh;
  MLIRContext *ctx;
  SmallVector<Attribute> buffers, functions, transfers;
  std::string error;
};
} // namespace

LogicalResult PlanRecorder::addSignatureBuffer(
    StringRef what, StringRef name, Type type, dist::BufferRole role,
    int64_t index, dist::ShardingAttr sharding, DenseElementsAttr weight,
    IntegerAttr microbatchDim) {
  auto failValue = [&](const Twine &message) {
    return fail(what + " ('" + name + "'): " + message);
  };
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape())
    return fail("'" + name + "' is not a statically shaped tensor");
  if (dnnc::getONNXDataType(tensor.getElementType()) < 0) {
    std::string t;
    llvm::raw_string_ostream os(t);
    os << tensor.getElementType();
    return fail("'" + name + "' has element type " + t +
                ", which plan.bin cannot hold");
  }
  SmallVector<int64_t> global(tensor.getShape());
  if (sharding) {
    if (!mesh)
      return failValue("its dist.sharding names @" +
                       sharding.getMesh().getValue() +
                       ", but the module has no dist.mesh");
    if (sharding.getMesh().getValue() != mesh.getSymName())
      return failValue("its dist.sharding names @" +
                       sharding.getMesh().getValue() +
                       ", which is not the module's dist.mesh @" +
                       mesh.getSymName());
    // (An accumulator, and its update, may hold each rank's partial share
    // of a sum over micro-batches: the step's final part completes it.)
    if (sharding.isPartial() && role != dist::BufferRole::Accumulator &&
        role != dist::BufferRole::Update)
      return failValue("its dist.sharding holds partial sums; a model input, "
                       "output or weight must hold final values");
    if (sharding.getRank() != tensor.getRank())
      return failValue("its dist.sharding has rank " +
                       Twine(sharding.getRank()) + ", its type " +
                       Twine(tensor.getRank()));
    for (StringAttr axis : sharding.getUsedAxes())
      if (!mesh.hasAxis(axis.getValue()))
        return failValue("its dist.sharding uses axis '" + axis.getValue() +
                         "', which mesh @" + mesh.getSymName() +
                         " does not have");
    for (size_t d = 0; d < global.size(); ++d)
      global[d] *= sharding.getNumShards(d, mesh);
  }
  if (weight) {
    ArrayRef<int64_t> valueShape = weight.getType().getShape();
    if (ArrayRef<int64_t>(global) != valueShape)
      return failValue("its dnn.weight has shape " + formatShape(valueShape) +
                       ", but its type and sharding give the global shape " +
                       formatShape(global));
    if (!weight.isSplat() && !weight.getElementType().isInteger(1) &&
        weight.getRawData().size() * 8 !=
            size_t(weight.getNumElements()) *
                weight.getElementType().getIntOrFloatBitWidth())
      return failValue("its dnn.weight is not stored densely");
  }
  buffers.push_back(dist::PlanBufferAttr::get(
      ctx, role, StringAttr::get(ctx, name), tensor, tensor.clone(global),
      index, sharding, weight, microbatchDim ? microbatchDim.getInt() : -1));
  return success();
}

FailureOr<int64_t> PlanRecorder::addActivation(StringRef name, Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape() ||
      dnnc::getONNXDataType(tensor.getElementType()) < 0) {
    (void)fail("'" + name + "' is not a statically shaped tensor of a type " +
               "plan.bin can hold");
    return failure();
  }
  buffers.push_back(dist::PlanBufferAttr::get(
      ctx, dist::BufferRole::Activation, StringAttr::get(ctx, name), tensor,
      tensor, 0, nullptr, nullptr, -1));
  return static_cast<int64_t>(buffers.size() - 1);
}

LogicalResult PlanRecorder::recordStages(dist::PipelineAttr pipeline) {
  if (StringAttr axis = pipeline.getAxis())
    if (!mesh || !mesh.hasAxis(axis.getValue()))
      return fail("dist.pipeline names axis '" + axis.getValue() +
                  "', which the module's mesh does not have");
  // The stages and transfers of @main.
  SmallVector<dist::StageOp> stages;
  llvm::DenseMap<Operation *, unsigned> transferIndex;
  for (Operation &op : main.getBody().front()) {
    if (auto stage = dyn_cast<dist::StageOp>(op)) {
      if (stage.getStageAttr().getInt() != int64_t(stages.size()))
        return fail("@main's stages are not numbered 0, 1, ... in order");
      stages.push_back(stage);
    } else if (isa<dist::TransferOp>(op)) {
      unsigned index = transferIndex.size();
      transferIndex[&op] = index;
    }
  }
  if (int64_t(stages.size()) != pipeline.getNumStages())
    return fail("@main has " + Twine(stages.size()) +
                " stages but dist.pipeline describes " +
                Twine(pipeline.getNumStages()));
  // The transfers, in @main's order, filled in as their stages are seen.
  SmallVector<int64_t> sources(transferIndex.size(), -1);
  SmallVector<int64_t> targets(transferIndex.size(), -1);
  SmallVector<dist::TransferOp> transferOps(transferIndex.size());
  llvm::DenseMap<Value, int64_t> bufferOf;
  for (dist::StageOp stage : stages) {
    int64_t index = stage.getStageAttr().getInt();
    SmallVector<int64_t> args;
    for (Value input : dist::getStageInputs(stage)) {
      if (auto arg = dyn_cast<BlockArgument>(input)) {
        args.push_back(arg.getArgNumber());
        continue;
      }
      auto transfer = input.getDefiningOp<dist::TransferOp>();
      if (!transfer)
        return fail("stage " + Twine(index) +
                    " uses a value that is neither an argument of @main nor "
                    "a transfer");
      unsigned t = transferIndex.lookup(transfer);
      if (targets[t] < 0) {
        FailureOr<int64_t> buffer =
            addActivation("transfer " + std::to_string(t), input.getType());
        if (failed(buffer))
          return failure();
        targets[t] = *buffer;
        transferOps[t] = transfer;
      }
      args.push_back(targets[t]);
    }
    for (OpResult result : stage.getResults()) {
      int64_t buffer = -1;
      for (OpOperand &use : result.getUses())
        if (isa<func::ReturnOp>(use.getOwner()))
          buffer = main.getNumArguments() + use.getOperandNumber();
      if (buffer >= 0) {
        if (llvm::any_of(result.getUsers(), llvm::IsaPred<dist::TransferOp>))
          return fail("stage " + Twine(index) +
                      " returns a value that it also transfers");
      } else {
        FailureOr<int64_t> created = addActivation(
            "stage " + std::to_string(index) + " result " +
                std::to_string(result.getResultNumber()),
            result.getType());
        if (failed(created))
          return failure();
        buffer = *created;
      }
      bufferOf[result] = buffer;
      args.push_back(buffer);
    }
    functions.push_back(dist::PlanFunctionAttr::get(
        ctx,
        StringAttr::get(ctx, dnnc::getEntrySymbol(
                                 dist::getStageFunctionName(index))),
        index, DenseI64ArrayAttr::get(ctx, args)));
  }
  for (auto [t, transfer] : llvm::enumerate(transferOps)) {
    if (!transfer)
      continue;
    auto source = bufferOf.find(transfer.getInput());
    if (source == bufferOf.end())
      return fail("transfer " + Twine(t) + " sends a value no stage computes");
    transfers.push_back(dist::PlanTransferAttr::get(
        ctx, transfer.getSrcStageAttr().getInt(),
        transfer.getDstStageAttr().getInt(), source->second, targets[t]));
  }
  return success();
}

dist::PlanAttr PlanRecorder::record(std::string &errorOut) {
  auto nameOf = [](DictionaryAttr attrs, StringRef fallback) {
    if (attrs)
      if (auto n = attrs.getAs<StringAttr>(dnn::kNameAttrName))
        return n.getValue().str();
    return fallback.str();
  };
  auto finish = [&]() {
    errorOut = error;
    return dist::PlanAttr();
  };
  bool pipelined = !main.getBody().front().getOps<dist::StageOp>().empty();
  StringAttr microbatchDimName =
      StringAttr::get(ctx, dist::DistDialect::getMicrobatchDimAttrName());
  // The type the weights are stored in (`--precision`, as the plan phase
  // converted the module), or null.
  FloatType reduced =
      pipelined ? nullptr
                : dnn::getReducedFloatType(ctx,
                                           dnn::getModulePrecision(module));
  int64_t numInputs = 0;
  for (unsigned i = 0, e = main.getNumArguments(); i < e; ++i) {
    DictionaryAttr attrs = main.getArgAttrDict(i);
    auto weight =
        attrs ? attrs.getAs<DenseElementsAttr>(dnn::kWeightAttrName) : nullptr;
    Type type = main.getArgument(i).getType();
    // The data follows the argument's type (a training step's master
    // weights and the constants outlined after its conversion stay f32).
    if (weight && reduced && weight.getElementType().isF32() &&
        getElementTypeOrSelf(type) == reduced)
      weight = dnn::convertWeightValue(weight, reduced);
    std::string name = nameOf(attrs, "arg" + std::to_string(i));
    dist::BufferRole role =
        weight ? dist::BufferRole::Weight : dist::BufferRole::Input;
    if (attrs && attrs.get(dnn::kStateAttrName)) {
      // The state starts at zero: nothing to store.
      role = dist::BufferRole::State;
      weight = nullptr;
    } else if (attrs && attrs.get(dnn::kStepAttrName)) {
      role = dist::BufferRole::Step;
    } else if (attrs &&
               attrs.get(dist::DistDialect::getAccumulatorAttrName())) {
      role = dist::BufferRole::Accumulator;
    }
    int64_t index = 0;
    if (role == dist::BufferRole::Input) {
      // A second argument of the same name is a copy of that input (the
      // whole batch of an input split into micro-batches).
      index = numInputs;
      for (Attribute other : buffers) {
        auto buffer = cast<dist::PlanBufferAttr>(other);
        if (buffer.getRole() == dist::BufferRole::Input &&
            buffer.getName().getValue() == name) {
          index = buffer.getIndex();
          break;
        }
      }
      if (index == numInputs)
        ++numInputs;
    }
    if (failed(addSignatureBuffer(
            "argument #" + std::to_string(i), name, type, role, index,
            dist::getArgSharding(main, i), weight,
            attrs ? attrs.getAs<IntegerAttr>(microbatchDimName) : nullptr)))
      return finish();
  }
  int64_t numOutputs = 0;
  for (unsigned i = 0, e = main.getNumResults(); i < e; ++i) {
    DictionaryAttr attrs = main.getResultAttrDict(i);
    auto updates =
        attrs ? attrs.getAs<IntegerAttr>(dnn::kUpdatesAttrName) : nullptr;
    std::string what = "result #" + std::to_string(i);
    dist::ShardingAttr sharding = dist::getFuncResultSharding(main, i);
    if (updates) {
      // The new value of an argument: the same block of the same tensor.
      int64_t target = updates.getInt();
      if (target < 0 || target >= int64_t(main.getNumArguments()) ||
          main.getArgument(target).getType() != main.getResultTypes()[i] ||
          dist::getArgSharding(main, target) != sharding) {
        error = what + " updates argument #" + std::to_string(target) +
                ", which does not have its type and sharding";
        return finish();
      }
      auto role = cast<dist::PlanBufferAttr>(buffers[target]).getRole();
      if (role != dist::BufferRole::Weight && role != dist::BufferRole::State &&
          role != dist::BufferRole::Accumulator) {
        error = what + " updates argument #" + std::to_string(target) +
                ", which is not a weight, optimizer state or accumulator";
        return finish();
      }
    }
    if (failed(addSignatureBuffer(
            what, nameOf(attrs, "output" + std::to_string(i)),
            main.getResultTypes()[i],
            updates ? dist::BufferRole::Update : dist::BufferRole::Output,
            updates ? updates.getInt() : numOutputs++, sharding, nullptr,
            attrs ? attrs.getAs<IntegerAttr>(microbatchDimName) : nullptr)))
      return finish();
  }

  auto pipeline = module->getAttrOfType<dist::PipelineAttr>(
      dist::DistDialect::getPipelineAttrName());
  if (pipelined) {
    if (!pipeline) {
      error = "@main has pipeline stages but the module has no dist.pipeline";
      return finish();
    }
    if (failed(recordStages(pipeline)))
      return finish();
  } else {
    // One function over every buffer: the device phase's calling
    // convention (arguments in order, then results as out-params).
    pipeline = nullptr;
    functions.push_back(dist::PlanFunctionAttr::get(
        ctx, StringAttr::get(ctx, dnnc::getEntrySymbol("main")), 0,
        DenseI64ArrayAttr::get(
            ctx, llvm::to_vector(llvm::seq<int64_t>(0, buffers.size())))));
  }
  ArrayAttr axes = mesh ? mesh.getAxes() : ArrayAttr::get(ctx, {});
  DenseI64ArrayAttr devices;
  if (mesh)
    if (std::optional<ArrayRef<int64_t>> order = mesh.getDevices())
      devices = DenseI64ArrayAttr::get(ctx, *order);
  return dist::PlanAttr::get(ctx, axes, devices, pipeline,
                             ArrayAttr::get(ctx, buffers),
                             ArrayAttr::get(ctx, functions),
                             ArrayAttr::get(ctx, transfers));
}

namespace {
/// Records the module's #dist.plan; see the pass description.
class RecordPlanPass : public dnnc::impl::RecordPlanPassBase<RecordPlanPass> {
public:
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto main = module.lookupSymbol<func::FuncOp>("main");
    if (!main || main.isExternal()) {
      module.emitError("the module has no function @main");
      return signalPassFailure();
    }
    auto meshes = llvm::to_vector(module.getOps<dist::MeshOp>());
    if (meshes.size() > 1) {
      module.emitError() << "the module has " << meshes.size()
                         << " dist.mesh ops; a plan runs on one mesh";
      return signalPassFailure();
    }
    std::string error;
    dist::PlanAttr plan =
        PlanRecorder(module, main, meshes.empty() ? nullptr : meshes.front())
            .record(error);
    if (!plan) {
      module.emitError(error);
      return signalPassFailure();
    }
    module->setAttr(dist::DistDialect::getPlanAttrName(), plan);
  }
};
} // namespace
