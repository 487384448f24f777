// RUN: dnnc-opt %s -canonicalize | FileCheck %s

dist.mesh @m ["dp" = 2 : inter, "tp" = 4 : intra]

// A reshard whose `from` equals its `to` folds away.
// CHECK-LABEL: func.func @identity_reshard
// CHECK-SAME: (%[[X:.*]]: tensor<8x16xf32>)
func.func @identity_reshard(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  // CHECK-NOT: dist.reshard
  // CHECK: return %[[X]]
  %0 = dist.reshard %x from <@m, [{"dp"}, {"tp"}]> to <@m, [{"dp"}, {"tp"}]> : tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// CHECK-LABEL: func.func @real_reshards
func.func @real_reshards(%x: tensor<8x16xf32>) -> (tensor<8x16xf32>, tensor<8x16xf32>) {
  // CHECK: dist.reshard %{{.*}} from <@m, [{"dp"}, {}]> to <@m, [{}, {"tp"}]>
  %0 = dist.reshard %x from <@m, [{"dp"}, {}]> to <@m, [{}, {"tp"}]> : tensor<8x16xf32>
  // Without `from`, nothing is known about the input: the reshard stays.
  // CHECK: dist.reshard %{{.*}} to <@m, [{}, {"tp"}]>
  %1 = dist.reshard %x to <@m, [{}, {"tp"}]> : tensor<8x16xf32>
  return %0, %1 : tensor<8x16xf32>, tensor<8x16xf32>
}
