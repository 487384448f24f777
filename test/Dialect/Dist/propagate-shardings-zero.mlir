// RUN: dnnc-opt %s --dnn-autodiff=parameters-only=true --dnn-apply-optimizer="optimizer=sgd momentum=0.9" --dist-propagate-shardings="dp-axis=dp zero-axis=dp" 2>/dev/null | FileCheck %s
// RUN: dnnc-opt %s --dnn-autodiff=parameters-only=true --dnn-apply-optimizer="optimizer=sgd momentum=0.9" --dist-propagate-shardings="dp-axis=dp zero-axis=dp" --dist-partition 2>/dev/null | FileCheck %s --check-prefix=PART

// ZeRO-1 on a training step: the parameter keeps its (replicated) layout,
// its optimizer state is split over dp, and so is the update.
// CHECK-LABEL: func.func @main
// CHECK-SAME: %arg1: tensor<8x4xf32> {dist.sharding = #dist.sharding<@mesh, [{}, {}]>, dnn.name = "w"
// CHECK-SAME: %arg2: tensor<8x4xf32> {dist.sharding = #dist.sharding<@mesh, [{"dp"}, {}]>, dnn.name = "w.momentum_buffer"
// CHECK-SAME: tensor<8x4xf32> {dist.sharding = #dist.sharding<@mesh, [{}, {}]>, dnn.name = "w", dnn.updates = 1 : i64}
// CHECK-SAME: tensor<8x4xf32> {dist.sharding = #dist.sharding<@mesh, [{"dp"}, {}]>, dnn.name = "w.momentum_buffer", dnn.updates = 2 : i64}

// Partitioned: the gradient sum is reduce-scattered, the state is a
// block, the new parameter is gathered.
// PART-LABEL: func.func @main
// PART-SAME: %arg2: tensor<4x4xf32> {{.*}}dnn.name = "w.momentum_buffer"
// PART: dist.reduce_scatter sum {{.*}} : tensor<8x4xf32> -> tensor<4x4xf32>
// PART: %[[NEW:.*]] = dist.all_gather {{.*}} gather_dim = 0 : tensor<4x4xf32> -> tensor<8x4xf32>
// PART: return %{{.*}}, %[[NEW]], %{{.*}} : tensor<f32>, tensor<8x4xf32>, tensor<4x4xf32>
dist.mesh @mesh ["dp" = 2 : inter]

func.func @main(%x: tensor<4x8xf32> {dnn.name = "x"},
    %w: tensor<8x4xf32> {dnn.name = "w", dnn.trainable, dnn.weight = dense<0.5> : tensor<8x4xf32>}) -> (tensor<f32> {dnn.name = "loss"}) {
  %0 = dnn.matmul %x, %w : (tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<4x4xf32>
  %1 = dnn.reduce_sum %0 axes = [0, 1] keep_dims = false : tensor<4x4xf32> -> tensor<f32>
  return %1 : tensor<f32>
}
