// RUN: dnnc-opt %s --convert-dnn-to-linalg | FileCheck %s

// Operands are function arguments so that nothing folds.

// CHECK-DAG: #[[BCAST:.*]] = affine_map<(d0, d1, d2) -> (d1, 0)>
// CHECK-DAG: #[[ID3:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[REVERSE:.*]] = affine_map<(d0, d1, d2) -> (d0, -d1 + 1, -d2 + 1)>
// CHECK-DAG: #[[REVERSE2:.*]] = affine_map<(d0, d1) -> (d0, -d1 + 5)>
// CHECK-DAG: #[[GATHER_IDX:.*]] = affine_map<(d0, d1, d2, d3) -> (d1, d2)>
// CHECK-DAG: #[[ID4:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[SCALAR:.*]] = affine_map<(d0, d1) -> ()>
// CHECK-DAG: #[[ID2:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[SCALAR1:.*]] = affine_map<(d0) -> ()>
// CHECK-DAG: #[[ID1:.*]] = affine_map<(d0) -> (d0)>

//===----------------------------------------------------------------------===//
// reshape
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @reshape_collapse
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4xf32>)
// CHECK: %[[R:.*]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1], [2]] : tensor<2x3x4xf32> into tensor<6x4xf32>
// CHECK: return %[[R]]
func.func @reshape_collapse(%x: tensor<2x3x4xf32>) -> tensor<6x4xf32> {
  %0 = dnn.reshape %x : tensor<2x3x4xf32> -> tensor<6x4xf32>
  return %0 : tensor<6x4xf32>
}

// CHECK-LABEL: func.func @reshape_expand
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4xui8>)
// CHECK: %[[R:.*]] = tensor.expand_shape %[[X]] {{\[}}[0], [1], [2, 3]] output_shape [2, 3, 2, 2] : tensor<2x3x4xui8> into tensor<2x3x2x2xui8>
// CHECK: return %[[R]]
func.func @reshape_expand(%x: tensor<2x3x4xui8>) -> tensor<2x3x2x2xui8> {
  %0 = dnn.reshape %x : tensor<2x3x4xui8> -> tensor<2x3x2x2xui8>
  return %0 : tensor<2x3x2x2xui8>
}

// Neither a collapse nor an expand: through the 1-D view.
// CHECK-LABEL: func.func @reshape_general
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4xf32>)
// CHECK: %[[FLAT:.*]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1, 2]] : tensor<2x3x4xf32> into tensor<24xf32>
// CHECK: %[[R:.*]] = tensor.expand_shape %[[FLAT]] {{\[}}[0, 1]] output_shape [4, 6] : tensor<24xf32> into tensor<4x6xf32>
// CHECK: return %[[R]]
func.func @reshape_general(%x: tensor<2x3x4xf32>) -> tensor<4x6xf32> {
  %0 = dnn.reshape %x : tensor<2x3x4xf32> -> tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// Same rank, unit dimension moved.
// CHECK-LABEL: func.func @reshape_same_rank
// CHECK-SAME: (%[[X:.*]]: tensor<1x3xi1>)
// CHECK: %[[FLAT:.*]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1]] : tensor<1x3xi1> into tensor<3xi1>
// CHECK: %[[R:.*]] = tensor.expand_shape %[[FLAT]] {{\[}}[0, 1]] output_shape [3, 1] : tensor<3xi1> into tensor<3x1xi1>
// CHECK: return %[[R]]
func.func @reshape_same_rank(%x: tensor<1x3xi1>) -> tensor<3x1xi1> {
  %0 = dnn.reshape %x : tensor<1x3xi1> -> tensor<3x1xi1>
  return %0 : tensor<3x1xi1>
}

// Rank 0 <-> unit dimensions: reshapes with no reassociation groups.
// CHECK-LABEL: func.func @reshape_scalar
// CHECK-SAME: (%[[X:.*]]: tensor<f32>, %[[Y:.*]]: tensor<1x1xf32>)
// CHECK-DAG: tensor.expand_shape %[[X]] [] output_shape [1, 1] : tensor<f32> into tensor<1x1xf32>
// CHECK-DAG: tensor.expand_shape %[[X]] [] output_shape [1] : tensor<f32> into tensor<1xf32>
// CHECK-DAG: tensor.collapse_shape %[[Y]] [] : tensor<1x1xf32> into tensor<f32>
func.func @reshape_scalar(%x: tensor<f32>, %y: tensor<1x1xf32>)
    -> (tensor<1x1xf32>, tensor<1xf32>, tensor<f32>) {
  %0 = dnn.reshape %x : tensor<f32> -> tensor<1x1xf32>
  %1 = dnn.reshape %x : tensor<f32> -> tensor<1xf32>
  %2 = dnn.reshape %y : tensor<1x1xf32> -> tensor<f32>
  return %0, %1, %2 : tensor<1x1xf32>, tensor<1xf32>, tensor<f32>
}

//===----------------------------------------------------------------------===//
// broadcast_in_dim, transpose
//===----------------------------------------------------------------------===//

// Operand dim 0 -> result dim 1; operand dim 1 (extent 1) is broadcast to
// result dim 2 and read at index 0.
// CHECK-LABEL: func.func @broadcast_in_dim
// CHECK-SAME: (%[[X:.*]]: tensor<3x1xf32>)
// CHECK: %[[INIT:.*]] = tensor.empty() : tensor<2x3x5xf32>
// CHECK: %[[R:.*]] = linalg.generic
// CHECK-SAME: indexing_maps = [#[[BCAST]], #[[ID3]]]
// CHECK-SAME: iterator_types = ["parallel", "parallel", "parallel"]
// CHECK-SAME: ins(%[[X]] : tensor<3x1xf32>) outs(%[[INIT]] : tensor<2x3x5xf32>)
// CHECK: ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: linalg.yield %[[IN]] : f32
// CHECK: return %[[R]]
func.func @broadcast_in_dim(%x: tensor<3x1xf32>) -> tensor<2x3x5xf32> {
  %0 = dnn.broadcast_in_dim %x, dims = [1, 2] : tensor<3x1xf32> -> tensor<2x3x5xf32>
  return %0 : tensor<2x3x5xf32>
}

// CHECK-LABEL: func.func @broadcast_scalar
// CHECK-SAME: (%[[X:.*]]: tensor<i64>)
// CHECK: linalg.generic
// CHECK-SAME: indexing_maps = [#[[SCALAR]], #[[ID2]]]
// CHECK-SAME: ins(%[[X]] : tensor<i64>) outs(%{{.*}} : tensor<2x4xi64>)
func.func @broadcast_scalar(%x: tensor<i64>) -> tensor<2x4xi64> {
  %0 = dnn.broadcast_in_dim %x, dims = [] : tensor<i64> -> tensor<2x4xi64>
  return %0 : tensor<2x4xi64>
}

// CHECK-LABEL: func.func @transpose
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4xbf16>)
// CHECK: %[[INIT:.*]] = tensor.empty() : tensor<4x2x3xbf16>
// CHECK: %[[R:.*]] = linalg.transpose ins(%[[X]] : tensor<2x3x4xbf16>) outs(%[[INIT]] : tensor<4x2x3xbf16>) permutation = [2, 0, 1]
// CHECK: return %[[R]]
func.func @transpose(%x: tensor<2x3x4xbf16>) -> tensor<4x2x3xbf16> {
  %0 = dnn.transpose %x, permutation = [2, 0, 1] : tensor<2x3x4xbf16> -> tensor<4x2x3xbf16>
  return %0 : tensor<4x2x3xbf16>
}

//===----------------------------------------------------------------------===//
// concat
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @concat
// CHECK-SAME: (%[[A:.*]]: tensor<2x3xf32>, %[[B:.*]]: tensor<2x0xf32>, %[[C:.*]]: tensor<2x1xf32>)
// CHECK: %[[INIT:.*]] = tensor.empty() : tensor<2x4xf32>
// CHECK: %[[S0:.*]] = tensor.insert_slice %[[A]] into %[[INIT]][0, 0] [2, 3] [1, 1] : tensor<2x3xf32> into tensor<2x4xf32>
// CHECK-NOT: %[[B]]
// CHECK: %[[S1:.*]] = tensor.insert_slice %[[C]] into %[[S0]][0, 3] [2, 1] [1, 1] : tensor<2x1xf32> into tensor<2x4xf32>
// CHECK: return %[[S1]]
func.func @concat(%a: tensor<2x3xf32>, %b: tensor<2x0xf32>, %c: tensor<2x1xf32>)
    -> tensor<2x4xf32> {
  %0 = dnn.concat %a, %b, %c axis = 1
      : (tensor<2x3xf32>, tensor<2x0xf32>, tensor<2x1xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

//===----------------------------------------------------------------------===//
// slice
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @slice_positive
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4xf32>)
// CHECK: %[[R:.*]] = tensor.extract_slice %[[X]][0, 1, 0] [2, 2, 2] [1, 1, 2] : tensor<2x3x4xf32> to tensor<2x2x2xf32>
// CHECK: return %[[R]]
func.func @slice_positive(%x: tensor<2x3x4xf32>) -> tensor<2x2x2xf32> {
  %0 = dnn.slice %x starts = [0, 1, 0] steps = [1, 1, 2] : tensor<2x3x4xf32> -> tensor<2x2x2xf32>
  return %0 : tensor<2x2x2xf32>
}

// The addressed indices in increasing order (offset start + (n - 1) * step,
// stride |step|), then a generic that reverses the dims of negative step;
// dim 0 (extent 1) reads the same element either way.
// CHECK-LABEL: func.func @slice_negative
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4xf32>)
// CHECK: %[[S:.*]] = tensor.extract_slice %[[X]][1, 0, 1] [1, 2, 2] [1, 2, 2] : tensor<2x3x4xf32> to tensor<1x2x2xf32>
// CHECK: %[[INIT:.*]] = tensor.empty() : tensor<1x2x2xf32>
// CHECK: %[[R:.*]] = linalg.generic
// CHECK-SAME: indexing_maps = [#[[REVERSE]], #[[ID3]]]
// CHECK-SAME: iterator_types = ["parallel", "parallel", "parallel"]
// CHECK-SAME: ins(%[[S]] : tensor<1x2x2xf32>) outs(%[[INIT]] : tensor<1x2x2xf32>)
// CHECK: ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: linalg.yield %[[IN]] : f32
// CHECK: return %[[R]]
func.func @slice_negative(%x: tensor<2x3x4xf32>) -> tensor<1x2x2xf32> {
  %0 = dnn.slice %x starts = [1, 2, 3] steps = [1, -2, -2] : tensor<2x3x4xf32> -> tensor<1x2x2xf32>
  return %0 : tensor<1x2x2xf32>
}

// x[0:4, 11:5:-1]: a dim of step 1 from 0 keeps the identity map, whose
// extent (the slice's 4, not the input's 6) is the result's.
// CHECK-LABEL: func.func @slice_negative_identity_dim
// CHECK-SAME: (%[[X:.*]]: tensor<6x12xf32>)
// CHECK: %[[S:.*]] = tensor.extract_slice %[[X]][0, 6] [4, 6] [1, 1] : tensor<6x12xf32> to tensor<4x6xf32>
// CHECK: linalg.generic
// CHECK-SAME: indexing_maps = [#[[REVERSE2]], #[[ID2]]]
// CHECK-SAME: ins(%[[S]] : tensor<4x6xf32>)
func.func @slice_negative_identity_dim(%x: tensor<6x12xf32>) -> tensor<4x6xf32> {
  %0 = dnn.slice %x starts = [0, 11] steps = [1, -1] : tensor<6x12xf32> -> tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// Negative steps over extents of 1 only: the extract_slice alone.
// CHECK-LABEL: func.func @slice_negative_unit
// CHECK: %[[S:.*]] = tensor.extract_slice %{{.*}}[1, 2] [1, 3] [1, 1]
// CHECK-NOT: linalg.generic
// CHECK: return %[[S]]
func.func @slice_negative_unit(%x: tensor<2x5xf32>) -> tensor<1x3xf32> {
  %0 = dnn.slice %x starts = [1, 2] steps = [-1, 1] : tensor<2x5xf32> -> tensor<1x3xf32>
  return %0 : tensor<1x3xf32>
}

//===----------------------------------------------------------------------===//
// gather
//===----------------------------------------------------------------------===//

// A generic over the result reads the index through d -> (d1, d2), wraps
// negative indices and extracts data[d0, index, d3].
// CHECK-LABEL: func.func @gather
// CHECK-SAME: (%[[DATA:.*]]: tensor<2x3x4xf32>, %[[IDX:.*]]: tensor<2x2xi32>)
// CHECK: %[[INIT:.*]] = tensor.empty() : tensor<2x2x2x4xf32>
// CHECK: %[[R:.*]] = linalg.generic
// CHECK-SAME: indexing_maps = [#[[GATHER_IDX]], #[[ID4]]]
// CHECK-SAME: iterator_types = ["parallel", "parallel", "parallel", "parallel"]
// CHECK-SAME: ins(%[[IDX]] : tensor<2x2xi32>) outs(%[[INIT]] : tensor<2x2x2x4xf32>)
// CHECK: ^bb0(%[[I:.*]]: i32, %{{.*}}: f32):
// CHECK:   %[[ZERO:.*]] = arith.constant 0 : i32
// CHECK:   %[[SIZE:.*]] = arith.constant 3 : i32
// CHECK:   %[[NEG:.*]] = arith.cmpi slt, %[[I]], %[[ZERO]] : i32
// CHECK:   %[[WRAP:.*]] = arith.addi %[[I]], %[[SIZE]] : i32
// CHECK:   %[[NORM:.*]] = arith.select %[[NEG]], %[[WRAP]], %[[I]] : i32
// CHECK:   %[[POS:.*]] = arith.index_cast %[[NORM]] : i32 to index
// CHECK:   %[[D0:.*]] = linalg.index 0 : index
// CHECK:   %[[D3:.*]] = linalg.index 3 : index
// CHECK:   %[[E:.*]] = tensor.extract %[[DATA]][%[[D0]], %[[POS]], %[[D3]]] : tensor<2x3x4xf32>
// CHECK:   linalg.yield %[[E]] : f32
// CHECK: return %[[R]]
func.func @gather(%data: tensor<2x3x4xf32>, %idx: tensor<2x2xi32>)
    -> tensor<2x2x2x4xf32> {
  %0 = dnn.gather %data[%idx] axis = 1
      : (tensor<2x3x4xf32>, tensor<2x2xi32>) -> tensor<2x2x2x4xf32>
  return %0 : tensor<2x2x2x4xf32>
}

// A scalar index removes the axis.
// CHECK-LABEL: func.func @gather_scalar
// CHECK-SAME: (%[[DATA:.*]]: tensor<5x4xui8>, %[[IDX:.*]]: tensor<i64>)
// CHECK: linalg.generic
// CHECK-SAME: indexing_maps = [#[[SCALAR1]], #[[ID1]]]
// CHECK-SAME: ins(%[[IDX]] : tensor<i64>) outs(%{{.*}} : tensor<5xui8>)
// CHECK: ^bb0(%[[I:.*]]: i64, %{{.*}}: ui8):
// CHECK:   arith.constant 4 : i64
// CHECK:   %[[POS:.*]] = arith.index_cast %{{.*}} : i64 to index
// CHECK:   %[[D0:.*]] = linalg.index 0 : index
// CHECK:   tensor.extract %[[DATA]][%[[D0]], %[[POS]]] : tensor<5x4xui8>
func.func @gather_scalar(%data: tensor<5x4xui8>, %idx: tensor<i64>)
    -> tensor<5xui8> {
  %0 = dnn.gather %data[%idx] axis = 1
      : (tensor<5x4xui8>, tensor<i64>) -> tensor<5xui8>
  return %0 : tensor<5xui8>
}
