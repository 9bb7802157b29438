/*
** hooks.c (POSIX) -- the entry and exit hooks GCC and Clang call with
** -finstrument-functions[-after-inlining], and the start-up and exit hooks
** of the runtime. The key is the function's address; the stack pointer that
** orders frames is the hook's frame address, just below the caller's frame.
*/
#include "../posix/posix.h"
#include "../sample/sample.h"
#include "hotpath.h"
#include "../patch/patch.h"

#define HOOK_API __attribute__((visibility("default"))) CP_NOINSTR

/* Unhooking (unhook.c) patches x86-64 code only. */
#if defined(__x86_64__)
#  define CP_UNHOOK 1
#else
#  define CP_UNHOOK 0
#endif

HOOK_API void __cyg_profile_func_enter(void *fn, void *site);
HOOK_API void __cyg_profile_func_exit(void *fn, void *site);

/* The hook's frame address (the value __builtin_frame_address(0) would
** give: CFA minus return address and saved frame pointer), computed without
** making the hook set up a frame pointer. */
#define HOOK_SP() ((uintptr_t)__builtin_dwarf_cfa() - 2 * sizeof(void *))

/* Everything but the common case: first call of a thread, gate changed
** (pause, reset), stack to unwind or grow, new call path, a callee not in
** its first table slot; throttled calls timed as samples (exit). Kept out of line
** so that the fast paths below make no calls (the entry hook still saves four
** registers: its table-slot probe needs more than the free ones). */
CP_PROBE_CODE CP_NOINLINE CP_NOINSTR static void enter_slow(void *fn, uintptr_t sp)
{
  struct cp_thread *t = posix_tls;
  /* Busy (a nested hook, or a thread that stepped aside: its clock may be
  ** forbidden, SECCOMP_MODE_STRICT): nothing, and no clock read. */
  if (CP_UNLIKELY(t && t->gate == CP_GATE_BUSY)) return;
  uint64_t since = cp_now();             /* this path's time goes to t->debt */
  if (CP_UNLIKELY(!t)) t = runtime_thread_slow();
  sampler_ring_open(t);                  /* a hooked thread's first call: its ring */
  if (!cp_hook_sync(t)) return;          /* and samples of the caller's path */
  if (CP_UNLIKELY(!(cp_g.hooks_seen & CPD_HOOKS_CYG)))
    __atomic_fetch_or(&cp_g.hooks_seen, CPD_HOOKS_CYG, __ATOMIC_RELAXED);
  cp_hot_enter(t, (uint64_t)(uintptr_t)fn, sp, since);
}

CP_PROBE_CODE CP_NOINLINE CP_NOINSTR static void exit_slow(void *fn, uintptr_t sp)
{
  struct cp_thread *t = posix_tls;
  if (CP_UNLIKELY(!t)) return;           /* no entry was recorded */
  if (!cp_hook_sync(t)) return;          /* and samples of the returning call */
  cp_hot_exit(t, (uint64_t)(uintptr_t)fn, sp, 1);   /* a sampled call's too */
}

/* Fast path (cp_hook_ready, cp_hot_enter_try): the TLS load, the gate
** compare, the ring's compare, one clock read; a leaf function. Its cost per call, from the
** built code: bench/hookcost.py. */
CP_PROBE_CODE void __cyg_profile_func_enter(void *fn, void *site)
{
  (void)site;
  struct cp_thread *t = posix_tls;
  uintptr_t sp = HOOK_SP();
  if (cp_hook_ready(t) && CP_LIKELY(cp_hot_enter_try(t, (uint64_t)(uintptr_t)fn, sp))) {
#if CP_UNHOOK
    /* A throttled call timed as a sample (one in P): unhooking learns
    ** where its entry hook is called from. */
    if (CP_UNLIKELY(t->top->kind == CP_FRAME_SAMPLED) && t->unhook && t->unhook->active)
      unhook_entry_site(t, t->top->node, (uintptr_t)__builtin_return_address(0));
#endif
    return;
  }
  enter_slow(fn, sp);
#if CP_UNHOOK
  /* The state may be gone (the process is ending): only while in step. */
  t = posix_tls;
  if (t && t->gate == cp_g.gate && t->unhook && t->unhook->active &&
      t->top->kind == CP_FRAME_SAMPLED)
    unhook_entry_site(t, t->top->node, (uintptr_t)__builtin_return_address(0));
#endif
}

/* Fast path (cp_hook_ready, cp_hot_exit_try): the TLS load, the gate
** compare, the ring's compare, one ordered clock read. Cost per call: bench/hookcost.py. */
CP_PROBE_CODE void __cyg_profile_func_exit(void *fn, void *site)
{
  (void)site;
  struct cp_thread *t = posix_tls;
  uintptr_t sp = HOOK_SP();
  if (cp_hook_ready(t)) {
#if CP_UNHOOK
    /* Unhooking learns the exit hook's call sites from sampled returns. */
    if (CP_UNLIKELY(t->top->kind == CP_FRAME_SAMPLED) && t->unhook && t->unhook->active) {
      struct cp_frame *f = t->top;
      uint32_t node = f->node;
      exit_slow(fn, sp);
      if (t->top == f - 1) unhook_seen(t, node, (uintptr_t)__builtin_return_address(0));
      return;
    }
#endif
    int r = cp_hot_exit_try(t, (uint64_t)(uintptr_t)fn, sp);
    if (CP_LIKELY(r == 1)) return;
#if CP_UNHOOK
    if (r == 2) {
      unhook_consider(t, (t->top + 1)->node, (uintptr_t)__builtin_return_address(0),
                      CP_PROBE_CYG);
      return;
    }
#endif
    if (r) return;
  }
  exit_slow(fn, sp);
}

/* Calibrate before main; hooks that fire earlier (other constructors)
** initialise lazily. */
__attribute__((constructor)) CP_NOINSTR static void capprof_start(void)
{
  runtime_init();
  runtime_report_pending();
}

/* Runs after atexit handlers and C++ static destructors of the program. */
__attribute__((destructor)) CP_NOINSTR static void capprof_finish(void)
{
  runtime_atexit();
}
