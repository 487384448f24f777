// RUN: dnnc-opt %s --dnn-fuse-gelu --split-input-file | FileCheck %s

// GPT-2's gelu_new as exported: 0.5 * x * (1 + tanh(sqrt(2/pi) * (x +
// 0.044715 * pow(x, 3)))). One dnn.gelu, nothing of the pattern left.
// CHECK-LABEL: func.func @tanh_pow(
// CHECK-SAME: %[[X:.*]]: tensor<4x8xf32>
// CHECK-NEXT: %[[G:.*]] = dnn.gelu %[[X]] approximation = <tanh> : tensor<4x8xf32>
// CHECK-NEXT: return %[[G]]
func.func @tanh_pow(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %half = dnn.constant dense<0.5> : tensor<4x8xf32>
  %three = dnn.constant dense<3.0> : tensor<4x8xf32>
  %k0 = dnn.constant dense<0.044715> : tensor<4x8xf32>
  %k1 = dnn.constant dense<0.797884583> : tensor<4x8xf32>
  %one = dnn.constant dense<1.0> : tensor<4x8xf32>
  %h = dnn.mul %x, %half : tensor<4x8xf32>
  %c = dnn.pow %x, %three : tensor<4x8xf32>
  %k = dnn.mul %c, %k0 : tensor<4x8xf32>
  %i = dnn.add %x, %k : tensor<4x8xf32>
  %s = dnn.mul %i, %k1 : tensor<4x8xf32>
  %t = dnn.tanh %s : tensor<4x8xf32>
  %o = dnn.add %t, %one : tensor<4x8xf32>
  %y = dnn.mul %h, %o : tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// The cube as x * x * x, constants on the left, 0.5 applied last, and the
// inner polynomial as x * (1 + 0.044715 * x * x); the input is itself a
// product (kept whole).
// CHECK-LABEL: func.func @tanh_products(
// CHECK-SAME: %[[A:[a-z0-9]+]]: tensor<8xf32>, %[[B:[a-z0-9]+]]: tensor<8xf32>
// CHECK: %[[X:.*]] = dnn.mul %[[A]], %[[B]]
// CHECK-NEXT: %[[SQ:.*]] = dnn.mul %[[X]], %[[X]]
// CHECK-NEXT: %[[P:.*]] = dnn.mul %[[SQ]], %[[X]]
// CHECK-NEXT: %[[K:.*]] = dnn.mul %{{.*}}, %[[P]]
// CHECK-NEXT: %[[I:.*]] = dnn.add %[[K]], %[[X]]
// CHECK-NEXT: %[[G:.*]] = dnn.gelu %[[X]] approximation = <tanh>
// CHECK-NEXT: %[[G2:.*]] = dnn.gelu %[[I]] approximation = <tanh>
// CHECK-NEXT: return %[[G]], %[[P]], %[[G2]]
func.func @tanh_products(%a: tensor<8xf32>, %b: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %half = dnn.constant dense<0.5> : tensor<8xf32>
  %k0 = dnn.constant dense<0.044715> : tensor<8xf32>
  %k1 = dnn.constant dense<0.797884583> : tensor<8xf32>
  %one = dnn.constant dense<1.0> : tensor<8xf32>
  %x = dnn.mul %a, %b : tensor<8xf32>
  %x2 = dnn.mul %x, %x : tensor<8xf32>
  %x3 = dnn.mul %x2, %x : tensor<8xf32>
  %k = dnn.mul %k0, %x3 : tensor<8xf32>
  %i = dnn.add %k, %x : tensor<8xf32>
  %s = dnn.mul %k1, %i : tensor<8xf32>
  %t = dnn.tanh %s : tensor<8xf32>
  %o = dnn.add %one, %t : tensor<8xf32>
  %m = dnn.mul %x, %o : tensor<8xf32>
  %y = dnn.mul %m, %half : tensor<8xf32>
  // Second form, on %i: i * (1 + 0.044715 * i * i) inside the tanh.
  %i2 = dnn.mul %i, %i : tensor<8xf32>
  %q = dnn.mul %i2, %k0 : tensor<8xf32>
  %q1 = dnn.add %q, %one : tensor<8xf32>
  %poly = dnn.mul %i, %q1 : tensor<8xf32>
  %s2 = dnn.mul %poly, %k1 : tensor<8xf32>
  %t2 = dnn.tanh %s2 : tensor<8xf32>
  %o2 = dnn.add %t2, %one : tensor<8xf32>
  %h2 = dnn.mul %i, %half : tensor<8xf32>
  %y2 = dnn.mul %h2, %o2 : tensor<8xf32>
  // x^3 has another use: it stays.
  return %y, %x3, %y2 : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}

// -----

// BERT's exact GELU: x * 0.5 * (1 + erf(x / sqrt(2))); in bf16 the constants
// are casts of f32 constants, rounded (within 1%).
// CHECK-LABEL: func.func @erf_bf16(
// CHECK-SAME: %[[X:.*]]: tensor<4x8xbf16>
// CHECK-NEXT: %[[G:.*]] = dnn.gelu %[[X]] approximation = <none> : tensor<4x8xbf16>
// CHECK-NEXT: return %[[G]]
func.func @erf_bf16(%x: tensor<4x8xbf16>) -> tensor<4x8xbf16> {
  %sqrt2 = dnn.constant dense<1.41421354> : tensor<4x8xf32>
  %half = dnn.constant dense<0.5> : tensor<4x8xf32>
  %one = dnn.constant dense<1.0> : tensor<4x8xf32>
  %sqrt2b = dnn.cast %sqrt2 : tensor<4x8xf32> -> tensor<4x8xbf16>
  %halfb = dnn.cast %half : tensor<4x8xf32> -> tensor<4x8xbf16>
  %oneb = dnn.cast %one : tensor<4x8xf32> -> tensor<4x8xbf16>
  %d = dnn.div %x, %sqrt2b : tensor<4x8xbf16>
  %e = dnn.erf %d : tensor<4x8xbf16>
  %o = dnn.add %e, %oneb : tensor<4x8xbf16>
  %m = dnn.mul %x, %halfb : tensor<4x8xbf16>
  %y = dnn.mul %m, %o : tensor<4x8xbf16>
  return %y : tensor<4x8xbf16>
}

// -----

// Near misses are left alone: a wrong cubic coefficient, 0.25 instead of
// 0.5 outside, erf of x / 2.
// CHECK-LABEL: func.func @not_gelu(
// CHECK-NOT: dnn.gelu
// CHECK: return
func.func @not_gelu(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %half = dnn.constant dense<0.5> : tensor<8xf32>
  %quarter = dnn.constant dense<0.25> : tensor<8xf32>
  %two = dnn.constant dense<2.0> : tensor<8xf32>
  %three = dnn.constant dense<3.0> : tensor<8xf32>
  %k0 = dnn.constant dense<0.05> : tensor<8xf32>
  %k0ok = dnn.constant dense<0.044715> : tensor<8xf32>
  %k1 = dnn.constant dense<0.797884583> : tensor<8xf32>
  %one = dnn.constant dense<1.0> : tensor<8xf32>
  %c = dnn.pow %x, %three : tensor<8xf32>
  %k = dnn.mul %c, %k0 : tensor<8xf32>
  %i = dnn.add %x, %k : tensor<8xf32>
  %s = dnn.mul %i, %k1 : tensor<8xf32>
  %t = dnn.tanh %s : tensor<8xf32>
  %o = dnn.add %t, %one : tensor<8xf32>
  %h = dnn.mul %x, %half : tensor<8xf32>
  %y0 = dnn.mul %h, %o : tensor<8xf32>
  %kk = dnn.mul %c, %k0ok : tensor<8xf32>
  %ii = dnn.add %x, %kk : tensor<8xf32>
  %ss = dnn.mul %ii, %k1 : tensor<8xf32>
  %tt = dnn.tanh %ss : tensor<8xf32>
  %oo = dnn.add %tt, %one : tensor<8xf32>
  %hq = dnn.mul %x, %quarter : tensor<8xf32>
  %y1 = dnn.mul %hq, %oo : tensor<8xf32>
  %d = dnn.div %x, %two : tensor<8xf32>
  %e = dnn.erf %d : tensor<8xf32>
  %eo = dnn.add %e, %one : tensor<8xf32>
  %y2 = dnn.mul %h, %eo : tensor<8xf32>
  return %y0, %y1, %y2 : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}
