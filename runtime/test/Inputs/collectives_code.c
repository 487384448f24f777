/*===- collectives_code.c - Rank code calling the collective kernels ---===//
 *
 * Compiled at build time with `cc -shared -fPIC` (no library linked): the
 * dnnc_rt_* kernels resolve from the executable that loads it. The same
 * object serves every rank; a rank learns who it is from its `params`
 * weight, which the test writes per rank. MpiTest.cpp builds the plans and
 * checks the outputs; CpuBackendTest.cpp runs `single` on one rank.
 *
 *===------------------------------------------------------------------===*/

#include "dnnc/Runtime/Kernels.h"

#include <string.h>

/* ONNX dtype codes. */
enum {
  FLOAT = 1,
  INT32 = 6,
  INT64 = 7,
  STRING = 8,
  BOOL = 9,
  FLOAT16 = 10,
  DOUBLE = 11,
  BFLOAT16 = 16
};

/* out[m] = dnnc_rt_group_index(m) for every axesMask m < count. */
static void group_indices(void *out, int count) {
  int m;
  for (m = 0; m < count; ++m)
    ((long long *)out)[m] = dnnc_rt_group_index(m);
}

/* The 2-rank suite, mesh tp=2 (axesMask 1 = tp). Buffers:
 *  0 params i64[2] {rank, 0} (weight)
 *  1 x f32[2x6], 2 d f64[2x6], 3 i i32[2x6], 4 l i64[2x6],
 *  5 h f16[2x6], 6 bf bf16[2x6], 7 flags bool[2x6]   (row blocks of [4x6])
 *  8 ops_f32 f32[5x2x6], 9 ops_f64 f64[5x2x6], 10 ops_i32 i32[5x2x6],
 *  11 ops_i64 i64[5x2x6]: all_reduce with op 0..4 of the local block
 *  12 ops_f16 f16[2x2x6], 13 ops_bf16 bf16[2x2x6]: sum and mean
 *  14 gather_rows f32[4x6]: all_gather of x along dim 0
 *  15 gather_cols f32[2x12]: all_gather of x along dim 1
 *  16 rs f32[2x3]: reduce_scatter sum of x along dim 1
 *  17 a2a_10 f32[4x3]: all_to_all of x, split dim 1, concat dim 0
 *  18 a2a_01 f32[1x12]: all_to_all of x, split dim 0, concat dim 1
 *  19 bcast f32[2x6]: broadcast of x from group index 1
 *  20 p2p i64[2x6]: the other rank's l (send/recv)
 *  21 gather_bool bool[4x6]: all_gather of flags along dim 0
 *  22 rs_mean_bf16 bf16[1x6]: reduce_scatter mean of bf along dim 0
 *  23 group_index i64[2]: dnnc_rt_group_index of axesMask 0 and 1
 */
void suite2(void **b) {
  const long long *params = (const long long *)b[0];
  const float *x = (const float *)b[1];
  int op;
  long long rank = params[0];

  /* Sum in place, the other ops out of place. */
  memcpy(b[8], x, 12 * sizeof(float));
  dnnc_rt_all_reduce(1, FLOAT, DNNC_RT_REDUCE_SUM, b[8], b[8], 12);
  for (op = 1; op < 5; ++op) {
    dnnc_rt_all_reduce(1, FLOAT, op, x, (float *)b[8] + 12 * op, 12);
  }
  for (op = 0; op < 5; ++op) {
    dnnc_rt_all_reduce(1, DOUBLE, op, b[2], (double *)b[9] + 12 * op, 12);
    dnnc_rt_all_reduce(1, INT32, op, b[3], (int *)b[10] + 12 * op, 12);
    dnnc_rt_all_reduce(1, INT64, op, b[4], (long long *)b[11] + 12 * op, 12);
  }
  dnnc_rt_all_reduce(1, FLOAT16, DNNC_RT_REDUCE_SUM, b[5], b[12], 12);
  dnnc_rt_all_reduce(1, FLOAT16, DNNC_RT_REDUCE_MEAN, b[5],
                     (unsigned short *)b[12] + 12, 12);
  dnnc_rt_all_reduce(1, BFLOAT16, DNNC_RT_REDUCE_SUM, b[6], b[13], 12);
  dnnc_rt_all_reduce(1, BFLOAT16, DNNC_RT_REDUCE_MEAN, b[6],
                     (unsigned short *)b[13] + 12, 12);

  dnnc_rt_all_gather(1, FLOAT, x, b[14], 1, 12);
  dnnc_rt_all_gather(1, FLOAT, x, b[15], 2, 6);
  /* [2x6] viewed as [2, 2x3]: chunk 3 of each row. */
  dnnc_rt_reduce_scatter(1, FLOAT, DNNC_RT_REDUCE_SUM, x, b[16], 2, 3);
  /* Split dim 1, concat dim 0: S = [2x6], T = [2x3]: outer = S[0] = 2,
   * splitChunk = T[1] = 3, inner = T[0]*T[1] = 6. */
  dnnc_rt_all_to_all(1, FLOAT, x, b[17], 2, 3, 6);
  /* Split dim 0, concat dim 1: T = [1x6]: outer = 1 (no dim before 0),
   * splitChunk = T[0]*T[1] = 6, inner = T[1] = 6. */
  dnnc_rt_all_to_all(1, FLOAT, x, b[18], 1, 6, 6);
  memcpy(b[19], x, 12 * sizeof(float));
  dnnc_rt_broadcast(1, FLOAT, b[19], 12, 1);

  if (rank == 0) {
    dnnc_rt_send(INT64, b[4], 12, 1, 7);
    dnnc_rt_recv(INT64, b[20], 12, 1, 8);
  } else {
    dnnc_rt_recv(INT64, b[20], 12, 0, 7);
    dnnc_rt_send(INT64, b[4], 12, 0, 8);
  }
  dnnc_rt_all_gather(1, BOOL, b[7], b[21], 1, 12);
  dnnc_rt_reduce_scatter(1, BFLOAT16, DNNC_RT_REDUCE_MEAN, b[6], b[22], 1, 6);
  group_indices(b[23], 2);
}

/* The 2x2 mesh suite, mesh dp=2 x tp=2 (axesMask 1 = dp, 2 = tp, 3 = both).
 * Buffers:
 *  0 params i64[2] {rank, 0} (weight)
 *  1 x f32[2x2] (block (dp, tp) of [4x4])
 *  2 row_sum f32[2x2]: all_reduce over tp
 *  3 col_sum f32[2x2]: all_reduce over dp
 *  4 all_sum f32[2x2]: all_reduce over dp and tp
 *  5 gather_tp f32[2x4]: all_gather over tp along dim 1
 *  6 gather_all f32[8x2]: all_gather over dp and tp along dim 0
 *  7 bcast f32[2x2]: broadcast over dp and tp from group index 3
 *  8 rs f32[1x2]: reduce_scatter sum over dp along dim 0
 *  9 a2a f32[4x1]: all_to_all over tp, split dim 1, concat dim 0
 *  10 group_index i64[4]: dnnc_rt_group_index of axesMask 0 .. 3
 */
void suite_mesh(void **b) {
  const float *x = (const float *)b[1];
  dnnc_rt_all_reduce(2, FLOAT, DNNC_RT_REDUCE_SUM, x, b[2], 4);
  dnnc_rt_all_reduce(1, FLOAT, DNNC_RT_REDUCE_SUM, x, b[3], 4);
  dnnc_rt_all_reduce(3, FLOAT, DNNC_RT_REDUCE_SUM, x, b[4], 4);
  dnnc_rt_all_gather(2, FLOAT, x, b[5], 2, 2);
  dnnc_rt_all_gather(3, FLOAT, x, b[6], 1, 4);
  memcpy(b[7], x, 4 * sizeof(float));
  dnnc_rt_broadcast(3, FLOAT, b[7], 4, 3);
  dnnc_rt_reduce_scatter(1, FLOAT, DNNC_RT_REDUCE_SUM, x, b[8], 1, 2);
  /* S = [2x2], A = 1, B = 0, T = [2x1]: outer 2, splitChunk 1, inner 2. */
  dnnc_rt_all_to_all(2, FLOAT, x, b[9], 2, 1, 2);
  group_indices(b[10], 4);
}

/* One rank, mesh tp=1: every collective is a copy. Buffers:
 *  0 x f32[2x3] (input), 1 out f32[6x2x3] (output): all_reduce mean,
 *  all_gather, reduce_scatter, all_to_all, broadcast, all_reduce on
 *  axesMask 0 of x. */
void single(void **b) {
  const float *x = (const float *)b[0];
  float *out = (float *)b[1];
  dnnc_rt_all_reduce(1, FLOAT, DNNC_RT_REDUCE_MEAN, x, out, 6);
  dnnc_rt_all_gather(1, FLOAT, x, out + 6, 2, 3);
  dnnc_rt_reduce_scatter(1, FLOAT, DNNC_RT_REDUCE_SUM, x, out + 12, 2, 3);
  dnnc_rt_all_to_all(1, FLOAT, x, out + 18, 2, 3, 3);
  memcpy(out + 24, x, 6 * sizeof(float));
  dnnc_rt_broadcast(1, FLOAT, out + 24, 6, 0);
  dnnc_rt_all_reduce(0, FLOAT, DNNC_RT_REDUCE_MAX, x, out + 30, 6);
}

/* One rank, mesh a=1 x b=1: every group index is 0. Buffers: 0 out
 * i64[4] (output): dnnc_rt_group_index of axesMask 0 .. 3. */
void group_index_single(void **b) { group_indices(b[0], 4); }

/* Misuse on one rank only: rank 1 passes a dtype that cannot be reduced
 * while rank 0 waits in the all_reduce. Buffers: 0 params i64[2],
 * 1 out f32[4]. */
void diverge(void **b) {
  const long long *params = (const long long *)b[0];
  float *out = (float *)b[1];
  dnnc_rt_all_reduce(1, params[0] == 1 ? STRING : FLOAT, DNNC_RT_REDUCE_SUM,
                     out, out, 4);
}

/* Misuse on every rank alike: a root outside the group. Buffers:
 * 0 params i64[2], 1 out f32[4]. */
void bad_root(void **b) { dnnc_rt_broadcast(1, FLOAT, b[1], 4, 5); }

/* Kernel misuse in a single-rank plan, checked without MPI. Buffers:
 * 0 x f32[2x3], 1 out f32[2x3]; `params`-free. */
void bad_mask(void **b) {
  dnnc_rt_all_reduce(2, FLOAT, DNNC_RT_REDUCE_SUM, b[0], b[1], 6);
}

/* A group index for an axis the mesh does not have. Buffers: 0 out
 * i64[1]. */
void bad_group_index(void **b) { *(long long *)b[0] = dnnc_rt_group_index(2); }
