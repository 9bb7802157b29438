/*
** hotpath.h -- the hot path shared by every platform's hooks and by API
** interception's trampolines: pushing and popping a frame, the fast entry
** and exit. What it costs per call, read from the built code:
** bench/hookcost.py.
*/
#ifndef CAPPROF_HOTPATH_H
#define CAPPROF_HOTPATH_H

#include "../core/core.h"
#include "../throttle/throttle.h"
#include "../zone/zone.h"

/* ---- the hooks' prologue ------------------------------------------------ */

/* Every hook of every platform begins here. Its fast path runs when
** cp_hook_ready(t): t (the calling thread's state, NULL before its first
** hook) is in step with cp_g.gate (no pause, no reset, no slow path of its
** own under way) and no sample waits in its sampling ring. Otherwise its
** full path makes the state at the thread's first entry hook (an exit hook
** without one returns: nothing was recorded), then calls cp_hook_sync. */
CP_INLINE int cp_hook_ready(const struct cp_thread *t)
{
  return CP_LIKELY(t != NULL && t->gate == cp_g.gate) && CP_LIKELY(!cp_ring_pending(t));
}

/* The full path's prologue: t brought in step with the gate (a reset
** rebuilds its tree), and the samples waiting in its ring charged to the
** call path they were taken in, which the hook is about to change. 0 when
** the hook must do nothing (paused, busy, recording impossible). */
CP_INLINE int cp_hook_sync(struct cp_thread *t)
{
  if (CP_UNLIKELY(t->gate != cp_g.gate) && runtime_sync(t)) return 0;
  if (cp_ring_pending(t)) cp_ring_drain(t);
  return 1;
}

/* ---- the hot path ------------------------------------------------------ */

/* Push the frame above f: call path node, stack pointer, start time. A
** signal handler's hooks may run between any two statements here: the frame
** is written, published, and written again, so that a handler that ran
** before the publish (using, and overwriting, the same slot) leaves nothing
** stale behind. */
CP_INLINE void calltree_push_kind(struct cp_thread *t, struct cp_frame *f, uint32_t node,
                                  uint32_t kind, uintptr_t sp, uint64_t start)
{
  f[1].node = node;
  f[1].kind = kind;
  f[1].sp = sp;
  CP_BARRIER();
  t->top = f + 1;
  CP_BARRIER();
  f[1].node = node;
  f[1].kind = kind;
  f[1].sp = sp;
  f[1].tstart = start;
}

CP_INLINE void calltree_push(struct cp_thread *t, struct cp_frame *f, uint32_t node,
                             uintptr_t sp, uint64_t start)
{
  calltree_push_kind(t, f, node, CP_FRAME_TIMED, sp, start);
}

/* The length of the next run of untimed throttled calls: uniform on
** 1 .. 2P-1 (mean P = cp_g.throttle_period), so that no calling pattern
** keeps a function out of the timed calls or always in them. Inline, with
** a multiply rather than a division: it runs on a sampled call's entry,
** whose cost to its caller counts (below). */
CP_INLINE uint32_t throttle_next_countdown(struct cp_thread *t)
{
  uint32_t x = t->rng ? t->rng : 0x9E3779B9u;   /* xorshift32 */
  x ^= x << 13;
  x ^= x >> 17;
  x ^= x << 5;
  t->rng = x;
  uint32_t p = cp_g.throttle_period;
  return p <= 1 ? 1 : 1 + (uint32_t)(((uint64_t)x * (2 * p - 1)) >> 32);
}

/* Enter a call of throttled node c above frame f (room checked by the
** caller): most calls push an untimed frame and read no clock; every P-th
** on average is timed as a sample. */
CP_INLINE void calltree_push_throttled(struct cp_thread *t, struct cp_frame *f, uint32_t c,
                                       uintptr_t sp)
{
  if (CP_LIKELY(t->countdown > 1)) {
    t->countdown--;
    calltree_push_kind(t, f, c, CP_FRAME_UNTIMED, sp, 0);
    return;
  }
  t->countdown = throttle_next_countdown(t);
  /* An ordered read (rdtscp): the untimed calls before this one leave work
  ** in flight, which an early read would count in this call, P times. */
  calltree_push_kind(t, f, c, CP_FRAME_SAMPLED, sp, cp_tnow_exit(t));
}

/* The exit of a throttled call: the top frame f is its own and not timed
** as usual. An untimed call is counted; a sampled one reads the clock. */
CP_INLINE void calltree_pop_throttled(struct cp_thread *t, struct cp_frame *f)
{
  if (f->kind == CP_FRAME_UNTIMED) t->nodes[f->node].calls++;
  else calltree_charge_sampled(&t->nodes[f->node], cp_tnow_exit(t) - f->tstart);
  t->top = f - 1;
}

/* The lookup table's first slot for (parent, key); calltree_lookup probes on
** from there. */
CP_INLINE uint32_t calltree_slot(const struct cp_thread *t, uint32_t parent, uint64_t key)
{
  uint64_t h = (key | CP_KEY_THROTTLED) * UINT64_C(0x9E3779B97F4A7C15) ^
               (uint64_t)(parent + 1) * UINT64_C(0xC2B2AE3D27D4EB4F);
  return (uint32_t)(h >> 32) & t->mask;
}

/* Entry of an instrumented call. When the callee was called from the same
** caller before: one clock read, no lock, no allocation, no shared write
** (cost per call, from the built hooks: bench/hookcost.py).
** slow_since: the clock when the caller's slow path began (its fast path
** failed), or 0. Whatever runs from then, or from the first slow step here,
** to the frame's start is added to t->debt: a second clock read, on slow
** paths only. */
CP_INLINE void cp_hot_enter(struct cp_thread *t, uint64_t key, uintptr_t sp,
                            uint64_t slow_since)
{
  struct cp_frame *f = t->top;
  /* Frames below our stack pointer are dead (longjmp, exceptions). Equal is
  ** not dead: GCC instruments inlined functions, whose hooks run in the
  ** frame of the function they are inlined into. */
  if (CP_UNLIKELY(f->sp < sp)) {
    if (!slow_since) slow_since = cp_now();
    f = calltree_unwind(t, sp, slow_since - t->debt);
  }
  if (CP_UNLIKELY(f + 1 >= t->commit_end)) {
    if (!slow_since) slow_since = cp_now();
    if (!(f = calltree_grow(t))) return;
  }
  struct cp_node *parent = &t->nodes[f->node];
  uint32_t c = parent->hot;
  int throttled = 0;
  if (CP_UNLIKELY(t->nodes[c].key != key)) {
    if (!slow_since) slow_since = cp_now();
    c = calltree_lookup(t, f->node, key);
    if (CP_UNLIKELY(c == CPD_NO_PARENT)) return;   /* nested slow path */
    /* Throttled (throttle.c): an untimed frame, or a sampled one. Synthetic
    ** keys have the bit set already, so the key must differ too. */
    throttled = t->nodes[c].key != key && t->nodes[c].key == (key | CP_KEY_THROTTLED);
  }
  /* Ordered for a timed frame's start, as on the fast path; a throttled
  ** call's read only ends the slow path (a sampled one reads its own), and
  ** an intercepted call's start is a plain read (intercept_read_mode). */
  uint64_t now = throttled || CPD_KEY_IS_API(key) ? cp_now() : cp_now_enter();
  if (slow_since) {
    t->slow_calls++;
    if (now > slow_since) t->debt += now - slow_since;
  }
  if (CP_UNLIKELY(throttled)) calltree_push_throttled(t, f, c, sp);
  else calltree_push(t, f, c, sp, now - t->debt);
}

/* Exit of an instrumented call. check_key: the exit hook knows the same key
** the entry hook had (GCC/Clang hooks); MSVC's _pexit does not. One clock
** read (cost per call: bench/hookcost.py).
** With a key, the innermost frame with that key is this call's whatever the
** stack pointers say: GCC at -O2 makes __cyg_profile_func_exit a tail call
** after the epilogue, so the exit hook's sp is above the entry hook's by the
** function's frame size. sp then serves only to pop frames that longjmp or
** an exception abandoned, when the key does not match. */
CP_INLINE void cp_hot_exit(struct cp_thread *t, uint64_t key, uintptr_t sp,
                           int check_key)
{
  uint64_t now = cp_tnow_exit(t);
  struct cp_frame *f = t->top;
  struct cp_node *n = &t->nodes[f->node];
  if (check_key ? (n->key | CP_KEY_THROTTLED) != (key | CP_KEY_THROTTLED) : f->sp < sp) {
    f = calltree_unwind(t, sp, now);         /* popped by longjmp/exception */
    n = &t->nodes[f->node];
    if (CP_UNLIKELY(check_key ? (n->key | CP_KEY_THROTTLED) != (key | CP_KEY_THROTTLED) : f == t->frames)) {
      calltree_exit_mismatch(t, key, sp, now);
      return;
    }
  } else if (CP_UNLIKELY(!check_key && f == t->frames)) {
    calltree_exit_mismatch(t, key, sp, now);
    return;
  }
  calltree_charge_frame(t, f, now);
  t->top = f - 1;
}

/* The common case of cp_hot_enter alone, for hooks that keep everything
** else out of line: the caller's frame is live, the stack has room and the
** callee is its parent's hot child. Returns 1 when the call is recorded, 0
** (having changed nothing) when the hook must take the full path.
** One clock read; nothing shared.
** mode: the clock read that starts the call (CP_CLOCK_*, cp_g.use_tsc but
** for intercepted calls, see intercept_read_mode). */
CP_INLINE int cp_hot_enter_try_read(struct cp_thread *t, uint64_t key, uintptr_t sp,
                                    uint32_t mode)
{
  struct cp_frame *f = t->top;
  struct cp_node *nodes = t->nodes;
  uint32_t c = nodes[f->node].hot;
  uint64_t k = nodes[c].key;
  if (CP_UNLIKELY(k != key)) {
    /* Not the hot child (a caller that calls several functions in turn, an
    ** interpreter's loop): its first lookup-table slot usually holds it. A
    ** throttled callee (CP_KEY_THROTTLED) is entered here too, untimed. */
    if (k != (key | CP_KEY_THROTTLED)) {
      uint32_t s = t->table[calltree_slot(t, f->node, key)];
      if (s == 0 || (nodes[s].key | CP_KEY_THROTTLED) != (key | CP_KEY_THROTTLED) ||
          nodes[s].parent != f->node)
        return 0;
      nodes[f->node].hot = c = s;
      k = nodes[s].key;
    }
    if (k != key) {
      if (CP_UNLIKELY((f->sp < sp) | (f + 1 >= t->commit_end) |
                      (CP_FAST_CLOCK && mode == CP_CLOCK_OS)))
        return 0;
      calltree_push_throttled(t, f, c, sp);
      return 1;
    }
  }
  if (CP_UNLIKELY((f->sp < sp) | (f + 1 >= t->commit_end) |
                  (CP_FAST_CLOCK && mode == CP_CLOCK_OS)))
    return 0;
  /* The clock is read before the frame is written, not after: the stores
  ** then retire under rdtsc's latency (-1.5 ns per call, bench/run.sh);
  ** they are counted in the callee's time, which calibration subtracts. */
  uint64_t now = cp_fast_enter_clock(mode);
  calltree_push(t, f, c, sp, now - t->debt);
  return 1;
}

CP_INLINE int cp_hot_enter_try(struct cp_thread *t, uint64_t key, uintptr_t sp)
{
  return cp_hot_enter_try_read(t, key, sp, (uint32_t)cp_g.use_tsc);
}

/* An intercepted library call starts with a plain rdtsc whatever the hooks
** use (cp_hot_enter reads so for API keys too, Windows' import-table path),
** and on Linux ends with one (tramp_exit_fast): its return into the trampoline
** is a mispredicted branch that orders the exit read enough, and an
** ordered entry read cost ~20 ns a call in bench_api (53 against 32 ns),
** on calls far longer than the work it keeps in the caller. */
CP_INLINE uint32_t intercept_read_mode(void)
{
  uint32_t mode = (uint32_t)cp_g.use_tsc;
  return mode == CP_CLOCK_TSC_ORDERED ? CP_CLOCK_TSC : mode;
}

/* The common case of cp_hot_exit (check_key): the innermost frame has this
** call's key, so it is this call's (sp is not compared: see cp_hot_exit).
** Returns 0, having changed nothing, otherwise. One ordered clock read and
** the branches of min, max and throttling's decision calls (a compare with
** a value in the line of cp_g.gate and a test of the count's low bits).
** 2: done, and the popped frame's node (t->top + 1) just made its
** throttling decision call. */
CP_INLINE int cp_hot_exit_try(struct cp_thread *t, uint64_t key, uintptr_t sp)
{
  uint32_t mode = (uint32_t)cp_g.use_tsc;
  struct cp_frame *f = t->top;
  /* A throttled call's frame is not timed as usual: the slow side, with no
  ** clock read for most of them. Checked before the clock read, so the
  ** check counts in the callee's time, which calibration subtracts. */
  if (CP_UNLIKELY(f->kind != CP_FRAME_TIMED)) {
    struct cp_node *n = &t->nodes[f->node];
    if (n->key != (key | CP_KEY_THROTTLED)) return 0;
    if (CP_LIKELY(f->kind == CP_FRAME_UNTIMED)) {
      n->calls++;                            /* untimed: no clock read */
    } else {
      /* A sample, here rather than through the full exit path: that one
      ** is longer and, taken once in P calls, cold in a real program. */
      if (CP_FAST_CLOCK && mode == CP_CLOCK_OS) return 0;
      calltree_charge_sampled(n, cp_fast_exit_clock(mode) - t->debt - f->tstart);
    }
    t->top = f - 1;
    return 1;
  }
  uint64_t now = cp_fast_exit_clock(mode);
  struct cp_node *n = &t->nodes[f->node];
  (void)sp;
  if (CP_UNLIKELY((n->key != key) | (CP_FAST_CLOCK && mode == CP_CLOCK_OS)))
    return 0;
  calltree_charge(n, now - t->debt - f->tstart);
  t->top = f - 1;
  if (CP_UNLIKELY(cp_throttle_due(n->calls))) {
    calltree_throttle_due(t, f->node);
    return 2;                                /* the popped frame's node: decided */
  }
  return 1;
}

#endif /* CAPPROF_HOTPATH_H */
