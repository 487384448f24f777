//===- CreateMesh.cpp - Create the device mesh ------------------*- C++ -*-===//
//
// Part of the dnnc project.
//
//===----------------------------------------------------------------------===//
//
// Implements `dist-create-mesh`: parses the `axes` option
// (`NAME=SIZE[:intra|inter],...`) and inserts the `dist.mesh` it describes
// at the start of the module.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Dialect/Dist/IR/DistDialect.h"
#include "dnnc/Dialect/Dist/IR/DistOps.h"
#include "dnnc/Dialect/Dist/Transforms/Passes.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Debug.h"
#include "llvm/Support/MathExtras.h"

#define DEBUG_TYPE "dist-create-mesh"

namespace dnnc::dist {
#define GEN_PASS_DEF_CREATEMESHPASS
#include "dnnc/Dialect/Dist/Transforms/Passes.h.inc"
} // namespace dnnc::dist

using namespace mlir;
using namespace dnnc::dist;

namespace {
/// Creates the mesh of the `axes` option; see Passes.td.
struct CreateMeshPass
    : public dnnc::dist::impl::CreateMeshPassBase<CreateMeshPass> {
  using Base::Base;

  /// Creates the pass with `specs` as its axes (the `axes` option unused).
  explicit CreateMeshPass(ArrayRef<MeshAxisSpec> specs)
      : specs(specs.begin(), specs.end()), hasSpecs(true) {}

  /// The pass creates `dist` ops in modules that may have none yet.
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<DistDialect>();
  }

  void runOnOperation() override;

private:
  /// The axes given in C++ (`createCreateMeshPass(specs)`).
  SmallVector<MeshAxisSpec> specs;
  /// Whether `specs` replace the `axes` option.
  bool hasSpecs = false;
};
} // namespace

void CreateMeshPass::runOnOperation() {
  ModuleOp module = getOperation();
  if (hasSpecs ? specs.empty() : StringRef(axes).trim().empty())
    return;
  auto emitError = [&] { return module.emitError("dist-create-mesh: "); };
  if (meshName.empty()) {
    emitError() << "the mesh name (option 'name') is empty";
    return signalPassFailure();
  }
  SmallVector<MeshAxisSpec> axisSpecs = specs;
  if (!hasSpecs) {
    FailureOr<SmallVector<MeshAxisSpec>> parsed =
        parseMeshAxisSpecs(axes, emitError);
    if (failed(parsed))
      return signalPassFailure();
    axisSpecs = std::move(*parsed);
  }
  if (Operation *existing = SymbolTable::lookupSymbolIn(module, meshName)) {
    InFlightDiagnostic diag = emitError() << "a symbol named @" << meshName
                                          << " exists already";
    diag.attachNote(existing->getLoc()) << "the existing symbol";
    return signalPassFailure();
  }

  auto builder = OpBuilder::atBlockBegin(module.getBody());
  auto mesh = MeshOp::create(builder, module.getLoc(), meshName, axisSpecs);
  LLVM_DEBUG(llvm::dbgs() << "created " << mesh << "\n");
  (void)mesh;
}

std::unique_ptr<Pass>
dnnc::dist::createCreateMeshPass(ArrayRef<MeshAxisSpec> axes) {
  return std::make_unique<CreateMeshPass>(axes);
}
