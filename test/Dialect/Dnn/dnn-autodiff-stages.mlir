// RUN: dnnc-opt %s --dnn-autodiff | FileCheck %s

// The gradient ops of a forward op run in the backward of its pipeline
// stage (`dist.backward`): those of the second matmul (stage 1) in stage 1's,
// those of the first (stage 0) in stage 0's. The forward ops stay as they are.
// CHECK-LABEL: func.func @main
// CHECK: dnn.matmul %arg0, %arg1 {dist.stage = 0 : i64}
// CHECK: dnn.matmul %{{.*}}, %arg2 {dist.stage = 1 : i64}
// CHECK: dnn.reduce_sum {{.*}} {dist.stage = 1 : i64}
// CHECK-NOT: dist.backward
// The seed of the loss, on the loss's stage.
// CHECK: dnn.constant {dist.backward, dist.stage = 1 : i64} dense<1.000000e+00>
// The cotangent of the second matmul's operands: stage 1.
// CHECK: dnn.transpose %arg2, permutation = [1, 0] {dist.backward, dist.stage = 1 : i64}
// CHECK: dnn.matmul {{.*}} {dist.backward, dist.stage = 1 : i64}
// The first matmul's weight gradient: stage 0.
// CHECK: dnn.transpose %arg0, permutation = [1, 0] {dist.backward, dist.stage = 0 : i64}
// CHECK: dnn.matmul {{.*}} {dist.backward, dist.stage = 0 : i64}
func.func @main(%x: tensor<2x3xf32> {dnn.name = "x"}, %w1: tensor<3x4xf32> {dnn.name = "w1"}, %w2: tensor<4x5xf32> {dnn.name = "w2"}) -> (tensor<f32> {dnn.name = "loss"}) {
  %0 = dnn.matmul %x, %w1 {dist.stage = 0 : i64} : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  %1 = dnn.matmul %0, %w2 {dist.stage = 1 : i64} : (tensor<2x4xf32>, tensor<4x5xf32>) -> tensor<2x5xf32>
  %2 = dnn.reduce_sum %1 axes = [0, 1] keep_dims = false {dist.stage = 1 : i64} : tensor<2x5xf32> -> tensor<f32>
  return %2 : tensor<f32>
}
