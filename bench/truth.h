/*
** truth.h -- the ground-truth tree of truth_tree.c, built twice (plain_*,
** cap_*), and its shape: self-work iterations and calls per parent.
*/
#ifndef CAPPROF_BENCH_TRUTH_H
#define CAPPROF_BENCH_TRUTH_H

#ifdef TT_NS
#  define TT_CAT2(a, b) a##_##b
#  define TT_CAT(a, b) TT_CAT2(a, b)
#  define TT(x) TT_CAT(TT_NS, x)
#endif

#define TT_NANO   1u       /* steps of self work (~4 cycles each) */
#define TT_TINY   16u
#define TT_SMALL  120u
#define TT_MID    350u
#define TT_HEAVY  1300u
#define TT_ROOT   4000u
#define TT_FAN    1300u    /* a caller of many short callees */
#define TT_FANOUT 64u      /* its calls of tiny */

/* Calls per call of the caller (truth_tree.c): root -> heavy -> mid ->
** small -> tiny, nano; heavy -> tiny; root -> fan -> tiny. */
#define TT_HEAVY_PER_ROOT  3u
#define TT_MID_PER_HEAVY   4u
#define TT_TINY_PER_HEAVY  3u
#define TT_SMALL_PER_MID   3u
#define TT_TINY_PER_SMALL  2u
#define TT_NANO_PER_SMALL  4u

#define TT_DECL(ns) \
  void ns##_nano(void); void ns##_tiny(void); void ns##_small(void); void ns##_mid(void); \
  void ns##_heavy(void); void ns##_fan(void); void ns##_root(void); \
  extern volatile int ns##_leaf;
TT_DECL(plain)
TT_DECL(cap)

#endif
