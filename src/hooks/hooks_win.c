/*
** hooks.c (Win32) -- the C side of MSVC's /Gh /GH hooks: the workers that
** asm/penter_x64.asm (x64) and hooks_x86.c (x86) call once every volatile
** register is saved; the -finstrument-functions hooks (MinGW GCC, clang,
** clang-cl with /clang:-finstrument-functions); and the runtime's start-up
** and exit, in this file so that any hook a program uses pulls them in from
** the static library. _pexit cannot know its function, so exits pair with
** frames by stack pointer alone.
*/
#include <stdlib.h>

#include "../win/win.h"
#include "hotpath.h"
#include "../zone/zone.h"

/* Over cp_hot_enter: the TLS read (one global and one gs-relative load),
** the prologue (cp_hook_sync: the gate compare, the ring's compare, which
** no Windows sampler feeds), the frame cache, one more compare of the top
** frame's sp; what that costs per call: bench/hookcost.py. GetLastError is
** saved by the caller.
**
** sp here becomes the function's return-address slot (win_frame_slot),
** never shared by a function and its callee: /Gh and -pg emit no hooks for
** inlined bodies. So a frame with the same sp is a sibling that never
** exited (tail jump, longjmp, exception) and is popped too, where the
** common rule (cp_hot_enter, made for -finstrument-functions' inlined
** hooks) pops only frames strictly below. */
CP_PROBE_CODE void win_hook_enter(uintptr_t key, uintptr_t sp, uintptr_t fp)
{
  struct cp_thread *t = win_tls_get();
  if (CP_UNLIKELY(!t)) t = runtime_thread_slow();
  if (!cp_hook_sync(t)) return;
  sp = win_frame_slot(key, sp, fp);
  if (CP_UNLIKELY(t->top->sp <= sp)) calltree_unwind(t, sp + 1, cp_tnow(t));
  cp_hot_enter(t, (uint64_t)key, sp, 0);
}

/* _pexit knows no key: the exit pairs with the innermost frame once dead
** frames are popped. Zones a function began and left open sit above it with
** its sp (zone.c), which a /GH exit with the frame still up (sp = S - N)
** does not pop: they are popped here, counted as left open, first. */
CP_PROBE_CODE void win_hook_exit(uintptr_t sp)
{
  struct cp_thread *t = win_tls_get();
  if (CP_UNLIKELY(!t)) return;           /* no entry was recorded */
  if (!cp_hook_sync(t)) return;
  struct cp_frame *f = t->top;
  if (CP_UNLIKELY(f > t->frames && cp_frame_is_zone(t, f))) zone_pop_open(t, cp_tnow(t));
  cp_hot_exit(t, 0, sp, 0);
}

/* -finstrument-functions, as on POSIX: the key is the function's address and
** the frame address orders frames. Only the slow paths touch errno or
** GetLastError, and they save both. */
CP_NOINSTR void __cyg_profile_func_enter(void *fn, void *site);
CP_NOINSTR void __cyg_profile_func_exit(void *fn, void *site);

CP_PROBE_CODE void __cyg_profile_func_enter(void *fn, void *site)
{
  (void)site;
  struct cp_thread *t = win_tls_get();
  if (CP_UNLIKELY(!t)) t = runtime_thread_slow();
  if (!cp_hook_sync(t)) return;
  cp_hot_enter(t, (uint64_t)(uintptr_t)fn, CP_FRAME_ADDRESS(), 0);
}

CP_PROBE_CODE void __cyg_profile_func_exit(void *fn, void *site)
{
  (void)site;
  struct cp_thread *t = win_tls_get();
  if (CP_UNLIKELY(!t)) return;
  if (!cp_hook_sync(t)) return;
  cp_hot_exit(t, (uint64_t)(uintptr_t)fn, CP_FRAME_ADDRESS(), 1);
}

/* Process exit. For the static library atexit runs it from exit(), before
** the DLLs detach; in capprof.dll the C runtime runs the DLL's own atexit
** list at DLL_PROCESS_DETACH, under the loader lock, where writing a file
** is allowed (no thread creation, no waits but os_lock's bounded one). A
** program that ends by ExitProcess without exit() runs no atexit handler:
** the TLS callback below writes the dump then. Whichever comes first wins;
** runtime_atexit does nothing the second time. */
static void __cdecl capprof_finish(void)
{
  runtime_atexit();
  win_process_exit();
}

WIN_RUNTIME_MARKER;

WIN_TLS_CALLBACK(capprof_tls_callback)
{
  (void)module;
  (void)reserved;
  if (reason == DLL_PROCESS_DETACH) capprof_finish();
  else if (reason == DLL_THREAD_ATTACH) iat_thread_attach();
}

/* Calibrate before main (or when the DLL is loaded); hooks that fire
** earlier, in other DLLs' DllMain or C++ constructors, initialise lazily. */
WIN_STARTUP(capprof_start)
{
  win_resolve_apis();          /* before os_lock is ever held */
  runtime_init();
  atexit(capprof_finish);
  iat_run_ready();
}
