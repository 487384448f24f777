// RUN: dnnc-opt %s | dnnc-opt | FileCheck %s
// RUN: dnnc-opt %s -mlir-print-op-generic | dnnc-opt | FileCheck %s

// Round trip of every dnn op through its custom assembly format (and, on the
// second line, through the generic form).

// CHECK-LABEL: func.func @constant
func.func @constant() -> (tensor<2xi64>, tensor<2x2xf32>, tensor<i1>, tensor<3xui8>) {
  // CHECK: dnn.constant dense<[2, 3]> : tensor<2xi64>
  %0 = dnn.constant dense<[2, 3]> : tensor<2xi64>
  // CHECK: dnn.constant dense<{{\[}}[1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00]]> : tensor<2x2xf32>
  %1 = dnn.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  // CHECK: dnn.constant dense<true> : tensor<i1>
  %2 = dnn.constant dense<true> : tensor<i1>
  // CHECK: dnn.constant dense<[0, 128, 255]> : tensor<3xui8>
  %3 = dnn.constant dense<[0, 128, 255]> : tensor<3xui8>
  return %0, %1, %2, %3 : tensor<2xi64>, tensor<2x2xf32>, tensor<i1>, tensor<3xui8>
}

// CHECK-LABEL: func.func @float_unary
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>)
func.func @float_unary(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // CHECK: %[[R0:.*]] = dnn.relu %[[X]] : tensor<2x3xf32>
  %0 = dnn.relu %x : tensor<2x3xf32>
  // CHECK: %[[R1:.*]] = dnn.tanh %[[R0]] : tensor<2x3xf32>
  %1 = dnn.tanh %0 : tensor<2x3xf32>
  // CHECK: %[[R2:.*]] = dnn.sigmoid %[[R1]] : tensor<2x3xf32>
  %2 = dnn.sigmoid %1 : tensor<2x3xf32>
  // CHECK: %[[R3:.*]] = dnn.erf %[[R2]] : tensor<2x3xf32>
  %3 = dnn.erf %2 : tensor<2x3xf32>
  // CHECK: %[[R4:.*]] = dnn.exp %[[R3]] : tensor<2x3xf32>
  %4 = dnn.exp %3 : tensor<2x3xf32>
  // CHECK: %[[R5:.*]] = dnn.log %[[R4]] : tensor<2x3xf32>
  %5 = dnn.log %4 : tensor<2x3xf32>
  // CHECK: %[[R6:.*]] = dnn.sqrt %[[R5]] : tensor<2x3xf32>
  %6 = dnn.sqrt %5 : tensor<2x3xf32>
  // CHECK: %[[R7:.*]] = dnn.reciprocal %[[R6]] : tensor<2x3xf32>
  %7 = dnn.reciprocal %6 : tensor<2x3xf32>
  // CHECK: %[[R8:.*]] = dnn.floor %[[R7]] : tensor<2x3xf32>
  %8 = dnn.floor %7 : tensor<2x3xf32>
  // CHECK: %[[R9:.*]] = dnn.ceil %[[R8]] : tensor<2x3xf32>
  %9 = dnn.ceil %8 : tensor<2x3xf32>
  // CHECK: %[[R10:.*]] = dnn.gelu %[[R9]] approximation = <none> : tensor<2x3xf32>
  %10 = dnn.gelu %9 approximation = <none> : tensor<2x3xf32>
  // CHECK: %[[R11:.*]] = dnn.gelu %[[R10]] approximation = <tanh> : tensor<2x3xf32>
  %11 = dnn.gelu %10 approximation = <tanh> : tensor<2x3xf32>
  // CHECK: %[[R12:.*]] = dnn.leaky_relu %[[R11]] alpha = 1.000000e-01 : tensor<2x3xf32>
  %12 = dnn.leaky_relu %11 alpha = 0.1 : tensor<2x3xf32>
  // CHECK: return %[[R12]]
  return %12 : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @float_unary_types
func.func @float_unary_types(%a: tensor<4xf16>, %b: tensor<4xbf16>, %c: tensor<f64>)
    -> (tensor<4xf16>, tensor<4xbf16>, tensor<f64>) {
  // CHECK: dnn.exp %{{.*}} : tensor<4xf16>
  %0 = dnn.exp %a : tensor<4xf16>
  // CHECK: dnn.tanh %{{.*}} : tensor<4xbf16>
  %1 = dnn.tanh %b : tensor<4xbf16>
  // CHECK: dnn.sqrt %{{.*}} : tensor<f64>
  %2 = dnn.sqrt %c : tensor<f64>
  return %0, %1, %2 : tensor<4xf16>, tensor<4xbf16>, tensor<f64>
}

// CHECK-LABEL: func.func @numeric_unary
func.func @numeric_unary(%f: tensor<4xf32>, %i: tensor<4xi32>, %b: tensor<4xi1>)
    -> (tensor<4xf32>, tensor<4xi32>, tensor<4xi1>) {
  // CHECK: %[[N:.*]] = dnn.neg %{{.*}} : tensor<4xf32>
  %0 = dnn.neg %f : tensor<4xf32>
  // CHECK: dnn.abs %[[N]] : tensor<4xf32>
  %1 = dnn.abs %0 : tensor<4xf32>
  // CHECK: %[[NI:.*]] = dnn.neg %{{.*}} : tensor<4xi32>
  %2 = dnn.neg %i : tensor<4xi32>
  // CHECK: dnn.abs %[[NI]] : tensor<4xi32>
  %3 = dnn.abs %2 : tensor<4xi32>
  // CHECK: dnn.not %{{.*}} : tensor<4xi1>
  %4 = dnn.not %b : tensor<4xi1>
  return %1, %3, %4 : tensor<4xf32>, tensor<4xi32>, tensor<4xi1>
}

// CHECK-LABEL: func.func @binary
// CHECK-SAME: (%[[A:.*]]: tensor<2x3xf32>, %[[B:.*]]: tensor<2x3xf32>, %[[I:.*]]: tensor<5xi64>, %[[U:.*]]: tensor<5xui16>)
func.func @binary(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>, %i: tensor<5xi64>,
                  %u: tensor<5xui16>)
    -> (tensor<2x3xf32>, tensor<5xi64>, tensor<5xui16>) {
  // CHECK: %[[ADD:.*]] = dnn.add %[[A]], %[[B]] : tensor<2x3xf32>
  %0 = dnn.add %a, %b : tensor<2x3xf32>
  // CHECK: %[[SUB:.*]] = dnn.sub %[[ADD]], %[[B]] : tensor<2x3xf32>
  %1 = dnn.sub %0, %b : tensor<2x3xf32>
  // CHECK: %[[MUL:.*]] = dnn.mul %[[SUB]], %[[A]] : tensor<2x3xf32>
  %2 = dnn.mul %1, %a : tensor<2x3xf32>
  // CHECK: %[[DIV:.*]] = dnn.div %[[MUL]], %[[B]] : tensor<2x3xf32>
  %3 = dnn.div %2, %b : tensor<2x3xf32>
  // CHECK: %[[POW:.*]] = dnn.pow %[[DIV]], %[[A]] : tensor<2x3xf32>
  %4 = dnn.pow %3, %a : tensor<2x3xf32>
  // CHECK: %[[MAX:.*]] = dnn.max %[[POW]], %[[B]] : tensor<2x3xf32>
  %5 = dnn.max %4, %b : tensor<2x3xf32>
  // CHECK: %[[MIN:.*]] = dnn.min %[[MAX]], %[[A]] : tensor<2x3xf32>
  %6 = dnn.min %5, %a : tensor<2x3xf32>
  // CHECK: %[[IDIV:.*]] = dnn.div %[[I]], %[[I]] : tensor<5xi64>
  %7 = dnn.div %i, %i : tensor<5xi64>
  // CHECK: dnn.add %[[IDIV]], %[[I]] : tensor<5xi64>
  %8 = dnn.add %7, %i : tensor<5xi64>
  // CHECK: dnn.max %[[U]], %[[U]] : tensor<5xui16>
  %9 = dnn.max %u, %u : tensor<5xui16>
  // CHECK: return %[[MIN]]
  return %6, %8, %9 : tensor<2x3xf32>, tensor<5xi64>, tensor<5xui16>
}

// CHECK-LABEL: func.func @math_and_integer
func.func @math_and_integer(%x: tensor<4xf32>, %i: tensor<4xi32>,
                            %u: tensor<4xui8>) -> (tensor<4xf32>, tensor<4xi32>,
                                                   tensor<4xui8>) {
  // CHECK: dnn.round
  %0 = dnn.round %x : tensor<4xf32>
  // CHECK: dnn.sin
  %1 = dnn.sin %0 : tensor<4xf32>
  // CHECK: dnn.cos
  %2 = dnn.cos %1 : tensor<4xf32>
  // CHECK: dnn.tan
  %3 = dnn.tan %2 : tensor<4xf32>
  // CHECK: dnn.asin
  %4 = dnn.asin %3 : tensor<4xf32>
  // CHECK: dnn.acos
  %5 = dnn.acos %4 : tensor<4xf32>
  // CHECK: dnn.atan
  %6 = dnn.atan %5 : tensor<4xf32>
  // CHECK: dnn.sinh
  %7 = dnn.sinh %6 : tensor<4xf32>
  // CHECK: dnn.cosh
  %8 = dnn.cosh %7 : tensor<4xf32>
  // CHECK: dnn.asinh
  %9 = dnn.asinh %8 : tensor<4xf32>
  // CHECK: dnn.acosh
  %10 = dnn.acosh %9 : tensor<4xf32>
  // CHECK: dnn.atanh
  %11 = dnn.atanh %10 : tensor<4xf32>
  // CHECK: dnn.rem %{{.*}}, %{{.*}} : tensor<4xf32>
  %12 = dnn.rem %11, %x : tensor<4xf32>
  // CHECK: dnn.mod %{{.*}}, %{{.*}} : tensor<4xi32>
  %13 = dnn.mod %i, %i : tensor<4xi32>
  // CHECK: dnn.shift_left %{{.*}}, %{{.*}} : tensor<4xui8>
  %14 = dnn.shift_left %u, %u : tensor<4xui8>
  // CHECK: dnn.shift_right %{{.*}}, %{{.*}} : tensor<4xui8>
  %15 = dnn.shift_right %14, %u : tensor<4xui8>
  return %12, %13, %15 : tensor<4xf32>, tensor<4xi32>, tensor<4xui8>
}

// CHECK-LABEL: func.func @logical
// CHECK-SAME: (%[[A:.*]]: tensor<4xi1>, %[[B:.*]]: tensor<4xi1>)
func.func @logical(%a: tensor<4xi1>, %b: tensor<4xi1>) -> tensor<4xi1> {
  // CHECK: %[[AND:.*]] = dnn.and %[[A]], %[[B]] : tensor<4xi1>
  %0 = dnn.and %a, %b : tensor<4xi1>
  // CHECK: %[[OR:.*]] = dnn.or %[[AND]], %[[B]] : tensor<4xi1>
  %1 = dnn.or %0, %b : tensor<4xi1>
  // CHECK: %[[XOR:.*]] = dnn.xor %[[OR]], %[[A]] : tensor<4xi1>
  %2 = dnn.xor %1, %a : tensor<4xi1>
  // CHECK: return %[[XOR]]
  return %2 : tensor<4xi1>
}

// CHECK-LABEL: func.func @compare
// CHECK-SAME: (%[[A:.*]]: tensor<4xf32>, %[[B:.*]]: tensor<4xf32>, %[[I:.*]]: tensor<2x2xi32>)
func.func @compare(%a: tensor<4xf32>, %b: tensor<4xf32>, %i: tensor<2x2xi32>)
    -> (tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<2x2xi1>) {
  // CHECK: dnn.equal %[[A]], %[[B]] : tensor<4xf32> -> tensor<4xi1>
  %0 = dnn.equal %a, %b : tensor<4xf32> -> tensor<4xi1>
  // CHECK: dnn.less %[[A]], %[[B]] : tensor<4xf32> -> tensor<4xi1>
  %1 = dnn.less %a, %b : tensor<4xf32> -> tensor<4xi1>
  // CHECK: dnn.less_equal %[[A]], %[[B]] : tensor<4xf32> -> tensor<4xi1>
  %2 = dnn.less_equal %a, %b : tensor<4xf32> -> tensor<4xi1>
  // CHECK: dnn.greater %[[A]], %[[B]] : tensor<4xf32> -> tensor<4xi1>
  %3 = dnn.greater %a, %b : tensor<4xf32> -> tensor<4xi1>
  // CHECK: dnn.greater_equal %[[I]], %[[I]] : tensor<2x2xi32> -> tensor<2x2xi1>
  %4 = dnn.greater_equal %i, %i : tensor<2x2xi32> -> tensor<2x2xi1>
  return %0, %1, %2, %3, %4 : tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<2x2xi1>
}

// CHECK-LABEL: func.func @is_nan
// CHECK-SAME: (%[[X:.*]]: tensor<2x4xf32>, %[[H:.*]]: tensor<3xf16>)
func.func @is_nan(%x: tensor<2x4xf32>, %h: tensor<3xf16>)
    -> (tensor<2x4xi1>, tensor<3xi1>) {
  // CHECK: dnn.is_nan %[[X]] : tensor<2x4xf32> -> tensor<2x4xi1>
  %0 = dnn.is_nan %x : tensor<2x4xf32> -> tensor<2x4xi1>
  // CHECK: dnn.is_nan %[[H]] : tensor<3xf16> -> tensor<3xi1>
  %1 = dnn.is_nan %h : tensor<3xf16> -> tensor<3xi1>
  return %0, %1 : tensor<2x4xi1>, tensor<3xi1>
}

// CHECK-LABEL: func.func @select_cast
// CHECK-SAME: (%[[C:.*]]: tensor<2x2xi1>, %[[A:.*]]: tensor<2x2xf32>, %[[B:.*]]: tensor<2x2xf32>)
func.func @select_cast(%c: tensor<2x2xi1>, %a: tensor<2x2xf32>, %b: tensor<2x2xf32>)
    -> (tensor<2x2xf32>, tensor<2x2xi64>, tensor<2x2xf16>, tensor<2x2xi1>) {
  // CHECK: %[[S:.*]] = dnn.select %[[C]], %[[A]], %[[B]] : tensor<2x2xi1>, tensor<2x2xf32>
  %0 = dnn.select %c, %a, %b : tensor<2x2xi1>, tensor<2x2xf32>
  // CHECK: dnn.cast %[[S]] : tensor<2x2xf32> -> tensor<2x2xi64>
  %1 = dnn.cast %0 : tensor<2x2xf32> -> tensor<2x2xi64>
  // CHECK: dnn.cast %[[S]] : tensor<2x2xf32> -> tensor<2x2xf16>
  %2 = dnn.cast %0 : tensor<2x2xf32> -> tensor<2x2xf16>
  // CHECK: dnn.cast %[[S]] : tensor<2x2xf32> -> tensor<2x2xi1>
  %3 = dnn.cast %0 : tensor<2x2xf32> -> tensor<2x2xi1>
  return %0, %1, %2, %3 : tensor<2x2xf32>, tensor<2x2xi64>, tensor<2x2xf16>, tensor<2x2xi1>
}

// CHECK-LABEL: func.func @data_movement
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4xf32>, %[[V:.*]]: tensor<3xf32>, %[[Y:.*]]: tensor<6x4xf32>)
func.func @data_movement(%x: tensor<2x3x4xf32>, %v: tensor<3xf32>, %y: tensor<6x4xf32>)
    -> (tensor<6x4xf32>, tensor<2x3xf32>, tensor<4x2x3xf32>, tensor<12x4xf32>, tensor<6x2xf32>) {
  // CHECK: %[[R:.*]] = dnn.reshape %[[X]] : tensor<2x3x4xf32> -> tensor<6x4xf32>
  %0 = dnn.reshape %x : tensor<2x3x4xf32> -> tensor<6x4xf32>
  // CHECK: dnn.broadcast_in_dim %[[V]], dims = [1] : tensor<3xf32> -> tensor<2x3xf32>
  %1 = dnn.broadcast_in_dim %v, dims = [1] : tensor<3xf32> -> tensor<2x3xf32>
  // CHECK: dnn.transpose %[[X]], permutation = [2, 0, 1] : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
  %2 = dnn.transpose %x, permutation = [2, 0, 1] : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
  // CHECK: dnn.concat %[[R]], %[[Y]] axis = 0 : (tensor<6x4xf32>, tensor<6x4xf32>) -> tensor<12x4xf32>
  %3 = dnn.concat %0, %y axis = 0 : (tensor<6x4xf32>, tensor<6x4xf32>) -> tensor<12x4xf32>
  // CHECK: dnn.slice %[[Y]] starts = [0, 3] steps = [1, -2] : tensor<6x4xf32> -> tensor<6x2xf32>
  %4 = dnn.slice %y starts = [0, 3] steps = [1, -2] : tensor<6x4xf32> -> tensor<6x2xf32>
  return %0, %1, %2, %3, %4 : tensor<6x4xf32>, tensor<2x3xf32>, tensor<4x2x3xf32>, tensor<12x4xf32>, tensor<6x2xf32>
}

// CHECK-LABEL: func.func @gather
// CHECK-SAME: (%[[D:.*]]: tensor<5x4xf32>, %[[I:.*]]: tensor<2x3xi64>, %[[J:.*]]: tensor<i32>)
func.func @gather(%d: tensor<5x4xf32>, %i: tensor<2x3xi64>, %j: tensor<i32>)
    -> (tensor<2x3x4xf32>, tensor<5xf32>) {
  // CHECK: dnn.gather %[[D]][%[[I]]] axis = 0 : (tensor<5x4xf32>, tensor<2x3xi64>) -> tensor<2x3x4xf32>
  %0 = dnn.gather %d[%i] axis = 0 : (tensor<5x4xf32>, tensor<2x3xi64>) -> tensor<2x3x4xf32>
  // CHECK: dnn.gather %[[D]][%[[J]]] axis = 1 : (tensor<5x4xf32>, tensor<i32>) -> tensor<5xf32>
  %1 = dnn.gather %d[%j] axis = 1 : (tensor<5x4xf32>, tensor<i32>) -> tensor<5xf32>
  return %0, %1 : tensor<2x3x4xf32>, tensor<5xf32>
}

// CHECK-LABEL: func.func @contractions
func.func @contractions(%a: tensor<8x16x64xf32>, %w: tensor<64x32xf32>,
                        %b: tensor<8x64x32xf32>, %x: tensor<2x3x4xf64>,
                        %y: tensor<2x4x5xf64>)
    -> (tensor<8x16x32xf32>, tensor<8x16x32xf32>, tensor<2x3x5xf64>, tensor<f64>) {
  // CHECK: dnn.matmul %{{.*}}, %{{.*}} : (tensor<8x16x64xf32>, tensor<64x32xf32>) -> tensor<8x16x32xf32>
  %0 = dnn.matmul %a, %w : (tensor<8x16x64xf32>, tensor<64x32xf32>) -> tensor<8x16x32xf32>
  // CHECK: dnn.matmul %{{.*}}, %{{.*}} : (tensor<8x16x64xf32>, tensor<8x64x32xf32>) -> tensor<8x16x32xf32>
  %1 = dnn.matmul %a, %b : (tensor<8x16x64xf32>, tensor<8x64x32xf32>) -> tensor<8x16x32xf32>
  // CHECK: dnn.einsum %{{.*}}, %{{.*}} equation = "bij,bjk->bik" : (tensor<2x3x4xf64>, tensor<2x4x5xf64>) -> tensor<2x3x5xf64>
  %2 = dnn.einsum %x, %y equation = "bij,bjk->bik" : (tensor<2x3x4xf64>, tensor<2x4x5xf64>) -> tensor<2x3x5xf64>
  // CHECK: dnn.einsum %{{.*}} equation = "bij->" : (tensor<2x3x4xf64>) -> tensor<f64>
  %3 = dnn.einsum %x equation = "bij->" : (tensor<2x3x4xf64>) -> tensor<f64>
  return %0, %1, %2, %3 : tensor<8x16x32xf32>, tensor<8x16x32xf32>, tensor<2x3x5xf64>, tensor<f64>
}

// CHECK-LABEL: func.func @conv
// CHECK-SAME: (%[[X:.*]]: tensor<1x4x5x5xf32>, %[[W:.*]]: tensor<6x2x3x3xf32>, %[[B:.*]]: tensor<6xf32>)
func.func @conv(%x: tensor<1x4x5x5xf32>, %w: tensor<6x2x3x3xf32>, %b: tensor<6xf32>)
    -> (tensor<1x6x5x5xf32>, tensor<1x6x2x2xf32>) {
  // CHECK: dnn.conv %[[X]], %[[W]], %[[B]] strides = [1, 1] pads = [1, 1, 1, 1] dilations = [1, 1] group = 2 : (tensor<1x4x5x5xf32>, tensor<6x2x3x3xf32>, tensor<6xf32>) -> tensor<1x6x5x5xf32>
  %0 = dnn.conv %x, %w, %b strides = [1, 1] pads = [1, 1, 1, 1] dilations = [1, 1] group = 2
      : (tensor<1x4x5x5xf32>, tensor<6x2x3x3xf32>, tensor<6xf32>) -> tensor<1x6x5x5xf32>
  // CHECK: dnn.conv %[[X]], %[[W]] strides = [2, 2] pads = [0, 0, 0, 0] dilations = [1, 1] group = 2 : (tensor<1x4x5x5xf32>, tensor<6x2x3x3xf32>) -> tensor<1x6x2x2xf32>
  %1 = dnn.conv %x, %w strides = [2, 2] pads = [0, 0, 0, 0] dilations = [1, 1] group = 2
      : (tensor<1x4x5x5xf32>, tensor<6x2x3x3xf32>) -> tensor<1x6x2x2xf32>
  return %0, %1 : tensor<1x6x5x5xf32>, tensor<1x6x2x2xf32>
}

// CHECK-LABEL: func.func @pool
func.func @pool(%x: tensor<1x3x32x32xf32>, %y: tensor<1x3x8x8xf32>, %z: tensor<1x2x5xf32>)
    -> (tensor<1x3x16x16xf32>, tensor<1x3x8x8xf32>, tensor<1x2x3xf32>) {
  // CHECK: dnn.max_pool %{{.*}} kernel = [2, 2] strides = [2, 2] pads = [0, 0, 0, 0] dilations = [1, 1] ceil_mode = false : tensor<1x3x32x32xf32> -> tensor<1x3x16x16xf32>
  %0 = dnn.max_pool %x kernel = [2, 2] strides = [2, 2] pads = [0, 0, 0, 0] dilations = [1, 1] ceil_mode = false
      : tensor<1x3x32x32xf32> -> tensor<1x3x16x16xf32>
  // CHECK: dnn.avg_pool %{{.*}} kernel = [3, 3] strides = [1, 1] pads = [1, 1, 1, 1] ceil_mode = false count_include_pad = true : tensor<1x3x8x8xf32> -> tensor<1x3x8x8xf32>
  %1 = dnn.avg_pool %y kernel = [3, 3] strides = [1, 1] pads = [1, 1, 1, 1] ceil_mode = false count_include_pad = true
      : tensor<1x3x8x8xf32> -> tensor<1x3x8x8xf32>
  // 1-d, ceil mode: (5 - 2) / 2 + 1 = 2, rounded up to 3.
  // CHECK: dnn.max_pool %{{.*}} kernel = [2] strides = [2] pads = [0, 0] dilations = [1] ceil_mode = true : tensor<1x2x5xf32> -> tensor<1x2x3xf32>
  %2 = dnn.max_pool %z kernel = [2] strides = [2] pads = [0, 0] dilations = [1] ceil_mode = true
      : tensor<1x2x5xf32> -> tensor<1x2x3xf32>
  return %0, %1, %2 : tensor<1x3x16x16xf32>, tensor<1x3x8x8xf32>, tensor<1x2x3xf32>
}

// Windows that reach past the padded input (ONNX and onnxruntime): a span of
// 1 - 2 = -1 in (-stride, 0) still gives one window, with or without ceil
// mode.
// CHECK-LABEL: func.func @pool_partial_windows
func.func @pool_partial_windows(%x: tensor<1x2x1x7xf32>, %y: tensor<1x2x1xf32>)
    -> (tensor<1x2x1x5xf32>, tensor<1x2x1xf32>) {
  // CHECK: dnn.avg_pool {{.*}} : tensor<1x2x1x7xf32> -> tensor<1x2x1x5xf32>
  %0 = dnn.avg_pool %x kernel = [2, 3] strides = [2, 1] pads = [0, 0, 0, 0] ceil_mode = true count_include_pad = true
      : tensor<1x2x1x7xf32> -> tensor<1x2x1x5xf32>
  // CHECK: dnn.max_pool {{.*}} : tensor<1x2x1xf32> -> tensor<1x2x1xf32>
  %1 = dnn.max_pool %y kernel = [2] strides = [2] pads = [0, 0] dilations = [1] ceil_mode = false
      : tensor<1x2x1xf32> -> tensor<1x2x1xf32>
  return %0, %1 : tensor<1x2x1x5xf32>, tensor<1x2x1xf32>
}

// CHECK-LABEL: func.func @normalisation
// CHECK-SAME: (%[[X:.*]]: tensor<2x4x8xf32>, %[[S:.*]]: tensor<8xf32>, %[[B:.*]]: tensor<8xf32>, %[[H:.*]]: tensor<2x4x8xf16>, %[[S2:.*]]: tensor<4x8xf16>)
func.func @normalisation(%x: tensor<2x4x8xf32>, %s: tensor<8xf32>, %b: tensor<8xf32>,
                         %h: tensor<2x4x8xf16>, %s2: tensor<4x8xf16>)
    -> (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x1x1xf32>) {
  // CHECK: dnn.softmax %[[X]] axis = 2 : tensor<2x4x8xf32>
  %0 = dnn.softmax %x axis = 2 : tensor<2x4x8xf32>
  // CHECK: dnn.log_softmax %[[X]] axis = 0 : tensor<2x4x8xf32>
  %1 = dnn.log_softmax %x axis = 0 : tensor<2x4x8xf32>
  // CHECK: dnn.layer_norm %[[X]], %[[S]], %[[B]] axis = 2 epsilon = 9.99999974E-6 : (tensor<2x4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<2x4x8xf32>, tensor<2x4x1xf32>, tensor<2x4x1xf32>)
  %y, %mean, %isd = dnn.layer_norm %x, %s, %b axis = 2 epsilon = 1.0e-05
      : (tensor<2x4x8xf32>, tensor<8xf32>, tensor<8xf32>)
      -> (tensor<2x4x8xf32>, tensor<2x4x1xf32>, tensor<2x4x1xf32>)
  // Without bias, f16 input: statistics in f32.
  // CHECK: dnn.layer_norm %[[H]], %[[S2]] axis = 1 epsilon = 1.000000e-03 : (tensor<2x4x8xf16>, tensor<4x8xf16>) -> (tensor<2x4x8xf16>, tensor<2x1x1xf32>, tensor<2x1x1xf32>)
  %y2, %mean2, %isd2 = dnn.layer_norm %h, %s2 axis = 1 epsilon = 1.0e-03
      : (tensor<2x4x8xf16>, tensor<4x8xf16>)
      -> (tensor<2x4x8xf16>, tensor<2x1x1xf32>, tensor<2x1x1xf32>)
  return %0, %1, %y, %mean2 : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x1x1xf32>
}

// CHECK-LABEL: func.func @reductions
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4xf32>, %[[I:.*]]: tensor<2x3xi64>)
func.func @reductions(%x: tensor<2x3x4xf32>, %i: tensor<2x3xi64>)
    -> (tensor<3xf32>, tensor<2x1x4xf32>, tensor<f32>, tensor<2x3x4xf32>, tensor<2x1xi64>) {
  // CHECK: dnn.reduce_sum %[[X]] axes = [0, 2] keep_dims = false : tensor<2x3x4xf32> -> tensor<3xf32>
  %0 = dnn.reduce_sum %x axes = [0, 2] keep_dims = false : tensor<2x3x4xf32> -> tensor<3xf32>
  // CHECK: dnn.reduce_mean %[[X]] axes = [1] keep_dims = true : tensor<2x3x4xf32> -> tensor<2x1x4xf32>
  %1 = dnn.reduce_mean %x axes = [1] keep_dims = true : tensor<2x3x4xf32> -> tensor<2x1x4xf32>
  // CHECK: dnn.reduce_max %[[X]] axes = [0, 1, 2] keep_dims = false : tensor<2x3x4xf32> -> tensor<f32>
  %2 = dnn.reduce_max %x axes = [0, 1, 2] keep_dims = false : tensor<2x3x4xf32> -> tensor<f32>
  // CHECK: dnn.reduce_min %[[X]] axes = [] keep_dims = false : tensor<2x3x4xf32> -> tensor<2x3x4xf32>
  %3 = dnn.reduce_min %x axes = [] keep_dims = false : tensor<2x3x4xf32> -> tensor<2x3x4xf32>
  // CHECK: dnn.reduce_prod %[[I]] axes = [1] keep_dims = true : tensor<2x3xi64> -> tensor<2x1xi64>
  %4 = dnn.reduce_prod %i axes = [1] keep_dims = true : tensor<2x3xi64> -> tensor<2x1xi64>
  return %0, %1, %2, %3, %4 : tensor<3xf32>, tensor<2x1x4xf32>, tensor<f32>, tensor<2x3x4xf32>, tensor<2x1xi64>
}

// CHECK-LABEL: func.func @training
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>, %[[R:.*]]: tensor<f32>, %[[S:.*]]: tensor<3x5x2xf32>, %[[L:.*]]: tensor<3x2xi64>, %[[W:.*]]: tensor<5xf32>)
func.func @training(%x: tensor<4xf32>, %r: tensor<f32>, %s: tensor<3x5x2xf32>,
                    %l: tensor<3x2xi64>, %w: tensor<5xf32>)
    -> (tensor<4xf32>, tensor<4xi1>, tensor<f32>, tensor<3x2xf32>, tensor<f32>) {
  // CHECK: dnn.dropout %[[X]], %[[R]] seed = 42 : (tensor<4xf32>, tensor<f32>) -> (tensor<4xf32>, tensor<4xi1>)
  %y, %mask = dnn.dropout %x, %r seed = 42
      : (tensor<4xf32>, tensor<f32>) -> (tensor<4xf32>, tensor<4xi1>)
  // CHECK: dnn.softmax_cross_entropy %[[S]], %[[L]] reduction = <mean> : (tensor<3x5x2xf32>, tensor<3x2xi64>) -> (tensor<f32>, tensor<3x5x2xf32>)
  %loss, %lp = dnn.softmax_cross_entropy %s, %l reduction = <mean>
      : (tensor<3x5x2xf32>, tensor<3x2xi64>) -> (tensor<f32>, tensor<3x5x2xf32>)
  // CHECK: dnn.softmax_cross_entropy %[[S]], %[[L]], %[[W]] reduction = <none> {ignore_index = -1 : i64} : (tensor<3x5x2xf32>, tensor<3x2xi64>, tensor<5xf32>) -> (tensor<3x2xf32>, tensor<3x5x2xf32>)
  %loss2, %lp2 = dnn.softmax_cross_entropy %s, %l, %w reduction = <none> {ignore_index = -1 : i64}
      : (tensor<3x5x2xf32>, tensor<3x2xi64>, tensor<5xf32>) -> (tensor<3x2xf32>, tensor<3x5x2xf32>)
  // CHECK: dnn.softmax_cross_entropy %[[S]], %[[L]] reduction = <sum> : (tensor<3x5x2xf32>, tensor<3x2xi64>) -> (tensor<f32>, tensor<3x5x2xf32>)
  %loss3, %lp3 = dnn.softmax_cross_entropy %s, %l reduction = <sum>
      : (tensor<3x5x2xf32>, tensor<3x2xi64>) -> (tensor<f32>, tensor<3x5x2xf32>)
  return %y, %mask, %loss, %loss2, %loss3 : tensor<4xf32>, tensor<4xi1>, tensor<f32>, tensor<3x2xf32>, tensor<f32>
}

// Sharding rules: factor names are canonicalised (i, j, k, ...) in factor
// order, unlisted factors are parallel, `1` is a dimension without factors.
// CHECK-LABEL: func.func @sharding_rules
// CHECK-SAME: #dnn.sharding_rule<([i, k], [k, j]) -> ([i, j]) {i=8, j=16, k=4} reduction={k:sum}>
// CHECK-SAME: #dnn.sharding_rule<([i, j]) -> ([i, j]) {i=4, j=10} replication={j}>
// CHECK-SAME: #dnn.sharding_rule<([ij, k]) -> ([i, j, k]) {i=2, j=3, k=4}>
// CHECK-SAME: #dnn.sharding_rule<([i]) -> ([1, i, 1]) {i=6}>
// CHECK-SAME: #dnn.sharding_rule<() -> ([]) {}>
// CHECK-SAME: #dnn.sharding_rule<([i, j]) -> ([j]) {i=2, j=3} reduction={i:max}>
// CHECK-SAME: #dnn.sharding_rule<([i, j, k]) -> ([], [i, j, k]) {i=3, j=5, k=2} reduction={i:mean, k:prod} replication={j}>
// CHECK-SAME: #dnn.sharding_rule<([i, j, k]) -> ([i, j, l]) {i=1, j=3, k=32, l=16} halo={k, l}>
// CHECK-SAME: #dnn.sharding_rule<([i, j], [j]) -> ([i]) {i=2, j=3} reduction={j:min}>
// CHECK-SAME: #dnn.sharding_rule<([ijklmnopqrstuvwxyzabcdefghi_1]) -> ([ijklmnopqrstuvwxyzabcdefghi_1]) {i=1, j=1, k=1, l=1, m=1, n=1, o=1, p=1, q=1, r=1, s=1, t=1, u=1, v=1, w=1, x=1, y=1, z=1, a=1, b=1, c=1, d=1, e=1, f=1, g=1, h=1, i_1=2}>
// CHECK-SAME: #dnn.tensor_mapping<{{\[}}[0, 1], [], [2]]>
func.func @sharding_rules() attributes {rules = [
    #dnn.sharding_rule<([i, k], [k, j]) -> ([i, j]) {i=8, j=16, k=4} reduction={k:sum}>,
    #dnn.sharding_rule<([i, j]) -> ([i, j]) {i=4, j=10} replication={j}>,
    #dnn.sharding_rule<([ij, k]) -> ([i, j, k]) {i=2, j=3, k=4}>,
    #dnn.sharding_rule<([i]) -> ([1, i, 1]) {i=6}>,
    #dnn.sharding_rule<() -> ([]) {}>,
    #dnn.sharding_rule<([a, b]) -> ([b]) {a=2, b=3} reduction={a:max}>,
    #dnn.sharding_rule<([n, c, d]) -> ([], [n, c, d]) {n=3, c=5, d=2} replication={c} reduction={n:mean, d:prod}>,
    #dnn.sharding_rule<([n, c, h]) -> ([n, c, o]) {n=1, c=3, h=32, o=16} halo={h, o}>,
    #dnn.sharding_rule<([x_1, x_2], [x_2]) -> ([x_1]) {x_1=2, x_2=3} reduction={x_2:min}>,
    #dnn.sharding_rule<([abcdefghijklmnopqrstuvwxyzA]) -> ([abcdefghijklmnopqrstuvwxyzA])
        {a=1, b=1, c=1, d=1, e=1, f=1, g=1, h=1, i=1, j=1, k=1, l=1, m=1, n=1, o=1, p=1, q=1,
         r=1, s=1, t=1, u=1, v=1, w=1, x=1, y=1, z=1, A=2}>,
    #dnn.tensor_mapping<[[0, 1], [], [2]]>]} {
  return
}

// A rule pinned on an op.
// CHECK-LABEL: func.func @pinned_sharding_rule
// CHECK: dnn.softmax %{{.*}} axis = 1 {dnn.sharding_rule = #dnn.sharding_rule<([i, j]) -> ([i, j]) {i=4, j=10} replication={i, j}>} : tensor<4x10xf32>
func.func @pinned_sharding_rule(%x: tensor<4x10xf32>) -> tensor<4x10xf32> {
  %0 = dnn.softmax %x axis = 1 {dnn.sharding_rule = #dnn.sharding_rule<([i, j]) -> ([i, j]) {i=4, j=10} replication={i, j}>} : tensor<4x10xf32>
  return %0 : tensor<4x10xf32>
}
