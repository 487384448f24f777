// REQUIRES: ptxas
// RUN: dnnc-opt %s --dnnc-cuda-device | FileCheck %s

// The cuda device pipeline on a relu(a + b) feeding a matmul: the fused
// elementwise op becomes one kernel with an embedded sm_90 cubin, launched
// from the host code; the matmul a call of the runtime's cuBLASLt GEMM on the
// device pointers; `dnnc_entry` wraps @main as on cpu.

// CHECK: module attributes {gpu.container_module}
// CHECK: llvm.func @dnnc_rt_cuda_gemm_f32(i64, i64, i64, i64, i64, i64, i64, i64, i64, i64)
// CHECK: llvm.func internal @main(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr)
// CHECK: gpu.launch_func @main_kernel::@main_kernel
// CHECK-NOT: gpu.launch_func
// CHECK: llvm.call @dnnc_rt_cuda_gemm_f32(
// CHECK: gpu.binary @main_kernel [#gpu.object<#nvvm.target<chip = "sm_90", features = "+ptx80">, {{.*}}bin = "\7FELF
// CHECK-NOT: gpu.binary
// CHECK: llvm.func @dnnc_entry(%{{.*}}: !llvm.ptr)
func.func @main(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>, %w: tensor<8x3xf32>)
    -> (tensor<4x8xf32>, tensor<4x3xf32>) {
  %0 = dnn.add %a, %b : tensor<4x8xf32>
  %1 = dnn.relu %0 : tensor<4x8xf32>
  %2 = dnn.matmul %1, %w : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
  return %1, %2 : tensor<4x8xf32>, tensor<4x3xf32>
}
