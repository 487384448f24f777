//===- DnnDialect.cpp - dnn dialect registration ----------------*- C++ -*-===//
//
// Registers the `dnn` dialect's ops and attributes and verifies its
// discardable attributes.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Dialect/Dnn/IR/Dnn.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace dnnc::dnn;

#include "dnnc/Dialect/Dnn/IR/DnnOpsDialect.cpp.inc"

#include "dnnc/Dialect/Dnn/IR/DnnEnums.cpp.inc"

#include "dnnc/Dialect/Dnn/IR/DnnInterfaces.cpp.inc"

void DnnDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dnnc/Dialect/Dnn/IR/DnnOps.cpp.inc"
      >();
  registerAttributes();
  registerGradientModels();
}

Operation *DnnDialect::materializeConstant(OpBuilder &builder, Attribute value,
                                           Type type, Location loc) {
  auto elements = dyn_cast<ElementsAttr>(value);
  if (!elements || elements.getType() != type)
    return nullptr;
  return ConstantOp::create(builder, loc, elements);
}

Precision dnnc::dnn::getModulePrecision(Operation *module) {
  auto attr =
      module->getAttrOfType<PrecisionAttr>(DnnDialect::kPrecisionAttrName);
  return attr ? attr.getValue() : Precision::FP32;
}

LogicalResult DnnDialect::verifyOperationAttribute(Operation *op,
                                                   NamedAttribute attr) {
  if (attr.getName() == kPrecisionAttrName) {
    if (!isa<PrecisionAttr>(attr.getValue()) || !isa<ModuleOp>(op))
      return op->emitError() << "'" << kPrecisionAttrName
                             << "' must be a #dnn.precision on a module";
    return success();
  }
  if (attr.getName() != kShardingRuleAttrName)
    return success();
  if (!isa<ShardingRuleAttr>(attr.getValue()))
    return op->emitError() << "'" << kShardingRuleAttrName
                           << "' must be a #dnn.sharding_rule attribute";
  // The rule itself is checked against the op by the interface's verifier,
  // once the op is known to be valid.
  if (!isa<DnnShardingRuleOpInterface>(op))
    return op->emitError() << "'" << kShardingRuleAttrName
                           << "' is only allowed on ops with a sharding rule";
  return success();
}
