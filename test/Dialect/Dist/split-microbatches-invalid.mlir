// RUN: dnnc-opt %s --dist-split-microbatches --split-input-file --verify-diagnostics

module attributes {dist.pipeline = #dist.pipeline<microbatches = 3>} {
  // expected-error @+1 {{'func.func' op cannot be split into 3 micro-batches: no graph input has a dim 0 divisible by 3}}
  func.func @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
    return %x : tensor<4x8xf32>
  }
}

// -----

// The batch is split over "x" (2 devices); one micro-batch of 1 row no
// longer splits.
module attributes {dist.pipeline = #dist.pipeline<microbatches = 4>} {
  dist.mesh @mesh ["x" = 2 : intra]
  func.func @main(%x: tensor<4x8xf32> {dist.sharding = #dist.sharding<@mesh, [{"x"}, {}]>}) -> tensor<4x8xf32> {
    // expected-error @+1 {{'dnn.relu' op cannot be split into 4 micro-batches: its sharding no longer fits: dim 0 of size 1 is not divisible by 2, the number of shards of mesh axes {"x"}}}
    %0 = dnn.relu %x {dist.shardings = [#dist.sharding<@mesh, [{"x"}, {}]>]} : tensor<4x8xf32>
    return %0 : tensor<4x8xf32>
  }
}
