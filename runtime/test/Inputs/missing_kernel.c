/*===- missing_kernel.c - Rank code needing an unknown kernel ----------===//
 *
 * Calls a dnnc_rt_ symbol the runtime does not provide: loading it must fail
 * with an error that names the symbol.
 *
 *===------------------------------------------------------------------===*/

void dnnc_rt_not_a_kernel(float *out);

void entry(void **buffers) { dnnc_rt_not_a_kernel((float *)buffers[0]); }
