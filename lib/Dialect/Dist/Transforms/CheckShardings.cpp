//===- CheckShardings.cpp - Check shardings against meshes ------*- C++ -*-===//
//
// Part of the dnnc project.
//
//===----------------------------------------------------------------------===//
//
// Implements `dist-check-shardings`: checks every `dist.sharding` and
// `dist.shardings` attribute, and the mesh uses of every `dist` op, against
// the mesh they name and the type of the value they describe.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Dialect/Dist/IR/DistOps.h"
#include "dnnc/Dialect/Dist/Transforms/Passes.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "dist-check-shardings"

namespace dnnc::dist {
#define GEN_PASS_DEF_CHECKSHARDINGSPASS
#include "dnnc/Dialect/Dist/Transforms/Passes.h.inc"
} // namespace dnnc::dist

using namespace mlir;
using namespace dnnc::dist;

namespace {
/// Checks the shardings of a module; see Passes.td.
struct CheckShardingsPass
    : public dnnc::dist::impl::CheckShardingsPassBase<CheckShardingsPass> {
  using Base::Base;

  void runOnOperation() override;

private:
  /// Checks `sharding`, found on or in `op`, for a value of type `type`:
  /// the mesh it names exists and `verifyShardingForType` accepts it.
  /// `emitError` starts a diagnostic on `op` that says which value it is.
  LogicalResult checkSharding(Operation *op, ShardingAttr sharding, Type type,
                              SymbolTableCollection &symbolTables,
                              function_ref<InFlightDiagnostic()> emitError);

  /// Checks the argument and result shardings of `fn`.
  LogicalResult checkFunction(FunctionOpInterface fn,
                              SymbolTableCollection &symbolTables);

  /// Checks the `dist.shardings` of `op`.
  LogicalResult checkOpResults(Operation *op,
                               SymbolTableCollection &symbolTables);
};
} // namespace

LogicalResult CheckShardingsPass::checkSharding(
    Operation *op, ShardingAttr sharding, Type type,
    SymbolTableCollection &symbolTables,
    function_ref<InFlightDiagnostic()> emitError) {
  ++numShardingsChecked;
  MeshOp mesh = lookupMesh(op, sharding.getMesh(), symbolTables);
  if (!mesh)
    return emitError() << "sharding names " << sharding.getMesh()
                       << ", which is not a dist.mesh";
  return verifyShardingForType(sharding, mesh, type, emitError);
}

LogicalResult
CheckShardingsPass::checkFunction(FunctionOpInterface fn,
                                  SymbolTableCollection &symbolTables) {
  ArrayRef<Type> argTypes = fn.getArgumentTypes();
  for (unsigned index = 0, e = argTypes.size(); index < e; ++index) {
    ShardingAttr sharding = getArgSharding(fn, index);
    if (sharding &&
        failed(checkSharding(fn, sharding, argTypes[index], symbolTables, [&] {
          return fn->emitOpError() << "argument #" << index << ": ";
        })))
      return failure();
  }
  ArrayRef<Type> resultTypes = fn.getResultTypes();
  for (unsigned index = 0, e = resultTypes.size(); index < e; ++index) {
    ShardingAttr sharding = getFuncResultSharding(fn, index);
    if (sharding && failed(checkSharding(
                        fn, sharding, resultTypes[index], symbolTables, [&] {
                          return fn->emitOpError()
                                 << "result #" << index << ": ";
                        })))
      return failure();
  }
  return success();
}

LogicalResult
CheckShardingsPass::checkOpResults(Operation *op,
                                   SymbolTableCollection &symbolTables) {
  SmallVector<ShardingAttr> shardings = getOpShardings(op);
  for (auto [index, sharding] : llvm::enumerate(shardings)) {
    if (failed(checkSharding(op, sharding, op->getResult(index).getType(),
                             symbolTables, [&, index = index] {
                               return op->emitOpError()
                                      << "result #" << index << ": ";
                             })))
      return failure();
  }
  return success();
}

void CheckShardingsPass::runOnOperation() {
  SymbolTableCollection symbolTables;
  bool anyFailed = false;
  getOperation()->walk([&](Operation *op) {
    LLVM_DEBUG(llvm::dbgs() << "checking " << op->getName() << "\n");
    if (auto fn = dyn_cast<FunctionOpInterface>(op))
      anyFailed |= failed(checkFunction(fn, symbolTables));
    anyFailed |= failed(checkOpResults(op, symbolTables));
    // The mesh uses of `dist` ops are checked again: IR built in memory need
    // not have been verified since it was changed.
    if (isa_and_nonnull<DistDialect>(op->getDialect()))
      if (auto user = dyn_cast<SymbolUserOpInterface>(op))
        anyFailed |= failed(user.verifySymbolUses(symbolTables));
  });
  if (anyFailed)
    signalPassFailure();
}
