// RUN: dnnc-opt %s --dnn-cpu-strided-copies-to-loops | FileCheck %s

// CHECK-LABEL: func.func @copies(
// CHECK-SAME: %[[A:.*]]: memref<2x3xf32>, %[[B:.*]]: memref<2x3xf32>, %[[S:.*]]: memref<2x3xf32, strided<[6, 1]>>)
// CHECK: memref.copy %[[A]], %[[B]] : memref<2x3xf32> to memref<2x3xf32>
// CHECK: linalg.copy ins(%[[A]] : memref<2x3xf32>) outs(%[[S]] : memref<2x3xf32, strided<[6, 1]>>)
// CHECK: linalg.copy ins(%[[S]] : memref<2x3xf32, strided<[6, 1]>>) outs(%[[B]] : memref<2x3xf32>)
// CHECK-NOT: memref.copy
func.func @copies(%a: memref<2x3xf32>, %b: memref<2x3xf32>, %s: memref<2x3xf32, strided<[6, 1]>>) {
  memref.copy %a, %b : memref<2x3xf32> to memref<2x3xf32>
  memref.copy %a, %s : memref<2x3xf32> to memref<2x3xf32, strided<[6, 1]>>
  memref.copy %s, %b : memref<2x3xf32, strided<[6, 1]>> to memref<2x3xf32>
  return
}
