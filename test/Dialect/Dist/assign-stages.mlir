// RUN: dnnc-opt %s --dist-assign-stages='stages=2 microbatches=4 schedule=1f1b stage-starts=fc2' --split-input-file --verify-diagnostics | FileCheck %s

// Stage 1 starts at the first op named "fc2": the ops before it (fc1's)
// are stage 0, it and the ops after it (the loss's) stage 1. The module
// gets the pipeline; no mesh exists yet, so its axis is not checked.

// CHECK: dist.pipeline = #dist.pipeline<axis = "pp", stages = 2, microbatches = 4, schedule = "1f1b">
// CHECK: dnn.matmul {{.*}} {dist.stage = 0 : i64}
// CHECK: dnn.relu {{.*}} {dist.stage = 0 : i64}
// CHECK: dnn.matmul {{.*}} {dist.stage = 1 : i64}
// CHECK: dnn.reduce_sum {{.*}} {dist.stage = 1 : i64}
func.func @main(%x: tensor<4x8xf32>, %w1: tensor<8x8xf32>, %w2: tensor<8x8xf32>) -> tensor<f32> {
  %0 = dnn.matmul %x, %w1 : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32> loc("fc1")
  %1 = dnn.relu %0 : tensor<4x8xf32> loc("fc1")
  %2 = dnn.matmul %1, %w2 : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32> loc("fc2")
  %3 = dnn.reduce_sum %2 axes = [0, 1] keep_dims = false : tensor<4x8xf32> -> tensor<f32> loc("loss")
  return %3 : tensor<f32>
}

// -----

// expected-error @+1 {{dist-assign-stages: no op of @main named 'fc2' (the start of stage 1) follows the start of stage 0}}
module {
  func.func @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
    %0 = dnn.relu %x : tensor<4x8xf32> loc("fc1")
    return %0 : tensor<4x8xf32>
  }
}
