// RUN: dnnc-opt %s --dnn-number-constant-globals | FileCheck %s

// The constant globals of bufferization, renamed and moved in the order of
// their first use; the unused one is erased, other globals are kept.

// CHECK:      memref.global "private" constant @__constant_2xf32 : memref<2xf32> = dense<3.000000e+00>
// CHECK-NEXT: memref.global "private" constant @__constant_2xf32_0 : memref<2xf32> = dense<1.000000e+00>
// CHECK-NEXT: memref.global "private" constant @__constant_1xi64 : memref<1xi64> = dense<7>
// CHECK-NOT:  dense<5.000000e+00>
// CHECK:      memref.global "private" @state : memref<2xf32>
// CHECK-LABEL: func.func @f
// CHECK-NEXT: memref.get_global @__constant_2xf32 : memref<2xf32>
// CHECK-NEXT: memref.get_global @__constant_2xf32_0 : memref<2xf32>
// CHECK-NEXT: memref.get_global @__constant_1xi64 : memref<1xi64>
// CHECK-LABEL: func.func @g
// CHECK-NEXT: memref.get_global @__constant_2xf32_0 : memref<2xf32>
memref.global "private" constant @__constant_2xf32 : memref<2xf32> = dense<1.0>
memref.global "private" constant @__constant_2xf32_0 : memref<2xf32> = dense<5.0>
memref.global "private" @state : memref<2xf32>
memref.global "private" constant @__constant_2xf32_1 : memref<2xf32> = dense<3.0>
memref.global "private" constant @__constant_1xi64 : memref<1xi64> = dense<7>
func.func @f() {
  %0 = memref.get_global @__constant_2xf32_1 : memref<2xf32>
  %1 = memref.get_global @__constant_2xf32 : memref<2xf32>
  %2 = memref.get_global @__constant_1xi64 : memref<1xi64>
  return
}
func.func @g() {
  %0 = memref.get_global @__constant_2xf32 : memref<2xf32>
  return
}
