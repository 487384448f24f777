// RUN: dnnc-opt %s | dnnc-opt | FileCheck %s
// RUN: dnnc-opt %s --mlir-print-op-generic | dnnc-opt | FileCheck %s

// A pipeline of 2 ranks along mesh axis "pp" with 2 chunks each (virtual
// stages 0 to 3, stage k on rank k % 2): ops carry their stage, values flow
// from earlier stages to later ones (stage 3 uses stage 0's), and ops
// without a stage are allowed. The verifier's errors are in invalid.mlir.

// CHECK: module attributes {dist.pipeline = #dist.pipeline<axis = "pp", stages = 2, chunks = 2, microbatches = 8, schedule = interleaved>}
module attributes {dist.pipeline = #dist.pipeline<axis = "pp", stages = 2, chunks = 2, microbatches = 8, schedule = interleaved>} {
  // CHECK: dist.mesh @mesh ["pp" = 2 : inter, "tp" = 4 : intra]
  dist.mesh @mesh ["pp" = 2 : inter, "tp" = 4 : intra]
  // CHECK-LABEL: func.func @main
  func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    // CHECK: %[[A:.*]] = arith.addf %{{.*}}, %{{.*}} {dist.stage = 0 : i64}
    %0 = arith.addf %x, %x {dist.stage = 0 : i64} : tensor<4xf32>
    // CHECK: %[[B:.*]] = arith.mulf %[[A]], %[[A]] {dist.stage = 1 : i64}
    %1 = arith.mulf %0, %0 {dist.stage = 1 : i64} : tensor<4xf32>
    // CHECK: %[[C:.*]] = arith.subf %[[B]], %[[A]] {dist.stage = 3 : i64}
    %2 = arith.subf %1, %0 {dist.stage = 3 : i64} : tensor<4xf32>
    // CHECK: %[[D:.*]] = arith.negf %[[C]] : tensor<4xf32>
    %3 = arith.negf %2 : tensor<4xf32>
    return %3 : tensor<4xf32>
  }
}
