//===- DistOps.h - Dist dialect operations ----------------------*- C++ -*-===//
//
// Part of the dnnc project.
//
//===----------------------------------------------------------------------===//
//
// Declares the ops of the `dist` dialect and the free functions that the
// verifiers, the passes and the cost model share: mesh lookup, sharding
// checks against a mesh and a type, collective shape functions and accessors
// for the `dist.sharding` / `dist.shardings` discardable attributes.
//
//===----------------------------------------------------------------------===//

#ifndef DNNC_DIALECT_DIST_IR_DISTOPS_H
#define DNNC_DIALECT_DIST_IR_DISTOPS_H

#include "dnnc/Dialect/Dist/IR/DistAttrs.h"
#include "dnnc/Dialect/Dist/IR/DistDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_OP_CLASSES
#include "dnnc/Dialect/Dist/IR/DistOps.h.inc"

namespace dnnc::dist {

//===----------------------------------------------------------------------===//
// Mesh axes
//===----------------------------------------------------------------------===//

/// Parses `text`, mesh axes in the textual form of `dist-create-mesh`
/// (`NAME=SIZE[:intra|inter],...`, outermost first; the link defaults to
/// intra). On a malformed entry, a size below 1, an unknown link class, a
/// repeated name or more devices than fit in 64 bits, reports through
/// `emitError` and fails. The one parser of that form.
mlir::FailureOr<llvm::SmallVector<MeshAxisSpec>>
parseMeshAxisSpecs(llvm::StringRef text,
                   llvm::function_ref<mlir::InFlightDiagnostic()> emitError);

//===----------------------------------------------------------------------===//
// Mesh lookup and sharding checks
//===----------------------------------------------------------------------===//

/// Returns the `dist.mesh` named `name` as seen from `from` (the nearest
/// symbol table above it), or a null op if there is none. Uses and fills the
/// `symbolTables` cache.
MeshOp lookupMesh(mlir::Operation *from, mlir::FlatSymbolRefAttr name,
                  mlir::SymbolTableCollection &symbolTables);

/// Uncached variant of `lookupMesh`.
MeshOp lookupMesh(mlir::Operation *from, mlir::FlatSymbolRefAttr name);

/// Checks `sharding` against `mesh` (the mesh it names) and a value of type
/// `type`: the type is ranked with the sharding's rank, every axis the
/// sharding uses exists in the mesh, and every statically known split dim is
/// divisible by the product of its axis sizes. Reports the first problem
/// through `emitError`.
mlir::LogicalResult
verifyShardingForType(ShardingAttr sharding, MeshOp mesh, mlir::ShapedType type,
                      llvm::function_ref<mlir::InFlightDiagnostic()> emitError);

/// Same as above for any type: shaped types are checked as above; any other
/// type is a scalar and takes a rank-0 sharding.
mlir::LogicalResult
verifyShardingForType(ShardingAttr sharding, MeshOp mesh, mlir::Type type,
                      llvm::function_ref<mlir::InFlightDiagnostic()> emitError);

//===----------------------------------------------------------------------===//
// Collective shape functions
//===----------------------------------------------------------------------===//
//
// Each computes the per-rank result shape of a collective from the operand
// shape and the group size (the product of the sizes of the group's axes).
// Dynamic dims stay dynamic. On an invalid dim or an indivisible size they
// fail, reporting through `emitError` when it is given.

/// Result shape of `dist.all_gather`: `shape[gatherDim] * groupSize`.
mlir::LogicalResult inferAllGatherShape(
    llvm::ArrayRef<int64_t> shape, int64_t gatherDim, int64_t groupSize,
    llvm::SmallVectorImpl<int64_t> &result,
    llvm::function_ref<mlir::InFlightDiagnostic()> emitError = {});

/// Result shape of `dist.reduce_scatter`: `shape[scatterDim] / groupSize`.
mlir::LogicalResult inferReduceScatterShape(
    llvm::ArrayRef<int64_t> shape, int64_t scatterDim, int64_t groupSize,
    llvm::SmallVectorImpl<int64_t> &result,
    llvm::function_ref<mlir::InFlightDiagnostic()> emitError = {});

/// Result shape of `dist.all_to_all`: `shape[splitDim] / groupSize`, then
/// `shape[concatDim] * groupSize`.
mlir::LogicalResult inferAllToAllShape(
    llvm::ArrayRef<int64_t> shape, int64_t splitDim, int64_t concatDim,
    int64_t groupSize, llvm::SmallVectorImpl<int64_t> &result,
    llvm::function_ref<mlir::InFlightDiagnostic()> emitError = {});

//===----------------------------------------------------------------------===//
// Discardable sharding attributes
//===----------------------------------------------------------------------===//

/// Returns the shardings of the results of `op` (its `dist.shardings`), or
/// an empty vector if it has none.
llvm::SmallVector<ShardingAttr> getOpShardings(mlir::Operation *op);

/// Returns the sharding of result `resultIndex` of `op`, or null if `op` has
/// no `dist.shardings`.
ShardingAttr getOpResultSharding(mlir::Operation *op, unsigned resultIndex);

/// Sets `dist.shardings` on `op`; `shardings` has one entry per result.
void setOpShardings(mlir::Operation *op,
                    llvm::ArrayRef<ShardingAttr> shardings);

/// Returns the `dist.sharding` of argument `argIndex` of `fn`, or null.
ShardingAttr getArgSharding(mlir::FunctionOpInterface fn, unsigned argIndex);

/// Sets the `dist.sharding` of argument `argIndex` of `fn`.
void setArgSharding(mlir::FunctionOpInterface fn, unsigned argIndex,
                    ShardingAttr sharding);

/// Returns the `dist.sharding` of result `resultIndex` of `fn`, or null.
ShardingAttr getFuncResultSharding(mlir::FunctionOpInterface fn,
                                   unsigned resultIndex);

/// Sets the `dist.sharding` of result `resultIndex` of `fn`.
void setFuncResultSharding(mlir::FunctionOpInterface fn, unsigned resultIndex,
                           ShardingAttr sharding);

//===----------------------------------------------------------------------===//
// Pipeline stages
//===----------------------------------------------------------------------===//

/// Returns the values the body of `stage` uses from outside it (arguments
/// of the enclosing function and results of transfers), each once, in the
/// order the body first uses them: the arguments of the stage's function
/// after `dist-outline-stages`, and the order the packager lists them in.
llvm::SmallVector<mlir::Value> getStageInputs(StageOp stage);

/// Returns the symbol of the function `dist-outline-stages` makes of the
/// stage with index `stage`: `stage_<stage>`.
std::string getStageFunctionName(int64_t stage);

/// Gives `to` the pipeline stage of `from`: its `dist.stage` and
/// `dist.backward` attributes, where `from` has them.
void copyPipelineStage(mlir::Operation *from, mlir::Operation *to);

} // namespace dnnc::dist

#endif // DNNC_DIALECT_DIST_IR_DISTOPS_H
