// RUN: dnnc-opt %s --dnn-fuse-elementwise | FileCheck %s

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>

// Chains of elementwise generics still become one generic.
// CHECK-LABEL: func.func @chain(
// CHECK: linalg.generic
// CHECK: math.tanh
// CHECK-NEXT: arith.mulf
// CHECK-NOT: linalg.generic
func.func @chain(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %0 = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %t = math.tanh %in : f32
    linalg.yield %t : f32
  } -> tensor<4x8xf32>
  %1 = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%0, %x : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<4x8xf32>
  return %1 : tensor<4x8xf32>
}

// A [8] vector computed elementwise and then broadcast to [4, 8] stays
// apart: fused, the exp would run 4 times per element.
// CHECK-LABEL: func.func @no_fusion_into_broadcast(
// CHECK: %[[EXP:.*]] = linalg.generic
// CHECK: math.exp
// CHECK: linalg.generic
// CHECK-SAME: ins(%[[EXP]], %{{.*}} : tensor<8xf32>, tensor<4x8xf32>)
// CHECK-NOT: math.exp
func.func @no_fusion_into_broadcast(%v: tensor<8xf32>, %x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %e1 = tensor.empty() : tensor<8xf32>
  %0 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%v : tensor<8xf32>) outs(%e1 : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %t = math.exp %in : f32
    linalg.yield %t : f32
  } -> tensor<8xf32>
  %e2 = tensor.empty() : tensor<4x8xf32>
  %1 = linalg.generic {indexing_maps = [#row, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%0, %x : tensor<8xf32>, tensor<4x8xf32>) outs(%e2 : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %m = arith.addf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<4x8xf32>
  return %1 : tensor<4x8xf32>
}

// The [2, 16, 256] activation of a [2, 16, 256] x [256, 64] product: the
// matmul stays a named linalg.matmul on the collapsed [32, 256] operand (for
// BLAS) and the tanh is computed once per element, not 64 times.
// CHECK-LABEL: func.func @no_fusion_into_matmul(
// CHECK: %[[T:.*]] = linalg.generic
// CHECK: math.tanh
// CHECK: %[[C:.*]] = tensor.collapse_shape %[[T]]
// CHECK: linalg.matmul ins(%[[C]], %{{.*}} : tensor<32x256xf32>, tensor<256x64xf32>)
func.func @no_fusion_into_matmul(%x: tensor<2x16x256xf32>, %w: tensor<256x64xf32>) -> tensor<32x64xf32> {
  %e = tensor.empty() : tensor<2x16x256xf32>
  %0 = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : tensor<2x16x256xf32>) outs(%e : tensor<2x16x256xf32>) {
  ^bb0(%in: f32, %out: f32):
    %t = math.tanh %in : f32
    linalg.yield %t : f32
  } -> tensor<2x16x256xf32>
  %c = tensor.collapse_shape %0 [[0, 1], [2]] : tensor<2x16x256xf32> into tensor<32x256xf32>
  %z = arith.constant 0.0 : f32
  %e2 = tensor.empty() : tensor<32x64xf32>
  %f = linalg.fill ins(%z : f32) outs(%e2 : tensor<32x64xf32>) -> tensor<32x64xf32>
  %1 = linalg.matmul ins(%c, %w : tensor<32x256xf32>, tensor<256x64xf32>) outs(%f : tensor<32x64xf32>) -> tensor<32x64xf32>
  return %1 : tensor<32x64xf32>
}

// A producer read once per element by a reduction is fused into it.
// CHECK-LABEL: func.func @fusion_into_reduction(
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "reduction"]
// CHECK: math.exp
// CHECK-NEXT: arith.addf
// CHECK-NOT: linalg.generic
func.func @fusion_into_reduction(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %0 = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %t = math.exp %in : f32
    linalg.yield %t : f32
  } -> tensor<4x8xf32>
  %z = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<4xf32>
  %f = linalg.fill ins(%z : f32) outs(%e1 : tensor<4xf32>) -> tensor<4xf32>
  %1 = linalg.generic {indexing_maps = [#id2, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
      ins(%0 : tensor<4x8xf32>) outs(%f : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %in, %out : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %1 : tensor<4xf32>
}

// A splat operand of an unsigned type folded into the body: a signless
// scalar constant (arith takes signless integers only), whose cast to ui8
// and back folds away.
// CHECK-LABEL: func.func @unsigned_splat
// CHECK: %[[C:.*]] = arith.constant 1 : i8
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<2xui8>) outs(
// CHECK: arith.subi %{{.*}}, %[[C]] : i8
func.func @unsigned_splat(%x: tensor<2xui8>) -> tensor<2xui8> {
  %c = arith.constant dense<1> : tensor<2xui8>
  %e = tensor.empty() : tensor<2xui8>
  %0 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                       iterator_types = ["parallel"]}
      ins(%x, %c : tensor<2xui8>, tensor<2xui8>) outs(%e : tensor<2xui8>) {
  ^bb0(%a: ui8, %b: ui8, %out: ui8):
    %a1 = builtin.unrealized_conversion_cast %a : ui8 to i8
    %b1 = builtin.unrealized_conversion_cast %b : ui8 to i8
    %s = arith.subi %a1, %b1 : i8
    %r = builtin.unrealized_conversion_cast %s : i8 to ui8
    linalg.yield %r : ui8
  } -> tensor<2xui8>
  return %0 : tensor<2xui8>
}

// A producer whose body reads its init (an accumulating product without
// summed dims) stays apart from the reduction that consumes it: fused, its
// result would become a second, full-rank output of the reduction.
// CHECK-LABEL: func.func @init_reading_producer
// CHECK: %[[P:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]{{.*}} ins(%[[P]] :
func.func @init_reading_producer(%a: tensor<2x5xf32>, %b: tensor<2x5xf32>) -> tensor<2xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x5xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<2x5xf32>) -> tensor<2x5xf32>
  %p = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%a, %b : tensor<2x5xf32>, tensor<2x5xf32>) outs(%f : tensor<2x5xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<2x5xf32>
  %e2 = tensor.empty() : tensor<2xf32>
  %f2 = linalg.fill ins(%z : f32) outs(%e2 : tensor<2xf32>) -> tensor<2xf32>
  %r = linalg.generic {indexing_maps = [#id2, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
      ins(%p : tensor<2x5xf32>) outs(%f2 : tensor<2xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %acc, %x : f32
    linalg.yield %s : f32
  } -> tensor<2xf32>
  return %r : tensor<2xf32>
}

// A broadcast with several elementwise consumers (CSE merges the broadcasts
// of one scalar) fuses into each of them: nothing is written out whole.
// CHECK-LABEL: func.func @shared_broadcast(
// CHECK-COUNT-2: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<4x4xf32>, tensor<f32>)
// CHECK-NOT: linalg.generic
func.func @shared_broadcast(%s: tensor<f32>, %x: tensor<4x4xf32>, %y: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  %e = tensor.empty() : tensor<4x4xf32>
  %b = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> ()>, #id2], iterator_types = ["parallel", "parallel"]} ins(%s : tensor<f32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<4x4xf32>
  %e1 = tensor.empty() : tensor<4x4xf32>
  %0 = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%x, %b : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e1 : tensor<4x4xf32>) {
  ^bb0(%a: f32, %c: f32, %out: f32):
    %m = arith.mulf %a, %c : f32
    linalg.yield %m : f32
  } -> tensor<4x4xf32>
  %e2 = tensor.empty() : tensor<4x4xf32>
  %1 = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%y, %b : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e2 : tensor<4x4xf32>) {
  ^bb0(%a: f32, %c: f32, %out: f32):
    %m = arith.addf %a, %c : f32
    linalg.yield %m : f32
  } -> tensor<4x4xf32>
  return %0, %1 : tensor<4x4xf32>, tensor<4x4xf32>
}
