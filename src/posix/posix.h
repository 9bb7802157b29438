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

#endif
