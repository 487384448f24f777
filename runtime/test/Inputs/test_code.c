/*===- test_code.c - Rank code for the CpuBackend tests ----------------===//
 *
 * Compiled at build time with `cc -shared -fPIC` and deliberately not linked
 * with libm or any runtime library: every dnnc_rt_* and libm symbol must be
 * resolved from the executable that loads it (dnnc-run, the unit tests).
 *
 *===------------------------------------------------------------------===*/

#include "dnnc/Runtime/Kernels.h"

#include <math.h>

/* buffers: 0 x f32[2x3] (input 0), 1 w f32[3x4] (weight),
 *          2 y f32[2x3] (input 1), 3 out f32[2x4] (output 0).
 * out = (x + y) @ w */
void add_matmul(void **buffers) {
  const float *x = (const float *)buffers[0];
  const float *w = (const float *)buffers[1];
  const float *y = (const float *)buffers[2];
  float *out = (float *)buffers[3];
  float sum[6];
  for (int i = 0; i < 6; ++i)
    sum[i] = x[i] + y[i];
  dnnc_rt_gemm_f32(1, 2, 4, 3, 0, sum, 0, w, 0, out, 0);
}

/* buffers: 0 x f32[4] (input 0), 1 out f32[4x4] (output 0).
 * out[i] = (expf(x), erff(x), tanhf(x), powf(|x|, x)) */
void math_fns(void **buffers) {
  const float *x = (const float *)buffers[0];
  float *out = (float *)buffers[1];
  for (int i = 0; i < 4; ++i) {
    out[4 * i + 0] = expf(x[i]);
    out[4 * i + 1] = erff(x[i]);
    out[4 * i + 2] = tanhf(x[i]);
    out[4 * i + 3] = powf(fabsf(x[i]), x[i]);
  }
}

/* buffers: 0 a f64[2x2x3] (input 0), 1 b f64[3x2] (weight),
 *          2 c f64[2x2x2] (output 0).
 * c[k] = a[k] @ b for k = 0, 1 (b broadcast with stride 0) */
void batched_f64(void **buffers) {
  dnnc_rt_gemm_f64(2, 2, 2, 3, 0, (const double *)buffers[0], 6,
                   (const double *)buffers[1], 0, (double *)buffers[2], 4);
}

/* buffers: 0 x f32[2x3] (input 0), 1 out f32[2x4] (output 0).
 * Misuses the GEMM kernel (negative M): the run must fail cleanly. */
void bad_gemm(void **buffers) {
  dnnc_rt_gemm_f32(1, -2, 4, 3, 0, (const float *)buffers[0], 0,
                   (const float *)buffers[0], 0, (float *)buffers[1], 0);
}

/* buffers: 0 x f32[2x3] (input 0), 1 out f32[2x4] (output 0). Calls the
 * GEMM with an epilogue with an unknown activation (7): the run must fail. */
void bad_gemm_bias(void **buffers) {
  const float *x = (const float *)buffers[0];
  dnnc_rt_gemm_bias_f32(1, 2, 4, 3, x, 0, x, 0, (float *)buffers[1], 0, x, 7);
}

/* Pipeline stage 0: buffers 0 x f32[2x3] (one micro-batch of input 0),
 * 1 w f32[3x4] (weight), 2 act f32[2x4] (activation). act = x @ w */
void stage0(void **buffers) {
  const float *x = (const float *)buffers[0];
  const float *w = (const float *)buffers[1];
  float *act = (float *)buffers[2];
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 4; ++j) {
      float sum = 0;
      for (int k = 0; k < 3; ++k)
        sum += x[3 * i + k] * w[4 * k + j];
      act[4 * i + j] = sum;
    }
}

/* Pipeline stage 1: buffers 0 act f32[2x4] (activation), 1 out f32[2x4]
 * (one micro-batch of output 0). out = 2 * act + 1 */
void stage1(void **buffers) {
  const float *act = (const float *)buffers[0];
  float *out = (float *)buffers[1];
  for (int i = 0; i < 8; ++i)
    out[i] = 2 * act[i] + 1;
}

/* A training step's micro-batch part: buffers 0 x f32[2x3] (one
 * micro-batch of input 0), 1 acc f32[3] (accumulator), 2 new f32[3] (its
 * update). new = acc + the column sums of x */
void accumulate_columns(void **buffers) {
  const float *x = (const float *)buffers[0];
  const float *acc = (const float *)buffers[1];
  float *out = (float *)buffers[2];
  for (int j = 0; j < 3; ++j)
    out[j] = acc[j] + x[j] + x[3 + j];
}

/* The step's final part: buffers 0 acc f32[3], 1 out f32[3]. out = acc */
void read_accumulator(void **buffers) {
  const float *acc = (const float *)buffers[0];
  float *out = (float *)buffers[1];
  for (int j = 0; j < 3; ++j)
    out[j] = acc[j];
}
