// RUN: dnnc-opt %s --split-input-file --dist-split-constant-expressions | FileCheck %s

// A broadcast constant shared by two adds: one use keeps the original, the
// other gets a copy right before it (of the broadcast: the constant it
// reads had one use when the pass started).

// CHECK-LABEL: func.func @shared_broadcast
func.func @shared_broadcast(%x: tensor<2x4xf32>, %y: tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>) {
  // CHECK: %[[C:.*]] = dnn.constant dense<5.000000e-01> : tensor<f32>
  // CHECK-NEXT: %[[B:.*]] = dnn.broadcast_in_dim %[[C]]
  // CHECK-NEXT: %[[B2:.*]] = dnn.broadcast_in_dim %[[C]]
  // CHECK-NEXT: dnn.add %{{.*}}, %[[B2]]
  // CHECK-NEXT: dnn.add %{{.*}}, %[[B]]
  %c = dnn.constant dense<0.5> : tensor<f32>
  %b = dnn.broadcast_in_dim %c, dims = [] : tensor<f32> -> tensor<2x4xf32>
  %0 = dnn.add %x, %b : tensor<2x4xf32>
  %1 = dnn.add %y, %b : tensor<2x4xf32>
  return %0, %1 : tensor<2x4xf32>, tensor<2x4xf32>
}

// -----

// Pipeline stages: each copy sits in its user's stage (the original's stage
// 0 would put a stage-0 op among stage-1 ops, which the pipeline passes
// refuse); a copy for a user without a stage has none either.

// CHECK-LABEL: func.func @staged
func.func @staged(%x: tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>) {
  // CHECK: %[[B:.*]] = dnn.broadcast_in_dim {{.*}} {dist.stage = 0 : i64}
  // CHECK: dnn.broadcast_in_dim %{{[^ ]*}}, dims = [] {dist.stage = 0 : i64}
  // CHECK-NEXT: dnn.add {{.*}} {dist.stage = 0 : i64}
  // CHECK-NEXT: dnn.broadcast_in_dim %{{[^ ]*}}, dims = [] {dist.stage = 1 : i64}
  // CHECK-NEXT: dnn.add {{.*}} {dist.stage = 1 : i64}
  // CHECK-NEXT: dnn.add %{{[^ ]*}}, %[[B]] : tensor<2x4xf32>
  %c = dnn.constant {dist.stage = 0 : i64} dense<0.5> : tensor<f32>
  %b = dnn.broadcast_in_dim %c, dims = [] {dist.stage = 0 : i64} : tensor<f32> -> tensor<2x4xf32>
  %0 = dnn.add %x, %b {dist.stage = 0 : i64} : tensor<2x4xf32>
  %1 = dnn.add %0, %b {dist.stage = 1 : i64} : tensor<2x4xf32>
  %3 = dnn.add %1, %b : tensor<2x4xf32>
  return %1, %3 : tensor<2x4xf32>, tensor<2x4xf32>
}
