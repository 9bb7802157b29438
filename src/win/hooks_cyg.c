/*
** hooks_cyg.c (Win32, MinGW GCC and clang) -- the entry and exit hooks of
** -finstrument-functions, as on POSIX: the key is the function's address and
** the frame address orders frames. Only the slow paths touch errno or
** GetLastError, and they save both.
*/
#include "win.h"

#define HOOK_API CP_NOINSTR

HOOK_API void __cyg_profile_func_enter(void *fn, void *site);
HOOK_API void __cyg_profile_func_exit(void *fn, void *site);

void __cyg_profile_func_enter(void *fn, void *site)
{
  (void)site;
  struct cp_thread *t = win_tls_get();
  if (CP_UNLIKELY(!t)) t = runtime_thread_slow();
  if (CP_UNLIKELY(t->gate != cp_g.gate) && runtime_sync(t)) return;
  cp_hot_enter(t, (uint64_t)(uintptr_t)fn, (uintptr_t)__builtin_frame_address(0));
}

void __cyg_profile_func_exit(void *fn, void *site)
{
  (void)site;
  struct cp_thread *t = win_tls_get();
  if (CP_UNLIKELY(!t)) return;
  if (CP_UNLIKELY(t->gate != cp_g.gate) && runtime_sync(t)) return;
  cp_hot_exit(t, (uint64_t)(uintptr_t)fn, (uintptr_t)__builtin_frame_address(0), 1);
}
