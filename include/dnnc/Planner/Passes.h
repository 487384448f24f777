//===- Passes.h - Planner passes --------------------------------*- C++ -*-===//
//
// Part of the dnnc project.
//
//===----------------------------------------------------------------------===//
//
// Declares the passes of the planner and their registration.
//
//===----------------------------------------------------------------------===//

#ifndef DNNC_PLANNER_PASSES_H
#define DNNC_PLANNER_PASSES_H

#include "dnnc/Dialect/Dist/IR/DistAttrs.h"
#include "dnnc/Planner/Cluster.h"
#include "dnnc/Planner/CostModel.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

#include <optional>

namespace dnnc::planner {

/// What `dnnc-search-parallelism` searches, typed: what dnnc hands the pass
/// (its command line parsed once, the cluster loaded once), and what the
/// pass's textual options (dnnc-opt) are read into.
struct SearchParallelismConfig {
  /// The devices to plan for.
  int64_t devices = 1;
  /// The cluster the plans are priced on (a one-node cluster that lets
  /// ranks share devices has grown to `devices` already).
  Cluster cluster;
  /// What the plan is priced for.
  Mode mode = Mode::Infer;
  /// Forced degrees (0: searched).
  int64_t dp = 0, tp = 0, pp = 0;
  /// Forced micro-batches, or samples per micro-batch of one data-parallel
  /// replica (0: searched).
  int64_t microbatches = 0, microbatchSize = 0;
  /// The forced schedule (none: searched) and virtual stages per rank of
  /// the interleaved one (0: searched).
  std::optional<dist::Schedule> schedule;
  int64_t chunks = 0;
  /// Forced activation recomputation in training (none: each is tried).
  std::optional<dist::Recompute> recompute;
  /// Forced ZeRO-1 in training (none: on when dp > 1).
  std::optional<bool> zero;
  /// Whether pipeline degrees and micro-batch counts are searched too.
  bool pipeline = false;
  /// Whether progress shows on stderr.
  bool progress = false;
};

/// Returns `dnnc-search-parallelism` searching `config` (the pass's textual
/// options are not read).
std::unique_ptr<mlir::Pass>
createSearchParallelismPass(SearchParallelismConfig config);

#define GEN_PASS_DECL
#include "dnnc/Planner/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "dnnc/Planner/Passes.h.inc"

} // namespace dnnc::planner

#endif // DNNC_PLANNER_PASSES_H
