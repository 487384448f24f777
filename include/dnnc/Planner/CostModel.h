//===- CostModel.h - Time and memory of sharded programs --------*- C++ -*-===//
//
// Part of the dnnc project.
//
//===----------------------------------------------------------------------===//
//
// The planner's cost model: the time of an op on its local blocks (a
// roofline on the op's FLOPs and bytes, `DnnCostOpInterface`), the time of
// collectives and reshards over mesh axes (alpha-beta, the link class of
// each axis priced from the cluster), and memory per device. Training
// multipliers (backward, optimizer, mixed-precision Adam states) are part
// of it so that the search can price `--mode=train` plans before autodiff
// exists.
//
//===----------------------------------------------------------------------===//

#ifndef DNNC_PLANNER_COSTMODEL_H
#define DNNC_PLANNER_COSTMODEL_H

#include "dnnc/Dialect/Dist/IR/DistOps.h"
#include "dnnc/Planner/Cluster.h"

#include "mlir/IR/Operation.h"

#include <cstdint>

namespace dnnc::planner {

/// What a plan is priced for.
enum class Mode { Infer, Train };

/// The collectives the cost model prices.
enum class CollectiveKind { AllReduce, AllGather, ReduceScatter, AllToAll,
                            Broadcast, SendRecv };

/// Prices ops, collectives and reshards of one module on one cluster.
class CostModel {
public:
  /// A cost model for `cluster` in `mode`.
  CostModel(const Cluster &cluster, Mode mode);

  /// Returns the cluster.
  const Cluster &getCluster() const { return cluster; }
  /// Returns the mode.
  Mode getMode() const { return mode; }

  /// Returns the seconds a `dnn` op takes on one device when its iteration
  /// space is cut into `shards` equal blocks (1: the whole op): a roofline
  /// on its FLOPs (matrix or vector peak for its element type) and bytes.
  /// In train mode, forward plus backward (twice the forward FLOPs for
  /// ops with weights, once otherwise).
  double getOpTime(mlir::Operation *op, int64_t shards = 1) const;

  /// Returns the seconds of one collective moving `bytes` per device (the
  /// local buffer: all-reduce in/out, all-gather in, reduce-scatter in,
  /// all-to-all in, send size) among `groupSize` devices over `link`
  /// (ring algorithms: alpha-beta with (G-1) or 2(G-1) steps).
  double getCollectiveTime(CollectiveKind kind, double bytes,
                           int64_t groupSize, const LinkSpec &link) const;

  /// Returns the link class a group spanning mesh `axes` of `mesh` uses:
  /// inter-node when any of the axes is `inter`, else intra-node.
  const LinkSpec &getLink(dist::MeshOp mesh,
                          llvm::ArrayRef<mlir::StringAttr> axes) const;

  /// Returns the seconds `dist-partition` would spend turning a value of
  /// global type `type` from sharding `from` into `to` on `mesh` (the same
  /// sequence of all-reduce / all-gather / all-to-all / local slices).
  double getReshardTime(mlir::RankedTensorType type, dist::ShardingAttr from,
                        dist::ShardingAttr to, dist::MeshOp mesh) const;

  /// Returns the bytes one device holds for a weight of `localBytes` bytes
  /// (its local block) in the mode: in train mode with mixed-precision Adam
  /// the parameters, their gradients and the optimizer states (16 bytes per
  /// parameter of a 2-byte type; states sharded over `zeroShards` devices,
  /// ZeRO-1).
  double getWeightMemory(double localBytes, int64_t elementBytes,
                         int64_t zeroShards = 1) const;

private:
  Cluster cluster;
  Mode mode;
};

} // namespace dnnc::planner

#endif // DNNC_PLANNER_COSTMODEL_H
