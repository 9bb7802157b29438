/*
** perf.c (POSIX) -- the sampler back end on Linux: one perf_event_open event
** per thread and session, its overflow delivered to that thread as a real-time
** signal; where perf_event_open is refused, a per-thread CPU-time POSIX timer
** (timer_create, SIGEV_THREAD_ID) with the same signal. The handler reads the
** interrupted registers and hands them to sample_hit (sample.c). Threads
** started later get their events from sampler_thread_begin: called by the
** pthread_create interposer of libcapprof.so (perf_thread.c) and by a
** hooked thread's first hook.
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

#include "posix.h"
#include "../sample.h"
#include "../settings.h"

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

static __thread struct sample_thread *tls_state __attribute__((tls_model("initial-exec")));
static __thread uintptr_t tls_stack_lo __attribute__((tls_model("initial-exec")));
static __thread uintptr_t tls_stack_hi __attribute__((tls_model("initial-exec")));

static uint64_t gettid_raw(void) { return (uint64_t)syscall(SYS_gettid); }

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
    if (slot < SAMPLE_MAX_SESSIONS) s = &sample_sessions[slot];
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
    if (sigaction(sig, NULL, &old) != 0) continue;
    int taken = (old.sa_flags & SA_SIGINFO) ? old.sa_sigaction != NULL
                                            : old.sa_handler != SIG_DFL;
    if (taken && !(env && *env)) continue;
    if (sigaction(sig, &sa, &previous) != 0) continue;
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

/* Open (disabled) an event for tid; the fd, or -1 with errno. */
static int perf_open(uint32_t code, uint64_t period, uint64_t tid)
{
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

static int perf_refused(void)
{
  if (no_perf < 0) {
    no_perf = settings_bool(SET_SAMPLE_NO_PERF);
  }
  return no_perf;
}

static const char *paranoid_text(char *buf, size_t n)
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

static void ring_fork_child(void);

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
  ring_fork_child();
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

/* ---- sampling through a ring buffer (the default) ---------------------------------
**
** Without CAPPROF_SAMPLE, a program built with hooks is sampled without a
** signal: each hooked thread opens, at its first hook, a task-clock event
** of its own (user mode only) whose samples the kernel writes into a ring
** buffer mapped into the process; the descriptor is closed at once (the
** mapping keeps the event). The kernel writes a sample when it takes it,
** and every hook compares the ring's write position with what it has read
** (cp_ring_pending, two loads) before it changes the shadow stack: between
** two hooks of a thread the call path does not change, so the samples found
** belong to the node on top, as a signal handler would have found them.
** The counting stubs of unhooked functions look too, every 64th call
** (asm cp_stub_check). Each sample carries its program counter and a copy
** of the stack's first RING_STACK_BYTES (for a library call made by an
** unhooked function: sample.c); no stack walk. A ring that fills up (a
** long stretch without hooks) refuses samples: those go to the same node,
** without a program counter (ring_drain). A thread that never runs a hook
** has no ring. */

#define RING_DATA_BYTES 65536u                 /* a power of two; at least one page */
#define RING_STACK_BYTES 512u

struct ring {
  struct perf_event_mmap_page *page;           /* NULL: none */
  const unsigned char *data;
  uint64_t mask;                               /* data size - 1 */
  size_t len;                                  /* mapped bytes */
  /* A ring found (nearly) full may have refused samples. The kernel says
  ** how many in a LOST record, but only before the next sample it writes,
  ** under another node by then or never (the thread ends). They were
  ** taken under the node on top when the full ring is read, and their
  ** number is about the thread's CPU time since the last read in
  ** intervals, less the samples read: charged then, and the LOST record
  ** that follows is skipped. */
  int skip_lost;
  uint64_t user_ns;                            /* the thread's user CPU time at the last read */
};

/* The calling thread's CPU time in user mode (the samples' only mode). A
** system call of its own on x86-64: a read of the ring must call nothing
** through the program's PLT, which API interception may have patched into
** a path that reads the ring again. */
CP_PROBE_CODE static uint64_t thread_user_ns(void)
{
  struct rusage ru;
#if defined(__x86_64__)
  long rc;
  __asm__ __volatile__("syscall" : "=a"(rc) : "a"((long)SYS_getrusage), "D"((long)RUSAGE_THREAD),
                       "S"(&ru) : "rcx", "r11", "memory");
  if (rc != 0) return 0;
#else
  if (getrusage(RUSAGE_THREAD, &ru) != 0) return 0;
#endif
  return (uint64_t)ru.ru_utime.tv_sec * 1000000000u + (uint64_t)ru.ru_utime.tv_usec * 1000u;
}

static __thread struct ring tls_ring __attribute__((tls_model("initial-exec")));
static struct sample_session *ring_session;    /* the default sampling, once started */
static uint32_t ring_refused;                  /* hooked threads that got no ring (atomic) */
static int ring_refused_errno;                 /* the first one's reason */

static void ring_attr(struct perf_event_attr *a, uint64_t period)
{
  memset(a, 0, sizeof *a);
  a->type = PERF_TYPE_SOFTWARE;
  a->config = PERF_COUNT_SW_TASK_CLOCK;
  a->size = sizeof *a;
  a->sample_period = period;
  a->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_STACK_USER;
  a->sample_stack_user = RING_STACK_BYTES;
  a->exclude_kernel = 1;                       /* user code only: perf_event_paranoid 2 allows it */
  a->exclude_hv = 1;
  a->watermark = 1;                            /* nobody polls: no wake-ups */
  a->wakeup_watermark = UINT32_MAX;
}

/* Open and map a ring for the calling thread; 0 or errno. */
static int ring_map(uint64_t period, struct ring *r)
{
  struct perf_event_attr a;
  ring_attr(&a, period);
  int fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
  if (fd < 0) return errno;
  size_t pg = (size_t)sysconf(_SC_PAGESIZE);
  size_t data = RING_DATA_BYTES < pg ? pg : RING_DATA_BYTES;
  size_t len = pg + data;
  void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  int e = m == MAP_FAILED ? errno : 0;
  close(fd);                                   /* the mapping keeps the event */
  if (e) return e;
  r->page = m;
  r->data = (const unsigned char *)m + pg;
  r->mask = (uint64_t)data - 1;
  r->len = len;
  return 0;
}

int sampler_ring_start(struct sample_session *s, char *why, size_t n)
{
  if (perf_refused()) {
    snprintf(why, n, "perf_event_open refused (%s is set)", settings_name(SET_SAMPLE_NO_PERF));
    return CAPPROF_ENOTSUP;
  }
  if (!posix_seccomp_none()) {
    snprintf(why, n, "the thread runs under a seccomp filter, which may not allow perf_event_open");
    return CAPPROF_ENOTSUP;
  }
  struct ring probe;
  int e = ring_map(s->interval, &probe);
  if (e) {
    char par[16];
    if (e == EACCES || e == EPERM)
      snprintf(why, n, "perf_event_open refused: %s (kernel.perf_event_paranoid = %s; "
               "2 or less lets a program sample itself)", strerror(e), paranoid_text(par, sizeof par));
    else
      snprintf(why, n, "perf_event_open or its ring buffer: %s", strerror(e));
    return CAPPROF_ENOTSUP;
  }
  munmap(probe.page, probe.len);
  s->method = CPD_SM_RING;
  snprintf(s->method_text, sizeof s->method_text,
           "perf_event_open task-clock per hooked thread, a ring buffer the hooks read");
  ring_session = s;
  return 0;
}

static __thread int tls_ring_tried __attribute__((tls_model("initial-exec")));

CP_PROBE_CODE void sampler_ring_open(struct cp_thread *t)
{
  struct sample_session *s = ring_session;
  if (CP_LIKELY(tls_ring_tried) || !s || !s->running || !runtime_thread_real(t) || t->calibrating)
    return;                                    /* a calibration's scratch tree: not the thread's */
  tls_ring_tried = 1;
  int saved = errno;                           /* a hook's: the host's errno stays */
  struct ring r;
  memset(&r, 0, sizeof r);
  /* A filter on this thread may kill the process for perf_event_open. */
  int e = posix_seccomp_none() ? ring_map(s->interval, &r) : EPERM;
  if (e) {
    /* No lock: a fork child's handler runs here holding it. The note is
    ** written with the dump (sampler_note). */
    if (__atomic_fetch_add(&ring_refused, 1, __ATOMIC_RELAXED) == 0) ring_refused_errno = e;
    errno = saved;
    return;
  }
  r.user_ns = thread_user_ns();
  /* The thread's sample state now: a read of the ring maps nothing. */
  if (!tls_state) tls_state = sample_thread_claim(gettid_raw());
  errno = saved;
  tls_ring = r;
  t->ring_seen = __atomic_load_n(&r.page->data_tail, __ATOMIC_RELAXED);
  __atomic_store_n(&t->ring_head, (const volatile uint64_t *)&r.page->data_head, __ATOMIC_RELEASE);
}

/* The u64 at ring offset off (records are 8-byte aligned: none straddles). */
CP_PROBE_CODE static uint64_t ring_u64(const struct ring *r, uint64_t off)
{
  uint64_t v;
  memcpy(&v, r->data + (off & r->mask), sizeof v);
  return v;
}

struct ring_words { const struct ring *r; uint64_t at; };

CP_PROBE_CODE static uint64_t ring_word(void *ctx, uint32_t k)
{
  const struct ring_words *w = ctx;
  return ring_u64(w->r, w->at + 8u * k);
}

/* One PERF_RECORD_SAMPLE of size bytes at off: IP, STACK_USER. */
CP_PROBE_CODE static void ring_sample(const struct ring *r, struct sample_session *s,
                                      struct sample_thread *st, struct cp_thread *t,
                                      uint64_t off, uint64_t size)
{
  if (size < 16) return;
  uint64_t pc = ring_u64(r, off + 8);
  uint64_t at = off + 16;
  uint64_t bytes = size >= 24 ? ring_u64(r, at) : 0, words = 0;
  if (bytes && at + 16 + bytes <= off + size) {
    uint64_t dyn = ring_u64(r, at + 8 + bytes);
    words = (dyn < bytes ? dyn : bytes) / 8;
  }
  struct ring_words w = { r, at + 8 };
  sample_hit_copied(s, st, t, pc, ring_word, &w, (uint32_t)words);
}

/* Read t's ring (the calling thread's), charging each sample to the node
** on top: no hook of the thread ran since the last read. A hook of a signal
** handler may interrupt a read and read on (or a handler may leave it by
** siglongjmp): each record is claimed before it is charged, by moving
** ring_seen past it with a compare-and-swap, so that no record counts
** twice and no reader waits for another. */
CP_PROBE_CODE static void ring_drain(struct cp_thread *t)
{
  struct ring *r = &tls_ring;
  if (!r->page || t->ring_head != (const volatile uint64_t *)&r->page->data_head) return;
  /* Nothing here sets errno or calls through the PLT (thread_user_ns is a
  ** system call of its own; the sample state was claimed at the open). */
  uint64_t head = __atomic_load_n(&r->page->data_head, __ATOMIC_ACQUIRE);
  uint64_t first = __atomic_load_n(&t->ring_seen, __ATOMIC_RELAXED), read = 0, tail;
  struct sample_session *s = ring_session;
  struct sample_thread *st = tls_state;     /* claimed when the ring was opened */
  uint64_t user = thread_user_ns();
  while ((tail = __atomic_load_n(&t->ring_seen, __ATOMIC_RELAXED)) != head) {
    uint64_t h = ring_u64(r, tail), size = h >> 48, next = tail + size;
    uint32_t type = (uint32_t)h;
    if (head - tail > r->mask + 1 || size < 8 || (size & 7) || size > head - tail)
      next = head;                             /* not the kernel's: skip to the head */
    if (!__atomic_compare_exchange_n(&t->ring_seen, &tail, next, 0, __ATOMIC_RELAXED,
                                     __ATOMIC_RELAXED))
      continue;                                /* a nested reader took it */
    if (next == head && size != next - tail) break;
    if (type == PERF_RECORD_SAMPLE) {
      r->skip_lost = 0;                        /* a LOST record would have come first */
      ring_sample(r, s, st, t, tail, size);
      read++;
    } else if (type == PERF_RECORD_LOST && size >= 24) {
      if (!r->skip_lost) sample_lost(s, st, t, t->top->node, ring_u64(r, tail + 16));
      r->skip_lost = 0;
    }
  }
  /* Found (nearly) full: samples the kernel refused since the last read
  ** were taken under the node on top too. Their number: the thread's user
  ** time since then in intervals, less the samples read. */
  if (head - first + 32 + RING_STACK_BYTES > r->mask + 1 && s && r->user_ns && user > r->user_ns) {
    uint64_t due = (user - r->user_ns) / s->interval;
    if (due > read) sample_lost(s, st, t, t->top->node, due - read);
    r->skip_lost = 1;
  }
  r->user_ns = user;
  __atomic_store_n(&r->page->data_tail, __atomic_load_n(&t->ring_seen, __ATOMIC_RELAXED),
                   __ATOMIC_RELEASE);
}

CP_PROBE_CODE void cp_ring_drain(struct cp_thread *t)
{
  ring_drain(t);
}

void sampler_ring_flush(void)
{
  struct cp_thread *t = posix_tls;
  if (t && tls_ring.page) ring_drain(t);
}

void sampler_ring_end(struct cp_thread *t)
{
  struct ring *r = &tls_ring;
  if (!r->page || !t || t->ring_head != (const volatile uint64_t *)&r->page->data_head) return;
  ring_drain(t);
  cp_ring_none(t);                             /* before the unmap: a late hook reads ring_seen */
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  munmap(r->page, r->len);
  memset(r, 0, sizeof *r);
  struct sample_thread *st = tls_state;
  if (st && !st->ended) {
    os_thread_name(gettid_raw(), st->name, sizeof st->name);
    st->ended = 1;
  }
}

/* fork: the child gets no copy of a ring (the kernel maps it VM_DONTCOPY),
** so the forking thread's hooks read their own ring_seen from before the
** fork until the parent's or the child's handler has set them right. */
void sampler_ring_fork_prepare(void)
{
  struct cp_thread *t = posix_tls;
  if (t && tls_ring.page && t->ring_head == (const volatile uint64_t *)&tls_ring.page->data_head)
    t->ring_head = &t->ring_seen;
}

void sampler_ring_fork_parent(void)
{
  struct cp_thread *t = posix_tls;
  if (t && tls_ring.page && t->ring_head == &t->ring_seen)
    __atomic_store_n(&t->ring_head, (const volatile uint64_t *)&tls_ring.page->data_head,
                     __ATOMIC_RELEASE);
}

/* In the child, under os_lock: the parent's ring is not mapped here. */
static void ring_fork_child(void)
{
  struct cp_thread *t = posix_tls;
  memset(&tls_ring, 0, sizeof tls_ring);
  tls_ring_tried = 0;
  if (t) cp_ring_none(t);
  ring_refused = 0;
  ring_refused_errno = 0;
}

void sampler_note(struct sample_session *s)
{
  uint32_t n = __atomic_load_n(&ring_refused, __ATOMIC_RELAXED);
  if (s != ring_session || !n) return;
  int e = ring_refused_errno;
  snprintf(s->note, sizeof s->note, "%u hooked thread%s got no sampling ring, %s samples "
           "missing: %s%s", n, n == 1 ? "" : "s", n == 1 ? "its" : "their", strerror(e),
           e == EPERM ? " (a seccomp filter, or kernel.perf_event_mlock_kb used up)" : "");
}
