/*
** throttle.h -- throttling (throttle.c): a frequent, short call path's node
** timed one call in P.
*/
#ifndef CAPPROF_THROTTLE_H
#define CAPPROF_THROTTLE_H

#include "../core/core.h"

/* ---- throttling (throttle.c) ------------------------------------------- */

/* A throttled node's key carries this bit while in memory (never in a dump):
** the hooks' hot-child compare then fails for it, and the slow side counts
** the call without timing it. Addresses are below 2^56 and synthetic keys
** already have the bit, so lookups hash and compare keys with the bit set. */
#define CP_KEY_THROTTLED UINT64_C(0x4000000000000000)

/* Read CAPPROF_THROTTLE into cp_g (runtime_init). */
void throttle_init(void) CP_HIDDEN;
/* Node i of t just completed its cp_g.throttle_calls-th call, or a multiple
** of 2^17 calls above it: throttle it if its calls were short. Owner
** thread, from exit hooks (never the Windows keyless _pexit, which could not
** pair a throttled call's exit). */
void calltree_throttle_due(struct cp_thread *t, uint32_t i) CP_HIDDEN;
/* A node that was not throttled at its N-th call (its first calls were
** long: an interpreter's call path that began with a script's compilation;
** or that call's exit took a slow path) is looked at again at every
** multiple of 2^17 calls above N. The exit hooks test the low bits as well
** as the equality (the assembly too: asm/fentry_x86_64.S). */
#define CP_THROTTLE_AGAIN_MASK UINT64_C(0x1FFFF)
CP_INLINE int cp_throttle_due(uint64_t calls)
{
  return calls == cp_g.throttle_calls ||
         (CP_UNLIKELY((calls & CP_THROTTLE_AGAIN_MASK) == 0) && cp_g.throttle_calls &&
          calls > cp_g.throttle_calls);
}
/* Throttle node i of t now (-1: no room for its record); whether n's calls
** averaged under the threshold (its longest call left out; 0 while the
** threshold is not known yet). */
int throttle_node(struct cp_thread *t, uint32_t i) CP_HIDDEN;
int throttle_short(const struct cp_node *n) CP_HIDDEN;
/* Forget t's throttle records (reset, fork); free them. */
void throttle_thread_reset(struct cp_thread *t) CP_HIDDEN;
void throttle_thread_free(struct cp_thread *t) CP_HIDDEN;
/* Visit t's records: fn(ctx, node, ticks when throttled, timed calls). */
typedef void (*throttle_fn)(void *ctx, uint32_t node, uint64_t ticks, uint64_t timed);
void throttle_records(const struct cp_thread *t, throttle_fn fn, void *ctx) CP_HIDDEN;
/* The threshold in effect: calls, and ns per call (0 when throttling is off). */
void throttle_settings(uint64_t *calls, uint64_t *ns) CP_HIDDEN;

#endif /* CAPPROF_THROTTLE_H */
