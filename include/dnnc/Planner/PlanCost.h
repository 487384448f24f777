//===- PlanCost.h - The estimated cost of a sharded program -----*- C++ -*-===//
//
// Part of the dnnc project.
//
//===----------------------------------------------------------------------===//
//
// Prices a whole sharded `@main` (after propagation or any other plan-phase
// pass: every value has a sharding, reshards are explicit) with the cost
// model: the time of every op on its local blocks, of every reshard and
// pending reduction, of the gradient all-reduces of training, and the
// memory each device holds.
//
//===----------------------------------------------------------------------===//

#ifndef DNNC_PLANNER_PLANCOST_H
#define DNNC_PLANNER_PLANCOST_H

#include "dnnc/Planner/CostModel.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace dnnc::planner {

/// The estimate of one step (one inference, or one training step) of a
/// sharded program on one device; every device runs the same program.
struct PlanEstimate {
  /// Seconds of computation (ops on their local blocks).
  double computeSeconds = 0;
  /// Seconds of communication: reshards, pending reductions and, in
  /// training, the all-reduce of the gradients of replicated weights.
  double communicationSeconds = 0;
  /// Bytes of weights a device holds (with gradients and optimizer states
  /// in training).
  double weightBytes = 0;
  /// Bytes of activations a device holds at its peak: the largest set of
  /// values live at once in inference, every op result (kept for the
  /// backward pass) in training.
  double activationBytes = 0;
  /// FLOPs of the whole (unsharded) step, for the model FLOP utilisation.
  double modelFlops = 0;

  /// Returns the step time: computation and communication do not overlap.
  double getStepSeconds() const {
    return computeSeconds + communicationSeconds;
  }
  /// Returns the bytes a device needs.
  double getMemoryBytes() const { return weightBytes + activationBytes; }
};

/// Returns the number of blocks `op`'s iteration space is cut into on
/// `mesh`: the product of the shards of its factors, read off the stored
/// shardings of its operands and results (1 without a mesh or a rule).
int64_t getOpShards(mlir::Operation *op, dist::MeshOp mesh);

/// Prices `func`, whose values all carry shardings on `mesh` (null `mesh`:
/// one device, nothing sharded), with `model`, as one pipeline stage and
/// one micro-batch (`estimatePipeline` on `buildPlanProfile`): in training,
/// collectives run forward and transposed backward, gradients of weights
/// replicated along mesh axes are all-reduced over them, and the optimizer
/// step is priced.
PlanEstimate estimatePlan(mlir::func::FuncOp func, dist::MeshOp mesh,
                          const CostModel &model);

} // namespace dnnc::planner

#endif // DNNC_PLANNER_PLANCOST_H
