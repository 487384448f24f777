// RUN: dnnc-opt %s --dnn-autodiff | FileCheck %s

// loss = sum(relu(x @ w)): the results become the loss and one gradient
// per float argument, named after it; the matmul's cotangents are the
// transposed products, relu's a select on x @ w > 0, the sum's a broadcast.

// CHECK-LABEL: func.func @main
// CHECK-SAME: -> (tensor<f32> {dnn.name = "loss"}, tensor<2x3xf32> {dnn.gradient_of = 0 : i64, dnn.name = "x_grad"}, tensor<3x4xf32> {dnn.gradient_of = 1 : i64, dnn.name = "w_grad"})
// CHECK: %[[Y:.*]] = dnn.matmul %arg0, %arg1
// CHECK: %[[R:.*]] = dnn.relu %[[Y]]
// CHECK: %[[L:.*]] = dnn.reduce_sum %[[R]]
// CHECK: %[[ONE:.*]] = dnn.constant dense<1.000000e+00> : tensor<f32>
// CHECK: %[[DR:.*]] = dnn.broadcast_in_dim
// CHECK: dnn.greater %[[Y]]
// CHECK: %[[DY:.*]] = dnn.select
// CHECK: %[[WT:.*]] = dnn.transpose %arg1
// CHECK: %[[DX:.*]] = dnn.matmul %[[DY]], %[[WT]]
// CHECK: %[[XT:.*]] = dnn.transpose %arg0
// CHECK: %[[DW:.*]] = dnn.matmul %[[XT]], %[[DY]]
// CHECK: return %[[L]], %[[DX]], %[[DW]]
func.func @main(%x: tensor<2x3xf32> {dnn.name = "x"}, %w: tensor<3x4xf32> {dnn.name = "w"}) -> (tensor<f32> {dnn.name = "loss"}) {
  %0 = dnn.matmul %x, %w : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  %1 = dnn.relu %0 : tensor<2x4xf32>
  %2 = dnn.reduce_sum %1 axes = [0, 1] keep_dims = false : tensor<2x4xf32> -> tensor<f32>
  return %2 : tensor<f32>
}
