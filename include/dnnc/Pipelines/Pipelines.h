//===- Pipelines.h - dnnc's phase pipelines ----------------------*- C++ -*-===//
//
// The pass pipelines of dnnc's phases, built in a library so that `dnnc`,
// `dnnc-opt` and tests share one definition.
//
//===----------------------------------------------------------------------===//

#ifndef DNNC_PIPELINES_PIPELINES_H
#define DNNC_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringRef.h"

#include <optional>

namespace dnnc {

/// The phases of `dnnc --compile-to`, in order. Import is a translation (no
/// pass pipeline); the others are pass pipelines on the imported module.
/// `plan` and `partition` (sharding and SPMD partitioning) are not built yet:
/// a single-rank program goes from `graph` straight to `device`.
enum class Phase { Import, Graph, Device };

/// Parses a phase name (`import`, `graph`, `device`).
std::optional<Phase> parsePhase(llvm::StringRef name);

/// Adds the first part of the `device` phase that is shared by all targets:
/// large constants become weight arguments (dnn-outline-weights). The
/// packager reads the signature and weights after it.
void buildDevicePrologue(mlir::OpPassManager &pm);

/// Adds the `graph` phase (canonicalize, fold constants, transpose constant
/// weights, CSE, check shardings) to `pm`.
void buildGraphPipeline(mlir::OpPassManager &pm);

/// Adds every pipeline up to and including `phase` to `pm`; the device
/// phase lowers for the cpu target.
void buildPipelineUpTo(mlir::OpPassManager &pm, Phase phase);

/// Registers the pipelines with the global registry (`dnnc-graph` in
/// `dnnc-opt`).
void registerPipelines();

} // namespace dnnc

#endif // DNNC_PIPELINES_PIPELINES_H
