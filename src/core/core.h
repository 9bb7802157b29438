/*
** core.h -- the core of the runtime: the per-thread call tree and shadow
** stack, the global state, the clock, ended threads, the runtime's life
** cycle and what a feature registers with it (struct cp_feature). Every
** runtime file includes it; a feature's own header comes on top.
*/
#ifndef CAPPROF_CORE_H
#define CAPPROF_CORE_H

#include <stddef.h>
#include <stdint.h>

#include "../platform.h"
#include "../dumpfmt.h"
#include "capprof/capprof.h"

#if CAPPROF_ARCH_X86
#  if defined(_MSC_VER) && !defined(__clang__)
#    include <intrin.h>
#  else
#    include <x86intrin.h>
#  endif
#endif
#include "../os.h"

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
** stub (src/patch/patch_x86_64.c): the first this many. Stub k counts the
** call in the calling thread's tree, in the child of the node on top of its
** shadow stack (the nearest hooked caller's path) that
** cp_thread.ucount[k] points at, while cp_thread.uslot[k] names that node. */
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
  /* Counting stub k's one-entry cache (src/patch/patch_x86_64.c): the node
  ** on top when it last took its slow path, plus one (0: none), and the
  ** calls field of that node's child for the function, which it adds one
  ** to while the top node is the same. Last: the hooks' fast paths read the
  ** first fields. */
  uint64_t *ucount[CP_UNHOOK_COUNTED];
  uint32_t uslot[CP_UNHOOK_COUNTED];
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
  struct os_process proc;     /* exe, progname, cmdline (the OS layer's) */
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

#include "feature.h"                           /* struct cp_feature: what a feature registers */

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

#endif /* CAPPROF_CORE_H */
