// RUN: dnnc-opt %s -split-input-file -verify-diagnostics

//===----------------------------------------------------------------------===//
// ODS constraints
//===----------------------------------------------------------------------===//

func.func @dynamic_shape(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  // expected-error @+1 {{operand #0 must be statically shaped tensor}}
  %0 = dnn.relu %x : tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// -----

func.func @dynamic_result(%x: tensor<2x4xf32>) -> tensor<?x4xf32> {
  // expected-error @+1 {{result #0 must be statically shaped tensor}}
  %0 = dnn.reshape %x : tensor<2x4xf32> -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// -----

// Shape inference must not run (and crash) on types ODS rejects.
func.func @unranked(%x: tensor<*xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{operand #0 must be statically shaped tensor}}
  %0 = "dnn.transpose"(%x) <{permutation = array<i64: 1, 0>}> : (tensor<*xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @float_op_on_int(%x: tensor<4xi32>) -> tensor<4xi32> {
  // expected-error @+1 {{operand #0 must be statically shaped tensor of 16-bit float or bfloat16 type or 32-bit float or 64-bit float values}}
  %0 = dnn.relu %x : tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

func.func @shift_float(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{operand #0 must be statically shaped tensor of 8-bit signless integer or 16-bit signless integer or 32-bit signless integer or 64-bit signless integer or 8-bit unsigned integer}}
  %0 = dnn.shift_left %x, %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @bool_arith(%x: tensor<4xi1>) -> tensor<4xi1> {
  // expected-error @+1 {{operand #0 must be statically shaped tensor of}}
  %0 = dnn.add %x, %x : tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

func.func @unsupported_element_type(%x: tensor<4xi4>) -> tensor<4xi4> {
  // expected-error @+1 {{operand #0 must be statically shaped tensor of}}
  %0 = dnn.reshape %x : tensor<4xi4> -> tensor<4xi4>
  return %0 : tensor<4xi4>
}

// -----

func.func @binary_type_mismatch(%a: tensor<4xf32>, %b: tensor<4xf16>) -> tensor<4xf32> {
  // expected-error @+1 {{requires the same type for all operands and results}}
  %0 = "dnn.add"(%a, %b) : (tensor<4xf32>, tensor<4xf16>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @implicit_broadcast(%a: tensor<2x4xf32>, %b: tensor<4xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{all non-scalar operands/results must have the same shape and base type}}
  %0 = "dnn.mul"(%a, %b) : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @compare_result_not_bool(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{result #0 must be statically shaped tensor of 1-bit signless integer values}}
  %0 = dnn.less %a, %a : tensor<4xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @compare_operand_types(%a: tensor<4xf32>, %b: tensor<4xi32>) -> tensor<4xi1> {
  // expected-error @+1 {{requires all operands to have the same type}}
  %0 = "dnn.equal"(%a, %b) : (tensor<4xf32>, tensor<4xi32>) -> tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

func.func @is_nan_operand(%a: tensor<4xi32>) -> tensor<4xi1> {
  // expected-error @+1 {{operand #0 must be statically shaped tensor of 16-bit float or bfloat16 type or 32-bit float or 64-bit float values}}
  %0 = dnn.is_nan %a : tensor<4xi32> -> tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

func.func @is_nan_result_shape(%a: tensor<4xf32>) -> tensor<2x2xi1> {
  // expected-error @+1 {{all non-scalar operands/results must have the same shape and base type}}
  %0 = dnn.is_nan %a : tensor<4xf32> -> tensor<2x2xi1>
  return %0 : tensor<2x2xi1>
}

// -----

func.func @select_types(%c: tensor<4xi1>, %a: tensor<4xf32>, %b: tensor<4xf16>) -> tensor<4xf32> {
  // expected-error @+1 {{failed to verify that all of {on_true, on_false, result} have same type}}
  %0 = "dnn.select"(%c, %a, %b) : (tensor<4xi1>, tensor<4xf32>, tensor<4xf16>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @select_condition_shape(%c: tensor<2xi1>, %a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{failed to verify that all of {condition, result} have same shape}}
  %0 = dnn.select %c, %a, %a : tensor<2xi1>, tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @cast_shape(%a: tensor<4xf32>) -> tensor<2x2xi32> {
  // expected-error @+1 {{all non-scalar operands/results must have the same shape and base type}}
  %0 = dnn.cast %a : tensor<4xf32> -> tensor<2x2xi32>
  return %0 : tensor<2x2xi32>
}

// -----

func.func @constant_type() -> tensor<3xi64> {
  // expected-error @+1 {{failed to verify that all of {value, result} have same type}}
  %0 = "dnn.constant"() <{value = dense<[1, 2]> : tensor<2xi64>}> : () -> tensor<3xi64>
  return %0 : tensor<3xi64>
}

// -----

func.func @gather_float_indices(%d: tensor<4xf32>, %i: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{operand #1 must be statically shaped tensor of 32-bit signless integer or 64-bit signless integer values}}
  %0 = dnn.gather %d[%i] axis = 0 : (tensor<4xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @inferred_type_mismatch(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+2 {{inferred type(s) 'tensor<3x2xf32>' are incompatible with return type(s) of operation 'tensor<2x3xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dnn.transpose %x, permutation = [1, 0] : tensor<2x3xf32> -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @reduce_result_mismatch(%x: tensor<2x3xf32>) -> tensor<2x1xf32> {
  // expected-error @+2 {{inferred type(s) 'tensor<2xf32>' are incompatible with return type(s) of operation 'tensor<2x1xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dnn.reduce_sum %x axes = [1] keep_dims = false : tensor<2x3xf32> -> tensor<2x1xf32>
  return %0 : tensor<2x1xf32>
}

// -----

//===----------------------------------------------------------------------===//
// reshape
//===----------------------------------------------------------------------===//

func.func @reshape_element_type(%x: tensor<2x3xf32>) -> tensor<6xf16> {
  // expected-error @+1 {{'dnn.reshape' op element types differ: 'f32' vs 'f16'}}
  %0 = dnn.reshape %x : tensor<2x3xf32> -> tensor<6xf16>
  return %0 : tensor<6xf16>
}

// -----

func.func @reshape_count(%x: tensor<2x3xf32>) -> tensor<7xf32> {
  // expected-error @+1 {{'dnn.reshape' op element count changes from 6 to 7}}
  %0 = dnn.reshape %x : tensor<2x3xf32> -> tensor<7xf32>
  return %0 : tensor<7xf32>
}

// -----

//===----------------------------------------------------------------------===//
// broadcast_in_dim
//===----------------------------------------------------------------------===//

func.func @broadcast_element_type(%x: tensor<3xf32>) -> tensor<2x3xf16> {
  // expected-error @+1 {{'dnn.broadcast_in_dim' op element types differ}}
  %0 = dnn.broadcast_in_dim %x, dims = [1] : tensor<3xf32> -> tensor<2x3xf16>
  return %0 : tensor<2x3xf16>
}

// -----

func.func @broadcast_dims_size(%x: tensor<3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{'dnn.broadcast_in_dim' op expects one entry in dims per operand dimension (1), got 2}}
  %0 = dnn.broadcast_in_dim %x, dims = [0, 1] : tensor<3xf32> -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @broadcast_dims_range(%x: tensor<3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{'dnn.broadcast_in_dim' op dims[0] = 2 is out of range for the result rank 2}}
  %0 = dnn.broadcast_in_dim %x, dims = [2] : tensor<3xf32> -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @broadcast_dims_negative(%x: tensor<3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{'dnn.broadcast_in_dim' op dims[0] = -1 is out of range for the result rank 2}}
  %0 = dnn.broadcast_in_dim %x, dims = [-1] : tensor<3xf32> -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @broadcast_dims_order(%x: tensor<3x3xf32>) -> tensor<3x3xf32> {
  // expected-error @+1 {{'dnn.broadcast_in_dim' op dims must be strictly increasing}}
  %0 = dnn.broadcast_in_dim %x, dims = [1, 0] : tensor<3x3xf32> -> tensor<3x3xf32>
  return %0 : tensor<3x3xf32>
}

// -----

func.func @broadcast_extent(%x: tensor<2xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{'dnn.broadcast_in_dim' op operand dimension 0 (2) is not broadcastable to result dimension 1 (3)}}
  %0 = dnn.broadcast_in_dim %x, dims = [1] : tensor<2xf32> -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

//===----------------------------------------------------------------------===//
// transpose
//===----------------------------------------------------------------------===//

func.func @transpose_size(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  // expected-error @+2 {{permutation has 3 entries for a rank-2 input}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dnn.transpose %x, permutation = [1, 0, 2] : tensor<2x3xf32> -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

func.func @transpose_repeat(%x: tensor<2x3xf32>) -> tensor<3x3xf32> {
  // expected-error @+2 {{permutation is not a permutation of [0, 2)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dnn.transpose %x, permutation = [1, 1] : tensor<2x3xf32> -> tensor<3x3xf32>
  return %0 : tensor<3x3xf32>
}

// -----

func.func @transpose_range(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  // expected-error @+2 {{permutation is not a permutation of [0, 2)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dnn.transpose %x, permutation = [-1, 0] : tensor<2x3xf32> -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

//===----------------------------------------------------------------------===//
// concat
//===----------------------------------------------------------------------===//

func.func @concat_empty() -> tensor<2xf32> {
  // expected-error @+2 {{expects at least one input}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dnn.concat axis = 0 : () -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @concat_axis(%a: tensor<2x3xf32>) -> tensor<2x6xf32> {
  // expected-error @+2 {{axis -1 is out of range for rank 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dnn.concat %a, %a axis = -1 : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x6xf32>
  return %0 : tensor<2x6xf32>
}

// -----

func.func @concat_rank(%a: tensor<2x3xf32>, %b: tensor<6xf32>) -> tensor<4x3xf32> {
  // expected-error @+2 {{inputs differ in element type or rank}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dnn.concat %a, %b axis = 0 : (tensor<2x3xf32>, tensor<6xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

func.func @concat_element_type(%a: tensor<2x3xf32>, %b: tensor<2x3xf16>) -> tensor<4x3xf32> {
  // expected-error @+2 {{inputs differ in element type or rank}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dnn.concat %a, %b axis = 0 : (tensor<2x3xf32>, tensor<2x3xf16>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

func.func @concat_extent(%a: tensor<2x3xf32>, %b: tensor<2x4xf32>) -> tensor<4x3xf32> {
  // expected-error @+2 {{inputs differ in dimension 1 (3 vs 4)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dnn.concat %a, %b axis = 0 : (tensor<2x3xf32>, tensor<2x4xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

//===----------------------------------------------------------------------===//
// slice
//===----------------------------------------------------------------------===//

func.func @slice_element_type(%x: tensor<4xf32>) -> tensor<2xf16> {
  // expected-error @+1 {{'dnn.slice' op element types differ}}
  %0 = dnn.slice %x starts = [0] steps = [1] : tensor<4xf32> -> tensor<2xf16>
  return %0 : tensor<2xf16>
}

// -----

func.func @slice_rank(%x: tensor<4xf32>) -> tensor<2x1xf32> {
  // expected-error @+1 {{'dnn.slice' op result rank differs from input rank}}
  %0 = dnn.slice %x starts = [0] steps = [1] : tensor<4xf32> -> tensor<2x1xf32>
  return %0 : tensor<2x1xf32>
}

// -----

func.func @slice_attr_size(%x: tensor<4x4xf32>) -> tensor<2x2xf32> {
  // expected-error @+1 {{'dnn.slice' op expects one start and one step per dimension}}
  %0 = dnn.slice %x starts = [0, 0] steps = [1] : tensor<4x4xf32> -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

func.func @slice_zero_step(%x: tensor<4xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{'dnn.slice' op step of dimension 0 is zero}}
  %0 = dnn.slice %x starts = [0] steps = [0] : tensor<4xf32> -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @slice_past_end(%x: tensor<4x4xf32>) -> tensor<4x3xf32> {
  // expected-error @+1 {{'dnn.slice' op dimension 1 addresses indices outside [0, 4)}}
  %0 = dnn.slice %x starts = [0, 1] steps = [1, 2] : tensor<4x4xf32> -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

func.func @slice_negative_step_past_begin(%x: tensor<4xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{'dnn.slice' op dimension 0 addresses indices outside [0, 4)}}
  %0 = dnn.slice %x starts = [1] steps = [-1] : tensor<4xf32> -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @slice_step_overflow(%x: tensor<4xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{'dnn.slice' op dimension 0 addresses indices outside [0, 4)}}
  %0 = dnn.slice %x starts = [1] steps = [4611686018427387904] : tensor<4xf32> -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @slice_start_out_of_range(%x: tensor<4xf32>) -> tensor<1xf32> {
  // expected-error @+1 {{'dnn.slice' op dimension 0 addresses indices outside [0, 4)}}
  %0 = dnn.slice %x starts = [4] steps = [-1] : tensor<4xf32> -> tensor<1xf32>
  return %0 : tensor<1xf32>
}

// -----

//===----------------------------------------------------------------------===//
// gather
//===----------------------------------------------------------------------===//

func.func @gather_axis(%d: tensor<5x4xf32>, %i: tensor<3xi64>) -> tensor<5x3xf32> {
  // expected-error @+2 {{axis 2 is out of range for rank 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dnn.gather %d[%i] axis = 2 : (tensor<5x4xf32>, tensor<3xi64>) -> tensor<5x3xf32>
  return %0 : tensor<5x3xf32>
}

// -----

func.func @gather_result(%d: tensor<5x4xf32>, %i: tensor<3xi64>) -> tensor<3x5xf32> {
  // expected-error @+2 {{inferred type(s) 'tensor<5x3xf32>' are incompatible with return type(s) of operation 'tensor<3x5xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dnn.gather %d[%i] axis = 1 : (tensor<5x4xf32>, tensor<3xi64>) -> tensor<3x5xf32>
  return %0 : tensor<3x5xf32>
}

// -----

//===----------------------------------------------------------------------===//
// matmul
//===----------------------------------------------------------------------===//

func.func @matmul_element_types(%a: tensor<2x3xf32>, %b: tensor<3x4xf16>) -> tensor<2x4xf32> {
  // expected-error @+2 {{operand element types differ}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dnn.matmul %a, %b : (tensor<2x3xf32>, tensor<3x4xf16>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @matmul_rank1(%a: tensor<3xf32>, %b: tensor<3x4xf32>) -> tensor<4xf32> {
  // expected-error @+2 {{operands must have rank >= 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dnn.matmul %a, %b : (tensor<3xf32>, tensor<3x4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @matmul_rhs_rank(%a: tensor<2x3xf32>, %b: tensor<2x3x4xf32>) -> tensor<2x2x4xf32> {
  // expected-error @+2 {{rhs must have rank 2 or the rank of lhs}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dnn.matmul %a, %b : (tensor<2x3xf32>, tensor<2x3x4xf32>) -> tensor<2x2x4xf32>
  return %0 : tensor<2x2x4xf32>
}

// -----

func.func @matmul_contracting(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) -> tensor<2x5xf32> {
  // expected-error @+2 {{contracting dimensions are incompatible (3 vs 4)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dnn.matmul %a, %b : (tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}

// -----

func.func @matmul_batch(%a: tensor<2x2x3xf32>, %b: tensor<1x3x4xf32>) -> tensor<2x2x4xf32> {
  // expected-error @+2 {{batch dimensions of lhs and rhs differ}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dnn.matmul %a, %b : (tensor<2x2x3xf32>, tensor<1x3x4xf32>) -> tensor<2x2x4xf32>
  return %0 : tensor<2x2x4xf32>
}

// -----

//===----------------------------------------------------------------------===//
// einsum
//===----------------------------------------------------------------------===//

func.func @einsum_no_operand() -> tensor<f32> {
  // expected-error @+2 {{expects at least one operand}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dnn.einsum equation = "->" : () -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @einsum_implicit(%a: tensor<2x3xf32>) -> tensor<3x2xf32> {
  // expected-error @+2 {{einsum equation 'ij' has no '->'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dnn.einsum %a equation = "ij" : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

func.func @einsum_ellipsis(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+2 {{einsum labels must be letters (no ellipsis) in '...j->...j'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dnn.einsum %a equation = "...j->...j" : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @einsum_output_label(%a: tensor<2x3xf32>) -> tensor<2xf32> {
  // expected-error @+2 {{einsum labels must be letters (no ellipsis) in 'ij->i1'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dnn.einsum %a equation = "ij->i1" : (tensor<2x3xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @einsum_repeated_output(%a: tensor<2x2xf32>) -> tensor<2x2xf32> {
  // expected-error @+2 {{einsum output label 'i' repeats}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dnn.einsum %a equation = "ij->ii" : (tensor<2x2xf32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

func.func @einsum_operand_count(%a: tensor<2x3xf32>) -> tensor<2xf32> {
  // expected-error @+2 {{equation has 2 operands but 1 were given}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dnn.einsum %a equation = "ij,j->i" : (tensor<2x3xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @einsum_element_types(%a: tensor<2x3xf32>, %b: tensor<3xf64>) -> tensor<2xf32> {
  // expected-error @+2 {{operand element types differ}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dnn.einsum %a, %b equation = "ij,j->i" : (tensor<2x3xf32>, tensor<3xf64>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @einsum_rank(%a: tensor<2x3xf32>) -> tensor<2xf32> {
  // expected-error @+2 {{operand labels 'ijk' do not match its rank 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dnn.einsum %a equation = "ijk->i" : (tensor<2x3xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @einsum_extents(%a: tensor<2x3xf32>, %b: tensor<4xf32>) -> tensor<2xf32> {
  // expected-error @+2 {{label 'j' has extents 3 and 4}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dnn.einsum %a, %b equation = "ij,j->i" : (tensor<2x3xf32>, tensor<4xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @einsum_unknown_output(%a: tensor<2x3xf32>) -> tensor<2xf32> {
  // expected-error @+2 {{output label 'k' appears in no operand}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dnn.einsum %a equation = "ij->k" : (tensor<2x3xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

//===----------------------------------------------------------------------===//
// conv, max_pool, avg_pool
//===----------------------------------------------------------------------===//

func.func @conv_element_types(%x: tensor<1x1x5x5xf32>, %w: tensor<1x1x3x3xf16>) -> tensor<1x1x3x3xf32> {
  // expected-error @+2 {{input and weight element types differ}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dnn.conv %x, %w strides = [1, 1] pads = [0, 0, 0, 0] dilations = [1, 1] group = 1
      : (tensor<1x1x5x5xf32>, tensor<1x1x3x3xf16>) -> tensor<1x1x3x3xf32>
  return %0 : tensor<1x1x3x3xf32>
}

// -----

func.func @conv_weight_rank(%x: tensor<1x1x5x5xf32>, %w: tensor<1x1x3xf32>) -> tensor<1x1x3x3xf32> {
  // expected-error @+2 {{weight rank 3 differs from input rank 4}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dnn.conv %x, %w strides = [1, 1] pads = [0, 0, 0, 0] dilations = [1, 1] group = 1
      : (tensor<1x1x5x5xf32>, tensor<1x1x3xf32>) -> tensor<1x1x3x3xf32>
  return %0 : tensor<1x1x3x3xf32>
}

// -----

func.func @conv_input_rank(%x: tensor<1x4xf32>, %w: tensor<2x4xf32>) -> tensor<1x2xf32> {
  // expected-error @+2 {{input must have rank >= 3 (N, C and at least one spatial dimension), got rank 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dnn.conv %x, %w strides = [] pads = [] dilations = [] group = 1
      : (tensor<1x4xf32>, tensor<2x4xf32>) -> tensor<1x2xf32>
  return %0 : tensor<1x2xf32>
}

// -----

func.func @conv_group_zero(%x: tensor<1x4x5x5xf32>, %w: tensor<4x4x3x3xf32>) -> tensor<1x4x3x3xf32> {
  // expected-error @+2 {{group must be >= 1, got 0}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dnn.conv %x, %w strides = [1, 1] pads = [0, 0, 0, 0] dilations = [1, 1] group = 0
      : (tensor<1x4x5x5xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x3x3xf32>
  return %0 : tensor<1x4x3x3xf32>
}

// -----

func.func @conv_group_divides(%x: tensor<1x4x5x5xf32>, %w: tensor<3x2x3x3xf32>) -> tensor<1x3x3x3xf32> {
  // expected-error @+2 {{group 2 must divide input and output channels}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dnn.conv %x, %w strides = [1, 1] pads = [0, 0, 0, 0] dilations = [1, 1] group = 2
      : (tensor<1x4x5x5xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x3x3xf32>
  return %0 : tensor<1x3x3x3xf32>
}

// -----

func.func @conv_channels(%x: tensor<1x4x5x5xf32>, %w: tensor<2x3x3x3xf32>) -> tensor<1x2x3x3xf32> {
  // expected-error @+2 {{weight has 3 input channels per group; input has 4 channels in 1 groups}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dnn.conv %x, %w strides = [1, 1] pads = [0, 0, 0, 0] dilations = [1, 1] group = 1
      : (tensor<1x4x5x5xf32>, tensor<2x3x3x3xf32>) -> tensor<1x2x3x3xf32>
  return %0 : tensor<1x2x3x3xf32>
}

// -----

func.func @conv_bias(%x: tensor<1x1x5x5xf32>, %w: tensor<2x1x3x3xf32>, %b: tensor<3xf32>) -> tensor<1x2x3x3xf32> {
  // expected-error @+2 {{bias must be a vector of 2 output channels}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dnn.conv %x, %w, %b strides = [1, 1] pads = [0, 0, 0, 0] dilations = [1, 1] group = 1
      : (tensor<1x1x5x5xf32>, tensor<2x1x3x3xf32>, tensor<3xf32>) -> tensor<1x2x3x3xf32>
  return %0 : tensor<1x2x3x3xf32>
}

// -----

func.func @conv_attr_sizes(%x: tensor<1x1x5x5xf32>, %w: tensor<1x1x3x3xf32>) -> tensor<1x1x3x3xf32> {
  // expected-error @+2 {{kernel, strides and dilations need 2 entries and pads 4}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dnn.conv %x, %w strides = [1, 1] pads = [0, 0] dilations = [1, 1] group = 1
      : (tensor<1x1x5x5xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x3x3xf32>
  return %0 : tensor<1x1x3x3xf32>
}

// -----

func.func @conv_zero_stride(%x: tensor<1x1x5x5xf32>, %w: tensor<1x1x3x3xf32>) -> tensor<1x1x3x3xf32> {
  // expected-error @+2 {{kernel, strides and dilations must be >= 1}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dnn.conv %x, %w strides = [0, 1] pads = [0, 0, 0, 0] dilations = [1, 1] group = 1
      : (tensor<1x1x5x5xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x3x3xf32>
  return %0 : tensor<1x1x3x3xf32>
}

// -----

func.func @conv_negative_pad(%x: tensor<1x1x5x5xf32>, %w: tensor<1x1x3x3xf32>) -> tensor<1x1x3x3xf32> {
  // expected-error @+2 {{pads must be >= 0}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dnn.conv %x, %w strides = [1, 1] pads = [0, 0, -1, 0] dilations = [1, 1] group = 1
      : (tensor<1x1x5x5xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x3x3xf32>
  return %0 : tensor<1x1x3x3xf32>
}

// -----

func.func @conv_window_too_big(%x: tensor<1x1x5x2xf32>, %w: tensor<1x1x3x3xf32>) -> tensor<1x1x3x1xf32> {
  // expected-error @+2 {{window does not fit spatial dimension 1 (extent 2)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dnn.conv %x, %w strides = [1, 1] pads = [0, 0, 0, 0] dilations = [1, 1] group = 1
      : (tensor<1x1x5x2xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x3x1xf32>
  return %0 : tensor<1x1x3x1xf32>
}

// -----

func.func @conv_result(%x: tensor<1x1x5x5xf32>, %w: tensor<1x1x3x3xf32>) -> tensor<1x1x5x5xf32> {
  // expected-error @+2 {{inferred type(s) 'tensor<1x1x3x3xf32>' are incompatible with return type(s) of operation 'tensor<1x1x5x5xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dnn.conv %x, %w strides = [1, 1] pads = [0, 0, 0, 0] dilations = [1, 1] group = 1
      : (tensor<1x1x5x5xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x5x5xf32>
  return %0 : tensor<1x1x5x5xf32>
}

// -----

func.func @max_pool_rank(%x: tensor<3x8xf32>) -> tensor<3x4xf32> {
  // expected-error @+2 {{input must have rank >= 3 (N, C and at least one spatial dimension), got rank 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dnn.max_pool %x kernel = [] strides = [] pads = [] dilations = [] ceil_mode = false
      : tensor<3x8xf32> -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

func.func @max_pool_dilation(%x: tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32> {
  // expected-error @+2 {{kernel, strides and dilations must be >= 1}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dnn.max_pool %x kernel = [2, 2] strides = [2, 2] pads = [0, 0, 0, 0] dilations = [1, 0] ceil_mode = false
      : tensor<1x3x8x8xf32> -> tensor<1x3x4x4xf32>
  return %0 : tensor<1x3x4x4xf32>
}

// -----

func.func @max_pool_ceil_mode(%x: tensor<1x2x5xf32>) -> tensor<1x2x2xf32> {
  // ceil_mode rounds (5 - 2) / 2 + 1 up to 3.
  // expected-error @+2 {{inferred type(s) 'tensor<1x2x3xf32>' are incompatible with return type(s) of operation 'tensor<1x2x2xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dnn.max_pool %x kernel = [2] strides = [2] pads = [0, 0] dilations = [1] ceil_mode = true
      : tensor<1x2x5xf32> -> tensor<1x2x2xf32>
  return %0 : tensor<1x2x2xf32>
}

// -----

func.func @avg_pool_rank(%x: tensor<8xf32>) -> tensor<4xf32> {
  // expected-error @+2 {{input must have rank >= 3 (N, C and at least one spatial dimension), got rank 1}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dnn.avg_pool %x kernel = [2] strides = [2] pads = [0, 0] ceil_mode = false count_include_pad = false
      : tensor<8xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @avg_pool_attr_sizes(%x: tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32> {
  // expected-error @+2 {{kernel, strides and dilations need 2 entries and pads 4}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dnn.avg_pool %x kernel = [2] strides = [2, 2] pads = [0, 0, 0, 0] ceil_mode = false count_include_pad = false
      : tensor<1x3x8x8xf32> -> tensor<1x3x4x4xf32>
  return %0 : tensor<1x3x4x4xf32>
}

// -----

// A pool's window may reach past the padded input by less than a stride:
// here by 1 with stride 1, so no window fits.
func.func @avg_pool_window(%x: tensor<1x3x2x2xf32>) -> tensor<1x3x1x1xf32> {
  // expected-error @+2 {{window does not fit spatial dimension 0 (extent 2)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dnn.avg_pool %x kernel = [3, 3] strides = [1, 1] pads = [0, 0, 0, 0] ceil_mode = false count_include_pad = false
      : tensor<1x3x2x2xf32> -> tensor<1x3x1x1xf32>
  return %0 : tensor<1x3x1x1xf32>
}

// -----

//===----------------------------------------------------------------------===//
// softmax, log_softmax, layer_norm
//===----------------------------------------------------------------------===//

func.func @softmax_axis(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{'dnn.softmax' op axis 2 is out of range for rank 2}}
  %0 = dnn.softmax %x axis = 2 : tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

func.func @log_softmax_axis(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{'dnn.log_softmax' op axis -1 is out of range for rank 2}}
  %0 = dnn.log_softmax %x axis = -1 : tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

func.func @layer_norm_axis(%x: tensor<2x8xf32>, %s: tensor<8xf32>)
    -> (tensor<2x8xf32>, tensor<2x1xf32>, tensor<2x1xf32>) {
  // expected-error @+2 {{axis 2 is out of range for rank 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %y, %m, %i = dnn.layer_norm %x, %s axis = 2 epsilon = 1.0e-05
      : (tensor<2x8xf32>, tensor<8xf32>) -> (tensor<2x8xf32>, tensor<2x1xf32>, tensor<2x1xf32>)
  return %y, %m, %i : tensor<2x8xf32>, tensor<2x1xf32>, tensor<2x1xf32>
}

// -----

func.func @layer_norm_scale(%x: tensor<2x8xf32>, %s: tensor<2x8xf32>)
    -> (tensor<2x8xf32>, tensor<2x1xf32>, tensor<2x1xf32>) {
  // expected-error @+2 {{scale and bias must have type 'tensor<8xf32>', got 'tensor<2x8xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %y, %m, %i = dnn.layer_norm %x, %s axis = 1 epsilon = 1.0e-05
      : (tensor<2x8xf32>, tensor<2x8xf32>) -> (tensor<2x8xf32>, tensor<2x1xf32>, tensor<2x1xf32>)
  return %y, %m, %i : tensor<2x8xf32>, tensor<2x1xf32>, tensor<2x1xf32>
}

// -----

func.func @layer_norm_bias(%x: tensor<2x8xf32>, %s: tensor<8xf32>, %b: tensor<8xf16>)
    -> (tensor<2x8xf32>, tensor<2x1xf32>, tensor<2x1xf32>) {
  // expected-error @+2 {{scale and bias must have type 'tensor<8xf32>', got 'tensor<8xf16>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %y, %m, %i = dnn.layer_norm %x, %s, %b axis = 1 epsilon = 1.0e-05
      : (tensor<2x8xf32>, tensor<8xf32>, tensor<8xf16>) -> (tensor<2x8xf32>, tensor<2x1xf32>, tensor<2x1xf32>)
  return %y, %m, %i : tensor<2x8xf32>, tensor<2x1xf32>, tensor<2x1xf32>
}

// -----

func.func @layer_norm_stats(%x: tensor<2x8xf16>, %s: tensor<8xf16>)
    -> (tensor<2x8xf16>, tensor<2x1xf16>, tensor<2x1xf16>) {
  // expected-error @+2 {{inferred type(s) 'tensor<2x8xf16>', 'tensor<2x1xf32>', 'tensor<2x1xf32>' are incompatible with return type(s) of operation 'tensor<2x8xf16>', 'tensor<2x1xf16>', 'tensor<2x1xf16>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %y, %m, %i = dnn.layer_norm %x, %s axis = 1 epsilon = 1.0e-05
      : (tensor<2x8xf16>, tensor<8xf16>) -> (tensor<2x8xf16>, tensor<2x1xf16>, tensor<2x1xf16>)
  return %y, %m, %i : tensor<2x8xf16>, tensor<2x1xf16>, tensor<2x1xf16>
}

// -----

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

func.func @reduce_axis_range(%x: tensor<2x3xf32>) -> tensor<2xf32> {
  // expected-error @+2 {{reduction axis 2 is out of range for rank 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dnn.reduce_sum %x axes = [2] keep_dims = false : tensor<2x3xf32> -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @reduce_axis_negative(%x: tensor<2x3xf32>) -> tensor<2xf32> {
  // expected-error @+2 {{reduction axis -1 is out of range for rank 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dnn.reduce_mean %x axes = [-1] keep_dims = false : tensor<2x3xf32> -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @reduce_axes_unsorted(%x: tensor<2x3xf32>) -> tensor<f32> {
  // expected-error @+2 {{reduction axes must be sorted and unique}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dnn.reduce_max %x axes = [1, 0] keep_dims = false : tensor<2x3xf32> -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @reduce_axes_repeated(%x: tensor<2x3xf32>) -> tensor<2xf32> {
  // expected-error @+2 {{reduction axes must be sorted and unique}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = dnn.reduce_min %x axes = [1, 1] keep_dims = false : tensor<2x3xf32> -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @reduce_bool(%x: tensor<2x3xi1>) -> tensor<2xi1> {
  // expected-error @+1 {{operand #0 must be statically shaped tensor of}}
  %0 = dnn.reduce_prod %x axes = [1] keep_dims = false : tensor<2x3xi1> -> tensor<2xi1>
  return %0 : tensor<2xi1>
}

// -----

//===----------------------------------------------------------------------===//
// dropout, softmax_cross_entropy
//===----------------------------------------------------------------------===//

func.func @dropout_ratio(%x: tensor<4xf32>, %r: tensor<1xf32>) -> (tensor<4xf32>, tensor<4xi1>) {
  // expected-error @+2 {{ratio must be a scalar tensor}}
  // expected-error @+1 {{failed to infer returned types}}
  %y, %m = dnn.dropout %x, %r seed = 0 : (tensor<4xf32>, tensor<1xf32>) -> (tensor<4xf32>, tensor<4xi1>)
  return %y, %m : tensor<4xf32>, tensor<4xi1>
}

// -----

func.func @sce_scores_rank(%s: tensor<5xf32>, %l: tensor<i64>) -> (tensor<f32>, tensor<5xf32>) {
  // expected-error @+2 {{scores must be [N, C, D...]}}
  // expected-error @+1 {{failed to infer returned types}}
  %loss, %lp = dnn.softmax_cross_entropy %s, %l reduction = <mean>
      : (tensor<5xf32>, tensor<i64>) -> (tensor<f32>, tensor<5xf32>)
  return %loss, %lp : tensor<f32>, tensor<5xf32>
}

// -----

func.func @sce_labels(%s: tensor<3x5xf32>, %l: tensor<5xi64>) -> (tensor<f32>, tensor<3x5xf32>) {
  // expected-error @+2 {{labels shape must be scores' shape without the class dimension}}
  // expected-error @+1 {{failed to infer returned types}}
  %loss, %lp = dnn.softmax_cross_entropy %s, %l reduction = <mean>
      : (tensor<3x5xf32>, tensor<5xi64>) -> (tensor<f32>, tensor<3x5xf32>)
  return %loss, %lp : tensor<f32>, tensor<3x5xf32>
}

// -----

func.func @sce_weights(%s: tensor<3x5xf32>, %l: tensor<3xi64>, %w: tensor<3xf32>) -> (tensor<f32>, tensor<3x5xf32>) {
  // expected-error @+2 {{weights must be a vector of 5 classes}}
  // expected-error @+1 {{failed to infer returned types}}
  %loss, %lp = dnn.softmax_cross_entropy %s, %l, %w reduction = <sum>
      : (tensor<3x5xf32>, tensor<3xi64>, tensor<3xf32>) -> (tensor<f32>, tensor<3x5xf32>)
  return %loss, %lp : tensor<f32>, tensor<3x5xf32>
}

// -----

func.func @sce_reduction_none(%s: tensor<3x5xf32>, %l: tensor<3xi64>) -> (tensor<f32>, tensor<3x5xf32>) {
  // expected-error @+2 {{inferred type(s) 'tensor<3xf32>', 'tensor<3x5xf32>' are incompatible with return type(s) of operation 'tensor<f32>', 'tensor<3x5xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %loss, %lp = dnn.softmax_cross_entropy %s, %l reduction = <none>
      : (tensor<3x5xf32>, tensor<3xi64>) -> (tensor<f32>, tensor<3x5xf32>)
  return %loss, %lp : tensor<f32>, tensor<3x5xf32>
}

// -----

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

func.func @gelu_approximation(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+2 {{expected ::dnnc::dnn::GeluApproximation to be one of: none, tanh}}
  // expected-error @+1 {{failed to parse Dnn_GeluApproximationAttr parameter 'value'}}
  %0 = dnn.gelu %x approximation = <fast> : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

//===----------------------------------------------------------------------===//
// Sharding rules
//===----------------------------------------------------------------------===//

// expected-error @+1 {{factor 'j' has size 0; factor sizes must be positive}}
func.func @rule_factor_size() attributes {rule = #dnn.sharding_rule<([i, j]) -> ([i, j]) {i=2, j=0}>} {
  return
}

// -----

// expected-error @+1 {{factor 'i' appears more than once in operand #0}}
func.func @rule_factor_twice() attributes {rule = #dnn.sharding_rule<([i, i]) -> ([i]) {i=2}>} {
  return
}

// -----

// expected-error @+1 {{factor 'j' is used by no operand or result}}
func.func @rule_factor_unused() attributes {rule = #dnn.sharding_rule<([i]) -> ([i]) {i=2, j=3}>} {
  return
}

// -----

// expected-error @+1 {{parallel factor 'j' is missing from result #0; a factor some results lack is a reduction}}
func.func @rule_parallel_not_in_result() attributes {rule = #dnn.sharding_rule<([i, j]) -> ([i]) {i=2, j=3}>} {
  return
}

// -----

// expected-error @+1 {{parallel factor 'j' is missing from result #1}}
func.func @rule_parallel_not_in_every_result() attributes {rule = #dnn.sharding_rule<([i, j]) -> ([i, j], [i]) {i=2, j=3}>} {
  return
}

// -----

// expected-error @+1 {{reduction factor 'j' appears in every result; a reduction factor must leave some result partial}}
func.func @rule_reduction_in_result() attributes {rule = #dnn.sharding_rule<([i, j]) -> ([i, j]) {i=2, j=3} reduction={j:sum}>} {
  return
}

// -----

// expected-error @+1 {{factor 'k' has no size}}
func.func @rule_factor_without_size() attributes {rule = #dnn.sharding_rule<([i, k]) -> ([i]) {i=2}>} {
  return
}

// -----

// expected-error @+1 {{factor 'i' has two sizes}}
func.func @rule_factor_two_sizes() attributes {rule = #dnn.sharding_rule<([i]) -> ([i]) {i=2, i=3}>} {
  return
}

// -----

// expected-error @+1 {{unknown factor 'k'}}
func.func @rule_unknown_factor_kind() attributes {rule = #dnn.sharding_rule<([i]) -> ([i]) {i=2} replication={k}>} {
  return
}

// -----

// expected-error @+1 {{factor 'i' has two kinds}}
func.func @rule_two_kinds() attributes {rule = #dnn.sharding_rule<([i]) -> ([i]) {i=2} replication={i} halo={i}>} {
  return
}

// -----

// expected-error @+1 {{expected a reduction kind (sum, max, min, prod, mean), got 'halo'}}
func.func @rule_reduction_kind() attributes {rule = #dnn.sharding_rule<([i, j]) -> ([i]) {i=2, j=3} reduction={j:halo}>} {
  return
}

// -----

// expected-error @+1 {{invalid factor names 'i2': expected letters, each optionally followed by '_' and digits}}
func.func @rule_factor_name() attributes {rule = #dnn.sharding_rule<([i2]) -> ([i2]) {i=2}>} {
  return
}

// -----

// expected-error @+1 {{expected factor names or '1' (a dimension without factors)}}
func.func @rule_dim_integer() attributes {rule = #dnn.sharding_rule<([2]) -> ([2]) {}>} {
  return
}

// -----

func.func @pinned_rule_not_a_rule(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'dnn.sharding_rule' must be a #dnn.sharding_rule attribute}}
  %0 = dnn.relu %x {dnn.sharding_rule = 1 : i64} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// expected-error @+1 {{'dnn.sharding_rule' is only allowed on ops with a sharding rule}}
func.func @pinned_rule_on_func() attributes {dnn.sharding_rule = #dnn.sharding_rule<() -> () {}>} {
  return
}

// -----

func.func @pinned_rule_operands(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'dnn.sharding_rule' the rule has 2 operand mapping(s) but the op has 1 operand(s)}}
  %0 = dnn.relu %x {dnn.sharding_rule = #dnn.sharding_rule<([i], [i]) -> ([i]) {i=4}>} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @pinned_rule_results(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'dnn.sharding_rule' the rule has 2 result mapping(s) but the op has 1 result(s)}}
  %0 = dnn.relu %x {dnn.sharding_rule = #dnn.sharding_rule<([i]) -> ([i], [i]) {i=4}>} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @pinned_rule_rank(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'dnn.sharding_rule' result #0 has rank 1 but the rule maps 2 dimension(s)}}
  %0 = dnn.relu %x {dnn.sharding_rule = #dnn.sharding_rule<([i]) -> ([i, 1]) {i=4}>} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @pinned_rule_extent(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'dnn.sharding_rule' dimension 0 of operand #0 has extent 4 but its factors multiply to 6}}
  %0 = dnn.relu %x {dnn.sharding_rule = #dnn.sharding_rule<([ij]) -> ([ij]) {i=2, j=3}>} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @pinned_rule_factors(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'dnn.sharding_rule' must have the factors of the op's own rule #dnn.sharding_rule<([i]) -> ([i]) {i=4}>}}
  %0 = dnn.relu %x {dnn.sharding_rule = #dnn.sharding_rule<([ij]) -> ([ij]) {i=2, j=2}>} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @pinned_rule_kind(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{'dnn.sharding_rule' may only turn factors into 'replication', but factor 'j' is 'parallel' where the op's rule has 'replication'}}
  %0 = dnn.softmax %x axis = 1 {dnn.sharding_rule = #dnn.sharding_rule<([i, j]) -> ([i, j]) {i=2, j=4}>} : tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// A pinned rule is only checked (and the op's rule computed) once the op
// itself is valid.
func.func @pinned_rule_invalid_op(%x: tensor<4xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{element count changes from 4 to 3}}
  %0 = dnn.reshape %x {dnn.sharding_rule = #dnn.sharding_rule<([i]) -> ([i]) {i=4}>} : tensor<4xf32> -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
