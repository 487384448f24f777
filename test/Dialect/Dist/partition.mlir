// RUN: dnnc-opt %s -split-input-file -dist-partition -verify-diagnostics | FileCheck %s
// RUN: dnnc-opt %s -split-input-file -dist-partition -verify-diagnostics -dist-check-partitioned > /dev/null

// Megatron MLP on one axis: W1 column-parallel, W2 row-parallel. The only
// collective is the all-reduce of the row-parallel matmul's partial sums.

dist.mesh @m ["tp" = 2 : intra]

// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[X:.*]]: tensor<8x16xf32> {dist.sharding = #dist.sharding<@m, [{}, {}]>, dnn.name = "x"},
// CHECK-SAME: %[[W1:.*]]: tensor<16x16xf32> {dist.sharding = #dist.sharding<@m, [{}, {"tp"}]>, dnn.weight = dense<1.000000e+00> : tensor<16x32xf32>},
// CHECK-SAME: %[[W2:.*]]: tensor<16x16xf32> {dist.sharding = #dist.sharding<@m, [{"tp"}, {}]>, dnn.weight = dense<2.000000e+00> : tensor<32x16xf32>})
// CHECK-SAME: -> (tensor<8x16xf32> {dist.sharding = #dist.sharding<@m, [{}, {}]>})
// CHECK-NOT: dist.
// CHECK: %[[H:.*]] = dnn.matmul %[[X]], %[[W1]] : (tensor<8x16xf32>, tensor<16x16xf32>) -> tensor<8x16xf32>
// CHECK-NEXT: %[[G:.*]] = dnn.gelu %[[H]] approximation = <none> : tensor<8x16xf32>
// CHECK-NEXT: %[[Y:.*]] = dnn.matmul %[[G]], %[[W2]] : (tensor<8x16xf32>, tensor<16x16xf32>) -> tensor<8x16xf32>
// CHECK-NEXT: %[[R:.*]] = dist.all_reduce sum %[[Y]] on @m axes ["tp"] : tensor<8x16xf32>
// CHECK-NEXT: return %[[R]] : tensor<8x16xf32>
func.func @main(%x: tensor<8x16xf32> {dist.sharding = #dist.sharding<@m, [{}, {}]>, dnn.name = "x"},
                %w1: tensor<16x32xf32> {dist.sharding = #dist.sharding<@m, [{}, {"tp"}]>, dnn.weight = dense<1.0> : tensor<16x32xf32>},
                %w2: tensor<32x16xf32> {dist.sharding = #dist.sharding<@m, [{"tp"}, {}]>, dnn.weight = dense<2.0> : tensor<32x16xf32>})
    -> (tensor<8x16xf32> {dist.sharding = #dist.sharding<@m, [{}, {}]>}) {
  %h = dnn.matmul %x, %w1 {dist.shardings = [#dist.sharding<@m, [{}, {"tp"}]>]}
      : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  %g = dnn.gelu %h approximation = <none> {dist.shardings = [#dist.sharding<@m, [{}, {"tp"}]>]}
      : tensor<8x32xf32>
  %y = dnn.matmul %g, %w2 {dist.shardings = [#dist.sharding<@m, [{}, {}], partial = {"tp"}>]}
      : (tensor<8x32xf32>, tensor<32x16xf32>) -> tensor<8x16xf32>
  %r = dist.reshard %y from <@m, [{}, {}], partial = {"tp"}> to <@m, [{}, {}]>
      : tensor<8x16xf32>
  return %r : tensor<8x16xf32>
}

// -----

// Split to replicated: an all-gather. Identical reshards of one value are
// lowered once.

dist.mesh @m ["x" = 2 : inter, "y" = 2 : intra]

// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[A:.*]]: tensor<4x16xf32>
// CHECK-NEXT: %[[G:.*]] = dist.all_gather %[[A]] on @m axes ["x"] gather_dim = 0 : tensor<4x16xf32> -> tensor<8x16xf32>
// CHECK-NEXT: return %[[G]], %[[G]]
func.func @main(%a: tensor<8x16xf32> {dist.sharding = #dist.sharding<@m, [{"x"}, {}]>})
    -> (tensor<8x16xf32> {dist.sharding = #dist.sharding<@m, [{}, {}]>},
        tensor<8x16xf32> {dist.sharding = #dist.sharding<@m, [{}, {}]>}) {
  %0 = dist.reshard %a from <@m, [{"x"}, {}]> to <@m, [{}, {}]> : tensor<8x16xf32>
  %1 = dist.reshard %a to <@m, [{}, {}]> : tensor<8x16xf32>
  return %0, %1 : tensor<8x16xf32>, tensor<8x16xf32>
}

// -----

// Replicated to split: one local slice, no communication.

dist.mesh @m ["x" = 2 : inter, "y" = 2 : intra]

// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[A:.*]]: tensor<8x16xf32>
// CHECK-SAME: -> (tensor<4x8xf32>
// CHECK-NEXT: %[[S:.*]] = dist.shard_slice %[[A]] to <@m, [{"y"}, {"x"}]> : tensor<8x16xf32> -> tensor<4x8xf32>
// CHECK-NEXT: return %[[S]]
func.func @main(%a: tensor<8x16xf32> {dist.sharding = #dist.sharding<@m, [{}, {}]>})
    -> (tensor<8x16xf32> {dist.sharding = #dist.sharding<@m, [{"y"}, {"x"}]>}) {
  %0 = dist.reshard %a from <@m, [{}, {}]> to <@m, [{"y"}, {"x"}]> : tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

// A dim split over two axes is gathered one axis at a time, the minor axis
// first.

dist.mesh @m ["x" = 2 : inter, "y" = 2 : intra]

// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[A:.*]]: tensor<2x16xf32>
// CHECK-NEXT: %[[G0:.*]] = dist.all_gather %[[A]] on @m axes ["y"] gather_dim = 0 : tensor<2x16xf32> -> tensor<4x16xf32>
// CHECK-NEXT: %[[G1:.*]] = dist.all_gather %[[G0]] on @m axes ["x"] gather_dim = 0 : tensor<4x16xf32> -> tensor<8x16xf32>
// CHECK-NEXT: return %[[G1]]
func.func @main(%a: tensor<8x16xf32> {dist.sharding = #dist.sharding<@m, [{"x", "y"}, {}]>})
    -> (tensor<8x16xf32> {dist.sharding = #dist.sharding<@m, [{}, {}]>}) {
  %0 = dist.reshard %a from <@m, [{"x", "y"}, {}]> to <@m, [{}, {}]> : tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

// Only the axes after the common prefix of a dim move: "x" stays, "y" is
// gathered.

dist.mesh @m ["x" = 2 : inter, "y" = 2 : intra]

// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[A:.*]]: tensor<2x16xf32>
// CHECK-NEXT: %[[G:.*]] = dist.all_gather %[[A]] on @m axes ["y"] gather_dim = 0 : tensor<2x16xf32> -> tensor<4x16xf32>
// CHECK-NEXT: return %[[G]]
func.func @main(%a: tensor<8x16xf32> {dist.sharding = #dist.sharding<@m, [{"x", "y"}, {}]>})
    -> (tensor<8x16xf32> {dist.sharding = #dist.sharding<@m, [{"x"}, {}]>}) {
  %0 = dist.reshard %a to <@m, [{"x"}, {}]> : tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

// An axis that moves from one dim to another: one all-to-all.

dist.mesh @m ["x" = 2 : inter, "y" = 2 : intra]

// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[A:.*]]: tensor<4x16xf32>
// CHECK-SAME: -> (tensor<8x8xf32>
// CHECK-NEXT: %[[T:.*]] = dist.all_to_all %[[A]] on @m axes ["x"] split_dim = 1 concat_dim = 0 : tensor<4x16xf32> -> tensor<8x8xf32>
// CHECK-NEXT: return %[[T]]
func.func @main(%a: tensor<8x16xf32> {dist.sharding = #dist.sharding<@m, [{"x"}, {}]>})
    -> (tensor<8x16xf32> {dist.sharding = #dist.sharding<@m, [{}, {"x"}]>}) {
  %0 = dist.reshard %a from <@m, [{"x"}, {}]> to <@m, [{}, {"x"}]> : tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

// Two axes that swap dims: "x" is gathered first, which frees dim 0 for "y"
// to move there with an all-to-all; "x" is then sliced on dim 1.

dist.mesh @m ["x" = 2 : inter, "y" = 2 : intra]

// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[A:.*]]: tensor<4x8xf32>
// CHECK-NEXT: %[[G:.*]] = dist.all_gather %[[A]] on @m axes ["x"] gather_dim = 0 : tensor<4x8xf32> -> tensor<8x8xf32>
// CHECK-NEXT: %[[T:.*]] = dist.all_to_all %[[G]] on @m axes ["y"] split_dim = 0 concat_dim = 1 : tensor<8x8xf32> -> tensor<4x16xf32>
// CHECK-NEXT: %[[S:.*]] = dist.shard_slice %[[T]] to <@m, [{}, {"x"}]> : tensor<4x16xf32> -> tensor<4x8xf32>
// CHECK-NEXT: return %[[S]]
func.func @main(%a: tensor<8x16xf32> {dist.sharding = #dist.sharding<@m, [{"x"}, {"y"}]>})
    -> (tensor<8x16xf32> {dist.sharding = #dist.sharding<@m, [{"y"}, {"x"}]>}) {
  %0 = dist.reshard %a to <@m, [{"y"}, {"x"}]> : tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

// Partial sums completed into a split: a reduce-scatter over the partial
// axes (listed in mesh order, the group order).

dist.mesh @m ["x" = 2 : inter, "y" = 2 : intra]

// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[A:.*]]: tensor<8x4xf32> {{.*}}, %[[B:.*]]: tensor<4x4xf32>
// CHECK-SAME: -> (tensor<2x4xf32>
// CHECK-NEXT: %[[P:.*]] = dnn.matmul %[[A]], %[[B]] : (tensor<8x4xf32>, tensor<4x4xf32>) -> tensor<8x4xf32>
// CHECK-NEXT: %[[R:.*]] = dist.reduce_scatter sum %[[P]] on @m axes ["x", "y"] scatter_dim = 0 : tensor<8x4xf32> -> tensor<2x4xf32>
// CHECK-NEXT: return %[[R]]
func.func @main(%a: tensor<8x16xf32> {dist.sharding = #dist.sharding<@m, [{}, {"x", "y"}]>},
                %b: tensor<16x4xf32> {dist.sharding = #dist.sharding<@m, [{"x", "y"}, {}]>})
    -> (tensor<8x4xf32> {dist.sharding = #dist.sharding<@m, [{"x", "y"}, {}]>}) {
  %0 = dnn.matmul %a, %b {dist.shardings = [#dist.sharding<@m, [{}, {}], partial = {"x", "y"}>]}
      : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  %1 = dist.reshard %0 to <@m, [{"x", "y"}, {}]> : tensor<8x4xf32>
  return %1 : tensor<8x4xf32>
}

// -----

// Partial sums with two uses, one split and one replicated: the sums are
// completed once (the reduce-scatter of the first use) and the second use
// gathers that result, so both see the same bits; a separate all-reduce
// would add in another order.

dist.mesh @m ["x" = 2 : inter, "y" = 2 : intra]

// CHECK-LABEL: func.func @main
// CHECK: %[[P:.*]] = dnn.matmul
// CHECK-NEXT: %[[R:.*]] = dist.reduce_scatter sum %[[P]] on @m axes ["x", "y"] scatter_dim = 0 : tensor<8x4xf32> -> tensor<2x4xf32>
// CHECK-NOT: all_reduce
// CHECK: dist.all_gather %[[R]]
// CHECK-NOT: all_reduce
// CHECK: return
func.func @main(%a: tensor<8x16xf32> {dist.sharding = #dist.sharding<@m, [{}, {"x", "y"}]>},
                %b: tensor<16x4xf32> {dist.sharding = #dist.sharding<@m, [{"x", "y"}, {}]>})
    -> (tensor<8x4xf32> {dist.sharding = #dist.sharding<@m, [{"x", "y"}, {}]>},
        tensor<8x4xf32> {dist.sharding = #dist.sharding<@m, [{}, {}]>}) {
  %0 = dnn.matmul %a, %b {dist.shardings = [#dist.sharding<@m, [{}, {}], partial = {"x", "y"}>]}
      : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  %1 = dist.reshard %0 to <@m, [{"x", "y"}, {}]> : tensor<8x4xf32>
  %2 = dist.reshard %0 to <@m, [{}, {}]> : tensor<8x4xf32>
  return %1, %2 : tensor<8x4xf32>, tensor<8x4xf32>
}

// -----

// Partial sums over two axes, one kept: the all-reduce spans the other only.

dist.mesh @m ["x" = 2 : inter, "y" = 2 : intra]

// CHECK-LABEL: func.func @main
// CHECK: %[[P:.*]] = dnn.matmul
// CHECK-NEXT: %[[R0:.*]] = dist.all_reduce sum %[[P]] on @m axes ["y"] : tensor<8x4xf32>
// CHECK-NEXT: %[[R1:.*]] = dist.all_reduce sum %[[R0]] on @m axes ["x"] : tensor<8x4xf32>
// CHECK-NEXT: return %[[R1]]
func.func @main(%a: tensor<8x16xf32> {dist.sharding = #dist.sharding<@m, [{}, {"x", "y"}]>},
                %b: tensor<16x4xf32> {dist.sharding = #dist.sharding<@m, [{"x", "y"}, {}]>})
    -> (tensor<8x4xf32> {dist.sharding = #dist.sharding<@m, [{}, {}]>}) {
  %0 = dnn.matmul %a, %b {dist.shardings = [#dist.sharding<@m, [{}, {}], partial = {"x", "y"}>]}
      : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  %1 = dist.reshard %0 to <@m, [{}, {}], partial = {"x"}> : tensor<8x4xf32>
  %2 = dist.reshard %1 to <@m, [{}, {}]> : tensor<8x4xf32>
  return %2 : tensor<8x4xf32>
}

// -----

// Reductions of kind max and mean over a split dim are completed right
// after the op.

dist.mesh @m ["x" = 2 : inter, "y" = 2 : intra]

// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[A:.*]]: tensor<4x8xf32>
// CHECK-SAME: -> (tensor<4xf32> {{.*}}, tensor<4xf32>
// CHECK-NEXT: %[[M:.*]] = dnn.reduce_max %[[A]] axes = [1] keep_dims = false : tensor<4x8xf32> -> tensor<4xf32>
// CHECK-NEXT: %[[MR:.*]] = dist.all_reduce max %[[M]] on @m axes ["x"] : tensor<4xf32>
// CHECK-NEXT: %[[E:.*]] = dnn.reduce_mean %[[A]] axes = [1] keep_dims = false : tensor<4x8xf32> -> tensor<4xf32>
// CHECK-NEXT: %[[ER:.*]] = dist.all_reduce mean %[[E]] on @m axes ["x"] : tensor<4xf32>
// CHECK-NEXT: return %[[MR]], %[[ER]]
func.func @main(%a: tensor<8x16xf32> {dist.sharding = #dist.sharding<@m, [{"y"}, {"x"}]>})
    -> (tensor<8xf32> {dist.sharding = #dist.sharding<@m, [{"y"}]>},
        tensor<8xf32> {dist.sharding = #dist.sharding<@m, [{"y"}]>}) {
  %0 = dnn.reduce_max %a axes = [1] keep_dims = false {dist.shardings = [#dist.sharding<@m, [{"y"}]>]}
      : tensor<8x16xf32> -> tensor<8xf32>
  %1 = dnn.reduce_mean %a axes = [1] keep_dims = false {dist.shardings = [#dist.sharding<@m, [{"y"}]>]}
      : tensor<8x16xf32> -> tensor<8xf32>
  return %0, %1 : tensor<8xf32>, tensor<8xf32>
}

// -----

// A split constant is built whole and sliced; a split splat is the splat
// of the local type.

dist.mesh @m ["x" = 2 : inter, "y" = 2 : intra]

// CHECK-LABEL: func.func @main
// CHECK-SAME: -> (tensor<2xf32> {{.*}}, tensor<2x4xf32>
// CHECK-NEXT: %[[C:.*]] = dnn.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]> : tensor<4xf32>
// CHECK-NEXT: %[[S:.*]] = dist.shard_slice %[[C]] to <@m, [{"x"}]> : tensor<4xf32> -> tensor<2xf32>
// CHECK-NEXT: %[[H:.*]] = dnn.constant dense<5.000000e-01> : tensor<2x4xf32>
// CHECK-NEXT: return %[[S]], %[[H]]
func.func @main()
    -> (tensor<4xf32> {dist.sharding = #dist.sharding<@m, [{"x"}]>},
        tensor<4x8xf32> {dist.sharding = #dist.sharding<@m, [{"x"}, {"y"}]>}) {
  %0 = dnn.constant {dist.shardings = [#dist.sharding<@m, [{"x"}]>]}
      dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %1 = dnn.constant {dist.shardings = [#dist.sharding<@m, [{"x"}, {"y"}]>]}
      dense<0.5> : tensor<4x8xf32>
  return %0, %1 : tensor<4xf32>, tensor<4x8xf32>
}

// -----

// A grouped convolution with its group factor split: each device runs half
// of the groups.

dist.mesh @m ["x" = 2 : inter, "y" = 2 : intra]

// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[IN:.*]]: tensor<1x2x5x5xf32> {{.*}}, %[[W:.*]]: tensor<2x1x3x3xf32>
// CHECK-NEXT: dnn.conv %[[IN]], %[[W]] strides = [1, 1] pads = [1, 1, 1, 1] dilations = [1, 1] group = 2 : (tensor<1x2x5x5xf32>, tensor<2x1x3x3xf32>) -> tensor<1x2x5x5xf32>
func.func @main(%in: tensor<1x4x5x5xf32> {dist.sharding = #dist.sharding<@m, [{}, {"x"}, {}, {}]>},
                %w: tensor<4x1x3x3xf32> {dist.sharding = #dist.sharding<@m, [{"x"}, {}, {}, {}]>})
    -> (tensor<1x4x5x5xf32> {dist.sharding = #dist.sharding<@m, [{}, {"x"}, {}, {}]>}) {
  %0 = dnn.conv %in, %w strides = [1, 1] pads = [1, 1, 1, 1] dilations = [1, 1] group = 4
      {dist.shardings = [#dist.sharding<@m, [{}, {"x"}, {}, {}]>]}
      : (tensor<1x4x5x5xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x5x5xf32>
  return %0 : tensor<1x4x5x5xf32>
}

// -----

// A convolution whose input channels are split leaves partial sums: its
// bias is added by one device of each partial group only (the bias and
// zeros, concatenated, of which each device keeps its block).

dist.mesh @m ["x" = 2 : inter, "y" = 2 : intra]

// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[IN:.*]]: tensor<1x2x5x5xf32> {{.*}}, %[[W:.*]]: tensor<4x2x3x3xf32> {{.*}}, %[[B:.*]]: tensor<4xf32>
// CHECK-NEXT: %[[Z:.*]] = dnn.constant dense<0.000000e+00> : tensor<4xf32>
// CHECK-NEXT: %[[BZ:.*]] = dnn.concat %[[B]], %[[Z]] axis = 0 : (tensor<4xf32>, tensor<4xf32>) -> tensor<8xf32>
// CHECK-NEXT: %[[LB:.*]] = dist.shard_slice %[[BZ]] to <@m, [{"y"}]> : tensor<8xf32> -> tensor<4xf32>
// CHECK-NEXT: %[[C:.*]] = dnn.conv %[[IN]], %[[W]], %[[LB]] {{.*}} group = 1 : (tensor<1x2x5x5xf32>, tensor<4x2x3x3xf32>, tensor<4xf32>) -> tensor<1x4x5x5xf32>
// CHECK-NEXT: dist.all_reduce sum %[[C]] on @m axes ["y"]
func.func @main(%in: tensor<1x4x5x5xf32> {dist.sharding = #dist.sharding<@m, [{}, {"y"}, {}, {}]>},
                %w: tensor<4x4x3x3xf32> {dist.sharding = #dist.sharding<@m, [{}, {"y"}, {}, {}]>},
                %b: tensor<4xf32> {dist.sharding = #dist.sharding<@m, [{}]>})
    -> (tensor<1x4x5x5xf32> {dist.sharding = #dist.sharding<@m, [{}, {}, {}, {}]>}) {
  %0 = dnn.conv %in, %w, %b strides = [1, 1] pads = [1, 1, 1, 1] dilations = [1, 1] group = 1
      {dist.shardings = [#dist.sharding<@m, [{}, {}, {}, {}], partial = {"y"}>]}
      : (tensor<1x4x5x5xf32>, tensor<4x4x3x3xf32>, tensor<4xf32>) -> tensor<1x4x5x5xf32>
  %1 = dist.reshard %0 to <@m, [{}, {}, {}, {}]> : tensor<1x4x5x5xf32>
  return %1 : tensor<1x4x5x5xf32>
}

// -----

// A reshape that keeps the split of the major dim runs on the local block;
// a pinned rule (global factor sizes) is dropped.

dist.mesh @m ["x" = 2 : inter, "y" = 2 : intra]

// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[A:.*]]: tensor<4x16xf32>
// CHECK-SAME: -> (tensor<64xf32>
// CHECK-NEXT: %[[R:.*]] = dnn.reshape %[[A]] : tensor<4x16xf32> -> tensor<64xf32>
// CHECK-NEXT: return %[[R]]
func.func @main(%a: tensor<8x16xf32> {dist.sharding = #dist.sharding<@m, [{"x"}, {}]>})
    -> (tensor<128xf32> {dist.sharding = #dist.sharding<@m, [{"x"}]>}) {
  %0 = dnn.reshape %a {dist.shardings = [#dist.sharding<@m, [{"x"}]>],
                       dnn.sharding_rule = #dnn.sharding_rule<([i, j]) -> ([ij]) {i=8, j=16}>}
      : tensor<8x16xf32> -> tensor<128xf32>
  return %0 : tensor<128xf32>
}

// -----

// Without a mesh the pass changes nothing.

// CHECK-LABEL: func.func @main
// CHECK-SAME: (%{{.*}}: tensor<8x16xf32>)
// CHECK-NEXT: dnn.relu %{{.*}} : tensor<8x16xf32>
func.func @main(%a: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %0 = dnn.relu %a : tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

// Functions other than @main are left alone.

dist.mesh @m ["x" = 2 : inter]

// CHECK-LABEL: func.func @other
// CHECK-SAME: (%{{.*}}: tensor<8xf32> {dist.sharding = #dist.sharding<@m, [{"x"}]>})
// CHECK-NEXT: dnn.relu %{{.*}} {dist.shardings = [#dist.sharding<@m, [{"x"}]>]} : tensor<8xf32>
func.func @other(%a: tensor<8xf32> {dist.sharding = #dist.sharding<@m, [{"x"}]>}) -> tensor<8xf32> {
  %0 = dnn.relu %a {dist.shardings = [#dist.sharding<@m, [{"x"}]>]} : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// Errors. A reshard may complete partial sums but not create them.

dist.mesh @m ["x" = 2 : inter]

func.func @main(%a: tensor<8xf32> {dist.sharding = #dist.sharding<@m, [{}]>})
    -> (tensor<8xf32> {dist.sharding = #dist.sharding<@m, [{}]>}) {
  // expected-error @+1 {{'dist.reshard' op cannot be partitioned: it would turn a value into partial sums over "x", which is not supported}}
  %0 = dist.reshard %a to <@m, [{}], partial = {"x"}> : tensor<8xf32>
  %1 = dist.reshard %0 to <@m, [{}]> : tensor<8xf32>
  return %1 : tensor<8xf32>
}

// -----

dist.mesh @m ["x" = 2 : inter]

func.func @main(%a: tensor<8xf32> {dist.sharding = #dist.sharding<@m, [{"x"}]>})
    -> (tensor<8xf32> {dist.sharding = #dist.sharding<@m, [{}]>}) {
  // expected-error @+1 {{'dnn.relu' op cannot be partitioned: result #0 has sharding #dist.sharding<@m, [{}]> but the op computes #dist.sharding<@m, [{"x"}]>}}
  %0 = dnn.relu %a {dist.shardings = [#dist.sharding<@m, [{}]>]} : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

dist.mesh @m ["x" = 2 : inter]

func.func @main(%a: tensor<8x4xf32> {dist.sharding = #dist.sharding<@m, [{}, {"x"}]>},
                %b: tensor<4x8xf32> {dist.sharding = #dist.sharding<@m, [{}, {}]>})
    -> (tensor<8x8xf32> {dist.sharding = #dist.sharding<@m, [{}, {}]>}) {
  // expected-error @+1 {{'dnn.matmul' op cannot be partitioned: operand #1 has sharding #dist.sharding<@m, [{}, {}]> but the op computes with #dist.sharding<@m, [{"x"}, {}]>}}
  %0 = dnn.matmul %a, %b {dist.shardings = [#dist.sharding<@m, [{}, {}], partial = {"x"}>]}
      : (tensor<8x4xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
  %1 = dist.reshard %0 to <@m, [{}, {}]> : tensor<8x8xf32>
  return %1 : tensor<8x8xf32>
}

// -----

dist.mesh @m ["x" = 2 : inter]

func.func @main(%a: tensor<8x4xf32> {dist.sharding = #dist.sharding<@m, [{}, {"x"}]>},
                %b: tensor<4x8xf32> {dist.sharding = #dist.sharding<@m, [{"x"}, {}]>})
    -> (tensor<8x8xf32> {dist.sharding = #dist.sharding<@m, [{}, {}]>}) {
  %0 = dnn.matmul %a, %b {dist.shardings = [#dist.sharding<@m, [{}, {}], partial = {"x"}>]}
      : (tensor<8x4xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
  // expected-error @+1 {{'dnn.relu' op cannot be partitioned: operand #0 holds partial sums over {"x"} (a dist.reshard must complete them first)}}
  %1 = dnn.relu %0 {dist.shardings = [#dist.sharding<@m, [{}, {}]>]} : tensor<8x8xf32>
  return %1 : tensor<8x8xf32>
}

// -----

dist.mesh @m ["x" = 2 : inter]

func.func @main(%a: tensor<8xf32> {dist.sharding = #dist.sharding<@m, [{}]>})
    -> (tensor<8xf32> {dist.sharding = #dist.sharding<@m, [{}]>}) {
  // expected-error @+1 {{'dnn.relu' op cannot be partitioned: result #0 has no sharding ('dist.shardings')}}
  %0 = dnn.relu %a : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

dist.mesh @m ["x" = 2 : inter]

func.func @main(%a: tensor<8xf32> {dist.sharding = #dist.sharding<@m, [{}]>})
    -> (tensor<8xf32> {dist.sharding = #dist.sharding<@m, [{}]>}) {
  // expected-error @+1 {{'arith.addf' op cannot be partitioned: only dnn ops, dist.reshard, dist.stage, dist.transfer, dist.microbatch_slice and func.return are supported in @main}}
  %0 = arith.addf %a, %a {dist.shardings = [#dist.sharding<@m, [{}]>]} : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

dist.mesh @m ["x" = 2 : inter]

// expected-error @+1 {{'func.func' op argument #0 has no 'dist.sharding'}}
func.func @main(%a: tensor<8xf32>) -> (tensor<8xf32> {dist.sharding = #dist.sharding<@m, [{}]>}) {
  return %a : tensor<8xf32>
}

// -----

dist.mesh @m ["x" = 2 : inter]
// expected-error @+1 {{sharding needs a single device mesh, but the module also has @m}}
dist.mesh @n ["x" = 2 : inter]

// -----

dist.mesh @m ["x" = 2 : inter]

func.func @main(%a: tensor<8xf32> {dist.sharding = #dist.sharding<@m, [{"x"}]>})
    -> (tensor<8xf32> {dist.sharding = #dist.sharding<@m, [{}]>}) {
  // expected-error @+1 {{'dist.reshard' op cannot be partitioned: 'from' is #dist.sharding<@m, [{}]> but its operand has sharding #dist.sharding<@m, [{"x"}]>}}
  %0 = dist.reshard %a from <@m, [{}]> to <@m, [{}]> : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

dist.mesh @m ["x" = 4 : inter]

func.func @main(%a: tensor<8xf32> {dist.sharding = #dist.sharding<@m, [{}]>})
    -> (tensor<6xf32> {dist.sharding = #dist.sharding<@m, [{}]>}) {
  // expected-error @+1 {{'dnn.constant' op cannot be partitioned: result #0 has an invalid sharding: dim 0 of size 6 is not divisible by 4, the number of shards of mesh axes {"x"}}}
  %0 = dnn.constant {dist.shardings = [#dist.sharding<@m, [{"x"}]>]} dense<1.0> : tensor<6xf32>
  %1 = dist.reshard %0 to <@m, [{}]> : tensor<6xf32>
  return %1 : tensor<6xf32>
}

// -----

dist.mesh @m ["x" = 2 : inter]

// expected-error @+1 {{'func.func' op argument #0 has an invalid sharding: mesh @m has no axis named "y"}}
func.func @main(%a: tensor<8xf32> {dist.sharding = #dist.sharding<@m, [{"y"}]>})
    -> (tensor<8xf32> {dist.sharding = #dist.sharding<@m, [{}]>}) {
  %0 = dist.reshard %a to <@m, [{}]> : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// An accumulator summing a data-parallel gradient over micro-batches holds
// each device's partial share: its adder adds the local shares (no
// collective); the sum is completed once, where the step reads it.

dist.mesh @m ["dp" = 2 : intra]

// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[ACC:.*]]: tensor<4x8xf32> {dist.accumulator, dist.sharding = #dist.sharding<@m, [{}, {}], partial = {"dp"}>},
// CHECK-SAME: %[[X:.*]]: tensor<2x4xf32> {dist.sharding = #dist.sharding<@m, [{"dp"}, {}]>}, %[[Y:.*]]: tensor<2x8xf32> {dist.sharding = #dist.sharding<@m, [{"dp"}, {}]>})
// CHECK: %[[G:.*]] = dnn.matmul %{{.*}}, %[[Y]] : (tensor<4x2xf32>, tensor<2x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: %[[S:.*]] = dnn.add %[[ACC]], %[[G]] : tensor<4x8xf32>
// CHECK-NEXT: return %[[S]]
func.func @main(%acc: tensor<4x8xf32> {dist.accumulator, dist.sharding = #dist.sharding<@m, [{}, {}], partial = {"dp"}>},
                %x: tensor<4x4xf32> {dist.sharding = #dist.sharding<@m, [{"dp"}, {}]>},
                %y: tensor<4x8xf32> {dist.sharding = #dist.sharding<@m, [{"dp"}, {}]>})
    -> (tensor<4x8xf32> {dist.sharding = #dist.sharding<@m, [{}, {}], partial = {"dp"}>, dnn.updates = 0 : i64}) {
  %xt = dnn.transpose %x, permutation = [1, 0] {dist.shardings = [#dist.sharding<@m, [{}, {"dp"}]>]} : tensor<4x4xf32> -> tensor<4x4xf32>
  %g = dnn.matmul %xt, %y {dist.shardings = [#dist.sharding<@m, [{}, {}], partial = {"dp"}>]}
      : (tensor<4x4xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %s = dnn.add %acc, %g {dist.shardings = [#dist.sharding<@m, [{}, {}], partial = {"dp"}>]} : tensor<4x8xf32>
  return %s : tensor<4x8xf32>
}
