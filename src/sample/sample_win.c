/*
** ntprofile.c (Windows) -- the sampler back end on Windows. A profile object
** becomes an executive profile object (NtCreateProfileEx / NtStartProfile /
** NtStopProfile / NtSetIntervalProfile, looked up in ntdll at run time; the
** kernel counts straight into the object's buckets) where ntdll has them and
** they succeed. Otherwise, and always for the process-wide sampling that
** charges call paths, a sampler thread wakes every interval, and for each
** thread of the process that used CPU time since it last looked, suspends it,
** reads its context (the program counter, and through its capprof state the
** top of its shadow stack), resumes it and hands the sample to sample_hit.
** Wine has no profile objects: the fallback is what runs under wine in CI.
** The NT path is compile-checked only (docs/windows.md).
*/
#ifndef WIN32_LEAN_AND_MEAN
#  define WIN32_LEAN_AND_MEAN
#endif
#include <windows.h>
#include <tlhelp32.h>
#include <stdio.h>
#include <string.h>

#include "../win/win.h"
#include "sample.h"

/* ---- executive profile objects (ntdll, undocumented) ---------------------- */

typedef LONG nt_status;
typedef nt_status (NTAPI *create_profile_ex_fn)(HANDLE *profile, HANDLE process, void *base,
                                               SIZE_T size, ULONG bucket_log2, ULONG *buffer,
                                               ULONG buffer_bytes, int source,
                                               USHORT group_count, GROUP_AFFINITY *affinity);
typedef nt_status (NTAPI *profile_fn)(HANDLE profile);
typedef nt_status (NTAPI *set_interval_fn)(ULONG interval, int source);

static create_profile_ex_fn nt_create_profile_ex;
static profile_fn nt_start_profile, nt_stop_profile;
static set_interval_fn nt_set_interval_profile;
static int nt_looked_up;

static void nt_lookup(void)
{
  if (nt_looked_up) return;
  nt_looked_up = 1;
  HMODULE ntdll = GetModuleHandleW(L"ntdll.dll");
  if (!ntdll) return;
  nt_create_profile_ex = (create_profile_ex_fn)(void (*)(void))GetProcAddress(ntdll, "NtCreateProfileEx");
  nt_start_profile = (profile_fn)(void (*)(void))GetProcAddress(ntdll, "NtStartProfile");
  nt_stop_profile = (profile_fn)(void (*)(void))GetProcAddress(ntdll, "NtStopProfile");
  nt_set_interval_profile = (set_interval_fn)(void (*)(void))GetProcAddress(ntdll, "NtSetIntervalProfile");
}

static int nt_available(void)
{
  nt_lookup();
  return nt_create_profile_ex && nt_start_profile && nt_stop_profile && nt_set_interval_profile;
}

/* KPROFILE_SOURCE of a capprof source; -1 when NT has none. */
static int kprofile_source(uint32_t code)
{
  switch (code) {
  case CPD_SRC_TASK_CLOCK: case CPD_SRC_CPU_CLOCK: case CPD_SRC_CPU_TIMER: return 0; /* ProfileTime */
  case CPD_SRC_INSTRUCTIONS: return 2;        /* ProfileTotalIssues */
  case CPD_SRC_BRANCHES: return 6;            /* ProfileBranchInstructions */
  case CPD_SRC_CACHE_MISSES: return 10;       /* ProfileCacheMisses */
  case CPD_SRC_BRANCH_MISSES: return 11;      /* ProfileBranchMispredictions */
  case CPD_SRC_CYCLES: return 19;             /* ProfileTotalCycles */
  case CPD_SRC_CACHE_REFERENCES: return 21;   /* ProfileDcacheAccesses */
  default: return -1;
  }
}

struct nt_object { HANDLE profile; };

/* Sample s through an executive profile object; 0, or -1 to fall back. */
static int nt_start(struct sample_session *s, char *why, size_t n)
{
  int src = kprofile_source(s->source->code);
  if (s->kind != CPD_SK_OBJECT || src < 0 || !nt_available()) return -1;
  struct nt_object *o = s->backend;
  if (!o) {
    o = os_reserve(os_page_size());
    if (!o || os_commit(o, os_page_size()) != 0) return -1;
    s->backend = o;
  }
  if (!o->profile) {
    GROUP_AFFINITY all;
    memset(&all, 0, sizeof all);
    all.Mask = (KAFFINITY)-1;
    nt_status st = nt_create_profile_ex(&o->profile, GetCurrentProcess(), (void *)s->lo,
                                        (SIZE_T)(s->hi - s->lo), s->shift, (ULONG *)s->buckets,
                                        (ULONG)(s->nbuckets * sizeof(uint32_t)), src, 1, &all);
    if (st < 0) {
      o->profile = NULL;
      snprintf(why, n, "NtCreateProfileEx: status %#lx", (unsigned long)st);
      return -1;
    }
  }
  /* The interval is system-wide and needs SeSystemProfilePrivilege: when
  ** refused, the system's interval stays and the note says so. */
  ULONG units = s->source->is_time ? (ULONG)(s->interval / 100u) : (ULONG)s->interval;
  if (nt_set_interval_profile(units, src) < 0)
    snprintf(s->note, sizeof s->note, "NtSetIntervalProfile refused: the system's interval applies");
  if (nt_start_profile(o->profile) < 0) return -1;
  s->method = CPD_SM_NT_PROFILE;
  snprintf(s->method_text, sizeof s->method_text, "NtCreateProfileEx, KPROFILE_SOURCE %d", src);
  return 0;
}

/* ---- the suspend-and-read sampler thread ----------------------------------- */

#define MAX_WATCHED 1024

struct watched {
  DWORD tid;
  HANDLE h;
  struct sample_thread *st;
  uint64_t cpu_last;        /* 100 ns units of user + kernel time */
  uint64_t owed;            /* CPU time not yet sampled, 100 ns units */
};

static struct watched watched[MAX_WATCHED];
static unsigned nwatched;
static HANDLE sampler;              /* the thread, or NULL */
static volatile LONG sampler_quit;
static volatile LONG sampler_busy;  /* 1 while a round runs */
static DWORD sampler_tid;

static uint64_t thread_cpu(HANDLE h)
{
  FILETIME c, e, k, u;
  if (!GetThreadTimes(h, &c, &e, &k, &u)) return 0;
  return ((uint64_t)k.dwHighDateTime << 32 | k.dwLowDateTime) +
         ((uint64_t)u.dwHighDateTime << 32 | u.dwLowDateTime);
}

/* Watch every thread of the process (but the sampler); forget ended ones. */
static void refresh_threads(void)
{
  for (unsigned i = 0; i < nwatched;) {
    if (WaitForSingleObject(watched[i].h, 0) == WAIT_OBJECT_0) {
      if (watched[i].st) watched[i].st->ended = 1;
      CloseHandle(watched[i].h);
      watched[i] = watched[--nwatched];
    } else {
      i++;
    }
  }
  HANDLE snap = CreateToolhelp32Snapshot(TH32CS_SNAPTHREAD, 0);
  if (snap == INVALID_HANDLE_VALUE) return;
  THREADENTRY32 te;
  te.dwSize = sizeof te;
  DWORD pid = GetCurrentProcessId();
  for (BOOL ok = Thread32First(snap, &te); ok; ok = Thread32Next(snap, &te)) {
    if (te.th32OwnerProcessID != pid || te.th32ThreadID == sampler_tid) continue;
    unsigned i = 0;
    while (i < nwatched && watched[i].tid != te.th32ThreadID) i++;
    if (i < nwatched || nwatched == MAX_WATCHED) continue;
    HANDLE h = OpenThread(THREAD_SUSPEND_RESUME | THREAD_GET_CONTEXT | THREAD_QUERY_INFORMATION,
                          FALSE, te.th32ThreadID);
    if (!h) continue;
    struct watched *w = &watched[nwatched++];
    memset(w, 0, sizeof *w);
    w->tid = te.th32ThreadID;
    w->h = h;
    w->cpu_last = thread_cpu(h);
  }
  CloseHandle(snap);
}

/* The call tree of thread tid (hooked programs), or NULL. The registry is
** append-only while the process runs: read without the lock. */
static struct cp_thread *tree_of(DWORD tid)
{
  for (struct cp_thread *t = cp_g.threads; t; t = t->next)
    if (t->tid == tid && !t->end_ns) return t;
  return NULL;
}

#if CAPPROF_ARCH_X86_64
static void context_regs(const CONTEXT *c, struct sample_regs *r)
{
  r->pc = (uintptr_t)c->Rip;
  r->fp = (uintptr_t)c->Rbp;
  r->sp = (uintptr_t)c->Rsp;
}
#elif CAPPROF_ARCH_I386
static void context_regs(const CONTEXT *c, struct sample_regs *r)
{
  r->pc = (uintptr_t)c->Eip;
  r->fp = (uintptr_t)c->Ebp;
  r->sp = (uintptr_t)c->Esp;
}
#else
static void context_regs(const CONTEXT *c, struct sample_regs *r)
{
  (void)c;
  r->pc = r->fp = r->sp = 0;
}
#endif

/* The shortest interval of the running fallback sessions, 100 ns units. */
static uint64_t tick_units(void)
{
  uint64_t best = 0;
  for (unsigned i = 0; i < SAMPLE_MAX_SESSIONS; i++) {
    const struct sample_session *s = &sample_sessions[i];
    if (!s->used || !s->running || s->method != CPD_SM_SUSPEND) continue;
    uint64_t u = s->source->is_time ? s->interval / 100u : 10000u;
    if (u < 100) u = 100;
    if (!best || u < best) best = u;
  }
  return best ? best : 10000u;
}

/* One round: each thread that ran for an interval's worth of CPU time since
** the last round is suspended, read, charged (once per interval it ran)
** and resumed. Nothing here allocates while a thread is suspended. */
static void sample_round(uint64_t unit)
{
  for (unsigned i = 0; i < nwatched; i++) {
    struct watched *w = &watched[i];
    uint64_t cpu = thread_cpu(w->h);
    w->owed += cpu - w->cpu_last;
    w->cpu_last = cpu;
    if (w->owed < unit) continue;
    uint64_t weight = w->owed / unit;
    w->owed -= weight * unit;
    if (!w->st) w->st = sample_thread_claim(w->tid);
    struct cp_thread *tree = tree_of(w->tid);
    if (SuspendThread(w->h) == (DWORD)-1) continue;
    CONTEXT ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.ContextFlags = CONTEXT_CONTROL | CONTEXT_INTEGER;
    if (GetThreadContext(w->h, &ctx)) {
      struct sample_regs r;
      context_regs(&ctx, &r);
      for (unsigned k = 0; k < SAMPLE_MAX_SESSIONS; k++) {
        struct sample_session *s = &sample_sessions[k];
        if (!s->used || !s->running || s->method != CPD_SM_SUSPEND) continue;
        uint64_t own = s->source->is_time && s->interval / 100u > unit
                           ? weight * unit / (s->interval / 100u) : weight;
        for (uint64_t j = 0; j < own && j < 1000; j++) sample_hit(s, w->st, tree, &r);
      }
    }
    ResumeThread(w->h);
  }
}

static DWORD WINAPI sampler_main(void *arg)
{
  (void)arg;
  unsigned round = 0;
  while (!sampler_quit) {
    uint64_t unit = tick_units();
    if (round++ % 64 == 0) refresh_threads();
    DWORD ms = (DWORD)(unit / 10000u);
    Sleep(ms ? ms : 1);
    InterlockedExchange(&sampler_busy, 1);
    if (!sampler_quit) sample_round(unit);
    InterlockedExchange(&sampler_busy, 0);
  }
  return 0;
}

static int start_sampler_thread(char *why, size_t n)
{
  if (sampler) return 0;
  sampler_quit = 0;
  nwatched = 0;
  sampler = CreateThread(NULL, 64 * 1024, sampler_main, NULL, 0, &sampler_tid);
  if (!sampler) {
    snprintf(why, n, "CreateThread: error %lu", (unsigned long)GetLastError());
    return CAPPROF_ENOMEM;
  }
  SetThreadPriority(sampler, THREAD_PRIORITY_TIME_CRITICAL);
  return 0;
}

static void stop_sampler_thread(void)
{
  for (unsigned i = 0; i < SAMPLE_MAX_SESSIONS; i++) {
    const struct sample_session *s = &sample_sessions[i];
    if (s->used && s->running && s->method == CPD_SM_SUSPEND) return;   /* still needed */
  }
  if (!sampler) return;
  InterlockedExchange(&sampler_quit, 1);
  /* Wait for the round in progress only, not for the thread's exit: at
  ** process exit the loader lock may be held, and a thread cannot end
  ** without it. At ExitProcess the thread is already gone. */
  for (int i = 0; i < 1000 && sampler_busy && !win_shutting_down(); i++) Sleep(1);
  CloseHandle(sampler);
  sampler = NULL;
}

/* ---- the back end's interface ----------------------------------------------- */

int sampler_probe(const struct sample_source *src, char *why, size_t n)
{
  if (src->is_time) return 0;        /* the sampler thread reads CPU time */
  if (nt_available() && kprofile_source(src->code) >= 0) return 0;
  snprintf(why, n, "%s: ntdll has no NtCreateProfileEx (wine), and the suspend-and-read "
           "sampler measures CPU time only", src->name);
  return CAPPROF_ENOTSUP;
}

int sampler_start(struct sample_session *s, char *why, size_t n)
{
  char reason[160];
  reason[0] = '\0';
  if (nt_start(s, reason, sizeof reason) == 0) return 0;
  if (!s->source->is_time) {
    snprintf(why, n, "%s", reason[0] ? reason : "no executive profile objects for this source");
    return CAPPROF_ENOTSUP;
  }
  s->method = CPD_SM_SUSPEND;
  int rc = start_sampler_thread(why, n);
  if (rc) return rc;
  snprintf(s->method_text, sizeof s->method_text,
           "sampler thread: suspend, GetThreadContext, resume, per CPU-time interval");
  if (s->kind == CPD_SK_OBJECT)
    snprintf(s->note, sizeof s->note, "no executive profile object%s%s",
             reason[0] ? ": " : " (ntdll lacks NtCreateProfileEx)", reason);
  return 0;
}

void sampler_stop(struct sample_session *s)
{
  if (s->method == CPD_SM_NT_PROFILE) {
    struct nt_object *o = s->backend;
    if (o && o->profile) nt_stop_profile(o->profile);
    uint64_t hits = 0;
    for (uint32_t i = 0; i < s->nbuckets; i++) hits += s->buckets[i];
    s->hits = s->samples = hits;     /* the kernel counts in-range samples only */
    return;
  }
  stop_sampler_thread();
}

int sampler_set_interval(struct sample_session *s)
{
  if (s->method == CPD_SM_NT_PROFILE) {
    int src = kprofile_source(s->source->code);
    ULONG units = s->source->is_time ? (ULONG)(s->interval / 100u) : (ULONG)s->interval;
    return nt_set_interval_profile(units, src) < 0 ? CAPPROF_ENOTSUP : 0;
  }
  return 0;                          /* the sampler thread reads it every round */
}

void sampler_fork_child(void) {}     /* no fork on Windows */

/* The sampler thread finds new threads itself (Toolhelp snapshots). */
void sampler_thread_begin(void) {}

int sampler_module_range(const void *addr, uintptr_t *lo, uintptr_t *hi)
{
  HMODULE m = NULL;
  if (!addr) m = GetModuleHandleW(NULL);
  else if (!GetModuleHandleExW(GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS |
                               GET_MODULE_HANDLE_EX_FLAG_UNCHANGED_REFCOUNT, (LPCWSTR)addr, &m))
    m = NULL;
  if (!m) return CAPPROF_EINVAL;
  const unsigned char *base = (const unsigned char *)m;
  const IMAGE_DOS_HEADER *dos = (const IMAGE_DOS_HEADER *)base;
  const IMAGE_NT_HEADERS *nt = (const IMAGE_NT_HEADERS *)(base + dos->e_lfanew);
  const IMAGE_SECTION_HEADER *sec = IMAGE_FIRST_SECTION(nt);
  uintptr_t a = UINTPTR_MAX, b = 0;
  for (unsigned i = 0; i < nt->FileHeader.NumberOfSections; i++) {
    if (!(sec[i].Characteristics & IMAGE_SCN_MEM_EXECUTE)) continue;
    uintptr_t s = (uintptr_t)base + sec[i].VirtualAddress;
    uintptr_t e = s + (sec[i].Misc.VirtualSize ? sec[i].Misc.VirtualSize : sec[i].SizeOfRawData);
    if (s < a) a = s;
    if (e > b) b = e;
  }
  if (a >= b) return CAPPROF_EINVAL;
  *lo = a;
  *hi = b;
  return 0;
}

/* Sampling through a ring buffer the hooks read is Linux's (sample/sample_posix.c):
** here a thread never has a ring, and its hooks' check reads ring_seen. */
int sampler_ring_start(struct sample_session *s, char *why, size_t n)
{
  (void)s;
  snprintf(why, n, "no ring-buffer sampling on Windows");
  return CAPPROF_ENOTSUP;
}
void sampler_ring_open(struct cp_thread *t) { (void)t; }
void sampler_ring_end(struct cp_thread *t) { (void)t; }
void sampler_ring_flush(void) {}
void sampler_ring_fork_prepare(void) {}
void sampler_ring_fork_parent(void) {}
void cp_ring_drain(struct cp_thread *t) { (void)t; }
void sampler_note(struct sample_session *s) { (void)s; }
