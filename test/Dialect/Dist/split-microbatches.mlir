// RUN: dnnc-opt %s --dist-split-microbatches --split-input-file | FileCheck %s

// Two micro-batches: the batch dim (dim 0 of the input) is halved through
// the matmul and the add; the splat constant meeting the batch is resized;
// the input and the output get dist.microbatch_dim.

// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[X:.*]]: tensor<2x8xf32> {dist.microbatch_dim = 0 : i64}, %[[W:.*]]: tensor<8x8xf32> {dnn.weight
// CHECK-SAME: -> (tensor<2x8xf32> {dist.microbatch_dim = 0 : i64})
// CHECK: %[[M:.*]] = dnn.matmul %[[X]], %[[W]] : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
// CHECK: %[[C:.*]] = dnn.constant dense<5.000000e-01> : tensor<2x8xf32>
// CHECK: %[[A:.*]] = dnn.add %[[M]], %[[C]] : tensor<2x8xf32>
// CHECK: return %[[A]]
module attributes {dist.pipeline = #dist.pipeline<microbatches = 2>} {
  func.func @main(%x: tensor<4x8xf32>, %w: tensor<8x8xf32> {dnn.weight = dense<1.0> : tensor<8x8xf32>}) -> tensor<4x8xf32> {
    %c = dnn.constant dense<0.5> : tensor<4x8xf32>
    %0 = dnn.matmul %x, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
    %1 = dnn.add %0, %c : tensor<4x8xf32>
    return %1 : tensor<4x8xf32>
  }
}

// -----

// A non-splat constant meeting the batch: each micro-batch takes its rows
// of it (dist.microbatch_slice).

// CHECK-LABEL: func.func @main
// CHECK: %[[C:.*]] = dnn.constant dense<{{\[}}[1.000000e+00], [2.000000e+00], [3.000000e+00], [4.000000e+00]]> : tensor<4x1xf32>
// CHECK: %[[S:.*]] = dist.microbatch_slice %[[C]] dim 0 of 2 : tensor<4x1xf32> -> tensor<2x1xf32>
// CHECK: dnn.mul %{{.*}}, %[[S]] : tensor<2x1xf32>
module attributes {dist.pipeline = #dist.pipeline<microbatches = 2>} {
  func.func @main(%x: tensor<4x1xf32>) -> tensor<4x1xf32> {
    %c = dnn.constant dense<[[1.0], [2.0], [3.0], [4.0]]> : tensor<4x1xf32>
    %0 = dnn.mul %x, %c : tensor<4x1xf32>
    return %0 : tensor<4x1xf32>
  }
}

// -----

// An op that needs the whole batch (a sum over it): it runs on a copy of
// the input over the whole batch (a new argument without
// dist.microbatch_dim), and its result meets the micro-batch through a
// broadcast, whose copy per micro-batch is cut.

// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32> {dist.microbatch_dim = 0 : i64, dnn.name = "x"}, %[[XW:.*]]: tensor<4x3xf32> {dnn.name = "x"})
// CHECK: %[[R:.*]] = dnn.reduce_sum %[[XW]]
// CHECK: %[[B:.*]] = dnn.broadcast_in_dim %[[R]], dims = [1] : tensor<3xf32> -> tensor<4x3xf32>
// CHECK: %[[S:.*]] = dist.microbatch_slice %[[B]] dim 0 of 2 : tensor<4x3xf32> -> tensor<2x3xf32>
// CHECK: dnn.sub %[[X]], %[[S]] : tensor<2x3xf32>
module attributes {dist.pipeline = #dist.pipeline<microbatches = 2>} {
  func.func @main(%x: tensor<4x3xf32> {dnn.name = "x"}) -> tensor<4x3xf32> {
    %0 = dnn.reduce_sum %x axes = [0] keep_dims = false : tensor<4x3xf32> -> tensor<3xf32>
    %1 = dnn.broadcast_in_dim %0, dims = [1] : tensor<3xf32> -> tensor<4x3xf32>
    %2 = dnn.sub %x, %1 : tensor<4x3xf32>
    return %2 : tensor<4x3xf32>
  }
}

// -----

// A value computed per micro-batch from a cut block of a whole value (the
// sub), then needed over the whole batch again (the second sum): its whole
// copy reads the whole value the block was cut from, not a copy of the cut.

// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32> {dist.microbatch_dim = 0 : i64, dnn.name = "x"}, %[[XW:.*]]: tensor<4x3xf32> {dnn.name = "x"})
// CHECK: %[[B:.*]] = dnn.broadcast_in_dim %{{.*}}, dims = [1] : tensor<3xf32> -> tensor<4x3xf32>
// CHECK: %[[S:.*]] = dist.microbatch_slice %[[B]] dim 0 of 2 : tensor<4x3xf32> -> tensor<2x3xf32>
// CHECK: %[[DW:.*]] = dnn.sub %[[XW]], %[[B]] : tensor<4x3xf32>
// CHECK: dnn.sub %[[X]], %[[S]] : tensor<2x3xf32>
// CHECK: dnn.reduce_sum %[[DW]] axes = [0]
module attributes {dist.pipeline = #dist.pipeline<microbatches = 2>} {
  func.func @main(%x: tensor<4x3xf32> {dnn.name = "x"}) -> tensor<3xf32> {
    %0 = dnn.reduce_sum %x axes = [0] keep_dims = false : tensor<4x3xf32> -> tensor<3xf32>
    %1 = dnn.broadcast_in_dim %0, dims = [1] : tensor<3xf32> -> tensor<4x3xf32>
    %2 = dnn.sub %x, %1 : tensor<4x3xf32>
    %3 = dnn.reduce_sum %2 axes = [0] keep_dims = false : tensor<4x3xf32> -> tensor<3xf32>
    return %3 : tensor<3xf32>
  }
}
