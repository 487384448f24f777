// RUN: dnnc-opt %s -split-input-file -dist-check-shardings -verify-diagnostics | FileCheck %s

// Valid shardings: the pass succeeds and changes nothing.

dist.mesh @m ["dp" = 2 : inter, "tp" = 4 : intra]

// CHECK-LABEL: func.func @valid
// CHECK-SAME: (%[[X:.*]]: tensor<8x16xf32> {dist.sharding = #dist.sharding<@m, [{"dp"}, {"tp"}]>},
// CHECK-SAME: %{{.*}}: tensor<?x16xf32> {dist.sharding = #dist.sharding<@m, [{"dp", "tp"}, {}]>})
// CHECK-SAME: -> (tensor<8x16xf32> {dist.sharding = #dist.sharding<@m, [{}, {}], partial = {"tp"}>}, f32)
func.func @valid(%x: tensor<8x16xf32> {dist.sharding = #dist.sharding<@m, [{"dp"}, {"tp"}]>},
                 %d: tensor<?x16xf32> {dist.sharding = #dist.sharding<@m, [{"dp", "tp"}, {}]>})
    -> (tensor<8x16xf32> {dist.sharding = #dist.sharding<@m, [{}, {}], partial = {"tp"}>}, f32) {
  // CHECK: %[[Y:.*]] = arith.addf %[[X]], %[[X]] {dist.shardings = [#dist.sharding<@m, [{"tp", "dp"}, {}]>]}
  %y = arith.addf %x, %x {dist.shardings = [#dist.sharding<@m, [{"tp", "dp"}, {}]>]} : tensor<8x16xf32>
  // A scalar takes a rank-0 sharding, possibly with partial axes.
  // CHECK: arith.constant {dist.shardings = [#dist.sharding<@m, [], partial = {"dp"}>]} 1.000000e+00 : f32
  %c = arith.constant {dist.shardings = [#dist.sharding<@m, [], partial = {"dp"}>]} 1.0 : f32
  // CHECK: dist.annotate %[[Y]] sharding <@m, [{}, {"tp"}]>
  %z = dist.annotate %y sharding <@m, [{}, {"tp"}]> : tensor<8x16xf32>
  return %z, %c : tensor<8x16xf32>, f32
}

// -----

// A sharding must name a dist.mesh.

dist.mesh @m ["dp" = 2 : inter, "tp" = 4 : intra]

// expected-error @+1 {{'func.func' op argument #0: sharding names @nope, which is not a dist.mesh}}
func.func @unknown_mesh(%x: tensor<8xf32> {dist.sharding = #dist.sharding<@nope, [{}]>}) {
  return
}

// -----

dist.mesh @m ["dp" = 2 : inter, "tp" = 4 : intra]

func.func private @callee()

// expected-error @+1 {{'func.func' op argument #0: sharding names @callee, which is not a dist.mesh}}
func.func @not_a_mesh(%x: tensor<8xf32> {dist.sharding = #dist.sharding<@callee, [{}]>}) {
  return
}

// -----

// Rank, axes and divisibility are checked against the value's type.

dist.mesh @m ["dp" = 2 : inter, "tp" = 4 : intra]

// expected-error @+1 {{'func.func' op argument #1: sharding has rank 1 but the type 'tensor<8x16xf32>' has rank 2}}
func.func @arg_rank(%x: tensor<8xf32>, %y: tensor<8x16xf32> {dist.sharding = #dist.sharding<@m, [{"dp"}]>}) {
  return
}

// -----

dist.mesh @m ["dp" = 2 : inter, "tp" = 4 : intra]

// expected-error @+1 {{'func.func' op argument #0: sharding requires a ranked type, got 'tensor<*xf32>'}}
func.func @arg_unranked(%x: tensor<*xf32> {dist.sharding = #dist.sharding<@m, [{}]>}) {
  return
}

// -----

dist.mesh @m ["dp" = 2 : inter, "tp" = 4 : intra]

// expected-error @+1 {{'func.func' op result #1: mesh @m has no axis named "pp"}}
func.func @result_unknown_axis(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32> {dist.sharding = #dist.sharding<@m, [{"pp"}]>}) {
  return %x, %x : tensor<8xf32>, tensor<8xf32>
}

// -----

dist.mesh @m ["dp" = 2 : inter, "tp" = 4 : intra]

// Every failing op is reported, not only the first.
func.func @op_results(%x: tensor<8x6xf32>) -> tensor<8x6xf32> {
  // expected-error @+1 {{'arith.addf' op result #0: dim 1 of size 6 is not divisible by 4, the number of shards of mesh axes {"tp"}}}
  %0 = arith.addf %x, %x {dist.shardings = [#dist.sharding<@m, [{}, {"tp"}]>]} : tensor<8x6xf32>
  // expected-error @+1 {{'arith.mulf' op result #0: dim 0 of size 8 is not divisible by 16, the number of shards of mesh axes {"tp", "dp", "x"}}}
  %1 = arith.mulf %0, %0 {dist.shardings = [#dist.sharding<@n, [{"tp", "dp", "x"}, {}]>]} : tensor<8x6xf32>
  return %1 : tensor<8x6xf32>
}
dist.mesh @n ["dp" = 2 : inter, "tp" = 4 : intra, "x" = 2 : intra]

// -----

dist.mesh @m ["dp" = 2 : inter, "tp" = 4 : intra]

func.func @scalar_rank() -> f32 {
  // expected-error @+1 {{'arith.constant' op result #0: sharding has rank 1 but the type 'f32' has rank 0}}
  %c = arith.constant {dist.shardings = [#dist.sharding<@m, [{}]>]} 1.0 : f32
  return %c : f32
}

// -----

dist.mesh @m ["dp" = 2 : inter, "tp" = 4 : intra]

func.func @scalar_partial_axis() -> f32 {
  // expected-error @+1 {{'arith.constant' op result #0: mesh @m has no axis named "sp"}}
  %c = arith.constant {dist.shardings = [#dist.sharding<@m, [], partial = {"sp"}>]} 1.0 : f32
  return %c : f32
}
