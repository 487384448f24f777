//===- FoldWeightTransposes.cpp - transpose weights ahead --*- C++ -*-===//
//
// Implements dnn-fold-weight-transposes: a dnn.transpose of a single-use
// dnn.constant becomes a constant with the permuted data, at any size.
//
//===----------------------------------------------------------------------===//

#include "dnnc/Dialect/Dnn/IR/Dnn.h"
#include "dnnc/Dialect/Dnn/Transforms/Passes.h"

#include <cstring>
#include <vector>

namespace dnnc::dnn {
#define GEN_PASS_DEF_FOLDWEIGHTTRANSPOSESPASS
#include "dnnc/Dialect/Dnn/Transforms/Passes.h.inc"
} // namespace dnnc::dnn

using namespace mlir;
using namespace dnnc::dnn;

/// Returns `value` transposed by `perm` (result dimension i is input
/// dimension perm[i]) as `resultType`, permuting the row-major raw data; null
/// for element types without a whole number of bytes (i1).
static DenseElementsAttr transposeElements(DenseElementsAttr value,
                                           ArrayRef<int64_t> perm,
                                           RankedTensorType resultType) {
  if (value.isSplat())
    return value.resizeSplat(resultType);
  unsigned bits = value.getElementType().getIntOrFloatBitWidth();
  if (bits % 8 != 0)
    return nullptr;
  size_t bytes = bits / 8;
  ArrayRef<int64_t> inShape = value.getType().getShape();
  int64_t rank = inShape.size();
  SmallVector<int64_t> inStrides(rank, 1);
  for (int64_t i = rank - 2; i >= 0; --i)
    inStrides[i] = inStrides[i + 1] * inShape[i + 1];
  // Walking the result in row-major order, result dimension i steps the
  // source by the stride of input dimension perm[i].
  SmallVector<int64_t> srcStrides(rank);
  for (int64_t i = 0; i < rank; ++i)
    srcStrides[i] = inStrides[perm[i]];
  ArrayRef<int64_t> outShape = resultType.getShape();
  ArrayRef<char> src = value.getRawData();
  std::vector<char> dst(src.size());
  SmallVector<int64_t> idx(rank, 0);
  int64_t offset = 0;
  for (size_t n = 0, e = resultType.getNumElements(); n < e; ++n) {
    std::memcpy(dst.data() + n * bytes, src.data() + offset * bytes, bytes);
    for (int64_t d = rank - 1; d >= 0; --d) {
      offset += srcStrides[d];
      if (++idx[d] < outShape[d])
        break;
      offset -= srcStrides[d] * outShape[d];
      idx[d] = 0;
    }
  }
  return DenseElementsAttr::getFromRawBuffer(resultType, dst);
}

namespace {
struct FoldWeightTransposesPass
    : public dnnc::dnn::impl::FoldWeightTransposesPassBase<
          FoldWeightTransposesPass> {
  void runOnOperation() override {
    SmallVector<TransposeOp> transposes;
    getOperation()->walk([&](TransposeOp op) { transposes.push_back(op); });
    for (TransposeOp op : transposes) {
      auto constant = op.getInput().getDefiningOp<ConstantOp>();
      if (!constant || !constant->hasOneUse())
        continue;
      auto value = dyn_cast<DenseElementsAttr>(constant.getValue());
      if (!value)
        continue;
      auto resultType = cast<RankedTensorType>(op.getType());
      DenseElementsAttr folded =
          transposeElements(value, op.getPermutation(), resultType);
      if (!folded)
        continue;
      OpBuilder b(op);
      auto replacement =
          ConstantOp::create(b, constant.getLoc(), resultType, folded);
      op.getResult().replaceAllUsesWith(replacement.getResult());
      op.erase();
      constant.erase();
    }
  }
};
} // namespace
