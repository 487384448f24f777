// RUN: dnnc-opt %s --dnn-cuda-fuse-gemm-epilogue --cse --split-input-file | FileCheck %s

// A linear layer with a tanh GELU (bf16): [2,16,64] x [64,256] is one GEMM of
// 32 rows; the [256] bias is read in place; activation 2.
// CHECK: func.func private @dnnc_rt_cuda_gemm_bias_bf16(i64, i64, i64, i64, index, i64, index, i64, index, i64, index, i32)
// CHECK-LABEL: func.func @mlp_up(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<2x16x64xbf16>, %[[W:[a-z0-9]+]]: tensor<64x256xbf16>, %[[B:[a-z0-9]+]]: tensor<256xbf16>
// CHECK-DAG: bufferization.to_buffer %[[X]] read_only
// CHECK-DAG: bufferization.to_buffer %[[W]] read_only
// CHECK-DAG: %[[OUT:.*]] = memref.alloc() {alignment = 64 : i64} : memref<2x16x256xbf16>
// CHECK-DAG: bufferization.to_buffer %[[B]] read_only
// CHECK: call @dnnc_rt_cuda_gemm_bias_bf16(%c1_i64, %c32_i64, %c256_i64, %c64_i64, %{{.*}}, %c0_i64, %{{.*}}, %c0_i64, %{{.*}}, %c0_i64, %{{.*}}, %c2_i32)
// CHECK-NEXT: %[[R:.*]] = bufferization.to_tensor %[[OUT]] restrict writable
// CHECK-NEXT: return %[[R]]
func.func @mlp_up(%x: tensor<2x16x64xbf16>, %w: tensor<64x256xbf16>, %b: tensor<256xbf16>) -> tensor<2x16x256xbf16> {
  %0 = dnn.matmul %x, %w : (tensor<2x16x64xbf16>, tensor<64x256xbf16>) -> tensor<2x16x256xbf16>
  %1 = dnn.broadcast_in_dim %b, dims = [2] : tensor<256xbf16> -> tensor<2x16x256xbf16>
  %2 = dnn.add %0, %1 : tensor<2x16x256xbf16>
  %3 = dnn.gelu %2 approximation = <tanh> : tensor<2x16x256xbf16>
  return %3 : tensor<2x16x256xbf16>
}

// -----

// GPT-2's layout: a 2-D GEMM, a zero bias folded to a splat constant (a cast
// of it under --precision), a reshape, then ReLU: a [N] splat bias is made,
// the activation is applied on the GEMM's shape and the result reshaped.
// CHECK-LABEL: func.func @splat_bias_reshape(
// CHECK: %[[BIAS:.*]] = dnn.constant dense<0.000000e+00> : tensor<8xf16>
// CHECK: bufferization.to_buffer %[[BIAS]] read_only
// CHECK: call @dnnc_rt_cuda_gemm_bias_f16(%c1_i64, %c6_i64, %c8_i64, %c4_i64, %{{.*}}, %c0_i64, %{{.*}}, %c0_i64, %{{.*}}, %c0_i64, %{{.*}}, %c1_i32)
// CHECK: %[[R:.*]] = bufferization.to_tensor %{{.*}} : memref<6x8xf16> to tensor<6x8xf16>
// CHECK-NEXT: %[[S:.*]] = dnn.reshape %[[R]] : tensor<6x8xf16> -> tensor<2x3x8xf16>
// CHECK-NOT: dnn.relu
// CHECK: return %[[S]]
func.func @splat_bias_reshape(%x: tensor<6x4xf16>, %w: tensor<4x8xf16>) -> tensor<2x3x8xf16> {
  %z = dnn.constant dense<0.0> : tensor<6x8xf32>
  %zc = dnn.cast %z : tensor<6x8xf32> -> tensor<6x8xf16>
  %0 = dnn.matmul %x, %w : (tensor<6x4xf16>, tensor<4x8xf16>) -> tensor<6x8xf16>
  %1 = dnn.add %0, %zc : tensor<6x8xf16>
  %2 = dnn.reshape %1 : tensor<6x8xf16> -> tensor<2x3x8xf16>
  %3 = dnn.relu %2 : tensor<2x3x8xf16>
  return %3 : tensor<2x3x8xf16>
}

// -----

// A batched right operand: 3 GEMMs of 4x5 by 5x6 with batch strides; the
// bias from [1, 1, 6]; a tf32 module gets the tf32 kernel; no activation
// since the sum has two uses.
// CHECK-LABEL: func.func @batched(
// CHECK: call @dnnc_rt_cuda_gemm_bias_tf32(%c3_i64, %c4_i64, %c6_i64, %c5_i64, %{{.*}}, %c20_i64, %{{.*}}, %c30_i64, %{{.*}}, %c24_i64, %{{.*}}, %c0_i32)
// CHECK: dnn.relu
module attributes {dnn.precision = #dnn.precision<tf32>} {
func.func @batched(%x: tensor<3x4x5xf32>, %w: tensor<3x5x6xf32>, %b: tensor<1x1x6xf32>) -> (tensor<3x4x6xf32>, tensor<3x4x6xf32>) {
  %0 = dnn.matmul %x, %w : (tensor<3x4x5xf32>, tensor<3x5x6xf32>) -> tensor<3x4x6xf32>
  %1 = dnn.broadcast_in_dim %b, dims = [0, 1, 2] : tensor<1x1x6xf32> -> tensor<3x4x6xf32>
  %2 = dnn.add %1, %0 : tensor<3x4x6xf32>
  %3 = dnn.relu %2 : tensor<3x4x6xf32>
  return %2, %3 : tensor<3x4x6xf32>, tensor<3x4x6xf32>
}
}

// -----

// The exact GELU is not cuBLASLt's: the GEMM takes the bias alone and the
// dnn.gelu stays.
// CHECK-LABEL: func.func @exact_gelu(
// CHECK: call @dnnc_rt_cuda_gemm_bias_f32(%c1_i64, %c4_i64, %c8_i64, %c8_i64, %{{.*}}, %c0_i64, %{{.*}}, %c0_i64, %{{.*}}, %c0_i64, %{{.*}}, %c0_i32)
// CHECK: dnn.gelu %{{.*}} approximation = <none>
func.func @exact_gelu(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %0 = dnn.matmul %x, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %1 = dnn.broadcast_in_dim %b, dims = [1] : tensor<8xf32> -> tensor<4x8xf32>
  %2 = dnn.add %0, %1 : tensor<4x8xf32>
  %3 = dnn.gelu %2 approximation = <none> : tensor<4x8xf32>
  return %3 : tensor<4x8xf32>
}

// -----

// Left alone: the product has another use; a bias varying along the rows
// (broadcast along dim 0); a full [4, 8] addend; integer elements.
// CHECK-LABEL: func.func @not_epilogues(
// CHECK-NOT: call
// CHECK-COUNT-4: dnn.matmul
// CHECK-NOT: call
func.func @not_epilogues(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>, %w2: tensor<8x8xf32>, %w3: tensor<8x8xf32>, %b: tensor<8xf32>, %r: tensor<4xf32>, %full: tensor<4x8xf32>, %xi: tensor<4x8xi32>, %wi: tensor<8x8xi32>, %bi: tensor<4x8xi32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xi32>) {
  %0 = dnn.matmul %x, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %1 = dnn.broadcast_in_dim %b, dims = [1] : tensor<8xf32> -> tensor<4x8xf32>
  %2 = dnn.add %0, %1 : tensor<4x8xf32>
  %3 = dnn.matmul %x, %w2 : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %4 = dnn.broadcast_in_dim %r, dims = [0] : tensor<4xf32> -> tensor<4x8xf32>
  %5 = dnn.add %3, %4 : tensor<4x8xf32>
  %6 = dnn.matmul %x, %w3 : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %7 = dnn.add %6, %full : tensor<4x8xf32>
  %8 = dnn.matmul %xi, %wi : (tensor<4x8xi32>, tensor<8x8xi32>) -> tensor<4x8xi32>
  %9 = dnn.add %8, %bi : tensor<4x8xi32>
  return %0, %2, %5, %7, %9 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xi32>
}

// -----

// A small bias broadcast the folder materialised as a [2, 3] weight with
// equal rows: a [3] constant of its first row is the bias. A weight whose
// value is not of the argument's shape (a sharded one: the value is the
// whole tensor) or whose rows differ is not a bias.
// CHECK-LABEL: func.func @folded_bias(
// CHECK: %[[ROW:.*]] = dnn.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00]> : tensor<3xf32>
// CHECK: bufferization.to_buffer %[[ROW]] read_only
// CHECK: call @dnnc_rt_cuda_gemm_bias_f32(%c1_i64, %c2_i64, %c3_i64, %c4_i64,
// CHECK-NOT: call
// CHECK: dnn.add %{{.*}}, %arg3
// CHECK-NEXT: dnn.add %{{.*}}, %arg4
func.func @folded_bias(%x: tensor<2x4xf32>, %w: tensor<4x3xf32>,
    %b: tensor<2x3xf32> {dnn.weight = dense<[[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]]> : tensor<2x3xf32>},
    %s: tensor<2x3xf32> {dnn.weight = dense<[[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]]> : tensor<2x6xf32>},
    %d: tensor<2x3xf32> {dnn.weight = dense<[[1.0, 2.0, 3.0], [1.0, 2.0, 4.0]]> : tensor<2x3xf32>}) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
  %0 = dnn.matmul %x, %w : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  %1 = dnn.add %0, %b : tensor<2x3xf32>
  %2 = dnn.matmul %x, %w : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  %3 = dnn.add %2, %s : tensor<2x3xf32>
  %4 = dnn.matmul %x, %w : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  %5 = dnn.add %4, %d : tensor<2x3xf32>
  return %1, %3, %5 : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// Without a bias: a 16-bit matmul alone writes its 16-bit result directly
// (a null bias, no activation; GPT-2's LM head under --precision=bf16), and
// an activation right after a matmul is its epilogue (f32 too). A plain f32
// matmul is left to dnn-matmul-to-blas.
// CHECK-LABEL: func.func @no_bias(
// CHECK-DAG: %[[NULL:.*]] = arith.constant 0 : index
// CHECK: call @dnnc_rt_cuda_gemm_bias_bf16(%c1_i64, %c4_i64, %c8_i64, %c8_i64, %{{.*}}, %c0_i64, %{{.*}}, %c0_i64, %{{.*}}, %c0_i64, %[[NULL]], %c0_i32)
// CHECK: call @dnnc_rt_cuda_gemm_bias_f32(%c1_i64, %c4_i64, %c8_i64, %c8_i64, %{{.*}}, %c0_i64, %{{.*}}, %c0_i64, %{{.*}}, %c0_i64, %[[NULL]], %c2_i32)
// CHECK-NOT: call
// CHECK: dnn.matmul
// CHECK-NOT: dnn.gelu
func.func @no_bias(%x: tensor<4x8xbf16>, %w: tensor<8x8xbf16>, %y: tensor<4x8xf32>, %v: tensor<8x8xf32>, %v2: tensor<8x8xf32>) -> (tensor<4x8xbf16>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %0 = dnn.matmul %x, %w : (tensor<4x8xbf16>, tensor<8x8xbf16>) -> tensor<4x8xbf16>
  %1 = dnn.matmul %y, %v : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %2 = dnn.gelu %1 approximation = <tanh> : tensor<4x8xf32>
  %3 = dnn.matmul %y, %v2 : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  return %0, %2, %3 : tensor<4x8xbf16>, tensor<4x8xf32>, tensor<4x8xf32>
}
