// RUN: dnnc-opt %s -split-input-file -dist-bucket-all-reduces | FileCheck %s
// RUN: dnnc-opt %s -split-input-file -dist-bucket-all-reduces=bucket-bytes=40 | FileCheck %s --check-prefix=SMALL

// Three gradients all-reduced over "dp" before an update reads them: one
// bucket, placed before the first reader. The all-reduce over "tp" (another
// group) stays as it is.

dist.mesh @m ["dp" = 2 : intra, "tp" = 2 : intra]

// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[A:[^:]*]]: tensor<2x3xf32>, %[[B:[^:]*]]: tensor<4xf32>, %[[C:[^:]*]]: tensor<f32>, %[[D:[^:]*]]: tensor<4xf32>)
// CHECK: %[[T:.*]] = dist.all_reduce sum %[[D]] on @m axes ["tp"] : tensor<4xf32>
// CHECK: %[[FA:.*]] = dnn.reshape %[[A]] : tensor<2x3xf32> -> tensor<6xf32>
// CHECK-NEXT: %[[FB:.*]] = dnn.reshape %[[B]] : tensor<4xf32> -> tensor<4xf32>
// CHECK-NEXT: %[[FC:.*]] = dnn.reshape %[[C]] : tensor<f32> -> tensor<1xf32>
// CHECK-NEXT: %[[J:.*]] = dnn.concat %[[FA]], %[[FB]], %[[FC]] axis = 0
// CHECK-NEXT: %[[R:.*]] = dist.all_reduce sum %[[J]] on @m axes ["dp"] : tensor<11xf32>
// CHECK-NEXT: %[[SA:.*]] = dnn.slice %[[R]] starts = [0] steps = [1] : tensor<11xf32> -> tensor<6xf32>
// CHECK-NEXT: %[[RA:.*]] = dnn.reshape %[[SA]] : tensor<6xf32> -> tensor<2x3xf32>
// CHECK-NEXT: %[[SB:.*]] = dnn.slice %[[R]] starts = [6] steps = [1] : tensor<11xf32> -> tensor<4xf32>
// CHECK-NEXT: %[[RB:.*]] = dnn.reshape %[[SB]] : tensor<4xf32> -> tensor<4xf32>
// CHECK-NEXT: %[[SC:.*]] = dnn.slice %[[R]] starts = [10] steps = [1] : tensor<11xf32> -> tensor<1xf32>
// CHECK-NEXT: %[[RC:.*]] = dnn.reshape %[[SC]] : tensor<1xf32> -> tensor<f32>
// CHECK-NEXT: dnn.relu %[[RA]]
// CHECK-NOT: dist.all_reduce
// CHECK: return
// The same with buckets of at most 40 bytes: A (24 bytes) and B (16) fill
// one, C stays as it was.
// SMALL-LABEL: func.func @main
// SMALL: dist.all_reduce sum %{{.*}} on @m axes ["dp"] : tensor<f32>
// SMALL: dist.all_reduce sum %{{.*}} on @m axes ["dp"] : tensor<10xf32>
func.func @main(%a: tensor<2x3xf32>, %b: tensor<4xf32>, %c: tensor<f32>, %d: tensor<4xf32>)
    -> (tensor<2x3xf32>, tensor<4xf32>, tensor<f32>, tensor<4xf32>) {
  %ra = dist.all_reduce sum %a on @m axes ["dp"] : tensor<2x3xf32>
  %t = dist.all_reduce sum %d on @m axes ["tp"] : tensor<4xf32>
  %rb = dist.all_reduce sum %b on @m axes ["dp"] : tensor<4xf32>
  %rc = dist.all_reduce sum %c on @m axes ["dp"] : tensor<f32>
  %0 = dnn.relu %ra : tensor<2x3xf32>
  %1 = dnn.relu %rb : tensor<4xf32>
  %2 = dnn.relu %rc : tensor<f32>
  return %0, %1, %2, %t : tensor<2x3xf32>, tensor<4xf32>, tensor<f32>, tensor<4xf32>
}

// -----

// Tensor parallelism: each all-reduce feeds the next layer's, so none can
// wait for another; a mean and a sum never share a bucket.

dist.mesh @m ["tp" = 2 : intra]

// CHECK-LABEL: func.func @main
// CHECK-NOT: dnn.concat
// CHECK: dist.all_reduce sum %{{.*}} : tensor<4xf32>
// CHECK: dist.all_reduce sum %{{.*}} : tensor<4xf32>
// CHECK: dist.all_reduce mean %{{.*}} : tensor<4xf32>
// CHECK-NOT: dnn.concat
func.func @main(%x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = dist.all_reduce sum %x on @m axes ["tp"] : tensor<4xf32>
  %1 = dnn.relu %0 : tensor<4xf32>
  %2 = dist.all_reduce sum %1 on @m axes ["tp"] : tensor<4xf32>
  %3 = dist.all_reduce mean %y on @m axes ["tp"] : tensor<4xf32>
  return %2, %3 : tensor<4xf32>, tensor<4xf32>
}

// -----

// An all-reduce of another's result does not join its bucket.

dist.mesh @m ["dp" = 2 : intra]

// CHECK-LABEL: func.func @main
// CHECK-NOT: dnn.concat
// CHECK: %[[A:.*]] = dist.all_reduce sum %{{.*}} : tensor<4xf32>
// CHECK-NEXT: dist.all_reduce sum %[[A]] on @m axes ["dp"] : tensor<4xf32>
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = dist.all_reduce sum %x on @m axes ["dp"] : tensor<4xf32>
  %1 = dist.all_reduce sum %0 on @m axes ["dp"] : tensor<4xf32>
  return %1 : tensor<4xf32>
}
