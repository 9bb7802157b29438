/*
** capprof.h -- public API of the capprof runtime: control functions and
** manual zones.
**
** A program compiled with -finstrument-functions (GCC/Clang) or /Gh /GH (MSVC)
** and linked with libcapprof is profiled without calling anything here. These
** functions let it steer the profiler: pause and resume, reset, write a dump
** now, choose where dumps go, and name threads. Every function is thread-safe,
** never aborts, and returns 0 or a negative CAPPROF_E* code.
**
** Zones (CAPPROF_ZONE_BEGIN/END, CAPPROF_ZONE, CAPPROF_FUNCTION, and the C++
** capprof::Zone) time named regions; they are nodes of the same per-thread
** call tree as hooked functions. The macros expand to nothing unless
** CAPPROF_ENABLED is defined; see docs/zones.md.
*/
#ifndef CAPPROF_CAPPROF_H
#define CAPPROF_CAPPROF_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32) && defined(CAPPROF_SHARED)
#  if defined(CAPPROF_BUILDING)
#    define CAPPROF_API __declspec(dllexport)
#  else
#    define CAPPROF_API __declspec(dllimport)
#  endif
#elif defined(__GNUC__) && defined(CAPPROF_BUILDING)
#  define CAPPROF_API __attribute__((visibility("default")))
#else
#  define CAPPROF_API
#endif

#define CAPPROF_VERSION_MAJOR 0
#define CAPPROF_VERSION_MINOR 1

/* Error codes: one table, shared by the runtime, the dump reader and the tool. */
#define CAPPROF_ERRNO_MAP(X)                                              \
  X(OK,        0,  "success")                                             \
  X(EINVAL,   -1,  "invalid argument")                                    \
  X(ENOMEM,   -2,  "out of memory")                                       \
  X(EIO,      -3,  "input/output error")                                  \
  X(EEXIST,   -4,  "file exists and will not be overwritten")             \
  X(EDISABLED,-5,  "profiling is disabled")                               \
  X(EFORMAT,  -6,  "not a capprof dump (bad magic)")                      \
  X(EVERSION, -7,  "unsupported dump version")                            \
  X(ETRUNC,   -8,  "dump is truncated")                                   \
  X(ECORRUPT, -9,  "dump is corrupt")                                     \
  X(ENOENT,  -10,  "no such file or directory")                           \
  X(ELIMIT,  -11,  "size limit exceeded")                                 \
  X(EACCES,  -12,  "permission denied")                                   \
  X(ENOSPC,  -13,  "no space left on device")                             \
  X(EBUSY,   -14,  "the runtime lock is held")                            \
  X(ENOTSUP, -15,  "not supported on this machine")                       \
  X(EMFILE,  -16,  "too many open files")

enum capprof_error {
#define CAPPROF_ERR_ENUM_(name, value, text) CAPPROF_##name = value,
  CAPPROF_ERRNO_MAP(CAPPROF_ERR_ENUM_)
#undef CAPPROF_ERR_ENUM_
  CAPPROF_ERR_LAST_ = -17
};

/* Text for a CAPPROF_E* code; never NULL. */
CAPPROF_API const char *capprof_strerror(int err);

/* Stop recording in every thread. Calls made while paused are not counted;
** the call tree stays consistent when recording resumes. */
CAPPROF_API int capprof_pause(void);
CAPPROF_API int capprof_resume(void);

/* 1 when calls are being recorded (not disabled, not paused), else 0. */
CAPPROF_API int capprof_is_active(void);

/* Discard everything recorded so far, in every thread. Calls still open go on
** being timed from the moment of the reset. */
CAPPROF_API int capprof_reset(void);

/* Write a dump now. path == NULL uses the output pattern. An existing file is
** never overwritten: CAPPROF_EEXIST is returned for an explicit path, and a
** numbered name is chosen for a pattern. The written path is copied to out
** (if out != NULL and outsize > 0). Recording goes on afterwards. */
CAPPROF_API int capprof_dump(const char *path, char *out, size_t outsize);

/* Set the dump path pattern, as CAPPROF_OUTPUT does: %p pid, %n program
** name, %t start time (YYYYmmdd-HHMMSS), %% a percent sign. A pattern that
** ends in '/' or names an existing directory puts the default name
** "%n.%p.capprof" there. NULL restores the default. */
CAPPROF_API int capprof_set_output(const char *pattern);

/* Set the directory dumps are written to, as CAPPROF_OUTPUT_DIR does. A
** relative output pattern (see capprof_set_output) is placed in it; an
** absolute one is not changed. %p %n %t expand here too. The directory must
** exist: if it cannot be written, the final dump fails and the runtime says
** so once on stderr; the program is not disturbed. NULL or "" unsets it. */
CAPPROF_API int capprof_set_output_dir(const char *dir);

/* Name the calling thread in the dump (at most 63 bytes are kept). */
CAPPROF_API int capprof_set_thread_name(const char *name);

/* ---- zones ---------------------------------------------------------------
** Use the macros below rather than these functions: the macros compile away
** without CAPPROF_ENABLED. A zone belongs to the function that begins it and
** nests inside it, below its callers and above its callees. Names are copied
** (dynamic strings are fine); at most 1023 bytes are kept. Zones are not
** async-signal-safe. */

/* Open a zone in the calling thread. Returns a token for
** capprof_zone_end_token, 0 when nothing was recorded (paused, disabled,
** out of memory). The runtime starts on first use: no hooks are needed. */
CAPPROF_API uint64_t capprof_zone_begin(const char *name);
/* Close the innermost open zone of the calling function, or, with a name,
** the innermost open zone of that name; zones left open inside it are
** closed too and counted as mismatches. NULL or "" means the innermost.
** Returns 0, or CAPPROF_EINVAL when no such zone is open (counted as an
** END without BEGIN), or CAPPROF_EDISABLED. */
CAPPROF_API int capprof_zone_end(const char *name);
/* Close the zone a capprof_zone_begin returned; zones left open inside it
** are closed too (and counted). A token of 0 does nothing. Used by the
** scoped macros and capprof::Zone. */
CAPPROF_API void capprof_zone_end_token(uint64_t token);


/* ---- profile objects (sampling) -----------------------------------------
** A profile object counts samples of the program's own execution in buckets
** over a range of addresses, as NT's executive profile objects do: describe
** it, create it, start and stop it any number of times, read its buckets,
** close it. Samples come from a profile source every interval: a time
** source (CPU time of each thread, interval in time units) or a processor
** event counter (interval in events). Every thread of the process is
** sampled, including threads started later. Every object's buckets also go
** into the dump. See docs/runtime.md, "Sampling". Not async-signal-safe. */

enum capprof_range_kind {
  CAPPROF_RANGE_PROCESS = 0,  /* every address of the process */
  CAPPROF_RANGE_MODULE  = 1,  /* the module (executable or library) holding .base */
  CAPPROF_RANGE_ADDRESS = 2   /* [base, base + size) */
};

struct capprof_profile_desc {
  int range;                  /* CAPPROF_RANGE_* */
  const void *base;           /* MODULE: any address in it (NULL: the executable);
                              ** ADDRESS: first byte */
  size_t size;                /* ADDRESS: bytes */
  size_t bucket_size;         /* bytes per bucket, a power of two >= 4 (0: 16) */
  const char *source;         /* "time" (NULL), "task-clock", "cpu-clock",
                              ** "cpu-timer", "cycles", "instructions",
                              ** "branches", "branch-misses",
                              ** "cache-references", "cache-misses" */
  const char *interval;       /* "100us", "1ms", "2s" for time sources; a
                              ** count of events ("100000", "1M") for
                              ** counters; NULL: 1ms or 1000000 events */
  const char *name;           /* label in the dump (NULL: "profile N") */
};

typedef struct capprof_profile capprof_profile;

struct capprof_profile_info {
  uintptr_t base;             /* first address of the range */
  uintptr_t end;              /* one past the last */
  size_t bucket_size;
  size_t buckets;             /* number of buckets */
  int running;                /* 1 between start and stop */
  int interval_is_time;       /* 1: interval in ns; 0: in events */
  uint64_t interval;
  uint64_t samples;           /* taken while running, in range or not */
  uint64_t hits;              /* of those, in the range (sum of the buckets) */
  char source[32];            /* source name as given ("time" resolved) */
  char method[96];            /* how it samples, e.g. "perf_event_open task-clock" */
};

/* Create a stopped profile object. CAPPROF_EINVAL for a bad description,
** CAPPROF_ENOTSUP when the source cannot be used on this machine (then
** capprof_sample_sources says which can), CAPPROF_ENOMEM. */
CAPPROF_API int capprof_profile_create(const struct capprof_profile_desc *desc,
                                       capprof_profile **out);
/* Start and stop counting; any number of times. Counts accumulate. */
CAPPROF_API int capprof_profile_start(capprof_profile *p);
CAPPROF_API int capprof_profile_stop(capprof_profile *p);
CAPPROF_API int capprof_profile_query(const capprof_profile *p, struct capprof_profile_info *info);
/* Change the interval ("250us", "50000"), also while running. */
CAPPROF_API int capprof_profile_set_interval(capprof_profile *p, const char *interval);
/* Copy up to n bucket counts into counts; *total (if not NULL) gets the
** number of buckets. Bucket i counts samples in [base + i*size, +size). */
CAPPROF_API int capprof_profile_buckets(const capprof_profile *p, uint32_t *counts, size_t n,
                                        size_t *total);
/* Stop and close. The object's buckets stay in the dump. */
CAPPROF_API int capprof_profile_close(capprof_profile *p);
/* The sources usable here, separated by spaces, into buf; and the reason
** the others are not (one line) into why, if why != NULL. */
CAPPROF_API int capprof_sample_sources(char *buf, size_t n, char *why, size_t whyn);

#ifdef __cplusplus
}
#endif

/* ---- zone macros ------------------------------------------------------- */

#define CAPPROF_CAT2_(a, b) a##b
#define CAPPROF_CAT_(a, b) CAPPROF_CAT2_(a, b)
#if defined(__COUNTER__)
#  define CAPPROF_UNIQUE_ __COUNTER__
#else
#  define CAPPROF_UNIQUE_ __LINE__
#endif

#if defined(CAPPROF_ENABLED)

#  if defined(__GNUC__) || defined(__clang__)
#    define CAPPROF_ZONE_INLINE_ static inline \
       __attribute__((always_inline, no_instrument_function, unused))
#  elif defined(_MSC_VER)
#    define CAPPROF_ZONE_INLINE_ static __forceinline
#  else
#    define CAPPROF_ZONE_INLINE_ static inline
#  endif
#  if defined(__GNUC__) || defined(__clang__)
#    define CAPPROF_ZONE_INLINE_CXX_ __attribute__((always_inline, no_instrument_function))
#  elif defined(_MSC_VER)
#    define CAPPROF_ZONE_INLINE_CXX_ __forceinline
#  else
#    define CAPPROF_ZONE_INLINE_CXX_
#  endif

/* The zone functions find their caller's frame by their own frame address:
** a call in tail position, compiled as a jump, would run one frame too high.
** The empty volatile asm after the call keeps it a real call. */
#  if defined(__GNUC__) || defined(__clang__)
#    define CAPPROF_NO_TAILCALL_() __asm__ __volatile__("")
#  else
#    define CAPPROF_NO_TAILCALL_() ((void)0)
#  endif

/* CAPPROF_ZONE_BEGIN("name") ... CAPPROF_ZONE_END(): a zone closed by hand.
** CAPPROF_ZONE_END("name") (a string literal) also checks which zone it
** closes. Both are statements. */
#  define CAPPROF_ZONE_BEGIN(name) \
     do { (void)capprof_zone_begin(name); CAPPROF_NO_TAILCALL_(); } while (0)
#  define CAPPROF_ZONE_END(...) \
     do { (void)capprof_zone_end("" __VA_ARGS__); CAPPROF_NO_TAILCALL_(); } while (0)

#  if defined(__cplusplus)
namespace capprof {
/* RAII zone: open for the lifetime of the object (also when an exception
** leaves the scope). Header-only; forced inline so that the zone belongs to
** the function that declares it. */
class Zone {
public:
  CAPPROF_ZONE_INLINE_CXX_ explicit Zone(const char *name)
    : token_(capprof_zone_begin(name)) {}
  CAPPROF_ZONE_INLINE_CXX_ ~Zone() { capprof_zone_end_token(token_); }
  Zone(const Zone &) = delete;
  Zone &operator=(const Zone &) = delete;
private:
  uint64_t token_;
};
} /* namespace capprof */
#    define CAPPROF_ZONE(name) \
       ::capprof::Zone CAPPROF_CAT_(capprof_zone_, CAPPROF_UNIQUE_)(name)
#  elif defined(__GNUC__) || defined(__clang__)
CAPPROF_ZONE_INLINE_ void capprof_zone_cleanup_(uint64_t *token)
{
  capprof_zone_end_token(*token);
}
/* CAPPROF_ZONE("name"): a zone that ends with the enclosing block. */
#    define CAPPROF_ZONE(name) \
       __attribute__((cleanup(capprof_zone_cleanup_), unused)) uint64_t \
       CAPPROF_CAT_(capprof_zone_, CAPPROF_UNIQUE_) = capprof_zone_begin(name)
#  else
/* C without cleanup attributes (MSVC's C): a scoped zone cannot end by
** itself, so using one is a compile error naming the fix. */
#    define CAPPROF_ZONE(name) \
       CAPPROF_ZONE_needs_GCC_or_Clang_in_C__use_CAPPROF_ZONE_BEGIN_and_END(name)
#  endif
/* CAPPROF_FUNCTION(): a scoped zone named after the enclosing function. */
#  define CAPPROF_FUNCTION() CAPPROF_ZONE(__func__)

#else /* !CAPPROF_ENABLED: every zone macro compiles to nothing */

#  define CAPPROF_ZONE_BEGIN(name) ((void)sizeof(name))
#  define CAPPROF_ZONE_END(...) ((void)0)
#  define CAPPROF_ZONE(name) ((void)sizeof(name))
#  define CAPPROF_FUNCTION() ((void)0)
#  if defined(__cplusplus)
namespace capprof {
/* Without CAPPROF_ENABLED a zone object does nothing and references nothing. */
class Zone {
public:
  explicit Zone(const char *) {}
  Zone(const Zone &) = delete;
  Zone &operator=(const Zone &) = delete;
};
} /* namespace capprof */
#  endif

#endif /* CAPPROF_ENABLED */

#endif /* CAPPROF_CAPPROF_H */
