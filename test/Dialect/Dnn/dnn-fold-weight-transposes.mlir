// RUN: dnnc-opt %s --dnn-fold-weight-transposes -mlir-print-debuginfo \
// RUN:   | FileCheck %s

// The transposed data replaces the constant; the location (the ONNX
// initializer name) stays.
// CHECK-LABEL: func.func @matrix(
// CHECK: %[[W:.*]] = dnn.constant dense<{{\[}}[1, 4], [2, 5], [3, 6]]> : tensor<3x2xi64> loc(#[[LOC:loc[0-9]*]])
// CHECK: return %[[W]]
// CHECK-NOT: dnn.transpose
func.func @matrix() -> tensor<3x2xi64> {
  %w = dnn.constant dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi64> loc("fc.weight")
  %t = dnn.transpose %w, permutation = [1, 0] : tensor<2x3xi64> -> tensor<3x2xi64>
  return %t : tensor<3x2xi64>
}

// Rank 3, f16 (2-byte elements).
// CHECK-LABEL: func.func @rank3(
// CHECK: dnn.constant dense<{{\[}}[
// CHECK-SAME: [1.000000e+00, 5.000000e+00], [2.000000e+00, 6.000000e+00]],
// CHECK-SAME: [3.000000e+00, 7.000000e+00], [4.000000e+00, 8.000000e+00]]]> : tensor<2x2x2xf16>
func.func @rank3() -> tensor<2x2x2xf16> {
  %w = dnn.constant dense<[[[1.0, 2.0], [3.0, 4.0]], [[5.0, 6.0], [7.0, 8.0]]]> : tensor<2x2x2xf16>
  %t = dnn.transpose %w, permutation = [1, 2, 0] : tensor<2x2x2xf16> -> tensor<2x2x2xf16>
  return %t : tensor<2x2x2xf16>
}

// A constant with another use is not duplicated.
// CHECK-LABEL: func.func @shared(
// CHECK: dnn.transpose
func.func @shared() -> (tensor<2x3xf32>, tensor<3x2xf32>) {
  %w = dnn.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %t = dnn.transpose %w, permutation = [1, 0] : tensor<2x3xf32> -> tensor<3x2xf32>
  return %w, %t : tensor<2x3xf32>, tensor<3x2xf32>
}

// Bool constants are packed bits: left alone.
// CHECK-LABEL: func.func @bool(
// CHECK: dnn.transpose
func.func @bool() -> tensor<2x1xi1> {
  %w = dnn.constant dense<[[true, false]]> : tensor<1x2xi1>
  %t = dnn.transpose %w, permutation = [1, 0] : tensor<1x2xi1> -> tensor<2x1xi1>
  return %t : tensor<2x1xi1>
}

// CHECK: #[[LOC]] = loc("fc.weight")
