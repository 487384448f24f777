//===- LoweringUtils.cpp - shared helpers of dnn -> linalg --*- C++ -*-===//
//
// Implements the helpers declared in LoweringUtils.h.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AffineMap.h"

using namespace mlir;

Type dnnc::linalg_lowering::getSignlessType(Type type) {
  if (auto intType = dyn_cast<IntegerType>(type);
      intType && !intType.isSignless())
    return IntegerType::get(type.getContext(), intType.getWidth());
  return type;
}

Value dnnc::linalg_lowering::toSignless(OpBuilder &b, Location loc,
                                        Value value) {
  Type signless = getSignlessType(value.getType());
  if (signless == value.getType())
    return value;
  return UnrealizedConversionCastOp::create(b, loc, signless, value)
      .getResult(0);
}

Value dnnc::linalg_lowering::fromSignless(OpBuilder &b, Location loc,
                                          Value value, Type type) {
  if (value.getType() == type)
    return value;
  return UnrealizedConversionCastOp::create(b, loc, type, value).getResult(0);
}

Value dnnc::linalg_lowering::createFloatConstant(OpBuilder &b, Location loc,
                                                 Type type, double value) {
  return arith::ConstantOp::create(b, loc, b.getFloatAttr(type, value));
}

Value dnnc::linalg_lowering::createFilledTensor(OpBuilder &b, Location loc,
                                                RankedTensorType type,
                                                TypedAttr value) {
  Type elementType = type.getElementType();
  Value empty = tensor::EmptyOp::create(b, loc, type.getShape(), elementType);
  if (getSignlessType(elementType) == elementType) {
    Value scalar = arith::ConstantOp::create(b, loc, value);
    return linalg::FillOp::create(b, loc, ValueRange{scalar}, ValueRange{empty})
        .getResult(0);
  }
  AffineMap identity =
      AffineMap::getMultiDimIdentityMap(type.getRank(), b.getContext());
  return linalg::GenericOp::create(
             b, loc, TypeRange{type}, ValueRange{}, ValueRange{empty}, identity,
             SmallVector<utils::IteratorType>(type.getRank(),
                                              utils::IteratorType::parallel),
             [&](OpBuilder &b, Location loc, ValueRange) {
               Value scalar = arith::ConstantOp::create(b, loc, value);
               linalg::YieldOp::create(
                   b, loc, fromSignless(b, loc, scalar, elementType));
             })
      .getResult(0);
}

Value dnnc::linalg_lowering::createZeroTensor(OpBuilder &b, Location loc,
                                              RankedTensorType type) {
  return createFilledTensor(
      b, loc, type,
      cast<TypedAttr>(b.getZeroAttr(getSignlessType(type.getElementType()))));
}
