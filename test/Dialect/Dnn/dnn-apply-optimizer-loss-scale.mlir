// RUN: dnnc-opt %s --dnn-apply-optimizer="optimizer=adamw loss-scale-growth-interval=3" | FileCheck %s

// Dynamic loss scaling (after dnn-autodiff{loss-scale=1024}): the gradient is
// divided by the step's scale; a NaN sum of g * 0 marks an overflow, which
// keeps the parameter and its moments, halves the scale (exponent - 1) and
// restarts the growth counter; otherwise the counter counts up and at 3 the
// exponent grows by 1. AdamW's bias corrections count the updates made
// (optimizer_steps + 1), not the step number.

// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[P:[^:]*]]: tensor<4xf32> {dnn.name = "p", dnn.trainable
// CHECK-SAME: %[[E:[^:]*]]: tensor<f32> {dnn.loss_scale = 1.024000e+03 : f64, dnn.name = "loss_scale_exponent", dnn.state
// CHECK-SAME: %[[LOSS:[^:]*]]: tensor<f32>, %[[SCALE:[^:]*]]: tensor<f32>, %[[G:[^:]*]]: tensor<4xf32>,
// CHECK-SAME: %[[M:[^:]*]]: tensor<4xf32> {dnn.name = "p.exp_avg", dnn.state
// CHECK-SAME: %[[V:[^:]*]]: tensor<4xf32> {dnn.name = "p.exp_avg_sq", dnn.state
// CHECK-SAME: %{{[^:]*}}: tensor<f32> {dnn.name = "step", dnn.step}
// CHECK-SAME: %[[T:[^:]*]]: tensor<f32> {dnn.name = "loss_scale_growth_tracker", dnn.state, dnn.weight = dense<0.000000e+00> : tensor<f32>}
// CHECK-SAME: %[[N:[^:]*]]: tensor<f32> {dnn.name = "optimizer_steps", dnn.state, dnn.weight = dense<0.000000e+00> : tensor<f32>})
// CHECK-SAME: -> (tensor<f32> {dnn.name = "loss"}, tensor<f32> {dnn.name = "loss_scale"}, tensor<f32> {dnn.name = "skipped_step"},
// CHECK-SAME: {dnn.name = "loss_scale_exponent", dnn.updates = 1 : i64}, tensor<f32> {dnn.name = "loss_scale_growth_tracker", dnn.updates = 8 : i64}, tensor<f32> {dnn.name = "optimizer_steps", dnn.updates = 9 : i64})
// CHECK: %[[INV:.*]] = dnn.div %{{.*}}, %[[SCALE]] : tensor<f32>
// CHECK: %[[INVB:.*]] = dnn.broadcast_in_dim %[[INV]], dims = []
// CHECK: %[[UG:.*]] = dnn.mul %[[G]], %[[INVB]] : tensor<4xf32>
// CHECK: %[[Z:.*]] = dnn.mul %[[UG]], %{{.*}} : tensor<4xf32>
// CHECK: %[[ZS:.*]] = dnn.reduce_sum %[[Z]] axes = [0]
// CHECK: %[[OVER:.*]] = dnn.is_nan %[[ZS]] : tensor<f32> -> tensor<i1>
// CHECK: %[[COUNT:.*]] = dnn.add %[[N]], %{{.*}} : tensor<f32>
// CHECK: %[[COUNT64:.*]] = dnn.cast %[[COUNT]] : tensor<f32> -> tensor<f64>
// CHECK: dnn.pow %{{.*}}, %[[COUNT64]] : tensor<f64>
// CHECK: %[[NEWP:.*]] = dnn.add %[[P]], %{{.*}} : tensor<4xf32>
// CHECK: %[[OB:.*]] = dnn.broadcast_in_dim %[[OVER]], dims = [] : tensor<i1> -> tensor<4xi1>
// CHECK: %[[KEEPP:.*]] = dnn.select %[[OB]], %[[P]], %[[NEWP]]
// CHECK: %[[KEEPM:.*]] = dnn.select %{{.*}}, %[[M]], %{{.*}}
// CHECK: %[[KEEPV:.*]] = dnn.select %{{.*}}, %[[V]], %{{.*}}
// CHECK: %[[GOOD:.*]] = dnn.add %[[T]], %[[ONE:.*]] : tensor<f32>
// CHECK: %[[GROW:.*]] = dnn.greater_equal %[[GOOD]], %{{.*}} : tensor<f32> -> tensor<i1>
// CHECK: %[[UP:.*]] = dnn.add %[[E]], %[[ONE]]
// CHECK: %[[UPE:.*]] = dnn.select %[[GROW]], %[[UP]], %[[E]]
// CHECK: %[[DOWN:.*]] = dnn.sub %[[E]], %[[ONE]]
// CHECK: %[[NEWE:.*]] = dnn.select %[[OVER]], %[[DOWN]], %[[UPE]]
// CHECK: %[[T1:.*]] = dnn.select %[[GROW]], %[[ZERO:.*]], %[[GOOD]]
// CHECK: %[[NEWT:.*]] = dnn.select %[[OVER]], %[[ZERO]], %[[T1]]
// CHECK: %[[NEWN:.*]] = dnn.select %[[OVER]], %[[N]], %{{.*}} : tensor<i1>, tensor<f32>
// CHECK: %[[SKIPPED:.*]] = dnn.select %[[OVER]], %{{.*}}, %{{.*}} : tensor<i1>, tensor<f32>
// CHECK: return %[[LOSS]], %[[SCALE]], %[[SKIPPED]], %[[KEEPP]], %[[KEEPM]], %[[KEEPV]], %[[NEWE]], %[[NEWT]], %[[NEWN]]
func.func @main(%p: tensor<4xf32> {dnn.name = "p", dnn.trainable, dnn.weight = dense<0.5> : tensor<4xf32>},
                %e: tensor<f32> {dnn.loss_scale = 1024.0 : f64, dnn.name = "loss_scale_exponent", dnn.state, dnn.weight = dense<0.0> : tensor<f32>},
                %l: tensor<f32>, %s: tensor<f32>, %g: tensor<4xf32>)
    -> (tensor<f32> {dnn.name = "loss"},
        tensor<f32> {dnn.loss_scale = 1024.0 : f64, dnn.name = "loss_scale"},
        tensor<4xf32> {dnn.gradient_of = 0 : i64, dnn.name = "p_grad"}) {
  return %l, %s, %g : tensor<f32>, tensor<f32>, tensor<4xf32>
}
