// RUN: dnnc-opt %s --split-input-file --verify-diagnostics --dist-propagate-shardings | FileCheck %s

// An annotation in the middle of the graph spreads backwards to the inputs
// and forwards to the result; it leaves no op behind.
dist.mesh @m ["x" = 2 : intra]
// CHECK-LABEL: func.func @main
// CHECK-SAME: tensor<8x4xf32> {dist.sharding = #dist.sharding<@m, [{"x"}, {}]>}
// CHECK-SAME: tensor<8x4xf32> {dist.sharding = #dist.sharding<@m, [{"x"}, {}]>}
// CHECK-SAME: -> (tensor<8x4xf32> {dist.sharding = #dist.sharding<@m, [{"x"}, {}]>})
func.func @main(%a: tensor<8x4xf32>, %b: tensor<8x4xf32>) -> tensor<8x4xf32> {
  // CHECK: dnn.add {{.*}}dist.shardings = [#dist.sharding<@m, [{"x"}, {}]>]
  %0 = dnn.add %a, %b : tensor<8x4xf32>
  // CHECK-NOT: dist.annotate
  // CHECK-NOT: dist.reshard
  %1 = dist.annotate %0 sharding <@m, [{"x"}, {}]> : tensor<8x4xf32>
  // CHECK: dnn.relu {{.*}}dist.shardings = [#dist.sharding<@m, [{"x"}, {}]>]
  %2 = dnn.relu %1 : tensor<8x4xf32>
  return %2 : tensor<8x4xf32>
}

// -----

// A split the op's rule forbids (softmax along its axis) is resolved by a
// reshard, reported on the op.
dist.mesh @m ["x" = 2 : intra]
// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[A:.*]]: tensor<8x4xf32> {dist.sharding = #dist.sharding<@m, [{}, {"x"}]>})
func.func @main(%a: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %0 = dist.annotate %a sharding <@m, [{}, {"x"}]> : tensor<8x4xf32>
  // CHECK: %[[R:.*]] = dist.reshard %[[A]] from <@m, [{}, {"x"}]> to <@m, [{}, {}]>
  // CHECK: dnn.softmax %[[R]] axis = 1 {dist.shardings = [#dist.sharding<@m, [{}, {}]>]}
  // expected-remark @below {{'dnn.softmax' needs a reshard of operand #0 from #dist.sharding<@m, [{}, {"x"}]> to #dist.sharding<@m, [{}, {}]>}}
  %1 = dnn.softmax %0 axis = 1 : tensor<8x4xf32>
  return %1 : tensor<8x4xf32>
}

// -----

// Two annotations disagree: the first one seen wins, and the value is
// resharded once for the other.
dist.mesh @m ["x" = 2 : intra]
// CHECK-LABEL: func.func @main
func.func @main(%a: tensor<8x4xf32>) -> (tensor<8x4xf32>, tensor<8x4xf32>) {
  // CHECK: %[[E:.*]] = dnn.exp {{.*}}dist.shardings = [#dist.sharding<@m, [{"x"}, {}]>]
  %0 = dnn.exp %a : tensor<8x4xf32>
  // CHECK-NEXT: %[[R:.*]] = dist.reshard %[[E]] from <@m, [{"x"}, {}]> to <@m, [{}, {"x"}]>
  // CHECK-NOT: dist.reshard
  %1 = dist.annotate %0 sharding <@m, [{"x"}, {}]> : tensor<8x4xf32>
  %2 = dist.annotate %0 sharding <@m, [{}, {"x"}]> : tensor<8x4xf32>
  // CHECK: return %[[E]], %[[R]]
  return %1, %2 : tensor<8x4xf32>, tensor<8x4xf32>
}

// -----

// A matmul whose contraction dim is split leaves partial sums, which are
// summed (a reshard from partial) before the result is used.
dist.mesh @m ["x" = 2 : intra]
// CHECK-LABEL: func.func @main
func.func @main(%a: tensor<4x8xf32>, %b: tensor<8x2xf32>) -> tensor<4x2xf32> {
  %0 = dist.annotate %a sharding <@m, [{}, {"x"}]> : tensor<4x8xf32>
  // CHECK: %[[M:.*]] = dnn.matmul {{.*}}dist.shardings = [#dist.sharding<@m, [{}, {}], partial = {"x"}>]
  %1 = dnn.matmul %0, %b : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
  // CHECK: %[[R:.*]] = dist.reshard %[[M]] from <@m, [{}, {}], partial = {"x"}> to <@m, [{}, {}]>
  // CHECK: dnn.relu %[[R]]
  // expected-remark @below {{'dnn.relu' needs a reshard of operand #0}}
  %2 = dnn.relu %1 : tensor<4x2xf32>
  return %2 : tensor<4x2xf32>
}

// -----

dist.mesh @m ["x" = 2 : intra]
// expected-error @below {{sharding needs a single device mesh, but the module also has @m}}
dist.mesh @n ["y" = 2 : intra]
func.func @main(%a: tensor<8x4xf32>) -> tensor<8x4xf32> {
  return %a : tensor<8x4xf32>
}
