/*
** posix.h -- private to the POSIX backend: the thread-local state pointer the
** hooks read. initial-exec TLS is one %fs-relative load, also in libcapprof.so.
*/
#ifndef CAPPROF_POSIX_H
#define CAPPROF_POSIX_H

#include "../internal.h"

extern __thread struct cp_thread *posix_tls
    __attribute__((tls_model("initial-exec"))) CP_HIDDEN;

#endif
