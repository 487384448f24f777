// RUN: dnnc-opt %s --dnn-cpu-outline-loop-nests --split-input-file | FileCheck %s

// Each top-level nest becomes a call of a private, internal, never-inlined
// function; constants are cloned in, buffers and scalars passed; a view with
// a dynamic offset (no bare pointer) is recomputed inside from its source;
// a nest's results are the function's.
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[A:.*]]: memref<8xf32>, %[[B:.*]]: memref<8xf32>, %[[OFF:.*]]: index, %[[R:.*]]: memref<index>
// CHECK-NOT: scf.for
// CHECK: call @main_loop0(%[[A]], %[[B]]) : (memref<8xf32>, memref<8xf32>) -> ()
// CHECK: %[[S:.*]] = call @main_loop1(%[[B]], %[[A]], %[[OFF]]) : (memref<8xf32>, memref<8xf32>, index) -> index
// CHECK: memref.store %[[S]], %[[R]][]
// CHECK: func.func private @main_loop0(%[[A0:.*]]: memref<8xf32>, %[[B0:.*]]: memref<8xf32>)
// CHECK-SAME: attributes {llvm.linkage = #llvm.linkage<internal>, passthrough = ["noinline"]}
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C8:.*]] = arith.constant 8 : index
// CHECK: scf.for %{{.*}} = %[[C0]] to %[[C8]]
// CHECK: memref.load %[[A0]]
// CHECK: memref.store %{{.*}}, %[[B0]]
// CHECK: func.func private @main_loop1(%[[B1:.*]]: memref<8xf32>, %[[A1:.*]]: memref<8xf32>, %[[OFF1:.*]]: index) -> index
// CHECK: %[[V:.*]] = memref.subview %[[A1]][%[[OFF1]]] [4] [1]
// CHECK: %[[N:.*]] = scf.for {{.*}} -> (index)
// CHECK: memref.load %[[V]]
// CHECK: return %[[N]] : index
func.func @main(%a: memref<8xf32>, %b: memref<8xf32>, %off: index, %r: memref<index>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  scf.for %i = %c0 to %c8 step %c1 {
    %x = memref.load %a[%i] : memref<8xf32>
    memref.store %x, %b[%i] : memref<8xf32>
  }
  %v = memref.subview %a[%off] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1], offset: ?>>
  %s = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %c0) -> (index) {
    %x = memref.load %v[%i] : memref<4xf32, strided<[1], offset: ?>>
    memref.store %x, %b[%i] : memref<8xf32>
    %n = arith.addi %acc, %i : index
    scf.yield %n : index
  }
  memref.store %s, %r[] : memref<index>
  return
}

// -----

// A nest that reads a buffer the bare-pointer convention cannot pass (a
// dynamic shape), not made by a view op, stays where it is; private
// functions are not visited.
// CHECK-LABEL: func.func @dynamic(
// CHECK: scf.for
// CHECK-NOT: call
// CHECK-LABEL: func.func private @helper(
// CHECK: scf.for
// CHECK-NOT: func.func
func.func @dynamic(%a: memref<?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f32
  scf.for %i = %c0 to %n step %c1 {
    memref.store %z, %a[%i] : memref<?xf32>
  }
  return
}
func.func private @helper(%a: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %z = arith.constant 0.0 : f32
  scf.for %i = %c0 to %c4 step %c1 {
    memref.store %z, %a[%i] : memref<4xf32>
  }
  return
}
