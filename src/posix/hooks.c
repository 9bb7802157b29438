/*
** hooks.c (POSIX) -- the entry and exit hooks GCC and Clang call with
** -finstrument-functions[-after-inlining], and the start-up and exit hooks
** of the runtime. The key is the function's address; the stack pointer that
** orders frames is the hook's frame address, just below the caller's frame.
*/
#include "posix.h"

#define HOOK_API __attribute__((visibility("default"))) CP_NOINSTR

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
  uint64_t since = cp_now();             /* this path's time goes to t->debt */
  if (CP_UNLIKELY(!t)) t = runtime_thread_slow();
  if (CP_UNLIKELY(t->gate != cp_g.gate) && runtime_sync(t)) return;
  if (CP_UNLIKELY(!(cp_g.hooks_seen & CPD_HOOKS_CYG)))
    __atomic_fetch_or(&cp_g.hooks_seen, CPD_HOOKS_CYG, __ATOMIC_RELAXED);
  cp_hot_enter(t, (uint64_t)(uintptr_t)fn, sp, since);
}

CP_PROBE_CODE CP_NOINLINE CP_NOINSTR static void exit_slow(void *fn, uintptr_t sp)
{
  struct cp_thread *t = posix_tls;
  if (CP_UNLIKELY(!t)) return;           /* no entry was recorded */
  if (CP_UNLIKELY(t->gate != cp_g.gate) && runtime_sync(t)) return;
  cp_hot_exit(t, (uint64_t)(uintptr_t)fn, sp, 1);   /* a sampled call's too */
}

/* Cost (fast path, see cp_hot_enter_try): one TLS load, one gate load and
** compare, then one clock read, 6 loads, 4 stores, 1 combined branch; a
** leaf function: no calls, four registers saved. */
CP_PROBE_CODE void __cyg_profile_func_enter(void *fn, void *site)
{
  (void)site;
  struct cp_thread *t = posix_tls;
  uintptr_t sp = HOOK_SP();
  if (CP_LIKELY(t != NULL && t->gate == cp_g.gate) &&
      CP_LIKELY(cp_hot_enter_try(t, (uint64_t)(uintptr_t)fn, sp)))
    return;
  enter_slow(fn, sp);
}

/* Cost (fast path, see cp_hot_exit_try): one TLS load, one gate load and
** compare, one ordered clock read, 4 loads, 5 stores, 3 branches. */
CP_PROBE_CODE void __cyg_profile_func_exit(void *fn, void *site)
{
  (void)site;
  struct cp_thread *t = posix_tls;
  uintptr_t sp = HOOK_SP();
  if (CP_LIKELY(t != NULL && t->gate == cp_g.gate) &&
      CP_LIKELY(cp_hot_exit_try(t, (uint64_t)(uintptr_t)fn, sp)))
    return;
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
