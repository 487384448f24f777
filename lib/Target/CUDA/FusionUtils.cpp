//===- FusionUtils.cpp - helpers of the cuda fusion passes -*- C++ -*-===//

#include "FusionUtils.h"

#include "dnnc/Dialect/Dnn/IR/Dnn.h"
#include "dnnc/Dialect/Dnn/Transforms/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

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

Value dnnc::getTensorAddress(OpBuilder &b, Location loc, Value tensor) {
  auto type = cast<RankedTensorType>(tensor.getType());
  Value buffer = bufferization::ToBufferOp::create(
      b, loc, MemRefType::get(type.getShape(), type.getElementType()), tensor,
      /*read_only=*/true);
  return memref::ExtractAlignedPointerAsIndexOp::create(b, loc, buffer);
}
