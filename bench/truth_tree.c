/*
** truth_tree.c -- workload (e): a call tree whose functions each do a fixed
** amount of self work, from tens of ns (tt_tiny) to microseconds (tt_root).
** Compiled twice into bench_truth: once plain (TT(x) = plain_x), whose cost is
** the ground truth, and once with the hooks (TT(x) = cap_x).
**
**   root (~5 us self) -> 3 x heavy (~1.5 us) -> 4 x mid (~400 ns) -> 3 x small
**   (~150 ns) -> 2 x tiny (~25 ns); heavy also calls 3 x tiny directly;
**   small calls 4 x nano (1-5 ns); root calls fan (~1.5 us self), which calls
**   64 x tiny: a caller of many short callees.
*/
#include "truth.h"

/* One dependency chain threaded through every call of the tree, so that a
** function's self work cannot overlap with its caller's or its siblings' (out-
** of-order execution would otherwise make the uninstrumented cost of a tiny
** function depend on its neighbours). */
unsigned TT(chain);

/* Leaf mode: every function does its self work and calls nothing, so that
** timing it measures its exclusive cost directly. */
volatile int TT(leaf);

/* Self work: n steps of a dependent multiply-add chain the compiler cannot
** shorten. Never instrumented, always inlined. */
__attribute__((always_inline, no_instrument_function))
static inline void work(unsigned n)
{
  unsigned x = TT(chain);
  for (unsigned i = 0; i < n; i++) {
    x = x * 2654435761u + i;
    __asm__ __volatile__("" : "+r"(x));
  }
  TT(chain) = x;
}

__attribute__((noinline)) void TT(nano)(void)  { work(TT_NANO); }
__attribute__((noinline)) void TT(tiny)(void)  { work(TT_TINY); }
__attribute__((noinline)) void TT(small)(void)
{
  work(TT_SMALL);
  if (TT(leaf)) return;
  for (unsigned i = 0; i < TT_TINY_PER_SMALL; i++) TT(tiny)();
  for (unsigned i = 0; i < TT_NANO_PER_SMALL; i++) TT(nano)();
}
__attribute__((noinline)) void TT(mid)(void)
{
  work(TT_MID);
  if (!TT(leaf)) for (unsigned i = 0; i < TT_SMALL_PER_MID; i++) TT(small)();
}
__attribute__((noinline)) void TT(heavy)(void)
{
  work(TT_HEAVY);
  if (TT(leaf)) return;
  for (unsigned i = 0; i < TT_MID_PER_HEAVY; i++) TT(mid)();
  for (unsigned i = 0; i < TT_TINY_PER_HEAVY; i++) TT(tiny)();
}
__attribute__((noinline)) void TT(fan)(void)
{
  work(TT_FAN);
  if (!TT(leaf)) for (unsigned i = 0; i < TT_FANOUT; i++) TT(tiny)();
}
__attribute__((noinline)) void TT(root)(void)
{
  work(TT_ROOT);
  if (TT(leaf)) return;
  for (unsigned i = 0; i < TT_HEAVY_PER_ROOT; i++) TT(heavy)();
  TT(fan)();
}
