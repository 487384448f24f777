// RUN: dnnc-opt %s --dnn-cuda-fuse-attention --canonicalize --split-input-file | FileCheck %s

// GPT-2's exported attention: Q and K each scaled by 1/sqrt(sqrt(d)), a mask
// bias broadcast over the heads, softmax, the is_nan guard, P V. One kernel
// call: scale 0.5 * 0.5, K transposed back, the compact [2,1,16,16] bias
// read with strides (256, 0, 16).
// CHECK: func.func private @dnnc_rt_cuda_attention_f32(i64, i64, i64, i64, index, index, index, index, f32, i32, i64, index, i64, i64, i64)
// CHECK-LABEL: func.func @gpt(
// CHECK-SAME: %[[Q:[a-z0-9]+]]: tensor<2x4x16x8xf32>, %[[K:[a-z0-9]+]]: tensor<2x4x8x16xf32>, %[[V:[a-z0-9]+]]: tensor<2x4x16x8xf32>, %[[M:[a-z0-9]+]]: tensor<2x1x16x16xf32>
// CHECK-DAG: %[[SCALE:.*]] = arith.constant 2.500000e-01 : f32
// CHECK-DAG: %[[KK:.*]] = dnn.transpose %[[K]], permutation = [0, 1, 3, 2]
// CHECK-DAG: %[[OUT:.*]] = memref.alloc() {alignment = 64 : i64} : memref<2x4x16x8xf32>
// CHECK-DAG: bufferization.to_buffer %[[M]] read_only
// CHECK-DAG: bufferization.to_buffer %[[KK]] read_only
// CHECK: call @dnnc_rt_cuda_attention_f32(%c8_i64, %c16_i64, %c16_i64, %c8_i64, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[SCALE]], %c0_i32, %c4_i64, %{{.*}}, %c256_i64, %c0_i64, %c16_i64)
// CHECK-NOT: dnn.softmax
// CHECK-NOT: dnn.matmul
// CHECK: %[[R:.*]] = bufferization.to_tensor %[[OUT]] restrict writable
// CHECK: return %[[R]]
func.func @gpt(%q: tensor<2x4x16x8xf32>, %k: tensor<2x4x8x16xf32>, %v: tensor<2x4x16x8xf32>, %mask: tensor<2x1x16x16xf32>) -> tensor<2x4x16x8xf32> {
  %c = dnn.constant dense<0.5> : tensor<2x4x16x8xf32>
  %ck = dnn.constant dense<0.5> : tensor<2x4x8x16xf32>
  %zero = dnn.constant dense<0.0> : tensor<2x4x16x16xf32>
  %qs = dnn.mul %q, %c : tensor<2x4x16x8xf32>
  %ks = dnn.mul %k, %ck : tensor<2x4x8x16xf32>
  %s = dnn.matmul %qs, %ks : (tensor<2x4x16x8xf32>, tensor<2x4x8x16xf32>) -> tensor<2x4x16x16xf32>
  %b = dnn.broadcast_in_dim %mask, dims = [0, 1, 2, 3] : tensor<2x1x16x16xf32> -> tensor<2x4x16x16xf32>
  %a = dnn.add %s, %b : tensor<2x4x16x16xf32>
  %p = dnn.softmax %a axis = 3 : tensor<2x4x16x16xf32>
  %n = dnn.is_nan %p : tensor<2x4x16x16xf32> -> tensor<2x4x16x16xi1>
  %g = dnn.select %n, %zero, %p : tensor<2x4x16x16xi1>, tensor<2x4x16x16xf32>
  %o = dnn.matmul %g, %v : (tensor<2x4x16x16xf32>, tensor<2x4x16x8xf32>) -> tensor<2x4x16x8xf32>
  return %o : tensor<2x4x16x8xf32>
}

// -----

// BERT's: scores divided by sqrt(d) after the product, a key mask [2,1,1,16]
// (strides 16, 0, 0), no guard; bf16 picks the bf16 kernel.
// CHECK: func.func private @dnnc_rt_cuda_attention_bf16(
// CHECK-LABEL: func.func @bert(
// CHECK: %[[SCALE:.*]] = arith.constant 5.000000e-01 : f32
// CHECK: call @dnnc_rt_cuda_attention_bf16(%c8_i64, %c16_i64, %c16_i64, %c4_i64, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[SCALE]], %c0_i32, %c4_i64, %{{.*}}, %c16_i64, %c0_i64, %c0_i64)
// CHECK-NOT: dnn.softmax
func.func @bert(%q: tensor<2x4x16x4xbf16>, %k: tensor<2x4x4x16xbf16>, %v: tensor<2x4x16x4xbf16>, %mask: tensor<2x1x1x16xbf16>) -> tensor<2x4x16x4xbf16> {
  %d = dnn.constant dense<2.0> : tensor<2x4x16x16xbf16>
  %s = dnn.matmul %q, %k : (tensor<2x4x16x4xbf16>, tensor<2x4x4x16xbf16>) -> tensor<2x4x16x16xbf16>
  %t = dnn.div %s, %d : tensor<2x4x16x16xbf16>
  %b = dnn.broadcast_in_dim %mask, dims = [0, 1, 2, 3] : tensor<2x1x1x16xbf16> -> tensor<2x4x16x16xbf16>
  %a = dnn.add %t, %b : tensor<2x4x16x16xbf16>
  %p = dnn.softmax %a axis = 3 : tensor<2x4x16x16xbf16>
  %o = dnn.matmul %p, %v : (tensor<2x4x16x16xbf16>, tensor<2x4x16x4xbf16>) -> tensor<2x4x16x4xbf16>
  return %o : tensor<2x4x16x4xbf16>
}

// -----

// Not attention: softmax over another axis, a head dim above the kernel's
// limit, a scale that is not a constant. Left alone.
// CHECK-LABEL: func.func @other_axis(
// CHECK: dnn.softmax
// CHECK-NOT: call
func.func @other_axis(%q: tensor<4x16x8xf32>, %k: tensor<4x8x16xf32>, %v: tensor<4x16x8xf32>) -> tensor<4x16x8xf32> {
  %s = dnn.matmul %q, %k : (tensor<4x16x8xf32>, tensor<4x8x16xf32>) -> tensor<4x16x16xf32>
  %p = dnn.softmax %s axis = 1 : tensor<4x16x16xf32>
  %o = dnn.matmul %p, %v : (tensor<4x16x16xf32>, tensor<4x16x8xf32>) -> tensor<4x16x8xf32>
  return %o : tensor<4x16x8xf32>
}

// -----

// CHECK-LABEL: func.func @wide_heads(
// CHECK: dnn.softmax
// CHECK-NOT: call
func.func @wide_heads(%q: tensor<4x16x256xf32>, %k: tensor<4x256x16xf32>, %v: tensor<4x16x256xf32>) -> tensor<4x16x256xf32> {
  %s = dnn.matmul %q, %k : (tensor<4x16x256xf32>, tensor<4x256x16xf32>) -> tensor<4x16x16xf32>
  %p = dnn.softmax %s axis = 2 : tensor<4x16x16xf32>
  %o = dnn.matmul %p, %v : (tensor<4x16x16xf32>, tensor<4x16x256xf32>) -> tensor<4x16x256xf32>
  return %o : tensor<4x16x256xf32>
}

// -----

// CHECK-LABEL: func.func @dynamic_scale(
// CHECK: dnn.softmax
// CHECK-NOT: call
func.func @dynamic_scale(%q: tensor<4x16x8xf32>, %k: tensor<4x8x16xf32>, %v: tensor<4x16x8xf32>, %c: tensor<4x16x16xf32>) -> tensor<4x16x8xf32> {
  %s = dnn.matmul %q, %k : (tensor<4x16x8xf32>, tensor<4x8x16xf32>) -> tensor<4x16x16xf32>
  %t = dnn.mul %s, %c : tensor<4x16x16xf32>
  %p = dnn.softmax %t axis = 2 : tensor<4x16x16xf32>
  %o = dnn.matmul %p, %v : (tensor<4x16x16xf32>, tensor<4x16x8xf32>) -> tensor<4x16x8xf32>
  return %o : tensor<4x16x8xf32>
}

// -----

// A causal mask [Sq, Sk] broadcast over batch and heads is read in place
// (strides 0, 0, 16); a scale after the bias scales the compact mask.
// CHECK-LABEL: func.func @causal_mask(
// CHECK-SAME: %{{.*}}: tensor<16x16xf32>
// CHECK: %[[SCALED:.*]] = dnn.mul %{{.*}}, %{{.*}} : tensor<16x16xf32>
// CHECK: bufferization.to_buffer %[[SCALED]] read_only : tensor<16x16xf32>
// CHECK: call @dnnc_rt_cuda_attention_f32(%c8_i64, %c16_i64, %c16_i64, %c8_i64, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %c0_i32, %c4_i64, %{{.*}}, %c0_i64, %c0_i64, %c16_i64)
func.func @causal_mask(%q: tensor<2x4x16x8xf32>, %k: tensor<2x4x8x16xf32>, %v: tensor<2x4x16x8xf32>, %mask: tensor<16x16xf32>) -> tensor<2x4x16x8xf32> {
  %c = dnn.constant dense<0.25> : tensor<2x4x16x16xf32>
  %s = dnn.matmul %q, %k : (tensor<2x4x16x8xf32>, tensor<2x4x8x16xf32>) -> tensor<2x4x16x16xf32>
  %b = dnn.broadcast_in_dim %mask, dims = [2, 3] : tensor<16x16xf32> -> tensor<2x4x16x16xf32>
  %a = dnn.add %s, %b : tensor<2x4x16x16xf32>
  %t = dnn.mul %a, %c : tensor<2x4x16x16xf32>
  %p = dnn.softmax %t axis = 3 : tensor<2x4x16x16xf32>
  %o = dnn.matmul %p, %v : (tensor<2x4x16x16xf32>, tensor<2x4x16x8xf32>) -> tensor<2x4x16x8xf32>
  return %o : tensor<2x4x16x8xf32>
}

// -----

// gen_gpt's causal mask, an outlined weight (0 on and below the diagonal,
// -10000 above), is the kernel's causal flag: no bias pointer, and the
// kernel skips the key tiles past the diagonal. One value off and it stays a
// bias.
// CHECK-LABEL: func.func @causal_weight(
// CHECK: call @dnnc_rt_cuda_attention_f32(%c8_i64, %c4_i64, %c4_i64, %c8_i64, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %c1_i32, %c4_i64, %{{.*}}, %c0_i64, %c0_i64, %c0_i64)
// CHECK: call @dnnc_rt_cuda_attention_f32(%c8_i64, %c4_i64, %c4_i64, %c8_i64, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %c0_i32, %c4_i64, %{{.*}}, %c0_i64, %c0_i64, %c4_i64)
func.func @causal_weight(%q: tensor<2x4x4x8xf32>, %k: tensor<2x4x8x4xf32>, %v: tensor<2x4x4x8xf32>,
    %mask: tensor<4x4xf32> {dnn.weight = dense<[[0.0, -10000.0, -10000.0, -10000.0], [0.0, 0.0, -10000.0, -10000.0], [0.0, 0.0, 0.0, -10000.0], [0.0, 0.0, 0.0, 0.0]]> : tensor<4x4xf32>},
    %near: tensor<4x4xf32> {dnn.weight = dense<[[0.0, -10000.0, -10000.0, -10000.0], [0.0, 0.0, -10000.0, -10000.0], [0.0, 0.0, 0.0, -10.0], [0.0, 0.0, 0.0, 0.0]]> : tensor<4x4xf32>}) -> (tensor<2x4x4x8xf32>, tensor<2x4x4x8xf32>) {
  %s = dnn.matmul %q, %k : (tensor<2x4x4x8xf32>, tensor<2x4x8x4xf32>) -> tensor<2x4x4x4xf32>
  %b = dnn.broadcast_in_dim %mask, dims = [2, 3] : tensor<4x4xf32> -> tensor<2x4x4x4xf32>
  %a = dnn.add %s, %b : tensor<2x4x4x4xf32>
  %p = dnn.softmax %a axis = 3 : tensor<2x4x4x4xf32>
  %o = dnn.matmul %p, %v : (tensor<2x4x4x4xf32>, tensor<2x4x4x8xf32>) -> tensor<2x4x4x8xf32>
  %s2 = dnn.matmul %q, %k : (tensor<2x4x4x8xf32>, tensor<2x4x8x4xf32>) -> tensor<2x4x4x4xf32>
  %b2 = dnn.broadcast_in_dim %near, dims = [2, 3] : tensor<4x4xf32> -> tensor<2x4x4x4xf32>
  %a2 = dnn.add %s2, %b2 : tensor<2x4x4x4xf32>
  %p2 = dnn.softmax %a2 axis = 3 : tensor<2x4x4x4xf32>
  %o2 = dnn.matmul %p2, %v : (tensor<2x4x4x4xf32>, tensor<2x4x4x8xf32>) -> tensor<2x4x4x8xf32>
  return %o, %o2 : tensor<2x4x4x8xf32>, tensor<2x4x4x8xf32>
}
