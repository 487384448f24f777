// RUN: dnnc-opt %s --split-input-file --dnn-outline-weights=min-elements=4 | FileCheck %s

// Constants above the threshold become trailing weight arguments named after
// their location; small ones and splats stay.
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[X:.*]]: tensor<2x4xf32> {dnn.name = "x"},
// CHECK-SAME: %[[W:.*]]: tensor<2x4xf32> {dnn.name = "fc.weight", dnn.weight = dense<{{\[\[}}1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00], [5.000000e+00, 6.000000e+00, 7.000000e+00, 8.000000e+00]]> : tensor<2x4xf32>})
// CHECK-NOT: dnn.weight
// CHECK-DAG: %[[S:.*]] = dnn.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
// CHECK-DAG: %[[T:.*]] = dnn.constant dense<3.000000e+00> : tensor<2x4xf32>
// CHECK: %[[A:.*]] = dnn.add %[[X]], %[[W]]
// CHECK: dnn.mul %[[A]], %[[T]]
func.func @main(%x: tensor<2x4xf32> {dnn.name = "x"}) -> (tensor<2x4xf32>, tensor<2xf32>) {
  %w = dnn.constant dense<[[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]]> : tensor<2x4xf32> loc("fc.weight")
  %s = dnn.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %t = dnn.constant dense<3.0> : tensor<2x4xf32>
  %y = dnn.add %x, %w : tensor<2x4xf32>
  %z = dnn.mul %y, %t : tensor<2x4xf32>
  return %z, %s : tensor<2x4xf32>, tensor<2xf32>
}

// -----

// Weight references (`dnnc --plan-only`) are weights already: they stay as
// they are, and constants are outlined after them.
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[X:.*]]: tensor<2x4xf32> {dnn.name = "x"},
// CHECK-SAME: %[[R:.*]]: tensor<2x4xf32> {dnn.name = "fc.weight", dnn.weight_ref},
// CHECK-SAME: %[[W:.*]]: tensor<2x4xf32> {dnn.name = "fc.bias", dnn.weight = dense<{{.*}}> : tensor<2x4xf32>})
// CHECK: %[[A:.*]] = dnn.mul %[[X]], %[[R]]
// CHECK: dnn.add %[[A]], %[[W]]
func.func @main(%x: tensor<2x4xf32> {dnn.name = "x"}, %r: tensor<2x4xf32> {dnn.name = "fc.weight", dnn.weight_ref}) -> tensor<2x4xf32> {
  %b = dnn.constant dense<[[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]]> : tensor<2x4xf32> loc("fc.bias")
  %y = dnn.mul %x, %r : tensor<2x4xf32>
  %z = dnn.add %y, %b : tensor<2x4xf32>
  return %z : tensor<2x4xf32>
}
