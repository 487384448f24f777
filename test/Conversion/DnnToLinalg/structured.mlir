// RUN: dnnc-opt %s --convert-dnn-to-linalg | FileCheck %s

// Affine maps are printed at the top of the module.
// CHECK-DAG:   #[[$BMK:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
// CHECK-DAG:   #[[$KN:.*]] = affine_map<(d0, d1, d2, d3) -> (d3, d2)>
// CHECK-DAG:   #[[$BMN:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-DAG:   #[[$BKN:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>
// CHECK-DAG:   #[[$DIAG:.*]] = affine_map<(d0) -> (d0, d0)>
// CHECK-DAG:   #[[$SCALAR:.*]] = affine_map<(d0) -> ()>
// CHECK-DAG:   #[[$CONV_IN:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d4, d3 * 2 + d5)>
// CHECK-DAG:   #[[$CONV_W:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d1, d2, d4, d5)>
// CHECK-DAG:   #[[$CONV_OUT:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>
// CHECK-DAG:   #[[$POOL_IN:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d2 * 2 + d5, d3 * 2 + d6, d4 * 2 + d7)>
// CHECK-DAG:   #[[$POOL_WIN:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d5, d6, d7)>
// CHECK-DAG:   #[[$POOL_OUT:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d2, d3, d4)>

// CHECK-LABEL: func.func @matmul_2d(
// CHECK-SAME:      %[[LHS:.*]]: tensor<3x4xf32>, %[[RHS:.*]]: tensor<4x5xf32>
// CHECK:         %[[EMPTY:.*]] = tensor.empty() : tensor<3x5xf32>
// CHECK:         %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:         %[[INIT:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[EMPTY]] : tensor<3x5xf32>)
// CHECK:         %[[MM:.*]] = linalg.matmul ins(%[[LHS]], %[[RHS]] : tensor<3x4xf32>, tensor<4x5xf32>) outs(%[[INIT]] : tensor<3x5xf32>)
// CHECK:         return %[[MM]]
func.func @matmul_2d(%lhs: tensor<3x4xf32>, %rhs: tensor<4x5xf32>) -> tensor<3x5xf32> {
  %0 = dnn.matmul %lhs, %rhs : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
  return %0 : tensor<3x5xf32>
}

// The batch folds into M: one GEMM.
// CHECK-LABEL: func.func @matmul_shared_rhs(
// CHECK-SAME:      %[[LHS:.*]]: tensor<2x3x4xf32>, %[[RHS:.*]]: tensor<4x5xf32>
// CHECK:         %[[FLAT:.*]] = tensor.collapse_shape %[[LHS]] {{\[}}[0, 1], [2]] : tensor<2x3x4xf32> into tensor<6x4xf32>
// CHECK:         %[[INIT:.*]] = linalg.fill {{.*}} -> tensor<6x5xf32>
// CHECK:         %[[MM:.*]] = linalg.matmul ins(%[[FLAT]], %[[RHS]] : tensor<6x4xf32>, tensor<4x5xf32>) outs(%[[INIT]] : tensor<6x5xf32>)
// CHECK:         %[[OUT:.*]] = tensor.expand_shape %[[MM]] {{\[}}[0, 1], [2]] output_shape [2, 3, 5] : tensor<6x5xf32> into tensor<2x3x5xf32>
// CHECK:         return %[[OUT]]
func.func @matmul_shared_rhs(%lhs: tensor<2x3x4xf32>, %rhs: tensor<4x5xf32>) -> tensor<2x3x5xf32> {
  %0 = dnn.matmul %lhs, %rhs : (tensor<2x3x4xf32>, tensor<4x5xf32>) -> tensor<2x3x5xf32>
  return %0 : tensor<2x3x5xf32>
}

// f16 (and bf16) products accumulate in f32, then round once.
// CHECK-LABEL: func.func @matmul_batch(
// CHECK-SAME:      %[[LHS:.*]]: tensor<2x3x4xf16>, %[[RHS:.*]]: tensor<2x4x5xf16>
// CHECK:         %[[INIT:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<2x3x5xf32>)
// CHECK:         %[[MM:.*]] = linalg.batch_matmul ins(%[[LHS]], %[[RHS]] : tensor<2x3x4xf16>, tensor<2x4x5xf16>) outs(%[[INIT]] : tensor<2x3x5xf32>)
// CHECK:         %[[T:.*]] = linalg.generic {{.*}} ins(%[[MM]] : tensor<2x3x5xf32>) outs(%{{.*}} : tensor<2x3x5xf16>)
// CHECK:           arith.truncf %{{.*}} : f32 to f16
// CHECK:         return %[[T]]
func.func @matmul_batch(%lhs: tensor<2x3x4xf16>, %rhs: tensor<2x4x5xf16>) -> tensor<2x3x5xf16> {
  %0 = dnn.matmul %lhs, %rhs : (tensor<2x3x4xf16>, tensor<2x4x5xf16>) -> tensor<2x3x5xf16>
  return %0 : tensor<2x3x5xf16>
}

// Several batch dims collapse into one.
// CHECK-LABEL: func.func @matmul_batch_4d(
// CHECK-SAME:      %[[LHS:.*]]: tensor<2x6x3x4xf32>, %[[RHS:.*]]: tensor<2x6x4x5xf32>
// CHECK-DAG:     %[[L:.*]] = tensor.collapse_shape %[[LHS]] {{\[}}[0, 1], [2], [3]] : tensor<2x6x3x4xf32> into tensor<12x3x4xf32>
// CHECK-DAG:     %[[R:.*]] = tensor.collapse_shape %[[RHS]] {{\[}}[0, 1], [2], [3]] : tensor<2x6x4x5xf32> into tensor<12x4x5xf32>
// CHECK:         %[[MM:.*]] = linalg.batch_matmul ins(%[[L]], %[[R]] : tensor<12x3x4xf32>, tensor<12x4x5xf32>) outs(%{{.*}} : tensor<12x3x5xf32>)
// CHECK:         %[[OUT:.*]] = tensor.expand_shape %[[MM]] {{\[}}[0, 1], [2], [3]] output_shape [2, 6, 3, 5]
// CHECK:         return %[[OUT]]
func.func @matmul_batch_4d(%lhs: tensor<2x6x3x4xf32>, %rhs: tensor<2x6x4x5xf32>) -> tensor<2x6x3x5xf32> {
  %0 = dnn.matmul %lhs, %rhs : (tensor<2x6x3x4xf32>, tensor<2x6x4x5xf32>) -> tensor<2x6x3x5xf32>
  return %0 : tensor<2x6x3x5xf32>
}

// CHECK-LABEL: func.func @matmul_i32(
// CHECK:         %[[ZERO:.*]] = arith.constant 0 : i32
// CHECK:         %[[INIT:.*]] = linalg.fill ins(%[[ZERO]] : i32)
// CHECK:         linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<3x4xi32>, tensor<4x5xi32>) outs(%[[INIT]] : tensor<3x5xi32>)
func.func @matmul_i32(%lhs: tensor<3x4xi32>, %rhs: tensor<4x5xi32>) -> tensor<3x5xi32> {
  %0 = dnn.matmul %lhs, %rhs : (tensor<3x4xi32>, tensor<4x5xi32>) -> tensor<3x5xi32>
  return %0 : tensor<3x5xi32>
}

// Unsigned integers: the named ops' bodies cannot compute on ui8, so the
// contraction is a generic on signless scalars.
// CHECK-LABEL: func.func @matmul_ui8(
// CHECK:         %[[INIT:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<2x3x5xui8>)
// CHECK:           %[[Z:.*]] = arith.constant 0 : i8
// CHECK:           %[[ZU:.*]] = builtin.unrealized_conversion_cast %[[Z]] : i8 to ui8
// CHECK:           linalg.yield %[[ZU]] : ui8
// CHECK:         linalg.generic {indexing_maps = [#[[$BMK]], #[[$KN]], #[[$BMN]]], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
// CHECK-SAME:        outs(%[[INIT]] : tensor<2x3x5xui8>)
// CHECK:           arith.muli %{{.*}}, %{{.*}} : i8
// CHECK:           %[[SUM:.*]] = arith.addi %{{.*}}, %{{.*}} : i8
// CHECK:           %[[SUMU:.*]] = builtin.unrealized_conversion_cast %[[SUM]] : i8 to ui8
// CHECK:           linalg.yield %[[SUMU]] : ui8
func.func @matmul_ui8(%lhs: tensor<2x3x4xui8>, %rhs: tensor<4x5xui8>) -> tensor<2x3x5xui8> {
  %0 = dnn.matmul %lhs, %rhs : (tensor<2x3x4xui8>, tensor<4x5xui8>) -> tensor<2x3x5xui8>
  return %0 : tensor<2x3x5xui8>
}

// An integer einsum is one linalg.generic over its labels.
// CHECK-LABEL: func.func @einsum(
// CHECK-SAME:      %[[A:.*]]: tensor<2x3x4xi32>, %[[B:.*]]: tensor<2x4x5xi32>
// CHECK:         %[[INIT:.*]] = linalg.fill {{.*}} -> tensor<2x3x5xi32>
// CHECK:         %[[R:.*]] = linalg.generic {indexing_maps = [#[[$BMK]], #[[$BKN]], #[[$BMN]]], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
// CHECK-SAME:        ins(%[[A]], %[[B]] : tensor<2x3x4xi32>, tensor<2x4x5xi32>) outs(%[[INIT]] : tensor<2x3x5xi32>)
// CHECK:         ^bb0(%[[X:.*]]: i32, %[[Y:.*]]: i32, %[[ACC:.*]]: i32):
// CHECK:           %[[P:.*]] = arith.muli %[[X]], %[[Y]] : i32
// CHECK:           %[[S:.*]] = arith.addi %[[ACC]], %[[P]] : i32
// CHECK:           linalg.yield %[[S]] : i32
// CHECK:         return %[[R]]
func.func @einsum(%a: tensor<2x3x4xi32>, %b: tensor<2x4x5xi32>) -> tensor<2x3x5xi32> {
  %0 = dnn.einsum %a, %b equation = "bij,bjk->bik" : (tensor<2x3x4xi32>, tensor<2x4x5xi32>) -> tensor<2x3x5xi32>
  return %0 : tensor<2x3x5xi32>
}

// A float einsum that is a GEMM: batch, M, N and summed labels, each
// operand transposed and collapsed to [B, M, K] / [B, K, N], one
// linalg.batch_matmul, then back to the output's order.
// CHECK-LABEL: func.func @einsum_gemm(
// CHECK-SAME:      %[[A:.*]]: tensor<2x3x4xf32>, %[[B:.*]]: tensor<2x4x5xf32>
// CHECK:         %[[R:.*]] = linalg.batch_matmul ins(%[[A]], %[[B]] : tensor<2x3x4xf32>, tensor<2x4x5xf32>)
// CHECK:         return %[[R]]
func.func @einsum_gemm(%a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>) -> tensor<2x3x5xf32> {
  %0 = dnn.einsum %a, %b equation = "bij,bjk->bik" : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
  return %0 : tensor<2x3x5xf32>
}

// Two summed labels and a transposed output (a gather's gradient):
// [v, b*s] x [b*s, d].
// CHECK-LABEL: func.func @einsum_gemm_transposed(
// CHECK-SAME:      %[[H:.*]]: tensor<2x3x7xf32>, %[[G:.*]]: tensor<2x3x5xf32>
// CHECK:         %[[HT:.*]] = linalg.transpose ins(%[[H]] : tensor<2x3x7xf32>) outs(%{{.*}} : tensor<7x2x3xf32>) permutation = [2, 0, 1]
// CHECK:         %[[L:.*]] = tensor.collapse_shape %[[HT]] {{\[}}[0], [1, 2]] : tensor<7x2x3xf32> into tensor<7x6xf32>
// CHECK:         %[[R:.*]] = tensor.collapse_shape %[[G]] {{\[}}[0, 1], [2]] : tensor<2x3x5xf32> into tensor<6x5xf32>
// CHECK:         %[[P:.*]] = linalg.matmul ins(%[[L]], %[[R]] : tensor<7x6xf32>, tensor<6x5xf32>)
// CHECK:         %[[T:.*]] = linalg.transpose ins(%[[P]] : tensor<7x5xf32>) outs(%{{.*}} : tensor<5x7xf32>) permutation = [1, 0]
// CHECK:         return %[[T]]
func.func @einsum_gemm_transposed(%h: tensor<2x3x7xf32>, %g: tensor<2x3x5xf32>) -> tensor<5x7xf32> {
  %0 = dnn.einsum %h, %g equation = "bsv,bsd->dv" : (tensor<2x3x7xf32>, tensor<2x3x5xf32>) -> tensor<5x7xf32>
  return %0 : tensor<5x7xf32>
}

// A repeated label reads the diagonal.
// CHECK-LABEL: func.func @einsum_diag_i64(
// CHECK:         linalg.generic {indexing_maps = [#[[$DIAG]], #[[$SCALAR]]], iterator_types = ["reduction"]}
// CHECK-SAME:        outs(%{{.*}} : tensor<i64>)
// CHECK:           arith.addi %{{.*}}, %{{.*}} : i64
func.func @einsum_diag_i64(%a: tensor<3x3xi64>) -> tensor<i64> {
  %0 = dnn.einsum %a equation = "ii->" : (tensor<3x3xi64>) -> tensor<i64>
  return %0 : tensor<i64>
}

// Pads only what the windows read: the end pad is past the last stride.
// The bias initialises the accumulator.
// CHECK-LABEL: func.func @conv2d(
// CHECK-SAME:      %[[X:.*]]: tensor<1x3x8x8xf32>, %[[W:.*]]: tensor<4x3x3x3xf32>, %[[B:.*]]: tensor<4xf32>
// CHECK:         %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:         %[[PAD:.*]] = tensor.pad %[[X]] low[0, 0, 1, 1] high[0, 0, 0, 0]
// CHECK:           tensor.yield %[[ZERO]] : f32
// CHECK:         } : tensor<1x3x8x8xf32> to tensor<1x3x9x9xf32>
// CHECK:         %[[EMPTY:.*]] = tensor.empty() : tensor<1x4x4x4xf32>
// CHECK:         %[[BIAS:.*]] = linalg.broadcast ins(%[[B]] : tensor<4xf32>) outs(%[[EMPTY]] : tensor<1x4x4x4xf32>) dimensions = [0, 2, 3]
// CHECK:         %[[CONV:.*]] = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
// CHECK-SAME:        ins(%[[PAD]], %[[W]] : tensor<1x3x9x9xf32>, tensor<4x3x3x3xf32>) outs(%[[BIAS]] : tensor<1x4x4x4xf32>)
// CHECK:         return %[[CONV]]
func.func @conv2d(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>) -> tensor<1x4x4x4xf32> {
  %0 = dnn.conv %x, %w, %b strides = [2, 2] pads = [1, 1, 1, 1] dilations = [1, 1] group = 1 : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x4x4xf32>
  return %0 : tensor<1x4x4x4xf32>
}

// CHECK-LABEL: func.func @conv2d_no_pad(
// CHECK-SAME:      %[[X:.*]]: tensor<1x3x8x8xf32>, %[[W:.*]]: tensor<4x3x1x1xf32>
// CHECK-NOT:     tensor.pad
// CHECK:         %[[INIT:.*]] = linalg.fill
// CHECK:         linalg.conv_2d_nchw_fchw {{.*}} ins(%[[X]], %[[W]] : {{.*}}) outs(%[[INIT]] : tensor<1x4x8x8xf32>)
func.func @conv2d_no_pad(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x1x1xf32>) -> tensor<1x4x8x8xf32> {
  %0 = dnn.conv %x, %w strides = [1, 1] pads = [0, 0, 0, 0] dilations = [1, 1] group = 1 : (tensor<1x3x8x8xf32>, tensor<4x3x1x1xf32>) -> tensor<1x4x8x8xf32>
  return %0 : tensor<1x4x8x8xf32>
}

// Groups split the channel dims: [N, G, C/G, ...], [G, M/G, C/G, ...].
// CHECK-LABEL: func.func @conv2d_groups(
// CHECK-SAME:      %[[X:.*]]: tensor<1x4x6x6xf32>, %[[W:.*]]: tensor<6x2x3x3xf32>
// CHECK:         %[[INIT:.*]] = linalg.fill
// CHECK-DAG:     %[[GX:.*]] = tensor.expand_shape %[[X]] {{\[}}[0], [1, 2], [3], [4]] output_shape [1, 2, 2, 6, 6]
// CHECK-DAG:     %[[GW:.*]] = tensor.expand_shape %[[W]] {{\[}}[0, 1], [2], [3], [4]] output_shape [2, 3, 2, 3, 3]
// CHECK-DAG:     %[[GINIT:.*]] = tensor.expand_shape %[[INIT]] {{\[}}[0], [1, 2], [3], [4]] output_shape [1, 2, 3, 4, 2]
// CHECK:         %[[CONV:.*]] = linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : tensor<2xi64>, strides = dense<[1, 2]> : tensor<2xi64>}
// CHECK-SAME:        ins(%[[GX]], %[[GW]] : tensor<1x2x2x6x6xf32>, tensor<2x3x2x3x3xf32>) outs(%[[GINIT]] : tensor<1x2x3x4x2xf32>)
// CHECK:         %[[OUT:.*]] = tensor.collapse_shape %[[CONV]] {{\[}}[0], [1, 2], [3], [4]] : tensor<1x2x3x4x2xf32> into tensor<1x6x4x2xf32>
// CHECK:         return %[[OUT]]
func.func @conv2d_groups(%x: tensor<1x4x6x6xf32>, %w: tensor<6x2x3x3xf32>) -> tensor<1x6x4x2xf32> {
  %0 = dnn.conv %x, %w strides = [1, 2] pads = [0, 0, 0, 0] dilations = [1, 1] group = 2 : (tensor<1x4x6x6xf32>, tensor<6x2x3x3xf32>) -> tensor<1x6x4x2xf32>
  return %0 : tensor<1x6x4x2xf32>
}

// CHECK-LABEL: func.func @conv1d(
// CHECK:         linalg.conv_1d_ncw_fcw {dilations = dense<2> : tensor<1xi64>, strides = dense<1> : tensor<1xi64>}
// CHECK-SAME:        outs(%{{.*}} : tensor<2x4x5xf32>)
func.func @conv1d(%x: tensor<2x3x9xf32>, %w: tensor<4x3x3xf32>) -> tensor<2x4x5xf32> {
  %0 = dnn.conv %x, %w strides = [1] pads = [0, 0] dilations = [2] group = 1 : (tensor<2x3x9xf32>, tensor<4x3x3xf32>) -> tensor<2x4x5xf32>
  return %0 : tensor<2x4x5xf32>
}

// Grouped 1-d: no named op, a generic over (n, g, m, o, c, k).
// CHECK-LABEL: func.func @conv1d_groups(
// CHECK-SAME:      %[[X:.*]]: tensor<2x4x7xf32>, %[[W:.*]]: tensor<6x2x3xf32>, %[[B:.*]]: tensor<6xf32>
// CHECK:         %[[PAD:.*]] = tensor.pad %[[X]] low[0, 0, 1] high[0, 0, 1]
// CHECK:         %[[BIAS:.*]] = linalg.broadcast ins(%[[B]] : tensor<6xf32>) outs(%{{.*}} : tensor<2x6x4xf32>) dimensions = [0, 2]
// CHECK-DAG:     %[[GX:.*]] = tensor.expand_shape %[[PAD]] {{.*}} into tensor<2x2x2x9xf32>
// CHECK-DAG:     %[[GW:.*]] = tensor.expand_shape %[[W]] {{.*}} into tensor<2x3x2x3xf32>
// CHECK-DAG:     %[[GINIT:.*]] = tensor.expand_shape %[[BIAS]] {{.*}} into tensor<2x2x3x4xf32>
// CHECK:         %[[CONV:.*]] = linalg.generic {indexing_maps = [#[[$CONV_IN]], #[[$CONV_W]], #[[$CONV_OUT]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]}
// CHECK-SAME:        ins(%[[GX]], %[[GW]] : tensor<2x2x2x9xf32>, tensor<2x3x2x3xf32>) outs(%[[GINIT]] : tensor<2x2x3x4xf32>)
// CHECK:           arith.mulf
// CHECK:           arith.addf
// CHECK:         tensor.collapse_shape %[[CONV]] {{\[}}[0], [1, 2], [3]] : tensor<2x2x3x4xf32> into tensor<2x6x4xf32>
func.func @conv1d_groups(%x: tensor<2x4x7xf32>, %w: tensor<6x2x3xf32>, %b: tensor<6xf32>) -> tensor<2x6x4xf32> {
  %0 = dnn.conv %x, %w, %b strides = [2] pads = [1, 2] dilations = [1] group = 2 : (tensor<2x4x7xf32>, tensor<6x2x3xf32>, tensor<6xf32>) -> tensor<2x6x4xf32>
  return %0 : tensor<2x6x4xf32>
}

// CHECK-LABEL: func.func @conv3d(
// CHECK:         linalg.conv_3d_ncdhw_fcdhw {dilations = dense<1> : tensor<3xi64>, strides = dense<1> : tensor<3xi64>}
// CHECK-SAME:        -> tensor<1x3x3x3x3xf64>
func.func @conv3d(%x: tensor<1x2x4x4x4xf64>, %w: tensor<3x2x2x2x2xf64>) -> tensor<1x3x3x3x3xf64> {
  %0 = dnn.conv %x, %w strides = [1, 1, 1] pads = [0, 0, 0, 0, 0, 0] dilations = [1, 1, 1] group = 1 : (tensor<1x2x4x4x4xf64>, tensor<3x2x2x2x2xf64>) -> tensor<1x3x3x3x3xf64>
  return %0 : tensor<1x3x3x3x3xf64>
}

// No named op for 4 spatial dims: the generic, with one group.
// CHECK-LABEL: func.func @conv4d(
// CHECK:         linalg.generic
// CHECK-SAME:        iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "reduction", "reduction"]
// CHECK-SAME:        outs(%{{.*}} : tensor<1x1x1x2x2x2x2xf32>)
func.func @conv4d(%x: tensor<1x1x3x3x3x3xf32>, %w: tensor<1x1x2x2x2x2xf32>) -> tensor<1x1x2x2x2x2xf32> {
  %0 = dnn.conv %x, %w strides = [1, 1, 1, 1] pads = [0, 0, 0, 0, 0, 0, 0, 0] dilations = [1, 1, 1, 1] group = 1 : (tensor<1x1x3x3x3x3xf32>, tensor<1x1x2x2x2x2xf32>) -> tensor<1x1x2x2x2x2xf32>
  return %0 : tensor<1x1x2x2x2x2xf32>
}

// CHECK-LABEL: func.func @max_pool(
// CHECK-SAME:      %[[X:.*]]: tensor<1x3x32x32xf32>
// CHECK-NOT:     tensor.pad
// CHECK:         %[[NEG_INF:.*]] = arith.constant 0xFF800000 : f32
// CHECK:         %[[INIT:.*]] = linalg.fill ins(%[[NEG_INF]] : f32) outs(%{{.*}} : tensor<1x3x16x16xf32>)
// CHECK:         %[[WINDOW:.*]] = tensor.empty() : tensor<2x2xf32>
// CHECK:         %[[POOL:.*]] = linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
// CHECK-SAME:        ins(%[[X]], %[[WINDOW]] : tensor<1x3x32x32xf32>, tensor<2x2xf32>) outs(%[[INIT]] : tensor<1x3x16x16xf32>)
// CHECK:         return %[[POOL]]
func.func @max_pool(%x: tensor<1x3x32x32xf32>) -> tensor<1x3x16x16xf32> {
  %0 = dnn.max_pool %x kernel = [2, 2] strides = [2, 2] pads = [0, 0, 0, 0] dilations = [1, 1] ceil_mode = false : tensor<1x3x32x32xf32> -> tensor<1x3x16x16xf32>
  return %0 : tensor<1x3x16x16xf32>
}

// ceil_mode: the last window hangs past the end pad; pad with -inf.
// CHECK-LABEL: func.func @max_pool_ceil(
// CHECK-SAME:      %[[X:.*]]: tensor<1x1x6x6xf32>
// CHECK:         %[[NEG_INF:.*]] = arith.constant 0xFF800000 : f32
// CHECK:         %[[PAD:.*]] = tensor.pad %[[X]] low[0, 0, 1, 1] high[0, 0, 2, 2]
// CHECK:           tensor.yield %[[NEG_INF]] : f32
// CHECK:         } : tensor<1x1x6x6xf32> to tensor<1x1x9x9xf32>
// CHECK:         linalg.pooling_nchw_max {{.*}} ins(%[[PAD]], %{{.*}} : tensor<1x1x9x9xf32>, tensor<3x3xf32>) outs(%{{.*}} : tensor<1x1x4x4xf32>)
func.func @max_pool_ceil(%x: tensor<1x1x6x6xf32>) -> tensor<1x1x4x4xf32> {
  %0 = dnn.max_pool %x kernel = [3, 3] strides = [2, 2] pads = [1, 1, 1, 1] dilations = [1, 1] ceil_mode = true : tensor<1x1x6x6xf32> -> tensor<1x1x4x4xf32>
  return %0 : tensor<1x1x4x4xf32>
}

// CHECK-LABEL: func.func @max_pool_1d(
// CHECK:         %[[NEG_INF:.*]] = arith.constant 0xFC00 : f16
// CHECK:         linalg.fill ins(%[[NEG_INF]] : f16)
// CHECK:         linalg.pooling_ncw_max {dilations = dense<1> : tensor<1xi64>, strides = dense<2> : tensor<1xi64>}
func.func @max_pool_1d(%x: tensor<1x2x7xf16>) -> tensor<1x2x3xf16> {
  %0 = dnn.max_pool %x kernel = [2] strides = [2] pads = [0, 0] dilations = [1] ceil_mode = false : tensor<1x2x7xf16> -> tensor<1x2x3xf16>
  return %0 : tensor<1x2x3xf16>
}

// CHECK-LABEL: func.func @max_pool_3d(
// CHECK:         %[[WINDOW:.*]] = tensor.empty() : tensor<2x2x2xf32>
// CHECK:         linalg.generic {indexing_maps = [#[[$POOL_IN]], #[[$POOL_WIN]], #[[$POOL_OUT]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
// CHECK-SAME:        ins(%{{.*}}, %[[WINDOW]] : tensor<1x1x4x4x4xf32>, tensor<2x2x2xf32>)
// CHECK:         ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32, %[[ACC:.*]]: f32):
// CHECK:           %[[MAX:.*]] = arith.maximumf %[[ACC]], %[[IN]] : f32
// CHECK:           linalg.yield %[[MAX]] : f32
func.func @max_pool_3d(%x: tensor<1x1x4x4x4xf32>) -> tensor<1x1x2x2x2xf32> {
  %0 = dnn.max_pool %x kernel = [2, 2, 2] strides = [2, 2, 2] pads = [0, 0, 0, 0, 0, 0] dilations = [1, 1, 1] ceil_mode = false : tensor<1x1x4x4x4xf32> -> tensor<1x1x2x2x2xf32>
  return %0 : tensor<1x1x2x2x2xf32>
}

// Every window is full: divide by a constant.
// CHECK-LABEL: func.func @avg_pool(
// CHECK:         %[[SUM:.*]] = linalg.pooling_nchw_sum {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
// CHECK:         linalg.generic {{.*}} ins(%[[SUM]] : tensor<1x3x4x4xf32>)
// CHECK:         ^bb0(%[[S:.*]]: f32, %{{.*}}: f32):
// CHECK:           %[[FOUR:.*]] = arith.constant 4.000000e+00 : f32
// CHECK:           %[[AVG:.*]] = arith.divf %[[S]], %[[FOUR]] : f32
// CHECK:           linalg.yield %[[AVG]] : f32
func.func @avg_pool(%x: tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32> {
  %0 = dnn.avg_pool %x kernel = [2, 2] strides = [2, 2] pads = [0, 0, 0, 0] ceil_mode = false count_include_pad = false : tensor<1x3x8x8xf32> -> tensor<1x3x4x4xf32>
  return %0 : tensor<1x3x4x4xf32>
}

// count_include_pad with ceil_mode: along H the window count is clipped to
// the input plus its pads (min(start + 3, 6 + 1) - start, start = 2 * oh - 1);
// along W it is 3 everywhere.
// CHECK-LABEL: func.func @avg_pool_include_pad(
// CHECK:         tensor.pad %{{.*}} low[0, 0, 1, 1] high[0, 0, 2, 0]
// CHECK:         %[[SUM:.*]] = linalg.pooling_nchw_sum
// CHECK:         linalg.generic {{.*}} ins(%[[SUM]] : tensor<1x1x4x3xf32>)
// CHECK:         ^bb0(%[[S:.*]]: f32, %{{.*}}: f32):
// CHECK:           %[[OH:.*]] = linalg.index 2 : index
// CHECK-DAG:       %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG:       %[[C2:.*]] = arith.constant 2 : index
// CHECK:           %[[SCALED:.*]] = arith.muli %[[OH]], %[[C2]] : index
// CHECK:           %[[START:.*]] = arith.subi %[[SCALED]], %[[C1]] : index
// CHECK-DAG:       %[[C7:.*]] = arith.constant 7 : index
// CHECK-DAG:       %[[C3:.*]] = arith.constant 3 : index
// CHECK:           %[[END:.*]] = arith.addi %[[START]], %[[C3]] : index
// CHECK:           %[[CLIPPED:.*]] = arith.minsi %[[END]], %[[C7]] : index
// CHECK:           %[[H:.*]] = arith.subi %[[CLIPPED]], %[[START]] : index
// CHECK:           %[[W:.*]] = arith.constant 3 : index
// CHECK:           %[[COUNT:.*]] = arith.muli %[[H]], %[[W]] : index
// CHECK:           %[[I:.*]] = arith.index_cast %[[COUNT]] : index to i64
// CHECK:           %[[F:.*]] = arith.sitofp %[[I]] : i64 to f32
// CHECK:           %[[AVG:.*]] = arith.divf %[[S]], %[[F]] : f32
// CHECK:           linalg.yield %[[AVG]] : f32
func.func @avg_pool_include_pad(%x: tensor<1x1x6x6xf32>) -> tensor<1x1x4x3xf32> {
  %0 = dnn.avg_pool %x kernel = [3, 3] strides = [2, 2] pads = [1, 1, 1, 0] ceil_mode = true count_include_pad = true : tensor<1x1x6x6xf32> -> tensor<1x1x4x3xf32>
  return %0 : tensor<1x1x4x3xf32>
}

// count_include_pad = false: the window is clipped to the input.
// CHECK-LABEL: func.func @avg_pool_exclude_pad(
// CHECK:         %[[SUM:.*]] = linalg.pooling_ncw_sum
// CHECK:         linalg.generic {{.*}} ins(%[[SUM]] : tensor<1x1x5xf32>)
// CHECK:           %[[START:.*]] = arith.subi
// CHECK:           %[[END:.*]] = arith.minsi %{{.*}}, %{{.*}} : index
// CHECK:           %[[C0:.*]] = arith.constant 0 : index
// CHECK:           %[[BEGIN:.*]] = arith.maxsi %[[START]], %[[C0]] : index
// CHECK:           %[[COUNT:.*]] = arith.subi %[[END]], %[[BEGIN]] : index
// CHECK:           arith.index_cast %[[COUNT]] : index to i64
func.func @avg_pool_exclude_pad(%x: tensor<1x1x5xf32>) -> tensor<1x1x5xf32> {
  %0 = dnn.avg_pool %x kernel = [3] strides = [1] pads = [1, 1] ceil_mode = false count_include_pad = false : tensor<1x1x5xf32> -> tensor<1x1x5xf32>
  return %0 : tensor<1x1x5xf32>
}

// CHECK-LABEL: func.func @avg_pool_3d(
// CHECK:         %[[SUM:.*]] = linalg.generic
// CHECK-SAME:        iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]
// CHECK:           arith.addf
// CHECK:         linalg.generic {{.*}} ins(%[[SUM]] : tensor<1x1x2x2x2xf32>)
// CHECK:           arith.constant 8.000000e+00 : f32
func.func @avg_pool_3d(%x: tensor<1x1x4x4x4xf32>) -> tensor<1x1x2x2x2xf32> {
  %0 = dnn.avg_pool %x kernel = [2, 2, 2] strides = [2, 2, 2] pads = [0, 0, 0, 0, 0, 0] ceil_mode = false count_include_pad = true : tensor<1x1x4x4x4xf32> -> tensor<1x1x2x2x2xf32>
  return %0 : tensor<1x1x2x2x2xf32>
}
