//===- DistDialect.cpp - Dist dialect and attribute checks ------*- C++ -*-===//
//
// Part of the dnnc project.
//
//===----------------------------------------------------------------------===//
//
// Registers the `dist` dialect and verifies its discardable attributes:
// `dist.sharding` on function arguments and results, `dist.shardings` on ops.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Dialect/Dist/IR/DistDialect.h"
#include "dnnc/Dialect/Dist/IR/DistAttrs.h"
#include "dnnc/Dialect/Dist/IR/DistOps.h"

using namespace mlir;
using namespace dnnc::dist;

#include "dnnc/Dialect/Dist/IR/DistDialect.cpp.inc"

void DistDialect::initialize() {
  registerAttributes();
  addOperations<
#define GET_OP_LIST
#include "dnnc/Dialect/Dist/IR/DistOps.cpp.inc"
      >();
}

/// Checks a `dist` attribute on argument or result `index` of `op`; `what`
/// is "argument" or "result".
static LogicalResult verifyValueAttribute(Operation *op, StringRef what,
                                          unsigned index, NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  if (name != DistDialect::getShardingAttrName())
    return op->emitOpError()
           << "'" << name << "' is not a valid dist attribute on " << what
           << " #" << index;
  if (!isa<ShardingAttr>(attr.getValue()))
    return op->emitOpError() << "'" << name << "' on " << what << " #" << index
                             << " must be a #dist.sharding attribute";
  return success();
}

LogicalResult DistDialect::verifyRegionArgAttribute(Operation *op,
                                                    unsigned /*regionIndex*/,
                                                    unsigned argIndex,
                                                    NamedAttribute attr) {
  return verifyValueAttribute(op, "argument", argIndex, attr);
}

LogicalResult DistDialect::verifyRegionResultAttribute(Operation *op,
                                                       unsigned /*regionIndex*/,
                                                       unsigned resultIndex,
                                                       NamedAttribute attr) {
  return verifyValueAttribute(op, "result", resultIndex, attr);
}

LogicalResult DistDialect::verifyOperationAttribute(Operation *op,
                                                    NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  if (name == getShardingsAttrName()) {
    auto shardings = dyn_cast<ArrayAttr>(attr.getValue());
    if (!shardings || !llvm::all_of(shardings, llvm::IsaPred<ShardingAttr>))
      return op->emitOpError()
             << "'" << name << "' must be an array of #dist.sharding";
    if (shardings.size() != op->getNumResults())
      return op->emitOpError()
             << "'" << name << "' has " << shardings.size()
             << " entries but the op has " << op->getNumResults() << " results";
    return success();
  }
  if (name == getShardingAttrName())
    return op->emitOpError()
           << "'" << name
           << "' belongs on function arguments and results; use '"
           << getShardingsAttrName() << "' on ops";
  return op->emitOpError() << "unknown dist attribute '" << name << "'";
}
