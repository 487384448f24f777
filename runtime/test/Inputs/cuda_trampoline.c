/* Rank code for the cuda kernel tests (CudaKernelsTest.cpp): function
 * `dnnc_test_trampoline` calls the host function passed as its first
 * argument with its second, so that a test runs its own code inside a run
 * of the cuda backend (where dnnc_rt_cuda_stream() is valid). */

#include "dnnc/Runtime/Kernels.h"

void dnnc_test_trampoline(void **args) {
  void (*fn)(void *) = (void (*)(void *))args[0];
  fn(args[1]);
}

/* The function of the CUDA graph test (makeAddMatmulPlan's buffers:
 * 0 x f32[2x3], 1 w f32[3x4], 2 y (unused), 3 out f32[2x4]): out = x @ w. */
void dnnc_test_graph_step(void **buffers) {
  dnnc_rt_cuda_gemm_f32(1, 2, 4, 3, 0, buffers[0], 0, buffers[1], 0, buffers[3],
                        0);
}
