//===- OpHandlers.h - the per-op ONNX handlers ------------------*- C++ -*-===//
//
// One handler per ONNX op type, defined in the file of its op family and
// named by the registry (OpRegistry.cpp), which records the oldest opset each
// implements. Each maps the node onto normalised `dnn` ops (explicit
// broadcasts, non-negative sorted axes, explicit pads). A template handler is
// instantiated explicitly, at the end of its family's file, for each op the
// registry names. Private to lib/Target/ONNX.
//
//===----------------------------------------------------------------------===//

#ifndef DNNC_LIB_TARGET_ONNX_OPHANDLERS_H
#define DNNC_LIB_TARGET_ONNX_OPHANDLERS_H

#include "Importer.h"

namespace dnnc::onnx_import {

//===----------------------------------------------------------------------===//
// Elementwise (ElementwiseOps.cpp)
//===----------------------------------------------------------------------===//

/// An elementwise unary `OpT` (Relu, Exp, Not...).
template <typename OpT> mlir::LogicalResult importUnary(NodeImporter &n);
/// An elementwise binary `OpT` of broadcast operands (Add, And...).
template <typename OpT> mlir::LogicalResult importBinary(NodeImporter &n);
/// A comparison `OpT` of broadcast operands, an `i1` tensor (Equal...).
template <typename OpT> mlir::LogicalResult importCompare(NodeImporter &n);
/// IsNaN-9.
mlir::LogicalResult importIsNaN(NodeImporter &n);
/// Max, Min and Sum: the inputs broadcast and combined by `OpT`.
template <typename OpT> mlir::LogicalResult importVariadic(NodeImporter &n);
/// Pow.
mlir::LogicalResult importPow(NodeImporter &n);
/// Where-9.
mlir::LogicalResult importWhere(NodeImporter &n);
/// Cast-6.
mlir::LogicalResult importCast(NodeImporter &n);
/// CastLike-15.
mlir::LogicalResult importCastLike(NodeImporter &n);
/// Mod-10/13.
mlir::LogicalResult importMod(NodeImporter &n);
/// BitShift-11.
mlir::LogicalResult importBitShift(NodeImporter &n);
/// Gelu-20.
mlir::LogicalResult importGelu(NodeImporter &n);
/// LeakyRelu-6.
mlir::LogicalResult importLeakyRelu(NodeImporter &n);
/// Clip-6 (bounds as attributes) and Clip-11 (bounds as inputs).
mlir::LogicalResult importClip(NodeImporter &n);
/// Softplus-1 (composite).
mlir::LogicalResult importSoftplus(NodeImporter &n);
/// Softsign-1 (composite).
mlir::LogicalResult importSoftsign(NodeImporter &n);
/// Elu-6 (composite).
mlir::LogicalResult importElu(NodeImporter &n);
/// Selu-6 (composite).
mlir::LogicalResult importSelu(NodeImporter &n);
/// HardSigmoid-6 (composite).
mlir::LogicalResult importHardSigmoid(NodeImporter &n);
/// HardSwish-14 (composite).
mlir::LogicalResult importHardSwish(NodeImporter &n);
/// ThresholdedRelu-10 (composite).
mlir::LogicalResult importThresholdedRelu(NodeImporter &n);
/// Sign-9 (composite).
mlir::LogicalResult importSign(NodeImporter &n);
/// Celu-12 (composite).
mlir::LogicalResult importCelu(NodeImporter &n);
/// IsInf-10 (composite).
mlir::LogicalResult importIsInf(NodeImporter &n);
/// Shrink-9 (composite).
mlir::LogicalResult importShrink(NodeImporter &n);
/// PRelu-6/7 (composite).
mlir::LogicalResult importPRelu(NodeImporter &n);
/// Mean-6 (composite).
mlir::LogicalResult importMean(NodeImporter &n);

//===----------------------------------------------------------------------===//
// Identity-like ops and constants (ConstantOps.cpp)
//===----------------------------------------------------------------------===//

/// Identity-1.
mlir::LogicalResult importIdentity(NodeImporter &n);
/// Dropout-7/12.
mlir::LogicalResult importDropout(NodeImporter &n);
/// Constant-1.
mlir::LogicalResult importConstant(NodeImporter &n);
/// Shape-1/15.
mlir::LogicalResult importShape(NodeImporter &n);
/// Size-1.
mlir::LogicalResult importSize(NodeImporter &n);
/// ConstantOfShape-9.
mlir::LogicalResult importConstantOfShape(NodeImporter &n);
/// Range-11.
mlir::LogicalResult importRange(NodeImporter &n);
/// EyeLike-9 (composite).
mlir::LogicalResult importEyeLike(NodeImporter &n);
/// HannWindow-17, HammingWindow-17 and BlackmanWindow-17.
mlir::LogicalResult importWindow(NodeImporter &n);

//===----------------------------------------------------------------------===//
// Shapes and data movement (ShapeOps.cpp)
//===----------------------------------------------------------------------===//

/// Reshape-5/14.
mlir::LogicalResult importReshape(NodeImporter &n);
/// Flatten-1.
mlir::LogicalResult importFlatten(NodeImporter &n);
/// Squeeze-1/13.
mlir::LogicalResult importSqueeze(NodeImporter &n);
/// Unsqueeze-1/13.
mlir::LogicalResult importUnsqueeze(NodeImporter &n);
/// Transpose-1.
mlir::LogicalResult importTranspose(NodeImporter &n);
/// Concat-4.
mlir::LogicalResult importConcat(NodeImporter &n);
/// Split-2/13/18.
mlir::LogicalResult importSplit(NodeImporter &n);
/// Slice-1/10.
mlir::LogicalResult importSlice(NodeImporter &n);
/// Expand-8.
mlir::LogicalResult importExpand(NodeImporter &n);
/// Tile-6 (composite).
mlir::LogicalResult importTile(NodeImporter &n);
/// DepthToSpace-1/11 (composite).
mlir::LogicalResult importDepthToSpace(NodeImporter &n);
/// SpaceToDepth-1 (composite).
mlir::LogicalResult importSpaceToDepth(NodeImporter &n);
/// Trilu-14 (composite).
mlir::LogicalResult importTrilu(NodeImporter &n);
/// Pad-2/11/18/19 (composite).
mlir::LogicalResult importPad(NodeImporter &n);

//===----------------------------------------------------------------------===//
// Gathers and scatters (IndexingOps.cpp)
//===----------------------------------------------------------------------===//

/// Gather-1.
mlir::LogicalResult importGather(NodeImporter &n);
/// GatherElements-11/13 (composite).
mlir::LogicalResult importGatherElements(NodeImporter &n);
/// GatherND-11/12/13 (composite).
mlir::LogicalResult importGatherND(NodeImporter &n);
/// OneHot-9/11 (composite).
mlir::LogicalResult importOneHot(NodeImporter &n);
/// Compress-9/11 (composite).
mlir::LogicalResult importCompress(NodeImporter &n);
/// ReverseSequence-10 (composite).
mlir::LogicalResult importReverseSequence(NodeImporter &n);
/// ScatterElements-11/13/16/18 and Scatter-9 (composite).
mlir::LogicalResult importScatterElements(NodeImporter &n);
/// ScatterND-11/13/16/18 (composite).
mlir::LogicalResult importScatterND(NodeImporter &n);

//===----------------------------------------------------------------------===//
// Contractions, convolution and pooling (ContractionOps.cpp)
//===----------------------------------------------------------------------===//

/// MatMul-1.
mlir::LogicalResult importMatMul(NodeImporter &n);
/// Gemm-6.
mlir::LogicalResult importGemm(NodeImporter &n);
/// Einsum-12.
mlir::LogicalResult importEinsum(NodeImporter &n);
/// Conv-1.
mlir::LogicalResult importConv(NodeImporter &n);
/// MaxPool-1.
mlir::LogicalResult importMaxPool(NodeImporter &n);
/// AveragePool-1.
mlir::LogicalResult importAveragePool(NodeImporter &n);
/// GlobalAveragePool and GlobalMaxPool: the reduction `OpT` over the
/// spatial dimensions.
template <typename OpT> mlir::LogicalResult importGlobalPool(NodeImporter &n);
/// ConvTranspose-1/11 (composite).
mlir::LogicalResult importConvTranspose(NodeImporter &n);

//===----------------------------------------------------------------------===//
// Normalisation, softmax, reductions, losses (ReductionOps.cpp)
//===----------------------------------------------------------------------===//

/// Softmax and LogSoftmax (`OpT`).
template <typename OpT> mlir::LogicalResult importSoftmax(NodeImporter &n);
/// LayerNormalization-17.
mlir::LogicalResult importLayerNorm(NodeImporter &n);
/// BatchNormalization-6/7/9/14/15.
mlir::LogicalResult importBatchNorm(NodeImporter &n);
/// ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd (`OpT`);
/// `InputSince` is the opset from which axes is an input.
template <typename OpT, int64_t InputSince>
mlir::LogicalResult importReduce(NodeImporter &n);
/// SoftmaxCrossEntropyLoss-12/13.
mlir::LogicalResult importSoftmaxCrossEntropy(NodeImporter &n);
/// MeanVarianceNormalization-9/13 (composite).
mlir::LogicalResult importMeanVarianceNormalization(NodeImporter &n);
/// NegativeLogLikelihoodLoss-12/13 (composite).
mlir::LogicalResult importNegativeLogLikelihoodLoss(NodeImporter &n);
/// ArgMax (`IsMax`) and ArgMin (composite).
template <bool IsMax> mlir::LogicalResult importArgExtreme(NodeImporter &n);
/// Hardmax-1/11/13 (composite).
mlir::LogicalResult importHardmax(NodeImporter &n);
/// CumSum-11/14 (composite).
mlir::LogicalResult importCumSum(NodeImporter &n);
/// LRN-1/13 (composite).
mlir::LogicalResult importLRN(NodeImporter &n);
/// TopK-1/10/11 (composite).
mlir::LogicalResult importTopK(NodeImporter &n);
/// RMSNormalization-23 (composite).
mlir::LogicalResult importRMSNormalization(NodeImporter &n);
/// InstanceNormalization-6 (composite).
mlir::LogicalResult importInstanceNorm(NodeImporter &n);
/// The composite reductions: ReduceSumSquare, ReduceL1, ReduceL2,
/// ReduceLogSum and ReduceLogSumExp.
enum class ReduceKind { SumSquare, L1, L2, LogSum, LogSumExp };
/// The composite reduction `Kind` (axes an input from opset 18).
template <ReduceKind Kind>
mlir::LogicalResult importReduceComposite(NodeImporter &n);

//===----------------------------------------------------------------------===//
// Resize (ResizeOps.cpp)
//===----------------------------------------------------------------------===//

/// Resize-10/11/13/18/19 and Upsample-7/9 (composite).
mlir::LogicalResult importResize(NodeImporter &n);

//===----------------------------------------------------------------------===//
// Quantization (QuantizeOps.cpp)
//===----------------------------------------------------------------------===//

/// QuantizeLinear-10/13/19 (composite).
mlir::LogicalResult importQuantizeLinear(NodeImporter &n);
/// DequantizeLinear-10/13/19 (composite).
mlir::LogicalResult importDequantizeLinear(NodeImporter &n);
/// DynamicQuantizeLinear-11 (composite).
mlir::LogicalResult importDynamicQuantizeLinear(NodeImporter &n);

} // namespace dnnc::onnx_import

#endif // DNNC_LIB_TARGET_ONNX_OPHANDLERS_H
