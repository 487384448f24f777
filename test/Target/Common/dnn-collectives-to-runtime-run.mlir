// Runs dist.shard_slice lowered by dnn-collectives-to-runtime on the CPU,
// once per device of a 2x2 mesh, and checks that each device keeps its
// block. The module defines dnnc_rt_group_index itself (the pass calls an
// existing definition): it answers from @coords, which @main sets to each
// device's mesh coordinates in turn.

// REQUIRES: mlir-runner
// DEFINE: %{to_llvm} = --one-shot-bufferize="bufferize-function-boundaries" \
// DEFINE:   --convert-linalg-to-loops --expand-strided-metadata --lower-affine \
// DEFINE:   --convert-scf-to-cf --finalize-memref-to-llvm \
// DEFINE:   --convert-arith-to-llvm --convert-cf-to-llvm \
// DEFINE:   --convert-func-to-llvm --reconcile-unrealized-casts
// DEFINE: %{run} = mlir-runner -e main -entry-point-result=void \
// DEFINE:   -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils

// RUN: dnnc-opt %s --dnn-collectives-to-runtime | mlir-opt %{to_llvm} \
// RUN: | %{run} | FileCheck %s

// The cpu device pipeline lowers the slices' dynamic offsets completely
// (expand-strided-metadata gives them as affine.apply).
// RUN: dnnc-opt %s --dnnc-cpu-device \
// RUN: | FileCheck %s --check-prefix=DEVICE --implicit-check-not=affine
// DEVICE: llvm.call @dnnc_rt_group_index

dist.mesh @m ["x" = 2 : intra, "y" = 2 : intra]

func.func private @printMemrefF32(tensor<*xf32> {bufferization.access = "read"})

/// This device's coordinates on x and y.
memref.global "private" @coords : memref<2xi64> = dense<0>

/// The runtime kernel for a one-axis mask: mask 1 is x, mask 2 is y.
func.func @dnnc_rt_group_index(%mask: i64) -> i64 {
  %coords = memref.get_global @coords : memref<2xi64>
  %c1 = arith.constant 1 : i64
  %axis = arith.shrui %mask, %c1 : i64
  %i = arith.index_cast %axis : i64 to index
  %v = memref.load %coords[%i] : memref<2xi64>
  return %v : i64
}

/// Dim 0 over x and dim 1 over y; then dim 0 over y then x.
func.func @slices(%a: tensor<4x8xf32>) -> (tensor<2x4xf32>, tensor<1x8xf32>) {
  %0 = dist.shard_slice %a to <@m, [{"x"}, {"y"}]> : tensor<4x8xf32> -> tensor<2x4xf32>
  %1 = dist.shard_slice %a to <@m, [{"y", "x"}, {}]> : tensor<4x8xf32> -> tensor<1x8xf32>
  return %0, %1 : tensor<2x4xf32>, tensor<1x8xf32>
}

func.func @main() {
  // a[i, j] = 8 * i + j.
  %a = arith.constant dense<[[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0],
                             [8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0],
                             [16.0, 17.0, 18.0, 19.0, 20.0, 21.0, 22.0, 23.0],
                             [24.0, 25.0, 26.0, 27.0, 28.0, 29.0, 30.0, 31.0]]>
      : tensor<4x8xf32>
  %coords = memref.get_global @coords : memref<2xi64>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  scf.for %x = %c0 to %c2 step %c1 {
    scf.for %y = %c0 to %c2 step %c1 {
      %xi = arith.index_cast %x : index to i64
      %yi = arith.index_cast %y : index to i64
      memref.store %xi, %coords[%c0] : memref<2xi64>
      memref.store %yi, %coords[%c1] : memref<2xi64>
      %s:2 = func.call @slices(%a) : (tensor<4x8xf32>) -> (tensor<2x4xf32>, tensor<1x8xf32>)
      %u0 = tensor.cast %s#0 : tensor<2x4xf32> to tensor<*xf32>
      func.call @printMemrefF32(%u0) : (tensor<*xf32>) -> ()
      %u1 = tensor.cast %s#1 : tensor<1x8xf32> to tensor<*xf32>
      func.call @printMemrefF32(%u1) : (tensor<*xf32>) -> ()
    }
  }
  return
}

// Device (x 0, y 0): rows 0-1, columns 0-3; row 0 (block y * 2 + x).
// CHECK: [0,   1,   2,   3],
// CHECK-NEXT: [8,   9,   10,   11]
// CHECK: [0,   1,   2,   3,   4,   5,   6,   7]
// Device (x 0, y 1): rows 0-1, columns 4-7; row 2.
// CHECK: [4,   5,   6,   7],
// CHECK-NEXT: [12,   13,   14,   15]
// CHECK: [16,   17,   18,   19,   20,   21,   22,   23]
// Device (x 1, y 0): rows 2-3, columns 0-3; row 1.
// CHECK: [16,   17,   18,   19],
// CHECK-NEXT: [24,   25,   26,   27]
// CHECK: [8,   9,   10,   11,   12,   13,   14,   15]
// Device (x 1, y 1): rows 2-3, columns 4-7; row 3.
// CHECK: [20,   21,   22,   23],
// CHECK-NEXT: [28,   29,   30,   31]
// CHECK: [24,   25,   26,   27,   28,   29,   30,   31]
