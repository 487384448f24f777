// RUN: dnnc-opt %s --convert-dnn-to-linalg | FileCheck %s

// Every elementwise op becomes one linalg.generic with identity maps and
// parallel iterators over a tensor.empty init; the checks below look at the
// scalar bodies. Operands are function arguments so that nothing folds.

// CHECK-DAG: #[[ID2:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[ID1:.*]] = affine_map<(d0) -> (d0)>
// CHECK-DAG: #[[SCALAR:.*]] = affine_map<(d0, d1) -> ()>

// CHECK-LABEL: func.func @constant
// CHECK-DAG: arith.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
// CHECK-DAG: arith.constant dense<[1, 2, 255]> : tensor<3xui8>
// CHECK-NOT: dnn.
func.func @constant() -> (tensor<2xf32>, tensor<3xui8>) {
  %0 = dnn.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %1 = dnn.constant dense<[1, 2, 255]> : tensor<3xui8>
  return %0, %1 : tensor<2xf32>, tensor<3xui8>
}

// CHECK-LABEL: func.func @relu
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>)
// CHECK: %[[INIT:.*]] = tensor.empty() : tensor<2x3xf32>
// CHECK: %[[R:.*]] = linalg.generic
// CHECK-SAME: indexing_maps = [#[[ID2]], #[[ID2]]]
// CHECK-SAME: iterator_types = ["parallel", "parallel"]
// CHECK-SAME: ins(%[[X]] : tensor<2x3xf32>) outs(%[[INIT]] : tensor<2x3xf32>)
// CHECK: ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
// CHECK:   %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:   %[[MAX:.*]] = arith.maximumf %[[IN]], %[[ZERO]] : f32
// CHECK:   linalg.yield %[[MAX]] : f32
// CHECK: return %[[R]]
func.func @relu(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = dnn.relu %x : tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @math_unary
// CHECK: ^bb0(%[[IN:.*]]: f16, %{{.*}}: f16):
// CHECK-NEXT: math.tanh %[[IN]] : f16
// CHECK: math.erf %{{.*}} : f16
// CHECK: math.exp %{{.*}} : f16
// CHECK: math.log %{{.*}} : f16
// CHECK: math.sqrt %{{.*}} : f16
// CHECK: math.floor %{{.*}} : f16
// CHECK: math.ceil %{{.*}} : f16
func.func @math_unary(%x: tensor<4xf16>)
    -> (tensor<4xf16>, tensor<4xf16>, tensor<4xf16>, tensor<4xf16>,
        tensor<4xf16>, tensor<4xf16>, tensor<4xf16>) {
  %0 = dnn.tanh %x : tensor<4xf16>
  %1 = dnn.erf %x : tensor<4xf16>
  %2 = dnn.exp %x : tensor<4xf16>
  %3 = dnn.log %x : tensor<4xf16>
  %4 = dnn.sqrt %x : tensor<4xf16>
  %5 = dnn.floor %x : tensor<4xf16>
  %6 = dnn.ceil %x : tensor<4xf16>
  return %0, %1, %2, %3, %4, %5, %6
      : tensor<4xf16>, tensor<4xf16>, tensor<4xf16>, tensor<4xf16>,
        tensor<4xf16>, tensor<4xf16>, tensor<4xf16>
}

// CHECK-LABEL: func.func @sigmoid_reciprocal
// CHECK: ^bb0(%[[IN:.*]]: bf16, %{{.*}}: bf16):
// CHECK:   %[[ONE:.*]] = arith.constant 1.000000e+00 : bf16
// CHECK:   %[[NEG:.*]] = arith.negf %[[IN]] : bf16
// CHECK:   %[[EXP:.*]] = math.exp %[[NEG]] : bf16
// CHECK:   %[[DEN:.*]] = arith.addf %[[ONE]], %[[EXP]] : bf16
// CHECK:   %[[SIG:.*]] = arith.divf %[[ONE]], %[[DEN]] : bf16
// CHECK:   linalg.yield %[[SIG]] : bf16
// CHECK: ^bb0(%[[IN2:.*]]: bf16, %{{.*}}: bf16):
// CHECK:   %[[ONE2:.*]] = arith.constant 1.000000e+00 : bf16
// CHECK:   %[[REC:.*]] = arith.divf %[[ONE2]], %[[IN2]] : bf16
// CHECK:   linalg.yield %[[REC]] : bf16
func.func @sigmoid_reciprocal(%x: tensor<4xbf16>)
    -> (tensor<4xbf16>, tensor<4xbf16>) {
  %0 = dnn.sigmoid %x : tensor<4xbf16>
  %1 = dnn.reciprocal %x : tensor<4xbf16>
  return %0, %1 : tensor<4xbf16>, tensor<4xbf16>
}

// Integer negation is 0 - x; abs of an unsigned integer is the identity.
// CHECK-LABEL: func.func @neg_abs
// CHECK: arith.negf %{{.*}} : f64
// CHECK: math.absf %{{.*}} : f64
// CHECK: ^bb0(%[[I:.*]]: i16, %{{.*}}: i16):
// CHECK:   %[[ZERO:.*]] = arith.constant 0 : i16
// CHECK:   arith.subi %[[ZERO]], %[[I]] : i16
// CHECK: math.absi %{{.*}} : i16
// CHECK: ^bb0(%{{.*}}: ui16, %{{.*}}: ui16):
// CHECK-NOT: math.absi
// CHECK: linalg.yield %{{.*}} : ui16
func.func @neg_abs(%f: tensor<4xf64>, %i: tensor<4xi16>, %u: tensor<4xui16>)
    -> (tensor<4xf64>, tensor<4xf64>, tensor<4xi16>, tensor<4xi16>,
        tensor<4xui16>) {
  %0 = dnn.neg %f : tensor<4xf64>
  %1 = dnn.abs %f : tensor<4xf64>
  %2 = dnn.neg %i : tensor<4xi16>
  %3 = dnn.abs %i : tensor<4xi16>
  %4 = dnn.abs %u : tensor<4xui16>
  return %0, %1, %2, %3, %4
      : tensor<4xf64>, tensor<4xf64>, tensor<4xi16>, tensor<4xi16>,
        tensor<4xui16>
}

// CHECK-LABEL: func.func @not
// CHECK: ^bb0(%[[IN:.*]]: i1, %{{.*}}: i1):
// CHECK:   %[[TRUE:.*]] = arith.constant true
// CHECK:   arith.xori %[[IN]], %[[TRUE]] : i1
func.func @not(%x: tensor<4xi1>) -> tensor<4xi1> {
  %0 = dnn.not %x : tensor<4xi1>
  return %0 : tensor<4xi1>
}

// none: 0.5 * x * (1 + erf(x / sqrt(2)));
// tanh: 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3))).
// CHECK-LABEL: func.func @gelu
// CHECK: ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK:   %[[RSQRT2:.*]] = arith.constant 0.707106769 : f32
// CHECK:   %[[S:.*]] = arith.mulf %[[X]], %[[RSQRT2]] : f32
// CHECK:   %[[ERF:.*]] = math.erf %[[S]] : f32
// CHECK:   %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK:   %[[SUM:.*]] = arith.addf %[[ONE]], %[[ERF]] : f32
// CHECK:   %[[HALF:.*]] = arith.constant 5.000000e-01 : f32
// CHECK:   %[[HX:.*]] = arith.mulf %[[X]], %[[HALF]] : f32
// CHECK:   %[[R:.*]] = arith.mulf %[[HX]], %[[SUM]] : f32
// CHECK:   linalg.yield %[[R]] : f32
// CHECK: ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK:   %[[X2:.*]] = arith.mulf %[[X]], %[[X]] : f32
// CHECK:   %[[X3:.*]] = arith.mulf %[[X2]], %[[X]] : f32
// CHECK:   %[[C:.*]] = arith.constant 4.471500e-02 : f32
// CHECK:   %[[CX3:.*]] = arith.mulf %[[C]], %[[X3]] : f32
// CHECK:   %[[IN:.*]] = arith.addf %[[X]], %[[CX3]] : f32
// CHECK:   %[[K:.*]] = arith.constant 0.797884583 : f32
// CHECK:   %[[KIN:.*]] = arith.mulf %[[K]], %[[IN]] : f32
// CHECK:   %[[TANH:.*]] = math.tanh %[[KIN]] : f32
// CHECK:   %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK:   %[[SUM:.*]] = arith.addf %[[ONE]], %[[TANH]] : f32
// CHECK:   %[[HALF:.*]] = arith.constant 5.000000e-01 : f32
// CHECK:   %[[HX:.*]] = arith.mulf %[[X]], %[[HALF]] : f32
// CHECK:   %[[R:.*]] = arith.mulf %[[HX]], %[[SUM]] : f32
// CHECK:   linalg.yield %[[R]] : f32
func.func @gelu(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = dnn.gelu %x approximation = <none> : tensor<4xf32>
  %1 = dnn.gelu %x approximation = <tanh> : tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}

// CHECK-LABEL: func.func @leaky_relu
// CHECK: ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG: %[[ALPHA:.*]] = arith.constant 0.00999999977 : f32
// CHECK:   %[[GE:.*]] = arith.cmpf oge, %[[X]], %[[ZERO]] : f32
// CHECK:   %[[AX:.*]] = arith.mulf %[[ALPHA]], %[[X]] : f32
// CHECK:   %[[R:.*]] = arith.select %[[GE]], %[[X]], %[[AX]] : f32
// CHECK:   linalg.yield %[[R]] : f32
func.func @leaky_relu(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = dnn.leaky_relu %x alpha = 0.01 : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// Float max/min propagate NaN (ONNX): maximumf/minimumf, not maxnumf/minnumf.
// CHECK-LABEL: func.func @float_binary
// CHECK-SAME: (%[[A:.*]]: tensor<4xf32>, %[[B:.*]]: tensor<4xf32>)
// CHECK: linalg.generic
// CHECK-SAME: indexing_maps = [#[[ID1]], #[[ID1]], #[[ID1]]]
// CHECK-SAME: iterator_types = ["parallel"]
// CHECK-SAME: ins(%[[A]], %[[B]] : tensor<4xf32>, tensor<4xf32>)
// CHECK: ^bb0(%[[L:.*]]: f32, %[[R:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: arith.addf %[[L]], %[[R]] : f32
// CHECK: arith.subf
// CHECK: arith.mulf
// CHECK: arith.divf
// CHECK: math.powf
// CHECK: arith.maximumf
// CHECK: arith.minimumf
func.func @float_binary(%a: tensor<4xf32>, %b: tensor<4xf32>)
    -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>,
        tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %0 = dnn.add %a, %b : tensor<4xf32>
  %1 = dnn.sub %a, %b : tensor<4xf32>
  %2 = dnn.mul %a, %b : tensor<4xf32>
  %3 = dnn.div %a, %b : tensor<4xf32>
  %4 = dnn.pow %a, %b : tensor<4xf32>
  %5 = dnn.max %a, %b : tensor<4xf32>
  %6 = dnn.min %a, %b : tensor<4xf32>
  return %0, %1, %2, %3, %4, %5, %6
      : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>,
        tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// Signless integers are ONNX's signed ones.
// CHECK-LABEL: func.func @signed_binary
// CHECK: arith.addi %{{.*}}, %{{.*}} : i32
// CHECK: arith.subi %{{.*}}, %{{.*}} : i32
// CHECK: arith.muli %{{.*}}, %{{.*}} : i32
// CHECK: arith.divsi %{{.*}}, %{{.*}} : i32
// CHECK: arith.maxsi %{{.*}}, %{{.*}} : i32
// CHECK: arith.minsi %{{.*}}, %{{.*}} : i32
func.func @signed_binary(%a: tensor<4xi32>, %b: tensor<4xi32>)
    -> (tensor<4xi32>, tensor<4xi32>, tensor<4xi32>, tensor<4xi32>,
        tensor<4xi32>, tensor<4xi32>) {
  %0 = dnn.add %a, %b : tensor<4xi32>
  %1 = dnn.sub %a, %b : tensor<4xi32>
  %2 = dnn.mul %a, %b : tensor<4xi32>
  %3 = dnn.div %a, %b : tensor<4xi32>
  %4 = dnn.max %a, %b : tensor<4xi32>
  %5 = dnn.min %a, %b : tensor<4xi32>
  return %0, %1, %2, %3, %4, %5
      : tensor<4xi32>, tensor<4xi32>, tensor<4xi32>, tensor<4xi32>,
        tensor<4xi32>, tensor<4xi32>
}

// Unsigned tensors keep their type; the body computes on signless scalars.
// CHECK-LABEL: func.func @unsigned_binary
// CHECK: linalg.generic
// CHECK-SAME: outs(%{{.*}} : tensor<4xui8>)
// CHECK: ^bb0(%[[L:.*]]: ui8, %[[R:.*]]: ui8, %{{.*}}: ui8):
// CHECK:   %[[LS:.*]] = builtin.unrealized_conversion_cast %[[L]] : ui8 to i8
// CHECK:   %[[RS:.*]] = builtin.unrealized_conversion_cast %[[R]] : ui8 to i8
// CHECK:   %[[SUM:.*]] = arith.addi %[[LS]], %[[RS]] : i8
// CHECK:   %[[U:.*]] = builtin.unrealized_conversion_cast %[[SUM]] : i8 to ui8
// CHECK:   linalg.yield %[[U]] : ui8
// CHECK: arith.divui %{{.*}}, %{{.*}} : i8
// CHECK: arith.maxui %{{.*}}, %{{.*}} : i8
// CHECK: arith.minui %{{.*}}, %{{.*}} : i8
func.func @unsigned_binary(%a: tensor<4xui8>, %b: tensor<4xui8>)
    -> (tensor<4xui8>, tensor<4xui8>, tensor<4xui8>, tensor<4xui8>) {
  %0 = dnn.add %a, %b : tensor<4xui8>
  %1 = dnn.div %a, %b : tensor<4xui8>
  %2 = dnn.max %a, %b : tensor<4xui8>
  %3 = dnn.min %a, %b : tensor<4xui8>
  return %0, %1, %2, %3
      : tensor<4xui8>, tensor<4xui8>, tensor<4xui8>, tensor<4xui8>
}

// CHECK-LABEL: func.func @logic
// CHECK: arith.andi %{{.*}}, %{{.*}} : i1
// CHECK: arith.ori %{{.*}}, %{{.*}} : i1
// CHECK: arith.xori %{{.*}}, %{{.*}} : i1
func.func @logic(%a: tensor<4xi1>, %b: tensor<4xi1>)
    -> (tensor<4xi1>, tensor<4xi1>, tensor<4xi1>) {
  %0 = dnn.and %a, %b : tensor<4xi1>
  %1 = dnn.or %a, %b : tensor<4xi1>
  %2 = dnn.xor %a, %b : tensor<4xi1>
  return %0, %1, %2 : tensor<4xi1>, tensor<4xi1>, tensor<4xi1>
}

// Ordered predicates: comparisons with NaN are false.
// CHECK-LABEL: func.func @compare_float
// CHECK: linalg.generic
// CHECK-SAME: ins(%{{.*}}, %{{.*}} : tensor<4xf32>, tensor<4xf32>)
// CHECK-SAME: outs(%{{.*}} : tensor<4xi1>)
// CHECK: ^bb0(%[[L:.*]]: f32, %[[R:.*]]: f32, %{{.*}}: i1):
// CHECK-NEXT: %[[EQ:.*]] = arith.cmpf oeq, %[[L]], %[[R]] : f32
// CHECK-NEXT: linalg.yield %[[EQ]] : i1
// CHECK: arith.cmpf olt
// CHECK: arith.cmpf ole
// CHECK: arith.cmpf ogt
// CHECK: arith.cmpf oge
func.func @compare_float(%a: tensor<4xf32>, %b: tensor<4xf32>)
    -> (tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>,
        tensor<4xi1>) {
  %0 = dnn.equal %a, %b : tensor<4xf32> -> tensor<4xi1>
  %1 = dnn.less %a, %b : tensor<4xf32> -> tensor<4xi1>
  %2 = dnn.less_equal %a, %b : tensor<4xf32> -> tensor<4xi1>
  %3 = dnn.greater %a, %b : tensor<4xf32> -> tensor<4xi1>
  %4 = dnn.greater_equal %a, %b : tensor<4xf32> -> tensor<4xi1>
  return %0, %1, %2, %3, %4
      : tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>
}

// Signed predicates for signless integers, unsigned ones for unsigned
// integers and for bool (false < true).
// CHECK-LABEL: func.func @compare_int
// CHECK: arith.cmpi eq, %{{.*}}, %{{.*}} : i64
// CHECK: arith.cmpi slt, %{{.*}}, %{{.*}} : i64
// CHECK: arith.cmpi sge, %{{.*}}, %{{.*}} : i64
// CHECK: arith.cmpi ule, %{{.*}}, %{{.*}} : i32
// CHECK: arith.cmpi ugt, %{{.*}}, %{{.*}} : i32
// CHECK: arith.cmpi eq, %{{.*}}, %{{.*}} : i1
// CHECK: arith.cmpi ult, %{{.*}}, %{{.*}} : i1
func.func @compare_int(%a: tensor<4xi64>, %b: tensor<4xi64>,
                       %c: tensor<4xui32>, %d: tensor<4xui32>,
                       %p: tensor<4xi1>, %q: tensor<4xi1>)
    -> (tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>,
        tensor<4xi1>, tensor<4xi1>, tensor<4xi1>) {
  %0 = dnn.equal %a, %b : tensor<4xi64> -> tensor<4xi1>
  %1 = dnn.less %a, %b : tensor<4xi64> -> tensor<4xi1>
  %2 = dnn.greater_equal %a, %b : tensor<4xi64> -> tensor<4xi1>
  %3 = dnn.less_equal %c, %d : tensor<4xui32> -> tensor<4xi1>
  %4 = dnn.greater %c, %d : tensor<4xui32> -> tensor<4xi1>
  %5 = dnn.equal %p, %q : tensor<4xi1> -> tensor<4xi1>
  %6 = dnn.less %p, %q : tensor<4xi1> -> tensor<4xi1>
  return %0, %1, %2, %3, %4, %5, %6
      : tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>,
        tensor<4xi1>, tensor<4xi1>, tensor<4xi1>
}

// NaN is the one value unordered with itself.
// CHECK-LABEL: func.func @is_nan
// CHECK: linalg.generic
// CHECK-SAME: ins(%{{.*}} : tensor<2x4xf16>)
// CHECK-SAME: outs(%{{.*}} : tensor<2x4xi1>)
// CHECK: ^bb0(%[[X:.*]]: f16, %{{.*}}: i1):
// CHECK-NEXT: %[[N:.*]] = arith.cmpf uno, %[[X]], %[[X]] : f16
// CHECK-NEXT: linalg.yield %[[N]] : i1
func.func @is_nan(%x: tensor<2x4xf16>) -> tensor<2x4xi1> {
  %0 = dnn.is_nan %x : tensor<2x4xf16> -> tensor<2x4xi1>
  return %0 : tensor<2x4xi1>
}

// CHECK-LABEL: func.func @select
// CHECK-SAME: (%[[C:.*]]: tensor<2x2xi1>, %[[A:.*]]: tensor<2x2xui8>, %[[B:.*]]: tensor<2x2xui8>)
// CHECK: linalg.generic
// CHECK-SAME: indexing_maps = [#[[ID2]], #[[ID2]], #[[ID2]], #[[ID2]]]
// CHECK-SAME: ins(%[[C]], %[[A]], %[[B]] : tensor<2x2xi1>, tensor<2x2xui8>, tensor<2x2xui8>)
// CHECK: ^bb0(%[[CI:.*]]: i1, %{{.*}}: ui8, %{{.*}}: ui8, %{{.*}}: ui8):
// CHECK: arith.select %[[CI]], %{{.*}}, %{{.*}} : i8
func.func @select(%c: tensor<2x2xi1>, %a: tensor<2x2xui8>, %b: tensor<2x2xui8>)
    -> tensor<2x2xui8> {
  %0 = dnn.select %c, %a, %b : tensor<2x2xi1>, tensor<2x2xui8>
  return %0 : tensor<2x2xui8>
}

// ONNX Cast from floats: truncation toward zero, x != 0 for bool, extf/truncf
// (f16 <-> bf16 through f32).
// CHECK-LABEL: func.func @cast_float
// CHECK: arith.fptosi %{{.*}} : f32 to i32
// CHECK: %[[U:.*]] = arith.fptoui %{{.*}} : f32 to i8
// CHECK: builtin.unrealized_conversion_cast %[[U]] : i8 to ui8
// CHECK: ^bb0(%[[X:.*]]: f32, %{{.*}}: i1):
// CHECK:   %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:   arith.cmpf une, %[[X]], %[[ZERO]] : f32
// CHECK: arith.extf %{{.*}} : f32 to f64
// CHECK: arith.truncf %{{.*}} : f32 to f16
// CHECK: %[[W:.*]] = arith.extf %{{.*}} : f16 to f32
// CHECK: arith.truncf %[[W]] : f32 to bf16
func.func @cast_float(%x: tensor<4xf32>, %h: tensor<4xf16>)
    -> (tensor<4xi32>, tensor<4xui8>, tensor<4xi1>, tensor<4xf64>,
        tensor<4xf16>, tensor<4xbf16>) {
  %0 = dnn.cast %x : tensor<4xf32> -> tensor<4xi32>
  %1 = dnn.cast %x : tensor<4xf32> -> tensor<4xui8>
  %2 = dnn.cast %x : tensor<4xf32> -> tensor<4xi1>
  %3 = dnn.cast %x : tensor<4xf32> -> tensor<4xf64>
  %4 = dnn.cast %x : tensor<4xf32> -> tensor<4xf16>
  %5 = dnn.cast %h : tensor<4xf16> -> tensor<4xbf16>
  return %0, %1, %2, %3, %4, %5
      : tensor<4xi32>, tensor<4xui8>, tensor<4xi1>, tensor<4xf64>,
        tensor<4xf16>, tensor<4xbf16>
}

// ONNX Cast from integers: extension by the source's signedness, truncation,
// int -> float by signedness, x != 0 for bool, bool -> 0/1.
// CHECK-LABEL: func.func @cast_int
// CHECK: arith.extsi %{{.*}} : i8 to i32
// CHECK: %[[U:.*]] = builtin.unrealized_conversion_cast %{{.*}} : ui8 to i8
// CHECK-NEXT: arith.extui %[[U]] : i8 to i32
// CHECK: arith.trunci %{{.*}} : i64 to i8
// CHECK: ^bb0(%{{.*}}: ui8, %{{.*}}: i8):
// CHECK-NEXT: %[[S:.*]] = builtin.unrealized_conversion_cast %{{.*}} : ui8 to i8
// CHECK-NEXT: linalg.yield %[[S]] : i8
// CHECK: arith.sitofp %{{.*}} : i8 to f32
// CHECK: arith.uitofp %{{.*}} : i8 to f32
// CHECK: ^bb0(%[[W:.*]]: i64, %{{.*}}: i1):
// CHECK:   %[[ZERO:.*]] = arith.constant 0 : i64
// CHECK:   arith.cmpi ne, %[[W]], %[[ZERO]] : i64
// CHECK: arith.uitofp %{{.*}} : i1 to f32
// CHECK: arith.extui %{{.*}} : i1 to i64
func.func @cast_int(%i: tensor<4xi8>, %u: tensor<4xui8>, %w: tensor<4xi64>,
                    %b: tensor<4xi1>)
    -> (tensor<4xi32>, tensor<4xi32>, tensor<4xui8>, tensor<4xi8>,
        tensor<4xf32>, tensor<4xf32>, tensor<4xi1>, tensor<4xf32>,
        tensor<4xi64>) {
  %0 = dnn.cast %i : tensor<4xi8> -> tensor<4xi32>
  %1 = dnn.cast %u : tensor<4xui8> -> tensor<4xi32>
  %2 = dnn.cast %w : tensor<4xi64> -> tensor<4xui8>
  %3 = dnn.cast %u : tensor<4xui8> -> tensor<4xi8>
  %4 = dnn.cast %i : tensor<4xi8> -> tensor<4xf32>
  %5 = dnn.cast %u : tensor<4xui8> -> tensor<4xf32>
  %6 = dnn.cast %w : tensor<4xi64> -> tensor<4xi1>
  %7 = dnn.cast %b : tensor<4xi1> -> tensor<4xf32>
  %8 = dnn.cast %b : tensor<4xi1> -> tensor<4xi64>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8
      : tensor<4xi32>, tensor<4xi32>, tensor<4xui8>, tensor<4xi8>,
        tensor<4xf32>, tensor<4xf32>, tensor<4xi1>, tensor<4xf32>,
        tensor<4xi64>
}

// Dropout: one generic with two results; the ratio is read through a
// scalar map; keep = (splitmix64(seed + (i + 1) * gamma) >> 32) >=
// ratio * 2^32 with i the row-major linear index.
// CHECK-LABEL: func.func @dropout
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf16>, %[[RATIO:.*]]: tensor<f32>)
// CHECK: %[[Y:.*]]:2 = linalg.generic
// CHECK-SAME: indexing_maps = [#[[ID2]], #[[SCALAR]], #[[ID2]], #[[ID2]]]
// CHECK-SAME: iterator_types = ["parallel", "parallel"]
// CHECK-SAME: ins(%[[X]], %[[RATIO]] : tensor<2x3xf16>, tensor<f32>)
// CHECK-SAME: outs(%{{.*}}, %{{.*}} : tensor<2x3xf16>, tensor<2x3xi1>)
// CHECK: ^bb0(%[[IN:.*]]: f16, %[[R:.*]]: f32, %{{.*}}: f16, %{{.*}}: i1):
// CHECK:   %[[I0:.*]] = linalg.index 0 : index
// CHECK:   %[[I1:.*]] = linalg.index 1 : index
// CHECK:   %[[C3:.*]] = arith.constant 3 : index
// CHECK:   %[[ROW:.*]] = arith.muli %[[I0]], %[[C3]] : index
// CHECK:   %[[LIN:.*]] = arith.addi %[[ROW]], %[[I1]] : index
// CHECK:   %[[CTR:.*]] = arith.index_castui %[[LIN]] : index to i64
// CHECK:   arith.constant -7046029254386353131 : i64
// CHECK:   %[[SEED:.*]] = arith.constant 5 : i64
// CHECK:   arith.addi %[[SEED]], %{{.*}} : i64
// CHECK:   arith.constant -4658895280553007687 : i64
// CHECK:   arith.constant -7723592293110705685 : i64
// CHECK:   %[[C32:.*]] = arith.constant 32 : i64
// CHECK:   %[[HI:.*]] = arith.shrui %{{.*}}, %[[C32]] : i64
// CHECK:   %[[R64:.*]] = arith.extf %[[R]] : f32 to f64
// CHECK:   %[[TWO32:.*]] = arith.constant 0x41F0000000000000 : f64
// CHECK:   %[[SCALED:.*]] = arith.mulf %[[R64]], %[[TWO32]] : f64
// CHECK:   %[[T:.*]] = arith.fptosi %[[SCALED]] : f64 to i64
// CHECK:   %[[KEEP:.*]] = arith.cmpi sge, %[[HI]], %[[T]] : i64
// CHECK:   %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK:   %[[P:.*]] = arith.subf %[[ONE]], %[[R]] : f32
// CHECK:   %[[P16:.*]] = arith.truncf %[[P]] : f32 to f16
// CHECK:   %[[DIV:.*]] = arith.divf %[[IN]], %[[P16]] : f16
// CHECK:   %[[ZERO:.*]] = arith.constant 0.000000e+00 : f16
// CHECK:   %[[SEL:.*]] = arith.select %[[KEEP]], %[[DIV]], %[[ZERO]] : f16
// CHECK:   linalg.yield %[[SEL]], %[[KEEP]] : f16, i1
// CHECK: return %[[Y]]#0, %[[Y]]#1
func.func @dropout(%x: tensor<2x3xf16>, %r: tensor<f32>)
    -> (tensor<2x3xf16>, tensor<2x3xi1>) {
  %y, %m = dnn.dropout %x, %r seed = 5
      : (tensor<2x3xf16>, tensor<f32>) -> (tensor<2x3xf16>, tensor<2x3xi1>)
  return %y, %m : tensor<2x3xf16>, tensor<2x3xi1>
}

// A chain stays a chain of generics on tensors (fused later by
// linalg-fuse-elementwise-ops).
// CHECK-LABEL: func.func @chain
// CHECK: %[[ADD:.*]] = linalg.generic
// CHECK: arith.addf
// CHECK: linalg.generic
// CHECK-SAME: ins(%[[ADD]] : tensor<2x3xf32>)
// CHECK: arith.maximumf
func.func @chain(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = dnn.add %a, %b : tensor<2x3xf32>
  %1 = dnn.relu %0 : tensor<2x3xf32>
  return %1 : tensor<2x3xf32>
}
