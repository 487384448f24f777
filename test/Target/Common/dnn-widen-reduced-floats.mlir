// RUN: dnnc-opt %s --split-input-file --dnn-widen-reduced-floats | FileCheck %s

// A fused bf16 chain computes in f32: each input is extended once, constants
// are f32, the f32 -> bf16 -> f32 round trip between two fused ops is
// dropped, and only the yielded value is rounded.
#map = affine_map<(d0) -> (d0)>
// CHECK-LABEL: func.func @chain
// CHECK: ^bb0(%[[X:.*]]: bf16, %[[Y:.*]]: bf16, %{{.*}}: bf16):
// CHECK-DAG: %[[YW:.*]] = arith.extf %[[Y]] : bf16 to f32
// CHECK-DAG: %[[XW:.*]] = arith.extf %[[X]] : bf16 to f32
// CHECK-DAG: %[[C:.*]] = arith.constant 5.000000e-01 : f32
// CHECK: %[[S:.*]] = arith.addf %[[XW]], %[[YW]] : f32
// CHECK: %[[M:.*]] = arith.mulf %[[S]], %[[C]] : f32
// CHECK: %[[T:.*]] = math.tanh %[[M]] : f32
// CHECK: %[[N:.*]] = arith.maximumf %[[T]], %[[XW]] : f32
// CHECK: %[[R:.*]] = arith.truncf %[[N]] : f32 to bf16
// CHECK: linalg.yield %[[R]] : bf16
func.func @chain(%a: tensor<8xbf16>, %b: tensor<8xbf16>) -> tensor<8xbf16> {
  %e = tensor.empty() : tensor<8xbf16>
  %0 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel"]}
      ins(%a, %b : tensor<8xbf16>, tensor<8xbf16>) outs(%e : tensor<8xbf16>) {
  ^bb0(%x: bf16, %y: bf16, %o: bf16):
    %c = arith.constant 5.000000e-01 : bf16
    %s = arith.addf %x, %y : bf16
    %m = arith.mulf %s, %c : bf16
    %t = math.tanh %m : bf16
    %w = arith.extf %t : bf16 to f32
    %z = arith.truncf %w : f32 to bf16
    %n = arith.maximumf %z, %x : bf16
    linalg.yield %n : bf16
  } -> tensor<8xbf16>
  return %0 : tensor<8xbf16>
}

// -----

// f16 too; comparisons give i1 and f32 bodies are left alone.
#map = affine_map<(d0) -> (d0)>
// CHECK-LABEL: func.func @compare
// CHECK: ^bb0(%[[A:.*]]: f16, %[[B:.*]]: f16, %{{.*}}: i1):
// CHECK-DAG: %[[AW:.*]] = arith.extf %[[A]] : f16 to f32
// CHECK-DAG: %[[BW:.*]] = arith.extf %[[B]] : f16 to f32
// CHECK: arith.cmpf olt, %[[AW]], %[[BW]] : f32
// CHECK: linalg.yield %{{.*}} : i1
// CHECK: arith.addf %{{.*}}, %{{.*}} : f32
// CHECK-NOT: extf
func.func @compare(%a: tensor<8xf16>, %b: tensor<8xf16>, %c: tensor<8xf32>) -> (tensor<8xi1>, tensor<8xf32>) {
  %e = tensor.empty() : tensor<8xi1>
  %0 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel"]}
      ins(%a, %b : tensor<8xf16>, tensor<8xf16>) outs(%e : tensor<8xi1>) {
  ^bb0(%x: f16, %y: f16, %o: i1):
    %l = arith.cmpf olt, %x, %y : f16
    linalg.yield %l : i1
  } -> tensor<8xi1>
  %f = tensor.empty() : tensor<8xf32>
  %1 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]}
      ins(%c : tensor<8xf32>) outs(%f : tensor<8xf32>) {
  ^bb0(%x: f32, %o: f32):
    %s = arith.addf %x, %x : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  return %0, %1 : tensor<8xi1>, tensor<8xf32>
}
