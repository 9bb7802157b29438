/*
** sigguard_posix.c (POSIX) -- the program's sigaction and signal pass through
** here first: when the program sets the action of the signal capprof's
** sampler uses, every timer is deleted and the signal's queued instances
** dropped before the program's action is installed (sampler_signal_guard,
** sample_posix.c), so that no sample of capprof's ends the process or
** reaches the program's handler. Weak: a definition of the program's wins.
** Kept apart from the runtime's objects (CMakeLists.txt) so that its names,
** libc's, are no symbols of a feature for the runtime's other files.
*/
#define _GNU_SOURCE
#include <signal.h>
#include <string.h>

#include "sample.h"
#include "sample_posix.h"

extern int __sigaction(int, const struct sigaction *, struct sigaction *);

__attribute__((weak, visibility("default"))) CP_NOINSTR
int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
  if (act)
    sampler_signal_guard(sig, (act->sa_flags & SA_SIGINFO) ? (void (*)(void))act->sa_sigaction
                                                           : (void (*)(void))act->sa_handler);
  return __sigaction(sig, act, old);
}

/* BSD semantics, as glibc's signal: restart, the signal blocked in its handler. */
static sighandler_t bsd_set(int sig, sighandler_t h)
{
  struct sigaction act, old;
  if (h == SIG_ERR || sig < 1 || sig >= NSIG) return SIG_ERR;
  memset(&act, 0, sizeof act);
  act.sa_handler = h;
  sigemptyset(&act.sa_mask);
  sigaddset(&act.sa_mask, sig);
  act.sa_flags = SA_RESTART;
  sampler_signal_guard(sig, (void (*)(void))h);
  if (__sigaction(sig, &act, &old) < 0) return SIG_ERR;
  return old.sa_handler;
}

__attribute__((weak, visibility("default"))) CP_NOINSTR
sighandler_t signal(int sig, sighandler_t h) { return bsd_set(sig, h); }

__attribute__((weak, visibility("default"))) CP_NOINSTR
sighandler_t bsd_signal(int sig, sighandler_t h) { return bsd_set(sig, h); }
