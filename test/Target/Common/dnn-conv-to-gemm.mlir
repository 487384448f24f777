// RUN: dnnc-opt %s --dnn-conv-to-gemm | FileCheck %s

// CHECK-DAG: #[[IN:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d4 * 2 + d2, d3 + d5)>
// CHECK-DAG: #[[COLS:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d4, d5)>
// CHECK-DAG: #[[DIL:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d4 * 2 + d2 * 2, d5 * 2 + d3 * 2)>

// Batch 1, strides [2, 1], with a bias init: im2col, a [4, 18] x [18, 10]
// matmul into zeros, then the bias added.
// CHECK-LABEL: func.func @conv(
// CHECK-SAME: %[[X:.*]]: tensor<1x2x6x7xf32>, %[[W:.*]]: tensor<4x2x3x3xf32>, %[[B:.*]]: tensor<1x4x2x5xf32>
// CHECK: %[[C:.*]] = linalg.generic {indexing_maps = [#[[IN]], #[[COLS]]]
// CHECK-SAME: ins(%[[X]] : tensor<1x2x6x7xf32>) outs(%{{.*}} : tensor<1x2x3x3x2x5xf32>)
// CHECK: %[[W2:.*]] = tensor.collapse_shape %[[W]] {{\[}}[0], [1, 2, 3]] : tensor<4x2x3x3xf32> into tensor<4x18xf32>
// CHECK: %[[C2:.*]] = tensor.collapse_shape %[[C]] {{\[}}[0, 1, 2, 3], [4, 5]] : tensor<1x2x3x3x2x5xf32> into tensor<18x10xf32>
// CHECK: %[[Z:.*]] = linalg.fill
// CHECK: %[[P:.*]] = linalg.matmul ins(%[[W2]], %[[C2]] : tensor<4x18xf32>, tensor<18x10xf32>) outs(%[[Z]] : tensor<4x10xf32>)
// CHECK: %[[E:.*]] = tensor.expand_shape %[[P]] {{\[}}[0, 1], [2, 3]] output_shape [1, 4, 2, 5]
// CHECK: %[[Y:.*]] = linalg.generic
// CHECK-SAME: ins(%[[B]], %[[E]] : tensor<1x4x2x5xf32>, tensor<1x4x2x5xf32>)
// CHECK: arith.addf
// CHECK: return %[[Y]]
// CHECK-NOT: linalg.conv_2d_nchw_fchw
func.func @conv(%x: tensor<1x2x6x7xf32>, %w: tensor<4x2x3x3xf32>, %bias: tensor<1x4x2x5xf32>) -> tensor<1x4x2x5xf32> {
  %0 = linalg.conv_2d_nchw_fchw {dilations = dense<[1, 1]> : tensor<2xi64>, strides = dense<[2, 1]> : tensor<2xi64>}
      ins(%x, %w : tensor<1x2x6x7xf32>, tensor<4x2x3x3xf32>) outs(%bias : tensor<1x4x2x5xf32>) -> tensor<1x4x2x5xf32>
  return %0 : tensor<1x4x2x5xf32>
}

// Batch 2, dilation 2, zero init: the weight is broadcast over the batch for
// a batch_matmul, and no add follows.
// CHECK-LABEL: func.func @batch(
// CHECK: linalg.generic {indexing_maps = [#[[DIL]], #[[COLS]]]
// CHECK: %[[C3:.*]] = tensor.collapse_shape %{{.*}} {{\[}}[0], [1, 2, 3], [4, 5]] : tensor<2x2x1x1x3x3xf64> into tensor<2x2x9xf64>
// CHECK: %[[WB:.*]] = linalg.broadcast ins(%{{.*}} : tensor<4x2xf64>) outs(%{{.*}} : tensor<2x4x2xf64>) dimensions = [0]
// CHECK: %[[P:.*]] = linalg.batch_matmul ins(%[[WB]], %[[C3]] : tensor<2x4x2xf64>, tensor<2x2x9xf64>)
// CHECK: %[[E:.*]] = tensor.expand_shape %[[P]] {{\[}}[0], [1], [2, 3]]
// CHECK: return %[[E]]
func.func @batch(%x: tensor<2x2x5x5xf64>, %w: tensor<4x2x1x1xf64>) -> tensor<2x4x3x3xf64> {
  %z = arith.constant 0.0 : f64
  %e = tensor.empty() : tensor<2x4x3x3xf64>
  %f = linalg.fill ins(%z : f64) outs(%e : tensor<2x4x3x3xf64>) -> tensor<2x4x3x3xf64>
  %0 = linalg.conv_2d_nchw_fchw {dilations = dense<[2, 2]> : tensor<2xi64>, strides = dense<[2, 2]> : tensor<2xi64>}
      ins(%x, %w : tensor<2x2x5x5xf64>, tensor<4x2x1x1xf64>) outs(%f : tensor<2x4x3x3xf64>) -> tensor<2x4x3x3xf64>
  return %0 : tensor<2x4x3x3xf64>
}

// Other element types stay convolutions.
// CHECK-LABEL: func.func @f16(
// CHECK: linalg.conv_2d_nchw_fchw
func.func @f16(%x: tensor<1x1x3x3xf16>, %w: tensor<1x1x3x3xf16>, %i: tensor<1x1x1x1xf16>) -> tensor<1x1x1x1xf16> {
  %0 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<1x1x3x3xf16>, tensor<1x1x3x3xf16>) outs(%i : tensor<1x1x1x1xf16>) -> tensor<1x1x1x1xf16>
  return %0 : tensor<1x1x1x1xf16>
}
