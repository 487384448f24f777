// RUN: dnnc-opt %s --convert-dnn-to-linalg | FileCheck %s

// Affine maps are printed at the top of the module.
// CHECK-DAG:   #[[$ID1:.*]] = affine_map<(d0) -> (d0)>
// CHECK-DAG:   #[[$ID0:.*]] = affine_map<() -> ()>
// CHECK-DAG:   #[[$ID2:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG:   #[[$ROW:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-DAG:   #[[$ID3:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG:   #[[$DROP1:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG:   #[[$DROP2:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG:   #[[$LAST:.*]] = affine_map<(d0, d1, d2) -> (d2)>
// CHECK-DAG:   #[[$FIRST:.*]] = affine_map<(d0, d1, d2) -> (d0)>
// CHECK-DAG:   #[[$TAIL:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG:   #[[$TO_SCALAR2:.*]] = affine_map<(d0, d1) -> ()>
// CHECK-DAG:   #[[$TO_SCALAR1:.*]] = affine_map<(d0) -> ()>

// CHECK-LABEL: func.func @reduce_sum_keep(
// CHECK-SAME:      %[[X:.*]]: tensor<2x3x4xf32>
// CHECK:         %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:         %[[INIT:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%{{.*}} : tensor<2xf32>)
// CHECK:         %[[SUM:.*]] = linalg.reduce { arith.addf } ins(%[[X]] : tensor<2x3x4xf32>) outs(%[[INIT]] : tensor<2xf32>) dimensions = [1, 2]
// CHECK:         %[[KEEP:.*]] = tensor.expand_shape %[[SUM]] {{\[}}[0, 1, 2]] output_shape [2, 1, 1] : tensor<2xf32> into tensor<2x1x1xf32>
// CHECK:         return %[[KEEP]]
func.func @reduce_sum_keep(%x: tensor<2x3x4xf32>) -> tensor<2x1x1xf32> {
  %0 = dnn.reduce_sum %x axes = [1, 2] keep_dims = true : tensor<2x3x4xf32> -> tensor<2x1x1xf32>
  return %0 : tensor<2x1x1xf32>
}

// An empty axis list reduces nothing.
// CHECK-LABEL: func.func @reduce_sum_empty_axes(
// CHECK-SAME:      %[[X:.*]]: tensor<2x3xf32>
// CHECK-NEXT:    return %[[X]]
func.func @reduce_sum_empty_axes(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = dnn.reduce_sum %x axes = [] keep_dims = true : tensor<2x3xf32> -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @reduce_mean(
// CHECK:         %[[SUM:.*]] = linalg.reduce { arith.addf } ins(%{{.*}} : tensor<2x3x4xf32>) outs(%{{.*}} : tensor<3xf32>) dimensions = [0, 2]
// CHECK:         %[[MEAN:.*]] = linalg.generic {indexing_maps = [#[[$ID1]], #[[$ID1]]], iterator_types = ["parallel"]} ins(%[[SUM]] : tensor<3xf32>)
// CHECK:         ^bb0(%[[S:.*]]: f32, %{{.*}}: f32):
// CHECK:           %[[N:.*]] = arith.constant 8.000000e+00 : f32
// CHECK:           %[[M:.*]] = arith.divf %[[S]], %[[N]] : f32
// CHECK:           linalg.yield %[[M]] : f32
// CHECK:         return %[[MEAN]]
func.func @reduce_mean(%x: tensor<2x3x4xf32>) -> tensor<3xf32> {
  %0 = dnn.reduce_mean %x axes = [0, 2] keep_dims = false : tensor<2x3x4xf32> -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// CHECK-LABEL: func.func @reduce_mean_i32(
// CHECK:         linalg.reduce { arith.addi {{.*}} } ins(%{{.*}} : tensor<2x3xi32>)
// CHECK:         linalg.generic
// CHECK:           %[[N:.*]] = arith.constant 3 : i32
// CHECK:           arith.divsi %{{.*}}, %[[N]] : i32
func.func @reduce_mean_i32(%x: tensor<2x3xi32>) -> tensor<2xi32> {
  %0 = dnn.reduce_mean %x axes = [1] keep_dims = false : tensor<2x3xi32> -> tensor<2xi32>
  return %0 : tensor<2xi32>
}

// Unsigned: signless scalars in the bodies, unsigned division.
// CHECK-LABEL: func.func @reduce_mean_ui16(
// CHECK:         %[[INIT:.*]] = linalg.generic {indexing_maps = [#[[$ID1]]], iterator_types = ["parallel"]} outs(%{{.*}} : tensor<2xui16>)
// CHECK:           %[[Z:.*]] = arith.constant 0 : i16
// CHECK:           builtin.unrealized_conversion_cast %[[Z]] : i16 to ui16
// CHECK:         %[[SUM:.*]] = linalg.reduce ins(%{{.*}} : tensor<2x3xui16>) outs(%[[INIT]] : tensor<2xui16>) dimensions = [1]
// CHECK:           %[[IN:.*]] = builtin.unrealized_conversion_cast %{{.*}} : ui16 to i16
// CHECK:           %[[ACC:.*]] = builtin.unrealized_conversion_cast %{{.*}} : ui16 to i16
// CHECK:           %[[ADD:.*]] = arith.addi %[[ACC]], %[[IN]] : i16
// CHECK:           %[[ADDU:.*]] = builtin.unrealized_conversion_cast %[[ADD]] : i16 to ui16
// CHECK:           linalg.yield %[[ADDU]] : ui16
// CHECK:         linalg.generic {{.*}} ins(%[[SUM]] : tensor<2xui16>)
// CHECK:           arith.divui %{{.*}}, %{{.*}} : i16
func.func @reduce_mean_ui16(%x: tensor<2x3xui16>) -> tensor<2xui16> {
  %0 = dnn.reduce_mean %x axes = [1] keep_dims = false : tensor<2x3xui16> -> tensor<2xui16>
  return %0 : tensor<2xui16>
}

// CHECK-LABEL: func.func @reduce_max_all(
// CHECK:         %[[NEG_INF:.*]] = arith.constant 0xFF800000 : f32
// CHECK:         %[[INIT:.*]] = linalg.fill ins(%[[NEG_INF]] : f32) outs(%{{.*}} : tensor<f32>)
// CHECK:         %[[MAX:.*]] = linalg.reduce { arith.maximumf } ins(%{{.*}} : tensor<2x3xf32>) outs(%[[INIT]] : tensor<f32>) dimensions = [0, 1]
// CHECK:         return %[[MAX]] : tensor<f32>
func.func @reduce_max_all(%x: tensor<2x3xf32>) -> tensor<f32> {
  %0 = dnn.reduce_max %x axes = [0, 1] keep_dims = false : tensor<2x3xf32> -> tensor<f32>
  return %0 : tensor<f32>
}

// CHECK-LABEL: func.func @reduce_max_i8_keep_all(
// CHECK:         %[[MIN:.*]] = arith.constant -128 : i8
// CHECK:         linalg.fill ins(%[[MIN]] : i8)
// CHECK:         %[[MAX:.*]] = linalg.reduce { arith.maxsi }
// CHECK:         tensor.expand_shape %[[MAX]] [] output_shape [1, 1] : tensor<i8> into tensor<1x1xi8>
func.func @reduce_max_i8_keep_all(%x: tensor<2x3xi8>) -> tensor<1x1xi8> {
  %0 = dnn.reduce_max %x axes = [0, 1] keep_dims = true : tensor<2x3xi8> -> tensor<1x1xi8>
  return %0 : tensor<1x1xi8>
}

// CHECK-LABEL: func.func @reduce_max_ui32(
// CHECK:         linalg.generic {indexing_maps = [#[[$ID0]]], iterator_types = []} outs(%{{.*}} : tensor<ui32>)
// CHECK:           arith.constant 0 : i32
// CHECK:         linalg.reduce ins(%{{.*}} : tensor<4xui32>)
// CHECK:           arith.maxui %{{.*}}, %{{.*}} : i32
func.func @reduce_max_ui32(%x: tensor<4xui32>) -> tensor<ui32> {
  %0 = dnn.reduce_max %x axes = [0] keep_dims = false : tensor<4xui32> -> tensor<ui32>
  return %0 : tensor<ui32>
}

// CHECK-LABEL: func.func @reduce_min(
// CHECK:         %[[INF:.*]] = arith.constant 0x7FF0000000000000 : f64
// CHECK:         linalg.fill ins(%[[INF]] : f64)
// CHECK:         %[[MIN:.*]] = linalg.reduce { arith.minimumf }
// CHECK:         tensor.expand_shape %[[MIN]] {{\[}}[0, 1]] output_shape [2, 1] : tensor<2xf64> into tensor<2x1xf64>
func.func @reduce_min(%x: tensor<2x3xf64>) -> tensor<2x1xf64> {
  %0 = dnn.reduce_min %x axes = [1] keep_dims = true : tensor<2x3xf64> -> tensor<2x1xf64>
  return %0 : tensor<2x1xf64>
}

// CHECK-LABEL: func.func @reduce_min_i64(
// CHECK:         %[[MAX:.*]] = arith.constant 9223372036854775807 : i64
// CHECK:         linalg.fill ins(%[[MAX]] : i64)
// CHECK:         linalg.reduce { arith.minsi }
func.func @reduce_min_i64(%x: tensor<2x3xi64>) -> tensor<3xi64> {
  %0 = dnn.reduce_min %x axes = [0] keep_dims = false : tensor<2x3xi64> -> tensor<3xi64>
  return %0 : tensor<3xi64>
}

// CHECK-LABEL: func.func @reduce_prod(
// CHECK:         %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK:         linalg.fill ins(%[[ONE]] : f32)
// CHECK:         linalg.reduce { arith.mulf }
func.func @reduce_prod(%x: tensor<2x3xf32>) -> tensor<2xf32> {
  %0 = dnn.reduce_prod %x axes = [1] keep_dims = false : tensor<2x3xf32> -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// Max, sum of exp(x - max), then exp(x - max) / sum.
// CHECK-LABEL: func.func @softmax(
// CHECK-SAME:      %[[X:.*]]: tensor<2x5xf32>
// CHECK:         %[[NEG_INF:.*]] = arith.constant 0xFF800000 : f32
// CHECK:         %[[MAX_INIT:.*]] = linalg.fill ins(%[[NEG_INF]] : f32) outs(%{{.*}} : tensor<2xf32>)
// CHECK:         %[[MAX:.*]] = linalg.generic {indexing_maps = [#[[$ID2]], #[[$ROW]]], iterator_types = ["parallel", "reduction"]} ins(%[[X]] : tensor<2x5xf32>) outs(%[[MAX_INIT]] : tensor<2xf32>)
// CHECK:           arith.maximumf
// CHECK:         %[[SUM_INIT:.*]] = linalg.fill
// CHECK:         %[[SUM:.*]] = linalg.generic {indexing_maps = [#[[$ID2]], #[[$ROW]], #[[$ROW]]], iterator_types = ["parallel", "reduction"]} ins(%[[X]], %[[MAX]] : tensor<2x5xf32>, tensor<2xf32>) outs(%[[SUM_INIT]] : tensor<2xf32>)
// CHECK:         ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK:           %[[D:.*]] = arith.subf %[[A]], %[[B]] : f32
// CHECK:           %[[E:.*]] = math.exp %[[D]] : f32
// CHECK:           %[[S:.*]] = arith.addf %[[ACC]], %[[E]] : f32
// CHECK:         %[[OUT:.*]] = linalg.generic {indexing_maps = [#[[$ID2]], #[[$ROW]], #[[$ROW]], #[[$ID2]]], iterator_types = ["parallel", "parallel"]} ins(%[[X]], %[[MAX]], %[[SUM]] : tensor<2x5xf32>, tensor<2xf32>, tensor<2xf32>)
// CHECK:         ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32, %[[C:.*]]: f32, %{{.*}}: f32):
// CHECK:           %[[D:.*]] = arith.subf %[[A]], %[[B]] : f32
// CHECK:           %[[E:.*]] = math.exp %[[D]] : f32
// CHECK:           %[[Q:.*]] = arith.divf %[[E]], %[[C]] : f32
// CHECK:           linalg.yield %[[Q]] : f32
// CHECK:         return %[[OUT]]
func.func @softmax(%x: tensor<2x5xf32>) -> tensor<2x5xf32> {
  %0 = dnn.softmax %x axis = 1 : tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}

// (x - max) - log(sum), with the log taken once per row.
// CHECK-LABEL: func.func @log_softmax(
// CHECK-SAME:      %[[X:.*]]: tensor<2x5x3xf32>
// CHECK:         %[[MAX:.*]] = linalg.generic {indexing_maps = [#[[$ID3]], #[[$DROP1]]], iterator_types = ["parallel", "reduction", "parallel"]}
// CHECK:         %[[SUM:.*]] = linalg.generic {indexing_maps = [#[[$ID3]], #[[$DROP1]], #[[$DROP1]]], iterator_types = ["parallel", "reduction", "parallel"]}
// CHECK:         %[[LOG:.*]] = linalg.generic {{.*}} ins(%[[SUM]] : tensor<2x3xf32>)
// CHECK:           math.log
// CHECK:         %[[OUT:.*]] = linalg.generic {indexing_maps = [#[[$ID3]], #[[$DROP1]], #[[$DROP1]], #[[$ID3]]], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[X]], %[[MAX]], %[[LOG]] : tensor<2x5x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>)
// CHECK:         ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32, %[[C:.*]]: f32, %{{.*}}: f32):
// CHECK:           %[[D:.*]] = arith.subf %[[A]], %[[B]] : f32
// CHECK:           %[[R:.*]] = arith.subf %[[D]], %[[C]] : f32
// CHECK:           linalg.yield %[[R]] : f32
// CHECK:         return %[[OUT]]
func.func @log_softmax(%x: tensor<2x5x3xf32>) -> tensor<2x5x3xf32> {
  %0 = dnn.log_softmax %x axis = 1 : tensor<2x5x3xf32>
  return %0 : tensor<2x5x3xf32>
}

// CHECK-LABEL: func.func @layer_norm(
// CHECK-SAME:      %[[X:.*]]: tensor<2x4x8xf32>, %[[SCALE:.*]]: tensor<8xf32>, %[[BIAS:.*]]: tensor<8xf32>
// CHECK:         %[[SUM:.*]] = linalg.generic {indexing_maps = [#[[$ID3]], #[[$DROP2]]], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[X]] : tensor<2x4x8xf32>) outs(%{{.*}} : tensor<2x4xf32>)
// CHECK:           arith.addf
// CHECK:         %[[MEAN:.*]] = linalg.generic {indexing_maps = [#[[$ID2]], #[[$ID2]]], {{.*}} ins(%[[SUM]] : tensor<2x4xf32>)
// CHECK:           %[[N:.*]] = arith.constant 8.000000e+00 : f32
// CHECK:           arith.divf %{{.*}}, %[[N]] : f32
// CHECK:         %[[SQ:.*]] = linalg.generic {indexing_maps = [#[[$ID3]], #[[$DROP2]], #[[$DROP2]]], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[X]], %[[MEAN]] : tensor<2x4x8xf32>, tensor<2x4xf32>)
// CHECK:         ^bb0(%[[A:.*]]: f32, %[[M:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK:           %[[DEV:.*]] = arith.subf %[[A]], %[[M]] : f32
// CHECK:           %[[DEV2:.*]] = arith.mulf %[[DEV]], %[[DEV]] : f32
// CHECK:           arith.addf %[[ACC]], %[[DEV2]] : f32
// CHECK:         %[[INV:.*]] = linalg.generic {{.*}} ins(%[[SQ]] : tensor<2x4xf32>)
// CHECK:           %[[VAR:.*]] = arith.divf %{{.*}}, %{{.*}} : f32
// CHECK:           %[[EPS:.*]] = arith.constant 9.99999974E-6 : f32
// CHECK:           %[[SHIFTED:.*]] = arith.addf %[[VAR]], %[[EPS]] : f32
// CHECK:           %[[STD:.*]] = math.sqrt %[[SHIFTED]] : f32
// CHECK:           %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK:           arith.divf %[[ONE]], %[[STD]] : f32
// CHECK:         %[[Y:.*]] = linalg.generic {indexing_maps = [#[[$ID3]], #[[$DROP2]], #[[$DROP2]], #[[$LAST]], #[[$LAST]], #[[$ID3]]], iterator_types = ["parallel", "parallel", "parallel"]}
// CHECK-SAME:        ins(%[[X]], %[[MEAN]], %[[INV]], %[[SCALE]], %[[BIAS]] :
// CHECK:         ^bb0(%[[A:.*]]: f32, %[[M:.*]]: f32, %[[I:.*]]: f32, %[[S:.*]]: f32, %[[B:.*]]: f32, %{{.*}}: f32):
// CHECK:           %[[DEV:.*]] = arith.subf %[[A]], %[[M]] : f32
// CHECK:           %[[NORM:.*]] = arith.mulf %[[DEV]], %[[I]] : f32
// CHECK:           %[[SCALED:.*]] = arith.mulf %[[NORM]], %[[S]] : f32
// CHECK:           %[[R:.*]] = arith.addf %[[SCALED]], %[[B]] : f32
// CHECK:           linalg.yield %[[R]] : f32
// CHECK:         %[[MEAN_OUT:.*]] = tensor.expand_shape %[[MEAN]] {{\[}}[0], [1, 2]] output_shape [2, 4, 1] : tensor<2x4xf32> into tensor<2x4x1xf32>
// CHECK:         %[[INV_OUT:.*]] = tensor.expand_shape %[[INV]] {{\[}}[0], [1, 2]] output_shape [2, 4, 1] : tensor<2x4xf32> into tensor<2x4x1xf32>
// CHECK:         return %[[Y]], %[[MEAN_OUT]], %[[INV_OUT]]
func.func @layer_norm(%x: tensor<2x4x8xf32>, %s: tensor<8xf32>, %b: tensor<8xf32>) -> (tensor<2x4x8xf32>, tensor<2x4x1xf32>, tensor<2x4x1xf32>) {
  %y, %m, %i = dnn.layer_norm %x, %s, %b axis = 2 epsilon = 1.0e-05 : (tensor<2x4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<2x4x8xf32>, tensor<2x4x1xf32>, tensor<2x4x1xf32>)
  return %y, %m, %i : tensor<2x4x8xf32>, tensor<2x4x1xf32>, tensor<2x4x1xf32>
}

// f16 input: statistics in f32, the normalised value truncated back to f16
// before scale (no bias).
// CHECK-LABEL: func.func @layer_norm_f16(
// CHECK:         linalg.generic {indexing_maps = [#[[$ID3]], #[[$FIRST]]], iterator_types = ["parallel", "reduction", "reduction"]} ins(%{{.*}} : tensor<2x4x8xf16>) outs(%{{.*}} : tensor<2xf32>)
// CHECK:           arith.extf %{{.*}} : f16 to f32
// CHECK:         %[[Y:.*]] = linalg.generic {indexing_maps = [#[[$ID3]], #[[$FIRST]], #[[$FIRST]], #[[$TAIL]], #[[$ID3]]], iterator_types = ["parallel", "parallel", "parallel"]}
// CHECK:         ^bb0(%[[A:.*]]: f16, %[[M:.*]]: f32, %[[I:.*]]: f32, %[[S:.*]]: f16, %{{.*}}: f16):
// CHECK:           %[[WIDE:.*]] = arith.extf %[[A]] : f16 to f32
// CHECK:           %[[DEV:.*]] = arith.subf %[[WIDE]], %[[M]] : f32
// CHECK:           %[[NORM:.*]] = arith.mulf %[[DEV]], %[[I]] : f32
// CHECK:           %[[NARROW:.*]] = arith.truncf %[[NORM]] : f32 to f16
// CHECK:           %[[R:.*]] = arith.mulf %[[NARROW]], %[[S]] : f16
// CHECK:           linalg.yield %[[R]] : f16
// CHECK:         tensor.expand_shape %{{.*}} {{\[}}[0, 1, 2]] output_shape [2, 1, 1] : tensor<2xf32> into tensor<2x1x1xf32>
func.func @layer_norm_f16(%x: tensor<2x4x8xf16>, %s: tensor<4x8xf16>) -> (tensor<2x4x8xf16>, tensor<2x1x1xf32>, tensor<2x1x1xf32>) {
  %y, %m, %i = dnn.layer_norm %x, %s axis = 1 epsilon = 1.0e-05 : (tensor<2x4x8xf16>, tensor<4x8xf16>) -> (tensor<2x4x8xf16>, tensor<2x1x1xf32>, tensor<2x1x1xf32>)
  return %y, %m, %i : tensor<2x4x8xf16>, tensor<2x1x1xf32>, tensor<2x1x1xf32>
}

// One reduction gathers -log_prob[n, label, d] * weights[label] and the
// weight; ignored labels contribute 0 to both; mean = loss sum / weight sum.
// CHECK-LABEL: func.func @sce_mean(
// CHECK-SAME:      %[[SCORES:.*]]: tensor<3x5x2xf32>, %[[LABELS:.*]]: tensor<3x2xi64>, %[[W:.*]]: tensor<5xf32>
// CHECK:         %[[LP:.*]] = linalg.generic {{.*}} ins(%[[SCORES]], %{{.*}}, %{{.*}} : tensor<3x5x2xf32>, tensor<3x2xf32>, tensor<3x2xf32>) outs(%{{.*}} : tensor<3x5x2xf32>)
// CHECK:         %[[SUMS:.*]]:2 = linalg.generic {indexing_maps = [#[[$ID2]], #[[$TO_SCALAR2]], #[[$TO_SCALAR2]]], iterator_types = ["reduction", "reduction"]} ins(%[[LABELS]] : tensor<3x2xi64>) outs(%{{.*}}, %{{.*}} : tensor<f32>, tensor<f32>)
// CHECK:         ^bb0(%[[L:.*]]: i64, %[[ACC_LOSS:.*]]: f32, %[[ACC_W:.*]]: f32):
// CHECK:           %[[IDX:.*]] = arith.index_cast %[[L]] : i64 to index
// CHECK:           %[[C0:.*]] = arith.constant 0 : index
// CHECK:           %[[LO:.*]] = arith.maxsi %[[IDX]], %[[C0]] : index
// CHECK:           %[[C4:.*]] = arith.constant 4 : index
// CHECK:           %[[CLS:.*]] = arith.minsi %[[LO]], %[[C4]] : index
// CHECK:           %[[N:.*]] = linalg.index 0 : index
// CHECK:           %[[D:.*]] = linalg.index 1 : index
// CHECK:           %[[P:.*]] = tensor.extract %[[LP]][%[[N]], %[[CLS]], %[[D]]] : tensor<3x5x2xf32>
// CHECK:           %[[WEIGHT:.*]] = tensor.extract %[[W]][%[[CLS]]] : tensor<5xf32>
// CHECK:           %[[NEG:.*]] = arith.negf %[[P]] : f32
// CHECK:           %[[LOSS:.*]] = arith.mulf %[[NEG]], %[[WEIGHT]] : f32
// CHECK:           %[[IGNORE:.*]] = arith.constant -1 : i64
// CHECK:           %[[IGNORED:.*]] = arith.cmpi eq, %[[L]], %[[IGNORE]] : i64
// CHECK:           %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:           %[[LOSS2:.*]] = arith.select %[[IGNORED]], %[[ZERO]], %[[LOSS]] : f32
// CHECK:           %[[W2:.*]] = arith.select %[[IGNORED]], %[[ZERO]], %[[WEIGHT]] : f32
// CHECK:           %[[S1:.*]] = arith.addf %[[ACC_LOSS]], %[[LOSS2]] : f32
// CHECK:           %[[S2:.*]] = arith.addf %[[ACC_W]], %[[W2]] : f32
// CHECK:           linalg.yield %[[S1]], %[[S2]] : f32, f32
// CHECK:         %[[MEAN:.*]] = linalg.generic {indexing_maps = [#[[$ID0]], #[[$ID0]], #[[$ID0]]], iterator_types = []} ins(%[[SUMS]]#0, %[[SUMS]]#1 : tensor<f32>, tensor<f32>)
// CHECK:           arith.divf
// CHECK:         return %[[MEAN]], %[[LP]]
func.func @sce_mean(%s: tensor<3x5x2xf32>, %l: tensor<3x2xi64>, %w: tensor<5xf32>) -> (tensor<f32>, tensor<3x5x2xf32>) {
  %loss, %lp = dnn.softmax_cross_entropy %s, %l, %w reduction = <mean> {ignore_index = -1 : i64} : (tensor<3x5x2xf32>, tensor<3x2xi64>, tensor<5xf32>) -> (tensor<f32>, tensor<3x5x2xf32>)
  return %loss, %lp : tensor<f32>, tensor<3x5x2xf32>
}

// CHECK-LABEL: func.func @sce_none(
// CHECK-SAME:      %{{.*}}: tensor<3x5xf32>, %[[LABELS:.*]]: tensor<3xi32>
// CHECK:         %[[LP:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<3x5xf32>)
// CHECK:         %[[LOSS:.*]] = linalg.generic {indexing_maps = [#[[$ID1]], #[[$ID1]]], iterator_types = ["parallel"]} ins(%[[LABELS]] : tensor<3xi32>) outs(%{{.*}} : tensor<3xf32>)
// CHECK:           arith.index_cast %{{.*}} : i32 to index
// CHECK:           tensor.extract %[[LP]]
// CHECK-NOT:       arith.select
// CHECK:           linalg.yield
// CHECK:         return %[[LOSS]], %[[LP]]
func.func @sce_none(%s: tensor<3x5xf32>, %l: tensor<3xi32>) -> (tensor<3xf32>, tensor<3x5xf32>) {
  %loss, %lp = dnn.softmax_cross_entropy %s, %l reduction = <none> : (tensor<3x5xf32>, tensor<3xi32>) -> (tensor<3xf32>, tensor<3x5xf32>)
  return %loss, %lp : tensor<3xf32>, tensor<3x5xf32>
}

// CHECK-LABEL: func.func @sce_sum(
// CHECK:         %[[SUMS:.*]]:2 = linalg.generic {indexing_maps = [#[[$ID1]], #[[$TO_SCALAR1]], #[[$TO_SCALAR1]]], iterator_types = ["reduction"]}
// CHECK:         return %[[SUMS]]#0, %{{.*}} : tensor<f32>, tensor<3x5xf32>
func.func @sce_sum(%s: tensor<3x5xf32>, %l: tensor<3xi64>) -> (tensor<f32>, tensor<3x5xf32>) {
  %loss, %lp = dnn.softmax_cross_entropy %s, %l reduction = <sum> : (tensor<3x5xf32>, tensor<3xi64>) -> (tensor<f32>, tensor<3x5xf32>)
  return %loss, %lp : tensor<f32>, tensor<3x5xf32>
}
