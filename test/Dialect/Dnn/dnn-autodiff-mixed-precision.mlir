// RUN: dnnc-opt %s --dnn-autodiff="parameters-only loss-scale=1024" | FileCheck %s

// A forward converted to bf16 (dnn-convert-precision) with an f32 master
// parameter read through a cast. Dynamic loss scaling: a new state argument
// (the exponent), the seed 1024 * 2^e (returned after the loss), and the
// gradient ops follow the forward's precision: the bias gradient's sum over
// the batch, built on bf16 values by the broadcast's rule, computes in f32;
// the master weight gets an f32 gradient from the cast's rule.

// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[B:[^:]*]]: tensor<4xf32> {dnn.name = "b", dnn.trainable
// CHECK-SAME: %[[E:[^:]*]]: tensor<f32> {dnn.loss_scale = 1.024000e+03 : f64, dnn.name = "loss_scale_exponent", dnn.state, dnn.weight = dense<0.000000e+00> : tensor<f32>})
// CHECK-SAME: -> (tensor<f32> {dnn.name = "loss"}, tensor<f32> {dnn.loss_scale = 1.024000e+03 : f64, dnn.name = "loss_scale"}, tensor<4xf32> {dnn.gradient_of = 1 : i64, dnn.name = "b_grad"})
// CHECK: %[[LOSS:.*]] = dnn.reduce_sum %{{.*}} axes = [0, 1]
// CHECK: %[[TWO:.*]] = dnn.constant dense<2.000000e+00> : tensor<f32>
// CHECK: %[[POW:.*]] = dnn.pow %[[TWO]], %[[E]]
// CHECK: %[[INIT:.*]] = dnn.constant dense<1.024000e+03> : tensor<f32>
// CHECK: %[[SCALE:.*]] = dnn.mul %[[INIT]], %[[POW]]
// CHECK: %[[UP:.*]] = dnn.cast %{{.*}} : tensor<2x4xbf16> -> tensor<2x4xf32>
// CHECK: %[[SUM:.*]] = dnn.reduce_sum %[[UP]] axes = [0] keep_dims = true : tensor<2x4xf32> -> tensor<1x4xf32>
// CHECK: %[[DOWN:.*]] = dnn.cast %[[SUM]] : tensor<1x4xf32> -> tensor<1x4xbf16>
// CHECK: %[[FLAT:.*]] = dnn.reshape %[[DOWN]] : tensor<1x4xbf16> -> tensor<4xbf16>
// CHECK: %[[GRAD:.*]] = dnn.cast %[[FLAT]] : tensor<4xbf16> -> tensor<4xf32>
// CHECK: return %[[LOSS]], %[[SCALE]], %[[GRAD]]
module attributes {dnn.precision = #dnn.precision<bf16>} {
  func.func @main(%x: tensor<2x4xf32> {dnn.name = "x"},
                  %b: tensor<4xf32> {dnn.name = "b", dnn.trainable, dnn.weight = dense<0.5> : tensor<4xf32>})
      -> (tensor<f32> {dnn.name = "loss"}) {
    %0 = dnn.cast %x : tensor<2x4xf32> -> tensor<2x4xbf16>
    %1 = dnn.cast %b : tensor<4xf32> -> tensor<4xbf16>
    %2 = dnn.broadcast_in_dim %1, dims = [1] : tensor<4xbf16> -> tensor<2x4xbf16>
    %3 = dnn.add %0, %2 : tensor<2x4xbf16>
    %4 = dnn.cast %3 : tensor<2x4xbf16> -> tensor<2x4xf32>
    %5 = dnn.reduce_sum %4 axes = [0, 1] keep_dims = false : tensor<2x4xf32> -> tensor<f32>
    return %5 : tensor<f32>
  }
}
