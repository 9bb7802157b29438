/*
** sample.h -- private interface of the sampling subsystem: sessions (profile
** objects and the process-wide sampling of CAPPROF_SAMPLE), the per-thread
** sample state written from the signal handler or sampler thread (sample.c,
** portable), and the sampler back end each platform implements once with the
** same signatures (src/sample/sample_posix.c, src/sample/sample_win.c).
*/
#ifndef CAPPROF_SAMPLE_H
#define CAPPROF_SAMPLE_H

#include "../core/core.h"

#define SAMPLE_MAX_SESSIONS 32      /* profile objects (open or closed) + process */
#define SAMPLE_MAX_THREADS  4096    /* threads with sample state, per process */
#define SAMPLE_MAX_DEPTH    64      /* frames of one stack walk, leaf included */
#define SAMPLE_STACK_NODES  (1u << 17)  /* sampled-stack nodes per thread */
#define SAMPLE_PC_SLOTS     (1u << 15)  /* (node, pc) pairs per thread, table slots */
/* A (node, pc) pair's pc with this bit: a sample in a library, and pc is
** the return address minus one of the executable's innermost call the stack
** showed (CPD_PC_CALLER in dumps). */
#define SAMPLE_PC_CALLER    CPD_PC_CALLER
#define SAMPLE_PC_PROBES    32          /* slots tried before a pair is not kept */

/* Relaxed atomic add: the handler of one thread and that of another may hit
** the same bucket at once. */
#if defined(_MSC_VER) && !defined(__clang__)
#  include <intrin.h>
#  define SAMPLE_ADD32(p, v) ((void)_InterlockedExchangeAdd((volatile long *)(p), (long)(v)))
#  define SAMPLE_ADD64(p, v) ((void)_InterlockedExchangeAdd64((volatile __int64 *)(p), (__int64)(v)))
#  define SAMPLE_CLAIM(p) ((uint32_t)_InterlockedIncrement((volatile long *)(p)) - 1u)
/* x86 and x64 keep stores in order: a compiler barrier is all it takes. */
#  define SAMPLE_PUBLISH64(p, v) (_ReadWriteBarrier(), *(volatile uint64_t *)(p) = (v))
#  define SAMPLE_ACQUIRE64(p) (*(volatile const uint64_t *)(p))
#else
#  define SAMPLE_ADD32(p, v) ((void)__atomic_fetch_add((p), (v), __ATOMIC_RELAXED))
#  define SAMPLE_ADD64(p, v) ((void)__atomic_fetch_add((p), (v), __ATOMIC_RELAXED))
#  define SAMPLE_CLAIM(p) __atomic_fetch_add((p), 1u, __ATOMIC_ACQ_REL)
/* A value written after the fields it guards, read before them. */
#  define SAMPLE_PUBLISH64(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)
#  define SAMPLE_ACQUIRE64(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#endif

/* A source: what the user names, what the dump records, whether its
** interval is time. */
struct sample_source {
  const char *name;
  uint32_t code;              /* CPD_SRC_* */
  int is_time;
};
/* The source called name, or NULL. "time" is task-clock. */
const struct sample_source *sample_find_source(const char *name) CP_HIDDEN;

/* One sampling session: a profile object or the process-wide sampling. */
struct sample_session {
  int used;                   /* slot taken (never freed: closed ones stay for the dump) */
  uint32_t kind;              /* CPD_SK_* */
  volatile int running;       /* the handler counts only while set */
  int closed;                 /* capprof_profile_close was called */
  int failed;                 /* could not start: note says why */
  uint32_t slot;              /* index in the session table */
  const struct sample_source *source;
  uint64_t interval;          /* ns (time sources) or events */
  uint32_t method;            /* CPD_SM_*, set by the back end on start */
  uintptr_t lo, hi;           /* range [lo, hi) */
  uint32_t shift;             /* log2 of the bucket size */
  uint32_t nbuckets;
  uint32_t *buckets;          /* nbuckets counts, or NULL (process sampling) */
  size_t buckets_bytes;
  volatile uint64_t samples;  /* taken while running */
  volatile uint64_t hits;     /* in range (objects) or recorded (process) */
  volatile uint64_t lost;     /* process: no room for the thread or the stack */
  volatile uint64_t walked;   /* process: the stack walk found a caller */
  volatile uint64_t signals;  /* CPU-time timer: signals taken (each one sample
                              ** plus its overruns): the effective rate */
  char name[64];
  char method_text[96];       /* the back end's words: "perf_event_open task-clock" */
  char note[256];             /* why it failed, or which fallback it took */
  void *backend;              /* the back end's per-session state */
};

/* One sampled-stack node: a code address under its caller's node. Node 0
** of each thread is the root (addr 0). Callers' addresses are return
** addresses minus one, so that they fall inside the call instruction. */
struct sample_snode {
  uint64_t addr;
  uint32_t parent;
  uint32_t self;              /* samples with this exact stack */
};

/* What one thread's samples went to. Written by that thread's signal
** handler (POSIX) or by the sampler thread (Windows), read by the dump. */
struct sample_thread {
  uint64_t tid;
  uintptr_t stack_lo, stack_hi; /* the thread's stack, for frame walks; 0: unknown */
  struct cp_thread *tree;     /* the thread's call tree (hooked programs), or NULL */
  const struct cp_ended *ended_rec; /* its packed tree once the thread ended, or NULL */
  uint32_t tree_gen;          /* tree generation node_samples belong to */
  uint32_t node_hw;           /* one past the highest node charged */
  uint32_t *node_samples;     /* per call-tree node, reserved for the node cap:
                              ** samples in the program's own code */
  uint32_t *probe_samples;    /* the same for samples in capprof's hooks (the
                              ** second half of node_samples' mapping) */
  size_t node_samples_bytes;  /* of each half */
  struct sample_pc *pcs;      /* program samples per (node, pc), SAMPLE_PC_SLOTS
                              ** reserved with node_samples; NULL if none */
  uint32_t pcs_used;          /* slots in use (a pair that finds no free slot
                              ** among SAMPLE_PC_PROBES is not kept: its
                              ** sample counts for its node only) */
  uint32_t *node_area;        /* where node_samples and probe_samples go, in the */
  size_t node_area_bytes;     /* thread's one mapping (sample_thread_claim): */
  struct sample_pc *pcs_area; /* the halves' size; and the (node, pc) table's place */
  struct sample_snode *nodes; /* sampled stacks, SAMPLE_STACK_NODES reserved */
  uint32_t *table;            /* (parent, addr) -> node, open addressing */
  uint32_t mask;
  volatile uint32_t nnodes;   /* published after a node is written */
  uint64_t samples;           /* recorded in this thread */
  uint64_t lost;              /* no room for a new stack node */
  int ended;                  /* the thread ended (its state is kept for the dump) */
  char name[64];              /* name at the thread's end, "" while it runs */
};

/* One slot of a thread's (node, pc) table: the tool charges a sample whose
** pc lies in an instrumented callee of the node (its prologue before the
** entry hook, its epilogue after the exit hook) to that callee's node. */
struct sample_pc {
  uint64_t pc;                /* 0: free */
  uint32_t node;
  uint32_t count;
};

/* Registers of an interrupted thread. */
struct sample_regs {
  uintptr_t pc, fp, sp;
};

/* ---- sample.c ----------------------------------------------------------- */

extern struct sample_session sample_sessions[SAMPLE_MAX_SESSIONS] CP_HIDDEN;

/* A new sample_thread for tid, from a pool that never shrinks; NULL when
** full or out of memory. Async-signal-safe (an atomic claim and os_reserve/
** os_commit, which are system calls). */
struct sample_thread *sample_thread_claim(uint64_t tid) CP_HIDDEN;
/* Count one sample of session s in thread st (may be NULL: buckets only)
** whose call tree is tree (NULL when not hooked). Async-signal-safe: no
** lock, no allocation but sample_thread_claim's, errno untouched. */
void sample_hit(struct sample_session *s, struct sample_thread *st, struct cp_thread *tree,
                const struct sample_regs *r) CP_HIDDEN;
/* The same for a sample read from a ring buffer later, by the sampled
** thread itself while its call path is still the one sampled (perf.c):
** its program counter pc, and word(ctx, k) the k-th of nwords stack words
** copied from the stack pointer up (no stack walk). */
typedef uint64_t (*sample_word_fn)(void *ctx, uint32_t k);
void sample_hit_copied(struct sample_session *s, struct sample_thread *st, struct cp_thread *tree,
                       uint64_t pc, sample_word_fn word, void *ctx, uint32_t nwords) CP_HIDDEN;
/* n samples the kernel could not write (the ring was full), charged to
** node of tree; their program counters and stacks are lost. */
void sample_lost(struct sample_session *s, struct sample_thread *st, struct cp_thread *tree,
                 uint32_t node, uint64_t n) CP_HIDDEN;
/* Start CAPPROF_SAMPLE's process-wide sampling, if set (runtime_init). */
void sample_init_from_env(void) CP_HIDDEN;
/* Whether the default sampling (a ring buffer, Linux) will be tried:
** CAPPROF_SAMPLE unset, empty or "auto". */
int sample_default_wanted(void) CP_HIDDEN;
/* Whether CAPPROF_SAMPLE asks for process sampling (set, not empty, not 0). */
int sample_requested(void) CP_HIDDEN;
/* Thread state t was retired (its thread ended): its tree now lives in the
** packed record e (same node indexes), or was merged into a group (e NULL:
** the samples charged to its nodes are dropped). Under os_lock. */
void sample_tree_retired(struct cp_thread *t, const struct cp_ended *e) CP_HIDDEN;
/* Stop every session for good (before the final dump). */
void sample_finish(void) CP_HIDDEN;
/* In a fork child: forget the parent's samples, restart what was running. */
void sample_fork_child(void) CP_HIDDEN;
/* 1 while process-wide sampling runs (frame walks need stack bounds). */
int sample_process_running(void) CP_HIDDEN;
/* Parse "1ms", "100us", "250000ns", "2s" (time) or "100000", "10k", "1M"
** (events) into *out; 0 or CAPPROF_EINVAL. */
int sample_parse_interval(const char *s, int is_time, uint64_t *out) CP_HIDDEN;

/* Dump sections 12-14. Row i of THREADS' candidates is who[i] (a live
** struct cp_thread or a struct cp_ended) with counts[i] nodes written (0:
** not written); nrows rows, in the order they were written. */
struct dump_writer;
void sample_write_sections(struct dump_writer *w, const void *const *who,
                           const uint32_t *counts, uint32_t nrows) CP_HIDDEN;

/* ---- the sampler back end (one file per platform) ----------------------- */

/* Whether source can be used here; 0, or CAPPROF_ENOTSUP with one line in
** why naming the reason. Called without the lock. */
int sampler_probe(const struct sample_source *src, char *why, size_t n) CP_HIDDEN;
/* Begin sampling every thread of the process (and those started later) for
** s at s->interval. Sets s->method, s->method_text and, for a fallback,
** s->note. 0 or a negative code (why filled). Under os_lock. */
int sampler_start(struct sample_session *s, char *why, size_t n) CP_HIDDEN;
/* Stop s's sampling in every thread; no handler counts for s afterwards
** (s->running is cleared first by the caller). Under os_lock. */
void sampler_stop(struct sample_session *s) CP_HIDDEN;
/* Apply a new s->interval to a running session. Under os_lock. */
int sampler_set_interval(struct sample_session *s) CP_HIDDEN;
/* The code range [lo, hi) of the module holding addr (NULL: the
** executable): its executable segments or sections. 0 or CAPPROF_EINVAL. */
int sampler_module_range(const void *addr, uintptr_t *lo, uintptr_t *hi) CP_HIDDEN;
/* The calling thread just started (or made its first hooked call): open
** its events for every running session. Not under os_lock; cheap when
** nothing was ever sampled. */
void sampler_thread_begin(void) CP_HIDDEN;
/* Sampling through a ring buffer the hooks read (the default; Linux):
** start s for the hooked threads (a trial ring for the calling thread);
** 0, or CAPPROF_ENOTSUP with why. Under os_lock. */
int sampler_ring_start(struct sample_session *s, char *why, size_t n) CP_HIDDEN;
/* The calling thread's ring, at its first hook (t: its state). */
void sampler_ring_open(struct cp_thread *t) CP_HIDDEN;
/* The calling thread ends: read its ring a last time and unmap it. */
void sampler_ring_end(struct cp_thread *t) CP_HIDDEN;
/* Read the calling thread's ring now (before the last dump). */
void sampler_ring_flush(void) CP_HIDDEN;
/* Before s is written to a dump, under os_lock: the back end's last word
** in s->note (the ring's threads that got none). */
void sampler_note(struct sample_session *s) CP_HIDDEN;
/* Around fork: the child has no copy of the forking thread's ring. */
void sampler_ring_fork_prepare(void) CP_HIDDEN;
void sampler_ring_fork_parent(void) CP_HIDDEN;
/* In a fork child, under os_lock: drop the parent's events and per-thread
** states; sessions still marked running are started again for this thread
** by the caller. */
void sampler_fork_child(void) CP_HIDDEN;

#endif /* CAPPROF_SAMPLE_H */
