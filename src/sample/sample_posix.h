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
struct sample_session;

/* The calling thread's sampling state, claimed at its first sample or ring. */
extern __thread struct sample_thread *sampler_tls_state
    __attribute__((tls_model("initial-exec"))) CP_HIDDEN;

/* Whether perf_event_open is refused here (or CAPPROF_SAMPLE_NO_PERF says
** to act as if); the kernel's perf_event_paranoid as text, for messages. */
int perf_refused(void) CP_HIDDEN;
const char *paranoid_text(char *buf, size_t n) CP_HIDDEN;

/* In a fork child, under os_lock: the parent's ring is not mapped here. */
void sampler_ring_fork_child(void) CP_HIDDEN;

/* The timer sampler's part of sampler_note: the rate it fired at, and
** whether the program took its signal (sample_posix.c). Under os_lock. */
void sampler_timer_note(struct sample_session *s) CP_HIDDEN;

/* The program sets the action of signal sig to handler (sa_handler or
** sa_sigaction): if sig is the sampler's and handler is not capprof's,
** every timer and event is deleted and the signal's pending instances
** dropped before the program's action is installed (sigguard_posix.c).
** Not under os_lock; not from capprof's own code. */
void sampler_signal_guard(int sig, void (*handler)(void)) CP_HIDDEN;

static inline uint64_t gettid_raw(void) { return (uint64_t)syscall(SYS_gettid); }

#endif
