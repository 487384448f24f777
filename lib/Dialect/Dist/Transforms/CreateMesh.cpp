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
/// One parsed entry of the `axes` option.
struct AxisSpec {
  /// The axis name.
  std::string name;
  /// The number of devices along the axis.
  int64_t size = 1;
  /// The link class the axis's collectives use.
  LinkClass link = LinkClass::Intra;
};

/// Creates the mesh of the `axes` option; see Passes.td.
struct CreateMeshPass
    : public dnnc::dist::impl::CreateMeshPassBase<CreateMeshPass> {
  using Base::Base;

  /// The pass creates `dist` ops in modules that may have none yet.
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<DistDialect>();
  }

  void runOnOperation() override;
};
} // namespace

/// Parses `text`, the value of the `axes` option, into `specs`. On a
/// malformed entry, a size below 1, an unknown link class or a repeated name,
/// reports through `emitError` and fails.
static LogicalResult parseAxes(StringRef text, SmallVectorImpl<AxisSpec> &specs,
                               function_ref<InFlightDiagnostic()> emitError) {
  llvm::StringSet<> seen;
  int64_t numDevices = 1;
  SmallVector<StringRef> entries;
  text.split(entries, ',', /*MaxSplit=*/-1, /*KeepEmpty=*/true);
  for (StringRef entry : entries) {
    auto malformed = [&]() {
      return emitError() << "axes='" << text << "': malformed entry '" << entry
                         << "' (expected NAME=SIZE or NAME=SIZE:LINK, LINK "
                            "being intra or inter)";
    };
    StringRef trimmed = entry.trim();
    if (!trimmed.contains('='))
      return malformed();
    auto [name, rest] = trimmed.split('=');
    auto [sizeText, linkText] = rest.split(':');
    name = name.trim();
    sizeText = sizeText.trim();
    linkText = linkText.trim();
    if (name.empty() || sizeText.empty() ||
        (rest.contains(':') && linkText.empty()))
      return malformed();
    AxisSpec spec;
    spec.name = name.str();
    if (sizeText.getAsInteger(10, spec.size))
      return emitError() << "axes='" << text << "': axis '" << name
                         << "' has size '" << sizeText
                         << "', which is not an integer";
    if (spec.size < 1)
      return emitError() << "axes='" << text << "': axis '" << name
                         << "' has size " << spec.size
                         << "; a mesh axis needs at least 1 device";
    if (!linkText.empty()) {
      std::optional<LinkClass> link = symbolizeLinkClass(linkText);
      if (!link)
        return emitError() << "axes='" << text << "': axis '" << name
                           << "' has link class '" << linkText
                           << "' (expected intra or inter)";
      spec.link = *link;
    }
    if (!seen.insert(spec.name).second)
      return emitError() << "axes='" << text << "': more than one axis named '"
                         << name << "'";
    if (llvm::MulOverflow(numDevices, spec.size, numDevices))
      return emitError() << "axes='" << text
                         << "': the mesh has more devices than fit in a 64-bit "
                            "integer";
    specs.push_back(std::move(spec));
  }
  return success();
}

void CreateMeshPass::runOnOperation() {
  ModuleOp module = getOperation();
  if (StringRef(axes).trim().empty())
    return;
  auto emitError = [&] { return module.emitError("dist-create-mesh: "); };
  if (meshName.empty()) {
    emitError() << "the mesh name (option 'name') is empty";
    return signalPassFailure();
  }
  SmallVector<AxisSpec> specs;
  if (failed(parseAxes(axes, specs, emitError)))
    return signalPassFailure();
  if (Operation *existing = SymbolTable::lookupSymbolIn(module, meshName)) {
    InFlightDiagnostic diag = emitError() << "a symbol named @" << meshName
                                          << " exists already";
    diag.attachNote(existing->getLoc()) << "the existing symbol";
    return signalPassFailure();
  }

  MLIRContext *context = &getContext();
  SmallVector<MeshAxisAttr> meshAxes;
  for (const AxisSpec &spec : specs)
    meshAxes.push_back(MeshAxisAttr::get(
        context, StringAttr::get(context, spec.name), spec.size, spec.link));
  auto builder = OpBuilder::atBlockBegin(module.getBody());
  auto mesh = MeshOp::create(builder, module.getLoc(), meshName, meshAxes);
  LLVM_DEBUG(llvm::dbgs() << "created " << mesh << "\n");
  (void)mesh;
}
