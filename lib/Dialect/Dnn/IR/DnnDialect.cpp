//===- DnnDialect.cpp - dnn dialect registration ----------------*- C++ -*-===//
//
// Registers the `dnn` dialect's ops and attributes.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Dialect/Dnn/IR/Dnn.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace dnnc::dnn;

#include "dnnc/Dialect/Dnn/IR/DnnOpsDialect.cpp.inc"

#include "dnnc/Dialect/Dnn/IR/DnnEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "dnnc/Dialect/Dnn/IR/DnnAttrs.cpp.inc"

void DnnDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dnnc/Dialect/Dnn/IR/DnnOps.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dnnc/Dialect/Dnn/IR/DnnAttrs.cpp.inc"
      >();
}

Operation *DnnDialect::materializeConstant(OpBuilder &builder, Attribute value,
                                           Type type, Location loc) {
  auto elements = dyn_cast<ElementsAttr>(value);
  if (!elements || elements.getType() != type)
    return nullptr;
  return ConstantOp::create(builder, loc, elements);
}
