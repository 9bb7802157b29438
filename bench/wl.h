/*
** wl.h -- the benchmark workloads' kernels. wl_kern.c and the generated
** wide_gen.c are compiled twice into every wl_* program: once plain
** (WL(x) = plain_x, the baseline) and once with the variant's flags
** (WL(x) = inst_x: capprof hooks, -pg, or plain again in wl_plain), so that
** the baseline and the instrumented run are timed in the same process.
** wl_main.c, which times them, is never instrumented.
*/
#ifndef CAPPROF_BENCH_WL_H
#define CAPPROF_BENCH_WL_H

#define WIDE_FUNCS 1000     /* generated functions in wide_gen.c */

#ifdef WL_NS
#  define WL_CAT2(a, b) a##_##b
#  define WL_CAT(a, b) WL_CAT2(a, b)
#  define WL(x) WL_CAT(WL_NS, x)
#endif

/* (a) binary recursion: 2^(d+1) - 1 calls, almost no work per call.
** (c) linear recursion: n + 1 calls deep.
** (b) wide(width) calls width generated functions, each of which calls the
** first width generated functions: 1 + width + width^2 calls, as many
** distinct call paths. */
#define WL_DECL(ns) \
  unsigned ns##_wl_rec(unsigned d); \
  unsigned ns##_wl_deep(unsigned n); \
  void ns##_wl_wide(unsigned width);
WL_DECL(plain)
WL_DECL(inst)

#endif
