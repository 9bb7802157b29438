/*
** capprof.h -- public control API of the capprof runtime.
**
** A program compiled with -finstrument-functions (GCC/Clang) or /Gh /GH (MSVC)
** and linked with libcapprof is profiled without calling anything here. These
** functions let it steer the profiler: pause and resume, reset, write a dump
** now, choose where dumps go, and name threads. Every function is thread-safe,
** never aborts, and returns 0 or a negative CAPPROF_E* code.
*/
#ifndef CAPPROF_CAPPROF_H
#define CAPPROF_CAPPROF_H

#include <stddef.h>

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
  X(ELIMIT,  -11,  "size limit exceeded")

enum capprof_error {
#define CAPPROF_ERR_ENUM_(name, value, text) CAPPROF_##name = value,
  CAPPROF_ERRNO_MAP(CAPPROF_ERR_ENUM_)
#undef CAPPROF_ERR_ENUM_
  CAPPROF_ERR_LAST_ = -12
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

/* Name the calling thread in the dump (at most 63 bytes are kept). */
CAPPROF_API int capprof_set_thread_name(const char *name);

#ifdef __cplusplus
}
#endif

#endif /* CAPPROF_CAPPROF_H */
