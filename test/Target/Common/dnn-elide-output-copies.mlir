// RUN: dnnc-opt %s --dnn-elide-output-copies | FileCheck %s

// CHECK-LABEL: func.func @in_place(
// CHECK-SAME: %[[IN:.*]]: memref<4xf32>, %[[OUT:.*]]: memref<4xf32>)
// CHECK-NOT: memref.alloc
// CHECK: linalg.copy ins(%[[IN]] : memref<4xf32>) outs(%[[OUT]] : memref<4xf32>)
// CHECK-NOT: memref.copy
func.func @in_place(%in: memref<4xf32>, %out: memref<4xf32>) {
  %a = memref.alloc() : memref<4xf32>
  linalg.copy ins(%in : memref<4xf32>) outs(%a : memref<4xf32>)
  memref.copy %a, %out : memref<4xf32> to memref<4xf32>
  return
}

// The same allocation copied into two outputs keeps its copies.
// CHECK-LABEL: func.func @twice(
// CHECK: memref.alloc
// CHECK: memref.copy
// CHECK: memref.copy
func.func @twice(%in: memref<4xf32>, %o1: memref<4xf32>, %o2: memref<4xf32>) {
  %a = memref.alloc() : memref<4xf32>
  linalg.copy ins(%in : memref<4xf32>) outs(%a : memref<4xf32>)
  memref.copy %a, %o1 : memref<4xf32> to memref<4xf32>
  memref.copy %a, %o2 : memref<4xf32> to memref<4xf32>
  return
}

// An input copied to an output stays a copy.
// CHECK-LABEL: func.func @passthrough(
// CHECK: memref.copy
func.func @passthrough(%in: memref<4xf32>, %out: memref<4xf32>) {
  memref.copy %in, %out : memref<4xf32> to memref<4xf32>
  return
}
