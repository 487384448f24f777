// RUN: dnnc-opt %s --dnn-cpu-approximate-math | FileCheck %s

// Constant exponents become products (GPT-2's x^3) and square roots.
// CHECK-LABEL: func.func @powers(
// CHECK-SAME: %[[X:.*]]: f32
// CHECK: %[[X2:.*]] = arith.mulf %[[X]], %[[X]] : f32
// CHECK: %[[X3:.*]] = arith.mulf %[[X]], %[[X2]] : f32
// CHECK: %[[R:.*]] = math.sqrt %[[X]] : f32
// CHECK: %[[P:.*]] = math.powf %[[X]], %{{.*}} : f32
// CHECK: return %[[X3]], %[[R]], %[[P]]
func.func @powers(%x: f32) -> (f32, f32, f32) {
  %c3 = arith.constant 3.0 : f32
  %half = arith.constant 0.5 : f32
  %odd = arith.constant 1.7 : f32
  %0 = math.powf %x, %c3 : f32
  %1 = math.powf %x, %half : f32
  %2 = math.powf %x, %odd : f32
  return %0, %1, %2 : f32, f32, f32
}

// f32 tanh, exp and erf are inlined polynomials; log and f64 keep libm.
// CHECK-LABEL: func.func @approximated(
// CHECK-NOT: math.tanh
// CHECK-NOT: math.exp {{.*}} : f32
// CHECK-NOT: math.erf
// CHECK: math.log %{{.*}} : f32
// CHECK: math.exp %{{.*}} : f64
func.func @approximated(%x: f32, %y: f64) -> (f32, f32, f32, f32, f64) {
  %0 = math.tanh %x : f32
  %1 = math.exp %x : f32
  %2 = math.erf %x : f32
  %3 = math.log %x : f32
  %4 = math.exp %y : f64
  return %0, %1, %2, %3, %4 : f32, f32, f32, f32, f64
}
