//===- FusionUtils.h - helpers of the cuda fusion passes ---*- C++ -*-===//
//
// Private to the cuda target's fusion passes (attention, GEMM epilogues),
// which replace dnn ops by runtime calls on tensors: the values of a tensor
// known at compile time, and the device address of a tensor's buffer.
//
//===----------------------------------------------------------------------===//

#ifndef DNNC_LIB_TARGET_CUDA_FUSIONUTILS_H
#define DNNC_LIB_TARGET_CUDA_FUSIONUTILS_H

#include "mlir/IR/Builders.h"
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

/// The address (`index`) of the buffer of the statically shaped `tensor`,
/// read through `bufferization.to_buffer` (read-only, identity layout: the
/// elements are dense and row-major), for a runtime call built at `b`.
mlir::Value getTensorAddress(mlir::OpBuilder &b, mlir::Location loc,
                             mlir::Value tensor);

} // namespace dnnc

#endif // DNNC_LIB_TARGET_CUDA_FUSIONUTILS_H
