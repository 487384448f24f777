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

// Scalar f32 tanh, exp and erf become calls of one shared function per op
// (a second use calls the same function); log and f64 keep libm.
// CHECK-LABEL: func.func @approximated(
// CHECK-SAME: %[[X:.*]]: f32, %[[Y:.*]]: f64
// CHECK: %[[T:.*]] = call @__dnnc_tanh_f32(%[[X]]) : (f32) -> f32
// CHECK: %[[E:.*]] = call @__dnnc_exp_f32(%[[X]]) : (f32) -> f32
// CHECK: %[[R:.*]] = call @__dnnc_erf_f32(%[[X]]) : (f32) -> f32
// CHECK: %[[T2:.*]] = call @__dnnc_tanh_f32(%[[T]]) : (f32) -> f32
// CHECK: %[[L:.*]] = math.log %[[X]] : f32
// CHECK: %[[D:.*]] = math.exp %[[Y]] : f64
// CHECK: return %[[T2]], %[[E]], %[[R]], %[[L]], %[[D]]
func.func @approximated(%x: f32, %y: f64) -> (f32, f32, f32, f32, f64) {
  %0 = math.tanh %x : f32
  %1 = math.exp %x : f32
  %2 = math.erf %x : f32
  %t = math.tanh %0 : f32
  %3 = math.log %x : f32
  %4 = math.exp %y : f64
  return %t, %1, %2, %3, %4 : f32, f32, f32, f32, f64
}

// Each shared function: vector variants of 4, 8 and 16 lanes, then the
// scalar function naming them for LLVM's loop vectorizer; the bodies are
// polynomials (no math.tanh left), never inlined, hidden, without effects.
// CHECK-LABEL: func.func @__dnnc_tanh_v4_f32(
// CHECK-SAME: vector<4xf32>) -> vector<4xf32>
// CHECK-SAME: llvm.readnone
// CHECK-SAME: passthrough = ["noinline"]
// CHECK-SAME: visibility_ = 1 : i64
// CHECK-NOT: math.tanh
// CHECK: func.func @__dnnc_tanh_v8_f32(%{{.*}}: vector<8xf32>) -> vector<8xf32>
// CHECK: func.func @__dnnc_tanh_v16_f32(%{{.*}}: vector<16xf32>) -> vector<16xf32>
// CHECK-LABEL: func.func @__dnnc_tanh_f32(
// CHECK-SAME: f32) -> f32
// CHECK-SAME: passthrough = ["noinline", ["vector-function-abi-variant", "_ZGV_LLVM_N4v___dnnc_tanh_f32(__dnnc_tanh_v4_f32),_ZGV_LLVM_N8v___dnnc_tanh_f32(__dnnc_tanh_v8_f32),_ZGV_LLVM_N16v___dnnc_tanh_f32(__dnnc_tanh_v16_f32)"]]
// CHECK-NOT: math.tanh
// CHECK: return
// CHECK-LABEL: func.func @__dnnc_exp_f32(
// CHECK-LABEL: func.func @__dnnc_erf_f32(
// CHECK-NOT: func.func @__dnnc_tanh
