// RUN: dnnc-opt %s --dist-materialize-stages --split-input-file --verify-diagnostics | FileCheck %s

// A training step over two pipeline ranks and two micro-batches: the
// forwards are stages 0 and 1, the backwards (`dist.backward`) stages 2
// (of stage 1) and 3 (of stage 0), and the final part, once per step, runs
// on the rank of the parameter each update writes: stage 4 (rank 0) and 5
// (rank 1), one round (`updateRounds = 1`). Each sum over micro-batches
// becomes an accumulator argument that its stage adds to (a result
// updating it); a mean adds its share over the count. The summed loss is
// returned by the last stage. The step number's ops are copied into each
// stage that uses them. Stage 0's value reaches its own backward (stage 3,
// same rank) through a transfer too: the runtime keeps it per micro-batch.

// CHECK: dist.pipeline = #dist.pipeline<stages = 2, microbatches = 2, schedule = "1f1b", updateRounds = 1>
// CHECK-LABEL: func.func @main
// CHECK-SAME: %[[STEP:[^:]*]]: tensor<f32> {dnn.step}
// CHECK-SAME: %[[ACC0:[^:]*]]: tensor<f32> {dist.accumulator, dnn.name = "accumulator 0"}
// CHECK-SAME: %[[ACC1:[^:]*]]: tensor<8x8xf32> {dist.accumulator, dnn.name = "accumulator 1"}
// CHECK-SAME: %[[ACC2:[^:]*]]: tensor<8x8xf32> {dist.accumulator, dnn.name = "accumulator 2"}
// CHECK-SAME: tensor<f32> {dnn.updates = 4 : i64}, tensor<8x8xf32> {dnn.updates = 5 : i64}, tensor<8x8xf32> {dnn.updates = 6 : i64}
// CHECK: dist.stage 0
// CHECK: %[[S1:.*]]:2 = dist.stage 1
// CHECK:   %[[L:.*]] = dnn.reduce_mean
// CHECK:   %[[HALF:.*]] = dnn.constant dense<5.000000e-01> : tensor<f32>
// CHECK:   %[[SHARE:.*]] = dnn.mul %[[L]], %[[HALF]]
// CHECK:   %[[LS:.*]] = dnn.add %[[ACC0]], %[[SHARE]]
// CHECK:   dist.yield %{{.*}}, %[[LS]]
// CHECK: %[[S2:.*]]:2 = dist.stage 2
// CHECK:   %[[G1:.*]] = dnn.add %[[ACC1]], %{{.*}} : tensor<8x8xf32>
// CHECK: %[[S3:.*]] = dist.stage 3
// CHECK:   %[[G0:.*]] = dnn.add %[[ACC2]], %{{.*}} : tensor<8x8xf32>
// CHECK: %[[S4:.*]] = dist.stage 4
// CHECK:   dnn.mul %[[STEP]], %[[STEP]]
// CHECK:   dnn.mul %[[ACC2]]
// CHECK: %[[S5:.*]]:2 = dist.stage 5
// CHECK:   dnn.mul %[[STEP]], %[[STEP]]
// CHECK:   dnn.mul %[[ACC1]]
// CHECK:   dist.yield %[[ACC0]], %{{.*}}
// CHECK: return %[[S5]]#0, %[[S4]], %[[S5]]#1, %[[S1]]#1, %[[S2]]#1, %[[S3]]
module attributes {dist.pipeline = #dist.pipeline<stages = 2, microbatches = 2, schedule = "1f1b">} {
  func.func @main(%x: tensor<2x8xf32> {dist.microbatch_dim = 0 : i64}, %w0: tensor<8x8xf32> {dnn.trainable, dnn.weight = dense<1.0> : tensor<8x8xf32>}, %w1: tensor<8x8xf32> {dnn.trainable, dnn.weight = dense<1.0> : tensor<8x8xf32>}, %step: tensor<f32> {dnn.step}) -> (tensor<f32>, tensor<8x8xf32> {dnn.updates = 1 : i64}, tensor<8x8xf32> {dnn.updates = 2 : i64}) {
    %h = dnn.matmul %x, %w0 {dist.stage = 0 : i64} : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
    %y = dnn.matmul %h, %w1 {dist.stage = 1 : i64} : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
    %l = dnn.reduce_mean %y axes = [0, 1] keep_dims = false {dist.stage = 1 : i64} : tensor<2x8xf32> -> tensor<f32>
    %ls = dist.microbatch_sum %l mean {dist.stage = 1 : i64} : tensor<f32>
    %ht = dnn.transpose %h, permutation = [1, 0] {dist.backward, dist.stage = 1 : i64} : tensor<2x8xf32> -> tensor<8x2xf32>
    %g1 = dnn.matmul %ht, %y {dist.backward, dist.stage = 1 : i64} : (tensor<8x2xf32>, tensor<2x8xf32>) -> tensor<8x8xf32>
    %g1s = dist.microbatch_sum %g1 {dist.backward, dist.stage = 1 : i64} : tensor<8x8xf32>
    %dh = dnn.matmul %y, %w1 {dist.backward, dist.stage = 1 : i64} : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
    %xt = dnn.transpose %x, permutation = [1, 0] {dist.backward, dist.stage = 0 : i64} : tensor<2x8xf32> -> tensor<8x2xf32>
    %g0 = dnn.matmul %xt, %dh {dist.backward, dist.stage = 0 : i64} : (tensor<8x2xf32>, tensor<2x8xf32>) -> tensor<8x8xf32>
    %g0s = dist.microbatch_sum %g0 {dist.backward, dist.stage = 0 : i64} : tensor<8x8xf32>
    %lr = dnn.mul %step, %step : tensor<f32>
    %lrb = dnn.broadcast_in_dim %lr, dims = [] : tensor<f32> -> tensor<8x8xf32>
    %u0 = dnn.mul %g0s, %lrb : tensor<8x8xf32>
    %n0 = dnn.sub %w0, %u0 : tensor<8x8xf32>
    %u1 = dnn.mul %g1s, %lrb : tensor<8x8xf32>
    %n1 = dnn.sub %w1, %u1 : tensor<8x8xf32>
    return %ls, %n0, %n1 : tensor<f32>, tensor<8x8xf32>, tensor<8x8xf32>
  }
}

// -----

// A parameter used by stages on two ranks (tied weights): each rank sums
// its share of the gradient over the micro-batches; rank 1's sum goes to
// rank 0 once per step (the accumulator is owned by rank 1's first round,
// stage 5), rank 0 computes the update in its second round (stage 6), and
// rank 1 writes the new value into its copy in its second round (stage 7):
// two results update argument 1.

// CHECK-LABEL: func.func @main
// CHECK-SAME: %[[W:[^:]*]]: tensor<8x8xf32> {dnn.name = "w"
// CHECK-SAME: %[[ACC1:[^:]*]]: tensor<8x8xf32> {dist.accumulator, dnn.name = "accumulator 0"}
// CHECK-SAME: %[[ACC0:[^:]*]]: tensor<8x8xf32> {dist.accumulator, dnn.name = "accumulator 1"}
// CHECK-SAME: -> (tensor<8x8xf32> {dnn.updates = 1 : i64}, tensor<8x8xf32> {dnn.updates = 2 : i64}, tensor<8x8xf32> {dnn.updates = 3 : i64}, tensor<8x8xf32> {dnn.updates = 1 : i64})
// CHECK: dist.stage 4 {
// CHECK: %[[S5:.*]] = dist.stage 5
// CHECK-NEXT: dist.yield %[[ACC1]]
// CHECK: %[[T:.*]] = dist.transfer %[[S5]] from stage 5 to stage 6
// CHECK: %[[S6:.*]]:2 = dist.stage 6
// CHECK-NEXT: %[[G:.*]] = dnn.add %[[T]], %[[ACC0]]
// CHECK-NEXT: %[[N:.*]] = dnn.sub %[[W]], %[[G]]
// CHECK-NEXT: dist.yield %[[N]], %[[N]]
// CHECK: %[[NEW:.*]] = dist.transfer %[[S6]]#0 from stage 6 to stage 7
// CHECK: %[[S7:.*]] = dist.stage 7
// CHECK-NEXT: dist.yield %[[NEW]]
// CHECK: return %[[S6]]#1, %{{.*}}, %{{.*}}, %[[S7]]
module attributes {dist.pipeline = #dist.pipeline<stages = 2, microbatches = 2, schedule = "1f1b">} {
  func.func @main(%x: tensor<2x8xf32> {dist.microbatch_dim = 0 : i64}, %w: tensor<8x8xf32> {dnn.name = "w", dnn.trainable, dnn.weight = dense<1.0> : tensor<8x8xf32>}) -> (tensor<8x8xf32> {dnn.updates = 1 : i64}) {
    %h = dnn.matmul %x, %w {dist.stage = 0 : i64} : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
    %y = dnn.matmul %h, %w {dist.stage = 1 : i64} : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
    %yt = dnn.transpose %y, permutation = [1, 0] {dist.backward, dist.stage = 1 : i64} : tensor<2x8xf32> -> tensor<8x2xf32>
    %g1 = dnn.matmul %yt, %h {dist.backward, dist.stage = 1 : i64} : (tensor<8x2xf32>, tensor<2x8xf32>) -> tensor<8x8xf32>
    %g1s = dist.microbatch_sum %g1 {dist.backward, dist.stage = 1 : i64} : tensor<8x8xf32>
    %xt = dnn.transpose %x, permutation = [1, 0] {dist.backward, dist.stage = 0 : i64} : tensor<2x8xf32> -> tensor<8x2xf32>
    %g0 = dnn.matmul %xt, %h {dist.backward, dist.stage = 0 : i64} : (tensor<8x2xf32>, tensor<2x8xf32>) -> tensor<8x8xf32>
    %g0s = dist.microbatch_sum %g0 {dist.backward, dist.stage = 0 : i64} : tensor<8x8xf32>
    %g = dnn.add %g1s, %g0s : tensor<8x8xf32>
    %n = dnn.sub %w, %g : tensor<8x8xf32>
    return %n : tensor<8x8xf32>
  }
}

// -----

// Full recomputation: stage 1's backward (stage 2) computes the forward
// product again from the stage's input (the transfer from stage 0) instead
// of receiving it from stage 1.

// CHECK-LABEL: func.func @main
// CHECK: %[[IN:.*]] = dist.transfer %{{.*}} from stage 0 to stage 2
// CHECK-NOT: from stage 1 to stage 2
// CHECK: dist.stage 2
// CHECK:   %[[Y:.*]] = dnn.matmul %[[IN]], %{{.*}} : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
// CHECK:   dnn.matmul %{{.*}}, %[[Y]] : (tensor<8x2xf32>, tensor<2x8xf32>) -> tensor<8x8xf32>
module attributes {dist.pipeline = #dist.pipeline<stages = 2, microbatches = 2, schedule = "1f1b", recompute = full>} {
  func.func @main(%x: tensor<2x8xf32> {dist.microbatch_dim = 0 : i64}, %w0: tensor<8x8xf32> {dnn.trainable, dnn.weight = dense<1.0> : tensor<8x8xf32>}, %w1: tensor<8x8xf32> {dnn.trainable, dnn.weight = dense<1.0> : tensor<8x8xf32>}, %step: tensor<f32> {dnn.step}) -> (tensor<f32>, tensor<8x8xf32> {dnn.updates = 1 : i64}, tensor<8x8xf32> {dnn.updates = 2 : i64}) {
    %h = dnn.matmul %x, %w0 {dist.stage = 0 : i64} : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
    %y = dnn.matmul %h, %w1 {dist.stage = 1 : i64} : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
    %l = dnn.reduce_mean %y axes = [0, 1] keep_dims = false {dist.stage = 1 : i64} : tensor<2x8xf32> -> tensor<f32>
    %ls = dist.microbatch_sum %l mean {dist.stage = 1 : i64} : tensor<f32>
    %ht = dnn.transpose %h, permutation = [1, 0] {dist.backward, dist.stage = 1 : i64} : tensor<2x8xf32> -> tensor<8x2xf32>
    %g1 = dnn.matmul %ht, %y {dist.backward, dist.stage = 1 : i64} : (tensor<8x2xf32>, tensor<2x8xf32>) -> tensor<8x8xf32>
    %g1s = dist.microbatch_sum %g1 {dist.backward, dist.stage = 1 : i64} : tensor<8x8xf32>
    %dh = dnn.matmul %y, %w1 {dist.backward, dist.stage = 1 : i64} : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
    %xt = dnn.transpose %x, permutation = [1, 0] {dist.backward, dist.stage = 0 : i64} : tensor<2x8xf32> -> tensor<8x2xf32>
    %g0 = dnn.matmul %xt, %dh {dist.backward, dist.stage = 0 : i64} : (tensor<8x2xf32>, tensor<2x8xf32>) -> tensor<8x8xf32>
    %g0s = dist.microbatch_sum %g0 {dist.backward, dist.stage = 0 : i64} : tensor<8x8xf32>
    %lr = dnn.mul %step, %step : tensor<f32>
    %lrb = dnn.broadcast_in_dim %lr, dims = [] : tensor<f32> -> tensor<8x8xf32>
    %u0 = dnn.mul %g0s, %lrb : tensor<8x8xf32>
    %n0 = dnn.sub %w0, %u0 : tensor<8x8xf32>
    %u1 = dnn.mul %g1s, %lrb : tensor<8x8xf32>
    %n1 = dnn.sub %w1, %u1 : tensor<8x8xf32>
    return %ls, %n0, %n1 : tensor<f32>, tensor<8x8xf32>, tensor<8x8xf32>
  }
}

// -----

// Selective recomputation: stage 1's backward (stage 2) computes the
// attention core again (the score product of two activations and the
// softmax, up to the product with the values) from the values the core
// reads, which it receives (the stage input from stage 0, the transpose
// from stage 1); the softmax's result is not sent.

// CHECK-LABEL: func.func @main
// CHECK: %[[H:.*]] = dist.transfer %{{.*}} from stage 0 to stage 2
// CHECK: dist.stage 1
// CHECK: %[[HT:.*]] = dist.transfer %{{.*}} from stage 1 to stage 2
// CHECK: %[[O:.*]] = dist.transfer %{{.*}} from stage 1 to stage 2
// CHECK-NOT: from stage 1 to stage 2
// CHECK: dist.stage 2
// CHECK-NEXT: %[[S:.*]] = dnn.matmul %[[H]], %[[HT]]
// CHECK-NEXT: %[[P:.*]] = dnn.softmax %[[S]]
// CHECK-NEXT: dnn.matmul %[[P]], %[[O]]
module attributes {dist.pipeline = #dist.pipeline<stages = 2, microbatches = 2, schedule = "1f1b", recompute = selective>} {
  func.func @main(%x: tensor<2x8xf32> {dist.microbatch_dim = 0 : i64}, %w: tensor<8x8xf32> {dnn.trainable, dnn.weight = dense<1.0> : tensor<8x8xf32>}) -> (tensor<8x8xf32> {dnn.updates = 1 : i64}) {
    %h = dnn.matmul %x, %w {dist.stage = 0 : i64} : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
    %ht = dnn.transpose %h, permutation = [1, 0] {dist.stage = 1 : i64} : tensor<2x8xf32> -> tensor<8x2xf32>
    %s = dnn.matmul %h, %ht {dist.stage = 1 : i64} : (tensor<2x8xf32>, tensor<8x2xf32>) -> tensor<2x2xf32>
    %p = dnn.softmax %s axis = 1 {dist.stage = 1 : i64} : tensor<2x2xf32>
    %o = dnn.matmul %p, %h {dist.stage = 1 : i64} : (tensor<2x2xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
    %d = dnn.matmul %p, %o {dist.backward, dist.stage = 1 : i64} : (tensor<2x2xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
    %xt = dnn.transpose %x, permutation = [1, 0] {dist.backward, dist.stage = 0 : i64} : tensor<2x8xf32> -> tensor<8x2xf32>
    %g = dnn.matmul %xt, %d {dist.backward, dist.stage = 0 : i64} : (tensor<8x2xf32>, tensor<2x8xf32>) -> tensor<8x8xf32>
    %gs = dist.microbatch_sum %g {dist.backward, dist.stage = 0 : i64} : tensor<8x8xf32>
    %n = dnn.sub %w, %gs : tensor<8x8xf32>
    return %n : tensor<8x8xf32>
  }
}

// -----

// Dynamic loss scaling (fp16): the scale's exponent is read on both ranks
// (stage 1 scales by it, and the step returns the scale it used) and
// updated on rank 0 (stage 4). Rank 1 writes the new exponent into its copy
// in the step's last stage (5), which also computes the returned scale
// from the old one.

// CHECK-LABEL: func.func @main
// CHECK-SAME: %[[E:[^:]*]]: tensor<f32> {dnn.loss_scale
// CHECK-SAME: -> (tensor<f32> {dnn.name = "loss_scale"}, tensor<8x8xf32> {dnn.updates = 1 : i64}, tensor<f32> {dnn.updates = 2 : i64}, tensor<8x8xf32> {dnn.updates = 3 : i64}, tensor<f32> {dnn.updates = 2 : i64})
// CHECK: %[[S4:.*]]:3 = dist.stage 4
// CHECK: %[[E2:.*]] = dnn.add %[[E]], %{{.*}} : tensor<f32>
// CHECK: dist.yield %[[E2]], %{{.*}}, %[[E2]]
// CHECK: %[[NEW:.*]] = dist.transfer %[[S4]]#0 from stage 4 to stage 5
// CHECK: %[[S5:.*]]:2 = dist.stage 5
// CHECK-NEXT: %[[SCALE:.*]] = dnn.exp %[[E]]
// CHECK-NEXT: dist.yield %[[SCALE]], %[[NEW]]
// CHECK: return %[[S5]]#0, %[[S4]]#1, %[[S4]]#2, %{{.*}}, %[[S5]]#1
module attributes {dist.pipeline = #dist.pipeline<stages = 2, microbatches = 2, schedule = "1f1b">} {
  func.func @main(%x: tensor<2x8xf32> {dist.microbatch_dim = 0 : i64}, %w: tensor<8x8xf32> {dnn.trainable, dnn.weight = dense<1.0> : tensor<8x8xf32>}, %e: tensor<f32> {dnn.loss_scale = 65536.0 : f64, dnn.state, dnn.weight = dense<0.0> : tensor<f32>}) -> (tensor<f32> {dnn.name = "loss_scale"}, tensor<8x8xf32> {dnn.updates = 1 : i64}, tensor<f32> {dnn.updates = 2 : i64}) {
    %s = dnn.exp %e : tensor<f32>
    %sb = dnn.broadcast_in_dim %s, dims = [] : tensor<f32> -> tensor<2x8xf32>
    %h = dnn.matmul %x, %w {dist.stage = 0 : i64} : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
    %hs = dnn.mul %h, %sb {dist.stage = 1 : i64} : tensor<2x8xf32>
    %xt = dnn.transpose %x, permutation = [1, 0] {dist.backward, dist.stage = 0 : i64} : tensor<2x8xf32> -> tensor<8x2xf32>
    %g = dnn.matmul %xt, %hs {dist.backward, dist.stage = 0 : i64} : (tensor<8x2xf32>, tensor<2x8xf32>) -> tensor<8x8xf32>
    %gs = dist.microbatch_sum %g {dist.backward, dist.stage = 0 : i64} : tensor<8x8xf32>
    %n = dnn.sub %w, %gs : tensor<8x8xf32>
    %f = dnn.reduce_sum %gs axes = [0, 1] keep_dims = false : tensor<8x8xf32> -> tensor<f32>
    %e2 = dnn.add %e, %f : tensor<f32>
    return %s, %n, %e2 : tensor<f32>, tensor<8x8xf32>, tensor<f32>
  }
}
