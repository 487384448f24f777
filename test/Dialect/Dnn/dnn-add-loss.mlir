// RUN: dnnc-opt %s --dnn-add-loss="kind=cross-entropy output=logits target=labels" | FileCheck %s --check-prefix=CE
// RUN: dnnc-opt %s --dnn-add-loss="kind=mse output=logits target=y" | FileCheck %s --check-prefix=MSE

// Cross-entropy: classes last, the other dims flattened into positions;
// the labels are a new i64 argument; the other outputs are dropped.
// CE-LABEL: func.func @main
// CE-SAME: %arg1: tensor<2x5xi64> {dnn.name = "labels"}) -> (tensor<f32> {dnn.name = "loss"})
// CE: %[[S:.*]] = dnn.reshape %{{.*}} : tensor<2x5x7xf32> -> tensor<10x7xf32>
// CE: %[[L:.*]] = dnn.reshape %arg1 : tensor<2x5xi64> -> tensor<10xi64>
// CE: %[[LOSS:.*]], %{{.*}} = dnn.softmax_cross_entropy %[[S]], %[[L]] reduction = <mean>
// CE: return %[[LOSS]] : tensor<f32>

// Mean squared error: the target has the output's type.
// MSE-LABEL: func.func @main
// MSE-SAME: %arg1: tensor<2x5x7xf32> {dnn.name = "y"}) -> (tensor<f32> {dnn.name = "loss"})
// MSE: %[[D:.*]] = dnn.sub %{{.*}}, %arg1
// MSE: %[[SQ:.*]] = dnn.mul %[[D]], %[[D]]
// MSE: %[[LOSS:.*]] = dnn.reduce_mean %[[SQ]] axes = [0, 1, 2] keep_dims = false
// MSE: return %[[LOSS]] : tensor<f32>
func.func @main(%x: tensor<2x5x7xf32> {dnn.name = "x"}) -> (tensor<2x5x7xf32> {dnn.name = "logits"}, tensor<2x5x7xf32> {dnn.name = "other"}) {
  %0 = dnn.tanh %x : tensor<2x5x7xf32>
  return %0, %x : tensor<2x5x7xf32>, tensor<2x5x7xf32>
}
