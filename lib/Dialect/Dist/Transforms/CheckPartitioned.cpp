//===- CheckPartitioned.cpp - Check a per-rank program ----------*- C++ -*-===//
//
// Part of the dnnc project.
//
//===----------------------------------------------------------------------===//
//
// Implements `dist-check-partitioned`: checks that `@main` is a well-formed
// per-rank program, as `dist-partition` leaves it (the partition pass runs
// this pass on its own result).
//
//===----------------------------------------------------------------------===//

#include "dnnc/Dialect/Dist/IR/DistOps.h"
#include "dnnc/Dialect/Dist/Transforms/Passes.h"
#include "dnnc/Dialect/Dnn/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "dist-check-partitioned"

namespace dnnc::dist {
#define GEN_PASS_DEF_CHECKPARTITIONEDPASS
#include "dnnc/Dialect/Dist/Transforms/Passes.h.inc"
} // namespace dnnc::dist

using namespace mlir;
using namespace dnnc;
using namespace dnnc::dist;

/// Checks the sharding of one argument or result of `@main`, of local type
/// `type`; `weight` is the global value of a weight argument, or null;
/// `accumulator` is true for an accumulator and its update (which may hold
/// each device's partial share of a sum). `emitError` starts a diagnostic
/// that names the argument or result.
static LogicalResult
checkBoundary(Operation *func, ShardingAttr sharding, Type type,
              ElementsAttr weight, bool accumulator,
              SymbolTableCollection &symbolTables,
              function_ref<InFlightDiagnostic()> emitError) {
  MeshOp mesh = lookupMesh(func, sharding.getMesh(), symbolTables);
  if (!mesh)
    return emitError() << "sharding names " << sharding.getMesh()
                       << ", which is not a dist.mesh";
  if (sharding.isPartial() && !accumulator)
    return emitError() << "sharding holds partial sums over "
                       << formatAxes(sharding.getPartial())
                       << ": a per-rank program takes and returns final "
                          "values";
  auto localType = dyn_cast<RankedTensorType>(type);
  if (!localType)
    return emitError() << "type " << type << " is not a ranked tensor";
  if (sharding.getRank() != localType.getRank())
    return emitError() << "sharding has rank " << sharding.getRank()
                       << " but the type " << localType << " has rank "
                       << localType.getRank();
  for (StringAttr axis : sharding.getUsedAxes())
    if (!mesh.hasAxis(axis.getValue()))
      return emitError() << "sharding uses axis \"" << axis.getValue()
                         << "\", which " << sharding.getMesh()
                         << " does not have";
  if (!weight)
    // The global type of an input or result is not kept: the local type is
    // one of the global types whose blocks it is.
    return success();
  auto globalType = dyn_cast<RankedTensorType>(weight.getType());
  if (!globalType ||
      failed(verifyShardingForType(sharding, mesh, globalType, [&] {
        return emitError() << "weight of type " << weight.getType() << ": ";
      })))
    return failure();
  RankedTensorType expected = sharding.getLocalType(globalType, mesh);
  if (expected != localType)
    return emitError() << "type " << localType << " is not " << expected
                       << ", the local type of its weight of type "
                       << globalType << " under " << sharding;
  return success();
}

/// Checks `main`; see Passes.td. `hasMesh` says whether the module holds a
/// `dist.mesh`, which makes shardings on arguments and results mandatory.
static LogicalResult checkMain(func::FuncOp main, bool hasMesh,
                               SymbolTableCollection &symbolTables) {
  for (unsigned index = 0, e = main.getNumArguments(); index < e; ++index) {
    auto emitError = [&] {
      return main.emitOpError() << "argument #" << index << ": ";
    };
    ShardingAttr sharding = getArgSharding(main, index);
    if (!sharding) {
      if (hasMesh)
        return emitError() << "has no 'dist.sharding'";
      continue;
    }
    auto weight =
        main.getArgAttrOfType<ElementsAttr>(index, dnn::kWeightAttrName);
    bool accumulator = bool(
        main.getArgAttr(index, DistDialect::getAccumulatorAttrName()));
    if (failed(checkBoundary(main, sharding, main.getArgumentTypes()[index],
                             weight, accumulator, symbolTables, emitError)))
      return failure();
  }
  for (unsigned index = 0, e = main.getNumResults(); index < e; ++index) {
    auto emitError = [&] {
      return main.emitOpError() << "result #" << index << ": ";
    };
    ShardingAttr sharding = getFuncResultSharding(main, index);
    if (!sharding) {
      if (hasMesh)
        return emitError() << "has no 'dist.sharding'";
      continue;
    }
    auto target =
        main.getResultAttrOfType<IntegerAttr>(index, dnn::kUpdatesAttrName);
    bool accumulator =
        target && main.getArgAttr(target.getInt(),
                                  DistDialect::getAccumulatorAttrName());
    if (failed(checkBoundary(main, sharding, main.getResultTypes()[index],
                             /*weight=*/nullptr, accumulator, symbolTables,
                             emitError)))
      return failure();
  }

  WalkResult walk = main.walk([&](Operation *op) {
    LLVM_DEBUG(llvm::dbgs() << "checking " << op->getName() << "\n");
    if (isa<AnnotateOp, ReshardOp>(op)) {
      op->emitOpError() << "is a global-IR op left in the per-rank program @"
                        << main.getSymName();
      return WalkResult::interrupt();
    }
    // The mesh uses (and result shapes) of collectives and slices.
    if (isa_and_nonnull<DistDialect>(op->getDialect()))
      if (auto user = dyn_cast<SymbolUserOpInterface>(op))
        if (failed(user.verifySymbolUses(symbolTables)))
          return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return failure(walk.wasInterrupted());
}

namespace {
/// Checks the per-rank program of a module; see Passes.td.
struct CheckPartitionedPass
    : public dnnc::dist::impl::CheckPartitionedPassBase<CheckPartitionedPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto main = module.lookupSymbol<func::FuncOp>("main");
    if (!main || main.isExternal())
      return;
    bool hasMesh = !module.getOps<MeshOp>().empty();
    SymbolTableCollection symbolTables;
    if (failed(checkMain(main, hasMesh, symbolTables)))
      signalPassFailure();
  }
};
} // namespace
