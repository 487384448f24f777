// Runs the elementwise lowering end to end on the CPU and checks the printed
// values. Expected values are onnxruntime's for the same ONNX ops (printed
// with 6 significant digits).

// REQUIRES: mlir-runner
// DEFINE: %{to_llvm} = --one-shot-bufferize="bufferize-function-boundaries" \
// DEFINE:   --convert-linalg-to-loops --expand-strided-metadata --lower-affine \
// DEFINE:   --convert-scf-to-cf --convert-math-to-llvm --convert-math-to-libm \
// DEFINE:   --finalize-memref-to-llvm --convert-arith-to-llvm \
// DEFINE:   --convert-cf-to-llvm --convert-func-to-llvm \
// DEFINE:   --reconcile-unrealized-casts
// DEFINE: %{run} = mlir-runner -e main -entry-point-result=void \
// DEFINE:   -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils

// With elementwise fusion and without it.
// RUN: dnnc-opt %s --convert-dnn-to-linalg \
// RUN: | mlir-opt --linalg-fuse-elementwise-ops %{to_llvm} | %{run} \
// RUN: | FileCheck %s
// RUN: dnnc-opt %s --convert-dnn-to-linalg | mlir-opt %{to_llvm} | %{run} \
// RUN: | FileCheck %s

func.func private @printMemrefF32(tensor<*xf32>)
func.func private @printMemrefI64(tensor<*xi64>)

func.func @print_f32(%t: tensor<8xf32>) {
  %u = tensor.cast %t : tensor<8xf32> to tensor<*xf32>
  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()
  return
}

func.func @print_i64(%t: tensor<8xi64>) {
  %u = tensor.cast %t : tensor<8xi64> to tensor<*xi64>
  call @printMemrefI64(%u) : (tensor<*xi64>) -> ()
  return
}

// The computations take their inputs as arguments so that the dnn folders
// cannot evaluate them at compile time.

func.func @float_unary(%x: tensor<8xf32>, %p: tensor<8xf32>)
    -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>,
        tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>,
        tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>,
        tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %relu = dnn.relu %x : tensor<8xf32>
  %tanh = dnn.tanh %x : tensor<8xf32>
  %sigmoid = dnn.sigmoid %x : tensor<8xf32>
  %erf = dnn.erf %x : tensor<8xf32>
  %exp = dnn.exp %x : tensor<8xf32>
  %log = dnn.log %p : tensor<8xf32>
  %sqrt = dnn.sqrt %p : tensor<8xf32>
  %recip = dnn.reciprocal %x : tensor<8xf32>
  %floor = dnn.floor %x : tensor<8xf32>
  %ceil = dnn.ceil %x : tensor<8xf32>
  %neg = dnn.neg %x : tensor<8xf32>
  %abs = dnn.abs %x : tensor<8xf32>
  %gelu = dnn.gelu %x approximation = <none> : tensor<8xf32>
  %gelu_tanh = dnn.gelu %x approximation = <tanh> : tensor<8xf32>
  %leaky = dnn.leaky_relu %x alpha = 0.1 : tensor<8xf32>
  return %relu, %tanh, %sigmoid, %erf, %exp, %log, %sqrt, %recip, %floor,
         %ceil, %neg, %abs, %gelu, %gelu_tanh, %leaky
      : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>,
        tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>,
        tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>,
        tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}

func.func @float_binary(%a: tensor<8xf32>, %b: tensor<8xf32>)
    -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>,
        tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %add = dnn.add %a, %b : tensor<8xf32>
  %sub = dnn.sub %a, %b : tensor<8xf32>
  %mul = dnn.mul %a, %b : tensor<8xf32>
  %div = dnn.div %a, %b : tensor<8xf32>
  %pow = dnn.pow %a, %b : tensor<8xf32>
  %max = dnn.max %a, %b : tensor<8xf32>
  %min = dnn.min %a, %b : tensor<8xf32>
  return %add, %sub, %mul, %div, %pow, %max, %min
      : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>,
        tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}

// Comparisons (NaN compares false), is_nan and select; booleans printed as
// i64.
func.func @compare_select(%a: tensor<8xf32>, %b: tensor<8xf32>)
    -> (tensor<8xi64>, tensor<8xi64>, tensor<8xi64>, tensor<8xi64>,
        tensor<8xi64>, tensor<8xf32>, tensor<8xi64>) {
  %eq = dnn.equal %a, %b : tensor<8xf32> -> tensor<8xi1>
  %lt = dnn.less %a, %b : tensor<8xf32> -> tensor<8xi1>
  %le = dnn.less_equal %a, %b : tensor<8xf32> -> tensor<8xi1>
  %gt = dnn.greater %a, %b : tensor<8xf32> -> tensor<8xi1>
  %ge = dnn.greater_equal %a, %b : tensor<8xf32> -> tensor<8xi1>
  %sel = dnn.select %lt, %a, %b : tensor<8xi1>, tensor<8xf32>
  %0 = dnn.cast %eq : tensor<8xi1> -> tensor<8xi64>
  %1 = dnn.cast %lt : tensor<8xi1> -> tensor<8xi64>
  %2 = dnn.cast %le : tensor<8xi1> -> tensor<8xi64>
  %3 = dnn.cast %gt : tensor<8xi1> -> tensor<8xi64>
  %4 = dnn.cast %ge : tensor<8xi1> -> tensor<8xi64>
  %nan = dnn.is_nan %b : tensor<8xf32> -> tensor<8xi1>
  %5 = dnn.cast %nan : tensor<8xi1> -> tensor<8xi64>
  return %0, %1, %2, %3, %4, %sel, %5
      : tensor<8xi64>, tensor<8xi64>, tensor<8xi64>, tensor<8xi64>,
        tensor<8xi64>, tensor<8xf32>, tensor<8xi64>
}

// Signed (i32) and unsigned (ui8) integer arithmetic and comparisons.
func.func @int_ops(%a: tensor<8xi32>, %b: tensor<8xi32>, %ua: tensor<8xui8>,
                   %ub: tensor<8xui8>)
    -> (tensor<8xi64>, tensor<8xi64>, tensor<8xi64>, tensor<8xi64>,
        tensor<8xi64>, tensor<8xi64>, tensor<8xi64>, tensor<8xi64>,
        tensor<8xi64>, tensor<8xi64>, tensor<8xi64>) {
  %div = dnn.div %a, %b : tensor<8xi32>
  %max = dnn.max %a, %b : tensor<8xi32>
  %abs = dnn.abs %a : tensor<8xi32>
  %neg = dnn.neg %a : tensor<8xi32>
  %lt = dnn.less %a, %b : tensor<8xi32> -> tensor<8xi1>
  %udiv = dnn.div %ua, %ub : tensor<8xui8>
  %umax = dnn.max %ua, %ub : tensor<8xui8>
  %umin = dnn.min %ua, %ub : tensor<8xui8>
  %usub = dnn.sub %ua, %ub : tensor<8xui8>
  %uabs = dnn.abs %ua : tensor<8xui8>
  %ult = dnn.less %ua, %ub : tensor<8xui8> -> tensor<8xi1>
  %0 = dnn.cast %div : tensor<8xi32> -> tensor<8xi64>
  %1 = dnn.cast %max : tensor<8xi32> -> tensor<8xi64>
  %2 = dnn.cast %abs : tensor<8xi32> -> tensor<8xi64>
  %3 = dnn.cast %neg : tensor<8xi32> -> tensor<8xi64>
  %4 = dnn.cast %lt : tensor<8xi1> -> tensor<8xi64>
  %5 = dnn.cast %udiv : tensor<8xui8> -> tensor<8xi64>
  %6 = dnn.cast %umax : tensor<8xui8> -> tensor<8xi64>
  %7 = dnn.cast %umin : tensor<8xui8> -> tensor<8xi64>
  %8 = dnn.cast %usub : tensor<8xui8> -> tensor<8xi64>
  %9 = dnn.cast %uabs : tensor<8xui8> -> tensor<8xi64>
  %10 = dnn.cast %ult : tensor<8xi1> -> tensor<8xi64>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10
      : tensor<8xi64>, tensor<8xi64>, tensor<8xi64>, tensor<8xi64>,
        tensor<8xi64>, tensor<8xi64>, tensor<8xi64>, tensor<8xi64>,
        tensor<8xi64>, tensor<8xi64>, tensor<8xi64>
}

// Rounding and the trigonometric and hyperbolic functions (acosh, asin, acos
// and atanh on inputs of their domain).
func.func @trig(%x: tensor<8xf32>, %s: tensor<8xf32>, %h: tensor<8xf32>)
    -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>,
        tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>,
        tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %0 = dnn.round %x : tensor<8xf32>
  %1 = dnn.sin %x : tensor<8xf32>
  %2 = dnn.cos %x : tensor<8xf32>
  %3 = dnn.tan %x : tensor<8xf32>
  %4 = dnn.atan %x : tensor<8xf32>
  %5 = dnn.sinh %x : tensor<8xf32>
  %6 = dnn.cosh %x : tensor<8xf32>
  %7 = dnn.asinh %x : tensor<8xf32>
  %8 = dnn.asin %s : tensor<8xf32>
  %9 = dnn.acos %s : tensor<8xf32>
  %10 = dnn.atanh %s : tensor<8xf32>
  %11 = dnn.acosh %h : tensor<8xf32>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11
      : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>,
        tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>,
        tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}

// Remainders (truncated and floored) of i32 and f32, with the divisors an
// integer `%` traps on (0, and -1 under INT_MIN), and shifts of ui8 and i32,
// by the bit width or more and (signed) by negative amounts.
func.func @rem_mod_shift(%a: tensor<8xi32>, %b: tensor<8xi32>,
                         %fa: tensor<8xf32>, %fb: tensor<8xf32>,
                         %ua: tensor<8xui8>, %ub: tensor<8xui8>,
                         %sa: tensor<8xi32>, %sb: tensor<8xi32>)
    -> (tensor<8xi64>, tensor<8xi64>, tensor<8xf32>, tensor<8xf32>,
        tensor<8xi64>, tensor<8xi64>, tensor<8xi64>, tensor<8xi64>) {
  %rem = dnn.rem %a, %b : tensor<8xi32>
  %mod = dnn.mod %a, %b : tensor<8xi32>
  %frem = dnn.rem %fa, %fb : tensor<8xf32>
  %fmod = dnn.mod %fa, %fb : tensor<8xf32>
  %ushl = dnn.shift_left %ua, %ub : tensor<8xui8>
  %ushr = dnn.shift_right %ua, %ub : tensor<8xui8>
  %shl = dnn.shift_left %sa, %sb : tensor<8xi32>
  %shr = dnn.shift_right %sa, %sb : tensor<8xi32>
  %0 = dnn.cast %rem : tensor<8xi32> -> tensor<8xi64>
  %1 = dnn.cast %mod : tensor<8xi32> -> tensor<8xi64>
  %2 = dnn.cast %ushl : tensor<8xui8> -> tensor<8xi64>
  %3 = dnn.cast %ushr : tensor<8xui8> -> tensor<8xi64>
  %4 = dnn.cast %shl : tensor<8xi32> -> tensor<8xi64>
  %5 = dnn.cast %shr : tensor<8xi32> -> tensor<8xi64>
  return %0, %1, %frem, %fmod, %2, %3, %4, %5
      : tensor<8xi64>, tensor<8xi64>, tensor<8xf32>, tensor<8xf32>,
        tensor<8xi64>, tensor<8xi64>, tensor<8xi64>, tensor<8xi64>
}

// Boolean logic.
func.func @logic(%p: tensor<8xi1>, %q: tensor<8xi1>)
    -> (tensor<8xi64>, tensor<8xi64>, tensor<8xi64>, tensor<8xi64>) {
  %and = dnn.and %p, %q : tensor<8xi1>
  %or = dnn.or %p, %q : tensor<8xi1>
  %xor = dnn.xor %p, %q : tensor<8xi1>
  %not = dnn.not %p : tensor<8xi1>
  %0 = dnn.cast %and : tensor<8xi1> -> tensor<8xi64>
  %1 = dnn.cast %or : tensor<8xi1> -> tensor<8xi64>
  %2 = dnn.cast %xor : tensor<8xi1> -> tensor<8xi64>
  %3 = dnn.cast %not : tensor<8xi1> -> tensor<8xi64>
  return %0, %1, %2, %3
      : tensor<8xi64>, tensor<8xi64>, tensor<8xi64>, tensor<8xi64>
}

// ONNX Cast between every kind of element type.
func.func @casts(%x: tensor<8xf32>, %i: tensor<8xi8>, %u: tensor<8xui8>,
                 %w: tensor<8xi64>)
    -> (tensor<8xi64>, tensor<8xi64>, tensor<8xf32>, tensor<8xf32>,
        tensor<8xf32>, tensor<8xf32>, tensor<8xi64>, tensor<8xi64>,
        tensor<8xi64>, tensor<8xi64>, tensor<8xf32>, tensor<8xi64>,
        tensor<8xf32>) {
  // float -> int truncates toward zero; float -> bool is x != 0.
  %fi = dnn.cast %x : tensor<8xf32> -> tensor<8xi32>
  %fb = dnn.cast %x : tensor<8xf32> -> tensor<8xi1>
  %0 = dnn.cast %fi : tensor<8xi32> -> tensor<8xi64>
  %1 = dnn.cast %fb : tensor<8xi1> -> tensor<8xi64>
  // float <-> float rounds to the narrower type.
  %h = dnn.cast %x : tensor<8xf32> -> tensor<8xf16>
  %2 = dnn.cast %h : tensor<8xf16> -> tensor<8xf32>
  %bf = dnn.cast %x : tensor<8xf32> -> tensor<8xbf16>
  %3 = dnn.cast %bf : tensor<8xbf16> -> tensor<8xf32>
  %hb = dnn.cast %h : tensor<8xf16> -> tensor<8xbf16>
  %4 = dnn.cast %hb : tensor<8xbf16> -> tensor<8xf32>
  %xd = dnn.cast %x : tensor<8xf32> -> tensor<8xf64>
  %5 = dnn.cast %xd : tensor<8xf64> -> tensor<8xf32>
  // int -> int: sign-extends signed, zero-extends unsigned, truncates.
  %6 = dnn.cast %i : tensor<8xi8> -> tensor<8xi64>
  %7 = dnn.cast %u : tensor<8xui8> -> tensor<8xi64>
  %wu = dnn.cast %w : tensor<8xi64> -> tensor<8xui8>
  %8 = dnn.cast %wu : tensor<8xui8> -> tensor<8xi64>
  %iu = dnn.cast %i : tensor<8xi8> -> tensor<8xui16>
  %9 = dnn.cast %iu : tensor<8xui16> -> tensor<8xi64>
  // int -> float by signedness; int -> bool is x != 0; float -> unsigned.
  %10 = dnn.cast %u : tensor<8xui8> -> tensor<8xf32>
  %ib = dnn.cast %i : tensor<8xi8> -> tensor<8xi1>
  %11 = dnn.cast %ib : tensor<8xi1> -> tensor<8xi64>
  %12 = dnn.cast %i : tensor<8xi8> -> tensor<8xf32>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12
      : tensor<8xi64>, tensor<8xi64>, tensor<8xf32>, tensor<8xf32>,
        tensor<8xf32>, tensor<8xf32>, tensor<8xi64>, tensor<8xi64>,
        tensor<8xi64>, tensor<8xi64>, tensor<8xf32>, tensor<8xi64>,
        tensor<8xf32>
}

// Dropout: ratio 0 is the identity; ratio 0.5 keeps the elements the
// SplitMix64 mask documented in Elementwise.cpp picks for seed 42, doubled.
func.func @dropout(%x: tensor<2x4xf32>, %zero: tensor<f32>, %half: tensor<f32>)
    -> (tensor<2x4xf32>, tensor<2x4xi64>, tensor<2x4xf32>, tensor<2x4xi64>) {
  %y0, %m0 = dnn.dropout %x, %zero seed = 42
      : (tensor<2x4xf32>, tensor<f32>) -> (tensor<2x4xf32>, tensor<2x4xi1>)
  %y1, %m1 = dnn.dropout %x, %half seed = 42
      : (tensor<2x4xf32>, tensor<f32>) -> (tensor<2x4xf32>, tensor<2x4xi1>)
  %0 = dnn.cast %m0 : tensor<2x4xi1> -> tensor<2x4xi64>
  %1 = dnn.cast %m1 : tensor<2x4xi1> -> tensor<2x4xi64>
  return %y0, %0, %y1, %1
      : tensor<2x4xf32>, tensor<2x4xi64>, tensor<2x4xf32>, tensor<2x4xi64>
}

func.func @main() {
  %x = arith.constant dense<[-2.5, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0, 3.7]>
      : tensor<8xf32>
  %p = arith.constant dense<[0.001, 0.25, 0.5, 1.0, 2.0, 4.0, 10.0, 100.0]>
      : tensor<8xf32>
  %r:15 = call @float_unary(%x, %p) : (tensor<8xf32>, tensor<8xf32>)
      -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>,
          tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>,
          tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>,
          tensor<8xf32>, tensor<8xf32>, tensor<8xf32>)
  // relu: CHECK: [0, 0, 0, 0, 0.5, 1, 2, 3.7]
  call @print_f32(%r#0) : (tensor<8xf32>) -> ()
  // tanh: CHECK: [-0.986614, -0.761594, -0.462117, 0, 0.462117, 0.761594, 0.964028, 0.998778]
  call @print_f32(%r#1) : (tensor<8xf32>) -> ()
  // sigmoid: CHECK: [0.0758582, 0.268941, 0.377541, 0.5, 0.622459, 0.731059, 0.880797, 0.975873]
  call @print_f32(%r#2) : (tensor<8xf32>) -> ()
  // erf: CHECK: [-0.999593, -0.842701, -0.5205, 0, 0.5205, 0.842701, 0.995322, 1]
  call @print_f32(%r#3) : (tensor<8xf32>) -> ()
  // exp: CHECK: [0.082085, 0.367879, 0.606531, 1, 1.64872, 2.71828, 7.38906, 40.4473]
  call @print_f32(%r#4) : (tensor<8xf32>) -> ()
  // log: CHECK: [-6.90776, -1.38629, -0.693147, 0, 0.693147, 1.38629, 2.30259, 4.60517]
  call @print_f32(%r#5) : (tensor<8xf32>) -> ()
  // sqrt: CHECK: [0.0316228, 0.5, 0.707107, 1, 1.41421, 2, 3.16228, 10]
  call @print_f32(%r#6) : (tensor<8xf32>) -> ()
  // reciprocal: CHECK: [-0.4, -1, -2, inf, 2, 1, 0.5, 0.27027]
  call @print_f32(%r#7) : (tensor<8xf32>) -> ()
  // floor: CHECK: [-3, -1, -1, 0, 0, 1, 2, 3]
  call @print_f32(%r#8) : (tensor<8xf32>) -> ()
  // ceil: CHECK: [-2, -1, -0, 0, 1, 1, 2, 4]
  call @print_f32(%r#9) : (tensor<8xf32>) -> ()
  // neg: CHECK: [2.5, 1, 0.5, -0, -0.5, -1, -2, -3.7]
  call @print_f32(%r#10) : (tensor<8xf32>) -> ()
  // abs: CHECK: [2.5, 1, 0.5, 0, 0.5, 1, 2, 3.7]
  call @print_f32(%r#11) : (tensor<8xf32>) -> ()
  // gelu: CHECK: [-0.015524{{[12]}}, -0.158655, -0.154269, 0, 0.345731, 0.841345, 1.9545, 3.6996]
  call @print_f32(%r#12) : (tensor<8xf32>) -> ()
  // gelu tanh: CHECK: [-0.0150843, -0.158808, -0.154286, 0, 0.345714, 0.841192, 1.9546, 3.69973]
  call @print_f32(%r#13) : (tensor<8xf32>) -> ()
  // leaky_relu alpha 0.1: CHECK: [-0.25, -0.1, -0.05, 0, 0.5, 1, 2, 3.7]
  call @print_f32(%r#14) : (tensor<8xf32>) -> ()

  %a = arith.constant dense<[1.5, -2.0, 3.0, 0.0, 2.0, 0x7FC00000, 4.0, -1.0]>
      : tensor<8xf32>
  %b = arith.constant dense<[2.0, 0.5, -4.0, 0.0, 3.0, 1.0, 0.5, 1.0]>
      : tensor<8xf32>
  %s:7 = call @float_binary(%a, %b) : (tensor<8xf32>, tensor<8xf32>)
      -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>,
          tensor<8xf32>, tensor<8xf32>, tensor<8xf32>)
  // add: CHECK: [3.5, -1.5, -1, 0, 5, {{-?}}nan, 4.5, 0]
  call @print_f32(%s#0) : (tensor<8xf32>) -> ()
  // sub: CHECK: [-0.5, -2.5, 7, 0, -1, {{-?}}nan, 3.5, -2]
  call @print_f32(%s#1) : (tensor<8xf32>) -> ()
  // mul: CHECK: [3, -1, -12, 0, 6, {{-?}}nan, 2, -1]
  call @print_f32(%s#2) : (tensor<8xf32>) -> ()
  // div: CHECK: [0.75, -4, -0.75, {{-?}}nan, 0.666667, {{-?}}nan, 8, -1]
  call @print_f32(%s#3) : (tensor<8xf32>) -> ()
  // pow: CHECK: [2.25, {{-?}}nan, 0.0123457, 1, 8, {{-?}}nan, 2, -1]
  call @print_f32(%s#4) : (tensor<8xf32>) -> ()
  // max (NaN propagates): CHECK: [2, 0.5, 3, 0, 3, {{-?}}nan, 4, 1]
  call @print_f32(%s#5) : (tensor<8xf32>) -> ()
  // min (NaN propagates): CHECK: [1.5, -2, -4, 0, 2, {{-?}}nan, 0.5, -1]
  call @print_f32(%s#6) : (tensor<8xf32>) -> ()

  %ca = arith.constant dense<[1.0, 2.0, 3.0, 0x7FC00000, -1.0, 5.0, 0.0, 7.0]>
      : tensor<8xf32>
  %cb = arith.constant dense<[1.0, 3.0, 2.0, 1.0, -1.0, 0x7FC00000, -0.0, 8.0]>
      : tensor<8xf32>
  %c:7 = call @compare_select(%ca, %cb) : (tensor<8xf32>, tensor<8xf32>)
      -> (tensor<8xi64>, tensor<8xi64>, tensor<8xi64>, tensor<8xi64>,
          tensor<8xi64>, tensor<8xf32>, tensor<8xi64>)
  // equal: CHECK: [1, 0, 0, 0, 1, 0, 1, 0]
  call @print_i64(%c#0) : (tensor<8xi64>) -> ()
  // less: CHECK: [0, 1, 0, 0, 0, 0, 0, 1]
  call @print_i64(%c#1) : (tensor<8xi64>) -> ()
  // less_equal: CHECK: [1, 1, 0, 0, 1, 0, 1, 1]
  call @print_i64(%c#2) : (tensor<8xi64>) -> ()
  // greater: CHECK: [0, 0, 1, 0, 0, 0, 0, 0]
  call @print_i64(%c#3) : (tensor<8xi64>) -> ()
  // greater_equal: CHECK: [1, 0, 1, 0, 1, 0, 1, 0]
  call @print_i64(%c#4) : (tensor<8xi64>) -> ()
  // select(less, a, b): CHECK: [1, 2, 2, 1, -1, {{-?}}nan, -0, 7]
  call @print_f32(%c#5) : (tensor<8xf32>) -> ()
  // is_nan(b): CHECK: [0, 0, 0, 0, 0, 1, 0, 0]
  call @print_i64(%c#6) : (tensor<8xi64>) -> ()

  %ia = arith.constant dense<[-7, 7, -7, 7, 0, -128, 100, -1]> : tensor<8xi32>
  %ib = arith.constant dense<[2, -2, -2, 2, 5, 3, -100, 1]> : tensor<8xi32>
  %ua = arith.constant dense<[200, 7, 255, 0, 100, 128, 1, 30]> : tensor<8xui8>
  %ub = arith.constant dense<[3, 2, 1, 5, 200, 127, 2, 30]> : tensor<8xui8>
  %n:11 = call @int_ops(%ia, %ib, %ua, %ub)
      : (tensor<8xi32>, tensor<8xi32>, tensor<8xui8>, tensor<8xui8>)
      -> (tensor<8xi64>, tensor<8xi64>, tensor<8xi64>, tensor<8xi64>,
          tensor<8xi64>, tensor<8xi64>, tensor<8xi64>, tensor<8xi64>,
          tensor<8xi64>, tensor<8xi64>, tensor<8xi64>)
  // i32 div (truncating): CHECK: [-3, -3, 3, 3, 0, -42, -1, -1]
  call @print_i64(%n#0) : (tensor<8xi64>) -> ()
  // i32 max: CHECK: [2, 7, -2, 7, 5, 3, 100, 1]
  call @print_i64(%n#1) : (tensor<8xi64>) -> ()
  // i32 abs: CHECK: [7, 7, 7, 7, 0, 128, 100, 1]
  call @print_i64(%n#2) : (tensor<8xi64>) -> ()
  // i32 neg: CHECK: [7, -7, 7, -7, 0, 128, -100, 1]
  call @print_i64(%n#3) : (tensor<8xi64>) -> ()
  // i32 less: CHECK: [1, 0, 1, 0, 1, 1, 0, 1]
  call @print_i64(%n#4) : (tensor<8xi64>) -> ()
  // ui8 div: CHECK: [66, 3, 255, 0, 0, 1, 0, 1]
  call @print_i64(%n#5) : (tensor<8xi64>) -> ()
  // ui8 max: CHECK: [200, 7, 255, 5, 200, 128, 2, 30]
  call @print_i64(%n#6) : (tensor<8xi64>) -> ()
  // ui8 min: CHECK: [3, 2, 1, 0, 100, 127, 1, 30]
  call @print_i64(%n#7) : (tensor<8xi64>) -> ()
  // ui8 sub (wraps): CHECK: [197, 5, 254, 251, 156, 1, 255, 0]
  call @print_i64(%n#8) : (tensor<8xi64>) -> ()
  // ui8 abs: CHECK: [200, 7, 255, 0, 100, 128, 1, 30]
  call @print_i64(%n#9) : (tensor<8xi64>) -> ()
  // ui8 less: CHECK: [0, 0, 0, 1, 1, 0, 1, 0]
  call @print_i64(%n#10) : (tensor<8xi64>) -> ()

  %ts = arith.constant dense<[-0.9, -0.5, -0.25, 0.0, 0.25, 0.5, 0.75, 0.9]>
      : tensor<8xf32>
  %th = arith.constant dense<[1.0, 1.25, 1.5, 2.0, 3.0, 5.0, 10.0, 100.0]>
      : tensor<8xf32>
  %t:12 = call @trig(%x, %ts, %th)
      : (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>)
      -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>,
          tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>,
          tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>)
  // round (halves to even): CHECK: [-2, -1, -0, 0, 0, 1, 2, 4]
  call @print_f32(%t#0) : (tensor<8xf32>) -> ()
  // sin: CHECK: [-0.598472, -0.841471, -0.479426, 0, 0.479426, 0.841471, 0.909297, -0.529836]
  call @print_f32(%t#1) : (tensor<8xf32>) -> ()
  // cos: CHECK: [-0.801144, 0.540302, 0.877583, 1, 0.877583, 0.540302, -0.416147, -0.8481]
  call @print_f32(%t#2) : (tensor<8xf32>) -> ()
  // tan: CHECK: [0.747022, -1.55741, -0.546302, 0, 0.546302, 1.55741, -2.18504, 0.624733]
  call @print_f32(%t#3) : (tensor<8xf32>) -> ()
  // atan: CHECK: [-1.19029, -0.785398, -0.463648, 0, 0.463648, 0.785398, 1.10715, 1.30683]
  call @print_f32(%t#4) : (tensor<8xf32>) -> ()
  // sinh: CHECK: [-6.0502, -1.1752, -0.521095, 0, 0.521095, 1.1752, 3.62686, 20.2113]
  call @print_f32(%t#5) : (tensor<8xf32>) -> ()
  // cosh: CHECK: [6.13229, 1.54308, 1.12763, 1, 1.12763, 1.54308, 3.7622, 20.236]
  call @print_f32(%t#6) : (tensor<8xf32>) -> ()
  // asinh: CHECK: [-1.64723, -0.881374, -0.481212, 0, 0.481212, 0.881374, 1.44364, 2.01926]
  call @print_f32(%t#7) : (tensor<8xf32>) -> ()
  // asin: CHECK: [-1.11977, -0.523599, -0.25268, 0, 0.25268, 0.523599, 0.848062, 1.11977]
  call @print_f32(%t#8) : (tensor<8xf32>) -> ()
  // acos: CHECK: [2.69057, 2.0944, 1.82348, 1.5708, 1.31812, 1.0472, 0.722734, 0.451027]
  call @print_f32(%t#9) : (tensor<8xf32>) -> ()
  // atanh: CHECK: [-1.47222, -0.549306, -0.255413, 0, 0.255413, 0.549306, 0.972955, 1.47222]
  call @print_f32(%t#10) : (tensor<8xf32>) -> ()
  // acosh: CHECK: [0, 0.693147, 0.962424, 1.31696, 1.76275, 2.29243, 2.99322, 5.29829]
  call @print_f32(%t#11) : (tensor<8xf32>) -> ()

  %ra = arith.constant dense<[-7, 7, -7, 7, 0, -2147483648, 5, -5]>
      : tensor<8xi32>
  %rb = arith.constant dense<[2, -2, -2, 2, 5, -1, 0, 3]> : tensor<8xi32>
  %rfa = arith.constant dense<[-7.5, 7.5, -7.5, 7.5, 0.0, 1.0, 5.25, -5.25]>
      : tensor<8xf32>
  %rfb = arith.constant dense<[2.0, -2.0, -2.0, 2.0, 5.0, 0.75, 0.5, 3.0]>
      : tensor<8xf32>
  %rua = arith.constant dense<[1, 255, 128, 3, 7, 200, 1, 255]> : tensor<8xui8>
  %rub = arith.constant dense<[1, 1, 7, 8, 0, 3, 9, 255]> : tensor<8xui8>
  %rsa = arith.constant dense<[-8, 8, -1, 16, -100, 5, -7, 7]> : tensor<8xi32>
  %rsb = arith.constant dense<[1, 2, 31, 32, 40, 0, -1, -1]> : tensor<8xi32>
  %m:8 = call @rem_mod_shift(%ra, %rb, %rfa, %rfb, %rua, %rub, %rsa, %rsb)
      : (tensor<8xi32>, tensor<8xi32>, tensor<8xf32>, tensor<8xf32>,
         tensor<8xui8>, tensor<8xui8>, tensor<8xi32>, tensor<8xi32>)
      -> (tensor<8xi64>, tensor<8xi64>, tensor<8xf32>, tensor<8xf32>,
          tensor<8xi64>, tensor<8xi64>, tensor<8xi64>, tensor<8xi64>)
  // i32 rem (sign of lhs; by 0: 0): CHECK: [-1, 1, -1, 1, 0, 0, 0, -2]
  call @print_i64(%m#0) : (tensor<8xi64>) -> ()
  // i32 mod (sign of rhs; by 0: 0): CHECK: [1, -1, -1, 1, 0, 0, 0, 1]
  call @print_i64(%m#1) : (tensor<8xi64>) -> ()
  // f32 rem (fmod): CHECK: [-1.5, 1.5, -1.5, 1.5, 0, 0.25, 0.25, -2.25]
  call @print_f32(%m#2) : (tensor<8xf32>) -> ()
  // f32 mod (floored): CHECK: [0.5, -0.5, -1.5, 1.5, 0, 0.25, 0.25, 0.75]
  call @print_f32(%m#3) : (tensor<8xf32>) -> ()
  // ui8 shift_left (wraps; 8 or more: 0): CHECK: [2, 254, 0, 0, 7, 64, 0, 0]
  call @print_i64(%m#4) : (tensor<8xi64>) -> ()
  // ui8 shift_right (logical): CHECK: [0, 127, 1, 0, 7, 25, 0, 0]
  call @print_i64(%m#5) : (tensor<8xi64>) -> ()
  // i32 shift_left: CHECK: [-16, 32, -2147483648, 0, 0, 5, 0, 0]
  call @print_i64(%m#6) : (tensor<8xi64>) -> ()
  // i32 shift_right (arithmetic): CHECK: [-4, 2, -1, 0, -1, 5, -1, 0]
  call @print_i64(%m#7) : (tensor<8xi64>) -> ()

  %lp = arith.constant dense<[true, true, false, false, true, false, true, false]>
      : tensor<8xi1>
  %lq = arith.constant dense<[true, false, true, false, true, true, false, false]>
      : tensor<8xi1>
  %l:4 = call @logic(%lp, %lq) : (tensor<8xi1>, tensor<8xi1>)
      -> (tensor<8xi64>, tensor<8xi64>, tensor<8xi64>, tensor<8xi64>)
  // and: CHECK: [1, 0, 0, 0, 1, 0, 0, 0]
  call @print_i64(%l#0) : (tensor<8xi64>) -> ()
  // or: CHECK: [1, 1, 1, 0, 1, 1, 1, 0]
  call @print_i64(%l#1) : (tensor<8xi64>) -> ()
  // xor: CHECK: [0, 1, 1, 0, 0, 1, 1, 0]
  call @print_i64(%l#2) : (tensor<8xi64>) -> ()
  // not: CHECK: [0, 0, 1, 1, 0, 1, 0, 1]
  call @print_i64(%l#3) : (tensor<8xi64>) -> ()

  %cx = arith.constant dense<[-2.7, 2.7, -0.5, 0.0, 0.1, 65519.0, 1.0e-8, 3.3]>
      : tensor<8xf32>
  %ci = arith.constant dense<[-1, 0, 1, -128, 127, 2, -2, 64]> : tensor<8xi8>
  %cu = arith.constant dense<[0, 1, 127, 128, 200, 255, 2, 64]> : tensor<8xui8>
  %cw = arith.constant dense<[300, -1, 255, 256, 0, 1, -256, 1000]> : tensor<8xi64>
  %k:13 = call @casts(%cx, %ci, %cu, %cw)
      : (tensor<8xf32>, tensor<8xi8>, tensor<8xui8>, tensor<8xi64>)
      -> (tensor<8xi64>, tensor<8xi64>, tensor<8xf32>, tensor<8xf32>,
          tensor<8xf32>, tensor<8xf32>, tensor<8xi64>, tensor<8xi64>,
          tensor<8xi64>, tensor<8xi64>, tensor<8xf32>, tensor<8xi64>,
          tensor<8xf32>)
  // f32 -> i32: CHECK: [-2, 2, 0, 0, 0, 65519, 0, 3]
  call @print_i64(%k#0) : (tensor<8xi64>) -> ()
  // f32 -> i1: CHECK: [1, 1, 1, 0, 1, 1, 1, 1]
  call @print_i64(%k#1) : (tensor<8xi64>) -> ()
  // f32 -> f16 -> f32: CHECK: [-2.69922, 2.69922, -0.5, 0, 0.0999756, 65504, 0, 3.30078]
  call @print_f32(%k#2) : (tensor<8xf32>) -> ()
  // f32 -> bf16 -> f32: CHECK: [-2.70312, 2.70312, -0.5, 0, 0.100098, 65536, 1.00117e-08, 3.29688]
  call @print_f32(%k#3) : (tensor<8xf32>) -> ()
  // f32 -> f16 -> bf16 -> f32: CHECK: [-2.70312, 2.70312, -0.5, 0, 0.100098, 65536, 0, 3.29688]
  call @print_f32(%k#4) : (tensor<8xf32>) -> ()
  // f32 -> f64 -> f32: CHECK: [-2.7, 2.7, -0.5, 0, 0.1, 65519, 1e-08, 3.3]
  call @print_f32(%k#5) : (tensor<8xf32>) -> ()
  // i8 -> i64: CHECK: [-1, 0, 1, -128, 127, 2, -2, 64]
  call @print_i64(%k#6) : (tensor<8xi64>) -> ()
  // ui8 -> i64: CHECK: [0, 1, 127, 128, 200, 255, 2, 64]
  call @print_i64(%k#7) : (tensor<8xi64>) -> ()
  // i64 -> ui8: CHECK: [44, 255, 255, 0, 0, 1, 0, 232]
  call @print_i64(%k#8) : (tensor<8xi64>) -> ()
  // i8 -> ui16: CHECK: [65535, 0, 1, 65408, 127, 2, 65534, 64]
  call @print_i64(%k#9) : (tensor<8xi64>) -> ()
  // ui8 -> f32: CHECK: [0, 1, 127, 128, 200, 255, 2, 64]
  call @print_f32(%k#10) : (tensor<8xf32>) -> ()
  // i8 -> i1: CHECK: [1, 0, 1, 1, 1, 1, 1, 1]
  call @print_i64(%k#11) : (tensor<8xi64>) -> ()
  // i8 -> f32: CHECK: [-1, 0, 1, -128, 127, 2, -2, 64]
  call @print_f32(%k#12) : (tensor<8xf32>) -> ()

  %dx = arith.constant dense<[[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]]>
      : tensor<2x4xf32>
  %zero = arith.constant dense<0.0> : tensor<f32>
  %half = arith.constant dense<0.5> : tensor<f32>
  %d:4 = call @dropout(%dx, %zero, %half)
      : (tensor<2x4xf32>, tensor<f32>, tensor<f32>)
      -> (tensor<2x4xf32>, tensor<2x4xi64>, tensor<2x4xf32>, tensor<2x4xi64>)
  %d0 = tensor.collapse_shape %d#0 [[0, 1]] : tensor<2x4xf32> into tensor<8xf32>
  %m0 = tensor.collapse_shape %d#1 [[0, 1]] : tensor<2x4xi64> into tensor<8xi64>
  %d2 = tensor.collapse_shape %d#2 [[0, 1]] : tensor<2x4xf32> into tensor<8xf32>
  %m1 = tensor.collapse_shape %d#3 [[0, 1]] : tensor<2x4xi64> into tensor<8xi64>
  // dropout ratio 0: y: CHECK: [1, 2, 3, 4, 5, 6, 7, 8]
  call @print_f32(%d0) : (tensor<8xf32>) -> ()
  // dropout ratio 0: mask: CHECK: [1, 1, 1, 1, 1, 1, 1, 1]
  call @print_i64(%m0) : (tensor<8xi64>) -> ()
  // dropout ratio 0.5: y: CHECK: [2, 0, 0, 0, 0, 12, 0, 16]
  call @print_f32(%d2) : (tensor<8xf32>) -> ()
  // dropout ratio 0.5: mask: CHECK: [1, 0, 0, 0, 0, 1, 0, 1]
  call @print_i64(%m1) : (tensor<8xi64>) -> ()
  return
}
