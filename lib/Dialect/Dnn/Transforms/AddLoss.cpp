//===- AddLoss.cpp - a loss over one of @main's outputs -------*- C++ -*-===//
//
// Part of the dnnc project.
//
//===----------------------------------------------------------------------===//
//
// Implements dnn-add-loss: @main returns a cross-entropy or mean-squared
// error loss over one of its outputs, against a new target argument.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Dialect/Dnn/IR/ValueBuilder.h"
#include "dnnc/Dialect/Dnn/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace dnnc::dnn {
#define GEN_PASS_DEF_ADDLOSSPASS
#include "dnnc/Dialect/Dnn/Transforms/Passes.h.inc"
} // namespace dnnc::dnn

using namespace mlir;
using namespace dnnc::dnn;

namespace {
/// Replaces @main's results by a loss; see the pass description.
class AddLossPass : public dnnc::dnn::impl::AddLossPassBase<AddLossPass> {
public:
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    func::FuncOp main = lookupMain(module, "dnn-add-loss");
    if (!main)
      return signalPassFailure();
    if (kind != "cross-entropy" && kind != "mse") {
      main.emitError() << "dnn-add-loss: unknown loss '" << kind
                       << "' (expected cross-entropy or mse)";
      return signalPassFailure();
    }
    // The output, by name.
    std::optional<unsigned> index;
    for (unsigned i = 0, e = main.getNumResults(); i < e; ++i)
      if (auto name = main.getResultAttrOfType<StringAttr>(i, kNameAttrName);
          name && name.getValue() == output &&
          !main.getResultAttr(i, kUpdatesAttrName))
        index = i;
    if (!index) {
      main.emitError() << "dnn-add-loss: '" << output
                       << "' is not an output of the graph";
      return signalPassFailure();
    }
    for (unsigned i = 0, e = main.getNumArguments(); i < e; ++i)
      if (auto name = main.getArgAttrOfType<StringAttr>(i, kNameAttrName);
          name && name.getValue() == target) {
        main.emitError() << "dnn-add-loss: the target '" << target
                         << "' is already a graph input or initializer";
        return signalPassFailure();
      }
    auto type = dyn_cast<RankedTensorType>(main.getResultTypes()[*index]);
    bool crossEntropy = kind == "cross-entropy";
    if (!type || !isa<FloatType>(type.getElementType()) ||
        (crossEntropy && type.getRank() < 2)) {
      std::string text;
      llvm::raw_string_ostream os(text);
      os << main.getResultTypes()[*index];
      main.emitError() << "dnn-add-loss: the " << kind << " loss needs "
                       << (crossEntropy ? "scores [..., classes] of rank 2 "
                                          "or more"
                                        : "a floating-point output")
                       << "; '" << output << "' is " << text;
      return signalPassFailure();
    }

    OpBuilder b(module.getContext());
    RankedTensorType targetType =
        crossEntropy ? RankedTensorType::get(type.getShape().drop_back(),
                                             b.getI64Type())
                     : type;
    unsigned argIndex = main.getNumArguments();
    if (failed(main.insertArgument(
            argIndex, targetType,
            b.getDictionaryAttr(
                b.getNamedAttr(kNameAttrName, b.getStringAttr(target))),
            main.getLoc())))
      return signalPassFailure();
    Value labels = main.getArgument(argIndex);

    Operation *terminator = main.getBody().front().getTerminator();
    Value scores = terminator->getOperand(*index);
    b.setInsertionPoint(terminator);
    ValueBuilder v(b, NameLoc::get(b.getStringAttr("loss"), scores.getLoc()));
    auto scalar = RankedTensorType::get({}, type.getElementType());
    Value loss;
    if (crossEntropy) {
      int64_t classes = type.getShape().back();
      int64_t rows = type.getNumElements() / classes;
      Value flat = v.reshape(scores, type.clone({rows, classes}));
      Value flatLabels = v.reshape(labels, targetType.clone({rows}));
      loss = SoftmaxCrossEntropyOp::create(
                 b, v.loc, TypeRange{scalar, flat.getType()}, flat,
                 flatLabels, Value(),
                 LossReductionAttr::get(b.getContext(), LossReduction::Mean),
                 IntegerAttr())
                 .getLoss();
    } else {
      Value diff = v.sub(scores, labels);
      SmallVector<int64_t> axes;
      for (int64_t d = 0; d < type.getRank(); ++d)
        axes.push_back(d);
      loss = v.make<ReduceMeanOp>(scalar, v.mul(diff, diff),
                                  b.getDenseI64ArrayAttr(axes),
                                  b.getBoolAttr(false));
    }
    // The loss, then the buffers' new values; the other outputs go.
    SmallVector<Value> results = {loss};
    SmallVector<DictionaryAttr> attrs = {b.getDictionaryAttr(
        b.getNamedAttr(kNameAttrName, b.getStringAttr("loss")))};
    appendUpdateResults(main, results, attrs);
    func::ReturnOp::create(b, terminator->getLoc(), results);
    terminator->erase();
    main.setFunctionType(b.getFunctionType(main.getArgumentTypes(),
                                           ValueRange(results).getTypes()));
    main.setAllResultAttrs(attrs);
  }
};
} // namespace
