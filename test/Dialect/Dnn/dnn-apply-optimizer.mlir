// RUN: dnnc-opt %s -split-input-file --dnn-apply-optimizer="optimizer=sgd lr=0.1 momentum=0.9" | FileCheck %s --check-prefix=SGD
// RUN: dnnc-opt %s -split-input-file --dnn-apply-optimizer="optimizer=adamw weight-decay=0.01 clip-grad-norm=1.0 lr-schedule=cosine warmup-steps=2 total-steps=10" | FileCheck %s --check-prefix=ADAMW

// The gradient program dnn-autodiff{parameters-only} leaves: the loss, then
// one gradient per parameter. The parameter whose gradient is a zero
// constant (nothing reaches it) is not updated, as PyTorch skips
// parameters without a gradient.

// SGD-LABEL: func.func @main
// SGD-SAME: %arg3: tensor<3x4xf32> {dnn.name = "w.momentum_buffer", dnn.state, dnn.weight = dense<0.000000e+00> : tensor<3x4xf32>}
// SGD-SAME: %arg4: tensor<f32> {dnn.name = "step", dnn.step}
// SGD-SAME: -> (tensor<f32> {dnn.name = "loss"}, tensor<3x4xf32> {dnn.name = "w", dnn.updates = 1 : i64}, tensor<3x4xf32> {dnn.name = "w.momentum_buffer", dnn.updates = 3 : i64})
// SGD: %[[MOM:.*]] = dnn.constant dense<0.899999976> : tensor<3x4xf32>
// SGD: %[[DECAYED:.*]] = dnn.mul %arg3, %[[MOM]]
// SGD: %[[BUF:.*]] = dnn.add %[[DECAYED]], %arg0
// SGD: %[[NEGLR:.*]] = dnn.broadcast_in_dim %{{.*}}, dims = [] : tensor<f32> -> tensor<3x4xf32>
// SGD: %[[STEP:.*]] = dnn.mul %[[NEGLR]], %[[BUF]]
// SGD: %[[NEW:.*]] = dnn.add %arg1, %[[STEP]]
// SGD: return %{{.*}}, %[[NEW]], %[[BUF]] :

// AdamW: two states per parameter, the global norm clip, the bias
// corrections from the step number, the warm-up and the cosine.
// ADAMW-LABEL: func.func @main
// ADAMW-SAME: {dnn.name = "w.exp_avg", dnn.state
// ADAMW-SAME: {dnn.name = "w.exp_avg_sq", dnn.state
// ADAMW-SAME: {dnn.name = "step", dnn.step}
// ADAMW-SAME: {dnn.name = "w", dnn.updates = 1 : i64}, tensor<3x4xf32> {dnn.name = "w.exp_avg", dnn.updates = 3 : i64}, tensor<3x4xf32> {dnn.name = "w.exp_avg_sq", dnn.updates = 4 : i64})
// ADAMW: dnn.cast %arg5 : tensor<f32> -> tensor<f64>
// ADAMW: dnn.mul %arg0, %arg0
// ADAMW: dnn.reduce_sum {{.*}} axes = [0, 1] keep_dims = false
// ADAMW: dnn.sqrt {{.*}} : tensor<f32>
// ADAMW: dnn.min {{.*}} : tensor<f32>
// ADAMW: dnn.cos {{.*}} : tensor<f64>
// ADAMW: dnn.select {{.*}} : tensor<i1>, tensor<f64>
// ADAMW: dnn.pow {{.*}} : tensor<f64>
// ADAMW: dnn.pow {{.*}} : tensor<f64>
// ADAMW: dnn.sqrt {{.*}} : tensor<3x4xf32>
func.func @main(%gw: tensor<3x4xf32>, %w: tensor<3x4xf32> {dnn.name = "w", dnn.trainable, dnn.weight = dense<1.0> : tensor<3x4xf32>}, %u: tensor<2xf32> {dnn.name = "u", dnn.trainable, dnn.weight = dense<1.0> : tensor<2xf32>}) -> (tensor<f32> {dnn.name = "loss"}, tensor<3x4xf32> {dnn.gradient_of = 1 : i64, dnn.name = "w_grad"}, tensor<2xf32> {dnn.gradient_of = 2 : i64, dnn.name = "u_grad"}) {
  %loss = dnn.reduce_sum %gw axes = [0, 1] keep_dims = false : tensor<3x4xf32> -> tensor<f32>
  %zero = dnn.constant dense<0.0> : tensor<2xf32>
  return %loss, %gw, %zero : tensor<f32>, tensor<3x4xf32>, tensor<2xf32>
}
