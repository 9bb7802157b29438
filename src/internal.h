/*
** internal.h -- private interface of the capprof runtime: the per-thread call
** tree, the shadow stack, the global state, the hot path shared by every
** platform's hooks, and the OS layer each backend (src/posix, src/win)
** implements once with the same signatures.
*/
#ifndef CAPPROF_INTERNAL_H
#define CAPPROF_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "platform.h"
#include "dumpfmt.h"
#include "capprof/capprof.h"

#if CAPPROF_ARCH_X86
#  if defined(_MSC_VER) && !defined(__clang__)
#    include <intrin.h>
#  else
#    include <x86intrin.h>
#  endif
#endif

/* ---- call tree ---------------------------------------------------------- */

/* One unique call path of one thread. 48 bytes; see docs/runtime.md.
** Exclusive time is not stored: it is inclusive minus the children's
** inclusive, derived by the reader. Times are in clock ticks. */
struct cp_node {
  uint64_t key;      /* code address or CPD_KEY_* synthetic key */
  uint32_t parent;   /* index of the caller's node; CPD_NO_PARENT for node 0 */
  uint32_t hot;      /* child found last from here: one-entry lookup cache */
  uint64_t calls;    /* completed calls */
  uint64_t incl;     /* inclusive ticks over completed calls */
  uint64_t min;      /* shortest call, ticks (UINT64_MAX before any call) */
  uint64_t max;      /* longest call, ticks */
};

/* One live call on the shadow stack. sp orders frames: a frame whose sp is
** below the current stack pointer belongs to a call that was abandoned by
** longjmp, an exception or cancellation, and is popped. */
struct cp_frame {
  uint32_t node;     /* node charged when the call returns */
  uint32_t kind;     /* CP_FRAME_*: how the call is timed */
  uintptr_t sp;      /* caller's stack pointer at the hook */
  uint64_t tstart;   /* thread clock (cp_tnow) at entry: not the raw clock */
};

/* Frame kinds. A throttled node's calls (throttle.c) are timed at random,
** one in cp_g.throttle_period on average; the others read no clock. */
#define CP_FRAME_TIMED   0u  /* timed: charged its time at exit */
#define CP_FRAME_UNTIMED 1u  /* throttled, not timed: counted at exit */
#define CP_FRAME_SAMPLED 2u  /* throttled, timed: charged its time x period */

#define CP_NODE_ROOT     0u
#define CP_NODE_OVERFLOW 1u
#define CP_NODE_SINK     2u
#define CP_FIRST_NODE    3u

/* Everything one thread records. Only its own thread writes it, except the
** dump, which reads it (racily, field by field) from another thread. The
** first cache line holds what the hooks touch. */
/* Unhooked functions whose entry hook call became a call of a counting
** stub (src/patch/patch_x86_64.c): the first this many. Stub k adds one to the
** calling thread's cp_thread.ucalls[k]. */
#define CP_UNHOOK_COUNTED 1024u

struct cp_thread {
  struct cp_frame *top;       /* innermost live frame; frames[0] is a sentinel */
  struct cp_frame *commit_end;/* first frame past committed stack memory */
  struct cp_node *nodes;      /* node array; never moves (reserved up front) */
  uint32_t gate;              /* value of cp_g.gate this thread is in sync with */
  uint32_t busy;              /* in a slow path: nested hooks are ignored */
  uint32_t *table;            /* (parent, key) -> node, open addressing */
  uint32_t mask;              /* table size - 1 */
  volatile uint32_t nnodes;   /* nodes in use; published after a node is set */
  uint64_t debt;              /* clock ticks this thread's slow paths took; the
                              ** thread clock (cp_tnow) runs without them */
  uint32_t countdown;         /* throttled calls until the next timed one */
  uint32_t rng;               /* xorshift state for the countdown's length */
  /* Sampling through a perf ring buffer (sample/sample_posix.c): the kernel's write
  ** position in this thread's ring, and how far the hooks have read it.
  ** Without a ring it points at ring_seen, so the hooks' check
  ** (cp_ring_pending) is always false and needs no test for NULL. */
  const volatile uint64_t *ring_head;
  uint64_t ring_seen;

  uint32_t cap;               /* node cap; past it calls go to the overflow node */
  size_t nodes_bytes;         /* reserved size of nodes */
  uint32_t table_used;        /* occupied table slots */
  size_t nodes_committed;     /* nodes backed by committed memory */
  struct cp_frame *frames;    /* base of the shadow stack (the sentinel) */
  struct cp_frame *frames_end;/* end of the reserved stack */
  size_t frames_bytes;        /* committed bytes of the stack (page multiple) */
  size_t table_bytes;         /* reserved size of table */
  uint64_t tid;               /* OS thread id */
  uint64_t start_ns;          /* realtime at thread start */
  volatile uint64_t end_ns;   /* realtime at thread end, 0 while it runs */
  uint64_t end_ticks;         /* clock at thread end */
  uint64_t lost_frames;       /* calls not recorded: stack could not grow */
  uint64_t slow_calls;        /* entries that took the slow path (CALIBRATION) */
  uint64_t debt_at_reset;     /* debt when the tree was last rebuilt */
  uint32_t generation;        /* reset generation the tree belongs to */
  struct cp_thread *next;     /* registry list, under os_lock */
  struct cp_zones *zones;     /* zone name cache and mismatch counts, or NULL */
  struct cp_rstack *rstack;   /* API interception's return stack, or NULL */
  struct cp_throttle_log *throttled; /* nodes throttled, in order, or NULL */
  struct cp_unhook *unhook;   /* nodes learning their return sites, or NULL */
  uint32_t name_fixed;        /* name set by capprof_set_thread_name: keep it */
  uint32_t exit_rounds;       /* thread-exit callbacks deferred so far (POSIX) */
  uint32_t calibrating;       /* a calibration's scratch tree: never throttled */
  char name[64];              /* thread name, NUL-terminated */
#if defined(__x86_64__) && !defined(_WIN32)
  /* Calls of the k-th unhooked function counted by its stub in this thread
  ** (unhook.c). Last: the hooks' fast paths read the first fields. */
  uint64_t ucalls[CP_UNHOOK_COUNTED];
#endif
};

/* What the probe costs, calibrated (clock.c), in milli-ticks per call. */
struct cp_probe_cost {
  uint64_t inner_mt;          /* a call's own timing adds to it */
  uint64_t outer_mt;          /* an instrumented call costs its caller */
  uint64_t untimed_mt;        /* an untimed throttled call costs its caller */
  uint64_t sinner_mt;         /* the same two figures for a throttled call */
  uint64_t souter_mt;         /* timed as a sample (CP_FRAME_SAMPLED) */
};
#define CP_PROBE_CYG    0     /* __cyg_profile_func_* (-finstrument-functions) */
#define CP_PROBE_FENTRY 1     /* __fentry__/__return__ (gcc -pg -mfentry ...) */
#define CP_PROBE_KINDS  2

/* Process-wide state. The hooks read only the first cache line. */
struct cp_global {
  volatile uint32_t gate;     /* generation << 1 | paused bit */
  int use_tsc;                /* clock is rdtsc, else os_ticks() */
  int initialized;            /* cp_init finished */
  int disabled;               /* CAPPROF_DISABLE: never record, never dump */
  int finished;               /* final dump written: hooks stay off */
  uint32_t node_cap;          /* per-thread node cap */
  uint64_t throttle_calls;    /* calls at which a node's throttling is decided; 0: off */
  uint32_t throttle_period;   /* a throttled node's calls per timed call, on average */
  char pad_[64 - 7 * 4 - 8];

  uint64_t start_ns;          /* realtime at start (or fork) */
  uint64_t start_ticks;       /* clock at start, paired with start_mono */
  uint64_t start_mono;        /* CLOCK_MONOTONIC-like ns at start */
  uint64_t timer_overhead;    /* ticks per timer read, back to back */
  struct cp_probe_cost probe[CP_PROBE_KINDS]; /* calibrated, per kind of hook */
  uint64_t sample_cap;        /* ticks of a sampled throttled call scaled by the
                              ** period, the rest counts once (throttle.c) */
  uint32_t clock_source;      /* CPD_CLOCK_* */
  volatile uint32_t hooks_seen; /* CPD_HOOKS_* that fired, set on slow paths */
  struct cp_thread *threads;  /* registry of every thread's state, os_lock, */
  struct cp_thread **threads_tail; /* in creation order; tail's next field */
  struct cp_ended *ended;     /* ended threads, packed or merged (ended.c) */
  struct cp_ended **ended_tail;
  uint32_t keep_threads;      /* ended threads kept one by one (CP_ENDED_KEEP) */
  uint32_t nended_kept;       /* ended threads packed one by one so far */
  uint64_t nended_merged;     /* ended threads merged into groups so far */
  uint64_t nended_dropped;    /* ended threads lost (no memory for a group) */
  char output[1024];          /* dump path pattern */
  char output_dir[1024];      /* directory for relative patterns, "" if none */
  char exe[1024];             /* executable path */
  char progname[256];         /* base name of the executable */
  char *cmdline;              /* NUL-separated arguments, os-allocated */
  size_t cmdline_len;
  int secure;                 /* AT_SECURE (setuid/setgid...): no CAPPROF_*
                              ** variable is read; no dump unless asked */
  int output_from_api;        /* capprof_set_output(_dir) was called */
  const char *pending_report; /* a start-up line not yet printed (a hook
                              ** may have run runtime_init) */
};

extern struct cp_global cp_g CP_HIDDEN;

/* The probe costs of the program's hooks: GCC's after-inlining ones when
** only those fired, else -finstrument-functions' (and MSVC's, calibrated
** the same way). */
CP_INLINE const struct cp_probe_cost *cp_probe_cost(void)
{
  uint32_t seen = cp_g.hooks_seen;
  return &cp_g.probe[(seen & CPD_HOOKS_FENTRY) && !(seen & CPD_HOOKS_CYG) ? CP_PROBE_FENTRY
                                                                          : CP_PROBE_CYG];
}

#define CP_GATE_PAUSED 1u

/* ---- clock ---------------------------------------------------------------*/

uint64_t os_ticks(void) CP_HIDDEN;          /* fallback clock, ns or QPC units */

/* cp_g.use_tsc: which clock the hooks read (CAPPROF_CLOCK chooses). */
#define CP_CLOCK_OS        0  /* os_ticks(): no usable TSC, or asked for */
#define CP_CLOCK_TSC       1  /* rdtsc at entry, rdtscp at exit (tsc-mixed) */
#define CP_CLOCK_TSC_FAST  2  /* rdtsc at both: cheaper, less exact */
#define CP_CLOCK_TSC_ORDERED 3 /* rdtscp at both (default): a caller's stalls stay its own */

#if CAPPROF_ARCH_X86
CP_INLINE uint64_t cp_now(void)
{
  return CP_LIKELY(cp_g.use_tsc) ? (uint64_t)__rdtsc() : os_ticks();
}

/* The clock read that ends a call. rdtsc may execute before the work ahead
** of it has finished (by up to the out-of-order window, tens of ns), which
** moves a function's last work into its caller's exclusive time; rdtscp
** waits for it. Costs ~7 ns more per call than rdtsc, measured by
** bench/run.sh; CAPPROF_CLOCK=tsc-fast trades that accuracy for speed. */
CP_INLINE uint64_t cp_rdtscp(void)
{
#if defined(__GNUC__) || defined(__clang__)
  uint32_t lo, hi;                  /* no store of the unused TSC_AUX */
  __asm__ __volatile__("rdtscp" : "=a"(lo), "=d"(hi) :: "rcx");
  return (uint64_t)hi << 32 | lo;
#else
  unsigned aux;
  return (uint64_t)__rdtscp(&aux);
#endif
}

CP_INLINE uint64_t cp_now_exit(void)
{
  if (CP_LIKELY(cp_g.use_tsc == CP_CLOCK_TSC || cp_g.use_tsc == CP_CLOCK_TSC_ORDERED)) return cp_rdtscp();
  return cp_now();
}

/* The clock read that starts a call: ordered by default (rdtscp), so that
** the loads its caller issued before the call are done before its time
** starts; perf charges that wait to the caller's loads, and so do we. */
CP_INLINE uint64_t cp_now_enter(void)
{
  return cp_g.use_tsc == CP_CLOCK_TSC_ORDERED ? cp_rdtscp() : cp_now();
}

/* The hooks' fast paths read the TSC inline and leave the OS clock to the
** full path, so that they stay leaf functions. */
#  define CP_FAST_CLOCK 1
#  define cp_fast_enter_clock(mode) ((mode) == CP_CLOCK_TSC_ORDERED ? cp_rdtscp() : (uint64_t)__rdtsc())
#  define cp_fast_exit_clock(mode) \
     (CP_LIKELY((mode) != CP_CLOCK_TSC_FAST) ? cp_rdtscp() : (uint64_t)__rdtsc())
#else
CP_INLINE uint64_t cp_now(void) { return os_ticks(); }
CP_INLINE uint64_t cp_now_exit(void) { return os_ticks(); }
CP_INLINE uint64_t cp_now_enter(void) { return os_ticks(); }
#  define CP_FAST_CLOCK 0
#  define cp_fast_enter_clock(mode) ((void)(mode), os_ticks())
#  define cp_fast_exit_clock(mode) ((void)(mode), os_ticks())
#endif

int clock_tsc_usable(void) CP_HIDDEN;       /* invariant TSC present */
/* CP_CLOCK_* for CAPPROF_CLOCK=name (NULL: default): "os", "tsc-fast",
** "tsc-mixed", "tsc" (= "tsc-ordered", the default); the TSC modes only
** with an invariant TSC, and all but tsc-fast only with rdtscp. */
int clock_select(const char *name) CP_HIDDEN;
void clock_calibrate_timer(void) CP_HIDDEN; /* fills cp_g.timer_overhead */
void clock_calibrate_probe(int used_only) CP_HIDDEN; /* fills cp_g.probe */
uint64_t cp_median(uint64_t *v, int n) CP_HIDDEN;     /* sorts v */
/* A calibration's inner and outer replace the figures only together, when
** its outer is the smaller (or the first). */
void cp_keep_pair(uint64_t *inner_mt, uint64_t *outer_mt, uint64_t inner, uint64_t outer) CP_HIDDEN;
/* ticks and ns spanned since start, measured now; for the dump's clock section */
void clock_span(uint64_t *ticks, uint64_t *ns) CP_HIDDEN;

/* ---- sampling through a ring buffer (sample/sample_posix.c) ---------------------- */

/* Samples the kernel wrote into this thread's ring since the hooks last
** read it. Every hook asks before it changes the shadow stack: between two
** hooks of a thread its call path does not change, so a sample read then
** belongs to the node on top (cp_ring_drain). */
CP_INLINE int cp_ring_pending(const struct cp_thread *t)
{
  return *t->ring_head != t->ring_seen;
}
/* Charge the samples waiting in t's ring (the calling thread's own). */
void cp_ring_drain(struct cp_thread *t) CP_HIDDEN;
/* A thread without a ring: the hooks' check reads its own ring_seen. */
CP_INLINE void cp_ring_none(struct cp_thread *t)
{
  t->ring_seen = 0;
  t->ring_head = &t->ring_seen;
}

/* ---- thread trees (calltree.c) ----------------------------------------- */

struct cp_thread *calltree_new(uint32_t node_cap) CP_HIDDEN;
void calltree_free(struct cp_thread *t) CP_HIDDEN;
/* Slow paths of the hooks; each returns the new top frame or NULL. */
uint32_t calltree_lookup(struct cp_thread *t, uint32_t parent, uint64_t key) CP_HIDDEN;
struct cp_frame *calltree_grow(struct cp_thread *t) CP_HIDDEN;
struct cp_frame *calltree_unwind(struct cp_thread *t, uintptr_t sp, uint64_t now) CP_HIDDEN;
void calltree_exit_mismatch(struct cp_thread *t, uint64_t key, uintptr_t sp,
                            uint64_t now) CP_HIDDEN;
/* 1 when calls below node go to the sink: it is an overflow or sink node. */
CP_INLINE int calltree_node_capped(const struct cp_thread *t, uint32_t node)
{
  uint64_t k = t->nodes[node].key;
  return k == CPD_KEY_OVERFLOW || k == CPD_KEY_SINK;
}
/* Ended threads (ended.c), under os_lock: charge the open calls up to end
** and turn hot fields into CPD_NODE_* flags (returns the open count); add
** another tree's nodes into g path by path (map: n scratch slots); make a
** used state new again, giving back memory past the first chunks. */
uint32_t calltree_close(struct cp_thread *t, uint64_t end) CP_HIDDEN;
void calltree_merge(struct cp_thread *g, const struct cp_node *src, uint32_t n,
                    uint32_t *map) CP_HIDDEN;
int calltree_recycle(struct cp_thread *t, uint32_t node_cap) CP_HIDDEN;
/* Rebuild the tree empty but for the path of the open frames, whose start
** times become now. Used by reset and in a fork child. */
void calltree_rebase(struct cp_thread *t, uint64_t now) CP_HIDDEN;
/* Charge one finished call to a node. */
CP_INLINE void calltree_charge(struct cp_node *n, uint64_t d)
{
  n->calls++;
  n->incl += d;
  if (d < n->min) n->min = d;
  if (d > n->max) n->max = d;
}

/* Charge one finished sampled call (CP_FRAME_SAMPLED): it stands for
** cp_g.throttle_period calls on average, so its time is scaled, up to
** cp_g.sample_cap: a longer one was stopped (preempted, faulting), which the
** other calls were not, and its excess counts once. Min and max stay what
** was measured. */
CP_INLINE void calltree_charge_sampled(struct cp_node *n, uint64_t d)
{
  uint64_t s = d < cp_g.sample_cap ? d : cp_g.sample_cap;
  n->calls++;
  n->incl += s * cp_g.throttle_period + (d - s);
  if (d < n->min) n->min = d;
  if (d > n->max) n->max = d;
}

/* Charge one finished call of kind CP_FRAME_* that lasted d ticks. */
CP_INLINE void calltree_charge_kind(struct cp_node *n, uint32_t kind, uint64_t d)
{
  if (CP_LIKELY(kind == CP_FRAME_TIMED)) calltree_charge(n, d);
  else if (kind == CP_FRAME_UNTIMED) n->calls++;
  else calltree_charge_sampled(n, d);
}

/* Charge the call of frame f, ending at now (thread clock), by its kind. */
CP_INLINE void calltree_charge_frame(struct cp_thread *t, const struct cp_frame *f,
                                     uint64_t now)
{
  calltree_charge_kind(&t->nodes[f->node], f->kind, now - f->tstart);
}

/* The thread clock: the clock minus the ticks this thread's slow paths took
** so far (t->debt). Frames start and end on it, so the time of a node
** lookup, of growing the stack or of unwinding is in no call's time, its
** caller's included, however long it took (cache misses, page faults): only
** the fast path's cost remains, which the tool's compensation subtracts
** (docs/tool.md). A slow path adds its own span to t->debt. */
CP_INLINE uint64_t cp_tnow(const struct cp_thread *t) { return cp_now() - t->debt; }
CP_INLINE uint64_t cp_tnow_exit(const struct cp_thread *t) { return cp_now_exit() - t->debt; }

/* Slow paths run "busy": t->gate holds a value no real gate has, so that a
** hook entered meanwhile (a signal handler) goes to runtime_sync and does
** nothing. Nested use keeps the outer value. */
#define CP_GATE_BUSY 0xFFFFFFFFu

CP_INLINE uint32_t cp_enter_busy(struct cp_thread *t)
{
  uint32_t saved = t->gate;
  t->gate = CP_GATE_BUSY;
  return saved;
}

CP_INLINE void cp_leave_busy(struct cp_thread *t, uint32_t saved) { t->gate = saved; }

/* ---- throttling (throttle.c) ------------------------------------------- */

/* A throttled node's key carries this bit while in memory (never in a dump):
** the hooks' hot-child compare then fails for it, and the slow side counts
** the call without timing it. Addresses are below 2^56 and synthetic keys
** already have the bit, so lookups hash and compare keys with the bit set. */
#define CP_KEY_THROTTLED UINT64_C(0x4000000000000000)

/* Read CAPPROF_THROTTLE into cp_g (runtime_init). */
void throttle_init(void) CP_HIDDEN;
/* Node i of t just completed its cp_g.throttle_calls-th call, or a multiple
** of 2^17 calls above it: throttle it if its calls were short. Owner
** thread, from exit hooks (never the Windows keyless _pexit, which could not
** pair a throttled call's exit). */
void calltree_throttle_due(struct cp_thread *t, uint32_t i) CP_HIDDEN;
/* A node that was not throttled at its N-th call (its first calls were
** long: an interpreter's call path that began with a script's compilation;
** or that call's exit took a slow path) is looked at again at every
** multiple of 2^17 calls above N. The exit hooks test the low bits as well
** as the equality (the assembly too: asm/fentry_x86_64.S). */
#define CP_THROTTLE_AGAIN_MASK UINT64_C(0x1FFFF)
CP_INLINE int cp_throttle_due(uint64_t calls)
{
  return calls == cp_g.throttle_calls ||
         (CP_UNLIKELY((calls & CP_THROTTLE_AGAIN_MASK) == 0) && cp_g.throttle_calls &&
          calls > cp_g.throttle_calls);
}
/* Throttle node i of t now (-1: no room for its record); whether n's calls
** averaged under the threshold (its longest call left out; 0 while the
** threshold is not known yet). */
int throttle_node(struct cp_thread *t, uint32_t i) CP_HIDDEN;
int throttle_short(const struct cp_node *n) CP_HIDDEN;
/* Forget t's throttle records (reset, fork); free them. */
void throttle_thread_reset(struct cp_thread *t) CP_HIDDEN;
void throttle_thread_free(struct cp_thread *t) CP_HIDDEN;
/* Visit t's records: fn(ctx, node, ticks when throttled, timed calls). */
typedef void (*throttle_fn)(void *ctx, uint32_t node, uint64_t ticks, uint64_t timed);
void throttle_records(const struct cp_thread *t, throttle_fn fn, void *ctx) CP_HIDDEN;
/* The threshold in effect: calls, and ns per call (0 when throttling is off). */
void throttle_settings(uint64_t *calls, uint64_t *ns) CP_HIDDEN;

/* ---- unhooking (throttle.c; src/patch/patch_x86_64.c patches) --------------- */

/* Nodes of one thread whose function is about to be unhooked: its hooks
** patched out of its code (GCC's after-inlining mode on x86-64 Linux). */
#define CP_UNHOOK_SLOTS   16u   /* nodes learning at once */
#define CP_UNHOOK_SITES   8u    /* return sites kept per node */
struct cp_unhook_learn {
  uint32_t node;                /* 0: free */
  uint32_t seen;                /* sampled returns so far */
  uint32_t nsites;
  uint32_t kind;                /* CP_PROBE_FENTRY or CP_PROBE_CYG */
  uint32_t born;                /* cp_unhook.events when it began */
  uint32_t pad_;
  uintptr_t key;                /* the node's key: fentry's return address,
                                ** or the function (-finstrument-functions) */
  uintptr_t entry;              /* the entry hook call's return address */
  uintptr_t sites[CP_UNHOOK_SITES]; /* return addresses of `call __return__` */
};
#define CP_UNHOOK_WAITING 64u   /* nodes waiting for a slot */
struct cp_unhook {
  uint32_t active;              /* slots in use, and nodes waiting */
  uint32_t nwaiting;
  uint32_t events;              /* sampled returns seen while learning */
  uint32_t pad_;
  struct cp_unhook_learn e[CP_UNHOOK_SLOTS];
  uint32_t waiting[CP_UNHOOK_WAITING];      /* nodes, learning when a slot frees */
  uint32_t waiting_kind[CP_UNHOOK_WAITING];
};

/* CAPPROF_UNHOOK: off, on, or auto (the default: on while process-wide
** sampling runs). Read by throttle_init. */
int unhook_wanted(void) CP_HIDDEN;
/* After sampling started, or failed to: throttling's default decision
** point back to 100,000 calls if there is no unhooking after all (throttle.c). */
void throttle_settle(void) CP_HIDDEN;
/* Record that the function whose entry key is key was unhooked at ticks, as
** the next record (unhook_next: its index); counted: its entry calls the
** counting stub of that index (UINT32_MAX: none, CAPPROF_UNHOOK_COUNT=off);
** synced: every store into its code was followed by a core serialization
** of the process's threads (unhook.c, code_sync).
** Visit the records in order. Process-wide, lock-free appends under
** unhook.c's patch lock. */
uint32_t unhook_next(void) CP_HIDDEN;
void unhook_log(uint64_t key, uint64_t ticks, int counted, int synced) CP_HIDDEN;
typedef void (*unhook_fn)(void *ctx, uint64_t key, uint64_t ticks);
void unhook_records(unhook_fn fn, void *ctx) CP_HIDDEN;
/* The calls the k-th record's counting stub counted in every thread, live
** or ended (under os_lock), or CPD_UNHOOKED_UNCOUNTED when its entry has no
** stub. */
uint64_t unhook_calls(uint32_t k) CP_HIDDEN;
/* CPD_UNHOOKED_* flags of the k-th record; the record of key is marked
** not synced (exit sites patched later without a core serialization). */
uint32_t unhook_flags(uint32_t k) CP_HIDDEN;
void unhook_mark_unsynced(uint64_t key) CP_HIDDEN;
/* A thread's counts, added to the process-wide counts of ended threads and
** cleared (runtime_thread_retire); counting restarted from the live
** threads' counts as they are (capprof_reset); and from 0 in a fork child,
** whose only thread is self. Under os_lock. */
void unhook_fold(struct cp_thread *t) CP_HIDDEN;
void unhook_counts_reset(void) CP_HIDDEN;
void unhook_counts_fork(struct cp_thread *self) CP_HIDDEN;
/* The counting stubs' counts, per platform (src/patch/patch_x86_64.c;
** patch_none.c: none, all 0): the calls of stub k counted so far in the
** live threads and in threads with no state; t's counts added into
** into[] and cleared (under os_lock); in a fork child, every count but
** self's dropped and self's cleared. */
/* Calls counted by the stubs in threads with no state of their own
** (asm/fentry_x86_64.S, a locked add; x86-64 ELF only). */
extern uint64_t unhook_nostate[CP_UNHOOK_COUNTED] CP_HIDDEN;
uint64_t patch_live_calls(uint32_t k) CP_HIDDEN;
void patch_fold_calls(struct cp_thread *t, uint64_t *into) CP_HIDDEN;
void patch_counts_fork(struct cp_thread *self) CP_HIDDEN;
/* The code of counting stub k written near the program's code (48 bytes at
** p; off: posix_tls's offset from the thread pointer; test_unhook.c). */
void unhook_near_code(unsigned char *p, uint32_t k, int32_t off) CP_HIDDEN;
/* Around fork (runtime.c): no patch in progress while the process forks. */
void unhook_fork_prepare(void) CP_HIDDEN;
void unhook_fork_parent(void) CP_HIDDEN;
/* t's learning state: allocated on first use, cleared, freed. */
struct cp_unhook *unhook_state(struct cp_thread *t) CP_HIDDEN;
void unhook_thread_reset(struct cp_thread *t) CP_HIDDEN;
void unhook_thread_free(struct cp_thread *t) CP_HIDDEN;
/* src/patch/patch_x86_64.c (x86-64): node i just completed its throttling
** decision call, returning through the exit hook call at site (kind:
** CP_PROBE_*); a sampled call of node returned through site (its frame
** popped); a sampled call of node entered through the entry hook call at
** site (-finstrument-functions, whose keys are not call sites). */
void unhook_consider(struct cp_thread *t, uint32_t i, uintptr_t site, uint32_t kind) CP_HIDDEN;
void unhook_seen(struct cp_thread *t, uint32_t node, uintptr_t site) CP_HIDDEN;
void unhook_entry_site(struct cp_thread *t, uint32_t node, uintptr_t site) CP_HIDDEN;
/* In a fork child (runtime_fork_child). */
void unhook_fork_child(void) CP_HIDDEN;
/* Whether pc is in a counting stub (the runtime's or one written near the
** program's code); async-signal-safe (sample.c). */
int unhook_in_stub(uintptr_t pc) CP_HIDDEN;
/* The patch unhooking would make for the hook call ending at end (exit:
** the exit hook's, else the entry hook's; fn: the function, for
** -finstrument-functions): 1 with the jump and where it goes, 0 when
** patched already, -1 when it is not such a call (tests/unit/test_unhook.c). */
int unhook_patch_for(uintptr_t end, int exit, uint32_t kind, uintptr_t fn, uintptr_t *at,
                     uint16_t *jmp) CP_HIDDEN;
/* Tests: the stores of one patch (unhook.c: a jump of len 2, or a call of
** len bytes turned into a call of to), *synced when each was followed by a
** core serialization; and how many stores have been followed by one
** (attempted) so far. */
int unhook_test_poke(uintptr_t at, size_t len, uintptr_t to, uint16_t jmp, int *synced) CP_HIDDEN;
uint32_t unhook_syncs(void) CP_HIDDEN;

/* ---- zones (zone.c) ---------------------------------------------------- */

/* A frame is a zone's when its node's key is a zone key. */
CP_INLINE int cp_frame_is_zone(const struct cp_thread *t, const struct cp_frame *f)
{
  return CPD_KEY_IS_ZONE(t->nodes[f->node].key);
}
/* Count one mismatch of kind CPD_ZI_* for zone id in t. Owner thread only. */
void zone_note(struct cp_thread *t, uint32_t id, unsigned kind) CP_HIDDEN;
/* A zone frame is being popped without its END (slow paths of calltree.c). */
CP_INLINE void zone_popped_open(struct cp_thread *t, const struct cp_frame *f)
{
  uint64_t key = t->nodes[f->node].key;
  if (CP_UNLIKELY(CPD_KEY_IS_ZONE(key)))
    zone_note(t, (uint32_t)(key & 0xFFFFFFFFu), CPD_ZI_LEFT_OPEN);
}
/* Pop the zones on top of t's stack, charged up to now and counted as left
** open: a function that began them is returning (hooks without a key). */
void zone_pop_open(struct cp_thread *t, uint64_t now) CP_HIDDEN;
/* Add counts[CPD_ZI_KINDS] to t's mismatch counts for zone id (merging an
** ended thread into a group; the zone state is made if needed). */
void zone_add(struct cp_thread *t, uint32_t id, const uint64_t *counts) CP_HIDDEN;
/* Forget t's mismatch counts (reset, fork); free its zone state. */
void zone_thread_reset(struct cp_thread *t) CP_HIDDEN;
void zone_thread_free(struct cp_thread *t) CP_HIDDEN;
/* Zone names for the dump: how many are published, and name i. Lock-free;
** a name's id is published before any node can carry it. */
uint32_t zone_name_count(void) CP_HIDDEN;
const char *zone_name(uint32_t id, uint32_t *len) CP_HIDDEN;
/* Visit t's mismatch counts: fn(ctx, id, counts[CPD_ZI_KINDS]). */
typedef void (*zone_issue_fn)(void *ctx, uint32_t id, const uint64_t *counts);
void zone_issues(const struct cp_thread *t, zone_issue_fn fn, void *ctx) CP_HIDDEN;

/* ---- ended threads (ended.c) ------------------------------------------- */

/* One zone's mismatch counts, kept for an ended thread. */
struct cp_zone_count { uint32_t id, pad_; uint64_t n[CPD_ZI_KINDS]; };

/* What is left of ended threads, in cp_g.ended. Either one thread's tree,
** packed into the shared arena with its record, or a merge group: the trees
** of every thread that ended past CP_ENDED_KEEP, with the same name and
** start function, added path by path into one tree. Node hot fields hold
** CPD_NODE_* flags. Written under os_lock only. */
struct cp_ended {
  struct cp_ended *next;      /* cp_g.ended list */
  struct cp_node *nodes;      /* packed nodes in the arena; NULL for a group */
  struct cp_thread *group;    /* a group's tree (no thread runs it), else NULL */
  struct cp_zone_count *zones;/* packed zone counts (groups: in group->zones) */
  uint64_t tid, start_ns, end_ns;  /* a group: 0, earliest start, latest end */
  uint64_t lost_frames;       /* calls not recorded: the stack could not grow */
  uint64_t slow_ticks, slow_calls; /* CALIBRATION: slow paths' time and entries */
  uint64_t merged;            /* threads merged into a group; 0 for one thread */
  uint64_t start_key;         /* key of the first call the thread(s) made */
  uint32_t nnodes, nopen;     /* nodes (packed only) and open calls at exit */
  uint32_t nzones;            /* packed zone counts */
  uint32_t merge_kind;        /* CPD_MERGE_* for a group */
  char name[64];
};

/* Threads kept one by one before merging starts (CAPPROF_KEEP_THREADS). */
#define CP_ENDED_KEEP   4096u
/* Merge groups before the rest go to one catch-all group. */
#define CP_GROUPS_MAX   64u

/* Under os_lock. Retire t, which has ended (end time and name set, no hook
** of it runs again): unlink it from the registry, charge its open calls, and
** pack or merge its tree; t itself is then free. */
void ended_retire(struct cp_thread *t) CP_HIDDEN;
/* A state ready for a new thread from the pool, or NULL; give t (retired)
** to the pool: 1 if taken, else 0 and the caller frees it. */
struct cp_thread *ended_pool_take(void) CP_HIDDEN;
int ended_pool_put(struct cp_thread *t) CP_HIDDEN;
/* Forget every ended thread (reset, fork child). */
void ended_reset(void) CP_HIDDEN;

/* ---- API interception (intercept.c) ------------------------------------
** The portable core shared by the back ends (src/intercept/plt_posix.c, src/intercept/iat_win.c).
** Contract for a back end:
**  - os_intercept_start() is called once from runtime_init when CAPPROF_API
**    is set; it patches the import slots of the modules loaded now (and of
**    later ones, from its LoadLibrary/dlopen hook) and returns CPD_IS_*.
**  - For each import slot of a module other than capprof's own that holds a
**    function of a library for which intercept_selects(base name) is true:
**    if intercept_unsafe(symbol) gives a reason, or the slot cannot be
**    patched, call intercept_skip(reason, library, symbol) and leave it;
**    else id = intercept_register(library, symbol) and point the slot at a
**    stub made for (id, real target). Then intercept_patched(modules, slots).
**  - A stub jumps to the shared entry trampoline with its struct icpt_stub;
**    the trampoline saves the argument registers, calls intercept_enter(stub,
**    address of the return-address slot), restores them and jumps to the
**    address returned, stack untouched. intercept_enter may have replaced the
**    return address by the one given to intercept_set_return_trampoline().
**  - The return trampoline saves the return registers, calls
**    intercept_exit(stack pointer after the return) and jumps to the address
**    returned (the caller's own return address), registers restored.
**  - Before an unwinder walks the stack (C++ throw, forced unwind), call
**    intercept_restore_returns(sp of the throwing frame); when a handler
**    catches, intercept_rehook(its frame's sp): the unwinder never sees a
**    return trampoline, and calls that stay live are hooked again.
** intercept_enter/exit run on any thread at any time, in signal handlers
** too: they never lock, allocate only a thread's first return stack, and
** preserve errno. Registration and skips take os_lock: never call them with
** os_lock held. */
struct icpt_stub {
  void *real;          /* the function the slot pointed to */
  uint32_t id;         /* intercept_register's id */
  uint32_t flags;      /* back end's use */
};
/* One hooked call: where its return address was, and what it was. */
struct icpt_ret {
  uintptr_t *slot;       /* the return address's place on the machine stack */
  uintptr_t orig;        /* the caller's return address */
  uint32_t id;           /* API id, for the exit's node key */
  uint32_t restored;     /* 1: orig was put back for an unwinder (exceptions) */
};

/* The per-thread return stack; base[0] is a sentinel that is never popped. */
struct cp_rstack {
  struct icpt_ret *top;
  struct icpt_ret *end;
  struct icpt_ret base[1];
};

/* Push the return-stack entry above e (the caller checked there is room).
** Written, published, written again, as calltree_push: a signal handler's
** intercepted calls between two statements use and restore the same entry.
** Shared by every back end. */
CP_INLINE void intercept_rpush(struct cp_rstack *r, struct icpt_ret *e,
                               uintptr_t *slot, uintptr_t orig, uint32_t id)
{
  e[1].slot = slot;
  e[1].orig = orig;
  e[1].id = id;
  e[1].restored = 0;
  CP_BARRIER();
  r->top = e + 1;
  CP_BARRIER();
  e[1].slot = slot;
  e[1].orig = orig;
  e[1].id = id;
  e[1].restored = 0;
}

struct intercept_summary {
  uint32_t status;     /* CPD_IS_* */
  uint64_t modules, slots, unrecorded, inner_mt, outer_mt;
  const char *spec;
};
void intercept_start(void) CP_HIDDEN;                 /* runtime_init */
int intercept_selects(const char *library) CP_HIDDEN; /* by CAPPROF_API */
void intercept_set_spec(const char *spec) CP_HIDDEN;  /* intercept_start, tests */
uint32_t intercept_unsafe(const char *symbol) CP_HIDDEN; /* CPD_SKIP_* or 0 */
/* The id of (library, symbol), added if new; UINT32_MAX when full. */
uint32_t intercept_register(const char *library, const char *symbol) CP_HIDDEN;
uint32_t intercept_count(void) CP_HIDDEN;             /* lock-free */
void intercept_name(uint32_t id, const char **library, const char **symbol) CP_HIDDEN;
void intercept_skip(uint32_t reason, const char *library, const char *symbol) CP_HIDDEN;
uint32_t intercept_skip_count(void) CP_HIDDEN;
void intercept_skip_get(uint32_t i, uint32_t *reason, uint64_t *slots,
                        const char **library, const char **symbol) CP_HIDDEN;
void intercept_patched(uint64_t modules, uint64_t slots) CP_HIDDEN;
void intercept_summary(struct intercept_summary *s) CP_HIDDEN;
void intercept_set_return_trampoline(uintptr_t addr) CP_HIDDEN;
/* Around the back end's own work on a thread (patching after dlopen): the
** runtime's calls into libc, when it is linked into the program and so goes
** through the program's patched slots, pass by unrecorded. */
uint32_t intercept_quiet_begin(void) CP_HIDDEN;
void intercept_quiet_end(uint32_t saved) CP_HIDDEN;
void *intercept_enter(const struct icpt_stub *s, uintptr_t *slot) CP_HIDDEN;
void *intercept_exit(uintptr_t *after) CP_HIDDEN;
/* The same with the calling thread's state already read (os_get_thread()),
** for trampolines that can read the thread pointer themselves. */
void *intercept_enter_thread(struct cp_thread *t, const struct icpt_stub *s,
                             uintptr_t *slot) CP_HIDDEN;
void *intercept_exit_thread(struct cp_thread *t, uintptr_t *after) CP_HIDDEN;
void intercept_restore_returns(uintptr_t sp) CP_HIDDEN;
void intercept_rehook(uintptr_t sp) CP_HIDDEN;
void intercept_thread_free(struct cp_thread *t) CP_HIDDEN;
uintptr_t intercept_return_trampoline(void) CP_HIDDEN;
/* Measure the probe cost of an intercepted call: through() calls plain()
** through a stub, plain() is an empty function. */
void intercept_calibrate(void (*through)(void), void (*plain)(void)) CP_HIDDEN;

/* ---- features: what each gives the core (src/features.c lists them) ---- */

/* A feature's part in the core's life cycle; any member may be NULL. The
** core calls them in the order of cp_features (fork_parent: reversed), from
** its slow paths only: no hook's fast path makes an indirect call. */
struct cp_feature {
  const char *name;
  void (*thread_begin)(void);                /* the calling thread's state was made */
  void (*thread_exit)(struct cp_thread *t);  /* t's thread exits (its own thread) */
  /* t was packed into the ended threads (e: its record, or NULL when merged
  ** into a group); under os_lock. */
  void (*thread_retired)(struct cp_thread *t, const struct cp_ended *e);
  void (*thread_reset)(struct cp_thread *t); /* t's tree rebuilt (reset, fork) */
  void (*thread_free)(struct cp_thread *t);  /* t freed or recycled */
  void (*reset)(void);                       /* capprof_reset, under os_lock */
  void (*fork_prepare)(void);                /* under os_lock, before fork */
  void (*fork_parent)(void);                 /* after fork, in the parent */
  /* In the child, self its only thread (NULL: none): threads_forked before
  ** self's tree is rebuilt, fork_child after. */
  void (*threads_forked)(struct cp_thread *self);
  void (*fork_child)(void);
};
/* The features linked in, NULL-terminated (src/features.c). */
extern const struct cp_feature *const cp_features[] CP_HIDDEN;
extern const struct cp_feature zone_feature CP_HIDDEN;       /* zone.c */
extern const struct cp_feature intercept_feature CP_HIDDEN;  /* intercept.c */
extern const struct cp_feature throttle_feature CP_HIDDEN;   /* throttle.c */
extern const struct cp_feature sample_feature CP_HIDDEN;     /* sample.c */
extern const struct cp_feature patch_feature CP_HIDDEN;      /* patch_*.c */

/* ---- runtime (runtime.c) ----------------------------------------------- */

/* The calling thread's state, created on first use; NULL when recording is
** impossible (disabled, out of memory, finished). Called from hooks. */
struct cp_thread *runtime_thread_slow(void) CP_HIDDEN;
/* Bring t in line with cp_g.gate; returns 1 if the hook must do nothing. */
int runtime_sync(struct cp_thread *t) CP_HIDDEN;
/* 1 when t is a real thread state (not the stand-in used when recording is
** impossible or being set up). */
int runtime_thread_real(const struct cp_thread *t) CP_HIDDEN;
void runtime_init(void) CP_HIDDEN;
/* Print the line runtime_init left pending, if any; outside hooks only. */
void runtime_report_pending(void) CP_HIDDEN;
void runtime_atexit(void) CP_HIDDEN;
/* Thread end: runtime_thread_exit records the end time and name (the state
** stays, for hooks that may still run); runtime_thread_retire, when no hook
** of the thread can run any more, gives its memory back and keeps its tree
** compactly (ended.c). Windows calls only the first (DLL_THREAD_DETACH hooks
** run after the FLS callback). */
void runtime_thread_exit(struct cp_thread *t) CP_HIDDEN;
void runtime_thread_retire(struct cp_thread *t) CP_HIDDEN;
void runtime_fork_prepare(void) CP_HIDDEN;
void runtime_fork_parent(void) CP_HIDDEN;
void runtime_fork_child(void) CP_HIDDEN;

/* ---- dump writer (dump_write.c) ---------------------------------------- */

/* Write a dump (under os_lock). Returns 0 or a CAPPROF_E* code; out gets
** the file's name. On failure dump_failure() says which step failed on
** which file ("creating PATH.tmpXXXX", "writing ...", "naming it PATH"),
** valid until the next dump. */
int dump_write(const char *path, int explicit_path, char *out, size_t outsize) CP_HIDDEN;
const char *dump_failure(void) CP_HIDDEN;
/* Expand the output pattern into buf; returns 0 or CAPPROF_EINVAL. */
int dump_expand_pattern(const char *pattern, char *buf, size_t n) CP_HIDDEN;

/* ---- OS layer: src/posix/os.c and src/win/os.c ------------------------- */

/* Address space and memory. os_reserve gives size bytes of address space
** (page-aligned) or NULL; os_commit makes a range of it usable and zeroed
** (0 or CAPPROF_ENOMEM); os_release returns it. */
void *os_reserve(size_t size) CP_HIDDEN;
int os_commit(void *addr, size_t size) CP_HIDDEN;
void os_release(void *addr, size_t size) CP_HIDDEN;
/* Give committed memory back to the OS; the range stays reserved. */
void os_decommit(void *addr, size_t size) CP_HIDDEN;
size_t os_page_size(void) CP_HIDDEN;

/* The calling thread's state pointer (thread-local) and its registration for
** a callback at thread exit (runtime_thread_exit). */
struct cp_thread *os_get_thread(void) CP_HIDDEN;
void os_set_thread(struct cp_thread *t) CP_HIDDEN;
int os_thread_register(struct cp_thread *t) CP_HIDDEN;

uint64_t os_thread_id(void) CP_HIDDEN;
uint64_t os_process_id(void) CP_HIDDEN;
uint64_t os_parent_process_id(void) CP_HIDDEN;
uint64_t os_realtime_ns(void) CP_HIDDEN;
uint64_t os_monotonic_ns(void) CP_HIDDEN;
uint32_t os_ticks_source(void) CP_HIDDEN;   /* CPD_CLOCK_* of os_ticks() */
/* Copy the OS's name of thread tid (if any) into buf; 0 or negative. */
int os_thread_name(uint64_t tid, char *buf, size_t n) CP_HIDDEN;

/* The one runtime lock. It guards the thread registry (cp_g.threads, the
** ended-thread records and merged groups), the output settings, the dlclose
** module list, the dump writer's static state, and every dump.
**
** Discipline (every path of the runtime must keep it; docs/runtime.md):
** - os_lock blocks every signal in the calling thread before it waits, and
**   os_unlock restores the mask after releasing: no signal handler can run
**   on a thread while it holds the lock, so a handler that calls exit() or
**   capprof_dump() cannot find its own thread holding it (issue 11).
** - Never take it from a signal handler, nor from a hook's fast path. Slow
**   paths that take it (a thread's first hook, thread exit) run "busy", so
**   hooks that fire meanwhile do nothing.
** - Never call instrumented program code while holding it (clock
**   calibration runs the runtime's own probe on a scratch tree: allowed).
** - Lock order: os_lock, then the loader's locks (dl_iterate_phdr inside a
**   dump or the dlclose wrapper). Never wait for os_lock while holding a
**   loader lock or another lock of the program.
** - Not recursive: a function that runs under it says so (dump_write,
**   calltree_pack/merge); the public API functions take it themselves.
** - A runtime thread (for instance one that dumps on a signal) takes it like
**   any caller of capprof_dump: through os_lock, from normal code.
** - The exit-time dump takes it with os_lock_at_exit, which gives up (and
**   the dump is skipped with one line on stderr) instead of waiting forever:
**   at once if the calling thread already holds it, else after a bounded
**   wait. */
void os_lock(void) CP_HIDDEN;
void os_unlock(void) CP_HIDDEN;
/* os_lock for the exit-time dump: 0 when held, CAPPROF_EBUSY when it could
** not be had (held by this thread, or not released within a few seconds). */
int os_lock_at_exit(void) CP_HIDDEN;

/* Fill cp_g.exe, cp_g.progname, cp_g.cmdline; register at-exit and fork
** handlers. Called once from runtime_init. */
void os_process_init(void) CP_HIDDEN;

/* A variable of the environment, NULL if unset or if the process is
** privileged (os_is_privileged). */
const char *os_getenv(const char *name) CP_HIDDEN;
/* 1 when the process runs with more privilege than its caller (setuid,
** setgid, file capabilities: AT_SECURE), else 0. */
int os_is_privileged(void) CP_HIDDEN;

/* API interception back end (src/intercept/plt_posix.c, src/intercept/iat_win.c): see above.
** os_on_alt_stack: sp lies on a signal stack the thread switched to. */
int os_intercept_start(void) CP_HIDDEN;
int os_on_alt_stack(uintptr_t sp) CP_HIDDEN;
/* Tell the launcher (capprof run, CAPPROF_RUN_LOG) that a dump was written. */
void os_run_log(const char *path) CP_HIDDEN;

/* errno (and GetLastError on Windows) saved around slow paths. */
typedef struct { int err; unsigned long winerr; } os_errsave;
os_errsave os_save_errors(void) CP_HIDDEN;
void os_restore_errors(os_errsave s) CP_HIDDEN;

/* Loaded modules, for the dump's module map. */
struct cp_module {
  const char *path;
  uint64_t base, size;
  uint32_t id_kind;          /* CPD_MODID_* */
  uint32_t id_len;
  const unsigned char *id;
  const char *debug_path;    /* PDB path on Windows, else NULL */
};
typedef int (*os_module_fn)(const struct cp_module *m, void *ctx);
int os_modules(os_module_fn fn, void *ctx) CP_HIDDEN;

/* Files. os_file_create creates path exclusively (fails if it exists);
** os_file_publish gives tmp the name path without replacing an existing file,
** and removes tmp (CAPPROF_EEXIST if path exists). */
typedef intptr_t os_file;
int os_file_create(const char *path, os_file *f) CP_HIDDEN;
int os_file_write(os_file f, const void *buf, size_t n) CP_HIDDEN;
int os_file_write_at(os_file f, const void *buf, size_t n, uint64_t off) CP_HIDDEN;
int os_file_close(os_file f) CP_HIDDEN;
int os_file_publish(const char *tmp, const char *path) CP_HIDDEN;
void os_file_remove(const char *path) CP_HIDDEN;
/* n unpredictable bytes into buf: 0, or an error when the bytes are only
** weakly mixed (the caller then mixes in its own). */
int os_random(void *buf, size_t n) CP_HIDDEN;
int os_is_directory(const char *path) CP_HIDDEN;
/* Local time of a realtime ns value as YYYYmmdd-HHMMSS. */
void os_format_time(uint64_t realtime_ns, char *buf, size_t n) CP_HIDDEN;
/* One line on stderr, outside hooks only (dump time). */
void os_report(const char *msg) CP_HIDDEN;

/* Dumps on demand (src/dump/dumpsig_posix.c; src/dump/dumpsig_win.c: the interval
** only, Windows has no signals): CAPPROF_DUMP_SIGNAL, CAPPROF_DUMP_ON_SIGNAL
** and CAPPROF_DUMP_INTERVAL. Called once by runtime_init, outside the lock;
** starts the runtime's dump thread when any of them is set. */
void os_dumpsig_start(void) CP_HIDDEN;

/* ---- the hot path ------------------------------------------------------ */

/* Push the frame above f: call path node, stack pointer, start time. A
** signal handler's hooks may run between any two statements here: the frame
** is written, published, and written again, so that a handler that ran
** before the publish (using, and overwriting, the same slot) leaves nothing
** stale behind. */
CP_INLINE void calltree_push_kind(struct cp_thread *t, struct cp_frame *f, uint32_t node,
                                  uint32_t kind, uintptr_t sp, uint64_t start)
{
  f[1].node = node;
  f[1].kind = kind;
  f[1].sp = sp;
  CP_BARRIER();
  t->top = f + 1;
  CP_BARRIER();
  f[1].node = node;
  f[1].kind = kind;
  f[1].sp = sp;
  f[1].tstart = start;
}

CP_INLINE void calltree_push(struct cp_thread *t, struct cp_frame *f, uint32_t node,
                             uintptr_t sp, uint64_t start)
{
  calltree_push_kind(t, f, node, CP_FRAME_TIMED, sp, start);
}

/* The length of the next run of untimed throttled calls: uniform on
** 1 .. 2P-1 (mean P = cp_g.throttle_period), so that no calling pattern
** keeps a function out of the timed calls or always in them. Inline, with
** a multiply rather than a division: it runs on a sampled call's entry,
** whose cost to its caller counts (below). */
CP_INLINE uint32_t throttle_next_countdown(struct cp_thread *t)
{
  uint32_t x = t->rng ? t->rng : 0x9E3779B9u;   /* xorshift32 */
  x ^= x << 13;
  x ^= x >> 17;
  x ^= x << 5;
  t->rng = x;
  uint32_t p = cp_g.throttle_period;
  return p <= 1 ? 1 : 1 + (uint32_t)(((uint64_t)x * (2 * p - 1)) >> 32);
}

/* Enter a call of throttled node c above frame f (room checked by the
** caller): most calls push an untimed frame and read no clock; every P-th
** on average is timed as a sample. */
CP_INLINE void calltree_push_throttled(struct cp_thread *t, struct cp_frame *f, uint32_t c,
                                       uintptr_t sp)
{
  if (CP_LIKELY(t->countdown > 1)) {
    t->countdown--;
    calltree_push_kind(t, f, c, CP_FRAME_UNTIMED, sp, 0);
    return;
  }
  t->countdown = throttle_next_countdown(t);
  /* An ordered read (rdtscp): the untimed calls before this one leave work
  ** in flight, which an early read would count in this call, P times. */
  calltree_push_kind(t, f, c, CP_FRAME_SAMPLED, sp, cp_tnow_exit(t));
}

/* The exit of a throttled call: the top frame f is its own and not timed
** as usual. An untimed call is counted; a sampled one reads the clock. */
CP_INLINE void calltree_pop_throttled(struct cp_thread *t, struct cp_frame *f)
{
  if (f->kind == CP_FRAME_UNTIMED) t->nodes[f->node].calls++;
  else calltree_charge_sampled(&t->nodes[f->node], cp_tnow_exit(t) - f->tstart);
  t->top = f - 1;
}

/* The lookup table's first slot for (parent, key); calltree_lookup probes on
** from there. */
CP_INLINE uint32_t calltree_slot(const struct cp_thread *t, uint32_t parent, uint64_t key)
{
  uint64_t h = (key | CP_KEY_THROTTLED) * UINT64_C(0x9E3779B97F4A7C15) ^
               (uint64_t)(parent + 1) * UINT64_C(0xC2B2AE3D27D4EB4F);
  return (uint32_t)(h >> 32) & t->mask;
}

/* Entry of an instrumented call. When the callee was called from the same
** caller before: one clock read, no lock, no allocation, no shared write
** (cost per call, from the built hooks: bench/hookcost.py).
** slow_since: the clock when the caller's slow path began (its fast path
** failed), or 0. Whatever runs from then, or from the first slow step here,
** to the frame's start is added to t->debt: a second clock read, on slow
** paths only. */
CP_INLINE void cp_hot_enter(struct cp_thread *t, uint64_t key, uintptr_t sp,
                            uint64_t slow_since)
{
  struct cp_frame *f = t->top;
  /* Frames below our stack pointer are dead (longjmp, exceptions). Equal is
  ** not dead: GCC instruments inlined functions, whose hooks run in the
  ** frame of the function they are inlined into. */
  if (CP_UNLIKELY(f->sp < sp)) {
    if (!slow_since) slow_since = cp_now();
    f = calltree_unwind(t, sp, slow_since - t->debt);
  }
  if (CP_UNLIKELY(f + 1 >= t->commit_end)) {
    if (!slow_since) slow_since = cp_now();
    if (!(f = calltree_grow(t))) return;
  }
  struct cp_node *parent = &t->nodes[f->node];
  uint32_t c = parent->hot;
  int throttled = 0;
  if (CP_UNLIKELY(t->nodes[c].key != key)) {
    if (!slow_since) slow_since = cp_now();
    c = calltree_lookup(t, f->node, key);
    if (CP_UNLIKELY(c == CPD_NO_PARENT)) return;   /* nested slow path */
    /* Throttled (throttle.c): an untimed frame, or a sampled one. Synthetic
    ** keys have the bit set already, so the key must differ too. */
    throttled = t->nodes[c].key != key && t->nodes[c].key == (key | CP_KEY_THROTTLED);
  }
  /* Ordered for a timed frame's start, as on the fast path; a throttled
  ** call's read only ends the slow path (a sampled one reads its own), and
  ** an intercepted call's start is a plain read (intercept_read_mode). */
  uint64_t now = throttled || CPD_KEY_IS_API(key) ? cp_now() : cp_now_enter();
  if (slow_since) {
    t->slow_calls++;
    if (now > slow_since) t->debt += now - slow_since;
  }
  if (CP_UNLIKELY(throttled)) calltree_push_throttled(t, f, c, sp);
  else calltree_push(t, f, c, sp, now - t->debt);
}

/* Exit of an instrumented call. check_key: the exit hook knows the same key
** the entry hook had (GCC/Clang hooks); MSVC's _pexit does not. One clock
** read (cost per call: bench/hookcost.py).
** With a key, the innermost frame with that key is this call's whatever the
** stack pointers say: GCC at -O2 makes __cyg_profile_func_exit a tail call
** after the epilogue, so the exit hook's sp is above the entry hook's by the
** function's frame size. sp then serves only to pop frames that longjmp or
** an exception abandoned, when the key does not match. */
CP_INLINE void cp_hot_exit(struct cp_thread *t, uint64_t key, uintptr_t sp,
                           int check_key)
{
  uint64_t now = cp_tnow_exit(t);
  struct cp_frame *f = t->top;
  struct cp_node *n = &t->nodes[f->node];
  if (check_key ? (n->key | CP_KEY_THROTTLED) != (key | CP_KEY_THROTTLED) : f->sp < sp) {
    f = calltree_unwind(t, sp, now);         /* popped by longjmp/exception */
    n = &t->nodes[f->node];
    if (CP_UNLIKELY(check_key ? (n->key | CP_KEY_THROTTLED) != (key | CP_KEY_THROTTLED) : f == t->frames)) {
      calltree_exit_mismatch(t, key, sp, now);
      return;
    }
  } else if (CP_UNLIKELY(!check_key && f == t->frames)) {
    calltree_exit_mismatch(t, key, sp, now);
    return;
  }
  calltree_charge_frame(t, f, now);
  t->top = f - 1;
}

/* The common case of cp_hot_enter alone, for hooks that keep everything
** else out of line: the caller's frame is live, the stack has room and the
** callee is its parent's hot child. Returns 1 when the call is recorded, 0
** (having changed nothing) when the hook must take the full path.
** One clock read; nothing shared.
** mode: the clock read that starts the call (CP_CLOCK_*, cp_g.use_tsc but
** for intercepted calls, see intercept_read_mode). */
CP_INLINE int cp_hot_enter_try_read(struct cp_thread *t, uint64_t key, uintptr_t sp,
                                    uint32_t mode)
{
  struct cp_frame *f = t->top;
  struct cp_node *nodes = t->nodes;
  uint32_t c = nodes[f->node].hot;
  uint64_t k = nodes[c].key;
  if (CP_UNLIKELY(k != key)) {
    /* Not the hot child (a caller that calls several functions in turn, an
    ** interpreter's loop): its first lookup-table slot usually holds it. A
    ** throttled callee (CP_KEY_THROTTLED) is entered here too, untimed. */
    if (k != (key | CP_KEY_THROTTLED)) {
      uint32_t s = t->table[calltree_slot(t, f->node, key)];
      if (s == 0 || (nodes[s].key | CP_KEY_THROTTLED) != (key | CP_KEY_THROTTLED) ||
          nodes[s].parent != f->node)
        return 0;
      nodes[f->node].hot = c = s;
      k = nodes[s].key;
    }
    if (k != key) {
      if (CP_UNLIKELY((f->sp < sp) | (f + 1 >= t->commit_end) |
                      (CP_FAST_CLOCK && mode == CP_CLOCK_OS)))
        return 0;
      calltree_push_throttled(t, f, c, sp);
      return 1;
    }
  }
  if (CP_UNLIKELY((f->sp < sp) | (f + 1 >= t->commit_end) |
                  (CP_FAST_CLOCK && mode == CP_CLOCK_OS)))
    return 0;
  /* The clock is read before the frame is written, not after: the stores
  ** then retire under rdtsc's latency (-1.5 ns per call, bench/run.sh);
  ** they are counted in the callee's time, which calibration subtracts. */
  uint64_t now = cp_fast_enter_clock(mode);
  calltree_push(t, f, c, sp, now - t->debt);
  return 1;
}

CP_INLINE int cp_hot_enter_try(struct cp_thread *t, uint64_t key, uintptr_t sp)
{
  return cp_hot_enter_try_read(t, key, sp, (uint32_t)cp_g.use_tsc);
}

/* An intercepted library call starts with a plain rdtsc whatever the hooks
** use (cp_hot_enter reads so for API keys too, Windows' import-table path),
** and on Linux ends with one (tramp_exit_fast): its return into the trampoline
** is a mispredicted branch that orders the exit read enough, and an
** ordered entry read cost ~20 ns a call in bench_api (53 against 32 ns),
** on calls far longer than the work it keeps in the caller. */
CP_INLINE uint32_t intercept_read_mode(void)
{
  uint32_t mode = (uint32_t)cp_g.use_tsc;
  return mode == CP_CLOCK_TSC_ORDERED ? CP_CLOCK_TSC : mode;
}

/* The common case of cp_hot_exit (check_key): the innermost frame has this
** call's key, so it is this call's (sp is not compared: see cp_hot_exit).
** Returns 0, having changed nothing, otherwise. One ordered clock read and
** the branches of min, max and throttling's decision calls (a compare with
** a value in the line of cp_g.gate and a test of the count's low bits).
** 2: done, and the popped frame's node (t->top + 1) just made its
** throttling decision call. */
CP_INLINE int cp_hot_exit_try(struct cp_thread *t, uint64_t key, uintptr_t sp)
{
  uint32_t mode = (uint32_t)cp_g.use_tsc;
  struct cp_frame *f = t->top;
  /* A throttled call's frame is not timed as usual: the slow side, with no
  ** clock read for most of them. Checked before the clock read, so the
  ** check counts in the callee's time, which calibration subtracts. */
  if (CP_UNLIKELY(f->kind != CP_FRAME_TIMED)) {
    struct cp_node *n = &t->nodes[f->node];
    if (n->key != (key | CP_KEY_THROTTLED)) return 0;
    if (CP_LIKELY(f->kind == CP_FRAME_UNTIMED)) {
      n->calls++;                            /* untimed: no clock read */
    } else {
      /* A sample, here rather than through the full exit path: that one
      ** is longer and, taken once in P calls, cold in a real program. */
      if (CP_FAST_CLOCK && mode == CP_CLOCK_OS) return 0;
      calltree_charge_sampled(n, cp_fast_exit_clock(mode) - t->debt - f->tstart);
    }
    t->top = f - 1;
    return 1;
  }
  uint64_t now = cp_fast_exit_clock(mode);
  struct cp_node *n = &t->nodes[f->node];
  (void)sp;
  if (CP_UNLIKELY((n->key != key) | (CP_FAST_CLOCK && mode == CP_CLOCK_OS)))
    return 0;
  calltree_charge(n, now - t->debt - f->tstart);
  t->top = f - 1;
  if (CP_UNLIKELY(cp_throttle_due(n->calls))) {
    calltree_throttle_due(t, f->node);
    return 2;                                /* the popped frame's node: decided */
  }
  return 1;
}

#endif /* CAPPROF_INTERNAL_H */
