//===- LoweringUtils.h - shared helpers of dnn -> linalg --------*- C++ -*-===//
//
// Helpers shared by the dnn -> linalg pattern files: signless views of
// `dnn` element types (arith computes on signless integers; unsigned tensors
// keep their type and their scalars are cast inside linalg bodies), scalar
// constants and filled tensors. Private to lib/Conversion/DnnToLinalg.
//
//===----------------------------------------------------------------------===//

#ifndef DNNC_LIB_CONVERSION_DNNTOLINALG_LOWERINGUTILS_H
#define DNNC_LIB_CONVERSION_DNNTOLINALG_LOWERINGUTILS_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

namespace dnnc::linalg_lowering {

/// Returns `type` with an unsigned integer type replaced by the signless one
/// of the same width: the type `arith` computes in.
mlir::Type getSignlessType(mlir::Type type);

/// Converts a scalar `value` of any `dnn` element type to its signless type.
/// Unsigned scalars are converted with `builtin.unrealized_conversion_cast`,
/// which the LLVM type conversion makes a no-op (`reconcile-unrealized-casts`).
mlir::Value toSignless(mlir::OpBuilder &b, mlir::Location loc,
                       mlir::Value value);

/// Converts a signless scalar `value` back to the `dnn` element type `type`.
mlir::Value fromSignless(mlir::OpBuilder &b, mlir::Location loc,
                         mlir::Value value, mlir::Type type);

/// Creates a scalar float constant of `type`.
mlir::Value createFloatConstant(mlir::OpBuilder &b, mlir::Location loc,
                                mlir::Type type, double value);

/// Returns a tensor of `type` filled with the signless scalar `value`:
/// `tensor.empty` + `linalg.fill`, or, for unsigned element types (which
/// `linalg.fill` cannot cast to), an elementwise `linalg.generic`.
mlir::Value createFilledTensor(mlir::OpBuilder &b, mlir::Location loc,
                               mlir::RankedTensorType type,
                               mlir::TypedAttr value);

/// Returns a zero-filled tensor of `type`.
mlir::Value createZeroTensor(mlir::OpBuilder &b, mlir::Location loc,
                             mlir::RankedTensorType type);

} // namespace dnnc::linalg_lowering

#endif // DNNC_LIB_CONVERSION_DNNTOLINALG_LOWERINGUTILS_H
