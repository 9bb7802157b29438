/*
** runtime.c -- process-wide state of the runtime: start-up and calibration,
** the registry of thread trees, the public control API, thread exit, fork,
** and the final dump at process exit. Platform details go through os_*.
*/
#include <stdlib.h>
#include <string.h>

#include "../core/core.h"
#include "settings.h"

struct cp_global cp_g CP_ALIGNED(64);

/* Installed as the thread state while a thread's state is being made, and for
** good when recording is impossible: its gate never matches, so the hooks go
** to runtime_sync, which tells them to do nothing. */
/* The stand-in state. Its top frame is there for the counting stubs, which
** read the top node of any state (asm/fentry_x86_64.S): its slots are never
** set, so they always take their slow path, which records nothing here. */
static struct cp_frame busy_frame;
static struct cp_thread busy_thread = { .top = &busy_frame, .gate = 0xFFFFFFFFu,
                                        .ring_head = &busy_thread.ring_seen };

#define DEFAULT_PATTERN  "%n.%p.capprof"

const char *capprof_strerror(int err)
{
  switch (err) {
#define CAPPROF_ERR_TEXT_(name, value, text) case value: return text;
    CAPPROF_ERRNO_MAP(CAPPROF_ERR_TEXT_)
#undef CAPPROF_ERR_TEXT_
  }
  return "unknown error";
}

static void set_pattern(const char *pattern)
{
  const char *p = pattern && *pattern ? pattern : DEFAULT_PATTERN;
  size_t n = strlen(p);
  if (n >= sizeof cp_g.output) n = sizeof cp_g.output - 1;
  memcpy(cp_g.output, p, n);
  cp_g.output[n] = '\0';
}

/* The output directory; a relative one is taken from the current directory
** now (start-up, or the call of capprof_set_output_dir), not at the dump:
** the program may chdir first (ninja -C DIR, make -C DIR). */
static int set_dir(const char *dir)
{
  size_t n = dir ? strlen(dir) : 0, at = 0;
  char *out = cp_g.output_dir;
  int absolute = n && (dir[0] == '/' || dir[0] == '\\' || (dir[0] && dir[1] == ':'));
  if (n >= sizeof cp_g.output_dir) return CAPPROF_EINVAL;
  if (n && !absolute && os_cwd(out, sizeof cp_g.output_dir - 1) == 0) {
    at = strlen(out);
    if (at && out[at - 1] != '/' && out[at - 1] != '\\') out[at++] = '/';
  }
  if (at + n >= sizeof cp_g.output_dir) at = 0;   /* too long with it: as given */
  if (n) memcpy(out + at, dir, n);
  out[at + n] = '\0';
  return 0;
}

/* Pair a clock reading with the monotonic clock as tightly as possible. */
static void mark_start(void)
{
  uint64_t best = UINT64_MAX;
  for (int i = 0; i < 5; i++) {
    uint64_t a = cp_now(), m = os_monotonic_ns(), b = cp_now();
    if (b - a < best) {
      best = b - a;
      cp_g.start_ticks = a + (b - a) / 2;
      cp_g.start_mono = m;
    }
  }
  cp_g.start_ns = os_realtime_ns();
}

/* The calling thread steps aside (os.h, thread_aside): its hooks find the
** busy state, record nothing and make no system call; what it recorded so
** far stays in its tree, which the dump writes as a live thread's. */
static void thread_aside(void)
{
  os_set_thread(&busy_thread);
}

/* What the OS layer calls back (os.h): it never names the runtime. */
static const struct os_callbacks os_callbacks = {
  runtime_thread_exit, runtime_thread_retire, runtime_fork_prepare,
  runtime_fork_parent, runtime_fork_child, runtime_atexit, thread_aside,
};

void runtime_init(void)
{
  os_errsave e = os_save_errors();
  os_lock();
  if (cp_g.initialized) {
    os_unlock();
    os_restore_errors(e);
    return;
  }
  cp_g.secure = os_is_privileged();
  settings_load(os_getenv, cp_g.secure);    /* none in a privileged process */
  cp_g.disabled = settings_bool(SET_DISABLE);
  cp_g.node_cap = settings_u32(SET_MAX_NODES);
  for (const struct cp_feature *const *p = cp_features; *p; p++)
    if ((*p)->init) (*p)->init();          /* their settings */
  cp_g.keep_threads = settings_u32(SET_KEEP_THREADS);
  cp_g.ended_tail = &cp_g.ended;
  const char *pat = settings_str(SET_OUTPUT), *dir = settings_str(SET_OUTPUT_DIR);
  static char too_long[200];
  if (pat && strlen(pat) >= sizeof cp_g.output) {
    cp_g.pending_report = settings_message(too_long, sizeof too_long, SET_OUTPUT,
                                           " is longer than 1023 bytes: ignored, "
                                           "dumps go to the default " DEFAULT_PATTERN);
    pat = NULL;
  }
  set_pattern(pat);
  if (set_dir(dir) != 0)
    cp_g.pending_report = settings_message(too_long, sizeof too_long, SET_OUTPUT_DIR,
                                           " is longer than 1023 bytes: ignored, "
                                           "dumps go to the current directory");
  cp_g.use_tsc = clock_select(settings_str(SET_CLOCK));
  cp_g.clock_source = cp_g.use_tsc ? CPD_CLOCK_TSC : os_ticks_source();
  cp_g.proc.disabled = cp_g.disabled;
  cp_g.proc.secure = cp_g.secure;
  os_process_init(&os_callbacks, &cp_g.proc);
  mark_start();
  if (cp_g.disabled) cp_g.gate = CP_GATE_PAUSED;
  cp_g.initialized = 1;
  os_unlock();
  settings_report(cp_g.secure);            /* unknown names, CAPPROF_HELP */
  if (!cp_g.disabled) {
    clock_calibrate_timer();
    clock_calibrate_probe(0);
    for (const struct cp_feature *const *p = cp_features; *p; p++)
      if ((*p)->start) (*p)->start();      /* interception, dumps on demand, sampling */
    for (const struct cp_feature *const *p = cp_features; *p; p++)
      if ((*p)->settle) (*p)->settle();    /* throttling's defaults */
  }
  os_restore_errors(e);
}

void runtime_report_pending(void)
{
  const char *msg = cp_g.pending_report;
  cp_g.pending_report = NULL;
  if (msg) os_report(msg);
}

static void register_thread(struct cp_thread *t)      /* os_lock */
{
  t->gate = cp_g.gate & ~CP_GATE_PAUSED;
  t->generation = t->gate >> 1;
  if (!cp_g.threads_tail) cp_g.threads_tail = &cp_g.threads;
  *cp_g.threads_tail = t;
  cp_g.threads_tail = &t->next;
}

/* A state from the pool of ended threads' (no system call), else a new
** one. The thread's name is read when it ends or at a dump. */
CP_PROBE_CODE struct cp_thread *runtime_thread_slow(void)
{
  struct cp_thread *t = os_get_thread();
  if (t) return t;                       /* set meanwhile */
  os_set_thread(&busy_thread);           /* hooks during set-up do nothing */
  os_errsave e = os_save_errors();       /* (it may be an intercepted call) */
  int cancel = os_cancel_off();          /* its system calls: not where the thread ends */
  if (!cp_g.initialized) runtime_init();
  t = NULL;
  if (!cp_g.disabled && !cp_g.finished) {
    uint64_t tid = os_thread_id(), start = os_realtime_ns();
    os_lock();
    if ((t = ended_pool_take()) != NULL) {
      t->tid = tid;
      t->start_ns = start;
      register_thread(t);
    }
    os_unlock();
    if (!t && (t = calltree_new(cp_g.node_cap)) != NULL) {
      t->tid = tid;
      t->start_ns = start;
      os_lock();
      register_thread(t);
      os_unlock();
    }
  }
  if (t) {
    os_thread_register(t);
    os_set_thread(t);
    for (const struct cp_feature *const *p = cp_features; *p; p++)
      if ((*p)->thread_begin) (*p)->thread_begin();  /* sampling events of a later thread */
  }
  os_cancel_restore(cancel);
  os_restore_errors(e);
  return t ? t : &busy_thread;
}

int runtime_thread_real(const struct cp_thread *t)
{
  return t && t != &busy_thread;
}

CP_PROBE_CODE int runtime_sync(struct cp_thread *t)
{
  uint32_t g = cp_g.gate;
  if (t == &busy_thread || t->gate == 0xFFFFFFFFu) return 1;
  if (g & CP_GATE_PAUSED) return 1;
  if ((g >> 1) != t->generation) {       /* capprof_reset happened */
    t->generation = g >> 1;
    calltree_rebase(t, cp_tnow(t));
  }
  t->gate = g;
  return 0;
}

void runtime_thread_exit(struct cp_thread *t)
{
  if (!t || t == &busy_thread) return;
  for (const struct cp_feature *const *p = cp_features; *p; p++)
    if ((*p)->thread_exit) (*p)->thread_exit(t);     /* its last samples, then no ring */
  t->end_ticks = cp_tnow(t);
  /* The OS name may have been set after the tree was made (often by the
  ** thread's first intercepted call, pthread_setname_np itself). */
  if (!t->name[0] || !t->name_fixed) os_thread_name(t->tid, t->name, sizeof t->name);
  t->end_ns = os_realtime_ns();
}

/* Hooks of this thread do nothing from here on (the stand-in state). */
void runtime_thread_retire(struct cp_thread *t)
{
  if (!t || t == &busy_thread) return;
  os_errsave e = os_save_errors();
  os_set_thread(&busy_thread);
  os_lock();
  ended_retire(t);
  /* Packed: the last record, with t's tid and node count (a merge adds none,
  ** or a group record). */
  const struct cp_ended *last = cp_g.ended;
  while (last && last->next) last = last->next;
  if (!(last && !last->group && last->tid == t->tid && last->nnodes == t->nnodes)) last = NULL;
  for (const struct cp_feature *const *p = cp_features; *p; p++)
    if ((*p)->thread_retired) (*p)->thread_retired(t, last);
  int pooled = ended_pool_put(t);
  os_unlock();
  if (!pooled) calltree_free(t);
  os_restore_errors(e);
}

/* ---- fork -------------------------------------------------------------- */

void runtime_fork_prepare(void)
{
  os_lock();
  for (const struct cp_feature *const *p = cp_features; *p; p++)
    if ((*p)->fork_prepare) (*p)->fork_prepare();
}

void runtime_fork_parent(void)
{
  const struct cp_feature *const *p = cp_features;
  while (*p) p++;
  while (p-- > cp_features)
    if ((*p)->fork_parent) (*p)->fork_parent();
  os_unlock();
}

/* In the child only the forking thread exists: drop every other tree, and
** start this one afresh, keeping the path of the calls still open. */
void runtime_fork_child(void)
{
  struct cp_thread *self = os_get_thread(), *t = cp_g.threads, *next;
  cp_g.threads = NULL;
  cp_g.threads_tail = &cp_g.threads;
  for (; t; t = next) {
    next = t->next;
    if (t == self) {
      t->next = NULL;
      cp_g.threads = t;
      cp_g.threads_tail = &t->next;
    } else {
      calltree_free(t);
    }
  }
  ended_reset();
  for (const struct cp_feature *const *p = cp_features; *p; p++)
    if ((*p)->threads_forked) (*p)->threads_forked(self && self != &busy_thread ? self : NULL);
  cp_g.start_ns = os_realtime_ns();
  if (self && self != &busy_thread) {
    self->tid = os_thread_id();
    self->start_ns = cp_g.start_ns;
    self->lost_frames = 0;
    calltree_rebase(self, cp_tnow(self));
  }
  for (const struct cp_feature *const *p = cp_features; *p; p++)
    if ((*p)->fork_child) (*p)->fork_child();
  os_unlock();                 /* runtime_fork_prepare took it in this thread */
}

/* ---- control API ------------------------------------------------------- */

/* Write a dump through the dump writer's registration (src/dump); under
** os_lock. 0 or a CAPPROF_E* code; *failure says which step failed. */
static int write_dump(const char *path, int explicit_path, char *out, size_t outsize,
                      const char **failure)
{
  *failure = "";
  for (const struct cp_feature *const *p = cp_features; *p; p++)
    if ((*p)->write_dump) return (*p)->write_dump(path, explicit_path, out, outsize, failure);
  return CAPPROF_ENOTSUP;
}

static int ensure_init(void)
{
  if (!cp_g.initialized) runtime_init();
  return cp_g.disabled ? CAPPROF_EDISABLED : 0;
}

int capprof_pause(void)
{
  int rc = ensure_init();
  if (rc) return rc;
  os_lock();
  if (!cp_g.finished) cp_g.gate |= CP_GATE_PAUSED;
  os_unlock();
  return 0;
}

int capprof_resume(void)
{
  int rc = ensure_init();
  if (rc) return rc;
  os_lock();
  if (!cp_g.finished) cp_g.gate &= ~CP_GATE_PAUSED;
  os_unlock();
  return 0;
}

int capprof_is_active(void)
{
  if (!cp_g.initialized) runtime_init();
  return !cp_g.disabled && !cp_g.finished && !(cp_g.gate & CP_GATE_PAUSED);
}

/* Live threads rebuild their trees at their next hook (runtime_sync). What
** is kept of retired threads is dropped; states of threads that ended but
** are not retired yet are left alone (a late hook may still touch them) and
** omitted from dumps: their generation is stale. */
int capprof_reset(void)
{
  int rc = ensure_init();
  if (rc) return rc;
  os_lock();
  cp_g.gate += 2;
  ended_reset();
  for (const struct cp_feature *const *p = cp_features; *p; p++)
    if ((*p)->reset) (*p)->reset();
  os_unlock();
  /* The caller's own tree is rebuilt at once, so that what it does next
  ** counts even if it makes no further instrumented call first. */
  struct cp_thread *self = os_get_thread();
  if (self && self != &busy_thread && self->gate != 0xFFFFFFFFu) runtime_sync(self);
  return 0;
}

int capprof_dump(const char *path, char *out, size_t outsize)
{
  int rc = ensure_init();
  if (rc) return rc;
  os_errsave e = os_save_errors();
  os_lock();
  clock_calibrate_probe(1);                /* keeps the pair with the smaller outer */
  const char *failure;
  rc = write_dump(path ? path : cp_g.output, path != NULL, out, outsize, &failure);
  os_unlock();
  os_restore_errors(e);
  return rc;
}

int capprof_set_output(const char *pattern)
{
  if (pattern && strlen(pattern) >= sizeof cp_g.output) return CAPPROF_EINVAL;
  if (!cp_g.initialized) runtime_init();
  os_lock();
  set_pattern(pattern);
  cp_g.output_from_api = 1;
  os_unlock();
  return 0;
}

int capprof_set_output_dir(const char *dir)
{
  if (dir && strlen(dir) >= sizeof cp_g.output_dir) return CAPPROF_EINVAL;
  if (!cp_g.initialized) runtime_init();
  os_lock();
  int rc = set_dir(dir);
  cp_g.output_from_api = 1;
  os_unlock();
  return rc;
}

int capprof_set_thread_name(const char *name)
{
  if (!name) return CAPPROF_EINVAL;
  struct cp_thread *t = os_get_thread();
  if (!t) t = runtime_thread_slow();
  if (t == &busy_thread) return cp_g.disabled ? CAPPROF_EDISABLED : CAPPROF_ENOMEM;
  size_t n = strlen(name);
  if (n >= sizeof t->name) n = sizeof t->name - 1;
  memcpy(t->name, name, n);
  t->name[n] = '\0';
  t->name_fixed = 1;
  return 0;
}

/* Process exit: stop every hook for good, then write the final dump. A
** failure is reported once on stderr; the program's exit is not disturbed. */
void runtime_atexit(void)
{
  if (!cp_g.initialized || cp_g.disabled) return;
  os_errsave e = os_save_errors();
  for (const struct cp_feature *const *p = cp_features; *p; p++)
    if ((*p)->finish) (*p)->finish();      /* no sample lands during the dump */
  runtime_report_pending();
  /* A privileged process writes a dump only where the program asked. */
  if (cp_g.secure && !cp_g.output_from_api) {
    cp_g.finished = 1;
    cp_g.gate |= CP_GATE_PAUSED;
    os_restore_errors(e);
    return;
  }
  if (os_lock_at_exit() != 0) {
    os_report("capprof: no dump at exit: the runtime lock is held "
              "(exit() from a fault inside the runtime, or a dump that does not end)");
    os_restore_errors(e);
    return;
  }
  if (!cp_g.finished) {
    cp_g.finished = 1;
    cp_g.gate |= CP_GATE_PAUSED;
    char path[1100];
    clock_calibrate_probe(1);              /* keeps the pair with the smaller outer */
    const char *failure;
    int rc = write_dump(cp_g.output, 0, path, sizeof path, &failure);
    if (rc != 0) {
      /* capprof: cannot write dump PATH: STEP FILE: REASON */
      char msg[2700] = "capprof: cannot write dump ";
      strncat(msg, path, 1100);
      strcat(msg, ": ");
      if (failure[0]) {
        strncat(msg, failure, 1400);
        strcat(msg, ": ");
      }
      strcat(msg, capprof_strerror(rc));
      os_report(msg);
    } else {
      os_run_log_to(settings_str(SET_RUN_LOG), path);  /* capprof run names the dumps */
    }
    if (rc == 0 && settings_bool(SET_VERBOSE)) {
      char msg[1200] = "capprof: wrote ";
      strncat(msg, path, sizeof msg - 20);
      os_report(msg);
    }
  }
  os_unlock();
  os_restore_errors(e);
}
