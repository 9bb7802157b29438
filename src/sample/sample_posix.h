/*
** sample_posix.h -- what the two Linux samplers share: the signal-driven one
** (sample_posix.c) and the ring buffer one (ring_posix.c).
*/
#ifndef CAPPROF_SAMPLE_POSIX_H
#define CAPPROF_SAMPLE_POSIX_H

#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

struct sample_thread;

/* The calling thread's sampling state, claimed at its first sample or ring. */
extern __thread struct sample_thread *sampler_tls_state
    __attribute__((tls_model("initial-exec"))) CP_HIDDEN;

/* Whether perf_event_open is refused here (or CAPPROF_SAMPLE_NO_PERF says
** to act as if); the kernel's perf_event_paranoid as text, for messages. */
int perf_refused(void) CP_HIDDEN;
const char *paranoid_text(char *buf, size_t n) CP_HIDDEN;

/* In a fork child, under os_lock: the parent's ring is not mapped here. */
void sampler_ring_fork_child(void) CP_HIDDEN;

static inline uint64_t gettid_raw(void) { return (uint64_t)syscall(SYS_gettid); }

#endif
