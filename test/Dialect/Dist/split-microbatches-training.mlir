// RUN: dnnc-opt %s --dist-split-microbatches --split-input-file --verify-diagnostics | FileCheck %s

// A training step (a result updates an argument) split into two
// micro-batches: the sums over the batch that depend on the parameter (the
// weight gradient, a contraction over the batch; the mean loss) are
// computed per micro-batch and summed over the micro-batches of the step
// (dist.microbatch_sum, `mean` for a mean); the update uses the sum.

// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[X:[^:]*]]: tensor<2x8xf32> {dist.microbatch_dim = 0 : i64}, %[[W:[^:]*]]: tensor<8x8xf32>
// CHECK: %[[Y:.*]] = dnn.matmul %[[X]], %[[W]] : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
// CHECK: %[[L:.*]] = dnn.reduce_mean %[[Y]] axes = [0, 1] keep_dims = false : tensor<2x8xf32> -> tensor<f32>
// CHECK: %[[LS:.*]] = dist.microbatch_sum %[[L]] mean : tensor<f32>
// CHECK: %[[XT:.*]] = dnn.transpose %[[X]], permutation = [1, 0] : tensor<2x8xf32> -> tensor<8x2xf32>
// CHECK: %[[G:.*]] = dnn.matmul %[[XT]], %[[Y]] : (tensor<8x2xf32>, tensor<2x8xf32>) -> tensor<8x8xf32>
// CHECK: %[[GS:.*]] = dist.microbatch_sum %[[G]] : tensor<8x8xf32>
// CHECK: %[[N:.*]] = dnn.sub %[[W]], %[[GS]] : tensor<8x8xf32>
// CHECK: return %[[LS]], %[[N]]
module attributes {dist.pipeline = #dist.pipeline<microbatches = 2>} {
  func.func @main(%x: tensor<4x8xf32>, %w: tensor<8x8xf32> {dnn.trainable, dnn.weight = dense<1.0> : tensor<8x8xf32>}) -> (tensor<f32>, tensor<8x8xf32> {dnn.updates = 1 : i64}) {
    %y = dnn.matmul %x, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
    %l = dnn.reduce_mean %y axes = [0, 1] keep_dims = false : tensor<4x8xf32> -> tensor<f32>
    %xt = dnn.transpose %x, permutation = [1, 0] : tensor<4x8xf32> -> tensor<8x4xf32>
    %g = dnn.matmul %xt, %y : (tensor<8x4xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
    %n = dnn.sub %w, %g : tensor<8x8xf32>
    return %l, %n : tensor<f32>, tensor<8x8xf32>
  }
}

// -----

// A sum over the batch that does not depend on the parameter (a count of
// the labels) is computed over the whole batch, so that every micro-batch
// can use it; a pipelined training step is split even into one micro-batch.

// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[X:[^:]*]]: tensor<4x8xf32> {dist.microbatch_dim = 0 : i64}, %{{[^:]*}}: tensor<8x8xf32> {{.*}}, %[[WHOLE:[^:]*]]: tensor<4x8xf32>)
// CHECK: %[[C:.*]] = dnn.reduce_sum %[[WHOLE]] axes = [0, 1]
// CHECK: %[[G:.*]] = dnn.matmul %{{.*}} : (tensor<8x4xf32>, tensor<4x8xf32>)
// CHECK: %[[S:.*]] = dist.microbatch_sum %[[G]] : tensor<8x8xf32>
// CHECK: %[[B:.*]] = dnn.broadcast_in_dim %[[C]]
// CHECK: dnn.div %[[S]], %[[B]]
module attributes {dist.pipeline = #dist.pipeline<stages = 2>} {
  func.func @main(%x: tensor<4x8xf32>, %w: tensor<8x8xf32> {dnn.trainable, dnn.weight = dense<1.0> : tensor<8x8xf32>}) -> (tensor<8x8xf32> {dnn.updates = 1 : i64}) {
    %count = dnn.reduce_sum %x axes = [0, 1] keep_dims = false : tensor<4x8xf32> -> tensor<f32>
    %y = dnn.matmul %x, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
    %xt = dnn.transpose %x, permutation = [1, 0] : tensor<4x8xf32> -> tensor<8x4xf32>
    %g = dnn.matmul %xt, %y : (tensor<8x4xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
    %b = dnn.broadcast_in_dim %count, dims = [] : tensor<f32> -> tensor<8x8xf32>
    %n = dnn.div %g, %b : tensor<8x8xf32>
    return %n : tensor<8x8xf32>
  }
}

// -----

// A maximum over the batch of a value depending on the parameter cannot be
// computed per micro-batch, and computing it over the whole batch for each
// micro-batch would count its gradient once per micro-batch.

module attributes {dist.pipeline = #dist.pipeline<microbatches = 2>} {
  func.func @main(%x: tensor<4x8xf32>, %w: tensor<8x8xf32> {dnn.trainable, dnn.weight = dense<1.0> : tensor<8x8xf32>}) -> (tensor<8xf32>, tensor<8x8xf32> {dnn.updates = 1 : i64}) {
    %y = dnn.matmul %x, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
    // expected-error @+1 {{'dnn.reduce_max' op cannot be split into 2 micro-batches: it needs the whole batch}}
    %m = dnn.reduce_max %y axes = [0] keep_dims = false : tensor<4x8xf32> -> tensor<8xf32>
    return %m, %w : tensor<8xf32>, tensor<8x8xf32>
  }
}

// -----

// A value of one micro-batch cannot meet a sum over all of them.

module attributes {dist.pipeline = #dist.pipeline<microbatches = 2>} {
  func.func @main(%x: tensor<4x8xf32>, %w: tensor<8x8xf32> {dnn.trainable, dnn.weight = dense<1.0> : tensor<8x8xf32>}) -> (tensor<4x8xf32>, tensor<8x8xf32> {dnn.updates = 1 : i64}) {
    %y = dnn.matmul %x, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
    %s = dnn.reduce_sum %y axes = [0] keep_dims = true : tensor<4x8xf32> -> tensor<1x8xf32>
    %b = dnn.broadcast_in_dim %s, dims = [0, 1] : tensor<1x8xf32> -> tensor<4x8xf32>
    // expected-error @+1 {{'dnn.sub' op cannot be split into 2 micro-batches: it uses a sum over the whole batch}}
    %d = dnn.sub %y, %b : tensor<4x8xf32>
    return %d, %w : tensor<4x8xf32>, tensor<8x8xf32>
  }
}

// -----

// Mixed precision: a bf16 weight gradient widened to f32 for its master
// weight is summed over the micro-batches widened (an f32 accumulator), the
// widening cast moving to the stage of the product (the master weight's
// cast is free: its stage is its first user's).

// CHECK-LABEL: func.func @main
// CHECK: %[[G:.*]] = dnn.matmul %{{.*}} {dist.backward, dist.stage = 1 : i64} : (tensor<8x2xbf16>, tensor<2x8xbf16>) -> tensor<8x8xbf16>
// CHECK: %[[W:.*]] = dnn.cast %[[G]] {dist.backward, dist.stage = 1 : i64} : tensor<8x8xbf16> -> tensor<8x8xf32>
// CHECK: %[[S:.*]] = dist.microbatch_sum %[[W]] {dist.backward, dist.stage = 1 : i64} : tensor<8x8xf32>
// CHECK: dnn.sub %{{.*}}, %[[S]] : tensor<8x8xf32>
module attributes {dist.pipeline = #dist.pipeline<stages = 2, microbatches = 2>} {
  func.func @main(%x: tensor<4x8xbf16>, %w: tensor<8x8xf32> {dnn.trainable, dnn.weight = dense<1.0> : tensor<8x8xf32>}) -> (tensor<8x8xf32> {dnn.updates = 1 : i64}) {
    %wc = dnn.cast %w {dist.stage = 0 : i64} : tensor<8x8xf32> -> tensor<8x8xbf16>
    %y = dnn.matmul %x, %wc {dist.stage = 1 : i64} : (tensor<4x8xbf16>, tensor<8x8xbf16>) -> tensor<4x8xbf16>
    %xt = dnn.transpose %x, permutation = [1, 0] {dist.backward, dist.stage = 1 : i64} : tensor<4x8xbf16> -> tensor<8x4xbf16>
    %g = dnn.matmul %xt, %y {dist.backward, dist.stage = 1 : i64} : (tensor<8x4xbf16>, tensor<4x8xbf16>) -> tensor<8x8xbf16>
    %gw = dnn.cast %g {dist.backward, dist.stage = 0 : i64} : tensor<8x8xbf16> -> tensor<8x8xf32>
    %n = dnn.sub %w, %gw : tensor<8x8xf32>
    return %n : tensor<8x8xf32>
  }
}

// -----

// A data-parallel weight gradient (a partial sum over "dp") is summed over
// the micro-batches partial: its all-reduce (the reshard) reads the sum,
// once per step.

// CHECK-LABEL: func.func @main
// CHECK: %[[G:.*]] = dnn.matmul %{{.*}} {dist.shardings = [#dist.sharding<@m, [{}, {}], partial = {"dp"}>]}
// CHECK-NEXT: %[[S:.*]] = dist.microbatch_sum %[[G]] {dist.shardings = [#dist.sharding<@m, [{}, {}], partial = {"dp"}>]} : tensor<8x8xf32>
// CHECK-NEXT: %[[R:.*]] = dist.reshard %[[S]] from <@m, [{}, {}], partial = {"dp"}> to <@m, [{}, {}]>
// CHECK-NEXT: dnn.sub %{{.*}}, %[[R]]
module attributes {dist.pipeline = #dist.pipeline<microbatches = 2>} {
  dist.mesh @m ["dp" = 2 : intra]
  func.func @main(%x: tensor<8x8xf32> {dist.sharding = #dist.sharding<@m, [{"dp"}, {}]>},
                  %w: tensor<8x8xf32> {dist.sharding = #dist.sharding<@m, [{}, {}]>, dnn.trainable, dnn.weight = dense<1.0> : tensor<8x8xf32>})
      -> (tensor<8x8xf32> {dist.sharding = #dist.sharding<@m, [{}, {}]>, dnn.updates = 1 : i64}) {
    %y = dnn.matmul %x, %w {dist.shardings = [#dist.sharding<@m, [{"dp"}, {}]>]} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
    %xt = dnn.transpose %x, permutation = [1, 0] {dist.shardings = [#dist.sharding<@m, [{}, {"dp"}]>]} : tensor<8x8xf32> -> tensor<8x8xf32>
    %g = dnn.matmul %xt, %y {dist.shardings = [#dist.sharding<@m, [{}, {}], partial = {"dp"}>]} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
    %r = dist.reshard %g from <@m, [{}, {}], partial = {"dp"}> to <@m, [{}, {}]> : tensor<8x8xf32>
    %n = dnn.sub %w, %r {dist.shardings = [#dist.sharding<@m, [{}, {}]>]} : tensor<8x8xf32>
    return %n : tensor<8x8xf32>
  }
}
