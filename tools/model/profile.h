/*
** profile.h -- the tool's profile model, shared by every subcommand and
** export format: dumps loaded and symbolized, one call tree per thread with
** compensated and raw times in nanoseconds, function identity by symbol
** (name + module, never address, so runs with different ASLR line up),
** trees merged across threads or dumps, and the flat per-function profile.
**
** Compensation (docs/tool.md): for a node with n calls, raw inclusive I and
** D calls in the subtree below it, inclusive = max(0, I - n*inner - D*outer);
** exclusive = max(0, inclusive - sum of the children's inclusive); min and
** max per call lose inner, clamped at 0. inner and outer are the dump's probe
** costs (probe_inner_mt, probe_outer_mt), both scaled by what the run's own
** shortest leaf calls show the probe cost in this program (probe_scale).
** Raw values are kept beside them; prof_unreliable says when a compensated
** figure is mostly probe cost.
*/
#ifndef CAPPROF_PROFILE_H
#define CAPPROF_PROFILE_H

#include <stddef.h>
#include <stdint.h>

#include "model/cpd_reader.h"

#define PROF_NONE UINT32_MAX
#define PROF_OUTER 0x100u  /* node flag: no ancestor runs the same function */
/* Node flag: an unhooked function whose calls here may include calls made
** through another unhooked function: counted under the nearest hooked
** ancestor's path (profile.c, mark_via_unhooked; docs/tool.md). */
#define PROF_VIA_UNHOOKED 0x200u

/* Times of a node or a function, in nanoseconds. */
struct prof_times {
  double incl, excl, min, max;            /* compensated */
  double incl_raw, excl_raw, min_raw, max_raw;
  /* How far compensation moved excl, either way: |raw exclusive before
  ** clamping at 0 - excl|, summed over nodes for a function. A caller's
  ** exclusive time can rise: each call of a throttled callee carries a
  ** timed sample's own probe in its raw time, which the caller did not pay
  ** on most calls (prof_excl_basis). */
  double excl_adj;
};

/* Samples (docs/tool.md, "Samples"): how many samples were charged to a node
** or function, and the CPU time they stand for (samples x interval, time
** sources only; 0 for event counters). self: in the node or function itself;
** incl: in it or below it. */
struct prof_samples {
  uint64_t self, incl;
  double cpu_self, cpu_incl;   /* ns */
  uint64_t probe;              /* samples in capprof's hooks on its call paths (not in self) */
};

struct prof_func {
  char *name;              /* demangled function, zone or synthetic name */
  char *module;            /* module base name, "" if none */
  char *file;              /* source file or NULL */
  unsigned line;           /* 0 if unknown */
  int synthetic;           /* root, overflow and sink nodes */
  int zone;                /* a zone (key CPD_KEY_ZONE), not a function */
  int api;                 /* an intercepted library function (CPD_KEY_API) */
  uint64_t key;            /* the CPD_KEY_* of a synthetic node, else 0 */
  /* Flat totals over every path, thread and dump, filled by prof_flat. The
  ** inclusive times count outermost activations only, so recursion is not
  ** counted twice; exclusive, calls, min and max count every activation. */
  uint64_t calls;
  uint64_t timed;          /* calls its times cover: calls, fewer if throttled */
  uint32_t throttled;      /* paths (nodes) of it that were throttled */
  double throttled_ns;     /* earliest throttling, ns since its dump's start
                           ** (prof_flat, from the dumps' THROTTLE records) */
  double unhooked_ns;      /* when its hooks were patched out, ns since its
                           ** dump's start, earliest over dumps; 0: never */
  uint64_t ucalls;         /* calls after that, counted by its entry's
                           ** counting stub (format 1.7), over dumps: not in
                           ** calls, which its times cover */
  int uncounted;           /* some dump's later calls of it were not counted */
  int per_path;            /* 1: every dump that unhooked it counted its later
                           ** calls per call path, in its nodes (format 1.9;
                           ** ucalls: only those counted in no tree); -1: some
                           ** dump did not; 0: never unhooked */
  int unsynced;            /* some dump patched it without serializing the
                           ** other cores (no CPD_UNHOOKED_SYNCED) */
  int sync_unknown;        /* some dump is older than format 1.8 */
  struct prof_times t;
  /* Inclusive time summed over every activation (recursion counted at each
  ** level): divided by calls it is the mean inclusive time of one call, the
  ** figure min and max bound. */
  double incl_all, incl_all_raw;
  struct prof_samples s;   /* charged to its call-tree nodes (prof_flat) */
  struct prof_samples pc;  /* its program counters: self, and on the sampled
                           ** stack (incl); summed as dumps are added */
};

/* Every call of a function: those its nodes counted and, when it was
** unhooked, those its counting stub counted after. */
static inline uint64_t prof_all_calls(const struct prof_func *f)
{
  return f->calls + f->ucalls;
}

/* Per-call means, 0 without calls: self per call (excl / calls) and
** inclusive per call (of a function: incl_all / calls; of a node: incl /
** calls). The same two figures in every command and export. */
static inline double prof_per_call(double t, uint64_t calls)
{
  return calls ? t / (double)calls : 0;
}

struct prof_node {
  uint32_t func;           /* index into profile.funcs */
  uint32_t parent;         /* < own index; PROF_NONE for node 0, the root */
  uint32_t first, next;    /* children, largest inclusive first */
  uint32_t flags;          /* CPD_NODE_OPEN, PROF_OUTER, PROF_VIA_UNHOOKED */
  uint64_t calls;
  uint64_t timed;          /* calls its times cover: calls, fewer if throttled
                           ** in a dump before format 1.3 (later calls were
                           ** counted only); since, a throttled node's later
                           ** calls are timed one in P and scaled */
  uint64_t throttled_at;   /* calls when it was throttled; calls if never */
  double probe_ns;         /* probe cost in its raw inclusive time: its own
                           ** calls' and every call's below; subtracted */
  struct prof_times t;
  uint32_t s_self, s_incl; /* samples charged to the node, and with its subtree;
                           ** CPU time = samples x its thread's sample_ns */
  uint32_t s_probe;        /* samples charged to it whose program counter was
                           ** in capprof's hooks: not in s_self */
};

/* Samples of one node at one program counter, with its source line: what
** the dump told apart by program counter (format 1.5) and the leaves of
** sampled stacks. Kept for the exports that show lines (pprof). */
struct prof_pc {
  uint32_t node;           /* the node the samples are charged to */
  uint32_t count;          /* samples, part of the node's s_self */
  uint64_t addr;           /* the program counter, in its dump's address space */
  char *file;              /* source file (owned) or NULL */
  unsigned line;           /* 0 if unknown */
};

struct prof_thread {
  uint64_t tid;
  char *name;              /* "" if unnamed */
  int dump;                /* index of its dump, -1 for a merged tree */
  uint64_t lost_calls;
  uint32_t open_calls;
  uint32_t nnodes, cap;
  struct prof_node *nodes; /* node 0 is the root; its incl is the total */
  int sampled;             /* built from sampled stacks (no hooks): times are
                           ** CPU time from samples, calls are 0 */
  double sample_ns;        /* CPU ns one sample stands for (its dump's, or the
                           ** first's in a merged tree); 0: event counters */
  uint32_t npcs;           /* samples by program counter of the loaded tree; */
  struct prof_pc *pcs;     /* 0 and NULL in merged and filtered trees */
};

struct prof_dump {
  struct cpd_dump *d;      /* owned */
  double inner_ns, outer_ns;              /* probe costs per call, as subtracted */
  double cal_inner_ns, cal_outer_ns;      /* the dump's calibration */
  double probe_scale;      /* inner_ns / cal_inner_ns: set by the run's own data */
  uint32_t scale_func;     /* the leaf that bounded the probe, or PROF_NONE */
  double scale_leaf_ns;    /* its average raw time per call */
  double api_inner_ns, api_outer_ns;      /* the same for intercepted calls */
  double untimed_ns;       /* an untimed throttled call, caller's time */
  double sinner_ns, souter_ns;            /* a throttled call timed as a sample */
  uint64_t period;         /* throttled calls per timed one; 0: not timed */
  uint64_t calls;          /* all calls in the dump */
  uint32_t *ufunc;         /* the function of each UNHOOKED record, or NULL */
  const struct cpd_sample_session *sampling; /* CAPPROF_SAMPLE's session, or NULL */
  double sample_ns;        /* CPU ns one sample stands for (0: event source) */
};

struct profile {
  uint32_t ndumps;
  struct prof_dump *dumps;
  uint32_t nthreads;
  struct prof_thread *threads;
  uint32_t nfuncs, capfuncs;
  struct prof_func *funcs;
  uint32_t *fhash;         /* open addressing over funcs, size fmask + 1 */
  uint32_t fmask;
  uint64_t node_samples;   /* samples charged to call-tree nodes, all dumps */
  uint64_t pc_moved;       /* of node_samples, those whose program counter was in
                           ** a callee of their node, moved to the callee's node */
  uint64_t probe_samples;  /* samples charged to nodes with the program counter
                           ** in capprof's hooks (not in node_samples) */
  uint64_t pc_samples;     /* samples with a program counter, all dumps */
  double pc_cpu;           /* their CPU time, ns */
  int has_sampled_threads; /* some thread's tree comes from sampled stacks */
  int ucalls_off;          /* a filter keeps part of the threads or call paths:
                           ** the process-wide calls after unhooking are not
                           ** added (prof_flat; filter_apply sets it) */
  int weight, weight_raw;  /* the figure every view ranks by (model/weight.h) */
};

/* A new empty profile, or NULL when out of memory. Not thread-safe. */
struct profile *prof_new(void);
void prof_free(struct profile *p);

/* Load, symbolize and add one dump file; every thread becomes a tree. On
** failure prints one 'capprof: ...' line and returns -1. */
int prof_load(struct profile *p, const char *path);
/* As prof_load for a parsed dump; the profile takes ownership of d, even on
** failure. Returns 0, or CAPPROF_ENOMEM. */
int prof_add_dump(struct profile *p, struct cpd_dump *d);

/* Load every path into a new profile; NULL (after an error line) on failure. */
struct profile *prof_load_all(int n, char **paths);

/* The function index for (name, module), added if new; PROF_NONE when out
** of memory. */
uint32_t prof_intern(struct profile *p, const char *name, const char *module, const char *file,
                     unsigned line);

/* A new tree summing the trees of threads idx[0..n-1], paths matched by
** function. Returns 0 and fills *out (name and tid from the first), or
** CAPPROF_ENOMEM. Free with prof_thread_free. */
int prof_merge_threads(const struct profile *p, const uint32_t *idx, uint32_t n,
                       struct prof_thread *out);
void prof_thread_free(struct prof_thread *t);

/* What prof_filter_thread does with a node (act[i] for node i >= 1). */
enum prof_act {
  PROF_KEEP,     /* under its parent's new node */
  PROF_DROP,     /* left out with its subtree; its time stays in its parent */
  PROF_HIDE,     /* merged into its parent: its children become the parent's */
  PROF_REROOT,   /* a top-level call of the new tree */
};
/* A new tree from t, node by node as act says; siblings that end up with the
** same function merge (calls and times summed, min and max combined). A
** dropped node's subtree is dropped. Returns 0 or CAPPROF_ENOMEM; free the
** result with prof_thread_free. */
int prof_filter_thread(const struct profile *p, const struct prof_thread *t,
                       const unsigned char *act, struct prof_thread *out);

/* The note report and tree print when some dump with samples charged to call
** paths predates format 1.4 (its hooks' samples are in cpu self), else "". */
const char *prof_probe_note(const struct profile *p);

/* The share of the measured time that compensation took away as probe cost,
** over the threads with measured calls (their roots' raw and compensated
** inclusive times); 0 when nothing was measured. measured and subtracted,
** when not NULL, get the two times (ns). */
double prof_probe_share(const struct profile *p, double *measured, double *subtracted);

/* Recompute the flat per-function totals from all threads of the profile. */
void prof_flat(struct profile *p);

/* Whether a compensated time is mostly probe cost: more than twice as much
** was subtracted from the raw time as is left. The probe's cost on real code
** is known to about +-25% (docs/tool.md), so such a figure may be off by
** more than half. Never for raw times (comp == raw). */
int prof_unreliable(double comp, double raw);
/* What an exclusive time is judged against: compensated plus how far the
** compensation moved it. The raw time when compensation subtracted; when it
** added (raw exclusive below 0 or below the compensated figure: a caller of
** throttled functions), the figure is as unsure as when it subtracted as
** much. */
static inline double prof_excl_basis(const struct prof_times *t) { return t->excl + t->excl_adj; }
/* fmt_ns of comp, with '~' in front when prof_unreliable(comp, raw_ns); with
** raw set, fmt_ns of raw_ns unmarked. Counts marks in *marks (may be NULL). */
const char *prof_fmt_ns(double comp, double raw_ns, int raw, int *marks, char *buf, size_t n);
/* The same, judged against basis (prof_excl_basis) rather than raw_ns. */
const char *prof_fmt_ns_basis(double comp, double raw_ns, double basis, int raw, int *marks,
                              char *buf, size_t n);
/* The legend line for '~', printed when marks is not 0. */
void prof_legend(int marks);

/* The probe model of a dump (docs/tool.md): from pd->d and pd->cal_inner_ns,
** sets pd->probe_scale and scale_leaf_ns, and *leaf_key to the key of the
** leaf function that bounded the probe (0: none, scale 1). Not thread-safe
** (none of this is). */
void prof_probe_model(struct prof_dump *pd, uint64_t *leaf_key);

/* The function index for (name, module), or PROF_NONE if absent. */
uint32_t prof_lookup(const struct profile *p, const char *name, const char *module);

/* Function f of profile `from` in profile `to`: by name and module; unless
** keep_modules, a function of from's executable also matches the same name
** in to's executable whatever the two files are called (two builds of one
** program named app-old and app-new). PROF_NONE if absent. */
uint32_t prof_lookup_in(const struct profile *to, const struct profile *from, uint32_t f,
                        int keep_modules);
/* A dump's sampling session and the CPU time one sample stands for; both
** NULL/0 when the dump has no process-wide sampling. */
double prof_sample_ns(const struct cpd_dump *d);

/* A thread's sampled stacks without the frames the frame-pointer walk read
** astray (profile.c): *out is st with nodes of its own (free them), whose
** indexes keep the order of st's. 0 or CAPPROF_ENOMEM. */
struct symbolizer;
int prof_sampled_stacks(const struct cpd_sample_thread *st, struct symbolizer *sym,
                        struct cpd_sample_thread *out);

/* Whether thread i of d (CPD_NO_PARENT: none) has nodes of hooked functions.
** A thread whose tree holds only library calls intercepted by 'capprof run'
** or zones also gets the call tree of its sampled stacks. */
int prof_thread_hooked(const struct cpd_dump *d, uint32_t i);

/* The first function whose name equals name, or else contains it; PROF_NONE. */
uint32_t prof_find_func(const struct profile *p, const char *name);

#endif /* CAPPROF_PROFILE_H */
