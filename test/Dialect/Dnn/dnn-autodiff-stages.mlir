// RUN: dnnc-opt %s --dnn-autodiff | FileCheck %s

// The gradient ops of a forward op run in its pipeline stage: those of the
// second matmul (stage 1) on stage 1, those of the first (stage 0) on
// stage 0.
// CHECK-LABEL: func.func @main
// CHECK: dnn.matmul %arg0, %arg1 {dist.stage = 0 : i64}
// CHECK: dnn.matmul %{{.*}}, %arg2 {dist.stage = 1 : i64}
// CHECK: dnn.reduce_sum {{.*}} {dist.stage = 1 : i64}
// The seed of the loss, on the loss's stage.
// CHECK: dnn.constant {dist.stage = 1 : i64} dense<1.000000e+00>
// The cotangent of the second matmul's operands: stage 1.
// CHECK: dnn.transpose %arg2, permutation = [1, 0] {dist.stage = 1 : i64}
// CHECK: dnn.matmul {{.*}} {dist.stage = 1 : i64}
// The first matmul's weight gradient: stage 0.
// CHECK: dnn.transpose %arg0, permutation = [1, 0] {dist.stage = 0 : i64}
// CHECK: dnn.matmul {{.*}} {dist.stage = 0 : i64}
func.func @main(%x: tensor<2x3xf32> {dnn.name = "x"}, %w1: tensor<3x4xf32> {dnn.name = "w1"}, %w2: tensor<4x5xf32> {dnn.name = "w2"}) -> (tensor<f32> {dnn.name = "loss"}) {
  %0 = dnn.matmul %x, %w1 {dist.stage = 0 : i64} : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  %1 = dnn.matmul %0, %w2 {dist.stage = 1 : i64} : (tensor<2x4xf32>, tensor<4x5xf32>) -> tensor<2x5xf32>
  %2 = dnn.reduce_sum %1 axes = [0, 1] keep_dims = false {dist.stage = 1 : i64} : tensor<2x5xf32> -> tensor<f32>
  return %2 : tensor<f32>
}
