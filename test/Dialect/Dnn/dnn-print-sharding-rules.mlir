// RUN: dnnc-opt %s -split-input-file --dnn-print-sharding-rules -verify-diagnostics

// The sharding rule of every dnn op (#dnn.sharding_rule): which factors each
// operand and result dimension is made of, and their kinds (parallel unless
// listed as reduction, replication or halo).

// Constants: every dimension parallel (each device materialises its block).
func.func @constant() -> (tensor<2x3xf32>, tensor<i64>) {
  // expected-remark @below {{#dnn.sharding_rule<() -> ([i, j]) {i=2, j=3}>}}
  %0 = dnn.constant dense<1.0> : tensor<2x3xf32>
  // expected-remark @below {{#dnn.sharding_rule<() -> ([]) {}>}}
  %1 = dnn.constant dense<7> : tensor<i64>
  return %0, %1 : tensor<2x3xf32>, tensor<i64>
}

// -----

// Elementwise ops share one parallel factor per dimension; size-1 dimensions
// keep a factor of size 1 so that the correspondence stays explicit.
func.func @elementwise(%x: tensor<2x3xf32>, %y: tensor<2x3xf32>, %c: tensor<2x3xi1>,
                       %u: tensor<4x1xf32>, %s: tensor<f32>) {
  // expected-remark @below {{#dnn.sharding_rule<([i, j]) -> ([i, j]) {i=2, j=3}>}}
  %0 = dnn.relu %x : tensor<2x3xf32>
  // expected-remark @below {{#dnn.sharding_rule<([i, j]) -> ([i, j]) {i=2, j=3}>}}
  %1 = dnn.tanh %x : tensor<2x3xf32>
  // expected-remark @below {{#dnn.sharding_rule<([i, j]) -> ([i, j]) {i=2, j=3}>}}
  %2 = dnn.sigmoid %x : tensor<2x3xf32>
  // expected-remark @below {{#dnn.sharding_rule<([i, j]) -> ([i, j]) {i=2, j=3}>}}
  %3 = dnn.erf %x : tensor<2x3xf32>
  // expected-remark @below {{#dnn.sharding_rule<([i, j]) -> ([i, j]) {i=2, j=3}>}}
  %4 = dnn.exp %x : tensor<2x3xf32>
  // expected-remark @below {{#dnn.sharding_rule<([i, j]) -> ([i, j]) {i=2, j=3}>}}
  %5 = dnn.log %x : tensor<2x3xf32>
  // expected-remark @below {{#dnn.sharding_rule<([i, j]) -> ([i, j]) {i=2, j=3}>}}
  %6 = dnn.sqrt %x : tensor<2x3xf32>
  // expected-remark @below {{#dnn.sharding_rule<([i, j]) -> ([i, j]) {i=2, j=3}>}}
  %7 = dnn.reciprocal %x : tensor<2x3xf32>
  // expected-remark @below {{#dnn.sharding_rule<([i, j]) -> ([i, j]) {i=2, j=3}>}}
  %8 = dnn.floor %x : tensor<2x3xf32>
  // expected-remark @below {{#dnn.sharding_rule<([i, j]) -> ([i, j]) {i=2, j=3}>}}
  %9 = dnn.ceil %x : tensor<2x3xf32>
  // expected-remark @below {{#dnn.sharding_rule<([i, j]) -> ([i, j]) {i=2, j=3}>}}
  %10 = dnn.neg %x : tensor<2x3xf32>
  // expected-remark @below {{#dnn.sharding_rule<([i, j]) -> ([i, j]) {i=2, j=3}>}}
  %11 = dnn.abs %x : tensor<2x3xf32>
  // expected-remark @below {{#dnn.sharding_rule<([i, j]) -> ([i, j]) {i=2, j=3}>}}
  %12 = dnn.not %c : tensor<2x3xi1>
  // expected-remark @below {{#dnn.sharding_rule<([i, j]) -> ([i, j]) {i=2, j=3}>}}
  %13 = dnn.gelu %x approximation = <tanh> : tensor<2x3xf32>
  // expected-remark @below {{#dnn.sharding_rule<([i, j]) -> ([i, j]) {i=2, j=3}>}}
  %14 = dnn.leaky_relu %x alpha = 0.1 : tensor<2x3xf32>
  // expected-remark @below {{#dnn.sharding_rule<([i, j], [i, j]) -> ([i, j]) {i=2, j=3}>}}
  %15 = dnn.add %x, %y : tensor<2x3xf32>
  // expected-remark @below {{#dnn.sharding_rule<([i, j], [i, j]) -> ([i, j]) {i=2, j=3}>}}
  %16 = dnn.sub %x, %y : tensor<2x3xf32>
  // expected-remark @below {{#dnn.sharding_rule<([i, j], [i, j]) -> ([i, j]) {i=2, j=3}>}}
  %17 = dnn.mul %x, %y : tensor<2x3xf32>
  // expected-remark @below {{#dnn.sharding_rule<([i, j], [i, j]) -> ([i, j]) {i=2, j=3}>}}
  %18 = dnn.div %x, %y : tensor<2x3xf32>
  // expected-remark @below {{#dnn.sharding_rule<([i, j], [i, j]) -> ([i, j]) {i=2, j=3}>}}
  %19 = dnn.pow %x, %y : tensor<2x3xf32>
  // expected-remark @below {{#dnn.sharding_rule<([i, j], [i, j]) -> ([i, j]) {i=2, j=3}>}}
  %20 = dnn.max %x, %y : tensor<2x3xf32>
  // expected-remark @below {{#dnn.sharding_rule<([i, j], [i, j]) -> ([i, j]) {i=2, j=3}>}}
  %21 = dnn.min %x, %y : tensor<2x3xf32>
  // expected-remark @below {{#dnn.sharding_rule<([i, j], [i, j]) -> ([i, j]) {i=2, j=3}>}}
  %22 = dnn.and %c, %c : tensor<2x3xi1>
  // expected-remark @below {{#dnn.sharding_rule<([i, j], [i, j]) -> ([i, j]) {i=2, j=3}>}}
  %23 = dnn.or %c, %c : tensor<2x3xi1>
  // expected-remark @below {{#dnn.sharding_rule<([i, j], [i, j]) -> ([i, j]) {i=2, j=3}>}}
  %24 = dnn.xor %c, %c : tensor<2x3xi1>
  // expected-remark @below {{#dnn.sharding_rule<([i, j], [i, j]) -> ([i, j]) {i=2, j=3}>}}
  %25 = dnn.equal %x, %y : tensor<2x3xf32> -> tensor<2x3xi1>
  // expected-remark @below {{#dnn.sharding_rule<([i, j], [i, j]) -> ([i, j]) {i=2, j=3}>}}
  %26 = dnn.less %x, %y : tensor<2x3xf32> -> tensor<2x3xi1>
  // expected-remark @below {{#dnn.sharding_rule<([i, j], [i, j]) -> ([i, j]) {i=2, j=3}>}}
  %27 = dnn.less_equal %x, %y : tensor<2x3xf32> -> tensor<2x3xi1>
  // expected-remark @below {{#dnn.sharding_rule<([i, j], [i, j]) -> ([i, j]) {i=2, j=3}>}}
  %28 = dnn.greater %x, %y : tensor<2x3xf32> -> tensor<2x3xi1>
  // expected-remark @below {{#dnn.sharding_rule<([i, j], [i, j]) -> ([i, j]) {i=2, j=3}>}}
  %29 = dnn.greater_equal %x, %y : tensor<2x3xf32> -> tensor<2x3xi1>
  // expected-remark @below {{#dnn.sharding_rule<([i, j]) -> ([i, j]) {i=2, j=3}>}}
  %30 = dnn.is_nan %x : tensor<2x3xf32> -> tensor<2x3xi1>
  // expected-remark @below {{#dnn.sharding_rule<([i, j], [i, j], [i, j]) -> ([i, j]) {i=2, j=3}>}}
  %31 = dnn.select %c, %x, %y : tensor<2x3xi1>, tensor<2x3xf32>
  // expected-remark @below {{#dnn.sharding_rule<([i, j]) -> ([i, j]) {i=2, j=3}>}}
  %32 = dnn.cast %x : tensor<2x3xf32> -> tensor<2x3xf16>
  // expected-remark @below {{#dnn.sharding_rule<([i, j]) -> ([i, j]) {i=4, j=1}>}}
  %33 = dnn.relu %u : tensor<4x1xf32>
  // expected-remark @below {{#dnn.sharding_rule<([], []) -> ([]) {}>}}
  %34 = dnn.add %s, %s : tensor<f32>
  return
}

// -----

// Reshape: dimensions decompose into common factors, major to minor.
func.func @reshape(%a: tensor<6x4xf32>, %b: tensor<2x3x4xf32>, %c: tensor<8x3xf32>,
                   %d: tensor<2x3xf32>, %e: tensor<3x4x5xf32>, %f: tensor<6xf32>,
                   %g: tensor<1x6x1xf32>, %h: tensor<f32>, %z: tensor<0x4xf32>) {
  // Split: dim 0 of the operand is i*j.
  // expected-remark @below {{#dnn.sharding_rule<([ij, k]) -> ([i, j, k]) {i=2, j=3, k=4}>}}
  %0 = dnn.reshape %a : tensor<6x4xf32> -> tensor<2x3x4xf32>
  // Merge.
  // expected-remark @below {{#dnn.sharding_rule<([i, j, k]) -> ([ij, k]) {i=2, j=3, k=4}>}}
  %1 = dnn.reshape %b : tensor<2x3x4xf32> -> tensor<6x4xf32>
  // Merge everything (flatten).
  // expected-remark @below {{#dnn.sharding_rule<([i, j, k]) -> ([ijk]) {i=2, j=3, k=4}>}}
  %2 = dnn.reshape %b : tensor<2x3x4xf32> -> tensor<24xf32>
  // Mixed: 8x3 -> 2x12 splits 8 into 2*4 and merges 4 with 3.
  // expected-remark @below {{#dnn.sharding_rule<([ij, k]) -> ([i, jk]) {i=2, j=4, k=3}>}}
  %3 = dnn.reshape %c : tensor<8x3xf32> -> tensor<2x12xf32>
  // Unfactorable: 2x3 -> 3x2 shares no factor; both sides must stay whole.
  // expected-remark @below {{#dnn.sharding_rule<([i, j]) -> ([k, l]) {i=2, j=3, k=3, l=2} replication={i, j, k, l}>}}
  %4 = dnn.reshape %d : tensor<2x3xf32> -> tensor<3x2xf32>
  // Partly factorable: 6x4 -> 4x6 shares the major factor 2; the rest
  // (3x4 against 2x6) does not factor.
  // expected-remark @below {{#dnn.sharding_rule<([ij, k]) -> ([il, m]) {i=2, j=3, k=4, l=2, m=6} replication={j, k, l, m}>}}
  %5 = dnn.reshape %a : tensor<6x4xf32> -> tensor<4x6xf32>
  // The unfactorable block ends where the products agree again: 3x4 -> 2x6
  // (both 12), then 5 is shared.
  // expected-remark @below {{#dnn.sharding_rule<([i, j, m]) -> ([k, l, m]) {i=3, j=4, k=2, l=6, m=5} replication={i, j, k, l}>}}
  %6 = dnn.reshape %e : tensor<3x4x5xf32> -> tensor<2x6x5xf32>
  // Unsqueeze: dimensions of extent 1 have no factor.
  // expected-remark @below {{#dnn.sharding_rule<([i]) -> ([1, i, 1]) {i=6}>}}
  %7 = dnn.reshape %f : tensor<6xf32> -> tensor<1x6x1xf32>
  // Squeeze.
  // expected-remark @below {{#dnn.sharding_rule<([1, ij, 1]) -> ([i, j]) {i=2, j=3}>}}
  %8 = dnn.reshape %g : tensor<1x6x1xf32> -> tensor<2x3xf32>
  // Scalar to 1-element tensor.
  // expected-remark @below {{#dnn.sharding_rule<([]) -> ([1, 1]) {}>}}
  %9 = dnn.reshape %h : tensor<f32> -> tensor<1x1xf32>
  // Empty tensors are never split.
  // expected-remark @below {{#dnn.sharding_rule<([1, i]) -> ([j, 1]) {i=4, j=4} replication={i, j}>}}
  %10 = dnn.reshape %z : tensor<0x4xf32> -> tensor<4x0xf32>
  return
}

// -----

func.func @data_movement(%v: tensor<3xf32>, %m: tensor<3x1xf32>, %x: tensor<2x3x4xf32>,
                         %p: tensor<2x4xf32>, %q: tensor<3x4xf32>, %d: tensor<5x4xf32>,
                         %i: tensor<2x3xi64>, %j: tensor<i32>) {
  // New result dimensions are parallel factors the operand does not have.
  // expected-remark @below {{#dnn.sharding_rule<([j]) -> ([i, j]) {i=2, j=3}>}}
  %0 = dnn.broadcast_in_dim %v, dims = [1] : tensor<3xf32> -> tensor<2x3xf32>
  // An expanded dimension of extent 1 gets a replication factor of size 1.
  // expected-remark @below {{#dnn.sharding_rule<([j, k]) -> ([i, j, l]) {i=2, j=3, k=1, l=4} replication={k}>}}
  %1 = dnn.broadcast_in_dim %m, dims = [1, 2] : tensor<3x1xf32> -> tensor<2x3x4xf32>
  // expected-remark @below {{#dnn.sharding_rule<([i, j, k]) -> ([k, i, j]) {i=2, j=3, k=4}>}}
  %2 = dnn.transpose %x, permutation = [2, 0, 1] : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
  // The concatenated axis is replication on every operand and the result.
  // expected-remark @below {{#dnn.sharding_rule<([i, l], [j, l]) -> ([k, l]) {i=2, j=3, k=5, l=4} replication={i, j, k}>}}
  %3 = dnn.concat %p, %q axis = 0 : (tensor<2x4xf32>, tensor<3x4xf32>) -> tensor<5x4xf32>
  // expected-remark @below {{#dnn.sharding_rule<([i, j]) -> ([i, j]) {i=2, j=4}>}}
  %4 = dnn.concat %p axis = 0 : (tensor<2x4xf32>) -> tensor<2x4xf32>
  // Dimension 0 is taken whole; dimension 1 is strided.
  // expected-remark @below {{#dnn.sharding_rule<([i, j]) -> ([i, k]) {i=3, j=4, k=2} replication={j, k}>}}
  %5 = dnn.slice %q starts = [0, 3] steps = [1, -2] : tensor<3x4xf32> -> tensor<3x2xf32>
  // A prefix is not the whole dimension either.
  // expected-remark @below {{#dnn.sharding_rule<([i, k]) -> ([j, k]) {i=3, j=2, k=4} replication={i, j}>}}
  %6 = dnn.slice %q starts = [0, 0] steps = [1, 1] : tensor<3x4xf32> -> tensor<2x4xf32>
  // The gathered axis of data is replication; indices dimensions are parallel.
  // expected-remark @below {{#dnn.sharding_rule<([i, l], [j, k]) -> ([j, k, l]) {i=5, j=2, k=3, l=4} replication={i}>}}
  %7 = dnn.gather %d[%i] axis = 0 : (tensor<5x4xf32>, tensor<2x3xi64>) -> tensor<2x3x4xf32>
  // expected-remark @below {{#dnn.sharding_rule<([i, j], []) -> ([i]) {i=5, j=4} replication={j}>}}
  %8 = dnn.gather %d[%j] axis = 1 : (tensor<5x4xf32>, tensor<i32>) -> tensor<5xf32>
  return
}

// -----

func.func @contractions(%a: tensor<8x4xf32>, %b: tensor<4x16xf32>, %x: tensor<2x8x4xf32>,
                        %y: tensor<2x4x16xf32>, %e: tensor<2x3x4xf64>, %f: tensor<2x4x5xf64>,
                        %g: tensor<3x3xf32>) {
  // expected-remark @below {{#dnn.sharding_rule<([i, k], [k, j]) -> ([i, j]) {i=8, j=16, k=4} reduction={k:sum}>}}
  %0 = dnn.matmul %a, %b : (tensor<8x4xf32>, tensor<4x16xf32>) -> tensor<8x16xf32>
  // Shared weight: the batch dimension is only in lhs and the result.
  // expected-remark @below {{#dnn.sharding_rule<([i, j, l], [l, k]) -> ([i, j, k]) {i=2, j=8, k=16, l=4} reduction={l:sum}>}}
  %1 = dnn.matmul %x, %b : (tensor<2x8x4xf32>, tensor<4x16xf32>) -> tensor<2x8x16xf32>
  // expected-remark @below {{#dnn.sharding_rule<([i, j, l], [i, l, k]) -> ([i, j, k]) {i=2, j=8, k=16, l=4} reduction={l:sum}>}}
  %2 = dnn.matmul %x, %y : (tensor<2x8x4xf32>, tensor<2x4x16xf32>) -> tensor<2x8x16xf32>
  // expected-remark @below {{#dnn.sharding_rule<([i, j, k], [i, k, l]) -> ([i, j, l]) {i=2, j=3, k=4, l=5} reduction={k:sum}>}}
  %3 = dnn.einsum %e, %f equation = "bij,bjk->bik" : (tensor<2x3x4xf64>, tensor<2x4x5xf64>) -> tensor<2x3x5xf64>
  // Every label summed away.
  // expected-remark @below {{#dnn.sharding_rule<([i, j, k]) -> ([]) {i=2, j=3, k=4} reduction={i:sum, j:sum, k:sum}>}}
  %4 = dnn.einsum %e equation = "bij->" : (tensor<2x3x4xf64>) -> tensor<f64>
  // Transposition only.
  // expected-remark @below {{#dnn.sharding_rule<([i, j, k]) -> ([k, i, j]) {i=2, j=3, k=4}>}}
  %5 = dnn.einsum %e equation = "bij->jbi" : (tensor<2x3x4xf64>) -> tensor<4x2x3xf64>
  // A diagonal: the repeated label must stay whole.
  // expected-remark @below {{#dnn.sharding_rule<([i, j]) -> ([i]) {i=3, j=3} replication={i, j}>}}
  %6 = dnn.einsum %g equation = "ii->i" : (tensor<3x3xf32>) -> tensor<3xf32>
  return
}

// -----

// Convolution: N and M parallel, C a sum reduction, spatial dimensions halo
// (input and output) or replication (kernel).
func.func @conv(%x: tensor<1x4x5x5xf32>, %w: tensor<6x4x3x3xf32>, %wg: tensor<6x2x3x3xf32>,
                %b: tensor<6xf32>, %wd: tensor<4x1x3x3xf32>, %x1: tensor<2x3x8xf32>,
                %w1: tensor<5x3x2xf32>) {
  // expected-remark @below {{#dnn.sharding_rule<([i, k, l, o], [j, k, m, p], [j]) -> ([i, j, n, q]) {i=1, j=6, k=4, l=5, m=3, n=5, o=5, p=3, q=5} reduction={k:sum} replication={m, p} halo={l, n, o, q}>}}
  %0 = dnn.conv %x, %w, %b strides = [1, 1] pads = [1, 1, 1, 1] dilations = [1, 1] group = 1
      : (tensor<1x4x5x5xf32>, tensor<6x4x3x3xf32>, tensor<6xf32>) -> tensor<1x6x5x5xf32>
  // Two groups: channels are [group, per-group].
  // expected-remark @below {{#dnn.sharding_rule<([i, jl, m, p], [jk, l, n, q], [jk]) -> ([i, jk, o, r]) {i=1, j=2, k=3, l=2, m=5, n=3, o=2, p=5, q=3, r=2} reduction={l:sum} replication={n, q} halo={m, o, p, r}>}}
  %1 = dnn.conv %x, %wg, %b strides = [2, 2] pads = [0, 0, 0, 0] dilations = [1, 1] group = 2
      : (tensor<1x4x5x5xf32>, tensor<6x2x3x3xf32>, tensor<6xf32>) -> tensor<1x6x2x2xf32>
  // Depthwise: one input and one output channel per group, no reduction.
  // expected-remark @below {{#dnn.sharding_rule<([i, j, k, n], [j, 1, l, o]) -> ([i, j, m, p]) {i=1, j=4, k=5, l=3, m=5, n=5, o=3, p=5} replication={l, o} halo={k, m, n, p}>}}
  %2 = dnn.conv %x, %wd strides = [1, 1] pads = [1, 1, 1, 1] dilations = [1, 1] group = 4
      : (tensor<1x4x5x5xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x5x5xf32>
  // 1-d, no bias.
  // expected-remark @below {{#dnn.sharding_rule<([i, k, l], [j, k, m]) -> ([i, j, n]) {i=2, j=5, k=3, l=8, m=2, n=4} reduction={k:sum} replication={m} halo={l, n}>}}
  %3 = dnn.conv %x1, %w1 strides = [2] pads = [0, 0] dilations = [1] group = 1
      : (tensor<2x3x8xf32>, tensor<5x3x2xf32>) -> tensor<2x5x4xf32>
  return
}

// -----

func.func @pool(%x: tensor<1x3x32x32xf32>, %y: tensor<1x3x8x8xf32>) {
  // expected-remark @below {{#dnn.sharding_rule<([i, j, k, m]) -> ([i, j, l, n]) {i=1, j=3, k=32, l=16, m=32, n=16} halo={k, l, m, n}>}}
  %0 = dnn.max_pool %x kernel = [2, 2] strides = [2, 2] pads = [0, 0, 0, 0] dilations = [1, 1] ceil_mode = false
      : tensor<1x3x32x32xf32> -> tensor<1x3x16x16xf32>
  // expected-remark @below {{#dnn.sharding_rule<([i, j, k, m]) -> ([i, j, l, n]) {i=1, j=3, k=8, l=8, m=8, n=8} halo={k, l, m, n}>}}
  %1 = dnn.avg_pool %y kernel = [3, 3] strides = [1, 1] pads = [1, 1, 1, 1] ceil_mode = false count_include_pad = true
      : tensor<1x3x8x8xf32> -> tensor<1x3x8x8xf32>
  return
}

// -----

func.func @normalisation(%x: tensor<4x10xf32>, %t: tensor<2x4x8xf32>, %s: tensor<8xf32>,
                         %b: tensor<8xf32>, %s2: tensor<4x8xf32>) {
  // expected-remark @below {{#dnn.sharding_rule<([i, j]) -> ([i, j]) {i=4, j=10} replication={j}>}}
  %0 = dnn.softmax %x axis = 1 : tensor<4x10xf32>
  // expected-remark @below {{#dnn.sharding_rule<([i, j]) -> ([i, j]) {i=4, j=10} replication={i}>}}
  %1 = dnn.log_softmax %x axis = 0 : tensor<4x10xf32>
  // Leading dimensions parallel (also in mean and inv_std_dev); normalised
  // dimensions replication.
  // expected-remark @below {{#dnn.sharding_rule<([i, j, k], [k], [k]) -> ([i, j, k], [i, j, 1], [i, j, 1]) {i=2, j=4, k=8} replication={k}>}}
  %y, %mean, %isd = dnn.layer_norm %t, %s, %b axis = 2 epsilon = 1.0e-05
      : (tensor<2x4x8xf32>, tensor<8xf32>, tensor<8xf32>)
      -> (tensor<2x4x8xf32>, tensor<2x4x1xf32>, tensor<2x4x1xf32>)
  // expected-remark @below {{#dnn.sharding_rule<([i, j, k], [j, k]) -> ([i, j, k], [i, 1, 1], [i, 1, 1]) {i=2, j=4, k=8} replication={j, k}>}}
  %y2, %mean2, %isd2 = dnn.layer_norm %t, %s2 axis = 1 epsilon = 1.0e-03
      : (tensor<2x4x8xf32>, tensor<4x8xf32>)
      -> (tensor<2x4x8xf32>, tensor<2x1x1xf32>, tensor<2x1x1xf32>)
  return
}

// -----

func.func @reductions(%x: tensor<2x3x4xf32>, %i: tensor<2x3xi64>) {
  // expected-remark @below {{#dnn.sharding_rule<([i, j, k]) -> ([j]) {i=2, j=3, k=4} reduction={i:sum, k:sum}>}}
  %0 = dnn.reduce_sum %x axes = [0, 2] keep_dims = false : tensor<2x3x4xf32> -> tensor<3xf32>
  // expected-remark @below {{#dnn.sharding_rule<([i, j, k]) -> ([i, 1, k]) {i=2, j=3, k=4} reduction={j:mean}>}}
  %1 = dnn.reduce_mean %x axes = [1] keep_dims = true : tensor<2x3x4xf32> -> tensor<2x1x4xf32>
  // expected-remark @below {{#dnn.sharding_rule<([i, j, k]) -> ([]) {i=2, j=3, k=4} reduction={i:max, j:max, k:max}>}}
  %2 = dnn.reduce_max %x axes = [0, 1, 2] keep_dims = false : tensor<2x3x4xf32> -> tensor<f32>
  // No axes: nothing reduced.
  // expected-remark @below {{#dnn.sharding_rule<([i, j, k]) -> ([i, j, k]) {i=2, j=3, k=4}>}}
  %3 = dnn.reduce_min %x axes = [] keep_dims = false : tensor<2x3x4xf32> -> tensor<2x3x4xf32>
  // expected-remark @below {{#dnn.sharding_rule<([i, j]) -> ([i, 1]) {i=2, j=3} reduction={j:prod}>}}
  %4 = dnn.reduce_prod %i axes = [1] keep_dims = true : tensor<2x3xi64> -> tensor<2x1xi64>
  // expected-remark @below {{#dnn.sharding_rule<([i, j, k]) -> ([i, j]) {i=2, j=3, k=4} reduction={k:min}>}}
  %5 = dnn.reduce_min %x axes = [2] keep_dims = false : tensor<2x3x4xf32> -> tensor<2x3xf32>
  // An integer mean truncates: the mean of the shards' means is not the mean.
  // expected-remark @below {{#dnn.sharding_rule<([i, j]) -> ([i, 1]) {i=2, j=3} replication={j}>}}
  %6 = dnn.reduce_mean %i axes = [1] keep_dims = true : tensor<2x3xi64> -> tensor<2x1xi64>
  return
}

// -----

func.func @training(%x: tensor<4x6xf32>, %r: tensor<f32>, %s: tensor<3x5x2xf32>,
                    %l: tensor<3x2xi64>, %w: tensor<5xf32>) {
  // The scalar ratio has no factor.
  // expected-remark @below {{#dnn.sharding_rule<([i, j], []) -> ([i, j], [i, j]) {i=4, j=6}>}}
  %y, %mask = dnn.dropout %x, %r seed = 42
      : (tensor<4x6xf32>, tensor<f32>) -> (tensor<4x6xf32>, tensor<4x6xi1>)
  // reduction = none: samples parallel, classes replication.
  // expected-remark @below {{#dnn.sharding_rule<([i, j, k], [i, k], [j]) -> ([i, k], [i, j, k]) {i=3, j=5, k=2} replication={j}>}}
  %loss0, %lp0 = dnn.softmax_cross_entropy %s, %l, %w reduction = <none>
      : (tensor<3x5x2xf32>, tensor<3x2xi64>, tensor<5xf32>) -> (tensor<3x2xf32>, tensor<3x5x2xf32>)
  // sum: samples are sum reductions (split log_prob, partial loss).
  // expected-remark @below {{#dnn.sharding_rule<([i, j, k], [i, k]) -> ([], [i, j, k]) {i=3, j=5, k=2} reduction={i:sum, k:sum} replication={j}>}}
  %loss1, %lp1 = dnn.softmax_cross_entropy %s, %l reduction = <sum>
      : (tensor<3x5x2xf32>, tensor<3x2xi64>) -> (tensor<f32>, tensor<3x5x2xf32>)
  // mean, every element counting once: mean reductions.
  // expected-remark @below {{#dnn.sharding_rule<([i, j, k], [i, k]) -> ([], [i, j, k]) {i=3, j=5, k=2} reduction={i:mean, k:mean} replication={j}>}}
  %loss2, %lp2 = dnn.softmax_cross_entropy %s, %l reduction = <mean>
      : (tensor<3x5x2xf32>, tensor<3x2xi64>) -> (tensor<f32>, tensor<3x5x2xf32>)
  // Weighted mean (ignore_index): samples replication.
  // expected-remark @below {{#dnn.sharding_rule<([i, j, k], [i, k]) -> ([], [i, j, k]) {i=3, j=5, k=2} replication={i, j, k}>}}
  %loss3, %lp3 = dnn.softmax_cross_entropy %s, %l reduction = <mean> {ignore_index = -1 : i64}
      : (tensor<3x5x2xf32>, tensor<3x2xi64>) -> (tensor<f32>, tensor<3x5x2xf32>)
  return
}

// -----

// A pinned rule (`dnn.sharding_rule`, here forbidding splits of the batch)
// replaces the op's own rule.
func.func @pinned(%a: tensor<8x4xf32>, %b: tensor<4x16xf32>) -> tensor<8x16xf32> {
  // expected-remark @below {{#dnn.sharding_rule<([i, k], [k, j]) -> ([i, j]) {i=8, j=16, k=4} reduction={k:sum} replication={i}>}}
  %0 = dnn.matmul %a, %b {dnn.sharding_rule = #dnn.sharding_rule<([i, k], [k, j]) -> ([i, j]) {i=8, j=16, k=4} reduction={k:sum} replication={i}>}
      : (tensor<8x4xf32>, tensor<4x16xf32>) -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}
