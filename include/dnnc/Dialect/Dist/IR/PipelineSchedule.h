//===- PipelineSchedule.h - The step order of a pipeline rank ---*- C++ -*-===//
//
// Part of the dnnc project.
//
//===----------------------------------------------------------------------===//
//
// The one definition of the order in which a pipeline rank runs the
// forward and backward passes of its stages' micro-batches under a
// `dist::Schedule`. The planner's simulator prices it, and the packager
// writes it into plan.bin as the runtime's per-rank schedule.
//
//===----------------------------------------------------------------------===//

#ifndef DNNC_DIALECT_DIST_IR_PIPELINESCHEDULE_H
#define DNNC_DIALECT_DIST_IR_PIPELINESCHEDULE_H

#include "dnnc/Dialect/Dist/IR/DistAttrs.h"

#include "llvm/ADT/SmallVector.h"

#include <cstdint>

namespace dnnc::dist {

/// One block of work of a pipeline rank: the forward or the backward pass
/// of one virtual stage on one micro-batch.
struct WorkBlock {
  /// The virtual stage (it runs on pipeline rank `stage % stages`).
  int64_t stage = 0;
  /// The micro-batch.
  int64_t microbatch = 0;
  /// True for the backward pass.
  bool backward = false;
};

/// Returns the order in which pipeline rank `rank` of `stages` runs its
/// blocks with `chunks` model chunks per rank and `microbatches`
/// micro-batches under `schedule`, forwards only unless `train`: GPipe all
/// forwards (chunk by chunk, micro-batches in order) then all backwards;
/// 1F1B `p - rank - 1` warm-up forwards then alternating; interleaved
/// micro-batch groups of `p` through each chunk, with Megatron-LM's warm-up
/// of `(p - rank - 1) * 2 + (v - 1) * p` forwards.
llvm::SmallVector<WorkBlock> getRankOrder(int64_t stages, int64_t chunks,
                                          int64_t microbatches,
                                          Schedule schedule, int64_t rank,
                                          bool train);

} // namespace dnnc::dist

#endif // DNNC_DIALECT_DIST_IR_PIPELINESCHEDULE_H
