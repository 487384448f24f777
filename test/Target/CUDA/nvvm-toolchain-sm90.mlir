// REQUIRES: ptxas
// RUN: mlir-opt %s --convert-linalg-to-parallel-loops --gpu-map-parallel-loops \
// RUN:   --convert-parallel-loops-to-gpu --lower-affine --gpu-kernel-outlining \
// RUN:   --canonicalize \
// RUN:   "--gpu-lower-to-nvvm-pipeline=cubin-chip=sm_90 cubin-features=+ptx80 cubin-format=bin" \
// RUN:   | FileCheck %s

// The toolchain path of the cuda target, without a GPU: an elementwise
// linalg op becomes a gpu kernel whose sm_90 cubin (an ELF image) is embedded
// in a gpu.binary, and a host function that launches it.

// CHECK: module attributes {gpu.container_module}
// CHECK: llvm.func @relu(
// CHECK: gpu.launch_func @relu_kernel::@relu_kernel
// CHECK: gpu.binary @relu_kernel [#gpu.object<#nvvm.target<chip = "sm_90", features = "+ptx80">, {{.*}}bin = "\7FELF
func.func @relu(%a: memref<4x8xf32>, %out: memref<4x8xf32>) {
  %z = arith.constant 0.0 : f32
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>,
                                   affine_map<(i, j) -> (i, j)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<4x8xf32>) outs(%out : memref<4x8xf32>) {
  ^bb0(%x: f32, %o: f32):
    %m = arith.maximumf %x, %z : f32
    linalg.yield %m : f32
  }
  return
}
