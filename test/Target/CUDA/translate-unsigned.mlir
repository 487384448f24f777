// RUN: dnnc-translate --mlir-to-cuda %s | FileCheck %s

// Unsigned integer arithmetic as the dnn lowering emits it: signless arith
// between casts from and to ui8, which are the same C type (int8_t).

// CHECK-LABEL: // linalg.generic
// CHECK: __global__ void {{k[0-9]+_generic}}(const int8_t *p0, int8_t *p1) {
// CHECK: int8_t [[A:a[0-9]+]] = p0[
// CHECK: int8_t [[S:v[0-9]+]] = (int8_t)[[A]];
// CHECK: int8_t [[D:v[0-9]+]] = (int8_t)((uint8_t)[[S]] - (uint8_t)(int8_t)1LL);
// CHECK: int8_t [[U:v[0-9]+]] = (int8_t)[[D]];
// CHECK: p1[{{.*}}] = [[U]];
func.func @main(%x: memref<2xui8>, %y: memref<2xui8>) {
  %c1 = arith.constant 1 : i8
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                  iterator_types = ["parallel"]}
      ins(%x : memref<2xui8>) outs(%y : memref<2xui8>) {
  ^bb0(%in: ui8, %out: ui8):
    %0 = builtin.unrealized_conversion_cast %in : ui8 to i8
    %1 = arith.subi %0, %c1 : i8
    %2 = builtin.unrealized_conversion_cast %1 : i8 to ui8
    linalg.yield %2 : ui8
  }
  return
}
