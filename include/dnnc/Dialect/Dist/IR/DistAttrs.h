//===- DistAttrs.h - Dist dialect attributes --------------------*- C++ -*-===//
//
// Part of the dnnc project.
//
//===----------------------------------------------------------------------===//
//
// Declares the attributes and enums of the `dist` dialect: `#dist.axis`,
// `#dist.axes`, `#dist.sharding` and `#dist.reduction`.
//
//===----------------------------------------------------------------------===//

#ifndef DNNC_DIALECT_DIST_IR_DISTATTRS_H
#define DNNC_DIALECT_DIST_IR_DISTATTRS_H

#include "dnnc/Dialect/Dist/IR/DistDialect.h"
#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpImplementation.h"

#include "dnnc/Dialect/Dist/IR/DistEnums.h.inc"

#include <string>

namespace dnnc::dist {
/// The mesh op; `ShardingAttr` helpers take one (defined in DistOps.h).
class MeshOp;

/// One axis of a mesh before it is built: what `dnnc --mesh`, the
/// `dist-create-mesh` option and the parallelism search produce, and what
/// `MeshOp::build` takes.
struct MeshAxisSpec {
  /// The axis name.
  std::string name;
  /// The number of devices along the axis.
  int64_t size = 1;
  /// The link class the axis's collectives use.
  LinkClass link = LinkClass::Intra;
};

/// Returns `axes` in the `{"a", "b"}` syntax of `#dist.sharding`, for
/// diagnostics.
std::string formatAxes(llvm::ArrayRef<mlir::StringAttr> axes);
} // namespace dnnc::dist

#define GET_ATTRDEF_CLASSES
#include "dnnc/Dialect/Dist/IR/DistAttrs.h.inc"

#endif // DNNC_DIALECT_DIST_IR_DISTATTRS_H
