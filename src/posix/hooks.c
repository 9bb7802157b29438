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

/* Cost over cp_hot_enter: one TLS load, one gate load and compare. */
void __cyg_profile_func_enter(void *fn, void *site)
{
  (void)site;
  struct cp_thread *t = posix_tls;
  if (CP_UNLIKELY(!t)) t = runtime_thread_slow();
  if (CP_UNLIKELY(t->gate != cp_g.gate) && runtime_sync(t)) return;
  cp_hot_enter(t, (uint64_t)(uintptr_t)fn, (uintptr_t)__builtin_frame_address(0));
}

void __cyg_profile_func_exit(void *fn, void *site)
{
  (void)site;
  struct cp_thread *t = posix_tls;
  if (CP_UNLIKELY(!t)) return;           /* no entry was recorded */
  if (CP_UNLIKELY(t->gate != cp_g.gate) && runtime_sync(t)) return;
  cp_hot_exit(t, (uint64_t)(uintptr_t)fn, (uintptr_t)__builtin_frame_address(0), 1);
}

/* Calibrate before main; hooks that fire earlier (other constructors)
** initialise lazily. */
__attribute__((constructor)) CP_NOINSTR static void capprof_start(void)
{
  runtime_init();
}

/* Runs after atexit handlers and C++ static destructors of the program. */
__attribute__((destructor)) CP_NOINSTR static void capprof_finish(void)
{
  runtime_atexit();
}
