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
// Formulas (seconds; G the group size, B the bytes argument, bw and a the
// link's bandwidth and latency):
//
//   op          max(F / peak, M / memoryBandwidth) + launch overhead, F and M
//               the op's FLOPs and bytes divided by the number of shards;
//               peak the matrix peak of the op's element type for matrix
//               ops, `vectorFlops` otherwise; train: x3 for matrix ops
//               (forward, data gradient, weight gradient), x2 otherwise.
//   all-reduce  2 (G-1)/G * B / bw + 2 (G-1) a      (ring; B in = out)
//   all-gather  (G-1) * B / bw + (G-1) a            (B the local input)
//   red.-scatt. (G-1)/G * B / bw + (G-1) a          (B the local input)
//   all-to-all  (G-1)/G * B / bw + (G-1) a          (B the local input)
//   broadcast   B / bw + (G-1) a                    (pipelined ring)
//   send/recv   B / bw + a
//   plus the launch overhead once per collective (one kernel or library
//   call); G = 1 costs 0.
//
//===----------------------------------------------------------------------===//

#ifndef DNNC_PLANNER_COSTMODEL_H
#define DNNC_PLANNER_COSTMODEL_H

#include "dnnc/Dialect/Dist/IR/DistOps.h"
#include "dnnc/Dialect/Dist/Transforms/ReshardPlan.h"
#include "dnnc/Dialect/Dnn/IR/DnnCost.h"
#include "dnnc/Planner/Cluster.h"

#include "mlir/IR/Operation.h"

#include <cstdint>
#include <optional>

namespace dnnc::planner {

/// What a plan is priced for.
enum class Mode { Infer, Train };

/// The collectives the cost model prices.
enum class CollectiveKind {
  AllReduce,
  AllGather,
  ReduceScatter,
  AllToAll,
  Broadcast,
  SendRecv
};

/// Kernel-launch overhead per op on a GPU, seconds: a CUDA launch plus the
/// gaps between back-to-back kernels of an eager stream (a few us).
constexpr double kGpuLaunchOverhead = 5e-6;

/// Overhead per op on a CPU, seconds: entering and leaving the op's
/// parallel loop (a fork/join of the worker threads).
constexpr double kCpuLaunchOverhead = 1e-6;

/// Prices ops, collectives and reshards of one module on one cluster.
class CostModel {
public:
  /// A cost model for `cluster` in `mode`, with the launch overhead of the
  /// cluster's device (`getDefaultLaunchOverhead`) and f32 matrix work at
  /// the full-precision F32 peak.
  CostModel(const Cluster &cluster, Mode mode);

  /// Returns the cluster.
  const Cluster &getCluster() const { return cluster; }
  /// Returns the mode.
  Mode getMode() const { return mode; }

  /// Returns the default launch overhead of `cluster`'s device:
  /// `kCpuLaunchOverhead` when the device or the cluster is named as a CPU
  /// (a name containing "cpu", any case, as `cpu-local` and its
  /// "CPU core (...)" device), else `kGpuLaunchOverhead`.
  static double getDefaultLaunchOverhead(const Cluster &cluster);

  /// Returns the fixed seconds added to every op that does work (FLOPs or
  /// bytes; free ops such as `dnn.reshape` and `dnn.constant` add none).
  double getLaunchOverhead() const { return launchOverhead; }
  /// Sets the launch overhead per op, seconds.
  void setLaunchOverhead(double seconds) { launchOverhead = seconds; }

  /// Returns true if f32 matrix work is priced at the TF32 peak (the device
  /// lowering would have to allow TF32 tensor cores; dnnc's GEMMs compute
  /// f32 in full precision, so this is off by default).
  bool getUseTF32() const { return useTF32; }
  /// Sets whether f32 matrix work is priced at the TF32 peak.
  void setUseTF32(bool enable) { useTF32 = enable; }
  /// Prices the precision `module` was converted to (`dnn.precision`, set
  /// by dnn-convert-precision): tf32 turns `setUseTF32` on; bf16 and fp16
  /// need nothing (their tensors carry the type).
  void usePrecisionOf(mlir::Operation *module);

  /// Returns the matrix-unit format an op on elements of `elementType` runs
  /// in: f64 -> F64, f32 -> F32 (TF32 with `setUseTF32`), f16 -> F16,
  /// bf16 -> BF16, 8-bit integers -> I8; nullopt for other types (wider
  /// integers, i1), which have no matrix units.
  std::optional<DType> getMatrixType(mlir::Type elementType) const;

  /// Returns the peak FLOP/s of work on `elementType`: the device's matrix
  /// peak for that format times its `matrixEfficiency` when `isMatrix`
  /// (`DeviceSpec::getPeakFlops`),
  /// falling back to `vectorFlops` when there is none; `vectorFlops`
  /// otherwise.
  double getPeakFlops(mlir::Type elementType, bool isMatrix) const;

  /// Returns the factor train mode multiplies an op's time by: 3 for matrix
  /// ops (forward, data gradient and weight gradient, each as costly as the
  /// forward), 2 for the others (forward and one backward pass); 1 in
  /// inference.
  double getTrainMultiplier(bool isMatrix) const;

  /// Returns the element type `op` computes in: its first operand's, else
  /// its first result's (shaped values), else f32.
  static mlir::Type getComputeElementType(mlir::Operation *op);

  /// Returns the seconds a `dnn` op takes on one device when its iteration
  /// space is cut into `shards` equal blocks (1: the whole op): a roofline
  /// on its FLOPs (matrix or vector peak for its element type) and bytes,
  /// plus the launch overhead. In train mode, forward plus backward
  /// (`getTrainMultiplier`: twice the forward for matrix ops, once
  /// otherwise). Ops without `DnnCostOpInterface` take 0.
  double getOpTime(mlir::Operation *op, int64_t shards = 1) const;

  /// Returns the seconds of an op of cost `cost` (on whole tensors) whose
  /// FLOPs run on `elementType`, cut into `shards` equal blocks; as above.
  double getOpTime(const dnn::OpCost &cost, mlir::Type elementType,
                   int64_t shards = 1) const;

  /// Returns the seconds of one collective moving `bytes` per device (the
  /// local buffer: all-reduce in/out, all-gather in, reduce-scatter in,
  /// all-to-all in, broadcast buffer, send size) among `groupSize` devices
  /// over `link` (ring algorithms: alpha-beta with (G-1) or 2(G-1) steps;
  /// see the file comment). A group of one device costs 0. The link's
  /// bandwidth must be positive.
  double getCollectiveTime(CollectiveKind kind, double bytes, int64_t groupSize,
                           const LinkSpec &link) const;

  /// Returns the link class a group spanning mesh `axes` of `mesh` uses:
  /// inter-node when any of the axes is `inter`, else intra-node (also for
  /// no axes).
  const LinkSpec &getLink(dist::MeshOp mesh,
                          llvm::ArrayRef<mlir::StringAttr> axes) const;

  /// Returns the seconds `dist-partition` would spend turning a value of
  /// global type `type` from sharding `from` into `to` on `mesh` (the same
  /// sequence of all-reduce / all-gather / all-to-all / local slices).
  /// The local shape is tracked through the sequence; each collective is
  /// priced on its local input with the link of its axes, and the final
  /// local slice (`dist.shard_slice`) as a copy of the kept block (read and
  /// write at memory bandwidth, no launch: it fuses into its consumer).
  /// Returns 0 when nothing changes, and infinity for a reshard the
  /// partitioner rejects or a sharding that does not fit the type and mesh
  /// (rank, unknown axes, indivisible or dynamic dimensions, new partial
  /// axes).
  double getReshardTime(mlir::RankedTensorType type, dist::ShardingAttr from,
                        dist::ShardingAttr to, dist::MeshOp mesh) const;

  /// Returns the seconds of one step of a reshard (`dist::planReshard`)
  /// whose input has local shape `inShape` and elements of `elementType`:
  /// a collective priced on its local input with the link of its axes, or
  /// the copy of a local slice.
  double getReshardStepTime(const dist::ReshardStep &step,
                            llvm::ArrayRef<int64_t> inShape,
                            mlir::Type elementType, dist::MeshOp mesh) const;

  /// Returns the bytes one device holds for a weight of `localBytes` bytes
  /// (its local block) in the mode: in train mode with mixed-precision Adam
  /// the parameters, their gradients and the optimizer states (16 bytes per
  /// parameter of a 2-byte type; states sharded over `zeroShards` devices,
  /// ZeRO-1).
  ///
  /// With P = localBytes / elementBytes parameters of e = elementBytes:
  /// inference holds `e P`; training holds `e P` (parameters) + `e P`
  /// (gradients) + S P / zeroShards (optimizer states), where S = 12 for
  /// types narrower than 4 bytes (fp32 master copy, Adam m and v: mixed
  /// precision, 2 + 2 + 12 = 16 B per f16/bf16 parameter) and S = 2 e
  /// otherwise (m and v in the parameter's type: 4 + 4 + 8 = 16 B per f32
  /// parameter).
  double getWeightMemory(double localBytes, int64_t elementBytes,
                         int64_t zeroShards = 1) const;

private:
  Cluster cluster;
  Mode mode;
  /// Seconds added to every op that does work.
  double launchOverhead;
  /// Whether f32 matrix work uses the TF32 peak.
  bool useTF32 = false;
};

} // namespace dnnc::planner

#endif // DNNC_PLANNER_COSTMODEL_H
