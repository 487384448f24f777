//===- KnownValues.cpp - compile-time values of tensors ---*- C++ -*-===//

#include "KnownValues.h"

#include "dnnc/Dialect/Dnn/IR/Dnn.h"
#include "dnnc/Dialect/Dnn/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

using namespace mlir;

DenseFPElementsAttr dnnc::getKnownFloatValue(Value v, Operation **cast) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type)
    return nullptr;
  auto castOp = v.getDefiningOp<dnn::CastOp>();
  if (castOp && isa<FloatType>(getElementTypeOrSelf(castOp.getInput())))
    v = castOp.getInput();
  else
    castOp = nullptr;
  if (cast)
    *cast = castOp;
  DenseFPElementsAttr dense;
  if (auto constant = v.getDefiningOp<dnn::ConstantOp>()) {
    dense = dyn_cast<DenseFPElementsAttr>(constant.getValue());
  } else if (auto arg = dyn_cast<BlockArgument>(v)) {
    if (auto func = dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp()))
      dense = func.getArgAttrOfType<DenseFPElementsAttr>(arg.getArgNumber(),
                                                         dnn::kWeightAttrName);
  }
  if (!dense || dense.getType().getShape() != type.getShape())
    return nullptr;
  return dense;
}
