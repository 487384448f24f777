//===- Package.h - plan.bin packaging ---------------------------*- C++ -*-===//
//
// The package phase: collects what a rank needs from the compiled module
// into the runtime's plan::Plan and writes plan.bin.
//
//===----------------------------------------------------------------------===//

#ifndef DNNC_TARGET_PACKAGE_PACKAGE_H
#define DNNC_TARGET_PACKAGE_PACKAGE_H

#include "dnnc/Runtime/Plan.h"

#include "mlir/IR/BuiltinOps.h"

#include <string>

namespace dnnc {

/// Fills `plan` with the model signature and one program per rank from
/// `@main` of a dnn module whose weights were outlined (dnn-outline-weights)
/// and, when it has a `dist.mesh`, partitioned (dist-partition). Each rank's
/// buffer list follows the calling convention of the device phase: @main's
/// arguments (inputs and weights) in order, then its results (written into
/// out-params). The code of the ranks is left empty.
///
/// Without a `dist.mesh` the plan has one rank that holds every tensor
/// whole. With one, the plan has a rank per device of the mesh (its axes
/// and device order are the plan's). @main's argument and result types are
/// then the local (per-rank) types, and a `dist.sharding` on an argument or
/// result gives its global layout: the model inputs and outputs get global
/// shapes, each rank's input/output buffer the offsets of its block
/// (`sliceOffsets`), each output buffer whether the rank writes its block
/// (`ownsOutput`: its coordinate is 0 on every mesh axis the sharding does
/// not use) and each weight buffer the rank's block of the global
/// `dnn.weight` value. A value without `dist.sharding` is whole on every
/// rank.
///
/// A pipelined plan (`@main` holds `dist.stage` ops, after
/// `dist-materialize-stages` and partitioning) gets per-rank schedules:
/// the devices of pipeline rank `p` (coordinate `p` on the `dist.pipeline`
/// axis) run the stages `k` with `k % stages == p`, each as the function
/// `getEntrySymbol(getStageFunctionName(k))` over the buffers of its
/// inputs (`getStageInputs`) and results; a rank holds only the weights
/// and inputs its stages use. Transfers become Activation buffers and
/// Send/Recv steps between the devices with the same coordinates on the
/// other axes (none when both stages run on the same device), tagged with
/// the transfer's position among @main's transfers. The steps follow
/// `dist::getRankOrder` (forwards) over the `dist.pipeline`'s
/// micro-batches: before a stage's computation its receives, after it its
/// sends. `dist.microbatch_dim` on arguments and results gives the model
/// tensors' micro-batch dims (their global extent is then `microbatches`
/// times that of @main's).
///
/// The module's `dnn.precision` (`dnnc --precision`, converted in the plan
/// phase by dnn-convert-precision): with bf16 or fp16, the f32 weights of an
/// unpipelined @main are written rounded to that type (round to nearest
/// even, overflow to infinity), matching the weight arguments the device
/// phase gives them; the model inputs and outputs keep their types.
/// Pipelined plans keep f32 weights (the stage functions have no
/// `dnn.weight` arguments and convert at their entry).
///
/// The weight buffers are plan::WeightPiece's that read the `dnn.weight`
/// attributes when the plan is written: write `plan` while `module`'s
/// context is alive.
///
/// Returns false with `error` set when a type cannot be represented in
/// plan.bin, when the module has more than one mesh, or when a sharding
/// names no mesh of the module, holds partial sums or does not fit its
/// value.
bool collectPlanSignature(mlir::ModuleOp module, llvm::StringRef target,
                          plan::Plan &plan, std::string &error);

/// Returns the exported symbol that runs the function `function` of the
/// device phase's output: `dnnc_entry` for `@main`, `dnnc_entry_<name>`
/// for the others (the stage functions of a pipelined plan).
inline std::string getEntrySymbol(llvm::StringRef function) {
  if (function == "main")
    return "dnnc_entry";
  return ("dnnc_entry_" + function).str();
}

/// Returns the ONNX TensorProto data type code of an MLIR element type, or
/// -1 if it has none.
int32_t getONNXDataType(mlir::Type type);

} // namespace dnnc

#endif // DNNC_TARGET_PACKAGE_PACKAGE_H
