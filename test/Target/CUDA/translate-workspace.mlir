// RUN: dnnc-translate --mlir-to-cuda %s | FileCheck %s

// dnn-plan-memory's arena: one dnnc_rt_workspace call (device memory from
// the runtime), temporaries as byte offsets into it.
// CHECK: extern "C" void * dnnc_rt_workspace(int64_t);
// CHECK-LABEL: static void dnnc_fn_main(void *b0, void *b1) {
// CHECK: int64_t [[N:h[0-9]+]] = (int64_t)2048LL;
// CHECK: void *[[W:w[0-9]+]] = dnnc_rt_workspace([[N]]);
// CHECK: void *[[A:m[0-9]+]] = (void *)((char *)[[W]] + (0) + ((int64_t)0LL));
// CHECK: <<<1, 256, 0, stream>>>((float *)b0, (float *)[[A]]);
// CHECK: void *[[B:m[0-9]+]] = (void *)((char *)[[W]] + (0) + ((int64_t)1024LL));
// CHECK: <<<1, 256, 0, stream>>>((float *)[[A]], (float *)[[B]]);
// CHECK-NOT: cudaMallocAsync
llvm.func @dnnc_rt_workspace(i64) -> !llvm.ptr
func.func @main(%x: memref<256xf32>, %y: memref<256xf32>) {
  %0 = llvm.mlir.constant(2048 : i64) : i64
  %1 = llvm.call @dnnc_rt_workspace(%0) : (i64) -> !llvm.ptr
  %2 = llvm.mlir.poison : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
  %3 = llvm.insertvalue %1, %2[0] : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
  %4 = llvm.insertvalue %1, %3[1] : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
  %5 = llvm.mlir.constant(0 : i64) : i64
  %6 = llvm.insertvalue %5, %4[2] : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
  %11 = builtin.unrealized_conversion_cast %6 : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)> to memref<2048xi8>
  %c0 = arith.constant 0 : index
  %a = memref.view %11[%c0][] : memref<2048xi8> to memref<256xf32>
  linalg.exp ins(%x : memref<256xf32>) outs(%a : memref<256xf32>)
  %c1024 = arith.constant 1024 : index
  %b = memref.view %11[%c1024][] : memref<2048xi8> to memref<256xf32>
  linalg.exp ins(%a : memref<256xf32>) outs(%b : memref<256xf32>)
  linalg.exp ins(%b : memref<256xf32>) outs(%y : memref<256xf32>)
  return
}
