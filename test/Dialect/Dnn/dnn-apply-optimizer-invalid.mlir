// RUN: not dnnc-opt %s -split-input-file --dnn-apply-optimizer="optimizer=lamb" 2>&1 | FileCheck %s --check-prefix=NAME
// NAME: error: dnn-apply-optimizer: optimizer=lamb: expected sgd or adamw
// RUN: not dnnc-opt %s -split-input-file --dnn-apply-optimizer="lr-schedule=cosine total-steps=3 warmup-steps=3" 2>&1 | FileCheck %s --check-prefix=COSINE
// COSINE: error: dnn-apply-optimizer: lr-schedule=cosine: needs total-steps greater than warmup-steps
// RUN: not dnnc-opt %s -split-input-file --dnn-apply-optimizer="beta2=1.0" 2>&1 | FileCheck %s --check-prefix=BETA
// BETA: error: dnn-apply-optimizer: betas=0.9,1: expected two numbers in [0, 1)
// RUN: not dnnc-opt %s -split-input-file --dnn-apply-optimizer="optimizer=adamw nesterov=true" 2>&1 | FileCheck %s --check-prefix=NESTEROV
// NESTEROV: error: dnn-apply-optimizer: nesterov: needs optimizer=sgd and a momentum > 0
// RUN: not dnnc-opt %s -split-input-file --dnn-apply-optimizer 2>&1 | FileCheck %s --check-prefix=TWO
// TWO: error: dnn-apply-optimizer: @main returns more than one result that is not a gradient
// RUN: not dnnc-opt %s -split-input-file --dnn-apply-optimizer="lr=-1" 2>&1 | FileCheck %s --check-prefix=LR
// LR: error: dnn-apply-optimizer: lr=-1: expected a finite number >= 0
// RUN: not dnnc-opt %s -split-input-file --dnn-apply-optimizer 2>&1 | FileCheck %s --check-prefix=SCALEARG

// Two results, neither a gradient: not what dnn-autodiff leaves.
func.func @main(%x: tensor<2xf32>) -> (tensor<f32>, tensor<2xf32>) {
  %0 = dnn.reduce_sum %x axes = [0] keep_dims = false : tensor<2xf32> -> tensor<f32>
  return %0, %x : tensor<f32>, tensor<2xf32>
}

// -----

// SCALEARG: dnn-apply-optimizer: a loss scale needs both the dnn.loss_scale argument and result of dnn-autodiff{loss-scale}
func.func @main(%p: tensor<4xf32> {dnn.name = "p", dnn.trainable},
                %l: tensor<f32>, %s: tensor<f32>, %g: tensor<4xf32>)
    -> (tensor<f32> {dnn.name = "loss"},
        tensor<f32> {dnn.loss_scale = 1024.0 : f64, dnn.name = "loss_scale"},
        tensor<4xf32> {dnn.gradient_of = 0 : i64, dnn.name = "p_grad"}) {
  return %l, %s, %g : tensor<f32>, tensor<f32>, tensor<4xf32>
}
