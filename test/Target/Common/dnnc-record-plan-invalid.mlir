// RUN: dnnc-opt %s -split-input-file --dnnc-record-plan -verify-diagnostics

// expected-error @+1 {{the module has no function @main}}
module {
  func.func @f() {
    return
  }
}

// -----

// expected-error @+1 {{the module has 2 dist.mesh ops; a plan runs on one mesh}}
module {
  dist.mesh @a ["x" = 2 : intra]
  dist.mesh @b ["y" = 2 : intra]
  func.func @main() {
    return
  }
}

// -----

// expected-error @+1 {{'arg0' is not a statically shaped tensor}}
module {
  func.func @main(%x: tensor<?xf32>) -> tensor<?xf32> {
    return %x : tensor<?xf32>
  }
}

// -----

// expected-error @+1 {{'arg0' has element type f8E4M3FN, which plan.bin cannot hold}}
module {
  func.func @main(%x: tensor<2xf8E4M3FN>) -> tensor<2xf8E4M3FN> {
    return %x : tensor<2xf8E4M3FN>
  }
}

// -----

// expected-error @+1 {{argument #0 ('x'): its dist.sharding names @mesh, but the module has no dist.mesh}}
module {
  func.func @main(%x: tensor<2xf32> {dnn.name = "x", dist.sharding = #dist.sharding<@mesh, [{"x"}]>}) -> tensor<2xf32> {
    return %x : tensor<2xf32>
  }
}

// -----

// expected-error @+1 {{result #0 ('output0'): its dist.sharding holds partial sums; a model input, output or weight must hold final values}}
module {
  dist.mesh @mesh ["x" = 2 : intra]
  func.func @main(%x: tensor<2xf32>) -> (tensor<2xf32> {dist.sharding = #dist.sharding<@mesh, [{}], partial = {"x"}>}) {
    return %x : tensor<2xf32>
  }
}

// -----

// expected-error @+1 {{argument #0 ('w'): its dnn.weight has shape 3, but its type and sharding give the global shape 4}}
module {
  dist.mesh @mesh ["x" = 2 : intra]
  func.func @main(%w: tensor<2xf32> {dnn.name = "w", dnn.weight = dense<1.0> : tensor<3xf32>, dist.sharding = #dist.sharding<@mesh, [{"x"}]>}) -> tensor<2xf32> {
    return %w : tensor<2xf32>
  }
}

// -----

// expected-error @+1 {{@main has pipeline stages but the module has no dist.pipeline}}
module {
  func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
    %0 = dist.stage 0 -> (tensor<2xf32>) {
      dist.yield %x : tensor<2xf32>
    }
    return %0 : tensor<2xf32>
  }
}

// -----

// expected-error @+1 {{@main has 1 stages but dist.pipeline describes 2}}
module attributes {dist.pipeline = #dist.pipeline<stages = 2>} {
  func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
    %0 = dist.stage 0 -> (tensor<2xf32>) {
      dist.yield %x : tensor<2xf32>
    }
    return %0 : tensor<2xf32>
  }
}
