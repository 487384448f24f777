// RUN: dnnc-opt %s --dnn-autodiff=loss=out | FileCheck %s

// A value used twice gets the sum of its cotangents; an integer argument
// gets no gradient, an argument the loss does not depend on a zero one, and
// the loss is the result named by the option.

// CHECK-LABEL: func.func @main
// CHECK-SAME: -> (tensor<1xf32> {dnn.name = "out"}, tensor<4xf32> {dnn.gradient_of = 0 : i64, dnn.name = "a_grad"}, tensor<4xf32> {dnn.gradient_of = 2 : i64, dnn.name = "unused_grad"})
// CHECK: dnn.constant dense<1.000000e+00>
// CHECK: %[[A:.*]] = dnn.mul %{{.*}}, %arg0
// CHECK: %[[B:.*]] = dnn.mul %{{.*}}, %arg0
// CHECK: %[[SUM:.*]] = dnn.add %[[A]], %[[B]]
// CHECK: %[[ZERO:.*]] = dnn.constant dense<0.000000e+00> : tensor<4xf32>
// CHECK: return %{{.*}}, %[[SUM]], %[[ZERO]]
func.func @main(%a: tensor<4xf32> {dnn.name = "a"}, %i: tensor<4xi64> {dnn.name = "i"}, %u: tensor<4xf32> {dnn.name = "unused"}) -> (tensor<1xf32> {dnn.name = "other"}, tensor<1xf32> {dnn.name = "out"}) {
  %0 = dnn.mul %a, %a : tensor<4xf32>
  %1 = dnn.reduce_sum %0 axes = [0] keep_dims = true : tensor<4xf32> -> tensor<1xf32>
  %2 = dnn.reduce_sum %u axes = [0] keep_dims = true : tensor<4xf32> -> tensor<1xf32>
  return %2, %1 : tensor<1xf32>, tensor<1xf32>
}
