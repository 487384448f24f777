// RUN: dnnc-opt %s --dist-materialize-stages --split-input-file --verify-diagnostics

// An argument owned by a stage (`dist.stage`) must name one of the
// pipeline's stages.

module attributes {dist.pipeline = #dist.pipeline<stages = 2>} {
  // expected-error @+1 {{argument #0 is in stage 5 but the pipeline has 2}}
  func.func @main(%x: tensor<8xf32> {dist.stage = 5 : i64}) -> tensor<8xf32> {
    %y = dnn.relu %x {dist.stage = 1 : i64} : tensor<8xf32>
    return %y : tensor<8xf32>
  }
}

// -----

// A stage on another rank may not read an argument a later stage owns.

module attributes {dist.pipeline = #dist.pipeline<stages = 2>} {
  func.func @main(%x: tensor<8xf32> {dist.stage = 1 : i64}) -> tensor<8xf32> {
    // expected-error @+1 {{is in stage 0 but uses argument #0, which stage 1 owns}}
    %y = dnn.relu %x {dist.stage = 0 : i64} : tensor<8xf32>
    return %y : tensor<8xf32>
  }
}

// -----

// A result the function returns from a named stage (`dist.stage`) must be
// computed by then.

module attributes {dist.pipeline = #dist.pipeline<stages = 2>} {
  // expected-error @+1 {{result #0 is yielded by stage 0 but computed in stage 1 of 2}}
  func.func @main(%x: tensor<8xf32>) -> (tensor<8xf32> {dist.stage = 0 : i64}) {
    %y = dnn.relu %x {dist.stage = 1 : i64} : tensor<8xf32>
    return %y : tensor<8xf32>
  }
}
