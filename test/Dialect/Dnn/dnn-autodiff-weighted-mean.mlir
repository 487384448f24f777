// RUN: dnnc-opt %s --dnn-autodiff | FileCheck %s

// A cross-entropy averaged over the labels that are not ignored becomes its
// sum over their count (computed from the labels alone), before the
// gradient: sums split over data-parallel ranks and micro-batches.

// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[S:[^:]*]]: tensor<4x5xf32> {{.*}}, %[[L:[^:]*]]: tensor<4xi64>
// CHECK: %[[SUM:.*]], %{{.*}} = dnn.softmax_cross_entropy %[[S]], %[[L]] reduction = <sum> {ignore_index = -100 : i64}
// CHECK: %[[IGN:.*]] = dnn.constant dense<-100> : tensor<4xi64>
// CHECK: %[[HIT:.*]] = dnn.equal %[[L]], %[[IGN]]
// CHECK: %[[W:.*]] = dnn.select %[[HIT]], %{{.*}}, %{{.*}} : tensor<4xi1>, tensor<4xf32>
// CHECK: %[[COUNT:.*]] = dnn.reduce_sum %[[W]] axes = [0] keep_dims = false
// CHECK: %[[LOSS:.*]] = dnn.div %[[SUM]], %[[COUNT]] : tensor<f32>
// CHECK-NOT: reduction = <mean>
// CHECK: return %[[LOSS]]
func.func @main(%s: tensor<4x5xf32> {dnn.name = "scores"}, %l: tensor<4xi64> {dnn.name = "labels"}) -> (tensor<f32> {dnn.name = "loss"}) {
  %loss, %lp = dnn.softmax_cross_entropy %s, %l reduction = <mean> {ignore_index = -100 : i64} : (tensor<4x5xf32>, tensor<4xi64>) -> (tensor<f32>, tensor<4x5xf32>)
  return %loss : tensor<f32>
}
