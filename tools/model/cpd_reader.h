/*
** cpd_reader.h -- the dump reader library, shared by the capprof tool and the
** tests. It validates every field it reads: a corrupt, truncated or hostile
** file gives an error code and a one-line explanation, never a crash, and
** memory stays proportional to the file's size.
*/
#ifndef CAPPROF_DUMPREAD_H
#define CAPPROF_DUMPREAD_H

#include <stddef.h>
#include <stdint.h>

#include "../../src/dumpfmt.h"
#include "capprof/capprof.h"

struct cpd_module {
  uint64_t base;            /* address - base = ELF vaddr / PE RVA */
  uint64_t size;            /* extent from base */
  uint32_t id_kind;         /* CPD_MODID_* */
  uint32_t id_len;
  unsigned char *id;        /* build-id, or PDB GUID + age */
  char *path;
  char *debug_path;         /* PDB path, "" if none */
};

struct cpd_node {
  uint64_t key;             /* address, or CPD_KEY_* */
  uint32_t parent;          /* < own index; CPD_NO_PARENT for node 0 */
  uint32_t flags;           /* CPD_NODE_* */
  uint64_t calls, incl, min, max;   /* ticks */
};

/* Samples charged to a node whose program counter was pc. */
struct cpd_node_pc {
  uint32_t node;
  uint64_t pc, count;
};

struct cpd_thread {
  uint64_t tid;
  uint64_t start_ns, end_ns;        /* realtime; end 0: alive at dump */
  uint64_t lost_calls;              /* calls past the node cap or depth */
  uint32_t node_count;              /* >= 1; node 0 is the root */
  uint32_t open_calls;              /* calls still running at dump time */
  uint64_t hidden_ticks;            /* CALIBRATION: slow paths' time, left out; 0 if absent */
  uint64_t slow_calls;              /* CALIBRATION: entries that took the slow path */
  char *name;
  struct cpd_node *nodes;
  uint64_t *samples;                /* per node, samples charged (SAMPLE_NODES); NULL if none */
  uint64_t *probe_samples;          /* per node, samples in capprof's hooks (SAMPLE_PROBE) */
  struct cpd_node_pc *pcs;          /* program samples per (node, pc) (SAMPLE_NODE_PCS,
                                    ** format 1.5): part of samples, told apart by pc */
  uint32_t npcs;
};

/* A sampling session: CAPPROF_SAMPLE's process-wide sampling or a profile
** object (SAMPLE_SESSIONS). */
struct cpd_sample_session {
  uint32_t kind;                    /* CPD_SK_* */
  uint32_t flags;                   /* CPD_SS_F_* */
  uint32_t source;                  /* CPD_SRC_* */
  uint32_t method;                  /* CPD_SM_* */
  uint64_t interval;                /* ns or events, per unit */
  uint32_t unit;                    /* CPD_SS_UNIT_* */
  uint32_t shift;                   /* log2 of the bucket size */
  uint64_t samples, hits, lost, walked;
  uint64_t lo, hi;                  /* address range */
  char *name, *method_text, *note;
  uint32_t nbuckets;
  uint32_t *buckets;
};

/* One node of a thread's sampled stacks: a code address under its caller. */
struct cpd_snode {
  uint64_t addr;                    /* pc (leaf) or return address - 1; 0 for the root */
  uint32_t parent;                  /* < own index; CPD_NO_PARENT for node 0 */
  uint32_t self;                    /* samples whose stack ends here */
};

struct cpd_sample_thread {
  uint64_t tid;
  uint32_t thread;                  /* index in threads, or CPD_NO_PARENT (no hooks) */
  uint32_t nnodes;                  /* >= 1 */
  uint64_t samples, lost;
  char *name;
  struct cpd_snode *nodes;
};

/* Mismatched zone BEGIN/END of one thread and zone name (ZONE_ISSUES). */
struct cpd_zone_issue {
  uint32_t thread;                  /* index in threads */
  uint32_t zone;                    /* index in strings */
  uint64_t n[CPD_ZI_KINDS];         /* count per CPD_ZI_* kind */
};

/* A node that throttling stopped timing (THROTTLE). */
struct cpd_throttled {
  uint32_t thread;                  /* index in threads */
  uint32_t node;                    /* index in that thread's nodes */
  uint64_t ticks;                   /* since the start (CLOCK's ticks) */
  uint64_t timed;                   /* calls its incl, min, max cover */
};

/* A function whose hooks were patched out (UNHOOKED). */
struct cpd_unhooked {
  uint64_t key;                     /* its entry key, as its nodes have it */
  uint64_t ticks;                   /* since the start (CLOCK's ticks) */
  uint64_t calls;                   /* counted after it (format 1.7), or
                                    ** CPD_UNHOOKED_UNCOUNTED */
  uint32_t flags;                   /* CPD_UNHOOKED_* (format 1.8; an older
                                    ** dump's: CPD_UNHOOKED_SYNC_UNKNOWN) */
};

/* A THREADS record that holds several ended threads (THREAD_MERGES). */
struct cpd_merge {
  uint32_t thread;                  /* index in threads */
  uint32_t kind;                    /* CPD_MERGE_* */
  uint64_t threads;                 /* ended threads merged into it */
  uint64_t start_key;               /* their first call's key, 0 if mixed */
};

/* An intercepted library function (API section): key CPD_KEY_API | id. */
struct cpd_api {
  char *library;                    /* module base name, e.g. "libc.so.6" */
  char *symbol;                     /* function name as imported */
};

/* What API interception did in the process (INTERCEPT section). */
struct cpd_intercept {
  int present;                      /* the section was in the dump */
  uint32_t status;                  /* CPD_IS_* */
  uint64_t modules, slots;          /* modules and import slots patched */
  uint64_t unrecorded;              /* calls passed through unrecorded */
  uint64_t inner_mt, outer_mt;      /* probe cost per intercepted call, milli-ticks */
  char *spec;                       /* CAPPROF_API as given */
};

/* Imports left alone (INTERCEPT_SKIPS), one record per reason and function. */
struct cpd_skip {
  uint32_t reason;                  /* CPD_SKIP_* */
  uint64_t slots;                   /* import slots left alone */
  char *library, *symbol;
};

struct cpd_dump {
  char *path;                       /* file it was loaded from, or "" */
  unsigned version, minor;
  uint32_t ptr_size;
  uint32_t flags;                   /* CPD_F_* from the header */
  uint64_t pid, ppid, start_ns, dump_ns;
  uint32_t os, arch;                /* CPD_OS_*, CPD_ARCH_* */
  char *exe;
  char *cmdline;                    /* arguments separated by NUL */
  size_t cmdline_len;
  uint32_t clock_source;            /* CPD_CLOCK_* */
  uint32_t clock_reads;             /* CPD_READS_*, 0: not recorded */
  uint64_t calib_ticks, calib_ns;   /* ticks and ns over the same span */
  uint64_t timer_overhead;          /* ticks */
  uint64_t probe_inner_mt;          /* milli-ticks per call, own time */
  uint64_t probe_outer_mt;          /* milli-ticks per call, caller's time */
  uint64_t throttle_period;         /* a throttled node's calls per timed call,
                                    ** whose time counts that many times; 0:
                                    ** (before minor 3) later calls untimed */
  uint64_t probe_untimed_mt;        /* an untimed throttled call, caller's time */
  uint64_t probe_sinner_mt;         /* a throttled call timed as a sample: */
  uint64_t probe_souter_mt;         /* own and caller's time */
  uint32_t nmodules;
  struct cpd_module *modules;
  uint32_t nthreads;
  struct cpd_thread *threads;
  uint32_t nstrings;                /* zone names: key CPD_KEY_ZONE | index */
  char **strings;
  uint32_t nzone_issues;            /* records; a (thread, zone) may repeat */
  struct cpd_zone_issue *zone_issues;
  uint64_t throttle_calls;          /* THROTTLE: a node's calls at its first decision
                                       (later ones at multiples of 2^17 above); 0 off */
  uint64_t throttle_ns;             /* ns per call under which it was throttled */
  uint32_t hooks;                   /* CPD_HOOKS_* that fired; 0: unknown */
  uint32_t nthrottled;              /* records, at most one per node */
  struct cpd_throttled *throttled;
  uint32_t nunhooked;               /* UNHOOKED records */
  struct cpd_unhooked *unhooked;
  uint32_t nmerges;                 /* merge groups among threads */
  struct cpd_merge *merges;
  uint64_t ended_kept, ended_merged, ended_dropped;  /* ended threads */
  uint32_t napis;                   /* API ids; absent section: 0 */
  struct cpd_api *apis;             /* indexed by id */
  struct cpd_intercept intercept;
  uint32_t nskips;
  struct cpd_skip *skips;
  uint32_t nsessions;               /* sampling (sections 12-14) */
  struct cpd_sample_session *sessions;
  uint32_t nsample_threads;
  struct cpd_sample_thread *sample_threads;
};

/* Parse a dump held in memory. On success *out owns its memory (free with
** cpd_free) and 0 is returned; otherwise a negative CAPPROF_E* code and, if
** err != NULL, a one-line explanation. Thread-safe. */
int cpd_parse(const unsigned char *data, size_t size, struct cpd_dump **out,
              char *err, size_t errlen);
/* Read and parse a file; as cpd_parse, with CAPPROF_ENOENT/EIO for the file. */
int cpd_load(const char *path, struct cpd_dump **out, char *err, size_t errlen);
void cpd_free(struct cpd_dump *d);

/* Convert ticks of this dump's clock to nanoseconds. */
double cpd_ticks_to_ns(const struct cpd_dump *d, double ticks);

/* Total of mismatch kind (CPD_ZI_*) for zone name index zone, over threads. */
uint64_t cpd_zone_issue_total(const struct cpd_dump *d, uint32_t zone, unsigned kind);

/* The calls whose time node `node` of thread `th` holds: its calls, or
** fewer when it was throttled in a dump before format 1.3 (whose later
** calls were counted only). */
uint64_t cpd_timed_calls(const struct cpd_dump *d, uint32_t th, uint32_t node);
/* Its calls when it was throttled: all of them if it never was. */
uint64_t cpd_throttled_at(const struct cpd_dump *d, uint32_t th, uint32_t node);
/* The merge record of thread index thread, or NULL for one thread's record. */
const struct cpd_merge *cpd_thread_merge(const struct cpd_dump *d, uint32_t thread);
/* a + b, or UINT64_MAX when it would not fit: counts summed over several
** dumps saturate instead of wrapping (one dump's total is checked on load). */
static inline uint64_t cpd_sat_add(uint64_t a, uint64_t b)
{
  return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* Words for a CPD_IS_* status and a CPD_SKIP_* reason. */
const char *cpd_intercept_status_text(uint32_t status);
const char *cpd_skip_reason_text(uint32_t reason);
/* Name of a CPD_SRC_* source ("task-clock", "cycles", ...), "?" if unknown. */
const char *cpd_source_name(uint32_t source);

/* The process-wide sampling session (CPD_SK_PROCESS), or NULL. */
const struct cpd_sample_session *cpd_process_sampling(const struct cpd_dump *d);

/* Index of the module containing addr, or -1. */
int cpd_find_module(const struct cpd_dump *d, uint64_t addr);

#endif /* CAPPROF_DUMPREAD_H */
