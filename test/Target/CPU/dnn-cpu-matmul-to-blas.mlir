// RUN: dnnc-opt %s --dnn-cpu-matmul-to-blas | FileCheck %s

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

// The cuda target's kernels: kernel-prefix names them.
// RUN: dnnc-opt %s --dnn-cpu-matmul-to-blas=kernel-prefix=dnnc_rt_cuda_gemm | FileCheck %s --check-prefix=CUDA
// CUDA-LABEL: func.func @matmul(
// CUDA: call @dnnc_rt_cuda_gemm_f32(
