//===- ApplyShardingSpec.cpp - Shardings from a spec file -------*- C++ -*-===//
//
// Part of the dnnc project.
//
//===----------------------------------------------------------------------===//
//
// Implements `dist-apply-sharding-spec`: the entries of a JSON file that
// names model tensors become `dist.sharding` attributes on @main's
// arguments and results and `dist.annotate` ops after named nodes.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Dialect/Dist/Transforms/FactorSharding.h"
#include "dnnc/Dialect/Dist/Transforms/Passes.h"
#include "dnnc/Dialect/Dnn/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

namespace dnnc::dist {
#define GEN_PASS_DEF_APPLYSHARDINGSPECPASS
#include "dnnc/Dialect/Dist/Transforms/Passes.h.inc"
} // namespace dnnc::dist

using namespace mlir;
using namespace dnnc;
using namespace dnnc::dist;

namespace {
/// Applies a sharding-spec file; see Passes.td.
struct ApplyShardingSpecPass
    : public dnnc::dist::impl::ApplyShardingSpecPassBase<
          ApplyShardingSpecPass> {
  using Base::Base;

  void runOnOperation() override;

private:
  /// Starts an error about the spec file (and `entry`, when not empty).
  InFlightDiagnostic error(StringRef entry = {}) {
    InFlightDiagnostic diag = getOperation().emitError()
                              << "sharding spec '" << spec << "'";
    if (!entry.empty())
      diag << ", entry '" << entry << "'";
    diag << ": ";
    return diag;
  }

  /// Parses the sharding of `entry` for a value of type `type`.
  FailureOr<ShardingAttr> parseSharding(StringRef entry,
                                        const llvm::json::Value &value,
                                        Type type, MeshOp mesh);
};
} // namespace

FailureOr<ShardingAttr>
ApplyShardingSpecPass::parseSharding(StringRef entry,
                                     const llvm::json::Value &value, Type type,
                                     MeshOp mesh) {
  const llvm::json::Array *dims = value.getAsArray();
  if (!dims) {
    error(entry) << "expected a list with one entry per dimension";
    return failure();
  }
  MLIRContext *context = &getContext();
  SmallVector<AxisListAttr> lists;
  llvm::StringSet<> used;
  for (auto [dim, dimValue] : llvm::enumerate(*dims)) {
    SmallVector<StringAttr> axes;
    auto addAxis = [&](const llvm::json::Value &axis) {
      std::optional<StringRef> name = axis.getAsString();
      if (!name || name->empty()) {
        error(entry) << "dimension " << dim
                     << ": expected mesh axis names (strings)";
        return false;
      }
      if (!used.insert(*name).second) {
        error(entry) << "mesh axis '" << *name << "' is used more than once";
        return false;
      }
      axes.push_back(StringAttr::get(context, *name));
      return true;
    };
    if (dimValue.getAsNull()) {
      // Whole.
    } else if (const llvm::json::Array *names = dimValue.getAsArray()) {
      for (const llvm::json::Value &axis : *names)
        if (!addAxis(axis))
          return failure();
    } else if (!addAxis(dimValue)) {
      return failure();
    }
    lists.push_back(AxisListAttr::get(context, axes));
  }
  auto sharding = ShardingAttr::get(
      context, FlatSymbolRefAttr::get(mesh.getSymNameAttr()), lists, {});
  if (failed(verifyShardingForType(sharding, mesh, type,
                                   [&] { return error(entry); })))
    return failure();
  return sharding;
}

void ApplyShardingSpecPass::runOnOperation() {
  ModuleOp module = getOperation();
  if (spec.empty())
    return;
  FailureOr<ShardingTarget> target = getShardingTarget(module);
  if (failed(target))
    return signalPassFailure();
  if (!*target) {
    error() << "needs a module with a device mesh and a function @main";
    return signalPassFailure();
  }
  MeshOp mesh = target->mesh;
  func::FuncOp func = target->func;
  auto buffer = llvm::MemoryBuffer::getFile(spec, /*IsText=*/true);
  if (!buffer) {
    error() << "cannot read it: " << buffer.getError().message();
    return signalPassFailure();
  }
  llvm::Expected<llvm::json::Value> json =
      llvm::json::parse((*buffer)->getBuffer());
  if (!json) {
    error() << "invalid JSON: " << llvm::toString(json.takeError());
    return signalPassFailure();
  }
  const llvm::json::Object *entries = json->getAsObject();
  if (!entries) {
    error() << "expected an object mapping tensor names to shardings";
    return signalPassFailure();
  }

  // What each name may refer to.
  llvm::StringMap<unsigned> argByName, resultByName;
  for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i)
    if (auto name = func.getArgAttrOfType<StringAttr>(i, dnn::kNameAttrName))
      argByName.try_emplace(name.getValue(), i);
  for (unsigned i = 0, e = func.getNumResults(); i < e; ++i)
    if (auto name =
            func.getResultAttrOfType<StringAttr>(i, dnn::kNameAttrName))
      resultByName.try_emplace(name.getValue(), i);
  llvm::StringMap<Operation *> lastOpOfNode;
  func.walk([&](Operation *op) {
    StringRef name = dnn::getNodeName(op->getLoc());
    if (!name.empty() && op->getNumResults() > 0)
      lastOpOfNode[name] = op;
  });

  // Apply in a fixed order (the file's order is not kept by the parser).
  SmallVector<StringRef> names;
  for (const auto &entry : *entries)
    names.push_back(entry.first);
  llvm::sort(names);
  for (StringRef name : names) {
    const llvm::json::Value &value = *entries->get(name);
    if (auto it = argByName.find(name); it != argByName.end()) {
      unsigned index = it->second;
      FailureOr<ShardingAttr> sharding =
          parseSharding(name, value, func.getArgument(index).getType(), mesh);
      if (failed(sharding))
        return signalPassFailure();
      func.setArgAttr(index, DistDialect::getShardingAttrName(), *sharding);
      continue;
    }
    if (auto it = resultByName.find(name); it != resultByName.end()) {
      unsigned index = it->second;
      FailureOr<ShardingAttr> sharding = parseSharding(
          name, value, func.getResultTypes()[index], mesh);
      if (failed(sharding))
        return signalPassFailure();
      func.setResultAttr(index, DistDialect::getShardingAttrName(),
                         *sharding);
      continue;
    }
    // A node, or `node:K` for its result K.
    StringRef node = name;
    unsigned resultIndex = 0;
    Operation *op = lastOpOfNode.lookup(node);
    if (!op) {
      auto [base, suffix] = name.rsplit(':');
      if (!suffix.empty() && !suffix.getAsInteger(10, resultIndex)) {
        node = base;
        op = lastOpOfNode.lookup(node);
      }
    }
    if (!op) {
      error(name) << "no graph input, weight, graph output or node has "
                     "this name";
      return signalPassFailure();
    }
    if (resultIndex >= op->getNumResults()) {
      error(name) << "node '" << node << "' has " << op->getNumResults()
                  << " result(s)";
      return signalPassFailure();
    }
    Value result = op->getResult(resultIndex);
    FailureOr<ShardingAttr> sharding =
        parseSharding(name, value, result.getType(), mesh);
    if (failed(sharding))
      return signalPassFailure();
    OpBuilder b(op);
    b.setInsertionPointAfter(op);
    auto annotate = AnnotateOp::create(b, op->getLoc(), result, *sharding);
    result.replaceAllUsesExcept(annotate.getResult(), annotate);
  }
}
