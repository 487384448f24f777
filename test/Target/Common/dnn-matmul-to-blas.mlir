// RUN: dnnc-opt %s --split-input-file --dnn-matmul-to-blas | FileCheck %s
// The cuda target's kernels: kernel-prefix names them.
// RUN: dnnc-opt %s --split-input-file --dnn-matmul-to-blas=kernel-prefix=dnnc_rt_cuda_gemm | FileCheck %s --check-prefix=CUDA
// CUDA-LABEL: func.func @matmul(
// CUDA: call @dnnc_rt_cuda_gemm_f32(

// CHECK-LABEL: func.func @matmul(
// CHECK-NOT: linalg.fill
// CHECK: %[[PA:.*]] = arith.addi
// CHECK: %[[PB:.*]] = arith.addi
// CHECK: %[[PC:.*]] = arith.addi
// CHECK: call @dnnc_rt_gemm_f32(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[PA]], %{{.*}}, %[[PB]], %{{.*}}, %[[PC]], %{{.*}}) : (i64, i64, i64, i64, index, i64, index, i64, index, i64) -> ()
// CHECK-NOT: linalg.matmul
func.func @matmul(%a: memref<4x8xf32>, %b: memref<8x3xf32>, %c: memref<4x3xf32>) {
  %z = arith.constant 0.0 : f32
  linalg.fill ins(%z : f32) outs(%c : memref<4x3xf32>)
  linalg.matmul ins(%a, %b : memref<4x8xf32>, memref<8x3xf32>) outs(%c : memref<4x3xf32>)
  return
}

// Batch strides: M*K, K*N and M*N elements.
// CHECK-LABEL: func.func @batch(
// CHECK-DAG: %[[B:.*]] = arith.constant 2 : i64
// CHECK-DAG: %[[SA:.*]] = arith.constant 32 : i64
// CHECK-DAG: %[[SB:.*]] = arith.constant 24 : i64
// CHECK-DAG: %[[SC:.*]] = arith.constant 12 : i64
// CHECK: call @dnnc_rt_gemm_f64(%[[B]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[SA]], %{{.*}}, %[[SB]], %{{.*}}, %[[SC]])
func.func @batch(%a: memref<2x4x8xf64>, %b: memref<2x8x3xf64>, %c: memref<2x4x3xf64>) {
  %z = arith.constant 0.0 : f64
  linalg.fill ins(%z : f64) outs(%c : memref<2x4x3xf64>)
  linalg.batch_matmul ins(%a, %b : memref<2x4x8xf64>, memref<2x8x3xf64>) outs(%c : memref<2x4x3xf64>)
  return
}

// bf16/f16 inputs with an f32 result (dnnc --precision) call the _bf16/_f16
// kernels, which accumulate in f32.
// CHECK-LABEL: func.func @reduced(
// CHECK: call @dnnc_rt_gemm_bf16(
// CHECK: call @dnnc_rt_gemm_f16(
func.func @reduced(%a: memref<4x8xbf16>, %b: memref<8x3xbf16>, %h: memref<4x8xf16>, %g: memref<8x3xf16>, %c: memref<4x3xf32>) {
  %z = arith.constant 0.0 : f32
  linalg.fill ins(%z : f32) outs(%c : memref<4x3xf32>)
  linalg.matmul ins(%a, %b : memref<4x8xbf16>, memref<8x3xbf16>) outs(%c : memref<4x3xf32>)
  linalg.fill ins(%z : f32) outs(%c : memref<4x3xf32>)
  linalg.matmul ins(%h, %g : memref<4x8xf16>, memref<8x3xf16>) outs(%c : memref<4x3xf32>)
  return
}

// Without a zero fill in front (accumulation), integers, or strided views the
// matmul stays linalg.
// CHECK-LABEL: func.func @kept(
// CHECK-NOT: call
// CHECK: linalg.matmul
// CHECK: linalg.matmul
// CHECK: linalg.matmul
func.func @kept(%a: memref<4x8xf32>, %b: memref<8x3xf32>, %c: memref<4x3xf32>,
                %ia: memref<4x8xi32>, %ib: memref<8x3xi32>, %ic: memref<4x3xi32>,
                %s: memref<4x8xf32, strided<[16, 1]>>) {
  linalg.matmul ins(%a, %b : memref<4x8xf32>, memref<8x3xf32>) outs(%c : memref<4x3xf32>)
  %zi = arith.constant 0 : i32
  linalg.fill ins(%zi : i32) outs(%ic : memref<4x3xi32>)
  linalg.matmul ins(%ia, %ib : memref<4x8xi32>, memref<8x3xi32>) outs(%ic : memref<4x3xi32>)
  %z = arith.constant 0.0 : f32
  linalg.fill ins(%z : f32) outs(%c : memref<4x3xf32>)
  linalg.matmul ins(%s, %b : memref<4x8xf32, strided<[16, 1]>>, memref<8x3xf32>) outs(%c : memref<4x3xf32>)
  return
}

// -----

// In a module converted with dnnc --precision=tf32, f32 GEMMs call the _tf32
// kernel.
// CHECK-LABEL: func.func @tf32(
// CHECK: call @dnnc_rt_gemm_tf32(
module attributes {dnn.precision = #dnn.precision<tf32>} {
  func.func @tf32(%a: memref<4x8xf32>, %b: memref<8x3xf32>, %c: memref<4x3xf32>) {
    %z = arith.constant 0.0 : f32
    linalg.fill ins(%z : f32) outs(%c : memref<4x3xf32>)
    linalg.matmul ins(%a, %b : memref<4x8xf32>, memref<8x3xf32>) outs(%c : memref<4x3xf32>)
    return
  }
}
