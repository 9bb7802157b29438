/*
** ring_posix.c (POSIX) -- the default sampler on Linux: a per-thread perf
** event whose samples the kernel writes into a ring buffer that the hooks
** read (no signal). The signal-driven sampler (CAPPROF_SAMPLE: perf events
** or CPU-time timers) is in sample_posix.c.
*/
#define _GNU_SOURCE
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../posix/posix.h"
#include "sample.h"
#include "sample_posix.h"
#include "../core/settings.h"

#define tls_state sampler_tls_state

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
  /* A filter on this thread may kill the process for perf_event_open. No
  ** cancellation point in a hook (its close, and what it reads). */
  int cancel = os_cancel_off();
  int e = posix_seccomp_none() ? ring_map(s->interval, &r) : EPERM;
  os_cancel_restore(cancel);
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
void sampler_ring_fork_child(void)
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
  if (s->method == CPD_SM_CPU_TIMER || s->method == CPD_SM_PERF) sampler_timer_note(s);
  uint32_t n = __atomic_load_n(&ring_refused, __ATOMIC_RELAXED);
  if (s != ring_session || !n) return;
  int e = ring_refused_errno;
  snprintf(s->note, sizeof s->note, "%u hooked thread%s got no sampling ring, %s samples "
           "missing: %s%s", n, n == 1 ? "" : "s", n == 1 ? "its" : "their", strerror(e),
           e == EPERM ? " (a seccomp filter, or kernel.perf_event_mlock_kb used up)" : "");
}
