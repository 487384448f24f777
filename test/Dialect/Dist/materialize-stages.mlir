// RUN: dnnc-opt %s --dist-materialize-stages --split-input-file | FileCheck %s

// Three "layers" over two stages, cut inside the second layer: stage 0
// holds layer 1 and the first op of layer 2, stage 1 the rest. The value
// crossing the cut goes through one transfer; the input %x, used by both
// stages, is read directly by each; the constant, used by both, is copied
// into each; a value of stage 0 that is also returned is yielded once for
// the transfer and once for the return.

// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>, %[[W:.*]]: tensor<8x8xf32> {dnn.weight
// CHECK: %[[S0:.*]]:2 = dist.stage 0 -> (tensor<4x8xf32>, tensor<4x8xf32>) {
// CHECK:   %[[L1:.*]] = dnn.matmul %[[X]], %[[W]]
// CHECK:   %[[C0:.*]] = dnn.constant
// CHECK:   %[[A1:.*]] = dnn.add %[[L1]], %[[C0]]
// CHECK:   %[[L2:.*]] = dnn.matmul %[[A1]], %[[W]]
// CHECK:   dist.yield %[[L2]], %[[A1]]
// CHECK: }
// CHECK: %[[T:.*]] = dist.transfer %[[S0]]#0 from stage 0 to stage 1
// CHECK: %[[S1:.*]] = dist.stage 1 -> (tensor<4x8xf32>) {
// CHECK:   %[[C1:.*]] = dnn.constant
// CHECK:   %[[A2:.*]] = dnn.add %[[T]], %[[C1]]
// CHECK:   %[[L3:.*]] = dnn.matmul %[[A2]], %[[W]]
// CHECK:   %[[R:.*]] = dnn.add %[[L3]], %[[X]]
// CHECK:   dist.yield %[[R]]
// CHECK: }
// CHECK: return %[[S1]], %[[S0]]#1
module attributes {dist.pipeline = #dist.pipeline<stages = 2>} {
  func.func @main(%x: tensor<4x8xf32>, %w: tensor<8x8xf32> {dnn.weight = dense<1.0> : tensor<8x8xf32>}) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
    %c = dnn.constant {dist.stage = 0 : i64} dense<0.5> : tensor<4x8xf32>
    %0 = dnn.matmul %x, %w {dist.stage = 0 : i64} : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
    %1 = dnn.add %0, %c {dist.stage = 0 : i64} : tensor<4x8xf32>
    %2 = dnn.matmul %1, %w {dist.stage = 0 : i64} : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
    %3 = dnn.add %2, %c {dist.stage = 1 : i64} : tensor<4x8xf32>
    %4 = dnn.matmul %3, %w {dist.stage = 1 : i64} : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
    %5 = dnn.add %4, %x {dist.stage = 1 : i64} : tensor<4x8xf32>
    return %5, %1 : tensor<4x8xf32>, tensor<4x8xf32>
  }
}

// -----

// Four stages: a value of stage 0 used by stages 1 and 3 gets a transfer
// to each; stage 2 is empty; an op without a stage goes to the latest
// stage of its operands; a returned argument is yielded by the last stage.

// CHECK-LABEL: func.func @main
// CHECK: %[[S0:.*]] = dist.stage 0 -> (tensor<4xf32>) {
// CHECK: %[[T1:.*]] = dist.transfer %[[S0]] from stage 0 to stage 1
// CHECK: %[[T3:.*]] = dist.transfer %[[S0]] from stage 0 to stage 3
// CHECK: %[[S1:.*]] = dist.stage 1 -> (tensor<4xf32>) {
// CHECK:   dnn.relu %[[T1]]
// CHECK:   dnn.neg
// CHECK: %[[T13:.*]] = dist.transfer %[[S1]] from stage 1 to stage 3
// CHECK: dist.stage 2 {
// CHECK-NEXT: dist.yield
// CHECK: %[[S3:.*]]:2 = dist.stage 3 -> (tensor<4xf32>, tensor<4xf32>) {
// CHECK:   %[[M:.*]] = dnn.mul %[[T13]], %[[T3]]
// CHECK:   dist.yield %[[M]], %{{.*}} : tensor<4xf32>, tensor<4xf32>
// CHECK: return %[[S3]]#0, %[[S3]]#1
module attributes {dist.pipeline = #dist.pipeline<stages = 4>} {
  func.func @main(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
    %0 = dnn.exp %x {dist.stage = 0 : i64} : tensor<4xf32>
    %1 = dnn.relu %0 {dist.stage = 1 : i64} : tensor<4xf32>
    %2 = dnn.neg %1 : tensor<4xf32>
    %3 = dnn.mul %2, %0 {dist.stage = 3 : i64} : tensor<4xf32>
    return %3, %x : tensor<4xf32>, tensor<4xf32>
  }
}
