//===- NumberConstantGlobals.cpp - constant globals by use ---*- C++ -*-===//
//
// Implements dnn-number-constant-globals: the `__constant_*` memref.globals
// of one-shot bufferization named and ordered by their first use.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Target/Common/Passes.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/StringMap.h"

namespace dnnc {
#define GEN_PASS_DEF_NUMBERCONSTANTGLOBALSPASS
#include "dnnc/Target/Common/Passes.h.inc"
} // namespace dnnc

using namespace mlir;

/// The name bufferization gave `name` before uniquing it: without a
/// trailing `_N`.
static StringRef getBaseName(StringRef name) {
  size_t underscore = name.rfind('_');
  StringRef suffix = name.drop_front(underscore + 1);
  if (underscore == StringRef::npos || suffix.empty() ||
      !llvm::all_of(suffix, llvm::isDigit))
    return name;
  return name.take_front(underscore);
}

namespace {
/// Renames and reorders the constant globals; see the pass description.
class NumberConstantGlobalsPass
    : public dnnc::impl::NumberConstantGlobalsPassBase<
          NumberConstantGlobalsPass> {
public:
  void runOnOperation() override {
    ModuleOp module = getOperation();
    llvm::StringMap<memref::GlobalOp> globals;
    for (auto global : module.getOps<memref::GlobalOp>())
      if (global.getConstant() &&
          global.getSymName().starts_with("__constant_"))
        globals[global.getSymName()] = global;
    if (globals.empty())
      return;
    // The globals by first use, each with its uses.
    llvm::MapVector<Operation *, SmallVector<memref::GetGlobalOp>> uses;
    module.walk([&](memref::GetGlobalOp get) {
      if (memref::GlobalOp global = globals.lookup(get.getName()))
        uses[global].push_back(get);
    });
    for (auto &entry : globals)
      if (!uses.count(entry.second))
        entry.second.erase();
    // New names, given through temporary ones so that no two globals ever
    // share a name.
    SmallVector<std::string> bases;
    for (auto [index, entry] : llvm::enumerate(uses)) {
      auto global = cast<memref::GlobalOp>(entry.first);
      bases.push_back(getBaseName(global.getSymName()).str());
      global.setSymName(("__dnnc_renumbered_" + Twine(index)).str());
    }
    llvm::StringMap<int64_t> seen;
    Operation *previous = nullptr;
    for (auto [index, entry] : llvm::enumerate(uses)) {
      auto global = cast<memref::GlobalOp>(entry.first);
      int64_t count = seen[bases[index]]++;
      std::string name = bases[index];
      if (count > 0)
        name += "_" + std::to_string(count - 1);
      global.setSymName(name);
      FlatSymbolRefAttr ref = FlatSymbolRefAttr::get(global.getSymNameAttr());
      for (memref::GetGlobalOp get : entry.second)
        get.setNameAttr(ref);
      if (previous)
        global->moveAfter(previous);
      else
        global->moveBefore(&module.getBody()->front());
      previous = global;
    }
  }
};
} // namespace
