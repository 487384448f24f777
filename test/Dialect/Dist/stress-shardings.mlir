// RUN: dnnc-opt %s --dist-stress-shardings=seed=1 --dist-check-shardings | FileCheck %s
// RUN: dnnc-opt %s --dist-stress-shardings=seed=1 > %t.1a
// RUN: dnnc-opt %s --dist-stress-shardings=seed=1 > %t.1b
// RUN: diff %t.1a %t.1b
// RUN: dnnc-opt %s --dist-stress-shardings=seed=2 > %t.2
// RUN: not diff %t.1a %t.2 > /dev/null

// Every value gets a sharding that uses the mesh axes wherever a dim or
// factor can take them (no op result below is left whole), the choice is
// the same for the same seed and differs between seeds, and the reshards
// the disagreeing ops need are explicit.
dist.mesh @m ["x" = 2 : intra, "y" = 2 : intra]

// CHECK-LABEL: func.func @main
// CHECK-NOT: #dist.sharding<@m, [{}, {}]>
// CHECK-NOT: dist.annotate
// CHECK: dnn.matmul {{.*}}dist.shardings
// CHECK: dnn.relu {{.*}}dist.shardings
// CHECK: dnn.reduce_sum {{.*}}dist.shardings
// CHECK: dist.reshard
// CHECK: return
func.func @main(%a: tensor<8x4xf32>, %b: tensor<4x8xf32>) -> tensor<8xf32> {
  %0 = dnn.matmul %a, %b : (tensor<8x4xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
  %1 = dist.annotate %0 sharding <@m, [{"x", "y"}, {}]> : tensor<8x8xf32>
  %2 = dnn.relu %1 : tensor<8x8xf32>
  %3 = dnn.reduce_sum %2 axes = [1] keep_dims = false : tensor<8x8xf32> -> tensor<8xf32>
  return %3 : tensor<8xf32>
}
