//===- KnownValues.h - compile-time values of tensors -----*- C++ -*-===//
//
// Private to the cuda target's fusion passes: the values of a tensor when
// they are known at compile time (constants and outlined weights).
//
//===----------------------------------------------------------------------===//

#ifndef DNNC_LIB_TARGET_CUDA_KNOWNVALUES_H
#define DNNC_LIB_TARGET_CUDA_KNOWNVALUES_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Value.h"

namespace dnnc {

/// The float values of `v` when they are known at compile time: a
/// `dnn.constant`, or an outlined weight argument of a `func.func` whose
/// `dnn.weight` value has `v`'s shape (the value of a sharded weight is the
/// whole tensor, not this rank's block: those are not known), possibly
/// behind one float `dnn.cast` (then the values before the cast, with the
/// cast op in `cast` when given). Null otherwise.
mlir::DenseFPElementsAttr getKnownFloatValue(mlir::Value v,
                                             mlir::Operation **cast = nullptr);

} // namespace dnnc

#endif // DNNC_LIB_TARGET_CUDA_KNOWNVALUES_H
