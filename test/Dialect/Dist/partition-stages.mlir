// RUN: dnnc-opt %s --dist-partition | FileCheck %s
// RUN: dnnc-opt %s --dist-partition --dist-outline-stages | FileCheck %s --check-prefix=OUTLINE

// Two pipeline stages of two tensor-parallel devices each. Stage 0 leaves
// its result split over "tp" by columns; the transfer carries each device's
// block to the device of stage 1 with the same "tp" coordinate; stage 1
// needs the value whole: the reshard after the transfer becomes an
// all-gather inside stage 1.

// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32> {{.*}}, %[[W:.*]]: tensor<8x4xf32> {{.*}})
// CHECK: %[[S0:.*]] = dist.stage 0 -> (tensor<4x4xf32>) {
// CHECK:   %[[M:.*]] = dnn.matmul %[[X]], %[[W]] : (tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<4x4xf32>
// CHECK:   dist.yield %[[M]] : tensor<4x4xf32>
// CHECK: %[[T:.*]] = dist.transfer %[[S0]] from stage 0 to stage 1 : tensor<4x4xf32>
// CHECK: %[[S1:.*]] = dist.stage 1 -> (tensor<4x8xf32>) {
// CHECK:   %[[G:.*]] = dist.all_gather %[[T]] on @mesh axes ["tp"] gather_dim = 1 : tensor<4x4xf32> -> tensor<4x8xf32>
// CHECK:   %[[R:.*]] = dnn.relu %[[G]] : tensor<4x8xf32>
// CHECK:   dist.yield %[[R]] : tensor<4x8xf32>
// CHECK: return %[[S1]] : tensor<4x8xf32>

// Outlined for the device phase: one function per stage, over the values
// each uses from outside (first use order); @main is gone.
// OUTLINE-NOT: func.func @main
// OUTLINE: func.func @stage_0(%[[X:.*]]: tensor<4x8xf32> {dnn.name = "x"}, %[[W:.*]]: tensor<8x4xf32> {dnn.name = "w"}) -> tensor<4x4xf32>
// OUTLINE:   %[[M:.*]] = dnn.matmul %[[X]], %[[W]]
// OUTLINE:   return %[[M]] : tensor<4x4xf32>
// OUTLINE: func.func @stage_1(%[[T:.*]]: tensor<4x4xf32>) -> tensor<4x8xf32>
// OUTLINE:   dist.all_gather %[[T]] on @mesh axes ["tp"] gather_dim = 1
// OUTLINE:   return
// OUTLINE-NOT: dist.transfer
module attributes {dist.pipeline = #dist.pipeline<axis = "pp", stages = 2>} {
  dist.mesh @mesh ["pp" = 2 : inter, "tp" = 2 : intra]
  func.func @main(%x: tensor<4x8xf32> {dist.sharding = #dist.sharding<@mesh, [{}, {}]>, dnn.name = "x"},
                  %w: tensor<8x8xf32> {dist.sharding = #dist.sharding<@mesh, [{}, {"tp"}]>, dnn.name = "w", dnn.weight = dense<1.0> : tensor<8x8xf32>})
      -> (tensor<4x8xf32> {dist.sharding = #dist.sharding<@mesh, [{}, {}]>}) {
    %0 = dist.stage 0 -> (tensor<4x8xf32>) attributes {dist.shardings = [#dist.sharding<@mesh, [{}, {"tp"}]>]} {
      %m = dnn.matmul %x, %w {dist.shardings = [#dist.sharding<@mesh, [{}, {"tp"}]>]} : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
      dist.yield %m : tensor<4x8xf32>
    }
    %1 = dist.transfer %0 from stage 0 to stage 1 {dist.shardings = [#dist.sharding<@mesh, [{}, {"tp"}]>]} : tensor<4x8xf32>
    %2 = dist.stage 1 -> (tensor<4x8xf32>) attributes {dist.shardings = [#dist.sharding<@mesh, [{}, {}]>]} {
      %g = dist.reshard %1 to <@mesh, [{}, {}]> {dist.shardings = [#dist.sharding<@mesh, [{}, {}]>]} : tensor<4x8xf32>
      %r = dnn.relu %g {dist.shardings = [#dist.sharding<@mesh, [{}, {}]>]} : tensor<4x8xf32>
      dist.yield %r : tensor<4x8xf32>
    }
    return %2 : tensor<4x8xf32>
  }
}
