/*
** os.h -- the OS layer: what src/posix/os.c and src/win/os.c implement once
** each, with the same signatures (memory, the thread state pointer, ids and
** names, clocks, locks, modules, files). It calls nothing above it: what it
** must call back (thread exit, fork, process exit) it is given.
*/
#ifndef CAPPROF_OS_H
#define CAPPROF_OS_H

#include <stddef.h>
#include <stdint.h>

#include "platform.h"
#include "dumpfmt.h"
#include "capprof/capprof.h"

struct cp_thread;

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

/* What the OS layer calls back, given by the core at os_process_init: the
** OS layer never names the runtime above it. thread_exit runs on a
** registered thread as it ends (then, POSIX, thread_retire); the fork
** handlers around fork (POSIX); process_exit where the process ends
** without running destructors (POSIX _exit, _Exit). */
struct os_callbacks {
  void (*thread_exit)(struct cp_thread *t);
  void (*thread_retire)(struct cp_thread *t);
  void (*fork_prepare)(void);
  void (*fork_parent)(void);
  void (*fork_child)(void);
  void (*process_exit)(void);
  /* The calling thread is about to enter a mode where the runtime's next
  ** system call would kill the process (POSIX: SECCOMP_MODE_STRICT): its
  ** hooks record nothing from now on. */
  void (*thread_aside)(void);
};
/* The process as the core keeps it (cp_g.proc): what the OS layer is told
** (disabled, secure) and what it fills in (exe, progname, cmdline). */
struct os_process {
  int disabled;               /* never recording: the dlclose interposer only passes on */
  int secure;                 /* privileged: files are made for their owner only */
  char exe[1024];             /* executable path */
  char progname[256];         /* base name of the executable */
  char *cmdline;              /* NUL-separated arguments, os-allocated */
  size_t cmdline_len;
};
/* Fill p's exe, progname and cmdline, keep p (read from then on, never
** written by the core again), register the thread-exit, fork and at-exit
** handlers cb. Called once from runtime_init, under os_lock. */
void os_process_init(const struct os_callbacks *cb, struct os_process *p) CP_HIDDEN;

/* A variable of the environment, NULL if unset or if the process is
** privileged (os_is_privileged). */
const char *os_getenv(const char *name) CP_HIDDEN;
/* The current directory into buf (n bytes, UTF-8 on Windows): 0, or -1
** when it does not fit or cannot be read. */
int os_cwd(char *buf, size_t n) CP_HIDDEN;
/* 1 when the process runs with more privilege than its caller (setuid,
** setgid, file capabilities: AT_SECURE), else 0. */
int os_is_privileged(void) CP_HIDDEN;

/* API interception back end (src/intercept/plt_posix.c, src/intercept/iat_win.c): see above.
** os_on_alt_stack: sp lies on a signal stack the thread switched to. */
int os_intercept_start(void) CP_HIDDEN;
int os_on_alt_stack(uintptr_t sp) CP_HIDDEN;
/* Variables of the environment whose name starts with prefix: fn gets each
** name (len bytes, not NUL-terminated). The OS layer reads no setting; the
** settings reader (src/core/settings.c) uses this to warn about unknown ones. */
void os_env_names(const char *prefix, void (*fn)(const char *name, size_t len, void *arg),
                  void *arg) CP_HIDDEN;
/* Append the dump's full path, and a newline, to the file log names (set
** by 'capprof run', which names the dumps at the end); nothing when log is
** NULL or empty. */
void os_run_log_to(const char *log, const char *path) CP_HIDDEN;

/* Thread cancellation (POSIX) off around the system calls a hook's slow
** path makes, none of which may be where the host's thread is cancelled
** (issue 33 case 8): os_cancel_off returns the old state, which
** os_cancel_restore puts back (a cancel that came meanwhile stays pending,
** for the host's next cancellation point). Nothing on Windows. */
int os_cancel_off(void) CP_HIDDEN;
void os_cancel_restore(int old) CP_HIDDEN;

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

#endif /* CAPPROF_OS_H */
