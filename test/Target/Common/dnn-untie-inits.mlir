// RUN: dnnc-opt %s --dnn-untie-inits | FileCheck %s

// The first matmul gets a clone of the shared fill (and of its tensor.empty),
// the last one the fill itself, moved down to it (and the fill's
// tensor.empty, now with that one use, down to the fill).
// CHECK-LABEL: func.func @shared(
// CHECK-SAME: %[[A:.*]]: tensor<4x8xf32>, %[[B:.*]]: tensor<8x3xf32>
// CHECK: %[[Z:.*]] = arith.constant 0.0
// CHECK-NEXT: %[[E0:.*]] = tensor.empty() : tensor<4x3xf32>
// CHECK-NEXT: %[[F0:.*]] = linalg.fill ins(%[[Z]] : f32) outs(%[[E0]] : tensor<4x3xf32>)
// CHECK-NEXT: linalg.matmul ins(%[[A]], %[[B]] : {{.*}}) outs(%[[F0]] : tensor<4x3xf32>)
// CHECK-NEXT: %[[E1:.*]] = tensor.empty() : tensor<4x3xf32>
// CHECK-NEXT: %[[F1:.*]] = linalg.fill ins(%[[Z]] : f32) outs(%[[E1]] : tensor<4x3xf32>)
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

// A tensor.empty shared by the inits of several ops (as CSE leaves them):
// each op but the last gets a clone right before it, the last one the
// original, moved down to it.
// CHECK-LABEL: func.func @shared_empty(
// CHECK-SAME: %[[X:.*]]: tensor<8xf32>
// CHECK-NEXT: %[[E0:.*]] = tensor.empty() : tensor<8xf32>
// CHECK-NEXT: %[[A:.*]] = linalg.generic {{.*}} ins(%[[X]] : tensor<8xf32>) outs(%[[E0]] : tensor<8xf32>)
// CHECK: %[[E1:.*]] = tensor.empty() : tensor<8xf32>
// CHECK-NEXT: %[[B:.*]] = linalg.generic {{.*}} ins(%[[A]] : tensor<8xf32>) outs(%[[E1]] : tensor<8xf32>)
// CHECK: %[[E2:.*]] = tensor.empty() : tensor<8xf32>
// CHECK-NEXT: linalg.generic {{.*}} ins(%[[B]] : tensor<8xf32>) outs(%[[E2]] : tensor<8xf32>)
// CHECK-NOT: tensor.empty
#id = affine_map<(d0) -> (d0)>
func.func @shared_empty(%x: tensor<8xf32>) -> tensor<8xf32> {
  %e = tensor.empty() : tensor<8xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %n = arith.negf %in : f32
    linalg.yield %n : f32
  } -> tensor<8xf32>
  %b = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%a : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %n = math.absf %in : f32
    linalg.yield %n : f32
  } -> tensor<8xf32>
  %c = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%b : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %n = arith.negf %in : f32
    linalg.yield %n : f32
  } -> tensor<8xf32>
  return %c : tensor<8xf32>
}
