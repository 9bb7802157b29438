/*
** perf.c (POSIX) -- the sampler back end on Linux: one perf_event_open event
** per thread and session, its overflow delivered to that thread as a real-time
** signal; where perf_event_open is refused, a per-thread CPU-time POSIX timer
** (timer_create, SIGEV_THREAD_ID) with the same signal. The handler reads the
** interrupted registers and hands them to sample_hit (sample.c). Threads
** started later get their events from sampler_thread_begin: called by the
** pthread_create interposer of libcapprof.so (perf_thread_posix.c) and by a
** hooked thread's first hook. The default sampler, through a ring buffer
** and no signal, is in ring_posix.c.
**
** The signal: a real-time signal nobody has a handler for, from SIGRTMAX-3
** down (CAPPROF_SAMPLE_SIGNAL=N chooses one). Signals of that number that are
** not ours go to the handler that was there before (chained).
*/
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "../posix/posix.h"
#include "sample.h"
#include "sample_posix.h"
#include "../core/settings.h"

#define TIMER_MAGIC   0x5CA90000
#define TIMER_MASK    0xFFFF0000
#define FD_SLOTS      65536           /* fds above this are not used for events */
#define MAX_EVENTS    (1u << 16)

/* One session's event in one thread. */
struct event {
  uint64_t tid;
  uint32_t slot;                      /* session */
  int live;
  int fd;                             /* perf event, or -1 */
  timer_t timer;                      /* CPU-time timer when fd < 0 */
};

static struct event *events;          /* MAX_EVENTS reserved; os_lock */
static uint32_t nevents;
static uint8_t fd_slot[FD_SLOTS];     /* fd -> session slot + 1; 0: not ours */
static int sample_signal;             /* 0 until the handler is installed */
static struct sigaction previous;     /* the action we replaced, for chaining */
volatile int sampler_ever_started;    /* pthread_create starts threads through us */
#define ever_started sampler_ever_started
static pthread_key_t exit_key;
static int no_perf = -1;              /* CAPPROF_SAMPLE_NO_PERF: act as if refused */
static char host_took[160];           /* how the program took the signal, or "" */

/* glibc's sigaction itself: the runtime's own calls skip the program's
** sigaction (and capprof's guard of it, sigguard_posix.c). */
extern int __sigaction(int, const struct sigaction *, struct sigaction *);

__thread struct sample_thread *sampler_tls_state __attribute__((tls_model("initial-exec")));
#define tls_state sampler_tls_state
static __thread uintptr_t tls_stack_lo __attribute__((tls_model("initial-exec")));
static __thread uintptr_t tls_stack_hi __attribute__((tls_model("initial-exec")));


/* ---- registers of the interrupted code (per architecture, file scope) ---- */

#if defined(__x86_64__)
static void read_regs(const ucontext_t *uc, struct sample_regs *r)
{
  r->pc = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
  r->fp = (uintptr_t)uc->uc_mcontext.gregs[REG_RBP];
  r->sp = (uintptr_t)uc->uc_mcontext.gregs[REG_RSP];
}
#elif defined(__i386__)
static void read_regs(const ucontext_t *uc, struct sample_regs *r)
{
  r->pc = (uintptr_t)uc->uc_mcontext.gregs[REG_EIP];
  r->fp = (uintptr_t)uc->uc_mcontext.gregs[REG_EBP];
  r->sp = (uintptr_t)uc->uc_mcontext.gregs[REG_ESP];
}
#elif defined(__aarch64__)
static void read_regs(const ucontext_t *uc, struct sample_regs *r)
{
  r->pc = (uintptr_t)uc->uc_mcontext.pc;
  r->fp = (uintptr_t)uc->uc_mcontext.regs[29];
  r->sp = (uintptr_t)uc->uc_mcontext.sp;
}
#else
static void read_regs(const ucontext_t *uc, struct sample_regs *r)
{
  (void)uc;
  r->pc = r->fp = r->sp = 0;          /* flat profile of nothing: say so in docs */
}
#endif

/* ---- the signal handler ---------------------------------------------------- */

static void chain(int sig, siginfo_t *si, void *uc)
{
  if (previous.sa_flags & SA_SIGINFO) {
    if (previous.sa_sigaction) previous.sa_sigaction(sig, si, uc);
  } else if (previous.sa_handler != SIG_DFL && previous.sa_handler != SIG_IGN) {
    previous.sa_handler(sig);
  }
  /* SIG_DFL would end the process: a stray signal of a number nobody had
  ** claimed is dropped instead while capprof holds it. */
}

/* Async-signal-safe: no lock, no malloc; errno is preserved. */
static void on_sample(int sig, siginfo_t *si, void *ucv)
{
  int saved = errno;
  struct sample_session *s = NULL;
  uint32_t weight = 1;
  if (si->si_code == SI_TIMER && (si->si_value.sival_int & TIMER_MASK) == TIMER_MAGIC) {
    uint32_t slot = (uint32_t)si->si_value.sival_int & 0xFFFFu;
    if (slot < SAMPLE_MAX_SESSIONS) {
      s = &sample_sessions[slot];
      SAMPLE_ADD64(&s->signals, 1);
    }
    /* A CPU-time timer fires at the scheduler tick: intervals it skipped
    ** are overruns, and each stands for one sample. */
    if (si->si_overrun > 0) weight += si->si_overrun < 1000 ? (uint32_t)si->si_overrun : 1000u;
  } else if (si->si_code == POLL_IN || si->si_code == POLL_HUP) {
    int fd = si->si_fd;
    if (fd >= 0 && fd < FD_SLOTS && fd_slot[fd]) s = &sample_sessions[fd_slot[fd] - 1];
    else if (sample_signal) { errno = saved; return; }   /* a closed event's last signal */
  }
  if (!s) {
    chain(sig, si, ucv);
    errno = saved;
    return;
  }
  if (!s->running) { errno = saved; return; }
  struct sample_regs r;
  read_regs((const ucontext_t *)ucv, &r);
  struct sample_thread *st = NULL;
  struct cp_thread *tree = NULL;
  if (s->kind == CPD_SK_PROCESS) {
    st = tls_state;
    if (!st && (st = sample_thread_claim(gettid_raw())) != NULL) {
      st->stack_lo = tls_stack_lo;
      st->stack_hi = tls_stack_hi;
      tls_state = st;
    }
    tree = posix_tls;
    if (tree && !runtime_thread_real(tree)) tree = NULL;
  }
  while (weight--) sample_hit(s, st, tree, &r);
  errno = saved;
}

/* A real-time signal without a handler; CAPPROF_SAMPLE_SIGNAL=N forces N. */
static int install_handler(char *why, size_t n)
{
  if (sample_signal) return 0;
  struct sigaction sa, old;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_sample;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&sa.sa_mask);
  const char *env = settings_str(SET_SAMPLE_SIGNAL);
  int first = SIGRTMAX - 3, last = SIGRTMIN + 2;
  if (env && *env) first = last = atoi(env);
  for (int sig = first; sig >= last; sig--) {
    if (sig < SIGRTMIN || sig > SIGRTMAX) break;
    if (__sigaction(sig, NULL, &old) != 0) continue;
    int taken = (old.sa_flags & SA_SIGINFO) ? old.sa_sigaction != NULL
                                            : old.sa_handler != SIG_DFL;
    if (taken && !(env && *env)) continue;
    if (__sigaction(sig, &sa, &previous) != 0) continue;
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    pthread_sigmask(SIG_UNBLOCK, &set, NULL);
    sample_signal = sig;
    return 0;
  }
  snprintf(why, n, "no free real-time signal (SIGRTMIN+2 .. SIGRTMAX-3 all have handlers)");
  return CAPPROF_ENOTSUP;
}

/* ---- the program takes the signal -------------------------------------------
**
** A real-time signal's default action ends the process, and a handler of the
** program's would take capprof's samples for its own signals: the moment the
** program sets the signal's action (sigguard_posix.c), or the moment capprof
** finds its handler gone (at each timer's arming and at each dump), every
** timer and event is deleted and the signal-driven sessions stop; the dump's
** note says so. */

static void close_event(struct event *ev);

/* Whether the signal's handler is still on_sample. */
static int handler_is_ours(void)
{
  struct sigaction cur;
  if (!sample_signal || __sigaction(sample_signal, NULL, &cur) != 0) return 0;
  return (cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == on_sample;
}

/* Under os_lock: delete every timer and event, stop the sessions that
** needed the signal, and say how in their notes. */
static void stop_for_host(const char *how)
{
  for (uint32_t i = 0; i < nevents; i++) close_event(&events[i]);
  snprintf(host_took, sizeof host_took, "stopped: the program %s (signal %d, capprof's "
           "sampling signal); every timer was deleted first", how, sample_signal);
  for (uint32_t i = 0; i < SAMPLE_MAX_SESSIONS; i++) {
    struct sample_session *s = &sample_sessions[i];
    if (s->used && s->running && (s->method == CPD_SM_CPU_TIMER || s->method == CPD_SM_PERF))
      s->running = 0;
  }
  sample_signal = 0;                  /* a later session installs its handler anew */
}

void sampler_signal_guard(int sig, void (*handler)(void))
{
  if (!sample_signal || sig != sample_signal || handler == (void (*)(void))on_sample) return;
  os_lock();
  if (sig == sample_signal) {
    stop_for_host(handler == (void (*)(void))SIG_DFL ? "reset its action to SIG_DFL"
                  : handler == (void (*)(void))SIG_IGN ? "ignored it" : "set a handler of its own");
    /* Signals already queued (a timer's last) would reach the program's
    ** action: ignoring the signal for a moment drops them. */
    struct sigaction ign;
    memset(&ign, 0, sizeof ign);
    ign.sa_handler = SIG_IGN;
    __sigaction(sig, &ign, NULL);
  }
  os_unlock();
}

/* Under os_lock: the handler checked at each arming and each dump. */
static int handler_check(void)
{
  if (!sample_signal) return host_took[0] ? -1 : 0;
  if (handler_is_ours()) return 0;
  stop_for_host("changed its action (found at a timer's arming or a dump)");
  return -1;
}

void sampler_timer_note(struct sample_session *s)
{
  static char base[SAMPLE_MAX_SESSIONS][sizeof s->note];
  static int kept[SAMPLE_MAX_SESSIONS];
  if (!kept[s->slot]) {               /* the note as sampler_start left it */
    memcpy(base[s->slot], s->note, sizeof s->note);
    kept[s->slot] = 1;
  }
  handler_check();
  char rate[160] = "";
  uint64_t sig = s->signals, cpu = s->samples * s->interval;
  if (s->method == CPD_SM_CPU_TIMER && sig && cpu)
    snprintf(rate, sizeof rate, "timer every %.3g ms of CPU time, fired %llu times: %.0f Hz "
             "effective (it expires on the scheduler tick)", (double)s->interval / 1e6,
             (unsigned long long)sig, (double)sig * 1e9 / (double)cpu);
  snprintf(s->note, sizeof s->note, "%s%s%s%s%s", base[s->slot],
           base[s->slot][0] && rate[0] ? "; " : "", rate,
           (base[s->slot][0] || rate[0]) && host_took[0] ? "; " : "", host_took);
}

/* ---- perf events ------------------------------------------------------------ */

static int perf_config(uint32_t code, uint32_t *type, unsigned long long *config)
{
  switch (code) {
  case CPD_SRC_TASK_CLOCK: *type = PERF_TYPE_SOFTWARE; *config = PERF_COUNT_SW_TASK_CLOCK; break;
  case CPD_SRC_CPU_CLOCK: *type = PERF_TYPE_SOFTWARE; *config = PERF_COUNT_SW_CPU_CLOCK; break;
  case CPD_SRC_CYCLES: *type = PERF_TYPE_HARDWARE; *config = PERF_COUNT_HW_CPU_CYCLES; break;
  case CPD_SRC_INSTRUCTIONS: *type = PERF_TYPE_HARDWARE; *config = PERF_COUNT_HW_INSTRUCTIONS; break;
  case CPD_SRC_BRANCHES: *type = PERF_TYPE_HARDWARE; *config = PERF_COUNT_HW_BRANCH_INSTRUCTIONS; break;
  case CPD_SRC_BRANCH_MISSES: *type = PERF_TYPE_HARDWARE; *config = PERF_COUNT_HW_BRANCH_MISSES; break;
  case CPD_SRC_CACHE_REFERENCES: *type = PERF_TYPE_HARDWARE; *config = PERF_COUNT_HW_CACHE_REFERENCES; break;
  case CPD_SRC_CACHE_MISSES: *type = PERF_TYPE_HARDWARE; *config = PERF_COUNT_HW_CACHE_MISSES; break;
  default: return -1;
  }
  return 0;
}

/* Open (disabled) an event for tid; the fd, or -1 with errno. Never under
** a seccomp filter (EPERM): it may kill the process for perf_event_open,
** a call the host itself may never make (issue 33 case 7; asked for each
** thread, as the ring's set-up does, since a filter can come at any time). */
static int perf_open(uint32_t code, uint64_t period, uint64_t tid)
{
  if (!posix_seccomp_none()) {
    errno = EPERM;
    return -1;
  }
  struct perf_event_attr a;
  memset(&a, 0, sizeof a);
  unsigned long long config;
  if (perf_config(code, &a.type, &config) != 0) { errno = EINVAL; return -1; }
  a.config = config;
  a.size = sizeof a;
  a.sample_period = period;
  a.disabled = 1;
  a.exclude_kernel = 1;               /* user code only: perf_event_paranoid 2 allows it */
  a.exclude_hv = 1;
  a.wakeup_events = 1;
  return (int)syscall(SYS_perf_event_open, &a, (pid_t)tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

int perf_refused(void)
{
  if (no_perf < 0) {
    no_perf = settings_bool(SET_SAMPLE_NO_PERF);
  }
  return no_perf;
}

const char *paranoid_text(char *buf, size_t n)
{
  int fd = open("/proc/sys/kernel/perf_event_paranoid", O_RDONLY | O_CLOEXEC);
  buf[0] = '\0';
  if (fd >= 0) {
    ssize_t k = read(fd, buf, n - 1);
    close(fd);
    buf[k > 0 ? k : 0] = '\0';
    while (k > 0 && (buf[k - 1] == '\n')) buf[--k] = '\0';
  }
  return buf[0] ? buf : "?";
}

/* Why perf_event_open failed with error e, for source name, in words. */
static void perf_why(const char *name, int e, char *why, size_t n)
{
  char par[16];
  if (e == ENOENT || e == EOPNOTSUPP || e == ENODEV)
    snprintf(why, n, "perf_event_open(%s): %s: the processor exposes no such counter "
             "(no hardware performance counters in this machine or VM)", name, strerror(e));
  else if (e == EACCES || e == EPERM)
    snprintf(why, n, "perf_event_open(%s) refused: %s (kernel.perf_event_paranoid = %s, "
             "or a seccomp filter)", name, strerror(e), paranoid_text(par, sizeof par));
  else
    snprintf(why, n, "perf_event_open(%s): %s", name, strerror(e));
}

/* 0 when perf_event_open accepts src for this thread, else errno. */
static int perf_try(const struct sample_source *src)
{
  if (perf_refused()) return EACCES;
  int fd = perf_open(src->code, 1000000, 0);
  if (fd < 0) return errno;
  close(fd);
  return 0;
}

int sampler_probe(const struct sample_source *src, char *why, size_t n)
{
  static int cached[CPD_SRC_COUNT + 1];     /* errno + 1 of the first try; 0: untried */
  if (src->code == CPD_SRC_CPU_TIMER || src->is_time) return 0;  /* a timer always works */
  if (!cached[src->code]) cached[src->code] = perf_try(src) + 1;
  if (cached[src->code] == 1) return 0;
  if (perf_refused())
    snprintf(why, n, "perf_event_open refused (%s is set)", settings_name(SET_SAMPLE_NO_PERF));
  else
    perf_why(src->name, cached[src->code] - 1, why, n);
  return CAPPROF_ENOTSUP;
}

/* ---- events per thread ------------------------------------------------------ */

static struct event *find_event(uint32_t slot, uint64_t tid)
{
  for (uint32_t i = 0; i < nevents; i++)
    if (events[i].live && events[i].slot == slot && events[i].tid == tid) return &events[i];
  return NULL;
}

static struct event *new_event(void)
{
  if (!events) {
    size_t bytes = MAX_EVENTS * sizeof *events;
    events = os_reserve(bytes);
    if (events && os_commit(events, bytes) != 0) {
      os_release(events, bytes);
      events = NULL;
    }
    if (!events) return NULL;
  }
  for (uint32_t i = 0; i < nevents; i++)
    if (!events[i].live) return &events[i];
  return nevents < MAX_EVENTS ? &events[nevents++] : NULL;
}

static void timer_spec(uint64_t ns, struct itimerspec *its)
{
  its->it_interval.tv_sec = (time_t)(ns / 1000000000u);
  its->it_interval.tv_nsec = (long)(ns % 1000000000u);
  its->it_value = its->it_interval;
}

/* The CPU-time clock of thread tid of this process (the kernel's encoding,
** as glibc's pthread_getcpuclockid makes it). */
static clockid_t thread_cpu_clock(uint64_t tid)
{
  if (tid == gettid_raw()) return CLOCK_THREAD_CPUTIME_ID;
  return (clockid_t)((~(unsigned)tid << 3) | 6u);
}

/* Start s in thread tid; 0 or errno. */
static int open_for_thread(struct sample_session *s, uint64_t tid)
{
  if (find_event(s->slot, tid)) return 0;
  struct event *ev = new_event();
  if (!ev) return ENOMEM;
  memset(ev, 0, sizeof *ev);
  ev->tid = tid;
  ev->slot = s->slot;
  ev->fd = -1;
  if (s->method == CPD_SM_PERF) {
    int fd = perf_open(s->source->code, s->interval, tid);
    if (fd < 0) return errno;
    if (fd >= FD_SLOTS) { close(fd); return EMFILE; }
    struct f_owner_ex owner = { F_OWNER_TID, (pid_t)tid };
    fd_slot[fd] = (uint8_t)(s->slot + 1);
    if (fcntl(fd, F_SETFL, O_ASYNC | O_NONBLOCK) != 0 || fcntl(fd, F_SETSIG, sample_signal) != 0 ||
        fcntl(fd, F_SETOWN_EX, &owner) != 0 || ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) != 0) {
      int e = errno;
      fd_slot[fd] = 0;
      close(fd);
      return e;
    }
    ev->fd = fd;
  } else {
    if (handler_check() != 0) return EINTR;    /* the program took the signal */
    struct sigevent sev;
    memset(&sev, 0, sizeof sev);
    sev.sigev_notify = SIGEV_THREAD_ID;
    sev.sigev_signo = sample_signal;
    sev.sigev_value.sival_int = (int)(TIMER_MAGIC | s->slot);
    sev._sigev_un._tid = (pid_t)tid;
    if (timer_create(thread_cpu_clock(tid), &sev, &ev->timer) != 0) return errno;
    struct itimerspec its;
    timer_spec(s->interval, &its);
    if (timer_settime(ev->timer, 0, &its, NULL) != 0) {
      int e = errno;
      timer_delete(ev->timer);
      return e;
    }
  }
  ev->live = 1;
  return 0;
}

static void close_event(struct event *ev)
{
  if (!ev->live) return;
  ev->live = 0;
  if (ev->fd >= 0) {
    ioctl(ev->fd, PERF_EVENT_IOC_DISABLE, 0);
    fd_slot[ev->fd] = 0;
    close(ev->fd);
  } else {
    timer_delete(ev->timer);
  }
}

/* ---- threads ------------------------------------------------------------------ */

/* The calling thread's stack, for frame-pointer walks. */
static void note_stack(void)
{
  if (tls_stack_hi) return;
  pthread_attr_t attr;
  if (pthread_getattr_np(pthread_self(), &attr) != 0) return;
  void *addr;
  size_t size;
  if (pthread_attr_getstack(&attr, &addr, &size) == 0) {
    tls_stack_lo = (uintptr_t)addr;
    tls_stack_hi = (uintptr_t)addr + size;
  }
  pthread_attr_destroy(&attr);
}

/* A thread that started under sampling ends: close its events, keep its name. */
static void thread_end(void *p)
{
  (void)p;
  uint64_t tid = gettid_raw();
  os_lock();
  for (uint32_t i = 0; i < nevents; i++)
    if (events[i].live && events[i].tid == tid) close_event(&events[i]);
  struct sample_thread *st = tls_state;
  if (st) {
    os_thread_name(tid, st->name, sizeof st->name);
    st->ended = 1;
  }
  os_unlock();
}

/* A new thread: its stack bounds, then an event for every running session.
** Called by the pthread_create interposer (perf_thread.c, in libcapprof.so)
** and by a hooked thread's first hook (runtime_thread_slow). */
void sampler_thread_begin(void)
{
  if (!ever_started) return;
  note_stack();
  pthread_setspecific(exit_key, (void *)1);
  uint64_t tid = gettid_raw();
  os_lock();
  for (uint32_t i = 0; i < SAMPLE_MAX_SESSIONS; i++) {
    struct sample_session *s = &sample_sessions[i];
    if (s->used && s->running && s->method != CPD_SM_RING) open_for_thread(s, tid);   /* rings: at the first hook */
  }
  os_unlock();
}

/* ---- sessions ------------------------------------------------------------------- */

/* Open s's events for every thread of the process; 0 or errno of the
** calling thread's (the others may have ended meanwhile). */
static int open_all(struct sample_session *s)
{
  uint64_t self = gettid_raw();
  int rc = open_for_thread(s, self);
  if (rc) return rc;
  DIR *dir = opendir("/proc/self/task");
  if (!dir) return 0;
  struct dirent *e;
  while ((e = readdir(dir)) != NULL) {
    char *end;
    unsigned long long tid = strtoull(e->d_name, &end, 10);
    if (*end || e->d_name[0] == '.' || tid == self) continue;
    open_for_thread(s, tid);
  }
  closedir(dir);
  return 0;
}

static void close_all(struct sample_session *s)
{
  for (uint32_t i = 0; i < nevents; i++)
    if (events[i].live && events[i].slot == s->slot) close_event(&events[i]);
}


int sampler_start(struct sample_session *s, char *why, size_t n)
{
  if (s->method == CPD_SM_RING) {              /* a fork child's: its own ring */
    sampler_ring_open(posix_tls);
    return 0;
  }
  int rc = install_handler(why, n);
  if (rc) return rc;
  if (!ever_started) {
    pthread_key_create(&exit_key, thread_end);
    ever_started = 1;
  }
  note_stack();
  char sig[32];
  snprintf(sig, sizeof sig, "signal %d", sample_signal);
  int e = 0;
  if (s->source->code != CPD_SRC_CPU_TIMER) {
    s->method = CPD_SM_PERF;
    e = perf_refused() ? EACCES : open_all(s);
    if (!e) {
      snprintf(s->method_text, sizeof s->method_text, "perf_event_open %s per thread, %s",
               s->source->code == CPD_SRC_CPU_CLOCK ? "cpu-clock"
               : s->source->is_time ? "task-clock" : s->source->name, sig);
      return 0;
    }
    close_all(s);
    if (!s->source->is_time) {
      perf_why(s->source->name, e, why, n);
      return CAPPROF_ENOTSUP;
    }
    char reason[220];
    if (perf_refused()) snprintf(reason, sizeof reason, "perf_event_open refused "
                                 "(%s is set)", settings_name(SET_SAMPLE_NO_PERF));
    else perf_why(s->source->name, e, reason, sizeof reason);
    snprintf(s->note, sizeof s->note, "fell back to the CPU-time timer: %s", reason);
  }
  s->method = CPD_SM_CPU_TIMER;
  e = open_all(s);
  if (e) {
    close_all(s);
    snprintf(why, n, "timer_create(CLOCK_THREAD_CPUTIME_ID): %s", strerror(e));
    return CAPPROF_ENOTSUP;
  }
  snprintf(s->method_text, sizeof s->method_text,
           "POSIX CPU-time timer per thread (timer_create), %s", sig);
  return 0;
}

void sampler_stop(struct sample_session *s)
{
  close_all(s);
}

int sampler_set_interval(struct sample_session *s)
{
  int rc = 0;
  for (uint32_t i = 0; i < nevents; i++) {
    struct event *ev = &events[i];
    if (!ev->live || ev->slot != s->slot) continue;
    if (ev->fd >= 0) {
      uint64_t period = s->interval;
      if (ioctl(ev->fd, PERF_EVENT_IOC_PERIOD, &period) != 0) rc = CAPPROF_EINVAL;
    } else {
      struct itimerspec its;
      timer_spec(s->interval, &its);
      if (timer_settime(ev->timer, 0, &its, NULL) != 0) rc = CAPPROF_EINVAL;
    }
  }
  return rc;
}

void sampler_fork_child(void)
{
  sampler_ring_fork_child();
  /* The parent's events watch the parent's threads; the child's copies of
  ** their fds are closed (the parent's stay open). Timers are not inherited. */
  for (uint32_t i = 0; i < nevents; i++) {
    if (events[i].live && events[i].fd >= 0) {
      fd_slot[events[i].fd] = 0;
      close(events[i].fd);
    }
    events[i].live = 0;
  }
  nevents = 0;
  if (tls_state) tls_state->tid = gettid_raw();
}

/* ---- module ranges ----------------------------------------------------------------- */

struct range_ctx { uintptr_t addr; int main_only; uintptr_t lo, hi; int found; };

static int range_cb(struct dl_phdr_info *info, size_t size, void *data)
{
  (void)size;
  struct range_ctx *c = data;
  uintptr_t lo = UINTPTR_MAX, hi = 0, all_lo = UINTPTR_MAX, all_hi = 0;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_LOAD) continue;
    uintptr_t a = info->dlpi_addr + ph->p_vaddr, b = a + ph->p_memsz;
    if (a < all_lo) all_lo = a;
    if (b > all_hi) all_hi = b;
    if (!(ph->p_flags & PF_X)) continue;
    if (a < lo) lo = a;
    if (b > hi) hi = b;
  }
  if (lo >= hi) return 0;
  int match = c->main_only ? 1 : (c->addr >= all_lo && c->addr < all_hi);
  if (!match) return 0;
  c->lo = lo;
  c->hi = hi;
  c->found = 1;
  return 1;
}

int sampler_module_range(const void *addr, uintptr_t *lo, uintptr_t *hi)
{
  struct range_ctx c = { (uintptr_t)addr, addr == NULL, 0, 0, 0 };
  dl_iterate_phdr(range_cb, &c);      /* the executable comes first */
  if (!c.found) return CAPPROF_EINVAL;
  *lo = c.lo;
  *hi = c.hi;
  return 0;
}

