// RUN: dnnc-translate --mlir-to-cuda %s | FileCheck %s
// RUN: dnnc-translate --mlir-to-cuda-emulation %s | FileCheck %s --check-prefix=EMU

// The host emulation: kernels are plain functions, runtime calls go to the
// cpu kernels.
// EMU: #define __global__ static

#id2 = affine_map<(i, j) -> (i, j)>
#tr2 = affine_map<(i, j) -> (j, i)>
#row = affine_map<(i, j) -> (i)>

// Constants are device arrays of raw bits.
memref.global "private" constant @table : memref<4xi64> = dense<[0, 1, 2, -3]>
// CHECK: __device__ uint64_t dnnc_g0[4] = {0x0ull, 0x1ull, 0x2ull, 0xFFFFFFFFFFFFFFFDull};

// The runtime's functions are declared extern "C" with C types.
// CHECK: extern "C" void dnnc_rt_cuda_gemm_f32(int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t);
// EMU: extern "C" void dnnc_rt_gemm_f32(
func.func private @dnnc_rt_cuda_gemm_f32(i64, i64, i64, i64, index, i64, index, i64, index, i64)


// Elementwise with a transposed operand: one thread per point, innermost
// dim fastest, each operand indexed through its strides.
// CHECK-LABEL: // linalg.generic (add): 4x8
// CHECK-NEXT: __global__ void [[ADD:k[0-9]+_generic]](const float *p0, const float *p1, float *p2) {
// CHECK: for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < 32; i += (int64_t)gridDim.x * blockDim.x) {
// CHECK: int64_t d1 = [[T:t[0-9]+]] % 8;
// CHECK: int64_t d0 = [[T]];
// CHECK: float [[A:a[0-9]+]] = p0[(d0) * 8 + d1];
// CHECK: float [[B:a[0-9]+]] = p1[(d1) * 4 + d0];
// CHECK: float [[S:v[0-9]+]] = ([[A]] + [[B]]);
// CHECK: p2[(d0) * 8 + d1] = [[S]];

// A row reduction long enough for a block: threads stride over the row, a
// block reduction with the combiner and its identity, thread 0 combines the
// init.
// CHECK-LABEL: // linalg.generic (rowmax): 4x64, reduced dims 1
// CHECK-NEXT: __global__ void [[MAX:k[0-9]+_generic]](const float *p0, float *p1) {
// CHECK: for (int64_t i = blockIdx.x; i < 4; i += gridDim.x) {
// CHECK: float part = (float)-INFINITY;
// CHECK: for (int64_t r = threadIdx.x; r < 64; r += blockDim.x) {
// CHECK: part = dnnc_maximumf(part, [[X:a[0-9]+]]);
// CHECK: part = dnnc_block_reduce<float>(part, (float)-INFINITY, [](float a, float b) { return dnnc_maximumf(a, b); });
// CHECK: if (threadIdx.x == 0)
// CHECK-NEXT: p1[d0] = dnnc_maximumf(p1[d0], part);

// A short reduction: one thread per output, a loop over the row.
// CHECK-LABEL: // linalg.generic (rowsum): 4x8, reduced dims 1
// CHECK: float [[ACC:acc[0-9]+]] = p1[d0];
// CHECK: for (int64_t r = 0; r < 8; ++r) {
// CHECK: [[ACC]] = [[V:v[0-9]+]];
// CHECK: p1[d0] = [[ACC]];

// A strided copy is a kernel.
// CHECK-LABEL: // memref.copy
// CHECK: dst[(d0) * 8 + d1] = src[(d0) * 16 + d1];

// The host code: temporaries stream-ordered, views as pointer offsets,
// GEMMs as runtime calls on device addresses, launches on the backend's
// stream, the entry unpacking the buffer array.
// CHECK-LABEL: static void dnnc_fn_main(void *b0, void *b1, void *b2, void *b3, void *b4) {
// CHECK-NEXT: cudaStream_t stream = (cudaStream_t)dnnc_rt_cuda_stream();
// CHECK: cudaMallocAsync(&[[TMP:m[0-9]+]], 128, stream);
// CHECK: [[ADD]]<<<1, 256, 0, stream>>>((float *)b0, (float *)b1, (float *)[[TMP]]);
// CHECK: [[MAX]]<<<4, 64, 0, stream>>>((float *)b2, (float *)b3);
// CHECK: dnnc_rt_cuda_gemm_f32((int64_t)1LL, (int64_t)4LL, (int64_t)4LL, (int64_t)8LL,
// CHECK: cudaGetSymbolAddress(&[[G:g[0-9]+]], dnnc_g0);
// CHECK: <<<1, 256, 0, stream>>>(((float *)b2 + (8)), (float *)b4);
// CHECK: cudaMemcpyAsync((float *)b4, (float *)[[TMP]], 128, cudaMemcpyDeviceToDevice, stream);
// CHECK: cudaFreeAsync([[TMP]], stream);
// CHECK: extern "C" void dnnc_entry(void **buffers) {
// CHECK-NEXT: dnnc_fn_main(buffers[0], buffers[1], buffers[2], buffers[3], buffers[4]);

// The emulation runs every block in turn with one thread.
// EMU: gridDim.x = n; blockDim.x = 1; threadIdx.x = 0;
// EMU: for (unsigned b = 0; b < n; ++b) { blockIdx.x = b; k{{[0-9]+}}_generic((float *)b0, (float *)b1, (float *)m{{[0-9]+}}); }
// EMU: memcpy((float *)b4, (float *)m{{[0-9]+}}, 128);
// EMU: free(m{{[0-9]+}});
func.func @main(%a: memref<4x8xf32>, %bt: memref<8x4xf32>, %x: memref<4x64xf32>,
                %m: memref<4xf32>, %out: memref<4x8xf32>) {
  %tmp = memref.alloc() {alignment = 64 : i64} : memref<4x8xf32>
  linalg.generic {indexing_maps = [#id2, #tr2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%a, %bt : memref<4x8xf32>, memref<8x4xf32>) outs(%tmp : memref<4x8xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %s = arith.addf %p, %q : f32
    linalg.yield %s : f32
  } loc("add")
  linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<4x64xf32>) outs(%m : memref<4xf32>) {
  ^bb0(%p: f32, %acc: f32):
    %r = arith.maximumf %acc, %p : f32
    linalg.yield %r : f32
  } loc("rowmax")
  linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%a : memref<4x8xf32>) outs(%m : memref<4xf32>) {
  ^bb0(%p: f32, %acc: f32):
    %e = math.exp %p : f32
    %r = arith.addf %e, %acc : f32
    linalg.yield %r : f32
  } loc("rowsum")
  %c1 = arith.constant 1 : i64
  %c4 = arith.constant 4 : i64
  %c8 = arith.constant 8 : i64
  %c0 = arith.constant 0 : i64
  %pa = memref.extract_aligned_pointer_as_index %a : memref<4x8xf32> -> index
  %pb = memref.extract_aligned_pointer_as_index %bt : memref<8x4xf32> -> index
  %pc = memref.extract_aligned_pointer_as_index %tmp : memref<4x8xf32> -> index
  call @dnnc_rt_cuda_gemm_f32(%c1, %c4, %c4, %c8, %pa, %c0, %pb, %c0, %pc, %c0)
      : (i64, i64, i64, i64, index, i64, index, i64, index, i64) -> ()
  %g = memref.get_global @table : memref<4xi64>
  %sub = memref.subview %x[0, 8] [4, 8] [1, 1]
      : memref<4x64xf32> to memref<4x8xf32, strided<[64, 1], offset: 8>>
  %view = memref.reinterpret_cast %sub to offset: [8], sizes: [4, 8], strides: [16, 1]
      : memref<4x8xf32, strided<[64, 1], offset: 8>> to memref<4x8xf32, strided<[16, 1], offset: 8>>
  memref.copy %view, %out : memref<4x8xf32, strided<[16, 1], offset: 8>> to memref<4x8xf32>
  memref.copy %tmp, %out : memref<4x8xf32> to memref<4x8xf32>
  memref.dealloc %tmp : memref<4x8xf32>
  return
}
