//===- DistDialect.cpp - Dist dialect and attribute checks ------*- C++ -*-===//
//
// Part of the dnnc project.
//
//===----------------------------------------------------------------------===//
//
// Registers the `dist` dialect and verifies its discardable attributes:
// `dist.sharding` on function arguments and results, `dist.shardings` on ops.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Dialect/Dist/IR/DistDialect.h"
#include "dnnc/Dialect/Dist/IR/DistAttrs.h"
#include "dnnc/Dialect/Dist/IR/DistOps.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

using namespace mlir;
using namespace dnnc::dist;

#include "dnnc/Dialect/Dist/IR/DistDialect.cpp.inc"

void DistDialect::initialize() {
  registerAttributes();
  addOperations<
#define GET_OP_LIST
#include "dnnc/Dialect/Dist/IR/DistOps.cpp.inc"
      >();
}

/// Checks a `dist` attribute on argument or result `index` of `op`; `what`
/// is "argument" or "result".
static LogicalResult verifyValueAttribute(Operation *op, StringRef what,
                                          unsigned index, NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  if (name == DistDialect::getMicrobatchDimAttrName()) {
    auto dim = dyn_cast<IntegerAttr>(attr.getValue());
    auto func = dyn_cast<FunctionOpInterface>(op);
    Type type;
    if (func)
      type = what == "argument" ? func.getArgumentTypes()[index]
                                : func.getResultTypes()[index];
    auto tensor = dyn_cast_or_null<RankedTensorType>(type);
    if (!dim || !dim.getType().isInteger(64) || dim.getInt() < 0 || !tensor ||
        dim.getInt() >= tensor.getRank())
      return op->emitOpError()
             << "'" << name << "' on " << what << " #" << index
             << " must be an i64 dim of its ranked tensor type";
    return success();
  }
  if (name == DistDialect::getStageAttrName()) {
    // The stage owning an argument, or yielding a result, of a function
    // dist-materialize-stages stages.
    auto stage = dyn_cast<IntegerAttr>(attr.getValue());
    if (!stage || !stage.getType().isInteger(64) || stage.getInt() < 0)
      return op->emitOpError() << "'" << name << "' on " << what << " #"
                               << index << " must be a non-negative i64";
    return success();
  }
  if (name == DistDialect::getAccumulatorAttrName() && what == "argument") {
    if (!isa<UnitAttr>(attr.getValue()))
      return op->emitOpError() << "'" << name << "' on " << what << " #"
                               << index << " must be a unit attribute";
    return success();
  }
  if (name != DistDialect::getShardingAttrName())
    return op->emitOpError()
           << "'" << name << "' is not a valid dist attribute on " << what
           << " #" << index;
  if (!isa<ShardingAttr>(attr.getValue()))
    return op->emitOpError() << "'" << name << "' on " << what << " #" << index
                             << " must be a #dist.sharding attribute";
  return success();
}

LogicalResult DistDialect::verifyRegionArgAttribute(Operation *op,
                                                    unsigned /*regionIndex*/,
                                                    unsigned argIndex,
                                                    NamedAttribute attr) {
  return verifyValueAttribute(op, "argument", argIndex, attr);
}

LogicalResult DistDialect::verifyRegionResultAttribute(Operation *op,
                                                       unsigned /*regionIndex*/,
                                                       unsigned resultIndex,
                                                       NamedAttribute attr) {
  return verifyValueAttribute(op, "result", resultIndex, attr);
}

/// Verifies `dist.pipeline` on `op` (a module) and the `dist.stage` of the
/// ops of its functions: a `#dist.pipeline` whose axis is a mesh axis of
/// `stages` devices, stages in range and never decreasing along a use.
static LogicalResult verifyPipelineAttribute(Operation *op,
                                             NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  auto pipeline = dyn_cast<PipelineAttr>(attr.getValue());
  if (!pipeline || !isa<ModuleOp>(op))
    return op->emitOpError()
           << "'" << name << "' must be a #dist.pipeline on a module";
  auto fail = [&](const Twine &message) {
    return op->emitOpError() << "'" << name << "' " << message;
  };
  int64_t stages = pipeline.getNumVirtualStages();
  // Before the plan phase creates the mesh, the axis is not checked.
  auto module = cast<ModuleOp>(op);
  if (StringAttr axis = pipeline.getAxis();
      axis && !module.getOps<MeshOp>().empty()) {
    bool found = false;
    for (auto mesh : module.getOps<MeshOp>())
      for (unsigned i = 0, e = mesh.getNumAxes(); i < e; ++i)
        if (mesh.getAxis(i).getName() == axis) {
          found = true;
          if (mesh.getAxis(i).getSize() != pipeline.getStages())
            return fail("has " + Twine(pipeline.getStages()) +
                        " stages but mesh axis '" + axis.getValue() +
                        "' has size " + Twine(mesh.getAxis(i).getSize()));
        }
    if (!found)
      return fail("names mesh axis '" + axis.getValue() +
                  "' that no dist.mesh has");
  }
  // Stages in range; a value is never used before the stage making it. A
  // backward op of stage k runs after every forward stage, backwards in
  // reverse: it is ordered as stage 2 * stages - 1 - k.
  auto orderOf = [&](Operation *inner) -> std::optional<int64_t> {
    auto stage =
        inner->getAttrOfType<IntegerAttr>(DistDialect::getStageAttrName());
    if (!stage)
      return std::nullopt;
    if (inner->hasAttr(DistDialect::getBackwardAttrName()))
      return pipeline.getBackwardStage(stage.getInt());
    return stage.getInt();
  };
  WalkResult walk = op->walk([&](Operation *inner) {
    auto stage =
        inner->getAttrOfType<IntegerAttr>(DistDialect::getStageAttrName());
    if (!stage)
      return WalkResult::advance();
    if (stage.getInt() >= stages) {
      inner->emitOpError() << "is in stage " << stage.getInt()
                           << " but the pipeline has " << stages;
      return WalkResult::interrupt();
    }
    for (Value operand : inner->getOperands()) {
      Operation *def = operand.getDefiningOp();
      std::optional<int64_t> defOrder = def ? orderOf(def) : std::nullopt;
      if (defOrder && *defOrder > *orderOf(inner)) {
        inner->emitOpError()
            << "in stage " << stage.getInt()
            << (inner->hasAttr(DistDialect::getBackwardAttrName())
                    ? " (backward)"
                    : "")
            << " uses a value of stage "
            << def->getAttrOfType<IntegerAttr>(
                      DistDialect::getStageAttrName())
                   .getInt()
            << (def->hasAttr(DistDialect::getBackwardAttrName())
                    ? " (backward)"
                    : "");
        return WalkResult::interrupt();
      }
    }
    return WalkResult::advance();
  });
  return failure(walk.wasInterrupted());
}

LogicalResult DistDialect::verifyOperationAttribute(Operation *op,
                                                    NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  if (name == getShardingsAttrName()) {
    auto shardings = dyn_cast<ArrayAttr>(attr.getValue());
    if (!shardings || !llvm::all_of(shardings, llvm::IsaPred<ShardingAttr>))
      return op->emitOpError()
             << "'" << name << "' must be an array of #dist.sharding";
    if (shardings.size() != op->getNumResults())
      return op->emitOpError()
             << "'" << name << "' has " << shardings.size()
             << " entries but the op has " << op->getNumResults() << " results";
    return success();
  }
  if (name == getStageAttrName()) {
    auto stage = dyn_cast<IntegerAttr>(attr.getValue());
    if (!stage || !stage.getType().isInteger(64) || stage.getInt() < 0)
      return op->emitOpError()
             << "'" << name << "' must be a non-negative i64 stage index";
    return success();
  }
  if (name == getBackwardAttrName()) {
    if (!isa<UnitAttr>(attr.getValue()))
      return op->emitOpError() << "'" << name << "' must be a unit attribute";
    return success();
  }
  if (name == getPipelineAttrName())
    return verifyPipelineAttribute(op, attr);
  if (name == getPlanAttrName()) {
    if (!isa<ModuleOp>(op) || !isa<PlanAttr>(attr.getValue()))
      return op->emitOpError()
             << "'" << name << "' must be a #dist.plan on a module";
    return success();
  }
  if (name == getShardingAttrName())
    return op->emitOpError()
           << "'" << name
           << "' belongs on function arguments and results; use '"
           << getShardingsAttrName() << "' on ops";
  return op->emitOpError() << "unknown dist attribute '" << name << "'";
}
