//===- MemoryCheck.h - Does a rank program fit its device? ------*- C++ -*-===//
//
// Part of the dnnc project.
//
//===----------------------------------------------------------------------===//
//
// A lower bound of the memory one rank of a partitioned program needs, to
// refuse plans that cannot run on their device (the cluster's per-device
// memory, or this machine's memory for the cpu target) before code
// generation, with the ONNX node that needs most.
//
//===----------------------------------------------------------------------===//

#ifndef DNNC_PLANNER_MEMORYCHECK_H
#define DNNC_PLANNER_MEMORYCHECK_H

#include "mlir/IR/BuiltinOps.h"

#include <cstdint>
#include <optional>
#include <string>

namespace dnnc::planner {

/// The least memory one rank of a partitioned module needs.
struct RankMemoryBound {
  /// Bytes of the rank program's arguments (graph inputs and weights), live
  /// for the whole program.
  uint64_t argumentBytes = 0;
  /// Bytes of the results and the non-argument operands of the op that
  /// needs most, and that op (null when the program has no op).
  uint64_t largestOpBytes = 0;
  mlir::Operation *largestOp = nullptr;
  /// The bound: the arguments plus the largest op's need.
  uint64_t total() const { return argumentBytes + largestOpBytes; }
};

/// Returns the memory bound of the rank program `@main` of the partitioned
/// `module` (every tensor type static and local).
RankMemoryBound boundRankMemory(mlir::ModuleOp module);

/// Returns the physical memory of this machine in bytes, or nothing when it
/// cannot be read.
std::optional<uint64_t> getHostMemoryBytes();

/// Returns "12.3 GiB"-style text for `bytes`.
std::string formatBytes(uint64_t bytes);

} // namespace dnnc::planner

#endif // DNNC_PLANNER_MEMORYCHECK_H
