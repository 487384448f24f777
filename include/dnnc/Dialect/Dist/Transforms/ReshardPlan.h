//===- ReshardPlan.h - The collectives of a reshard -------------*- C++ -*-===//
//
// Part of the dnnc project.
//
//===----------------------------------------------------------------------===//
//
// The one place that decides how a value moves from one sharding to
// another: the sequence of per-rank steps (all-reduce or reduce-scatter of
// partial sums, all-to-all or all-gather of one axis at a time, a final
// local slice). `dist-partition` emits these steps as ops; the planner's
// cost model prices the same steps.
//
//===----------------------------------------------------------------------===//

#ifndef DNNC_DIALECT_DIST_TRANSFORMS_RESHARDPLAN_H
#define DNNC_DIALECT_DIST_TRANSFORMS_RESHARDPLAN_H

#include "dnnc/Dialect/Dist/IR/DistOps.h"

#include "llvm/ADT/SmallVector.h"

#include <string>

namespace dnnc::dist {

/// One per-rank step of a reshard.
struct ReshardStep {
  /// What the step does.
  enum class Kind {
    /// Sum partial values over `axes` (a `dist.all_reduce sum`).
    AllReduce,
    /// Sum partial values over `axes` and keep this device's block of
    /// dimension `dim` (a `dist.reduce_scatter sum`).
    ReduceScatter,
    /// Move the split over the one axis in `axes` from dimension
    /// `concatDim` to dimension `dim` (a `dist.all_to_all` with split_dim
    /// `dim` and concat_dim `concatDim`).
    AllToAll,
    /// Gather dimension `dim` over the one axis in `axes` (a
    /// `dist.all_gather`).
    AllGather,
    /// Keep this device's block of every dimension split further by
    /// `slice` (a `dist.shard_slice`).
    Slice,
  };
  /// The kind.
  Kind kind;
  /// The mesh axes of the collective (in mesh order for reductions; one
  /// axis for all-to-all and all-gather); empty for a slice.
  llvm::SmallVector<mlir::StringAttr> axes;
  /// The dimension scattered, gathered, or split by an all-to-all.
  int64_t dim = -1;
  /// The dimension an all-to-all concatenates.
  int64_t concatDim = -1;
  /// The extra split of a slice (no partial axes).
  ShardingAttr slice;
  /// The local shape of the value after the step.
  llvm::SmallVector<int64_t> shape;
};

/// Returns the steps that turn a value of local shape `localShape` with
/// sharding `from` into sharding `to` on `mesh`; afterwards the local
/// shape is that of `to`. Dynamic extents stay dynamic. Fails, setting
/// `reason`, when the ranks differ or `to` has partial axes `from` lacks.
mlir::FailureOr<llvm::SmallVector<ReshardStep>>
planReshard(llvm::ArrayRef<int64_t> localShape, ShardingAttr from,
            ShardingAttr to, MeshOp mesh, std::string &reason);

} // namespace dnnc::dist

#endif // DNNC_DIALECT_DIST_TRANSFORMS_RESHARDPLAN_H
