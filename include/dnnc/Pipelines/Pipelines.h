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
enum class Phase { Import, Graph };

/// Parses a phase name (`import`, `graph`).
std::optional<Phase> parsePhase(llvm::StringRef name);

/// Adds the `graph` phase (canonicalize, fold constants, CSE, check
/// shardings) to `pm`.
void buildGraphPipeline(mlir::OpPassManager &pm);

/// Adds every pipeline up to and including `phase` to `pm`.
void buildPipelineUpTo(mlir::OpPassManager &pm, Phase phase);

/// Registers the pipelines with the global registry (`dnnc-graph` in
/// `dnnc-opt`).
void registerPipelines();

} // namespace dnnc

#endif // DNNC_PIPELINES_PIPELINES_H
