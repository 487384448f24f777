//===- Cluster.h - The machines a plan runs on ------------------*- C++ -*-===//
//
// Part of the dnnc project.
//
//===----------------------------------------------------------------------===//
//
// The cluster model of the planner: devices (peak FLOP/s per data type,
// memory size and bandwidth), nodes of equal devices, and the two link
// classes (inside a node, between nodes) with their bandwidth and latency.
// Clusters come from embedded presets or JSON files (docs/cluster.md).
// Plain C++ (no MLIR) so that unit tests and tools can use it alone.
//
//===----------------------------------------------------------------------===//

#ifndef DNNC_PLANNER_CLUSTER_H
#define DNNC_PLANNER_CLUSTER_H

#include "dnnc/Dialect/Dist/IR/DistAttrs.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dnnc::planner {

/// The numeric formats the cost model prices compute in.
enum class DType { F64, F32, TF32, F16, BF16, F8, I8 };

/// One device (a GPU, or a CPU socket for `cpu-local`).
struct DeviceSpec {
  /// A human-readable name ("A100-SXM4-80GB").
  std::string name;
  /// Dense peak FLOP/s of the matrix units per data type (0: unsupported);
  /// indexed by DType.
  double peakFlops[7] = {};
  /// Peak FLOP/s of elementwise (non-matrix) work, in f32.
  double vectorFlops = 0;
  /// The fraction of the matrix peaks that matrix ops sustain (GEMM
  /// kernels on real shapes), in (0, 1]; the cost model prices matrix work
  /// at peak x efficiency.
  double matrixEfficiency = 1;
  /// Memory capacity usable for a plan, in bytes.
  uint64_t memoryBytes = 0;
  /// Memory bandwidth, bytes/s.
  double memoryBandwidth = 0;

  /// Returns the peak matrix FLOP/s for `type` (falls back to F32 when the
  /// type has no entry).
  double getPeakFlops(DType type) const;
};

/// A link class: how fast devices talk over it.
struct LinkSpec {
  /// A human-readable name ("NVLink4/NVSwitch", "InfiniBand NDR").
  std::string name;
  /// Bandwidth per device in one direction, bytes/s (alpha-beta's 1/beta).
  double bandwidth = 0;
  /// Latency of one message, seconds (alpha-beta's alpha).
  double latency = 0;
};

/// A cluster of `numNodes` nodes with `devicesPerNode` equal devices each.
struct Cluster {
  /// The preset name, or the `name` of the JSON file it came from (the
  /// file's path when it has none).
  std::string name;
  /// Number of nodes (at least 1).
  int64_t numNodes = 1;
  /// Devices per node (at least 1).
  int64_t devicesPerNode = 1;
  /// The device of every node.
  DeviceSpec device;
  /// Link class between devices of the same node.
  LinkSpec intraNode;
  /// Link class between devices of different nodes.
  LinkSpec interNode;

  /// Returns the number of devices.
  int64_t getNumDevices() const { return numNodes * devicesPerNode; }
};

/// The fraction of a device's memory the GPU presets, and JSON files without
/// `device.memory_reserve`, keep back from plans (CUDA context, library
/// workspaces, collective buffers, fragmentation; docs/cluster.md).
inline constexpr double kDefaultMemoryReserve = 0.05;

/// Returns the names of the embedded presets (fixed ones; the families
/// `a100-80g-x<N>nodes`, `h100-x<N>nodes` and `h200-x<N>nodes` are listed
/// with `<N>`).
std::vector<std::string> getClusterPresetNames();

/// Returns the cluster `nameOrFile` names: an embedded preset, or a JSON
/// file (docs/cluster.md). On failure returns nullopt and sets `error` to
/// one line naming the preset, the file, or the JSON member at fault.
std::optional<Cluster> loadCluster(const std::string &nameOrFile,
                                   std::string &error);

/// Returns, for each axis of a mesh of shape `meshShape` (outermost first)
/// placed on `cluster`, true if the axis stays inside a node (`intra`) and
/// false if some group along it spans nodes (`inter`). Mesh devices are
/// numbered row-major, the last axis fastest, and device `d` lives on node
/// `d / devicesPerNode`; a group along an axis is the devices that differ
/// only in their coordinate on it. So an axis is intra when the product of
/// its size and the sizes of every axis inside it divides `devicesPerNode`,
/// or when the whole mesh fits in one node; otherwise the groups are
/// checked one by one. Sizes below 1 make every axis inter.
std::vector<bool> getIntraNodeAxes(const Cluster &cluster,
                                   const std::vector<int64_t> &meshShape);

/// Returns the mesh axes `axes` (name and size, outermost first) placed on
/// `cluster`, each `intra` or `inter` as `getIntraNodeAxes` finds: the one
/// place a mesh's link classes come from.
llvm::SmallVector<dist::MeshAxisSpec>
placeMeshAxes(const Cluster &cluster,
              llvm::ArrayRef<std::pair<std::string, int64_t>> axes);

} // namespace dnnc::planner

#endif // DNNC_PLANNER_CLUSTER_H
