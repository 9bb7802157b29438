/*
** wl.h -- the benchmark workloads' kernels. wl_kern.c and the generated
** wide_gen.c are compiled once per variant (plain, capprof hooks, -pg);
** wl_main.c, which times them, is never instrumented.
*/
#ifndef CAPPROF_BENCH_WL_H
#define CAPPROF_BENCH_WL_H

#define WIDE_FUNCS 1000     /* generated functions in wide_gen.c */

/* (a) binary recursion: 2^(d+1) - 1 calls, almost no work per call. */
unsigned wl_rec(unsigned d);
/* (c) linear recursion n + 1 calls deep. */
unsigned wl_deep(unsigned n);
/* (b) wl_wide calls width generated functions, each of which calls the
** first width generated functions: 1 + width + width^2 calls, as many
** distinct call paths. */
void wl_wide(unsigned width);

#endif
