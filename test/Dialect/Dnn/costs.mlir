// RUN: dnnc-opt %s -split-input-file --dnn-print-costs -verify-diagnostics

// The cost of every dnn op (DnnCostOpInterface) on whole tensors: FLOPs,
// bytes read and written, and the units the FLOPs run on. The counts are
// listed in docs/Dialects/Dnn.md ("Costs").

// Contractions run on matrix units. matmul: 2 * B * M * N * K; bytes are
// every operand once (a shared rhs once for the whole batch) and the result.
func.func @matmul(%a: tensor<4x8xf32>, %b: tensor<8x2xf32>,
                  %x: tensor<3x4x8xf16>, %w: tensor<8x2xf16>,
                  %y: tensor<3x8x2xf16>) {
  // expected-remark @below {{flops = 128, bytes read = 192, bytes written = 32, units = matrix}}
  %0 = dnn.matmul %a, %b : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
  // expected-remark @below {{flops = 384, bytes read = 224, bytes written = 48, units = matrix}}
  %1 = dnn.matmul %x, %w : (tensor<3x4x8xf16>, tensor<8x2xf16>) -> tensor<3x4x2xf16>
  // expected-remark @below {{flops = 384, bytes read = 288, bytes written = 48, units = matrix}}
  %2 = dnn.matmul %x, %y : (tensor<3x4x8xf16>, tensor<3x8x2xf16>) -> tensor<3x4x2xf16>
  return
}

// -----

// einsum: one multiply per extra operand and one add (with a contraction)
// per point of the iteration space; a contraction of two operands runs on
// matrix units, the rest on vector units.
func.func @einsum(%a: tensor<2x4x8xf32>, %b: tensor<8x2xf32>, %u: tensor<3xf32>,
                  %v: tensor<5xf32>) {
  // expected-remark @below {{flops = 256, bytes read = 320, bytes written = 64, units = matrix}}
  %0 = dnn.einsum %a, %b equation = "bij,jk->bik" : (tensor<2x4x8xf32>, tensor<8x2xf32>) -> tensor<2x4x2xf32>
  // Outer product: one multiply per output element.
  // expected-remark @below {{flops = 15, bytes read = 32, bytes written = 60, units = vector}}
  %1 = dnn.einsum %u, %v equation = "i,j->ij" : (tensor<3xf32>, tensor<5xf32>) -> tensor<3x5xf32>
  // A sum over one operand: one add per input element.
  // expected-remark @below {{flops = 64, bytes read = 256, bytes written = 32, units = vector}}
  %2 = dnn.einsum %a equation = "bij->bi" : (tensor<2x4x8xf32>) -> tensor<2x4xf32>
  return
}

// -----

// conv: 2 * N * M * prod(output spatial) * (C / G) * prod(kernel), plus one
// add per output element for the bias.
func.func @conv(%x: tensor<2x3x8x8xf32>, %w: tensor<6x3x3x3xf32>, %b: tensor<6xf32>,
                %dx: tensor<1x4x5x5xf32>, %dw: tensor<4x1x3x3xf32>) {
  // 2 * 2 * 6 * 36 * 3 * 9 = 23328, + 2 * 6 * 36 = 432.
  // expected-remark @below {{flops = 23760, bytes read = 2208, bytes written = 1728, units = matrix}}
  %0 = dnn.conv %x, %w, %b strides = [1, 1] pads = [0, 0, 0, 0] dilations = [1, 1] group = 1
      : (tensor<2x3x8x8xf32>, tensor<6x3x3x3xf32>, tensor<6xf32>) -> tensor<2x6x6x6xf32>
  // Depthwise (group = 4): 2 * 1 * 4 * 25 * 1 * 9.
  // expected-remark @below {{flops = 1800, bytes read = 544, bytes written = 400, units = matrix}}
  %1 = dnn.conv %dx, %dw strides = [1, 1] pads = [1, 1, 1, 1] dilations = [1, 1] group = 4
      : (tensor<1x4x5x5xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x5x5xf32>
  return
}

// -----

// Pools: a compare (max) or an add (avg, plus a division) per window element
// and output.
func.func @pool(%x: tensor<1x2x4x4xf32>) {
  // expected-remark @below {{flops = 32, bytes read = 128, bytes written = 32, units = vector}}
  %0 = dnn.max_pool %x kernel = [2, 2] strides = [2, 2] pads = [0, 0, 0, 0] dilations = [1, 1] ceil_mode = false
      : tensor<1x2x4x4xf32> -> tensor<1x2x2x2xf32>
  // expected-remark @below {{flops = 40, bytes read = 128, bytes written = 32, units = vector}}
  %1 = dnn.avg_pool %x kernel = [2, 2] strides = [2, 2] pads = [0, 0, 0, 0] ceil_mode = false count_include_pad = false
      : tensor<1x2x4x4xf32> -> tensor<1x2x2x2xf32>
  return
}

// -----

// Elementwise ops: FLOPs per element (1 for simple arithmetic, compares and
// logic; 4 for division and square root; 8 for a transcendental), bytes of
// every operand and result. An i1 element takes one byte.
func.func @elementwise(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>, %h: tensor<4x8xf16>,
                       %c: tensor<4x8xi1>) {
  // expected-remark @below {{flops = 32, bytes read = 256, bytes written = 128, units = vector}}
  %0 = dnn.add %a, %b : tensor<4x8xf32>
  // expected-remark @below {{flops = 32, bytes read = 128, bytes written = 64, units = vector}}
  %1 = dnn.mul %h, %h : tensor<4x8xf16>
  // expected-remark @below {{flops = 32, bytes read = 64, bytes written = 64, units = vector}}
  %2 = dnn.relu %h : tensor<4x8xf16>
  // expected-remark @below {{flops = 128, bytes read = 256, bytes written = 128, units = vector}}
  %3 = dnn.div %a, %b : tensor<4x8xf32>
  // expected-remark @below {{flops = 256, bytes read = 128, bytes written = 128, units = vector}}
  %4 = dnn.exp %a : tensor<4x8xf32>
  // sigmoid: exp, a reciprocal and 2.
  // expected-remark @below {{flops = 448, bytes read = 128, bytes written = 128, units = vector}}
  %5 = dnn.sigmoid %a : tensor<4x8xf32>
  // pow: exp(rhs * log(lhs)).
  // expected-remark @below {{flops = 544, bytes read = 256, bytes written = 128, units = vector}}
  %6 = dnn.pow %a, %b : tensor<4x8xf32>
  // gelu: erf and 4, or tanh and 8.
  // expected-remark @below {{flops = 384, bytes read = 128, bytes written = 128, units = vector}}
  %7 = dnn.gelu %a approximation = <none> : tensor<4x8xf32>
  // expected-remark @below {{flops = 512, bytes read = 128, bytes written = 128, units = vector}}
  %8 = dnn.gelu %a approximation = <tanh> : tensor<4x8xf32>
  // expected-remark @below {{flops = 32, bytes read = 256, bytes written = 32, units = vector}}
  %9 = dnn.less %a, %b : tensor<4x8xf32> -> tensor<4x8xi1>
  // expected-remark @below {{flops = 32, bytes read = 288, bytes written = 128, units = vector}}
  %10 = dnn.select %c, %a, %b : tensor<4x8xi1>, tensor<4x8xf32>
  // A conversion has no FLOPs.
  // expected-remark @below {{flops = 0, bytes read = 128, bytes written = 64, units = vector}}
  %11 = dnn.cast %a : tensor<4x8xf32> -> tensor<4x8xf16>
  return
}

// -----

// Softmax and log-softmax: max, subtract, exp, sum and scale per element,
// one read and one write (a fused kernel). layer_norm: 7 per element (6
// without bias) and 7 per row; it writes the result and the statistics.
func.func @normalization(%a: tensor<4x8xf32>, %s: tensor<8xf32>, %b: tensor<8xf32>) {
  // expected-remark @below {{flops = 384, bytes read = 128, bytes written = 128, units = vector}}
  %0 = dnn.softmax %a axis = 1 : tensor<4x8xf32>
  // expected-remark @below {{flops = 384, bytes read = 128, bytes written = 128, units = vector}}
  %1 = dnn.log_softmax %a axis = 1 : tensor<4x8xf32>
  // 32 * 7 + 4 * 7.
  // expected-remark @below {{flops = 252, bytes read = 192, bytes written = 160, units = vector}}
  %y, %mean, %isd = dnn.layer_norm %a, %s, %b axis = 1 epsilon = 1.0e-05
      : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>)
      -> (tensor<4x8xf32>, tensor<4x1xf32>, tensor<4x1xf32>)
  return
}

// -----

// Reductions: one FLOP per input element (mean: and one per output).
func.func @reduce(%a: tensor<4x8xf32>) {
  // expected-remark @below {{flops = 32, bytes read = 128, bytes written = 16, units = vector}}
  %0 = dnn.reduce_sum %a axes = [1] keep_dims = false : tensor<4x8xf32> -> tensor<4xf32>
  // expected-remark @below {{flops = 36, bytes read = 128, bytes written = 16, units = vector}}
  %1 = dnn.reduce_mean %a axes = [1] keep_dims = true : tensor<4x8xf32> -> tensor<4x1xf32>
  // expected-remark @below {{flops = 32, bytes read = 128, bytes written = 4, units = vector}}
  %2 = dnn.reduce_max %a axes = [0, 1] keep_dims = false : tensor<4x8xf32> -> tensor<f32>
  return
}

// -----

// Data movement: no FLOPs. A constant and a reshape (a view) are free; the
// others read what they copy and write their result.
func.func @data_movement(%a: tensor<4x8xf32>, %v: tensor<8xf32>, %i: tensor<3xi64>) {
  // expected-remark @below {{flops = 0, bytes read = 0, bytes written = 0, units = vector}}
  %0 = dnn.constant dense<1.0> : tensor<4x8xf32>
  // expected-remark @below {{flops = 0, bytes read = 0, bytes written = 0, units = vector}}
  %1 = dnn.reshape %a : tensor<4x8xf32> -> tensor<32xf32>
  // expected-remark @below {{flops = 0, bytes read = 128, bytes written = 128, units = vector}}
  %2 = dnn.transpose %a, permutation = [1, 0] : tensor<4x8xf32> -> tensor<8x4xf32>
  // The operand once, the whole result.
  // expected-remark @below {{flops = 0, bytes read = 32, bytes written = 128, units = vector}}
  %3 = dnn.broadcast_in_dim %v, dims = [1] : tensor<8xf32> -> tensor<4x8xf32>
  // expected-remark @below {{flops = 0, bytes read = 256, bytes written = 256, units = vector}}
  %4 = dnn.concat %a, %a axis = 0 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
  // Only the addressed elements are read.
  // expected-remark @below {{flops = 0, bytes read = 32, bytes written = 32, units = vector}}
  %5 = dnn.slice %a starts = [1, 0] steps = [2, 1] : tensor<4x8xf32> -> tensor<1x8xf32>
  // The indices and the gathered rows.
  // expected-remark @below {{flops = 0, bytes read = 120, bytes written = 96, units = vector}}
  %6 = dnn.gather %a[%i] axis = 0 : (tensor<4x8xf32>, tensor<3xi64>) -> tensor<3x8xf32>
  return
}

// -----

// Training ops. dropout: a random number, a compare and a scale per
// element; it writes the result and the mask. softmax_cross_entropy: a
// log-softmax per score element, 3 per sample.
func.func @training(%x: tensor<4x8xf32>, %r: tensor<f32>, %l: tensor<4xi64>) {
  // expected-remark @below {{flops = 320, bytes read = 132, bytes written = 160, units = vector}}
  %y, %mask = dnn.dropout %x, %r seed = 0
      : (tensor<4x8xf32>, tensor<f32>) -> (tensor<4x8xf32>, tensor<4x8xi1>)
  // 32 * 12 + 4 * 3.
  // expected-remark @below {{flops = 396, bytes read = 160, bytes written = 132, units = vector}}
  %loss, %lp = dnn.softmax_cross_entropy %x, %l reduction = <mean>
      : (tensor<4x8xf32>, tensor<4xi64>) -> (tensor<f32>, tensor<4x8xf32>)
  return
}
