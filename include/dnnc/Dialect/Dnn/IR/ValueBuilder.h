//===- ValueBuilder.h - dnn ops from C++ expressions ----------*- C++ -*-===//
//
// Part of the dnnc project.
//
//===----------------------------------------------------------------------===//
//
// A thin helper over OpBuilder that creates dnn ops from values: splats,
// elementwise arithmetic, reductions, broadcasts, reshapes. The gradient
// rules and the training passes build their math with it.
//
//===----------------------------------------------------------------------===//

#ifndef DNNC_DIALECT_DNN_IR_VALUEBUILDER_H
#define DNNC_DIALECT_DNN_IR_VALUEBUILDER_H

#include "dnnc/Dialect/Dnn/IR/Dnn.h"

#include "mlir/IR/Builders.h"

#include <numeric>

namespace dnnc::dnn {

/// Builds dnn ops computing tensor values at a builder's insertion point,
/// all at one location: the small vocabulary the gradient rules and the
/// training passes (loss, optimizer) write their math in.
class ValueBuilder {
public:
  /// Builds with `b` at `loc`.
  ValueBuilder(mlir::OpBuilder &b, mlir::Location loc) : b(b), loc(loc) {}
  /// Builds with `b` at the location of `op`.
  ValueBuilder(mlir::OpBuilder &b, mlir::Operation *op)
      : ValueBuilder(b, op->getLoc()) {}

  /// `OpT` with result type `type` from `args`.
  template <typename OpT, typename... Args>
  mlir::Value make(mlir::Type type, Args &&...args) {
    return OpT::create(b, loc, type, std::forward<Args>(args)...)
        ->getResult(0);
  }
  /// A splat of `value` of type `type`.
  mlir::Value splat(mlir::Type type, double value) {
    auto tensor = mlir::cast<mlir::RankedTensorType>(type);
    auto attr = mlir::DenseElementsAttr::get(
        tensor, b.getFloatAttr(tensor.getElementType(), value));
    return ConstantOp::create(b, loc, attr);
  }
  /// A splat of `value` with the type of `like`.
  mlir::Value splat(mlir::Value like, double value) {
    return splat(like.getType(), value);
  }
  /// Elementwise arithmetic on values of one type: `x + y`.
  mlir::Value add(mlir::Value x, mlir::Value y) {
    return make<AddOp>(x.getType(), x, y);
  }
  /// `x - y`.
  mlir::Value sub(mlir::Value x, mlir::Value y) {
    return make<SubOp>(x.getType(), x, y);
  }
  /// `x * y`.
  mlir::Value mul(mlir::Value x, mlir::Value y) {
    return make<MulOp>(x.getType(), x, y);
  }
  /// `x / y`.
  mlir::Value div(mlir::Value x, mlir::Value y) {
    return make<DivOp>(x.getType(), x, y);
  }
  /// `-x`.
  mlir::Value neg(mlir::Value x) { return make<NegOp>(x.getType(), x); }
  /// `x * factor`.
  mlir::Value scale(mlir::Value x, double factor) {
    return mul(x, splat(x, factor));
  }
  /// `x` where `condition`, else zero.
  mlir::Value where(mlir::Value condition, mlir::Value x) {
    return make<SelectOp>(x.getType(), condition, x, splat(x, 0.0));
  }
  /// An elementwise comparison.
  template <typename OpT> mlir::Value compare(mlir::Value x, mlir::Value y) {
    auto type = mlir::cast<mlir::RankedTensorType>(x.getType());
    return make<OpT>(type.clone(b.getI1Type()), x, y);
  }
  /// The sum of `x` over `axes`, keeping them as extents of 1.
  mlir::Value sumKeep(mlir::Value x, mlir::ArrayRef<int64_t> axes) {
    auto type = mlir::cast<mlir::RankedTensorType>(x.getType());
    mlir::SmallVector<int64_t> shape(type.getShape());
    for (int64_t a : axes)
      shape[a] = 1;
    return make<ReduceSumOp>(type.clone(shape), x,
                             b.getDenseI64ArrayAttr(axes), b.getBoolAttr(true));
  }
  /// `x` (extents of 1 where `type` may be larger) broadcast to `type`.
  mlir::Value expand(mlir::Value x, mlir::Type type) {
    if (x.getType() == type)
      return x;
    auto rank = mlir::cast<mlir::RankedTensorType>(type).getRank();
    mlir::SmallVector<int64_t> dims(rank);
    std::iota(dims.begin(), dims.end(), 0);
    return make<BroadcastInDimOp>(type, x, b.getDenseI64ArrayAttr(dims));
  }
  /// `x` reshaped to `type`.
  mlir::Value reshape(mlir::Value x, mlir::Type type) {
    if (x.getType() == type)
      return x;
    return make<ReshapeOp>(type, x);
  }
  /// `x` with the permutation `perm`.
  mlir::Value transpose(mlir::Value x, mlir::ArrayRef<int64_t> perm) {
    auto type = mlir::cast<mlir::RankedTensorType>(x.getType());
    mlir::SmallVector<int64_t> shape;
    for (int64_t p : perm)
      shape.push_back(type.getDimSize(p));
    return make<TransposeOp>(type.clone(shape), x,
                             b.getDenseI64ArrayAttr(perm));
  }
  /// `x` with its last two dims swapped.
  mlir::Value swapLast(mlir::Value x) {
    int64_t rank = mlir::cast<mlir::RankedTensorType>(x.getType()).getRank();
    mlir::SmallVector<int64_t> perm(rank);
    std::iota(perm.begin(), perm.end(), 0);
    std::swap(perm[rank - 1], perm[rank - 2]);
    return transpose(x, perm);
  }
  /// `x` converted to `type`'s element type.
  mlir::Value convert(mlir::Value x, mlir::Type elementType) {
    auto type = mlir::cast<mlir::RankedTensorType>(x.getType());
    if (type.getElementType() == elementType)
      return x;
    return make<CastOp>(type.clone(elementType), x);
  }

  /// The builder the ops are created with.
  mlir::OpBuilder &b;
  /// The location of every op built.
  mlir::Location loc;
};

} // namespace dnnc::dnn

#endif // DNNC_DIALECT_DNN_IR_VALUEBUILDER_H
