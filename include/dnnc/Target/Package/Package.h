//===- Package.h - plan.bin packaging ---------------------------*- C++ -*-===//
//
// The package phase, the last step of a compilation: serializes what a rank
// needs from the lowered module (its #dist.plan) into the runtime's
// plan::Plan, which plan::writePlan writes as plan.bin.
//
//===----------------------------------------------------------------------===//

#ifndef DNNC_TARGET_PACKAGE_PACKAGE_H
#define DNNC_TARGET_PACKAGE_PACKAGE_H

#include "dnnc/Runtime/Plan.h"

#include "mlir/IR/BuiltinOps.h"

#include <string>

namespace dnnc {

/// Fills `plan` from the `#dist.plan` of `module` (recorded by
/// dnnc-record-plan at the start of the device phase, kept by lowering):
/// the model signature, and a program per rank of the plan's mesh (one
/// rank without axes), its code left empty for the caller. `target` is the
/// backend that runs the code (`cpu` or `cuda`).
///
/// Each rank's buffers are the plan's buffers it uses, in the order of
/// their first use by its functions, each holding the rank's block: a model
/// input or output buffer the offsets of its block (`sliceOffsets`) along
/// the axes of its `sharding`, an output whether the rank writes it
/// (`ownsOutput`: its coordinate is 0 on every mesh axis the sharding does
/// not use, the pipeline axis excepted) and a weight buffer the rank's
/// block of the weight's global value.
///
/// Without a pipeline a rank runs the plan's one function once. With one,
/// the devices of pipeline rank `p` (coordinate `p` on the pipeline axis)
/// run the functions of the stages `k` with `k % stages == p`; a transfer
/// between stages of different ranks becomes an Activation buffer on both
/// sides and a Send/Recv step pair between the devices with the same
/// coordinates on the other axes, tagged with the transfer's position (none
/// between stages on the same device: the receiver reads the sender's
/// buffer). The steps follow `dist::getRankOrder` (forwards) over the
/// pipeline's micro-batches: before a stage's computation its receives,
/// after it its sends. Buffers with a `microbatch_dim` give the model
/// tensors' micro-batch dims (their global extent is then `microbatches`
/// times the buffer's); an input buffer without one, of a model input
/// that has one, holds the whole batch.
///
/// The weight buffers are plan::WeightPiece's that read the weight
/// attributes when the plan is written: write `plan` while `module`'s
/// context is alive.
///
/// Returns false with `error` set when the module has no `#dist.plan` or
/// the plan exceeds what plan.bin holds (ranks, micro-batches, transfers).
bool collectPlan(mlir::ModuleOp module, llvm::StringRef target,
                 plan::Plan &plan, std::string &error);

} // namespace dnnc

#endif // DNNC_TARGET_PACKAGE_PACKAGE_H
