// RUN: dnnc-opt %s -split-input-file -dist-check-partitioned -verify-diagnostics | FileCheck %s

// A per-rank program: the pass succeeds and changes nothing.

dist.mesh @m ["tp" = 2 : intra]

// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[X:.*]]: tensor<8x16xf32> {dist.sharding = #dist.sharding<@m, [{}, {}]>},
// CHECK-SAME: %[[W:.*]]: tensor<16x16xf32> {dist.sharding = #dist.sharding<@m, [{"tp"}, {}]>, dnn.weight = dense<1.000000e+00> : tensor<32x16xf32>})
// CHECK: dist.all_reduce sum
func.func @main(%x: tensor<8x16xf32> {dist.sharding = #dist.sharding<@m, [{}, {}]>},
                %w: tensor<16x16xf32> {dist.sharding = #dist.sharding<@m, [{"tp"}, {}]>,
                                       dnn.weight = dense<1.0> : tensor<32x16xf32>})
    -> (tensor<8x16xf32> {dist.sharding = #dist.sharding<@m, [{}, {}]>}) {
  %0 = dnn.matmul %x, %w : (tensor<8x16xf32>, tensor<16x16xf32>) -> tensor<8x16xf32>
  %1 = dist.all_reduce sum %0 on @m axes ["tp"] : tensor<8x16xf32>
  return %1 : tensor<8x16xf32>
}

// -----

// Without a mesh, arguments and results need no sharding.

// CHECK-LABEL: func.func @main
func.func @main(%x: tensor<8xf32>) -> tensor<8xf32> {
  return %x : tensor<8xf32>
}

// -----

dist.mesh @m ["tp" = 2 : intra]

func.func @main(%x: tensor<8xf32> {dist.sharding = #dist.sharding<@m, [{}]>})
    -> (tensor<8xf32> {dist.sharding = #dist.sharding<@m, [{}]>}) {
  // expected-error @+1 {{'dist.reshard' op is a global-IR op left in the per-rank program @main}}
  %0 = dist.reshard %x to <@m, [{}]> : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

dist.mesh @m ["tp" = 2 : intra]

func.func @main(%x: tensor<8xf32> {dist.sharding = #dist.sharding<@m, [{}]>})
    -> (tensor<8xf32> {dist.sharding = #dist.sharding<@m, [{}]>}) {
  // expected-error @+1 {{'dist.annotate' op is a global-IR op left in the per-rank program @main}}
  %0 = dist.annotate %x sharding <@m, [{}]> : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

dist.mesh @m ["tp" = 2 : intra]

// expected-error @+1 {{'func.func' op argument #0: type 'tensor<32x16xf32>' is not 'tensor<16x16xf32>', the local type of its weight of type 'tensor<32x16xf32>' under #dist.sharding<@m, [{"tp"}, {}]>}}
func.func @main(%w: tensor<32x16xf32> {dist.sharding = #dist.sharding<@m, [{"tp"}, {}]>,
                                       dnn.weight = dense<1.0> : tensor<32x16xf32>}) {
  return
}

// -----

dist.mesh @m ["tp" = 2 : intra]

// expected-error @+1 {{'func.func' op result #0: sharding holds partial sums over {"tp"}: a per-rank program takes and returns final values}}
func.func @main(%x: tensor<8xf32> {dist.sharding = #dist.sharding<@m, [{}]>})
    -> (tensor<8xf32> {dist.sharding = #dist.sharding<@m, [{}], partial = {"tp"}>}) {
  return %x : tensor<8xf32>
}

// -----

dist.mesh @m ["tp" = 2 : intra]

// expected-error @+1 {{'func.func' op argument #0: sharding holds partial sums over {"tp"}: a per-rank program takes and returns final values}}
func.func @main(%x: tensor<8xf32> {dist.sharding = #dist.sharding<@m, [{}], partial = {"tp"}>}) {
  return
}

// -----

// An accumulator (a sum over micro-batches) and its update may hold each
// device's partial share: the step's final part completes the sum.
dist.mesh @m ["dp" = 2 : intra]

func.func @main(%acc: tensor<8xf32> {dist.accumulator, dist.sharding = #dist.sharding<@m, [{}], partial = {"dp"}>},
                %x: tensor<8xf32> {dist.sharding = #dist.sharding<@m, [{}]>})
    -> (tensor<8xf32> {dist.sharding = #dist.sharding<@m, [{}], partial = {"dp"}>, dnn.updates = 0 : i64}) {
  %0 = dnn.add %acc, %x : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

dist.mesh @m ["tp" = 2 : intra]

// expected-error @+1 {{'func.func' op argument #0: sharding names @nope, which is not a dist.mesh}}
func.func @main(%x: tensor<8xf32> {dist.sharding = #dist.sharding<@nope, [{}]>}) {
  return
}

// -----

dist.mesh @m ["tp" = 2 : intra]

// expected-error @+1 {{'func.func' op argument #0: sharding uses axis "dp", which @m does not have}}
func.func @main(%x: tensor<8xf32> {dist.sharding = #dist.sharding<@m, [{"dp"}]>}) {
  return
}

// -----

dist.mesh @m ["tp" = 2 : intra]

// expected-error @+1 {{'func.func' op result #0: sharding has rank 2 but the type 'tensor<8xf32>' has rank 1}}
func.func @main(%x: tensor<8xf32> {dist.sharding = #dist.sharding<@m, [{}]>})
    -> (tensor<8xf32> {dist.sharding = #dist.sharding<@m, [{}, {}]>}) {
  return %x : tensor<8xf32>
}

// -----

dist.mesh @m ["tp" = 2 : intra]

// expected-error @+1 {{'func.func' op argument #1: has no 'dist.sharding'}}
func.func @main(%x: tensor<8xf32> {dist.sharding = #dist.sharding<@m, [{}]>}, %y: tensor<8xf32>) {
  return
}

// -----

dist.mesh @m ["tp" = 2 : intra]

// expected-error @+1 {{'func.func' op result #0: has no 'dist.sharding'}}
func.func @main(%x: tensor<8xf32> {dist.sharding = #dist.sharding<@m, [{}]>}) -> tensor<8xf32> {
  return %x : tensor<8xf32>
}
