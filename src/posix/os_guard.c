/*
** os_guard.c (POSIX, x86-64) -- the host's calls that change what the
** runtime may safely do, interposed and serialized with the runtime's own
** critical sections (a patch of code, src/patch/patch_x86_64.c): mprotect,
** and the ways to install a seccomp filter (prctl, and libc's syscall()
** for SYS_seccomp and SYS_prctl). A host call waits while a section runs;
** a section does not begin while a host call runs. A filter is noted
** (posix_filter_seen) before it is installed.
**
** What a raw system call (an inline `syscall` instruction, or a library
** with its own) does is not seen: docs/runtime.md, "Guarantees and limits".
*/
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include "posix.h"

static volatile uint32_t guard_lock;     /* a runtime section runs */
static volatile uintptr_t guard_owner;   /* its thread (thread pointer), or 0 */
static volatile uint32_t host_calls;     /* host calls under way */
static volatile uint32_t waited;         /* host calls that waited (tests) */

static uintptr_t self_tp(void)
{
  uintptr_t tp;
  __asm__("mov %%fs:0, %0" : "=r"(tp));
  return tp;
}

/* The system call itself: no libc wrapper (which may be the interposer
** below), no errno; -errno on failure. */
static long raw_syscall(long n, long a, long b, long c, long d, long e, long f)
{
  register long r10 __asm__("r10") = d;
  register long r8 __asm__("r8") = e;
  register long r9 __asm__("r9") = f;
  long ret;
  __asm__ __volatile__("syscall"
                       : "=a"(ret)
                       : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
                       : "rcx", "r11", "memory");
  return ret;
}

static long set_errno(long r)
{
  if (r < 0 && r > -4096) {
    errno = (int)-r;
    return -1;
  }
  return r;
}

int posix_guard_try(void)
{
  if (__atomic_exchange_n(&guard_lock, 1, __ATOMIC_SEQ_CST)) return 0;
  if (__atomic_load_n(&host_calls, __ATOMIC_SEQ_CST)) {
    __atomic_store_n(&guard_lock, 0, __ATOMIC_RELEASE);
    return 0;
  }
  guard_owner = self_tp();
  return 1;
}

void posix_guard_release(void)
{
  guard_owner = 0;
  __atomic_store_n(&guard_lock, 0, __ATOMIC_RELEASE);
}

void posix_guard_forked(void)
{
  host_calls = 0;                        /* the other threads' calls are not here */
  guard_owner = 0;
  guard_lock = 0;
}

uint32_t posix_guard_waits(void) { return __atomic_load_n(&waited, __ATOMIC_RELAXED); }

/* A host call begins: it waits while a section of another thread runs (a
** section's own thread, e.g. a fork handler, never waits); a section that
** begins meanwhile sees host_calls and gives up. */
static void host_enter(void)
{
  for (;;) {
    __atomic_add_fetch(&host_calls, 1, __ATOMIC_SEQ_CST);
    if (!__atomic_load_n(&guard_lock, __ATOMIC_SEQ_CST) || guard_owner == self_tp()) return;
    __atomic_sub_fetch(&host_calls, 1, __ATOMIC_SEQ_CST);
    __atomic_add_fetch(&waited, 1, __ATOMIC_RELAXED);
    while (__atomic_load_n(&guard_lock, __ATOMIC_ACQUIRE)) sched_yield();
  }
}

static void host_leave(void) { __atomic_sub_fetch(&host_calls, 1, __ATOMIC_SEQ_CST); }

/* A host system call that may install a filter: noted first, then made,
** serialized with the runtime's sections. */
static long guarded(long n, long a, long b, long c, long d, long e, long f)
{
  host_enter();
  __atomic_store_n(&posix_filter_seen, 1, __ATOMIC_SEQ_CST);
  long r = raw_syscall(n, a, b, c, d, e, f);
  host_leave();
  return r;
}

static int installs_filter(long n, long a)
{
  return n == SYS_seccomp || (n == SYS_prctl && a == PR_SET_SECCOMP);
}

/* Whether the call puts the calling thread in SECCOMP_MODE_STRICT: after
** it only read, write, exit and sigreturn are allowed, and the runtime's
** next system call in a hook would kill the process, so the thread's hooks
** step aside first (posix_thread_aside). */
static int enters_strict(long n, long a, long b)
{
  return (n == SYS_seccomp && a == SECCOMP_SET_MODE_STRICT) ||
         (n == SYS_prctl && a == PR_SET_SECCOMP && b == SECCOMP_MODE_STRICT);
}

/* The interposers: weak, so that a program's own definition wins. */
__attribute__((weak, visibility("default"))) CP_NOINSTR int mprotect(void *addr, size_t len, int prot)
{
  host_enter();
  long r = raw_syscall(SYS_mprotect, (long)addr, (long)len, prot, 0, 0, 0);
  host_leave();
  return (int)set_errno(r);
}

__attribute__((weak, visibility("default"))) CP_NOINSTR int prctl(int option, ...)
{
  va_list ap;
  va_start(ap, option);
  long a = va_arg(ap, long), b = va_arg(ap, long), c = va_arg(ap, long), d = va_arg(ap, long);
  va_end(ap);
  if (enters_strict(SYS_prctl, option, a)) posix_thread_aside();
  if (installs_filter(SYS_prctl, option))
    return (int)set_errno(guarded(SYS_prctl, option, a, b, c, d, 0));
  return (int)set_errno(raw_syscall(SYS_prctl, option, a, b, c, d, 0));
}

__attribute__((weak, visibility("default"))) CP_NOINSTR long syscall(long n, ...)
{
  va_list ap;
  va_start(ap, n);
  long a = va_arg(ap, long), b = va_arg(ap, long), c = va_arg(ap, long);
  long d = va_arg(ap, long), e = va_arg(ap, long), f = va_arg(ap, long);
  va_end(ap);
  if (enters_strict(n, a, b)) posix_thread_aside();
  if (installs_filter(n, a)) return set_errno(guarded(n, a, b, c, d, e, f));
  return set_errno(raw_syscall(n, a, b, c, d, e, f));
}
