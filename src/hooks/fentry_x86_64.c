/*
** fentry.c (POSIX, x86-64) -- the C workers of asm/fentry_x86_64.S: GCC's
** -pg -mfentry -minstrument-return=call hooks, which fire only in functions
** left after inlining. Compiled with -mgeneral-regs-only (CMakeLists.txt), so
** that the fast workers cannot touch a vector register and the assembly needs
** to save XMM0-XMM7 only around the slow ones.
**
** Keys and frames. The key is the return address of `call __fentry__`, inside
** the function (start + 5, or + 6 through the GOT under PIE): the symbolizer
** finds the enclosing function, as it does for MSVC /Gh. __return__ has no
** key: it pairs with the frame whose stack slot S (the address of the
** function's return address, the same at __fentry__ and at __return__) is its
** own. A frame records sp = S - SP_BIAS, which orders these frames with those
** of -finstrument-functions hooks and zones in the same program (they record
** a frame address at least 24 bytes below the caller's S), so both kinds mix.
**
** The stack-pointer rules of this mode (docs/runtime.md):
**   entry   frames with sp <= own are popped first: below, they were left by
**           longjmp or an exception; equal, by a sibling that never returned
**           (a tail jump out of an instrumented function into one without
**           hooks, or a call abandoned at the same depth). -finstrument-
**           functions' rule "equal sp nests" (inlined hooks share a frame)
**           does not hold here: only functions with a frame of their own
**           have these hooks.
**   return  frames with sp < own are dead and popped; the top frame, if its
**           sp is own, is this call's; zones its function left open sit on it
**           with the same sp and are popped first, counted as left open. No
**           frame with own sp: the entry was not recorded (paused,
**           before start-up): nothing to do.
** GCC 12 calls __return__ before a sibling call's jmp too, so a tail-called
** function finds its jumper popped already; the entry rule covers compilers
** that do not.
*/
#include "../posix/posix.h"
#include "../sample/sample.h"
#include "hotpath.h"
#include "../throttle/throttle.h"
#include "../patch/patch.h"
#include "../zone/zone.h"

#define SP_BIAS 16u

/* Codes the fast workers return to the assembly: 0 done, otherwise call the
** slow worker with the code. LEARN: a throttled node's sampled call returns
** while this thread learns return sites to unhook (unhook.c). THROTTLE + i:
** node i just completed its throttling decision call (calltree_throttle_due). */
#define CODE_DONE     0u
#define CODE_FULL     1u
#define CODE_LEARN    2u
#define CODE_THROTTLE 3u

int posix_fentry_enter(uintptr_t key, uintptr_t slot) CP_HIDDEN;
void posix_stub_drain(void) CP_HIDDEN;
void posix_fentry_enter_slow(uintptr_t key, uintptr_t slot, uint32_t code) CP_HIDDEN;
uint32_t posix_fentry_exit(uintptr_t slot) CP_HIDDEN;
void posix_fentry_exit_slow(uintptr_t slot, uint32_t code, uintptr_t site) CP_HIDDEN;

/* Fast entry: the caller's frame is live and strictly above, the stack has
** room, the callee is its parent's hot child: one clock read, a leaf (cost
** per call: bench/hookcost.py).
** A throttled callee pushes an untimed frame and, most of the time, reads
** no clock (calltree_push_throttled). */
CP_PROBE_CODE int posix_fentry_enter(uintptr_t key, uintptr_t slot)
{
  uintptr_t sp = slot - SP_BIAS;
  struct cp_thread *t = posix_tls;
  if (!cp_hook_ready(t)) return CODE_FULL;
  uint32_t mode = (uint32_t)cp_g.use_tsc;
  struct cp_frame *f = t->top;
  struct cp_node *nodes = t->nodes;
  uint32_t c = nodes[f->node].hot;
  if (CP_UNLIKELY(nodes[c].key != key)) {
    /* Not the hot child: the lookup table's first slot usually holds it
    ** (as in cp_hot_enter_try); a throttled callee is found there too. */
    uint32_t s = t->table[calltree_slot(t, f->node, key)];
    if (s != 0 && nodes[s].parent == f->node) {
      if ((nodes[s].key | CP_KEY_THROTTLED) == (key | CP_KEY_THROTTLED)) {
        nodes[f->node].hot = c = s;
      }
    }
    if (nodes[c].key != key) {
      if (nodes[c].key == (key | CP_KEY_THROTTLED) && f->sp > sp && f + 1 < t->commit_end) {
        calltree_push_throttled(t, f, c, sp);
        return CODE_DONE;
      }
      return CODE_FULL;
    }
  }
  if (CP_UNLIKELY((f->sp <= sp) | (f + 1 >= t->commit_end) |
                  (CP_FAST_CLOCK && mode == CP_CLOCK_OS)))
    return CODE_FULL;
  calltree_push(t, f, c, sp, cp_fast_enter_clock(mode) - t->debt);
  return CODE_DONE;
}

CP_PROBE_CODE void posix_fentry_enter_slow(uintptr_t key, uintptr_t slot, uint32_t code)
{
  (void)code;
  struct cp_thread *t = posix_tls;
  /* Busy (a nested hook, or a thread that stepped aside: its clock may be
  ** forbidden, SECCOMP_MODE_STRICT): nothing, and no clock read. */
  if (CP_UNLIKELY(t && t->gate == CP_GATE_BUSY)) return;
  uint64_t since = cp_now();             /* this path's time goes to t->debt */
  uintptr_t sp = slot - SP_BIAS;
  if (CP_UNLIKELY(!t)) t = runtime_thread_slow();
  sampler_ring_open(t);                  /* a hooked thread's first call: its ring */
  if (!cp_hook_sync(t)) return;          /* and samples of the caller's path */
  if (CP_UNLIKELY(!(cp_g.hooks_seen & CPD_HOOKS_FENTRY)))
    __atomic_fetch_or(&cp_g.hooks_seen, CPD_HOOKS_FENTRY, __ATOMIC_RELAXED);
  if (t->top->sp <= sp) calltree_unwind(t, sp + 1, since - t->debt);
  cp_hot_enter(t, (uint64_t)key, sp, since);
}

/* Fast return: the top frame is this call's (own sp, not a zone): one
** ordered clock read (cost per call: bench/hookcost.py). A throttled
** call's untimed frame is popped with no clock read. */
CP_PROBE_CODE uint32_t posix_fentry_exit(uintptr_t slot)
{
  uintptr_t sp = slot - SP_BIAS;
  struct cp_thread *t = posix_tls;
  if (!cp_hook_ready(t)) return CODE_FULL;
  struct cp_frame *f = t->top;
  if (CP_UNLIKELY(f->sp > sp)) return CODE_DONE;     /* not recorded at entry */
  if (CP_UNLIKELY(f->kind != CP_FRAME_TIMED)) {      /* throttled */
    if (f->sp != sp || CPD_KEY_IS_ZONE(t->nodes[f->node].key)) return CODE_FULL;
    if (f->kind == CP_FRAME_SAMPLED && t->unhook && t->unhook->active) return CODE_LEARN;
    calltree_pop_throttled(t, f);
    return CODE_DONE;
  }
  uint32_t mode = (uint32_t)cp_g.use_tsc;
  uint64_t now = cp_fast_exit_clock(mode);
  struct cp_node *n = &t->nodes[f->node];
  if (CP_UNLIKELY((f->sp != sp) | CPD_KEY_IS_ZONE(n->key) |
                  (CP_FAST_CLOCK && mode == CP_CLOCK_OS)))
    return CODE_FULL;
  calltree_charge(n, now - t->debt - f->tstart);
  t->top = f - 1;
  if (CP_UNLIKELY(cp_throttle_due(n->calls)))
    return CODE_THROTTLE + f->node;
  return CODE_DONE;
}

/* site: the return address of `call __return__` (unhook.c). */
CP_PROBE_CODE void posix_fentry_exit_slow(uintptr_t slot, uint32_t code, uintptr_t site)
{
  uintptr_t sp = slot - SP_BIAS;
  struct cp_thread *t = posix_tls;
  if (CP_UNLIKELY(!t)) return;                       /* no entry was recorded */
  if (code == CODE_LEARN) {                          /* the fast worker checked the frame */
    uint32_t node = t->top->node;
    calltree_pop_throttled(t, t->top);
    unhook_seen(t, node, site);
    return;
  }
  if (code >= CODE_THROTTLE) {
    calltree_throttle_due(t, code - CODE_THROTTLE);
    unhook_consider(t, code - CODE_THROTTLE, site, CP_PROBE_FENTRY);
    return;
  }
  if (!cp_hook_sync(t)) return;          /* and samples of the returning call */
  uint64_t now = cp_tnow_exit(t);
  struct cp_frame *f = t->top;
  if (f->sp < sp) f = calltree_unwind(t, sp, now);   /* left by longjmp, exceptions */
  if (f > t->frames && f->sp == sp && cp_frame_is_zone(t, f)) {
    zone_pop_open(t, now);
    f = t->top;
  }
  if (f == t->frames || f->sp != sp) return;         /* entry not recorded */
  struct cp_node *n = &t->nodes[f->node];
  calltree_charge_frame(t, f, now);
  t->top = f - 1;
  if (CP_UNLIKELY(cp_throttle_due(n->calls))) {
    calltree_throttle_due(t, f->node);
    unhook_consider(t, f->node, site, CP_PROBE_FENTRY);
  }
}

/* A counting stub's 64th call found samples waiting in the thread's ring
** (asm cp_stub_check): the unhooked function's caller is on top of the
** shadow stack, as it was since the thread's last hook. */
uint32_t posix_stub_drains;                 /* for tests */

CP_PROBE_CODE void posix_stub_drain(void)
{
  struct cp_thread *t = posix_tls;
  posix_stub_drains++;
  if (t && cp_ring_pending(t)) cp_ring_drain(t);
}

/* The offsets and values asm/fentry_x86_64.S's fast paths use. */
_Static_assert(offsetof(struct cp_thread, top) == 0, "T_TOP");
_Static_assert(offsetof(struct cp_thread, commit_end) == 8, "T_COMMIT_END");
_Static_assert(offsetof(struct cp_thread, nodes) == 16, "T_NODES");
_Static_assert(offsetof(struct cp_thread, gate) == 24, "T_GATE");
_Static_assert(offsetof(struct cp_thread, table) == 32, "T_TABLE");
_Static_assert(offsetof(struct cp_thread, mask) == 40, "T_MASK");
_Static_assert(offsetof(struct cp_thread, debt) == 48, "T_DEBT");
_Static_assert(offsetof(struct cp_thread, countdown) == 56, "T_COUNTDOWN");
_Static_assert(offsetof(struct cp_thread, rng) == 60, "T_RNG");
_Static_assert(offsetof(struct cp_thread, ring_head) == 64, "T_RING_HEAD");
_Static_assert(offsetof(struct cp_thread, ring_seen) == 72, "T_RING_SEEN");
_Static_assert(offsetof(struct cp_thread, unhook) == 240, "T_UNHOOK");
_Static_assert(offsetof(struct cp_unhook, active) == 0, "U_ACTIVE");
_Static_assert(CP_UNHOOK_COUNTED == 1024, "UNHOOK_COUNTED");
_Static_assert(offsetof(struct cp_thread, uslot) == 8520, "T_USLOT");
_Static_assert(offsetof(struct cp_thread, ucount) == 328, "T_UCOUNT");
_Static_assert(sizeof(struct cp_node) == 48, "node size");
_Static_assert(offsetof(struct cp_node, key) == 0, "N_KEY");
_Static_assert(offsetof(struct cp_node, parent) == 8, "N_PARENT");
_Static_assert(offsetof(struct cp_node, hot) == 12, "N_HOT");
_Static_assert(offsetof(struct cp_node, calls) == 16, "N_CALLS");
_Static_assert(offsetof(struct cp_node, incl) == 24, "N_INCL");
_Static_assert(offsetof(struct cp_node, min) == 32, "N_MIN");
_Static_assert(offsetof(struct cp_node, max) == 40, "N_MAX");
_Static_assert(sizeof(struct cp_frame) == 24, "frame size");
_Static_assert(offsetof(struct cp_frame, node) == 0, "F_NODE");
_Static_assert(offsetof(struct cp_frame, kind) == 4, "F_KIND");
_Static_assert(offsetof(struct cp_frame, sp) == 8, "F_SP");
_Static_assert(offsetof(struct cp_frame, tstart) == 16, "F_TSTART");
_Static_assert(offsetof(struct cp_global, gate) == 0, "G_GATE");
_Static_assert(offsetof(struct cp_global, use_tsc) == 4, "G_USE_TSC");
_Static_assert(offsetof(struct cp_global, throttle_calls) == 24, "G_THROTTLE_CALLS");
_Static_assert(CP_THROTTLE_AGAIN_MASK == 0x1FFFF, "the exit's test $0x1FFFF");
_Static_assert(offsetof(struct cp_global, throttle_period) == 32, "G_THROTTLE_PERIOD");
_Static_assert(offsetof(struct cp_global, sample_cap) == 176, "G_SAMPLE_CAP");
_Static_assert(CP_CLOCK_OS == 0 && CP_CLOCK_TSC_FAST == 2 && CP_CLOCK_TSC_ORDERED == 3, "clocks");
_Static_assert(CP_FRAME_TIMED == 0 && CP_FRAME_UNTIMED == 1 && CP_FRAME_SAMPLED == 2, "frame kinds");
_Static_assert(CP_KEY_THROTTLED == UINT64_C(1) << 62, "bit 62");
_Static_assert(CPD_KEY_ZONE >> 48 == 0xFF10, "zone keys");
