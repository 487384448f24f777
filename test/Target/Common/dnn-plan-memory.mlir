// RUN: dnnc-opt %s --dnn-plan-memory | FileCheck %s
// RUN: not dnnc-opt %s --dnn-plan-memory=allow-unplanned=false 2>&1 \
// RUN:   | FileCheck %s --check-prefix=ERR

// CHECK: llvm.func @dnnc_rt_workspace(i64) -> !llvm.ptr

// A chain: %a is dead once %c is written, so %c reuses its space.
// CHECK-LABEL: func.func @reuse_dead_buffer(
// CHECK-SAME: dnnc.planned_bytes = 3072 : i64, dnnc.workspace_bytes = 2048 : i64
// CHECK: %[[BYTES:.*]] = llvm.mlir.constant(2048 : i64) : i64
// CHECK: %[[P:.*]] = llvm.call @dnnc_rt_workspace(%[[BYTES]]) : (i64) -> !llvm.ptr
// CHECK: %[[ARENA:.*]] = builtin.unrealized_conversion_cast %{{.*}} : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)> to memref<2048xi8>
// CHECK-NOT: memref.alloc
// CHECK: %[[A:.*]] = memref.view %[[ARENA]][%c0{{.*}}][] : memref<2048xi8> to memref<256xf32>
// CHECK: linalg.exp ins(%{{.*}} : memref<256xf32>) outs(%[[A]] : memref<256xf32>)
// CHECK: memref.view %[[ARENA]][%c1024{{.*}}][] : memref<2048xi8> to memref<256xf32>
// CHECK: memref.view %[[ARENA]][%c0{{.*}}][] : memref<2048xi8> to memref<256xf32>
func.func @reuse_dead_buffer(%x: memref<256xf32>, %y: memref<256xf32>) {
  %a = memref.alloc() {alignment = 64 : i64} : memref<256xf32>
  linalg.exp ins(%x : memref<256xf32>) outs(%a : memref<256xf32>)
  %b = memref.alloc() {alignment = 64 : i64} : memref<256xf32>
  linalg.exp ins(%a : memref<256xf32>) outs(%b : memref<256xf32>)
  %c = memref.alloc() {alignment = 64 : i64} : memref<256xf32>
  linalg.exp ins(%b : memref<256xf32>) outs(%c : memref<256xf32>)
  linalg.exp ins(%c : memref<256xf32>) outs(%y : memref<256xf32>)
  return
}

// Both buffers are live at the add: disjoint ranges, the larger first.
// CHECK-LABEL: func.func @overlapping_live_ranges(
// CHECK-SAME: dnnc.workspace_bytes = 3072 : i64
// CHECK: memref.view %{{.*}}[%c2048{{.*}}][] : memref<3072xi8> to memref<256xf32>
// CHECK: memref.view %{{.*}}[%c0{{.*}}][] : memref<3072xi8> to memref<512xf32>
func.func @overlapping_live_ranges(%x: memref<256xf32>, %z: memref<512xf32>,
                                   %y: memref<256xf32>) {
  %a = memref.alloc() : memref<256xf32>
  linalg.exp ins(%x : memref<256xf32>) outs(%a : memref<256xf32>)
  %b = memref.alloc() : memref<512xf32>
  linalg.exp ins(%z : memref<512xf32>) outs(%b : memref<512xf32>)
  %s = memref.subview %b[0] [256] [1] : memref<512xf32> to memref<256xf32, strided<[1]>>
  linalg.add ins(%a, %s : memref<256xf32>, memref<256xf32, strided<[1]>>) outs(%y : memref<256xf32>)
  return
}

// %a is read through its subview after %b is written: they must not share
// space (without the alias %a would be dead at %b's first use).
// CHECK-LABEL: func.func @alias_through_subview(
// CHECK-SAME: dnnc.workspace_bytes = 2048 : i64
// CHECK: memref.view %{{.*}}[%c0{{.*}}][] : memref<2048xi8> to memref<256xf32>
// CHECK: memref.subview
// CHECK: memref.view %{{.*}}[%c1024{{.*}}][] : memref<2048xi8> to memref<256xf32>
func.func @alias_through_subview(%x: memref<256xf32>, %y: memref<128xf32>) {
  %a = memref.alloc() : memref<256xf32>
  linalg.exp ins(%x : memref<256xf32>) outs(%a : memref<256xf32>)
  %s = memref.subview %a[128] [128] [1] : memref<256xf32> to memref<128xf32, strided<[1], offset: 128>>
  %b = memref.alloc() : memref<256xf32>
  linalg.exp ins(%x : memref<256xf32>) outs(%b : memref<256xf32>)
  %t = memref.subview %b[0] [128] [1] : memref<256xf32> to memref<128xf32, strided<[1]>>
  linalg.add ins(%s, %t : memref<128xf32, strided<[1], offset: 128>>, memref<128xf32, strided<[1]>>) outs(%y : memref<128xf32>)
  return
}

// The same through a collapse_shape whose result is used inside a loop: the
// use counts at the loop.
// CHECK-LABEL: func.func @alias_through_collapse_shape(
// CHECK-SAME: dnnc.workspace_bytes = 2048 : i64
// CHECK: memref.view %{{.*}}[%c0{{.*}}][] : memref<2048xi8> to memref<16x16xf32>
// CHECK: memref.collapse_shape
// CHECK: memref.view %{{.*}}[%c1024{{.*}}][] : memref<2048xi8> to memref<256xf32>
func.func @alias_through_collapse_shape(%x: memref<16x16xf32>, %y: memref<256xf32>) {
  %a = memref.alloc() : memref<16x16xf32>
  linalg.exp ins(%x : memref<16x16xf32>) outs(%a : memref<16x16xf32>)
  %f = memref.collapse_shape %a [[0, 1]] : memref<16x16xf32> into memref<256xf32>
  %b = memref.alloc() : memref<256xf32>
  linalg.exp ins(%y : memref<256xf32>) outs(%b : memref<256xf32>)
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  scf.for %i = %c0 to %c256 step %c1 {
    %u = memref.load %f[%i] : memref<256xf32>
    %v = memref.load %b[%i] : memref<256xf32>
    %w = arith.addf %u, %v : f32
    memref.store %w, %y[%i] : memref<256xf32>
  }
  return
}

// Offsets are 256-byte aligned (or more, as the allocation asks), the arena
// size too.
// CHECK-LABEL: func.func @alignment(
// CHECK-SAME: dnnc.planned_bytes = 29 : i64, dnnc.workspace_bytes = 1280 : i64
// CHECK: memref.view %{{.*}}[%c0{{.*}}][] : memref<1280xi8> to memref<3xf32>
// CHECK: memref.view %{{.*}}[%c256{{.*}}][] : memref<1280xi8> to memref<9xi8>
// CHECK: memref.view %{{.*}}[%c1024{{.*}}][] : memref<1280xi8> to memref<2xi32>
func.func @alignment(%x: memref<3xf32>, %y: memref<9xi8>, %z: memref<2xi32>) {
  %a = memref.alloc() : memref<3xf32>
  %b = memref.alloca() : memref<9xi8>
  %c = memref.alloc() {alignment = 1024 : i64} : memref<2xi32>
  memref.copy %x, %a : memref<3xf32> to memref<3xf32>
  memref.copy %y, %b : memref<9xi8> to memref<9xi8>
  memref.copy %z, %c : memref<2xi32> to memref<2xi32>
  memref.copy %a, %x : memref<3xf32> to memref<3xf32>
  memref.copy %b, %y : memref<9xi8> to memref<9xi8>
  memref.copy %c, %z : memref<2xi32> to memref<2xi32>
  return
}

// An address taken for a runtime kernel keeps the buffer live until the
// call: %b may not reuse %a's space, %c may. A returned buffer outlives
// the function: it stays an allocation.
// CHECK-LABEL: func.func @address_and_return(
// CHECK-SAME: dnnc.unplanned_allocs = 1 : i64, dnnc.workspace_bytes = 512 : i64
// CHECK: memref.view %{{.*}}[%c0{{.*}}][] : memref<512xi8> to memref<64xf32>
// CHECK: memref.view %{{.*}}[%c256{{.*}}][] : memref<512xi8> to memref<64xf32>
// CHECK: memref.view %{{.*}}[%c0{{.*}}][] : memref<512xi8> to memref<64xf32>
// CHECK: memref.alloc() : memref<64xf32>
// ERR: error: 'memref.alloc' op cannot be placed in the workspace arena: it is returned by the function
func.func private @kernel(index, index)
func.func @address_and_return(%x: memref<64xf32>) -> memref<64xf32> {
  %a = memref.alloc() : memref<64xf32>
  linalg.exp ins(%x : memref<64xf32>) outs(%a : memref<64xf32>)
  %pa = memref.extract_aligned_pointer_as_index %a : memref<64xf32> -> index
  %c4 = arith.constant 4 : index
  %pa4 = arith.addi %pa, %c4 : index
  %b = memref.alloc() : memref<64xf32>
  linalg.exp ins(%x : memref<64xf32>) outs(%b : memref<64xf32>)
  %pb = memref.extract_aligned_pointer_as_index %b : memref<64xf32> -> index
  call @kernel(%pa4, %pb) : (index, index) -> ()
  %c = memref.alloc() : memref<64xf32>
  linalg.exp ins(%b : memref<64xf32>) outs(%c : memref<64xf32>)
  %d = memref.alloc() : memref<64xf32>
  linalg.exp ins(%c : memref<64xf32>) outs(%d : memref<64xf32>)
  return %d : memref<64xf32>
}

// Nothing to plan: unchanged.
// CHECK-LABEL: func.func @no_allocs(
// CHECK-NOT: dnnc.
// CHECK-NEXT: linalg.exp
// CHECK-NEXT: return
func.func @no_allocs(%x: memref<4xf32>, %y: memref<4xf32>) {
  linalg.exp ins(%x : memref<4xf32>) outs(%y : memref<4xf32>)
  return
}

// Dynamic and nested allocations stay and are counted; the static one is
// planned.
// CHECK-LABEL: func.func @unplanned(
// CHECK-SAME: dnnc.unplanned_allocs = 2 : i64
// CHECK-SAME: dnnc.workspace_bytes = 256 : i64
// CHECK: memref.view %{{.*}} : memref<256xi8> to memref<4xf32>
// CHECK: memref.alloc(%{{.*}}) : memref<?xf32>
// CHECK: scf.for
// CHECK-NEXT: memref.alloc() : memref<4xf32>
// ERR: error: 'memref.alloc' op cannot be placed in the workspace arena: its shape is dynamic
// ERR: error: 'memref.alloc' op cannot be placed in the workspace arena: it is nested in a region
func.func @unplanned(%x: memref<4xf32>, %n: index) {
  %s = memref.alloc() : memref<4xf32>
  memref.copy %x, %s : memref<4xf32> to memref<4xf32>
  %d = memref.alloc(%n) : memref<?xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    %t = memref.alloc() : memref<4xf32>
    memref.copy %s, %t : memref<4xf32> to memref<4xf32>
    memref.dealloc %t : memref<4xf32>
  }
  memref.dealloc %d : memref<?xf32>
  return
}
