// RUN: dnnc-opt %s | dnnc-opt | FileCheck %s
// RUN: dnnc-opt %s --mlir-print-op-generic | dnnc-opt | FileCheck %s

// CHECK: dist.mesh @m ["dp" = 2 : inter, "tp" = 4 : intra]
dist.mesh @m ["dp" = 2 : inter, "tp" = 4 : intra]
// CHECK: dist.mesh @stage0 ["x" = 2 : intra, "y" = 2 : intra] devices = [0, 2, 1, 3]
dist.mesh @stage0 ["x" = 2 : intra, "y" = 2 : intra] devices = [0, 2, 1, 3]
// CHECK: dist.mesh @line ["r" = 8 : inter]
dist.mesh @line ["r" = 8 : inter]

// CHECK-LABEL: func.func @sharding_attrs
// CHECK-SAME: {dist.sharding = #dist.sharding<@m, [{"dp"}, {}, {"tp"}]>}
// CHECK-SAME: {dist.sharding = #dist.sharding<@m, [{}, {"tp", "dp"}, {}]>}
// CHECK-SAME: -> (tensor<8x16x4xf32> {dist.sharding = #dist.sharding<@m, [{}, {}, {}], partial = {"tp"}>})
func.func @sharding_attrs(
    %x: tensor<8x16x4xf32> {dist.sharding = #dist.sharding<@m, [{"dp"}, {}, {"tp"}]>},
    %y: tensor<8x16x4xf32> {dist.sharding = #dist.sharding<@m, [{}, {"tp", "dp"}, {}]>})
    -> (tensor<8x16x4xf32> {dist.sharding = #dist.sharding<@m, [{}, {}, {}], partial = {"tp"}>}) {
  // CHECK: arith.addf
  // CHECK-SAME: dist.shardings = [#dist.sharding<@m, [{"dp"}, {}, {"tp"}]>]
  %0 = arith.addf %x, %y {dist.shardings = [#dist.sharding<@m, [{"dp"}, {}, {"tp"}]>]} : tensor<8x16x4xf32>
  return %0 : tensor<8x16x4xf32>
}

// CHECK-LABEL: func.func @standalone_attrs
// CHECK-SAME: axes = #dist.axes<{"dp", "tp"}>
// CHECK-SAME: axis = #dist.axis<"tp", 4, intra>
// CHECK-SAME: empty = #dist.axes<{}>
// CHECK-SAME: scalar = #dist.sharding<@m, [], partial = {"dp", "tp"}>
func.func @standalone_attrs() attributes {
    axis = #dist.axis<"tp", 4, intra>,
    axes = #dist.axes<{"dp", "tp"}>,
    empty = #dist.axes<{}>,
    scalar = #dist.sharding<@m, [], partial = {"dp", "tp"}>} {
  return
}

// CHECK-LABEL: func.func @annotate_reshard
// CHECK-SAME: (%[[X:.*]]: tensor<8x16xf32>)
func.func @annotate_reshard(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  // CHECK: %[[A:.*]] = dist.annotate %[[X]] sharding <@m, [{"dp"}, {}]> : tensor<8x16xf32>
  %0 = dist.annotate %x sharding <@m, [{"dp"}, {}]> : tensor<8x16xf32>
  // CHECK: %[[B:.*]] = dist.reshard %[[A]] to <@m, [{}, {"tp"}]> : tensor<8x16xf32>
  %1 = dist.reshard %0 to <@m, [{}, {"tp"}]> : tensor<8x16xf32>
  // An empty partial list is the same as none.
  // CHECK: dist.reshard %[[B]] from <@m, [{}, {"tp"}]> to <@m, [{"tp", "dp"}, {}]> : tensor<8x16xf32>
  %2 = dist.reshard %1 from <@m, [{}, {"tp"}]> to <@m, [{"tp", "dp"}, {}], partial = {}> : tensor<8x16xf32>
  // The full attribute syntax is accepted where no `:` follows it.
  // CHECK: dist.reshard %{{.*}} from <@m, [{}, {}], partial = {"tp"}> to <@m, [{}, {}]> : tensor<8x16xf32>
  %3 = dist.reshard %2 from #dist.sharding<@m, [{}, {}], partial = {"tp"}> to <@m, [{}, {}]> : tensor<8x16xf32>
  return %3 : tensor<8x16xf32>
}

// CHECK-LABEL: func.func @collectives
// CHECK-SAME: (%[[X:.*]]: tensor<8x16xf32>)
func.func @collectives(%x: tensor<8x16xf32>) {
  // CHECK: dist.all_reduce sum %[[X]] on @m axes ["tp"] : tensor<8x16xf32>
  %0 = dist.all_reduce sum %x on @m axes ["tp"] : tensor<8x16xf32>
  // CHECK: dist.all_reduce max %[[X]] on @m axes ["dp", "tp"] : tensor<8x16xf32>
  %1 = dist.all_reduce max %x on @m axes ["dp", "tp"] : tensor<8x16xf32>
  // CHECK: dist.all_reduce min
  %2 = dist.all_reduce min %x on @m axes ["dp"] : tensor<8x16xf32>
  // CHECK: dist.all_reduce prod
  %3 = dist.all_reduce prod %x on @m axes ["dp"] : tensor<8x16xf32>
  // CHECK: dist.all_reduce mean
  %4 = dist.all_reduce mean %x on @m axes ["dp"] : tensor<8x16xf32>
  // CHECK: dist.all_gather %[[X]] on @m axes ["tp"] gather_dim = 1 : tensor<8x16xf32> -> tensor<8x64xf32>
  %5 = dist.all_gather %x on @m axes ["tp"] gather_dim = 1 : tensor<8x16xf32> -> tensor<8x64xf32>
  // CHECK: dist.all_gather %[[X]] on @m axes ["tp", "dp"] gather_dim = 0 : tensor<8x16xf32> -> tensor<64x16xf32>
  %6 = dist.all_gather %x on @m axes ["tp", "dp"] gather_dim = 0 : tensor<8x16xf32> -> tensor<64x16xf32>
  // CHECK: dist.reduce_scatter sum %[[X]] on @m axes ["tp"] scatter_dim = 0 : tensor<8x16xf32> -> tensor<2x16xf32>
  %7 = dist.reduce_scatter sum %x on @m axes ["tp"] scatter_dim = 0 : tensor<8x16xf32> -> tensor<2x16xf32>
  // CHECK: dist.all_to_all %[[X]] on @m axes ["tp"] split_dim = 0 concat_dim = 1 : tensor<8x16xf32> -> tensor<2x64xf32>
  %8 = dist.all_to_all %x on @m axes ["tp"] split_dim = 0 concat_dim = 1 : tensor<8x16xf32> -> tensor<2x64xf32>
  // CHECK: dist.all_to_all %[[X]] on @m axes ["dp"] split_dim = 1 concat_dim = 1 : tensor<8x16xf32> -> tensor<8x16xf32>
  %9 = dist.all_to_all %x on @m axes ["dp"] split_dim = 1 concat_dim = 1 : tensor<8x16xf32> -> tensor<8x16xf32>
  // CHECK: dist.broadcast %[[X]] on @m axes ["dp"] root = 1 : tensor<8x16xf32>
  %10 = dist.broadcast %x on @m axes ["dp"] root = 1 : tensor<8x16xf32>
  return
}

// Dynamic dims stay dynamic through the shape rules.
// CHECK-LABEL: func.func @collectives_dynamic
func.func @collectives_dynamic(%x: tensor<?x16xf32>) {
  // CHECK: dist.all_gather %{{.*}} gather_dim = 0 : tensor<?x16xf32> -> tensor<?x16xf32>
  %0 = dist.all_gather %x on @m axes ["tp"] gather_dim = 0 : tensor<?x16xf32> -> tensor<?x16xf32>
  // CHECK: dist.reduce_scatter sum %{{.*}} scatter_dim = 0 : tensor<?x16xf32> -> tensor<?x16xf32>
  %1 = dist.reduce_scatter sum %x on @m axes ["tp"] scatter_dim = 0 : tensor<?x16xf32> -> tensor<?x16xf32>
  return
}

// CHECK-LABEL: func.func @shard_slice
// CHECK-SAME: (%[[X:.*]]: tensor<8x16xf32>, %[[Y:.*]]: tensor<?x16xf32>)
func.func @shard_slice(%x: tensor<8x16xf32>, %y: tensor<?x16xf32>) {
  // CHECK: dist.shard_slice %[[X]] to <@m, [{"dp"}, {}]> : tensor<8x16xf32> -> tensor<4x16xf32>
  %0 = dist.shard_slice %x to <@m, [{"dp"}, {}]> : tensor<8x16xf32> -> tensor<4x16xf32>
  // Several axes on one dim, and both dims split.
  // CHECK: dist.shard_slice %[[X]] to <@m, [{"tp", "dp"}, {}]> : tensor<8x16xf32> -> tensor<1x16xf32>
  %1 = dist.shard_slice %x to <@m, [{"tp", "dp"}, {}]> : tensor<8x16xf32> -> tensor<1x16xf32>
  // CHECK: dist.shard_slice %[[X]] to <@m, [{"dp"}, {"tp"}]> : tensor<8x16xf32> -> tensor<4x4xf32>
  %2 = dist.shard_slice %x to <@m, [{"dp"}, {"tp"}]> : tensor<8x16xf32> -> tensor<4x4xf32>
  // No split: the whole tensor.
  // CHECK: dist.shard_slice %[[X]] to <@m, [{}, {}]> : tensor<8x16xf32> -> tensor<8x16xf32>
  %3 = dist.shard_slice %x to <@m, [{}, {}]> : tensor<8x16xf32> -> tensor<8x16xf32>
  // Dynamic dims stay dynamic.
  // CHECK: dist.shard_slice %[[Y]] to <@m, [{"dp"}, {"tp"}]> : tensor<?x16xf32> -> tensor<?x4xf32>
  %4 = dist.shard_slice %y to <@m, [{"dp"}, {"tp"}]> : tensor<?x16xf32> -> tensor<?x4xf32>
  return
}

// CHECK-LABEL: func.func @point_to_point
// CHECK-SAME: (%[[X:.*]]: tensor<2x16xf32>)
func.func @point_to_point(%x: tensor<2x16xf32>) -> tensor<2x16xf32> {
  // CHECK: dist.send %[[X]] to 7 tag 3 on @line : tensor<2x16xf32>
  dist.send %x to 7 tag 3 on @line : tensor<2x16xf32>
  // CHECK: dist.send %[[X]] to 100 tag 0 : tensor<2x16xf32>
  dist.send %x to 100 tag 0 : tensor<2x16xf32>
  // CHECK: %[[R:.*]] = dist.recv from 0 tag 3 on @line : tensor<2x16xf32>
  %0 = dist.recv from 0 tag 3 on @line : tensor<2x16xf32>
  // CHECK: dist.recv from 5 tag 1 : tensor<2x16xf32>
  %1 = dist.recv from 5 tag 1 : tensor<2x16xf32>
  // CHECK: return %[[R]]
  return %0 : tensor<2x16xf32>
}

// CHECK-LABEL: func.func @pipeline
// CHECK-SAME: (%[[X:.*]]: tensor<8x16xf32>)
func.func @pipeline(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  // CHECK: %[[S0:.*]]:2 = dist.stage 0 on @stage0 -> (tensor<8x16xf32>, tensor<8x16xf32>) {
  // CHECK:   %[[A:.*]] = arith.addf %[[X]], %[[X]]
  // CHECK:   dist.yield %[[A]], %[[X]] : tensor<8x16xf32>, tensor<8x16xf32>
  // CHECK: }
  %s0:2 = dist.stage 0 on @stage0 -> (tensor<8x16xf32>, tensor<8x16xf32>) {
    %a = arith.addf %x, %x : tensor<8x16xf32>
    dist.yield %a, %x : tensor<8x16xf32>, tensor<8x16xf32>
  }
  // CHECK: %[[T:.*]] = dist.transfer %[[S0]]#0 from stage 0 to stage 1 : tensor<8x16xf32>
  %t = dist.transfer %s0#0 from stage 0 to stage 1 : tensor<8x16xf32>
  // CHECK: %[[S1:.*]] = dist.stage 1 -> (tensor<8x16xf32>) attributes {name = "tail"} {
  // CHECK:   arith.mulf %[[T]], %[[T]]
  // CHECK:   dist.yield
  %s1 = dist.stage 1 -> (tensor<8x16xf32>) attributes {name = "tail"} {
    %b = arith.mulf %t, %t : tensor<8x16xf32>
    dist.yield %b : tensor<8x16xf32>
  }
  // A stage without results.
  // CHECK: dist.stage 2 {
  // CHECK-NEXT: dist.yield
  // CHECK-NEXT: }
  dist.stage 2 {
    dist.yield
  }
  return %s1 : tensor<8x16xf32>
}

// The plan record of the device phase (dnnc-record-plan).
// CHECK-LABEL: module @plan_record
// CHECK-SAME: dist.plan = #dist.plan<axes = [#dist.axis<"pp", 2, inter>], devices = [1, 0], pipeline = <axis = "pp", stages = 2>,
// CHECK-SAME: buffers = [#dist.buffer<role = input, name = "x", type = tensor<2xf32>, global = tensor<2xf32>, microbatch_dim = 0>, #dist.buffer<role = weight, name = "w", type = tensor<2xf32>, global = tensor<2xf32>, weight = dense<1.000000e+00> : tensor<2xf32>>, #dist.buffer<role = activation, name = "transfer 0", type = tensor<2xf32>, global = tensor<2xf32>>, #dist.buffer<role = output, name = "y", type = tensor<2xf32>, global = tensor<2xf32>>]
// CHECK-SAME: functions = [#dist.function<symbol = "dnnc_entry_stage_0", buffers = [0, 1, 2]>, #dist.function<symbol = "dnnc_entry_stage_1", stage = 1, buffers = [2, 3]>]
// CHECK-SAME: transfers = [#dist.transfer<from = 0, to = 1, source = 2, target = 2>]
module @plan_record attributes {dist.plan = #dist.plan<axes = [#dist.axis<"pp", 2, inter>], devices = [1, 0], pipeline = #dist.pipeline<axis = "pp", stages = 2>, buffers = [#dist.buffer<role = input, name = "x", type = tensor<2xf32>, global = tensor<2xf32>, microbatch_dim = 0>, #dist.buffer<role = weight, name = "w", type = tensor<2xf32>, global = tensor<2xf32>, weight = dense<1.0> : tensor<2xf32>>, #dist.buffer<role = activation, name = "transfer 0", type = tensor<2xf32>, global = tensor<2xf32>>, #dist.buffer<role = output, name = "y", type = tensor<2xf32>, global = tensor<2xf32>, index = 0>], functions = [#dist.function<symbol = "dnnc_entry_stage_0", buffers = [0, 1, 2]>, #dist.function<symbol = "dnnc_entry_stage_1", stage = 1, buffers = [2, 3]>], transfers = [#dist.transfer<from = 0, to = 1, source = 2, target = 2>]>} {}
