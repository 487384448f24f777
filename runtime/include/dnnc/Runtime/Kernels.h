/*===- Kernels.h - Runtime kernels for generated CPU code ------*- C -*-===//
 *
 * The C ABI of the kernels dnnc-run provides to the rank code it loads
 * (docs/runtime.md, "Generated-code ABI"). dnnc-run is linked with
 * -rdynamic, so an ELF shared object it dlopen()s resolves these symbols
 * (and libm's) from the executable. This header is plain C so that both
 * the runtime and generated or test code can include it.
 *
 *===----------------------------------------------------------------------===*/

#ifndef DNNC_RUNTIME_KERNELS_H
#define DNNC_RUNTIME_KERNELS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Batched single-precision GEMM: for b in [0, batch),
 *   C + b*strideC  =  (A + b*strideA) x (B + b*strideB)
 * with A an MxK, B a KxN and C an MxN matrix, all dense row-major. C is
 * overwritten (not accumulated). A stride is the distance in elements
 * between consecutive batch matrices; 0 reuses the same matrix for every
 * batch (a broadcast operand). Negative sizes or strides are reported as a
 * run error by dnnc-run and compute nothing. */
void dnnc_rt_gemm_f32(int64_t batch, int64_t M, int64_t N, int64_t K,
                      const float *A, int64_t strideA, const float *B,
                      int64_t strideB, float *C, int64_t strideC);

/* The double-precision variant of dnnc_rt_gemm_f32. */
void dnnc_rt_gemm_f64(int64_t batch, int64_t M, int64_t N, int64_t K,
                      const double *A, int64_t strideA, const double *B,
                      int64_t strideB, double *C, int64_t strideC);

#ifdef __cplusplus
}
#endif

#endif /* DNNC_RUNTIME_KERNELS_H */
