// RUN: dnnc-opt %s --dnn-split-fused-projections -mlir-print-debuginfo \
// RUN:   | FileCheck %s

// A fused QKV projection (constant weight and bias, reshaped into
// [batch, seq, 3 * hidden], split into three): one matmul per part, by the
// weight's and the bias's columns of that part, named after them.
// CHECK-LABEL: func.func @qkv_constant(
// CHECK-SAME: %[[X:.*]]: tensor<8x4xf32>
// CHECK: %[[WQ:.*]] = dnn.constant dense<{{\[}}[0.000000e+00, 1.000000e+00], [6.000000e+00, 7.000000e+00], [1.200000e+01, 1.300000e+01], [1.800000e+01, 1.900000e+01]]> : tensor<4x2xf32> loc(#[[WQLOC:loc[0-9]*]])
// CHECK: %[[Q:.*]] = dnn.matmul %[[X]], %[[WQ]] : (tensor<8x4xf32>, tensor<4x2xf32>) -> tensor<8x2xf32>
// CHECK: %[[BQ:.*]] = dnn.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
// CHECK: %[[BQB:.*]] = dnn.broadcast_in_dim %[[BQ]], dims = [1] : tensor<2xf32> -> tensor<8x2xf32>
// CHECK: dnn.constant dense<{{\[}}[2.000000e+00, 3.000000e+00], [8.000000e+00, 9.000000e+00]
// CHECK: %[[K:.*]] = dnn.matmul %[[X]], %{{.*}} : (tensor<8x4xf32>, tensor<4x2xf32>) -> tensor<8x2xf32>
// CHECK: dnn.constant dense<[3.000000e+00, 4.000000e+00]> : tensor<2xf32>
// CHECK: dnn.constant dense<{{\[}}[4.000000e+00, 5.000000e+00], [1.000000e+01, 1.100000e+01]
// CHECK: %[[V:.*]] = dnn.matmul %[[X]], %{{.*}} : (tensor<8x4xf32>, tensor<4x2xf32>) -> tensor<8x2xf32>
// CHECK: %[[QB:.*]] = dnn.add %[[Q]], %[[BQB]] : tensor<8x2xf32>
// CHECK: %[[KB:.*]] = dnn.add %[[K]], %{{.*}} : tensor<8x2xf32>
// CHECK: %[[VB:.*]] = dnn.add %[[V]], %{{.*}} : tensor<8x2xf32>
// CHECK: %[[QR:.*]] = dnn.reshape %[[QB]] : tensor<8x2xf32> -> tensor<2x4x2xf32>
// CHECK: %[[KR:.*]] = dnn.reshape %[[KB]] : tensor<8x2xf32> -> tensor<2x4x2xf32>
// CHECK: %[[VR:.*]] = dnn.reshape %[[VB]] : tensor<8x2xf32> -> tensor<2x4x2xf32>
// CHECK-NOT: dnn.slice
// CHECK: return %[[QR]], %[[KR]], %[[VR]]
func.func @qkv_constant(%x: tensor<8x4xf32>) -> (tensor<2x4x2xf32>, tensor<2x4x2xf32>, tensor<2x4x2xf32>) {
  %w = dnn.constant dense<[[0.0, 1.0, 2.0, 3.0, 4.0, 5.0], [6.0, 7.0, 8.0, 9.0, 10.0, 11.0], [12.0, 13.0, 14.0, 15.0, 16.0, 17.0], [18.0, 19.0, 20.0, 21.0, 22.0, 23.0]]> : tensor<4x6xf32> loc("qkv.weight")
  %b = dnn.constant dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]> : tensor<6xf32> loc("qkv.bias")
  %y = dnn.matmul %x, %w : (tensor<8x4xf32>, tensor<4x6xf32>) -> tensor<8x6xf32>
  %bb = dnn.broadcast_in_dim %b, dims = [1] : tensor<6xf32> -> tensor<8x6xf32>
  %z = dnn.add %y, %bb : tensor<8x6xf32>
  %r = dnn.reshape %z : tensor<8x6xf32> -> tensor<2x4x6xf32>
  %q = dnn.slice %r starts = [0, 0, 0] steps = [1, 1, 1] : tensor<2x4x6xf32> -> tensor<2x4x2xf32>
  %k = dnn.slice %r starts = [0, 0, 2] steps = [1, 1, 1] : tensor<2x4x6xf32> -> tensor<2x4x2xf32>
  %v = dnn.slice %r starts = [0, 0, 4] steps = [1, 1, 1] : tensor<2x4x6xf32> -> tensor<2x4x2xf32>
  return %q, %k, %v : tensor<2x4x2xf32>, tensor<2x4x2xf32>, tensor<2x4x2xf32>
}

// A weight argument not read (`--plan-only`) behind a transpose (Gemm with
// transB): new `dnn.weight_ref` arguments of the sliced rows, transposed;
// the original argument is gone. Slices may leave columns unused.
// CHECK-LABEL: func.func @gate_up_weight_ref(
// CHECK-SAME: %[[X:[^:]*]]: tensor<8x4xf32>
// CHECK-SAME: %[[WG:[^:]*]]: tensor<3x4xf32> {dnn.name = "gate_up[0:3]", dnn.weight_ref}
// CHECK-SAME: %[[WU:[^:]*]]: tensor<2x4xf32> {dnn.name = "gate_up[4:6]", dnn.weight_ref}
// CHECK: %[[TG:.*]] = dnn.transpose %[[WG]], permutation = [1, 0] : tensor<3x4xf32> -> tensor<4x3xf32>
// CHECK: %[[G:.*]] = dnn.matmul %[[X]], %[[TG]]
// CHECK: %[[TU:.*]] = dnn.transpose %[[WU]], permutation = [1, 0] : tensor<2x4xf32> -> tensor<4x2xf32>
// CHECK: %[[U:.*]] = dnn.matmul %[[X]], %[[TU]]
// CHECK: %[[GS:.*]] = dnn.sigmoid %[[G]] : tensor<8x3xf32>
// CHECK: %[[US:.*]] = dnn.sigmoid %[[U]] : tensor<8x2xf32>
// CHECK: return %[[GS]], %[[US]]
func.func @gate_up_weight_ref(%x: tensor<8x4xf32>, %w: tensor<6x4xf32> {dnn.name = "gate_up", dnn.weight_ref}) -> (tensor<8x3xf32>, tensor<8x2xf32>) {
  %t = dnn.transpose %w, permutation = [1, 0] : tensor<6x4xf32> -> tensor<4x6xf32>
  %y = dnn.matmul %x, %t : (tensor<8x4xf32>, tensor<4x6xf32>) -> tensor<8x6xf32>
  %s = dnn.sigmoid %y : tensor<8x6xf32>
  %g = dnn.slice %s starts = [0, 0] steps = [1, 1] : tensor<8x6xf32> -> tensor<8x3xf32>
  %u = dnn.slice %s starts = [0, 4] steps = [1, 1] : tensor<8x6xf32> -> tensor<8x2xf32>
  return %g, %u : tensor<8x3xf32>, tensor<8x2xf32>
}

// Not matched: a result also read whole, overlapping slices, a slice of a
// row range, and a weight that is a graph input.
// CHECK-LABEL: func.func @not_fused(
// CHECK-COUNT-4: dnn.matmul
// CHECK-NOT: dnn.matmul
func.func @not_fused(%x: tensor<8x4xf32>, %in: tensor<4x6xf32>, %w: tensor<4x6xf32> {dnn.name = "w", dnn.weight_ref}) -> (tensor<8x6xf32>, tensor<8x3xf32>, tensor<8x3xf32>, tensor<8x4xf32>, tensor<4x2xf32>, tensor<4x2xf32>, tensor<8x3xf32>, tensor<8x3xf32>) {
  %y0 = dnn.matmul %x, %w : (tensor<8x4xf32>, tensor<4x6xf32>) -> tensor<8x6xf32>
  %a0 = dnn.slice %y0 starts = [0, 0] steps = [1, 1] : tensor<8x6xf32> -> tensor<8x3xf32>
  %b0 = dnn.slice %y0 starts = [0, 3] steps = [1, 1] : tensor<8x6xf32> -> tensor<8x3xf32>
  %y1 = dnn.matmul %x, %w : (tensor<8x4xf32>, tensor<4x6xf32>) -> tensor<8x6xf32>
  %a1 = dnn.slice %y1 starts = [0, 0] steps = [1, 1] : tensor<8x6xf32> -> tensor<8x4xf32>
  %y2 = dnn.matmul %x, %w : (tensor<8x4xf32>, tensor<4x6xf32>) -> tensor<8x6xf32>
  %a2 = dnn.slice %y2 starts = [0, 0] steps = [1, 1] : tensor<8x6xf32> -> tensor<4x2xf32>
  %b2 = dnn.slice %y2 starts = [4, 2] steps = [1, 1] : tensor<8x6xf32> -> tensor<4x2xf32>
  %y3 = dnn.matmul %x, %in : (tensor<8x4xf32>, tensor<4x6xf32>) -> tensor<8x6xf32>
  %a3 = dnn.slice %y3 starts = [0, 0] steps = [1, 1] : tensor<8x6xf32> -> tensor<8x3xf32>
  %b3 = dnn.slice %y3 starts = [0, 3] steps = [1, 1] : tensor<8x6xf32> -> tensor<8x3xf32>
  return %y0, %a0, %b0, %a1, %a2, %b2, %a3, %b3 : tensor<8x6xf32>, tensor<8x3xf32>, tensor<8x3xf32>, tensor<8x4xf32>, tensor<4x2xf32>, tensor<4x2xf32>, tensor<8x3xf32>, tensor<8x3xf32>
}

// A projection reshaped to a scalar has no column to keep: left alone, no
// crash (found by the differential fuzzer, seed 165).
// CHECK-LABEL: func.func @scalar_result(
// CHECK: dnn.matmul
// CHECK-NEXT: dnn.reshape
func.func @scalar_result(%x: tensor<1x1xf32>) -> tensor<f32> {
  %w = dnn.constant dense<0.5> : tensor<1x1xf32>
  %y = dnn.matmul %x, %w : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %s = dnn.reshape %y : tensor<1x1xf32> -> tensor<f32>
  return %s : tensor<f32>
}

// The location aliases, printed after the module.
// CHECK: #[[WQLOC]] = loc("qkv.weight[0:2]")
