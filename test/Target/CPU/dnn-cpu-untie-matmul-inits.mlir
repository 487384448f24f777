// RUN: dnnc-opt %s --dnn-cpu-untie-matmul-inits | FileCheck %s

// The first matmul gets a clone of the shared fill (and of its tensor.empty),
// the last one the fill itself, moved down to it.
// CHECK-LABEL: func.func @shared(
// CHECK-SAME: %[[A:.*]]: tensor<4x8xf32>, %[[B:.*]]: tensor<8x3xf32>
// CHECK: %[[Z:.*]] = arith.constant 0.0
// CHECK: tensor.empty
// CHECK-NEXT: %[[E0:.*]] = tensor.empty() : tensor<4x3xf32>
// CHECK-NEXT: %[[F0:.*]] = linalg.fill ins(%[[Z]] : f32) outs(%[[E0]] : tensor<4x3xf32>)
// CHECK-NEXT: linalg.matmul ins(%[[A]], %[[B]] : {{.*}}) outs(%[[F0]] : tensor<4x3xf32>)
// CHECK-NEXT: %[[F1:.*]] = linalg.fill ins(%[[Z]] : f32) outs(%[[E:.*]] : tensor<4x3xf32>)
// CHECK-NEXT: linalg.matmul ins(%[[A]], %[[B]] : {{.*}}) outs(%[[F1]] : tensor<4x3xf32>)
func.func @shared(%a: tensor<4x8xf32>, %b: tensor<8x3xf32>) -> (tensor<4x3xf32>, tensor<4x3xf32>) {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x3xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<4x3xf32>) -> tensor<4x3xf32>
  %0 = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x3xf32>) outs(%f : tensor<4x3xf32>) -> tensor<4x3xf32>
  %1 = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x3xf32>) outs(%f : tensor<4x3xf32>) -> tensor<4x3xf32>
  return %0, %1 : tensor<4x3xf32>, tensor<4x3xf32>
}

// A fill with one use stays with its matmul.
// CHECK-LABEL: func.func @single(
// CHECK: %[[F:.*]] = linalg.fill
// CHECK-NEXT: linalg.batch_matmul ins(%{{.*}}, %{{.*}} : {{.*}}) outs(%[[F]] : tensor<2x4x3xf32>)
// CHECK-NOT: linalg.fill
func.func @single(%a: tensor<2x4x8xf32>, %b: tensor<2x8x3xf32>) -> tensor<2x4x3xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x4x3xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<2x4x3xf32>) -> tensor<2x4x3xf32>
  %0 = linalg.batch_matmul ins(%a, %b : tensor<2x4x8xf32>, tensor<2x8x3xf32>) outs(%f : tensor<2x4x3xf32>) -> tensor<2x4x3xf32>
  return %0 : tensor<2x4x3xf32>
}
