// RUN: dnnc-opt %s -canonicalize | FileCheck %s

//===----------------------------------------------------------------------===//
// Elementwise arithmetic
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @int_arith
func.func @int_arith() -> (tensor<4xi32>, tensor<4xi32>, tensor<4xi32>, tensor<4xi32>) {
  // CHECK-DAG: %[[ADD:.*]] = dnn.constant dense<[9, -5, 5, -9]> : tensor<4xi32>
  // CHECK-DAG: %[[SUB:.*]] = dnn.constant dense<[5, -9, 9, -5]> : tensor<4xi32>
  // CHECK-DAG: %[[MUL:.*]] = dnn.constant dense<[14, -14, -14, 14]> : tensor<4xi32>
  // Integer division truncates toward zero.
  // CHECK-DAG: %[[DIV:.*]] = dnn.constant dense<[3, -3, -3, 3]> : tensor<4xi32>
  // CHECK-NOT: dnn.add
  // CHECK-NOT: dnn.sub
  // CHECK-NOT: dnn.mul
  // CHECK-NOT: dnn.div
  // CHECK: return %[[ADD]], %[[SUB]], %[[MUL]], %[[DIV]]
  %a = dnn.constant dense<[7, -7, 7, -7]> : tensor<4xi32>
  %b = dnn.constant dense<[2, 2, -2, -2]> : tensor<4xi32>
  %0 = dnn.add %a, %b : tensor<4xi32>
  %1 = dnn.sub %a, %b : tensor<4xi32>
  %2 = dnn.mul %a, %b : tensor<4xi32>
  %3 = dnn.div %a, %b : tensor<4xi32>
  return %0, %1, %2, %3 : tensor<4xi32>, tensor<4xi32>, tensor<4xi32>, tensor<4xi32>
}

// CHECK-LABEL: func.func @int_div_by_zero
func.func @int_div_by_zero() -> tensor<3xi64> {
  // CHECK-DAG: %[[A:.*]] = dnn.constant dense<[6, 4, 2]> : tensor<3xi64>
  // CHECK-DAG: %[[B:.*]] = dnn.constant dense<[3, 0, 1]> : tensor<3xi64>
  // CHECK: %[[D:.*]] = dnn.div %[[A]], %[[B]] : tensor<3xi64>
  // CHECK: return %[[D]]
  %a = dnn.constant dense<[6, 4, 2]> : tensor<3xi64>
  %b = dnn.constant dense<[3, 0, 1]> : tensor<3xi64>
  %0 = dnn.div %a, %b : tensor<3xi64>
  return %0 : tensor<3xi64>
}

// Remainders: truncated (`rem`, the sign of lhs) and floored (`mod`, the
// sign of rhs); an integer divisor of 0 gives 0, as the lowering does.
// CHECK-LABEL: func.func @rem_mod
func.func @rem_mod() -> (tensor<5xi32>, tensor<5xi32>, tensor<2xf32>, tensor<2xf32>) {
  // CHECK-DAG: %[[REM:.*]] = dnn.constant dense<[1, -1, 1, -1, 0]> : tensor<5xi32>
  // CHECK-DAG: %[[MOD:.*]] = dnn.constant dense<[1, 1, -1, -1, 0]> : tensor<5xi32>
  // CHECK-DAG: %[[FREM:.*]] = dnn.constant dense<[1.500000e+00, -1.500000e+00]> : tensor<2xf32>
  // CHECK-DAG: %[[FMOD:.*]] = dnn.constant dense<[1.500000e+00, 5.000000e-01]> : tensor<2xf32>
  // CHECK-NOT: dnn.rem
  // CHECK-NOT: dnn.mod
  // CHECK: return %[[REM]], %[[MOD]], %[[FREM]], %[[FMOD]]
  %a = dnn.constant dense<[7, -7, 7, -7, 5]> : tensor<5xi32>
  %b = dnn.constant dense<[2, 2, -2, -2, 0]> : tensor<5xi32>
  %0 = dnn.rem %a, %b : tensor<5xi32>
  %1 = dnn.mod %a, %b : tensor<5xi32>
  %f = dnn.constant dense<[7.5, -7.5]> : tensor<2xf32>
  %g = dnn.constant dense<2.0> : tensor<2xf32>
  %2 = dnn.rem %f, %g : tensor<2xf32>
  %3 = dnn.mod %f, %g : tensor<2xf32>
  return %0, %1, %2, %3 : tensor<5xi32>, tensor<5xi32>, tensor<2xf32>, tensor<2xf32>
}

// Shifts by the bit width or more: 0, or the sign for a signed right shift.
// CHECK-LABEL: func.func @shifts
func.func @shifts() -> (tensor<3xui8>, tensor<3xui8>, tensor<2xi32>) {
  // CHECK-DAG: %[[SHL:.*]] = dnn.constant dense<[2, 254, 0]> : tensor<3xui8>
  // CHECK-DAG: %[[SHR:.*]] = dnn.constant dense<[0, 127, 0]> : tensor<3xui8>
  // CHECK-DAG: %[[SAR:.*]] = dnn.constant dense<[-4, -1]> : tensor<2xi32>
  // CHECK: return %[[SHL]], %[[SHR]], %[[SAR]]
  %a = dnn.constant dense<[1, 255, 128]> : tensor<3xui8>
  %b = dnn.constant dense<[1, 1, 8]> : tensor<3xui8>
  %0 = dnn.shift_left %a, %b : tensor<3xui8>
  %1 = dnn.shift_right %a, %b : tensor<3xui8>
  %c = dnn.constant dense<-8> : tensor<2xi32>
  %d = dnn.constant dense<[1, 40]> : tensor<2xi32>
  %2 = dnn.shift_right %c, %d : tensor<2xi32>
  return %0, %1, %2 : tensor<3xui8>, tensor<3xui8>, tensor<2xi32>
}

// CHECK-LABEL: func.func @float_arith
func.func @float_arith() -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) {
  // CHECK-DAG: %[[ADD:.*]] = dnn.constant dense<[2.000000e+00, 2.000000e+00, 2.500000e-01]> : tensor<3xf32>
  // CHECK-DAG: %[[SUB:.*]] = dnn.constant dense<[1.000000e+00, -6.000000e+00, -2.500000e-01]> : tensor<3xf32>
  // CHECK-DAG: %[[MUL:.*]] = dnn.constant dense<[7.500000e-01, -8.000000e+00, 0.000000e+00]> : tensor<3xf32>
  // CHECK-DAG: %[[DIV:.*]] = dnn.constant dense<[3.000000e+00, -5.000000e-01, 0.000000e+00]> : tensor<3xf32>
  // Float division by zero follows IEEE 754: +inf.
  // CHECK-DAG: %[[INF:.*]] = dnn.constant dense<[0x7F800000, 0xFF800000, 3.000000e+00]> : tensor<3xf32>
  // CHECK-NOT: dnn.div
  // CHECK: return %[[ADD]], %[[SUB]], %[[MUL]], %[[DIV]], %[[INF]]
  %f = dnn.constant dense<[1.5, -2.0, 0.0]> : tensor<3xf32>
  %g = dnn.constant dense<[0.5, 4.0, 0.25]> : tensor<3xf32>
  %0 = dnn.add %f, %g : tensor<3xf32>
  %1 = dnn.sub %f, %g : tensor<3xf32>
  %2 = dnn.mul %f, %g : tensor<3xf32>
  %3 = dnn.div %f, %g : tensor<3xf32>
  %n = dnn.constant dense<[1.0, -1.0, 1.5]> : tensor<3xf32>
  %d = dnn.constant dense<[0.0, 0.0, 0.5]> : tensor<3xf32>
  %4 = dnn.div %n, %d : tensor<3xf32>
  return %0, %1, %2, %3, %4 : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
}

// CHECK-LABEL: func.func @splat_operands
func.func @splat_operands() -> (tensor<3xi64>, tensor<2x2xf64>) {
  // CHECK-DAG: %[[I:.*]] = dnn.constant dense<[11, 12, 13]> : tensor<3xi64>
  // CHECK-DAG: %[[F:.*]] = dnn.constant dense<6.000000e+00> : tensor<2x2xf64>
  // CHECK: return %[[I]], %[[F]]
  %a = dnn.constant dense<10> : tensor<3xi64>
  %b = dnn.constant dense<[1, 2, 3]> : tensor<3xi64>
  %0 = dnn.add %a, %b : tensor<3xi64>
  %c = dnn.constant dense<2.0> : tensor<2x2xf64>
  %d = dnn.constant dense<3.0> : tensor<2x2xf64>
  %1 = dnn.mul %c, %d : tensor<2x2xf64>
  return %0, %1 : tensor<3xi64>, tensor<2x2xf64>
}

// CHECK-LABEL: func.func @unsigned
func.func @unsigned() -> (tensor<3xui8>, tensor<3xui8>, tensor<3xui8>, tensor<3xui8>) {
  // CHECK-DAG: %[[DIV:.*]] = dnn.constant dense<[66, 3, 0]> : tensor<3xui8>
  // CHECK-DAG: %[[MAX:.*]] = dnn.constant dense<[200, 7, 1]> : tensor<3xui8>
  // CHECK-DAG: %[[MIN:.*]] = dnn.constant dense<[3, 2, 0]> : tensor<3xui8>
  // Unsigned arithmetic wraps.
  // CHECK-DAG: %[[SUB:.*]] = dnn.constant dense<[197, 5, 255]> : tensor<3xui8>
  // CHECK: return %[[DIV]], %[[MAX]], %[[MIN]], %[[SUB]]
  %u = dnn.constant dense<[200, 7, 0]> : tensor<3xui8>
  %v = dnn.constant dense<[3, 2, 1]> : tensor<3xui8>
  %0 = dnn.div %u, %v : tensor<3xui8>
  %1 = dnn.max %u, %v : tensor<3xui8>
  %2 = dnn.min %u, %v : tensor<3xui8>
  %3 = dnn.sub %u, %v : tensor<3xui8>
  return %0, %1, %2, %3 : tensor<3xui8>, tensor<3xui8>, tensor<3xui8>, tensor<3xui8>
}

// CHECK-LABEL: func.func @min_max_neg
func.func @min_max_neg() -> (tensor<3xi8>, tensor<3xi8>, tensor<3xi8>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) {
  // CHECK-DAG: %[[IMAX:.*]] = dnn.constant dense<[5, 3, 0]> : tensor<3xi8>
  // CHECK-DAG: %[[IMIN:.*]] = dnn.constant dense<[-100, -4, 0]> : tensor<3xi8>
  // CHECK-DAG: %[[INEG:.*]] = dnn.constant dense<[100, -3, 0]> : tensor<3xi8>
  // CHECK-DAG: %[[FMAX:.*]] = dnn.constant dense<[2.500000e+00, -1.000000e+00]> : tensor<2xf32>
  // CHECK-DAG: %[[FMIN:.*]] = dnn.constant dense<[1.000000e+00, -2.000000e+00]> : tensor<2xf32>
  // CHECK-DAG: %[[FNEG:.*]] = dnn.constant dense<[-2.500000e+00, 2.000000e+00]> : tensor<2xf32>
  // CHECK: return %[[IMAX]], %[[IMIN]], %[[INEG]], %[[FMAX]], %[[FMIN]], %[[FNEG]]
  %a = dnn.constant dense<[-100, 3, 0]> : tensor<3xi8>
  %b = dnn.constant dense<[5, -4, 0]> : tensor<3xi8>
  %0 = dnn.max %a, %b : tensor<3xi8>
  %1 = dnn.min %a, %b : tensor<3xi8>
  %2 = dnn.neg %a : tensor<3xi8>
  %f = dnn.constant dense<[2.5, -2.0]> : tensor<2xf32>
  %g = dnn.constant dense<[1.0, -1.0]> : tensor<2xf32>
  %3 = dnn.max %f, %g : tensor<2xf32>
  %4 = dnn.min %f, %g : tensor<2xf32>
  %5 = dnn.neg %f : tensor<2xf32>
  return %0, %1, %2, %3, %4, %5 : tensor<3xi8>, tensor<3xi8>, tensor<3xi8>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>
}

// CHECK-LABEL: func.func @pow_not_folded
func.func @pow_not_folded() -> tensor<2xf32> {
  // CHECK: dnn.pow
  %a = dnn.constant dense<[2.0, 3.0]> : tensor<2xf32>
  %0 = dnn.pow %a, %a : tensor<2xf32>
  return %0 : tensor<2xf32>
}

// CHECK-LABEL: func.func @logical
func.func @logical() -> (tensor<4xi1>, tensor<4xi1>, tensor<4xi1>) {
  // CHECK-DAG: %[[AND:.*]] = dnn.constant dense<[false, false, false, true]> : tensor<4xi1>
  // CHECK-DAG: %[[OR:.*]] = dnn.constant dense<[false, true, true, true]> : tensor<4xi1>
  // CHECK-DAG: %[[XOR:.*]] = dnn.constant dense<[false, true, true, false]> : tensor<4xi1>
  // CHECK: return %[[AND]], %[[OR]], %[[XOR]]
  %a = dnn.constant dense<[false, false, true, true]> : tensor<4xi1>
  %b = dnn.constant dense<[false, true, false, true]> : tensor<4xi1>
  %0 = dnn.and %a, %b : tensor<4xi1>
  %1 = dnn.or %a, %b : tensor<4xi1>
  %2 = dnn.xor %a, %b : tensor<4xi1>
  return %0, %1, %2 : tensor<4xi1>, tensor<4xi1>, tensor<4xi1>
}

//===----------------------------------------------------------------------===//
// Comparisons and select
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @compare_int
func.func @compare_int() -> (tensor<3xi1>, tensor<3xi1>, tensor<3xi1>, tensor<3xi1>, tensor<3xi1>, tensor<3xi1>) {
  // CHECK-DAG: %[[EQ:.*]] = dnn.constant dense<[false, true, false]> : tensor<3xi1>
  // CHECK-DAG: %[[LT:.*]] = dnn.constant dense<[true, false, false]> : tensor<3xi1>
  // CHECK-DAG: %[[LE:.*]] = dnn.constant dense<[true, true, false]> : tensor<3xi1>
  // CHECK-DAG: %[[GT:.*]] = dnn.constant dense<[false, false, true]> : tensor<3xi1>
  // CHECK-DAG: %[[GE:.*]] = dnn.constant dense<[false, true, true]> : tensor<3xi1>
  // Unsigned: 255 > 1.
  // CHECK-DAG: %[[UGT:.*]] = dnn.constant dense<[true, false, true]> : tensor<3xi1>
  // CHECK: return %[[EQ]], %[[LT]], %[[LE]], %[[GT]], %[[GE]], %[[UGT]]
  %a = dnn.constant dense<[-5, 2, 7]> : tensor<3xi32>
  %b = dnn.constant dense<[1, 2, 3]> : tensor<3xi32>
  %0 = dnn.equal %a, %b : tensor<3xi32> -> tensor<3xi1>
  %1 = dnn.less %a, %b : tensor<3xi32> -> tensor<3xi1>
  %2 = dnn.less_equal %a, %b : tensor<3xi32> -> tensor<3xi1>
  %3 = dnn.greater %a, %b : tensor<3xi32> -> tensor<3xi1>
  %4 = dnn.greater_equal %a, %b : tensor<3xi32> -> tensor<3xi1>
  %u = dnn.constant dense<[255, 0, 2]> : tensor<3xui8>
  %v = dnn.constant dense<[1, 1, 1]> : tensor<3xui8>
  %5 = dnn.greater %u, %v : tensor<3xui8> -> tensor<3xi1>
  return %0, %1, %2, %3, %4, %5 : tensor<3xi1>, tensor<3xi1>, tensor<3xi1>, tensor<3xi1>, tensor<3xi1>, tensor<3xi1>
}

// CHECK-LABEL: func.func @compare_float
func.func @compare_float() -> (tensor<4xi1>, tensor<4xi1>, tensor<4xi1>) {
  // NaN compares false with every predicate.
  // CHECK-DAG: %[[EQ:.*]] = dnn.constant dense<[false, true, false, false]> : tensor<4xi1>
  // CHECK-DAG: %[[LT:.*]] = dnn.constant dense<[false, false, false, true]> : tensor<4xi1>
  // CHECK-DAG: %[[GE:.*]] = dnn.constant dense<[true, true, false, false]> : tensor<4xi1>
  // CHECK: return %[[EQ]], %[[LT]], %[[GE]]
  %a = dnn.constant dense<[3.0, 2.0, 0x7FC00000, -1.5]> : tensor<4xf32>
  %b = dnn.constant dense<[1.0, 2.0, 1.0, 1.0]> : tensor<4xf32>
  %0 = dnn.equal %a, %b : tensor<4xf32> -> tensor<4xi1>
  %1 = dnn.less %a, %b : tensor<4xf32> -> tensor<4xi1>
  %2 = dnn.greater_equal %a, %b : tensor<4xf32> -> tensor<4xi1>
  return %0, %1, %2 : tensor<4xi1>, tensor<4xi1>, tensor<4xi1>
}

// CHECK-LABEL: func.func @is_nan
func.func @is_nan() -> tensor<4xi1> {
  // CHECK: %[[R:.*]] = dnn.constant dense<[false, true, false, true]> : tensor<4xi1>
  // CHECK: return %[[R]]
  %a = dnn.constant dense<[3.0, 0x7FC00000, 0x7F800000, 0xFFC00001]> : tensor<4xf32>
  %0 = dnn.is_nan %a : tensor<4xf32> -> tensor<4xi1>
  return %0 : tensor<4xi1>
}

// CHECK-LABEL: func.func @select
// CHECK-SAME: (%[[X:.*]]: tensor<3xf32>, %[[Y:.*]]: tensor<3xf32>, %[[C:.*]]: tensor<3xi1>)
func.func @select(%x: tensor<3xf32>, %y: tensor<3xf32>, %c: tensor<3xi1>)
    -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) {
  // CHECK-DAG: %[[MIX:.*]] = dnn.constant dense<[1.000000e+00, 2.000000e+01, 3.000000e+00]> : tensor<3xf32>
  // CHECK-DAG: %[[SPLAT:.*]] = dnn.constant dense<[1.000000e+00, 5.000000e+00, 3.000000e+00]> : tensor<3xf32>
  // CHECK-NOT: dnn.select
  // CHECK: return %[[MIX]], %[[X]], %[[Y]], %[[X]], %[[SPLAT]]
  %cond = dnn.constant dense<[true, false, true]> : tensor<3xi1>
  %t = dnn.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %f = dnn.constant dense<[10.0, 20.0, 30.0]> : tensor<3xf32>
  %0 = dnn.select %cond, %t, %f : tensor<3xi1>, tensor<3xf32>
  // A splat condition picks a whole operand, constant or not.
  %true = dnn.constant dense<true> : tensor<3xi1>
  %false = dnn.constant dense<false> : tensor<3xi1>
  %1 = dnn.select %true, %x, %y : tensor<3xi1>, tensor<3xf32>
  %2 = dnn.select %false, %x, %y : tensor<3xi1>, tensor<3xf32>
  // Identical branches need no condition.
  %3 = dnn.select %c, %x, %x : tensor<3xi1>, tensor<3xf32>
  // Splat branch.
  %five = dnn.constant dense<5.0> : tensor<3xf32>
  %4 = dnn.select %cond, %t, %five : tensor<3xi1>, tensor<3xf32>
  return %0, %1, %2, %3, %4 : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
}

// CHECK-LABEL: func.func @select_not_folded
func.func @select_not_folded(%x: tensor<2xf32>) -> tensor<2xf32> {
  // CHECK: dnn.select
  %cond = dnn.constant dense<[true, false]> : tensor<2xi1>
  %t = dnn.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %0 = dnn.select %cond, %t, %x : tensor<2xi1>, tensor<2xf32>
  return %0 : tensor<2xf32>
}

//===----------------------------------------------------------------------===//
// Cast
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @cast_int_float
func.func @cast_int_float() -> (tensor<3xf32>, tensor<3xf32>, tensor<4xi32>, tensor<4xui8>, tensor<3xf16>) {
  // CHECK-DAG: %[[SI:.*]] = dnn.constant dense<[-3.000000e+00, 0.000000e+00, 7.000000e+00]> : tensor<3xf32>
  // CHECK-DAG: %[[UI:.*]] = dnn.constant dense<[2.000000e+02, 0.000000e+00, 2.550000e+02]> : tensor<3xf32>
  // Float to integer truncates toward zero.
  // CHECK-DAG: %[[FI:.*]] = dnn.constant dense<[1, -1, 2, -2]> : tensor<4xi32>
  // CHECK-DAG: %[[FU:.*]] = dnn.constant dense<[1, 0, 2, 255]> : tensor<4xui8>
  // CHECK-DAG: %[[FF:.*]] = dnn.constant dense<[1.000000e+00, 6.550400e+04, 0x7C00]> : tensor<3xf16>
  // CHECK-NOT: dnn.cast
  // CHECK: return %[[SI]], %[[UI]], %[[FI]], %[[FU]], %[[FF]]
  %i = dnn.constant dense<[-3, 0, 7]> : tensor<3xi64>
  %0 = dnn.cast %i : tensor<3xi64> -> tensor<3xf32>
  %u = dnn.constant dense<[200, 0, 255]> : tensor<3xui8>
  %1 = dnn.cast %u : tensor<3xui8> -> tensor<3xf32>
  %f = dnn.constant dense<[1.9, -1.9, 2.5, -2.5]> : tensor<4xf32>
  %2 = dnn.cast %f : tensor<4xf32> -> tensor<4xi32>
  %g = dnn.constant dense<[1.9, 0.5, 2.0, 255.9]> : tensor<4xf32>
  %3 = dnn.cast %g : tensor<4xf32> -> tensor<4xui8>
  %h = dnn.constant dense<[1.0, 65504.0, 1.0e+06]> : tensor<3xf32>
  %4 = dnn.cast %h : tensor<3xf32> -> tensor<3xf16>
  return %0, %1, %2, %3, %4 : tensor<3xf32>, tensor<3xf32>, tensor<4xi32>, tensor<4xui8>, tensor<3xf16>
}

// CHECK-LABEL: func.func @cast_int_int
func.func @cast_int_int() -> (tensor<3xi8>, tensor<3xi64>, tensor<3xi32>, tensor<2xi32>, tensor<2xf32>) {
  // Narrowing truncates; widening sign-extends signless and zero-extends unsigned.
  // CHECK-DAG: %[[NARROW:.*]] = dnn.constant dense<[44, -1, 127]> : tensor<3xi8>
  // CHECK-DAG: %[[SEXT:.*]] = dnn.constant dense<[-1, 0, 127]> : tensor<3xi64>
  // CHECK-DAG: %[[ZEXT:.*]] = dnn.constant dense<[255, 0, 127]> : tensor<3xi32>
  // Booleans convert to 0 and 1.
  // CHECK-DAG: %[[BI:.*]] = dnn.constant dense<[1, 0]> : tensor<2xi32>
  // CHECK-DAG: %[[BF:.*]] = dnn.constant dense<[1.000000e+00, 0.000000e+00]> : tensor<2xf32>
  // CHECK: return %[[NARROW]], %[[SEXT]], %[[ZEXT]], %[[BI]], %[[BF]]
  %a = dnn.constant dense<[300, -1, 127]> : tensor<3xi64>
  %0 = dnn.cast %a : tensor<3xi64> -> tensor<3xi8>
  %b = dnn.constant dense<[-1, 0, 127]> : tensor<3xi8>
  %1 = dnn.cast %b : tensor<3xi8> -> tensor<3xi64>
  %c = dnn.constant dense<[255, 0, 127]> : tensor<3xui8>
  %2 = dnn.cast %c : tensor<3xui8> -> tensor<3xi32>
  %d = dnn.constant dense<[true, false]> : tensor<2xi1>
  %3 = dnn.cast %d : tensor<2xi1> -> tensor<2xi32>
  %4 = dnn.cast %d : tensor<2xi1> -> tensor<2xf32>
  return %0, %1, %2, %3, %4 : tensor<3xi8>, tensor<3xi64>, tensor<3xi32>, tensor<2xi32>, tensor<2xf32>
}

// CHECK-LABEL: func.func @cast_to_bool
func.func @cast_to_bool() -> (tensor<4xi1>, tensor<4xi1>, tensor<2xi1>) {
  // `x != 0`; -0.0 is zero, NaN is not.
  // CHECK-DAG: %[[FB:.*]] = dnn.constant dense<[false, false, true, true]> : tensor<4xi1>
  // CHECK-DAG: %[[IB:.*]] = dnn.constant dense<[false, true, true, true]> : tensor<4xi1>
  // CHECK-DAG: %[[SB:.*]] = dnn.constant dense<true> : tensor<2xi1>
  // CHECK: return %[[FB]], %[[IB]], %[[SB]]
  %f = dnn.constant dense<[0.0, -0.0, 0.25, 0x7FC00000]> : tensor<4xf32>
  %0 = dnn.cast %f : tensor<4xf32> -> tensor<4xi1>
  %i = dnn.constant dense<[0, 2, -1, 256]> : tensor<4xi64>
  %1 = dnn.cast %i : tensor<4xi64> -> tensor<4xi1>
  %s = dnn.constant dense<3> : tensor<2xi32>
  %2 = dnn.cast %s : tensor<2xi32> -> tensor<2xi1>
  return %0, %1, %2 : tensor<4xi1>, tensor<4xi1>, tensor<2xi1>
}

// CHECK-LABEL: func.func @cast_not_folded
func.func @cast_not_folded() -> (tensor<2xui8>, tensor<1xi32>, tensor<1xi32>) {
  // Out-of-range, infinite and NaN float-to-integer casts are undefined in
  // ONNX: they are left to the runtime.
  // CHECK-COUNT-3: dnn.cast
  %f = dnn.constant dense<[-1.0, 1.0]> : tensor<2xf32>
  %0 = dnn.cast %f : tensor<2xf32> -> tensor<2xui8>
  %inf = dnn.constant dense<0x7F800000> : tensor<1xf32>
  %1 = dnn.cast %inf : tensor<1xf32> -> tensor<1xi32>
  %nan = dnn.constant dense<0x7FC00000> : tensor<1xf32>
  %2 = dnn.cast %nan : tensor<1xf32> -> tensor<1xi32>
  return %0, %1, %2 : tensor<2xui8>, tensor<1xi32>, tensor<1xi32>
}

// CHECK-LABEL: func.func @cast_same_type
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>)
func.func @cast_same_type(%x: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK-NOT: dnn.cast
  // CHECK: return %[[X]]
  %0 = dnn.cast %x : tensor<4xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @reshape
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>)
func.func @reshape(%x: tensor<2x3xf32>) -> (tensor<3x2xi64>, tensor<2x3xf32>, tensor<6xf32>) {
  // CHECK-DAG: %[[C:.*]] = dnn.constant dense<{{\[}}[1, 2], [3, 4], [5, 6]]> : tensor<3x2xi64>
  // CHECK-DAG: %[[R:.*]] = dnn.reshape %[[X]] : tensor<2x3xf32> -> tensor<6xf32>
  // CHECK-NOT: dnn.reshape
  // CHECK: return %[[C]], %[[X]], %[[R]]
  %c = dnn.constant dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi64>
  %0 = dnn.reshape %c : tensor<2x3xi64> -> tensor<3x2xi64>
  // Reshape to the same type.
  %1 = dnn.reshape %x : tensor<2x3xf32> -> tensor<2x3xf32>
  // Reshape of reshape: one reshape from the original operand.
  %2 = dnn.reshape %x : tensor<2x3xf32> -> tensor<3x1x2xf32>
  %3 = dnn.reshape %2 : tensor<3x1x2xf32> -> tensor<6xf32>
  return %0, %1, %3 : tensor<3x2xi64>, tensor<2x3xf32>, tensor<6xf32>
}

// CHECK-LABEL: func.func @reshape_round_trip
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>)
func.func @reshape_round_trip(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // CHECK-NOT: dnn.reshape
  // CHECK: return %[[X]]
  %0 = dnn.reshape %x : tensor<2x3xf32> -> tensor<6xf32>
  %1 = dnn.reshape %0 : tensor<6xf32> -> tensor<2x3xf32>
  return %1 : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @broadcast_in_dim
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>)
func.func @broadcast_in_dim(%x: tensor<2x3xf32>)
    -> (tensor<2x3xi32>, tensor<2x3xi32>, tensor<2x3xi32>, tensor<2x2x2xi32>, tensor<4x3xf32>, tensor<2x3xf32>) {
  // CHECK-DAG: %[[ROWS:.*]] = dnn.constant dense<{{\[}}[1, 2, 3], [1, 2, 3]]> : tensor<2x3xi32>
  // CHECK-DAG: %[[COLS:.*]] = dnn.constant dense<{{\[}}[1, 1, 1], [2, 2, 2]]> : tensor<2x3xi32>
  // CHECK-DAG: %[[ONE:.*]] = dnn.constant dense<{{\[}}[7, 8, 9], [7, 8, 9]]> : tensor<2x3xi32>
  // CHECK-DAG: %[[MID:.*]] = dnn.constant dense<{{\[}}{{\[}}[1, 1], [2, 2]], {{\[}}[1, 1], [2, 2]]]> : tensor<2x2x2xi32>
  // CHECK-DAG: %[[SPLAT:.*]] = dnn.constant dense<5.000000e-01> : tensor<4x3xf32>
  // CHECK-NOT: dnn.broadcast_in_dim
  // CHECK: return %[[ROWS]], %[[COLS]], %[[ONE]], %[[MID]], %[[SPLAT]], %[[X]]
  %v = dnn.constant dense<[1, 2, 3]> : tensor<3xi32>
  %0 = dnn.broadcast_in_dim %v, dims = [1] : tensor<3xi32> -> tensor<2x3xi32>
  %w = dnn.constant dense<[1, 2]> : tensor<2xi32>
  %1 = dnn.broadcast_in_dim %w, dims = [0] : tensor<2xi32> -> tensor<2x3xi32>
  %m = dnn.constant dense<[[7, 8, 9]]> : tensor<1x3xi32>
  %2 = dnn.broadcast_in_dim %m, dims = [0, 1] : tensor<1x3xi32> -> tensor<2x3xi32>
  %3 = dnn.broadcast_in_dim %w, dims = [1] : tensor<2xi32> -> tensor<2x2x2xi32>
  %s = dnn.constant dense<0.5> : tensor<3xf32>
  %4 = dnn.broadcast_in_dim %s, dims = [1] : tensor<3xf32> -> tensor<4x3xf32>
  // Broadcast to the same type is the identity.
  %5 = dnn.broadcast_in_dim %x, dims = [0, 1] : tensor<2x3xf32> -> tensor<2x3xf32>
  return %0, %1, %2, %3, %4, %5 : tensor<2x3xi32>, tensor<2x3xi32>, tensor<2x3xi32>, tensor<2x2x2xi32>, tensor<4x3xf32>, tensor<2x3xf32>
}

// CHECK-LABEL: func.func @transpose
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>)
func.func @transpose(%x: tensor<2x3xf32>) -> (tensor<3x2xi32>, tensor<3x2x2xi32>, tensor<2x3xf32>) {
  // CHECK-DAG: %[[T2:.*]] = dnn.constant dense<{{\[}}[1, 4], [2, 5], [3, 6]]> : tensor<3x2xi32>
  // Result dim i is input dim perm[i]: result[k][i][j] = input[i][j][k].
  // CHECK-DAG: %[[T3:.*]] = dnn.constant dense<{{\[}}{{\[}}[0, 3], [6, 9]], {{\[}}[1, 4], [7, 10]], {{\[}}[2, 5], [8, 11]]]> : tensor<3x2x2xi32>
  // CHECK-NOT: dnn.transpose
  // CHECK: return %[[T2]], %[[T3]], %[[X]]
  %c = dnn.constant dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi32>
  %0 = dnn.transpose %c, permutation = [1, 0] : tensor<2x3xi32> -> tensor<3x2xi32>
  %d = dnn.constant dense<[[[0, 1, 2], [3, 4, 5]], [[6, 7, 8], [9, 10, 11]]]> : tensor<2x2x3xi32>
  %1 = dnn.transpose %d, permutation = [2, 0, 1] : tensor<2x2x3xi32> -> tensor<3x2x2xi32>
  %2 = dnn.transpose %x, permutation = [0, 1] : tensor<2x3xf32> -> tensor<2x3xf32>
  return %0, %1, %2 : tensor<3x2xi32>, tensor<3x2x2xi32>, tensor<2x3xf32>
}

// Transposes of transposes compose; a transposed 2-D product with a
// transposed operand is the product of the swapped, transposed operands
// (the weight gradient of a fully connected layer).
// CHECK-LABEL: func.func @transpose_chains
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4xf32>, %[[A:.*]]: tensor<64x8xf32>, %[[DY:.*]]: tensor<64x16xf32>)
func.func @transpose_chains(%x: tensor<2x3x4xf32>, %a: tensor<64x8xf32>, %dy: tensor<64x16xf32>) -> (tensor<2x3x4xf32>, tensor<3x4x2xf32>, tensor<16x8xf32>) {
  // CHECK: %[[P:.*]] = dnn.transpose %[[X]], permutation = [1, 2, 0]
  // CHECK: %[[DYT:.*]] = dnn.transpose %[[DY]], permutation = [1, 0] : tensor<64x16xf32> -> tensor<16x64xf32>
  // CHECK: %[[W:.*]] = dnn.matmul %[[DYT]], %[[A]] : (tensor<16x64xf32>, tensor<64x8xf32>) -> tensor<16x8xf32>
  // CHECK: return %[[X]], %[[P]], %[[W]]
  %0 = dnn.transpose %x, permutation = [2, 0, 1] : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
  %1 = dnn.transpose %0, permutation = [1, 2, 0] : tensor<4x2x3xf32> -> tensor<2x3x4xf32>
  %2 = dnn.transpose %x, permutation = [1, 0, 2] : tensor<2x3x4xf32> -> tensor<3x2x4xf32>
  %3 = dnn.transpose %2, permutation = [0, 2, 1] : tensor<3x2x4xf32> -> tensor<3x4x2xf32>
  %at = dnn.transpose %a, permutation = [1, 0] : tensor<64x8xf32> -> tensor<8x64xf32>
  %g = dnn.matmul %at, %dy : (tensor<8x64xf32>, tensor<64x16xf32>) -> tensor<8x16xf32>
  %w = dnn.transpose %g, permutation = [1, 0] : tensor<8x16xf32> -> tensor<16x8xf32>
  return %1, %3, %w : tensor<2x3x4xf32>, tensor<3x4x2xf32>, tensor<16x8xf32>
}

// CHECK-LABEL: func.func @concat
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>)
func.func @concat(%x: tensor<2x3xf32>) -> (tensor<4xi64>, tensor<2x3xi64>, tensor<3x2xi64>, tensor<2x3xf32>) {
  // The Shape -> Concat -> Reshape pattern of ONNX exporters.
  // CHECK-DAG: %[[SHAPE:.*]] = dnn.constant dense<[1, 3, -1, 7]> : tensor<4xi64>
  // CHECK-DAG: %[[AX1:.*]] = dnn.constant dense<{{\[}}[1, 2, 0], [3, 4, 0]]> : tensor<2x3xi64>
  // CHECK-DAG: %[[AX0:.*]] = dnn.constant dense<{{\[}}[1, 2], [3, 4], [9, 9]]> : tensor<3x2xi64>
  // CHECK-NOT: dnn.concat
  // CHECK: return %[[SHAPE]], %[[AX1]], %[[AX0]], %[[X]]
  %a = dnn.constant dense<[1, 3]> : tensor<2xi64>
  %b = dnn.constant dense<[-1]> : tensor<1xi64>
  %c = dnn.constant dense<[7]> : tensor<1xi64>
  %0 = dnn.concat %a, %b, %c axis = 0 : (tensor<2xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<4xi64>
  %m = dnn.constant dense<[[1, 2], [3, 4]]> : tensor<2x2xi64>
  %z = dnn.constant dense<0> : tensor<2x1xi64>
  %1 = dnn.concat %m, %z axis = 1 : (tensor<2x2xi64>, tensor<2x1xi64>) -> tensor<2x3xi64>
  %n = dnn.constant dense<9> : tensor<1x2xi64>
  %2 = dnn.concat %m, %n axis = 0 : (tensor<2x2xi64>, tensor<1x2xi64>) -> tensor<3x2xi64>
  // Concat of one operand is that operand.
  %3 = dnn.concat %x axis = 1 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0, %1, %2, %3 : tensor<4xi64>, tensor<2x3xi64>, tensor<3x2xi64>, tensor<2x3xf32>
}

// CHECK-LABEL: func.func @slice
// CHECK-SAME: (%[[X:.*]]: tensor<3x4xf32>)
func.func @slice(%x: tensor<3x4xf32>) -> (tensor<2xi32>, tensor<5xi32>, tensor<2x2xi32>, tensor<2xi32>, tensor<3x4xf32>) {
  // CHECK-DAG: %[[STRIDED:.*]] = dnn.constant dense<[1, 3]> : tensor<2xi32>
  // CHECK-DAG: %[[REVERSED:.*]] = dnn.constant dense<[4, 3, 2, 1, 0]> : tensor<5xi32>
  // CHECK-DAG: %[[TWO_D:.*]] = dnn.constant dense<{{\[}}[6, 4], [10, 8]]> : tensor<2x2xi32>
  // CHECK-DAG: %[[SPLAT:.*]] = dnn.constant dense<7> : tensor<2xi32>
  // CHECK-NOT: dnn.slice
  // CHECK: return %[[STRIDED]], %[[REVERSED]], %[[TWO_D]], %[[SPLAT]], %[[X]]
  %v = dnn.constant dense<[0, 1, 2, 3, 4]> : tensor<5xi32>
  %0 = dnn.slice %v starts = [1] steps = [2] : tensor<5xi32> -> tensor<2xi32>
  %1 = dnn.slice %v starts = [4] steps = [-1] : tensor<5xi32> -> tensor<5xi32>
  %m = dnn.constant dense<[[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]]> : tensor<3x4xi32>
  %2 = dnn.slice %m starts = [1, 2] steps = [1, -2] : tensor<3x4xi32> -> tensor<2x2xi32>
  %s = dnn.constant dense<7> : tensor<5xi32>
  %3 = dnn.slice %s starts = [3] steps = [-3] : tensor<5xi32> -> tensor<2xi32>
  // Slice with zero starts and unit steps of the whole tensor is the identity.
  %4 = dnn.slice %x starts = [0, 0] steps = [1, 1] : tensor<3x4xf32> -> tensor<3x4xf32>
  return %0, %1, %2, %3, %4 : tensor<2xi32>, tensor<5xi32>, tensor<2x2xi32>, tensor<2xi32>, tensor<3x4xf32>
}

// CHECK-LABEL: func.func @slice_reverse_not_identity
func.func @slice_reverse_not_identity(%x: tensor<3xf32>) -> tensor<3xf32> {
  // CHECK: dnn.slice
  %0 = dnn.slice %x starts = [2] steps = [-1] : tensor<3xf32> -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// CHECK-LABEL: func.func @gather
func.func @gather() -> (tensor<3xi64>, tensor<i64>, tensor<2x2x2xi32>, tensor<2xi32>) {
  // Negative indices count from the end.
  // CHECK-DAG: %[[NEG:.*]] = dnn.constant dense<[50, 10, 30]> : tensor<3xi64>
  // Scalar index (Shape -> Gather): a scalar result.
  // CHECK-DAG: %[[SCALAR:.*]] = dnn.constant dense<3> : tensor<i64>
  // Axis 1 with 2-d indices: result[i][j][k] = m[i][idx[j][k]].
  // CHECK-DAG: %[[AX1:.*]] = dnn.constant dense<{{\[}}{{\[}}[2, 0], [1, 2]], {{\[}}[5, 3], [4, 5]]]> : tensor<2x2x2xi32>
  // CHECK-DAG: %[[ROW:.*]] = dnn.constant dense<[4, 5]> : tensor<2xi32>
  // CHECK-NOT: dnn.gather
  // CHECK: return %[[NEG]], %[[SCALAR]], %[[AX1]], %[[ROW]]
  %d = dnn.constant dense<[10, 20, 30, 40, 50]> : tensor<5xi64>
  %i = dnn.constant dense<[-1, 0, 2]> : tensor<3xi64>
  %0 = dnn.gather %d[%i] axis = 0 : (tensor<5xi64>, tensor<3xi64>) -> tensor<3xi64>
  %shape = dnn.constant dense<[1, 3, 224, 224]> : tensor<4xi64>
  %one = dnn.constant dense<1> : tensor<i64>
  %1 = dnn.gather %shape[%one] axis = 0 : (tensor<4xi64>, tensor<i64>) -> tensor<i64>
  %m = dnn.constant dense<[[0, 1, 2], [3, 4, 5]]> : tensor<2x3xi32>
  %j = dnn.constant dense<[[2, 0], [-2, -1]]> : tensor<2x2xi32>
  %2 = dnn.gather %m[%j] axis = 1 : (tensor<2x3xi32>, tensor<2x2xi32>) -> tensor<2x2x2xi32>
  %k = dnn.constant dense<1> : tensor<i32>
  %row = dnn.constant dense<[[1, 2], [4, 5]]> : tensor<2x2xi32>
  %3 = dnn.gather %row[%k] axis = 0 : (tensor<2x2xi32>, tensor<i32>) -> tensor<2xi32>
  return %0, %1, %2, %3 : tensor<3xi64>, tensor<i64>, tensor<2x2x2xi32>, tensor<2xi32>
}

// CHECK-LABEL: func.func @gather_out_of_range
func.func @gather_out_of_range() -> tensor<1xi64> {
  // Out-of-range indices are a runtime error, not folded.
  // CHECK: dnn.gather
  %d = dnn.constant dense<[10, 20]> : tensor<2xi64>
  %i = dnn.constant dense<[2]> : tensor<1xi64>
  %0 = dnn.gather %d[%i] axis = 0 : (tensor<2xi64>, tensor<1xi64>) -> tensor<1xi64>
  return %0 : tensor<1xi64>
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @reduce_float
func.func @reduce_float() -> (tensor<2xf32>, tensor<2x1xf32>, tensor<3xf32>, tensor<1x3xf32>, tensor<f32>, tensor<2x1xf32>, tensor<3xf32>) {
  // CHECK-DAG: %[[SUM:.*]] = dnn.constant dense<[6.000000e+00, 1.500000e+01]> : tensor<2xf32>
  // CHECK-DAG: %[[SUMK:.*]] = dnn.constant dense<{{\[}}[6.000000e+00], [1.500000e+01]]> : tensor<2x1xf32>
  // CHECK-DAG: %[[MEAN:.*]] = dnn.constant dense<[2.500000e+00, 3.500000e+00, 4.500000e+00]> : tensor<3xf32>
  // CHECK-DAG: %[[MEANK:.*]] = dnn.constant dense<{{\[}}[2.500000e+00, 3.500000e+00, 4.500000e+00]]> : tensor<1x3xf32>
  // CHECK-DAG: %[[MAX:.*]] = dnn.constant dense<6.000000e+00> : tensor<f32>
  // CHECK-DAG: %[[MINK:.*]] = dnn.constant dense<{{\[}}[-1.000000e+00], [4.000000e+00]]> : tensor<2x1xf32>
  // CHECK-DAG: %[[PROD:.*]] = dnn.constant dense<[-4.000000e+00, 1.000000e+01, 1.800000e+01]> : tensor<3xf32>
  // CHECK-NOT: dnn.reduce
  // CHECK: return %[[SUM]], %[[SUMK]], %[[MEAN]], %[[MEANK]], %[[MAX]], %[[MINK]], %[[PROD]]
  %x = dnn.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %0 = dnn.reduce_sum %x axes = [1] keep_dims = false : tensor<2x3xf32> -> tensor<2xf32>
  %1 = dnn.reduce_sum %x axes = [1] keep_dims = true : tensor<2x3xf32> -> tensor<2x1xf32>
  %2 = dnn.reduce_mean %x axes = [0] keep_dims = false : tensor<2x3xf32> -> tensor<3xf32>
  %3 = dnn.reduce_mean %x axes = [0] keep_dims = true : tensor<2x3xf32> -> tensor<1x3xf32>
  %4 = dnn.reduce_max %x axes = [0, 1] keep_dims = false : tensor<2x3xf32> -> tensor<f32>
  %y = dnn.constant dense<[[-1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %5 = dnn.reduce_min %y axes = [1] keep_dims = true : tensor<2x3xf32> -> tensor<2x1xf32>
  %6 = dnn.reduce_prod %y axes = [0] keep_dims = false : tensor<2x3xf32> -> tensor<3xf32>
  return %0, %1, %2, %3, %4, %5, %6 : tensor<2xf32>, tensor<2x1xf32>, tensor<3xf32>, tensor<1x3xf32>, tensor<f32>, tensor<2x1xf32>, tensor<3xf32>
}

// CHECK-LABEL: func.func @reduce_int
func.func @reduce_int() -> (tensor<2x2xi32>, tensor<1x2x1xi32>, tensor<2xi32>, tensor<2xi32>, tensor<2xui8>, tensor<i32>) {
  // CHECK-DAG: %[[MID:.*]] = dnn.constant dense<{{\[}}[4, 6], [12, 14]]> : tensor<2x2xi32>
  // CHECK-DAG: %[[OUTER:.*]] = dnn.constant dense<{{\[}}{{\[}}[14], [22]]]> : tensor<1x2x1xi32>
  // CHECK-DAG: %[[MAX:.*]] = dnn.constant dense<[3, -1]> : tensor<2xi32>
  // CHECK-DAG: %[[MIN:.*]] = dnn.constant dense<[-7, -9]> : tensor<2xi32>
  // CHECK-DAG: %[[UMAX:.*]] = dnn.constant dense<[200, 9]> : tensor<2xui8>
  // CHECK-DAG: %[[PROD:.*]] = dnn.constant dense<40320> : tensor<i32>
  // CHECK-NOT: dnn.reduce
  // CHECK: return %[[MID]], %[[OUTER]], %[[MAX]], %[[MIN]], %[[UMAX]], %[[PROD]]
  %x = dnn.constant dense<[[[1, 2], [3, 4]], [[5, 6], [7, 8]]]> : tensor<2x2x2xi32>
  %0 = dnn.reduce_sum %x axes = [1] keep_dims = false : tensor<2x2x2xi32> -> tensor<2x2xi32>
  %1 = dnn.reduce_sum %x axes = [0, 2] keep_dims = true : tensor<2x2x2xi32> -> tensor<1x2x1xi32>
  %y = dnn.constant dense<[[3, -7, 0], [-9, -1, -5]]> : tensor<2x3xi32>
  %2 = dnn.reduce_max %y axes = [1] keep_dims = false : tensor<2x3xi32> -> tensor<2xi32>
  %3 = dnn.reduce_min %y axes = [1] keep_dims = false : tensor<2x3xi32> -> tensor<2xi32>
  %u = dnn.constant dense<[[200, 3], [1, 9]]> : tensor<2x2xui8>
  %4 = dnn.reduce_max %u axes = [1] keep_dims = false : tensor<2x2xui8> -> tensor<2xui8>
  %5 = dnn.reduce_prod %x axes = [0, 1, 2] keep_dims = false : tensor<2x2x2xi32> -> tensor<i32>
  return %0, %1, %2, %3, %4, %5 : tensor<2x2xi32>, tensor<1x2x1xi32>, tensor<2xi32>, tensor<2xi32>, tensor<2xui8>, tensor<i32>
}

// CHECK-LABEL: func.func @reduce_splat
func.func @reduce_splat() -> (tensor<4xf32>, tensor<4xf32>) {
  // CHECK-DAG: %[[SUM:.*]] = dnn.constant dense<1.500000e+00> : tensor<4xf32>
  // CHECK-DAG: %[[MEAN:.*]] = dnn.constant dense<5.000000e-01> : tensor<4xf32>
  // CHECK: return %[[SUM]], %[[MEAN]]
  %x = dnn.constant dense<0.5> : tensor<3x4xf32>
  %0 = dnn.reduce_sum %x axes = [0] keep_dims = false : tensor<3x4xf32> -> tensor<4xf32>
  %1 = dnn.reduce_mean %x axes = [0] keep_dims = false : tensor<3x4xf32> -> tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}

// CHECK-LABEL: func.func @reduce_empty_axes
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>)
func.func @reduce_empty_axes(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  // An empty axis list reduces nothing, with or without keep_dims.
  // CHECK-NOT: dnn.reduce
  // CHECK: return %[[X]], %[[X]]
  %0 = dnn.reduce_sum %x axes = [] keep_dims = false : tensor<2x3xf32> -> tensor<2x3xf32>
  %1 = dnn.reduce_max %x axes = [] keep_dims = true : tensor<2x3xf32> -> tensor<2x3xf32>
  return %0, %1 : tensor<2x3xf32>, tensor<2x3xf32>
}

// CHECK-LABEL: func.func @reduce_empty_result
func.func @reduce_empty_result() -> tensor<0x1xf32> {
  // An empty input with an empty result folds to an empty constant.
  // CHECK: %[[E:.*]] = dnn.constant dense<> : tensor<0x1xf32>
  // CHECK-NOT: dnn.reduce
  // CHECK: return %[[E]]
  %e = dnn.constant dense<> : tensor<0x3xf32>
  %0 = dnn.reduce_sum %e axes = [1] keep_dims = true : tensor<0x3xf32> -> tensor<0x1xf32>
  return %0 : tensor<0x1xf32>
}

// CHECK-LABEL: func.func @reduce_not_folded
func.func @reduce_not_folded() -> (tensor<2xi32>, tensor<3xf32>) {
  // Integer means are not folded (ONNX leaves their rounding open).
  // CHECK: dnn.reduce_mean
  %x = dnn.constant dense<[[1, 2], [3, 4]]> : tensor<2x2xi32>
  %0 = dnn.reduce_mean %x axes = [1] keep_dims = false : tensor<2x2xi32> -> tensor<2xi32>
  // Reductions over an empty extent are not folded.
  // CHECK: dnn.reduce_sum
  %e = dnn.constant dense<> : tensor<0x3xf32>
  %1 = dnn.reduce_sum %e axes = [0] keep_dims = false : tensor<0x3xf32> -> tensor<3xf32>
  return %0, %1 : tensor<2xi32>, tensor<3xf32>
}

//===----------------------------------------------------------------------===//
// Size limit: nothing above kMaxFoldElements (65536) is materialised.
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @fold_limit
func.func @fold_limit() -> tensor<65536xi32> {
  // CHECK: %[[C:.*]] = dnn.constant dense<3> : tensor<65536xi32>
  // CHECK-NOT: dnn.add
  // CHECK: return %[[C]]
  %a = dnn.constant dense<1> : tensor<65536xi32>
  %b = dnn.constant dense<2> : tensor<65536xi32>
  %0 = dnn.add %a, %b : tensor<65536xi32>
  return %0 : tensor<65536xi32>
}

// CHECK-LABEL: func.func @no_fold_above_limit
func.func @no_fold_above_limit()
    -> (tensor<65537xi32>, tensor<65537xi1>, tensor<65537xf16>, tensor<257x256xf32>, tensor<256x257xf32>, tensor<2x65536xf32>, tensor<65537xf32>, tensor<1xf32>, tensor<65537xf32>) {
  // CHECK: dnn.add
  // CHECK: dnn.less
  // CHECK: dnn.cast
  // CHECK: dnn.reshape
  // CHECK: dnn.transpose
  // CHECK: dnn.broadcast_in_dim
  // CHECK: dnn.concat
  // CHECK: dnn.reduce_sum
  // CHECK: dnn.neg
  %a = dnn.constant dense<1> : tensor<65537xi32>
  %0 = dnn.add %a, %a : tensor<65537xi32>
  %1 = dnn.less %a, %a : tensor<65537xi32> -> tensor<65537xi1>
  %f = dnn.constant dense<1.0> : tensor<65537xf32>
  %2 = dnn.cast %f : tensor<65537xf32> -> tensor<65537xf16>
  %g = dnn.constant dense<1.0> : tensor<256x257xf32>
  %3 = dnn.reshape %g : tensor<256x257xf32> -> tensor<257x256xf32>
  %4 = dnn.transpose %3, permutation = [1, 0] : tensor<257x256xf32> -> tensor<256x257xf32>
  %s = dnn.constant dense<1.0> : tensor<65536xf32>
  %5 = dnn.broadcast_in_dim %s, dims = [1] : tensor<65536xf32> -> tensor<2x65536xf32>
  %one = dnn.constant dense<1.0> : tensor<1xf32>
  %6 = dnn.concat %s, %one axis = 0 : (tensor<65536xf32>, tensor<1xf32>) -> tensor<65537xf32>
  %7 = dnn.reduce_sum %f axes = [0] keep_dims = true : tensor<65537xf32> -> tensor<1xf32>
  %8 = dnn.neg %f : tensor<65537xf32>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8 : tensor<65537xi32>, tensor<65537xi1>, tensor<65537xf16>, tensor<257x256xf32>, tensor<256x257xf32>, tensor<2x65536xf32>, tensor<65537xf32>, tensor<1xf32>, tensor<65537xf32>
}

// CHECK-LABEL: func.func @large_identity_folds
// CHECK-SAME: (%[[X:.*]]: tensor<65537xf32>, %[[Y:.*]]: tensor<65537xf32>)
func.func @large_identity_folds(%x: tensor<65537xf32>, %y: tensor<65537xf32>)
    -> (tensor<65537xf32>, tensor<65537xf32>) {
  // Folds that pick an existing value materialise nothing and ignore the
  // limit.
  // CHECK-NOT: dnn.select
  // CHECK-NOT: dnn.reshape
  // CHECK: return %[[Y]], %[[X]]
  %c = dnn.constant dense<false> : tensor<65537xi1>
  %0 = dnn.select %c, %x, %y : tensor<65537xi1>, tensor<65537xf32>
  %1 = dnn.reshape %x : tensor<65537xf32> -> tensor<65537xf32>
  return %0, %1 : tensor<65537xf32>, tensor<65537xf32>
}

// Broadcasting a non-splat constant past kMaxBroadcastFoldElements (1024)
// would replicate data; it stays an op. A splat still folds.
// CHECK-LABEL: func.func @broadcast_no_replication
// CHECK-DAG: %[[B:.*]] = dnn.constant dense<[0.000000e+00, 1.000000e+00, 2.000000e+00, 3.000000e+00]> : tensor<4xf32>
// CHECK-DAG: dnn.broadcast_in_dim %[[B]], dims = [1] : tensor<4xf32> -> tensor<257x4xf32>
// CHECK-DAG: dnn.constant dense<1.000000e+00> : tensor<257x4xf32>
func.func @broadcast_no_replication() -> (tensor<257x4xf32>, tensor<257x4xf32>) {
  %b = dnn.constant dense<[0.0, 1.0, 2.0, 3.0]> : tensor<4xf32>
  %s = dnn.constant dense<1.0> : tensor<4xf32>
  %0 = dnn.broadcast_in_dim %b, dims = [1] : tensor<4xf32> -> tensor<257x4xf32>
  %1 = dnn.broadcast_in_dim %s, dims = [1] : tensor<4xf32> -> tensor<257x4xf32>
  return %0, %1 : tensor<257x4xf32>, tensor<257x4xf32>
}
