//===- RuntimeABI.cpp - what rank code and the runtime agree on -*- C++ -*-===//
//
// The ONNX data type codes and the one way the lowering passes declare the
// runtime's C ABI kernels they call.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Target/Common/RuntimeABI.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"

using namespace mlir;

func::FuncOp dnnc::getOrDeclareRuntimeKernel(ModuleOp module, StringRef name,
                                             FunctionType type) {
  if (auto f = module.lookupSymbol<func::FuncOp>(name))
    return f;
  OpBuilder b(module.getBodyRegion());
  auto f = func::FuncOp::create(b, module.getLoc(), name, type);
  f.setPrivate();
  return f;
}

int32_t dnnc::getONNXDataType(Type type) {
  // ONNX TensorProto.DataType codes.
  if (type.isF32())
    return 1;
  if (type.isF64())
    return 11;
  if (type.isF16())
    return 10;
  if (type.isBF16())
    return 16;
  auto i = dyn_cast<IntegerType>(type);
  if (!i)
    return -1;
  bool u = i.isUnsigned();
  switch (i.getWidth()) {
  case 1:
    return 9;
  case 8:
    return u ? 2 : 3;
  case 16:
    return u ? 4 : 5;
  case 32:
    return u ? 12 : 6;
  case 64:
    return u ? 13 : 7;
  default:
    return -1;
  }
}

bool dnnc::isWorkspaceArena(mlir::Value value) {
  auto cast = value.getDefiningOp<mlir::UnrealizedConversionCastOp>();
  if (!cast || cast.getNumOperands() != 1)
    return false;
  // The descriptor's fields are inserted one by one; its pointers are the
  // call's result.
  mlir::Value desc = cast.getOperand(0);
  while (auto insert = desc.getDefiningOp<mlir::LLVM::InsertValueOp>()) {
    if (auto call = insert.getValue().getDefiningOp<mlir::LLVM::CallOp>())
      return call.getCallee() == kWorkspaceFunction;
    desc = insert.getContainer();
  }
  return false;
}
