/*
** dumpfmt.h -- the on-disk layout of a capprof dump, shared by the runtime's
** writer and the reader library. docs/dump-format.md is the prose version of
** this file; keep them in step. All fields are fixed-width little-endian.
*/
#ifndef CAPPROF_DUMPFMT_H
#define CAPPROF_DUMPFMT_H

#include <stdint.h>
#include <string.h>

#define CPD_MAGIC          "CAPPROF\0"
#define CPD_MAGIC_LEN      8
#define CPD_VERSION        1u     /* major: a reader refuses other majors */
#define CPD_VERSION_MINOR  9u     /* minor: additions a v1 reader may skip */
#define CPD_HEADER_SIZE    64u
#define CPD_SECTION_SIZE   24u    /* one entry of the section table */
#define CPD_NODE_SIZE      48u    /* one call-tree node record */

/* File header, offsets in bytes. */
#define CPD_H_MAGIC        0      /* char[8] */
#define CPD_H_VERSION      8      /* u16 major, u16 minor */
#define CPD_H_HEADER_SIZE  12     /* u32 */
#define CPD_H_NSECTIONS    16     /* u32 */
#define CPD_H_FLAGS        20     /* u32, CPD_F_* */
#define CPD_H_TABLE_OFF    24     /* u64 offset of the section table */
#define CPD_H_FILE_SIZE    32     /* u64 total size; a shorter file is truncated */
#define CPD_H_PTR_SIZE     40     /* u32 pointer size of the profiled process */

#define CPD_F_COMPLETE     1u     /* the writer finished the file */
#define CPD_F_MERGED       2u     /* written by 'capprof merge': symbol keys */

/* Section types. Unknown types are skipped by readers. */
enum cpd_section_type {
  CPD_SEC_PROCESS = 1,
  CPD_SEC_CLOCK   = 2,
  CPD_SEC_MODULES = 3,
  CPD_SEC_THREADS = 4,
  CPD_SEC_NODES   = 5,
  CPD_SEC_STRINGS = 6,    /* names of zones (keys with CPD_KEY_ZONE) */
  CPD_SEC_ZONE_ISSUES = 7, /* mismatched zone BEGIN/END, per thread and name */
  CPD_SEC_THROTTLE = 8,   /* throttling settings, throttled nodes, hook kinds */
  CPD_SEC_CALIBRATION = 9, /* per-thread time of the runtime's slow paths */
  CPD_SEC_THREAD_MERGES = 10, /* THREADS records that hold several ended threads */
  CPD_SEC_API     = 11,   /* intercepted library functions: key CPD_KEY_API | id */
  CPD_SEC_SAMPLE_SESSIONS = 12, /* sampling sessions and profile objects, buckets */
  CPD_SEC_SAMPLE_NODES = 13,    /* samples charged to call-tree nodes */
  CPD_SEC_SAMPLE_STACKS = 14,   /* sampled program counters and stacks per thread */
  CPD_SEC_INTERCEPT = 16, /* API interception: status, counts, probe cost */
  CPD_SEC_INTERCEPT_SKIPS = 17, /* imports left alone, per reason and function */
  CPD_SEC_SAMPLE_PROBE = 18,    /* samples in capprof's hooks, per call-tree node */
  CPD_SEC_SAMPLE_NODE_PCS = 19, /* program samples per (call-tree node, program counter) */
  CPD_SEC_UNHOOKED = 20   /* functions whose hooks were patched out (unhooking) */
};

/* CPD_SEC_INTERCEPT status: whether API interception ran in this process. */
enum cpd_intercept_status {
  CPD_IS_OFF = 0,          /* not asked for (no CAPPROF_API) */
  CPD_IS_ACTIVE = 1,       /* import slots were patched as asked */
  CPD_IS_STATIC = 2,       /* statically linked program: nothing to patch */
  CPD_IS_UNSUPPORTED = 3,  /* no back end for this platform or architecture */
  CPD_IS_FAILED = 4        /* could not set up (out of memory) */
};

/* Why an imported function was left alone (CPD_SEC_INTERCEPT_SKIPS). */
enum cpd_skip_reason {
  CPD_SKIP_RETURNS_TWICE = 1,  /* setjmp, vfork, getcontext: the return cannot be moved */
  CPD_SKIP_UNWINDS = 2,        /* longjmp, throw, pthread_exit: leaves frames by unwinding */
  CPD_SKIP_SHARES_STACK = 3,   /* clone: a child runs on the caller's thread state */
  CPD_SKIP_LIBRARY = 4,        /* the function is in the loader, unwinder or capprof */
  CPD_SKIP_SLOT = 5,           /* the slot held an address capprof did not expect */
  CPD_SKIP_PROTECT = 6,        /* the slot's page could not be made writable */
  CPD_SKIP_FULL = 7,           /* capprof's table of functions or stubs was full */
  CPD_SKIP_START = 8,          /* __libc_start_main: calls main, never returns */
  CPD_SKIP_REASONS = 9
};

/* Sampling (sections 12-14; docs/dump-format.md). A session is the
** process-wide sampling of CAPPROF_SAMPLE (kind PROCESS: charged to call
** paths, stacks recorded) or a profile object (kind OBJECT: buckets). */
enum cpd_sample_kind { CPD_SK_PROCESS = 1, CPD_SK_OBJECT = 2 };
enum cpd_sample_source {
  CPD_SRC_TASK_CLOCK = 1, CPD_SRC_CPU_CLOCK = 2, CPD_SRC_CPU_TIMER = 3,
  CPD_SRC_CYCLES = 4, CPD_SRC_INSTRUCTIONS = 5, CPD_SRC_BRANCHES = 6,
  CPD_SRC_BRANCH_MISSES = 7, CPD_SRC_CACHE_REFERENCES = 8, CPD_SRC_CACHE_MISSES = 9,
  CPD_SRC_COUNT = 10
};
/* How the samples were taken. */
enum cpd_sample_method {
  CPD_SM_NONE = 0,        /* not taken: the source was unavailable (see note) */
  CPD_SM_PERF = 1,        /* Linux perf_event_open, one event per thread */
  CPD_SM_CPU_TIMER = 2,   /* POSIX per-thread CPU-time timer and a signal */
  CPD_SM_NT_PROFILE = 3,  /* NtCreateProfileEx profile object */
  CPD_SM_SUSPEND = 4,     /* sampler thread: suspend, read context, resume */
  CPD_SM_RING = 5         /* Linux perf_event_open per thread into a ring
                          ** buffer the hooks read: no signal (the default) */
};
#define CPD_SS_UNIT_NS     1u     /* interval in nanoseconds of CPU time */
#define CPD_SS_UNIT_EVENTS 2u     /* interval in counted events */
#define CPD_SS_F_FAILED    1u     /* the session could not start (note says why) */
#define CPD_SS_F_CLOSED    2u     /* profile object closed before the dump */
/* THROTTLE: u64 calls at which throttling is decided (0: off), u64 ns per
** call under which a node is throttled, u32 CPD_HOOKS_* bits, u32 record
** count, then records of CPD_THROTTLE_REC_SIZE bytes: u32 thread (index in
** THREADS), u32 node (index in that thread's nodes), u64 ticks since the
** start (CLOCK's ticks) when the node was throttled, u64 timed calls (the
** calls its inclusive time, min and max cover; later ones are counted only). */
#define CPD_THROTTLE_REC_SIZE 24u
/* UNHOOKED (format 1.6, only when a function was unhooked): u32 record
** count, u32 record size (CPD_UNHOOKED_REC_SIZE), then per record u64 key
** (the function's entry key, as nodes have it) and u64 ticks since the start
** (CLOCK's ticks) when its hooks were patched out; its later calls are
** not timed. Format 1.7 adds u64 calls: how many calls of it its entry's
** counting stub counted after the patch, in every thread, or
** CPD_UNHOOKED_UNCOUNTED when its entry got no stub (then, and in 1.6
** dumps, its later calls are not counted). Format 1.8 adds u32 flags
** (CPD_UNHOOKED_SYNCED) and u32 reserved (0). Format 1.9 counts the later
** calls per call path in the threads' trees (CPD_UNHOOKED_PER_PATH): the
** record's calls are then only those counted where a thread had no tree. */
#define CPD_UNHOOKED_REC_SIZE_MIN 16u
#define CPD_UNHOOKED_REC_SIZE_CALLS 24u
#define CPD_UNHOOKED_REC_SIZE 32u
#define CPD_UNHOOKED_UNCOUNTED UINT64_MAX
/* Every store into its code was followed by a core-serializing instruction
** on each core running the process (Linux membarrier SYNC_CORE), as the
** processor manuals ask of cross-modifying code; without it the patch
** relied on single aligned stores (XRay's way). UNKNOWN: not said (written
** by capprof merge for a function one of its dumps, older than 1.8, did
** not say it of). */
#define CPD_UNHOOKED_SYNCED 1u
#define CPD_UNHOOKED_SYNC_UNKNOWN 2u
/* Its later calls are counted in the trees, each in a node under the node
** that was on top of the calling thread's shadow stack (the nearest hooked
** caller's path), flagged CPD_NODE_THROTTLED (counted, not timed); the
** record's calls are only those in no tree (format 1.9). */
#define CPD_UNHOOKED_PER_PATH 4u
/* SAMPLE_NODE_PCS (format 1.6): a pc with this bit set is not where the
** sample was, in a library, but the return address minus one of the
** executable's innermost call found on the stack above it. */
#define CPD_PC_CALLER UINT64_C(0x8000000000000000)
#define CPD_HOOKS_CYG     1u   /* __cyg_profile_func_* (-finstrument-functions) */
#define CPD_HOOKS_FENTRY  2u   /* __fentry__/__return__ (gcc -pg -mfentry ...) */

/* THREAD_MERGES (present when ended threads were merged): u32 record count,
** u32 record size (24), u64 ended threads kept one by one, u64 ended
** threads merged, u64 ended threads dropped (no memory for a group); then
** per merge group: u32 thread (index in THREADS), u32 kind (CPD_MERGE_*),
** u64 threads merged into it, u64 start key (the first function the
** threads called, 0 if none or mixed). */
#define CPD_MERGE_RECORD_SIZE 24u
enum cpd_merge_kind {
  CPD_MERGE_NAME_AND_START = 1, /* same thread name and start function */
  CPD_MERGE_OTHERS         = 2  /* every group was taken: all the rest */
};

/* Fields of a CALIBRATION record, after u32 thread (index in THREADS) and u32
** 0: u64 each. The section starts with u32 record count, u32 fields per
** record; readers take the fields they know and skip the rest. */
enum cpd_calibration_field {
  CPD_CAL_HIDDEN_TICKS = 0, /* ticks the slow paths took, left out of every time */
  CPD_CAL_SLOW_CALLS   = 1, /* calls whose entry took the slow path */
  CPD_CAL_FIELDS       = 2
};

/* Kinds of zone mismatch, the columns of a ZONE_ISSUES record. A record is
** u32 thread (index in THREADS), u32 zone (string index), then one u64 per
** kind; the section starts with u32 record count, u32 kinds per record.
** A (thread, zone) pair may appear in several records: readers add them. */
enum cpd_zone_issue_kind {
  CPD_ZI_END_WITHOUT_BEGIN = 0, /* END naming a zone that was not open */
  CPD_ZI_END_OUT_OF_ORDER  = 1, /* END closed a zone that was not the innermost */
  CPD_ZI_LEFT_OPEN         = 2, /* never ended: its function returned, a longjmp
                                ** or exception left it, or an outer END closed it */
  CPD_ZI_OPEN_AT_EXIT      = 3, /* still open when its thread or the process ended */
  CPD_ZI_OPEN_AT_DUMP      = 4, /* still open when a dump was taken mid-run */
  CPD_ZI_KINDS             = 5
};

enum cpd_os   { CPD_OS_UNKNOWN = 0, CPD_OS_LINUX = 1, CPD_OS_WINDOWS = 2 };
enum cpd_arch { CPD_ARCH_OTHER = 0, CPD_ARCH_X86_64 = 1, CPD_ARCH_I386 = 2,
                CPD_ARCH_AARCH64 = 3 };
enum cpd_clock { CPD_CLOCK_TSC = 1, CPD_CLOCK_MONOTONIC = 2, CPD_CLOCK_QPC = 3 };
/* The CLOCK section's second u32: how the hooks read the TSC (0: not
** recorded by an older runtime, a merge of runs that differ, or not the
** TSC). */
enum cpd_tsc_reads { CPD_READS_MIXED = 1, CPD_READS_FAST = 2, CPD_READS_ORDERED = 3 };
enum cpd_modid { CPD_MODID_NONE = 0, CPD_MODID_GNU_BUILD_ID = 1,
                 CPD_MODID_PDB70 = 2 /* 16-byte GUID then u32 age */ };

/* Node keys. A key below 2^56 is a code address (the function's entry on
** GCC/Clang hooks, a return address inside the function on MSVC /Gh). Keys
** with the top byte 0xFF are synthetic nodes. */
#define CPD_KEY_SPECIAL    UINT64_C(0xFF00000000000000)
#define CPD_KEY_ROOT       UINT64_C(0xFFFFFFFFFFFFFFFF)  /* node 0 of each thread */
#define CPD_KEY_OVERFLOW   UINT64_C(0xFF01000000000000)  /* paths past the node cap */
#define CPD_KEY_SINK       UINT64_C(0xFF02000000000000)  /* calls nested in overflow */
#define CPD_KEY_ZONE       UINT64_C(0xFF10000000000000)  /* | string index */
#define CPD_KEY_SYMBOL     UINT64_C(0xFF20000000000000)  /* merged dumps only:
                                   | (module index + 1) << 32 | string index */
#define CPD_KEY_API        UINT64_C(0xFF30000000000000)  /* | API id (CPD_SEC_API) */
#define CPD_KEY_IS_API(k)  (((k) & UINT64_C(0xFFFF000000000000)) == CPD_KEY_API)
#define CPD_KEY_IS_SYMBOL(k) (((k) & UINT64_C(0xFFFF000000000000)) == CPD_KEY_SYMBOL)
#define CPD_KEY_IS_SPECIAL(k) (((k) & CPD_KEY_SPECIAL) == CPD_KEY_SPECIAL)
#define CPD_KEY_IS_ZONE(k) (((k) & UINT64_C(0xFFFF000000000000)) == CPD_KEY_ZONE)
#define CPD_NO_PARENT      UINT32_C(0xFFFFFFFF)

/* Node flags. */
#define CPD_NODE_OPEN      1u     /* some calls were still running at dump time */
#define CPD_NODE_THROTTLED 2u     /* no longer timed: see the THROTTLE section */

/* Little-endian accessors; correct on any host byte order. */
static inline void cpd_put16(unsigned char *p, uint16_t v)
{ p[0] = (unsigned char)v; p[1] = (unsigned char)(v >> 8); }
static inline void cpd_put32(unsigned char *p, uint32_t v)
{ for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i)); }
static inline void cpd_put64(unsigned char *p, uint64_t v)
{ for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> (8 * i)); }
static inline uint16_t cpd_get16(const unsigned char *p)
{ return (uint16_t)(p[0] | (p[1] << 8)); }
static inline uint32_t cpd_get32(const unsigned char *p)
{ uint32_t v = 0; for (int i = 3; i >= 0; i--) v = (v << 8) | p[i]; return v; }
static inline uint64_t cpd_get64(const unsigned char *p)
{ uint64_t v = 0; for (int i = 7; i >= 0; i--) v = (v << 8) | p[i]; return v; }

#endif /* CAPPROF_DUMPFMT_H */
