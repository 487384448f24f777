//===- DataMovement.cpp - dnn data movement ops to linalg -------*- C++ -*-===//
//
// Lowers the `dnn` ops that move data without arithmetic:
//
// * `reshape` to `tensor.collapse_shape` / `tensor.expand_shape` (both views
//   after bufferization); a reshape that is neither is a collapse to 1-D
//   followed by an expand;
// * `broadcast_in_dim` to a `linalg.generic` whose input map sends every
//   broadcast operand dimension (extent 1) to the constant 0;
// * `transpose` to `linalg.transpose`;
// * `concat` to a chain of `tensor.insert_slice` into a `tensor.empty`;
// * `slice` to `tensor.extract_slice` of the addressed indices in increasing
//   order, then, where a step is negative, a `linalg.generic` whose input map
//   reverses those dimensions (`d -> n - 1 - d`);
// * `gather` to a `linalg.generic` over the result whose body reads the data
//   with `tensor.extract` after mapping negative indices into range.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Conversion/DnnToLinalg/DnnToLinalg.h"
#include "dnnc/Dialect/Dnn/IR/Dnn.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Transforms/DialectConversion.h"
#include "llvm/ADT/Sequence.h"

#define DEBUG_TYPE "convert-dnn-to-linalg"

using namespace mlir;
using namespace dnnc;

/// Creates a `tensor.empty` of the static tensor type `type`.
static Value createEmptyLike(OpBuilder &b, Location loc,
                             RankedTensorType type) {
  return tensor::EmptyOp::create(b, loc, type.getShape(),
                                 type.getElementType());
}

/// Creates a `linalg.generic` with parallel iterators that writes a tensor of
/// `resultType` (identity output map) by reading `input` through `inputMap`
/// and yielding the element unchanged: the form of broadcasts and strided
/// copies.
static Value createCopyGeneric(OpBuilder &b, Location loc, Value input,
                               AffineMap inputMap,
                               RankedTensorType resultType) {
  int64_t rank = resultType.getRank();
  SmallVector<AffineMap> maps = {inputMap, b.getMultiDimIdentityMap(rank)};
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, loc, resultType, input, createEmptyLike(b, loc, resultType), maps,
      iterators, [](OpBuilder &nested, Location nestedLoc, ValueRange args) {
        linalg::YieldOp::create(nested, nestedLoc, args[0]);
      });
  return generic.getResult(0);
}

/// Returns the reassociation that merges all of `rank` dimensions into one
/// (empty for rank 0, which `tensor` reshapes express with no groups).
static SmallVector<ReassociationIndices> getFullReassociation(int64_t rank) {
  if (rank == 0)
    return {};
  return {llvm::to_vector(llvm::seq<int64_t>(0, rank))};
}

namespace {
/// Lowers `dnn.reshape` to `tensor.collapse_shape` or `tensor.expand_shape`
/// when the reshape only merges or only splits adjacent dimensions, and to a
/// collapse to 1-D followed by an expand otherwise.
struct ReshapeOpLowering : public OpConversionPattern<dnn::ReshapeOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(dnn::ReshapeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = adaptor.getInput();
    auto srcType = cast<RankedTensorType>(input.getType());
    auto dstType = cast<RankedTensorType>(op.getType());
    if (srcType == dstType) {
      rewriter.replaceOp(op, input);
      return success();
    }
    if (srcType.getRank() != dstType.getRank()) {
      if (std::optional<SmallVector<ReassociationIndices>> reassociation =
              getReassociationIndicesForReshape(srcType, dstType)) {
        Value result;
        if (srcType.getRank() > dstType.getRank())
          result = tensor::CollapseShapeOp::create(rewriter, loc, dstType,
                                                   input, *reassociation);
        else
          result = tensor::ExpandShapeOp::create(rewriter, loc, dstType, input,
                                                 *reassociation);
        rewriter.replaceOp(op, result);
        return success();
      }
    }
    // General case: through the 1-D view of the row-major data.
    Value flat = input;
    if (srcType.getRank() != 1) {
      auto flatType = RankedTensorType::get({srcType.getNumElements()},
                                            srcType.getElementType());
      flat = tensor::CollapseShapeOp::create(
          rewriter, loc, flatType, input,
          getFullReassociation(srcType.getRank()));
    }
    Value result = flat;
    if (dstType.getRank() != 1)
      result = tensor::ExpandShapeOp::create(
          rewriter, loc, dstType, flat,
          getFullReassociation(dstType.getRank()));
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// Lowers `dnn.broadcast_in_dim` to a `linalg.generic` that reads operand
/// dimension `i` at result index `d[dims[i]]`, or at 0 where the operand
/// extent is 1 and the result's is not.
struct BroadcastInDimOpLowering
    : public OpConversionPattern<dnn::BroadcastInDimOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(dnn::BroadcastInDimOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Value input = adaptor.getInput();
    auto inType = cast<RankedTensorType>(input.getType());
    auto outType = cast<RankedTensorType>(op.getType());
    if (inType == outType) {
      rewriter.replaceOp(op, input);
      return success();
    }
    SmallVector<AffineExpr> exprs;
    for (auto [inDim, outDim] : llvm::enumerate(op.getDims())) {
      if (inType.getDimSize(inDim) == 1 && outType.getDimSize(outDim) != 1)
        exprs.push_back(rewriter.getAffineConstantExpr(0));
      else
        exprs.push_back(rewriter.getAffineDimExpr(outDim));
    }
    auto inputMap = AffineMap::get(outType.getRank(), /*symbolCount=*/0, exprs,
                                   rewriter.getContext());
    rewriter.replaceOp(
        op, createCopyGeneric(rewriter, op.getLoc(), input, inputMap, outType));
    return success();
  }
};

/// Lowers `dnn.transpose` to `linalg.transpose` (same permutation
/// convention: result dimension `i` is input dimension `permutation[i]`).
struct TransposeOpLowering : public OpConversionPattern<dnn::TransposeOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(dnn::TransposeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto outType = cast<RankedTensorType>(op.getType());
    auto transpose = linalg::TransposeOp::create(
        rewriter, loc, adaptor.getInput(),
        createEmptyLike(rewriter, loc, outType), op.getPermutation());
    rewriter.replaceOp(op, transpose.getResult());
    return success();
  }
};

/// Lowers `dnn.concat` to `tensor.insert_slice`s of each operand into a
/// `tensor.empty` of the result type, at increasing offsets along the axis.
struct ConcatOpLowering : public OpConversionPattern<dnn::ConcatOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(dnn::ConcatOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto outType = cast<RankedTensorType>(op.getType());
    int64_t axis = op.getAxis();
    int64_t rank = outType.getRank();
    Value result = createEmptyLike(rewriter, loc, outType);
    SmallVector<int64_t> offsets(rank, 0);
    SmallVector<int64_t> strides(rank, 1);
    for (Value input : adaptor.getInputs()) {
      auto inType = cast<RankedTensorType>(input.getType());
      if (inType.getDimSize(axis) == 0)
        continue;
      result = tensor::InsertSliceOp::create(
          rewriter, loc, input, result,
          getAsIndexOpFoldResult(rewriter.getContext(), offsets),
          getAsIndexOpFoldResult(rewriter.getContext(), inType.getShape()),
          getAsIndexOpFoldResult(rewriter.getContext(), strides));
      offsets[axis] += inType.getDimSize(axis);
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// Lowers `dnn.slice`. A `tensor.extract_slice` (a view after bufferization)
/// takes the addressed indices of every dimension in increasing order: offset
/// `min(start, start + (n - 1) * step)`, stride `|step|`, size `n`. Where some
/// step is negative, a `linalg.generic` copy then reverses those dimensions
/// (input map `d -> n - 1 - d`); the other dimensions keep the identity map,
/// whose extents equal the result's, so linalg's loop-range inference agrees
/// with the result type. An empty result is just a `tensor.empty`.
struct SliceOpLowering : public OpConversionPattern<dnn::SliceOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(dnn::SliceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = adaptor.getInput();
    auto outType = cast<RankedTensorType>(op.getType());
    ArrayRef<int64_t> starts = op.getStarts();
    ArrayRef<int64_t> steps = op.getSteps();
    MLIRContext *ctx = rewriter.getContext();
    // Nothing to read (and no valid offset to read it from).
    if (outType.getNumElements() == 0) {
      rewriter.replaceOp(op, createEmptyLike(rewriter, loc, outType));
      return success();
    }
    SmallVector<int64_t> offsets, strides;
    for (auto [start, step, size] :
         llvm::zip_equal(starts, steps, outType.getShape())) {
      offsets.push_back(step > 0 ? start : start + (size - 1) * step);
      strides.push_back(step > 0 ? step : -step);
    }
    Value slice = tensor::ExtractSliceOp::create(
        rewriter, loc, outType, input, getAsIndexOpFoldResult(ctx, offsets),
        getAsIndexOpFoldResult(ctx, outType.getShape()),
        getAsIndexOpFoldResult(ctx, strides));
    // A dimension of extent 1 reads the same element in either order.
    auto reversed = [&](int64_t dim) {
      return steps[dim] < 0 && outType.getDimSize(dim) > 1;
    };
    if (llvm::none_of(llvm::seq<int64_t>(0, outType.getRank()), reversed)) {
      rewriter.replaceOp(op, slice);
      return success();
    }
    SmallVector<AffineExpr> exprs;
    for (int64_t dim = 0, rank = outType.getRank(); dim < rank; ++dim) {
      AffineExpr d = rewriter.getAffineDimExpr(dim);
      exprs.push_back(reversed(dim) ? outType.getDimSize(dim) - 1 - d : d);
    }
    auto inputMap =
        AffineMap::get(outType.getRank(), /*symbolCount=*/0, exprs, ctx);
    rewriter.replaceOp(
        op, createCopyGeneric(rewriter, loc, slice, inputMap, outType));
    return success();
  }
};

/// Lowers `dnn.gather` to a `linalg.generic` over the result that reads the
/// index tensor with the map `d -> d[axis .. axis + q)` (q = index rank),
/// adds the axis extent to negative indices, and yields
/// `tensor.extract data[d[0 .. axis), index, d[axis + q ..)]`.
/// Out-of-range indices are undefined behaviour (ONNX: an error).
struct GatherOpLowering : public OpConversionPattern<dnn::GatherOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(dnn::GatherOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value data = adaptor.getData();
    Value indices = adaptor.getIndices();
    auto dataType = cast<RankedTensorType>(data.getType());
    auto indicesType = cast<RankedTensorType>(indices.getType());
    auto outType = cast<RankedTensorType>(op.getType());
    int64_t axis = op.getAxis();
    int64_t indexRank = indicesType.getRank();
    int64_t rank = outType.getRank();
    int64_t axisSize = dataType.getDimSize(axis);

    SmallVector<AffineExpr> indexExprs;
    for (int64_t dim = axis; dim < axis + indexRank; ++dim)
      indexExprs.push_back(rewriter.getAffineDimExpr(dim));
    SmallVector<AffineMap> maps = {AffineMap::get(rank, /*symbolCount=*/0,
                                                  indexExprs,
                                                  rewriter.getContext()),
                                   rewriter.getMultiDimIdentityMap(rank)};
    SmallVector<utils::IteratorType> iterators(rank,
                                               utils::IteratorType::parallel);
    auto generic = linalg::GenericOp::create(
        rewriter, loc, outType, indices,
        createEmptyLike(rewriter, loc, outType), maps, iterators,
        [&](OpBuilder &b, Location bodyLoc, ValueRange args) {
          Value index = args[0];
          Type indexType = index.getType();
          Value zero = arith::ConstantOp::create(
              b, bodyLoc, b.getIntegerAttr(indexType, 0));
          Value size = arith::ConstantOp::create(
              b, bodyLoc, b.getIntegerAttr(indexType, axisSize));
          Value isNegative = arith::CmpIOp::create(
              b, bodyLoc, arith::CmpIPredicate::slt, index, zero);
          Value wrapped = arith::AddIOp::create(b, bodyLoc, index, size);
          Value normalized =
              arith::SelectOp::create(b, bodyLoc, isNegative, wrapped, index);
          Value position = arith::IndexCastOp::create(
              b, bodyLoc, b.getIndexType(), normalized);
          SmallVector<Value> coords;
          for (int64_t dim = 0; dim < axis; ++dim)
            coords.push_back(linalg::IndexOp::create(b, bodyLoc, dim));
          coords.push_back(position);
          for (int64_t dim = axis + indexRank; dim < rank; ++dim)
            coords.push_back(linalg::IndexOp::create(b, bodyLoc, dim));
          Value element = tensor::ExtractOp::create(b, bodyLoc, data, coords);
          linalg::YieldOp::create(b, bodyLoc, element);
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};
} // namespace

void dnnc::populateDnnDataMovementToLinalgPatterns(
    RewritePatternSet &patterns) {
  patterns.add<BroadcastInDimOpLowering, ConcatOpLowering, GatherOpLowering,
               ReshapeOpLowering, SliceOpLowering, TransposeOpLowering>(
      patterns.getContext());
}
