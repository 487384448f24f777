//===- OutlineWeights.cpp - large constants to weight args --*- C++ -*-===//
//
// Implements dnn-outline-weights: large constants of @main become trailing
// arguments that carry their value, so packaging can store them as data.
// Arguments that are weights already (`dnn.weight_ref` from a plan-only
// import) are not constants and stay as they are.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Dialect/Dnn/IR/Dnn.h"
#include "dnnc/Dialect/Dnn/Transforms/Passes.h"

namespace dnnc::dnn {
#define GEN_PASS_DEF_OUTLINEWEIGHTSPASS
#include "dnnc/Dialect/Dnn/Transforms/Passes.h.inc"
} // namespace dnnc::dnn

using namespace mlir;
using namespace dnnc::dnn;

/// The name of a constant for its weight argument: its NameLoc, if any.
static StringAttr weightName(ConstantOp op, unsigned index) {
  if (auto name = dyn_cast<NameLoc>(op.getLoc()))
    return name.getName();
  return StringAttr::get(op.getContext(), "weight_" + Twine(index));
}

namespace {
struct OutlineWeightsPass
    : public dnnc::dnn::impl::OutlineWeightsPassBase<OutlineWeightsPass> {
  using OutlineWeightsPassBase::OutlineWeightsPassBase;

  void runOnOperation() override {
    auto func = getOperation().lookupSymbol<func::FuncOp>("main");
    if (!func || func.isExternal())
      return;
    SmallVector<ConstantOp> constants;
    func.walk([&](ConstantOp op) {
      // Splats stay in the code: they cost nothing there and fold into the
      // computations that use them (`x ^ 3.0` becomes `x * x * x`).
      auto dense = dyn_cast<DenseElementsAttr>(op.getValue());
      if (op.getType().getNumElements() > minElements &&
          !(dense && dense.isSplat()))
        constants.push_back(op);
    });
    Block &entry = func.getBody().front();
    for (ConstantOp op : constants) {
      unsigned index = func.getNumArguments();
      auto name = weightName(op, index);
      DictionaryAttr attrs = DictionaryAttr::get(
          &getContext(), {NamedAttribute(kNameAttrName, name),
                          NamedAttribute(kWeightAttrName, op.getValue())});
      if (failed(func.insertArgument(index, op.getType(), attrs, op.getLoc())))
        return signalPassFailure();
      op.getResult().replaceAllUsesWith(entry.getArgument(index));
      op.erase();
    }
  }
};
} // namespace
