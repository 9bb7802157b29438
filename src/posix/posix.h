/*
** posix.h -- private to the POSIX backend: the thread-local state pointer the
** hooks read. initial-exec TLS is one %fs-relative load, also in libcapprof.so.
*/
#ifndef CAPPROF_POSIX_H
#define CAPPROF_POSIX_H

#include "../core/core.h"

extern __thread struct cp_thread *posix_tls
    __attribute__((tls_model("initial-exec"))) CP_HIDDEN;

/* 1 when the calling thread has no seccomp filter ("Seccomp: 0" in its own
** /proc/thread-self/status: filters are per thread); 0 when it has one or
** the file cannot say. A filter may kill the process for a system call the
** program never makes (membarrier, perf_event_open): the runtime makes
** those only where this is 1. Reads in 128-byte pieces (a hook's slow
** path may run on a small stack). */
int posix_seccomp_none(void) CP_HIDDEN;
/* Set (never cleared) when the host asked for a seccomp filter through an
** interposed call (os_guard.c): posix_seccomp_none is 0 from then on, in
** every thread, whether or not the filter was installed for all. */
extern volatile int posix_filter_seen CP_HIDDEN;
/* The calling thread enters SECCOMP_MODE_STRICT (os_guard.c): the core's
** thread_aside callback, before the mode is set. */
void posix_thread_aside(void) CP_HIDDEN;

/* The runtime's critical sections against the host's interposed calls
** (os_guard.c, x86-64): posix_guard_try takes the guard when no host call
** is under way and no section runs (1), else 0, never waiting; while held,
** the host's mprotect and filter installs wait. posix_guard_forked: in a
** fork child. posix_guard_waits: host calls that waited so far (tests). */
int posix_guard_try(void) CP_HIDDEN;
void posix_guard_release(void) CP_HIDDEN;
void posix_guard_forked(void) CP_HIDDEN;
uint32_t posix_guard_waits(void) CP_HIDDEN;

#endif
