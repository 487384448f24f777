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
// CHECK: call @dnnc_rt_gemm_f32(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %c0_i64, %[[PA]], %{{.*}}, %[[PB]], %{{.*}}, %[[PC]], %{{.*}}) : (i64, i64, i64, i64, i64, index, i64, index, i64, index, i64) -> ()
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
// CHECK: call @dnnc_rt_gemm_f64(%[[B]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[SA]], %{{.*}}, %[[SB]], %{{.*}}, %[[SC]])
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

// A weight transposed into a temporary right before the matmul: the GEMM
// reads the weight with transpose bit 2 (B), the transpose goes. An
// activation transposed for A: bit 1, through a transpose that is a generic.
// CHECK-LABEL: func.func @folded(
// CHECK-NOT: linalg.transpose
// CHECK-NOT: linalg.generic
// CHECK: %[[X:.*]] = memref.extract_aligned_pointer_as_index %arg0
// CHECK: %[[W:.*]] = memref.extract_aligned_pointer_as_index %arg1
// CHECK: call @dnnc_rt_gemm_f32(%c1_i64, %c4_i64, %c3_i64, %c8_i64, %c2_i64,
// CHECK: %[[X2:.*]] = memref.extract_aligned_pointer_as_index %arg0
// CHECK: call @dnnc_rt_gemm_f32(%c1_i64_{{[0-9]+}}, %c8_i64_{{[0-9]+}}, %c3_i64_{{[0-9]+}}, %c4_i64_{{[0-9]+}}, %c1_i64_{{[0-9]+}},
#swap = affine_map<(d0, d1) -> (d1, d0)>
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @folded(%x: memref<4x8xf32>, %w: memref<3x8xf32>, %c: memref<4x3xf32>, %d: memref<8x3xf32>) {
  %arena = memref.alloc() : memref<256xi8>
  %c0 = arith.constant 0 : index
  %c128 = arith.constant 128 : index
  %wt = memref.view %arena[%c0][] : memref<256xi8> to memref<8x3xf32>
  linalg.transpose ins(%w : memref<3x8xf32>) outs(%wt : memref<8x3xf32>) permutation = [1, 0]
  %z = arith.constant 0.0 : f32
  linalg.fill ins(%z : f32) outs(%c : memref<4x3xf32>)
  linalg.matmul ins(%x, %wt : memref<4x8xf32>, memref<8x3xf32>) outs(%c : memref<4x3xf32>)
  %xt = memref.view %arena[%c128][] : memref<256xi8> to memref<8x4xf32>
  linalg.generic {indexing_maps = [#swap, #id], iterator_types = ["parallel", "parallel"]} ins(%x : memref<4x8xf32>) outs(%xt : memref<8x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  linalg.fill ins(%z : f32) outs(%d : memref<8x3xf32>)
  linalg.matmul ins(%xt, %c : memref<8x4xf32>, memref<4x3xf32>) outs(%d : memref<8x3xf32>)
  return
}

// A transpose whose source the output overlaps (a temporary of the same
// arena, reused for the output), or with a write between it and the matmul
// that may reach its source, stays unfolded; one that something else reads
// later is folded into the GEMM (bit 2) but stays.
// CHECK-LABEL: func.func @unfolded(
// CHECK: linalg.transpose
// CHECK: call @dnnc_rt_gemm_f32(%c1_i64, %c4_i64, %c3_i64, %c8_i64, %c0_i64,
// CHECK: linalg.transpose
// CHECK: call @dnnc_rt_gemm_f32({{.*}}, %c2_i64,
// CHECK: linalg.copy
// CHECK: linalg.transpose
// CHECK: call @dnnc_rt_gemm_f32({{.*}}, %c0_i64_{{[0-9]+}},
func.func @unfolded(%x: memref<4x8xf32>, %w: memref<3x8xf32>, %out: memref<4x3xf32>, %any: memref<8x3xf32>) {
  %arena = memref.alloc() : memref<512xi8>
  %c0 = arith.constant 0 : index
  %c128 = arith.constant 128 : index
  %c256 = arith.constant 256 : index
  %z = arith.constant 0.0 : f32
  // The output takes the source's bytes.
  %src = memref.view %arena[%c0][] : memref<512xi8> to memref<3x8xf32>
  %t1 = memref.view %arena[%c128][] : memref<512xi8> to memref<8x3xf32>
  linalg.transpose ins(%src : memref<3x8xf32>) outs(%t1 : memref<8x3xf32>) permutation = [1, 0]
  %c1 = memref.view %arena[%c0][] : memref<512xi8> to memref<4x3xf32>
  linalg.fill ins(%z : f32) outs(%c1 : memref<4x3xf32>)
  linalg.matmul ins(%x, %t1 : memref<4x8xf32>, memref<8x3xf32>) outs(%c1 : memref<4x3xf32>)
  // Read again after the matmul: folded into the GEMM but kept.
  %t2 = memref.view %arena[%c256][] : memref<512xi8> to memref<8x3xf32>
  linalg.transpose ins(%w : memref<3x8xf32>) outs(%t2 : memref<8x3xf32>) permutation = [1, 0]
  linalg.fill ins(%z : f32) outs(%out : memref<4x3xf32>)
  linalg.matmul ins(%x, %t2 : memref<4x8xf32>, memref<8x3xf32>) outs(%out : memref<4x3xf32>)
  linalg.copy ins(%t2 : memref<8x3xf32>) outs(%any : memref<8x3xf32>)
  // A write into the source in between.
  %t3 = memref.view %arena[%c256][] : memref<512xi8> to memref<8x3xf32>
  linalg.transpose ins(%w : memref<3x8xf32>) outs(%t3 : memref<8x3xf32>) permutation = [1, 0]
  linalg.fill ins(%z : f32) outs(%w : memref<3x8xf32>)
  linalg.fill ins(%z : f32) outs(%out : memref<4x3xf32>)
  linalg.matmul ins(%x, %t3 : memref<4x8xf32>, memref<8x3xf32>) outs(%out : memref<4x3xf32>)
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
