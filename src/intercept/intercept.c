/*
** intercept.c -- the portable half of API interception (WAP's job): which
** libraries are selected (CAPPROF_API), the registry of intercepted library
** functions (id -> library, symbol), the per-thread return stack of the
** trampolines, the entry and exit bookkeeping on the thread's call tree,
** the probe-cost calibration, and the counts of what was left alone.
**
** A platform back end (src/intercept/plt_posix.c: ELF GOT slots; src/intercept/iat_win.c:
** import address tables) finds the import slots, makes one stub per
** (function, target) and calls the intercept_* functions declared in
** internal.h; the contract is written there. An intercepted call is a node
** keyed CPD_KEY_API | id under the thread's current node, like a hooked
** call; callbacks it makes into the program nest under it.
*/
#include <string.h>

#include "../core/core.h"
#include "../hooks/hotpath.h"
#include "intercept.h"
#include "../dump/dump.h"
#include "../core/settings.h"

#define API_MAX        65536u          /* distinct functions; later ones are skipped */
#define API_HASH       (2u * API_MAX)
#define ARENA_BYTES    ((size_t)8 << 20)
#define ARENA_CHUNK    ((size_t)64 << 10)
#define SKIPS_MAX      4096u           /* (reason, library, symbol) records */
#define RSTACK_BYTES   ((size_t)1 << 20)  /* per thread: 43,690 nested calls */

struct api_entry {
  const char *library;   /* base name, as the back end gave it */
  const char *symbol;
  uint32_t liblen, symlen;
};

struct skip_entry {
  uint32_t reason;       /* CPD_SKIP_* */
  uint32_t pad_;
  uint64_t slots;        /* import slots left alone for it */
  const char *library, *symbol;
};

/* Registry and statistics. Entries are written under os_lock and read
** lock-free: entry i is complete before count is raised past i. */
static struct {
  struct api_entry *e;
  uint32_t *hash;               /* id + 1, 0 empty */
  char *arena;
  size_t arena_used, arena_committed;
  volatile uint32_t count;
  int ready;                    /* 1 ok, -1 reservation failed */
  struct skip_entry *skips;
  volatile uint32_t nskips;
  char spec[1024];              /* CAPPROF_API as given */
  int all;                      /* spec "all" */
  uint32_t status;              /* CPD_IS_* */
  uint64_t modules, slots;      /* modules and slots patched */
  volatile uint64_t unrecorded; /* calls passed through unrecorded: no room */
  uint64_t inner_mt, outer_mt;  /* probe cost per intercepted call, milli-ticks */
  uintptr_t ret_tramp;          /* the back end's return trampoline */
} A;

/* ---- selection ------------------------------------------------------------ */

/* The default set: the C and C++ runtimes and libm, and on Windows the DLLs
** WAP profiled. */
static const char *const default_libs[] = {
  "libc.so", "libm.so", "libstdc++.so", "libpthread.so", "libdl.so", "librt.so",
  "kernel32.dll", "user32.dll", "gdi32.dll", "advapi32.dll", "msvcrt.dll",
  "ucrtbase.dll", "api-ms-win-crt", "vcruntime140", NULL
};

static int lower(int c) { return c >= 'A' && c <= 'Z' ? c + 32 : c; }

/* name (a module's base name) is selected by one spec word w of length n:
** equal, or w followed by a '.' or '-' in name (libm is libm.so.6, libc.so
** is libc.so.6 but not libcrypto.so). Case is ignored (DLL names). */
static int word_matches(const char *w, size_t n, const char *name)
{
  size_t i = 0;
  for (; i < n; i++)
    if (!name[i] || lower((unsigned char)name[i]) != lower((unsigned char)w[i])) return 0;
  return name[i] == '\0' || name[i] == '.' || name[i] == '-';
}

int intercept_selects(const char *name)
{
  if (!name || !*name || !A.spec[0]) return 0;
  if (A.all) return 1;
  const char *s = A.spec;
  if (!strcmp(s, "default")) {
    for (int i = 0; default_libs[i]; i++)
      if (word_matches(default_libs[i], strlen(default_libs[i]), name)) return 1;
    return 0;
  }
  while (*s) {
    const char *e = s;
    while (*e && *e != ',') e++;
    if (e > s && word_matches(s, (size_t)(e - s), name)) return 1;
    s = *e ? e + 1 : e;
  }
  return 0;
}

/* Returning twice, unwinding, or sharing the caller's thread state: a moved
** return address would break these, so they are never patched. */
static const struct { const char *name; uint32_t reason; } unsafe[] = {
  { "setjmp", CPD_SKIP_RETURNS_TWICE }, { "_setjmp", CPD_SKIP_RETURNS_TWICE },
  { "sigsetjmp", CPD_SKIP_RETURNS_TWICE }, { "__sigsetjmp", CPD_SKIP_RETURNS_TWICE },
  { "savectx", CPD_SKIP_RETURNS_TWICE }, { "vfork", CPD_SKIP_RETURNS_TWICE },
  { "__vfork", CPD_SKIP_RETURNS_TWICE }, { "getcontext", CPD_SKIP_RETURNS_TWICE },
  { "swapcontext", CPD_SKIP_RETURNS_TWICE }, { "setcontext", CPD_SKIP_RETURNS_TWICE },
  { "makecontext", CPD_SKIP_RETURNS_TWICE },
  { "longjmp", CPD_SKIP_UNWINDS }, { "_longjmp", CPD_SKIP_UNWINDS },
  { "siglongjmp", CPD_SKIP_UNWINDS }, { "__longjmp_chk", CPD_SKIP_UNWINDS },
  { "pthread_exit", CPD_SKIP_UNWINDS }, { "__pthread_unwind_next", CPD_SKIP_UNWINDS },
  { "__cxa_throw", CPD_SKIP_UNWINDS }, { "__cxa_rethrow", CPD_SKIP_UNWINDS },
  { "__cxa_begin_catch", CPD_SKIP_UNWINDS }, { "__cxa_end_catch", CPD_SKIP_UNWINDS },
  { "__cxa_call_unexpected", CPD_SKIP_UNWINDS }, { "__cxa_call_terminate", CPD_SKIP_UNWINDS },
  { "_ZSt17rethrow_exceptionNSt15__exception_ptr13exception_ptrE", CPD_SKIP_UNWINDS },
  { "_ZSt9terminatev", CPD_SKIP_UNWINDS },
  { "RtlUnwind", CPD_SKIP_UNWINDS }, { "RtlUnwindEx", CPD_SKIP_UNWINDS },
  { "RaiseException", CPD_SKIP_UNWINDS }, { "_CxxThrowException", CPD_SKIP_UNWINDS },
  { "__libc_start_main", CPD_SKIP_START }, { "__libc_start_call_main", CPD_SKIP_START },
  { "clone", CPD_SKIP_SHARES_STACK }, { "clone3", CPD_SKIP_SHARES_STACK },
  { "__clone", CPD_SKIP_SHARES_STACK },
};

uint32_t intercept_unsafe(const char *symbol)
{
  if (!symbol) return CPD_SKIP_SLOT;
  if (!strncmp(symbol, "_Unwind_", 8)) return CPD_SKIP_UNWINDS;
  if (strstr(symbol, "__throw_")) return CPD_SKIP_UNWINDS;    /* std::__throw_* */
  for (size_t i = 0; i < sizeof unsafe / sizeof unsafe[0]; i++)
    if (!strcmp(symbol, unsafe[i].name)) return unsafe[i].reason;
  return 0;
}

/* ---- registry (under os_lock) ----------------------------------------------- */

static uint32_t str_hash(const char *a, size_t an, const char *b, size_t bn)
{
  uint32_t h = 2166136261u;                            /* FNV-1a */
  for (size_t i = 0; i < an; i++) h = (h ^ (unsigned char)a[i]) * 16777619u;
  h = (h ^ 0xFFu) * 16777619u;
  for (size_t i = 0; i < bn; i++) h = (h ^ (unsigned char)b[i]) * 16777619u;
  return h;
}

static int registry_ready(void)
{
  if (A.ready) return A.ready > 0;
  A.ready = -1;
  size_t eb = (size_t)API_MAX * sizeof(struct api_entry), hb = (size_t)API_HASH * 4;
  size_t sb = (size_t)SKIPS_MAX * sizeof(struct skip_entry);
  struct api_entry *e = os_reserve(eb);
  uint32_t *hash = os_reserve(hb);
  struct skip_entry *skips = os_reserve(sb);
  char *arena = os_reserve(ARENA_BYTES);
  if (!e || !hash || !skips || !arena || os_commit(e, eb) || os_commit(hash, hb) ||
      os_commit(skips, sb)) {
    os_release(e, eb);
    os_release(hash, hb);
    os_release(skips, sb);
    os_release(arena, ARENA_BYTES);
    return 0;
  }
  A.e = e;
  A.hash = hash;
  A.skips = skips;
  A.arena = arena;
  A.ready = 1;
  return 1;
}

static const char *arena_copy(const char *s, size_t len)
{
  size_t need = A.arena_used + len + 1;
  if (need > ARENA_BYTES) return NULL;
  if (need > A.arena_committed) {
    size_t want = (need + ARENA_CHUNK - 1) / ARENA_CHUNK * ARENA_CHUNK;
    if (want > ARENA_BYTES) want = ARENA_BYTES;
    if (os_commit(A.arena + A.arena_committed, want - A.arena_committed) != 0) return NULL;
    A.arena_committed = want;
  }
  char *p = A.arena + A.arena_used;
  memcpy(p, s, len);
  p[len] = '\0';
  A.arena_used = need;
  return p;
}

uint32_t intercept_register(const char *library, const char *symbol)
{
  size_t ln = strlen(library), sn = strlen(symbol);
  uint32_t id = UINT32_MAX;
  os_lock();
  if (!registry_ready()) goto out;
  uint32_t slot = str_hash(library, ln, symbol, sn) & (API_HASH - 1), v;
  while ((v = A.hash[slot]) != 0) {
    const struct api_entry *e = &A.e[v - 1];
    if (e->liblen == ln && e->symlen == sn && !memcmp(e->library, library, ln) &&
        !memcmp(e->symbol, symbol, sn)) {
      id = v - 1;
      goto out;
    }
    slot = (slot + 1) & (API_HASH - 1);
  }
  if (A.count >= API_MAX) goto out;
  const char *l = arena_copy(library, ln), *s = l ? arena_copy(symbol, sn) : NULL;
  if (!s) goto out;
  id = A.count;
  A.e[id].library = l;
  A.e[id].symbol = s;
  A.e[id].liblen = (uint32_t)ln;
  A.e[id].symlen = (uint32_t)sn;
  A.hash[slot] = id + 1;
  CP_BARRIER();
  A.count = id + 1;
out:
  os_unlock();
  return id;
}

uint32_t intercept_count(void)
{
  uint32_t n = A.count;
  CP_BARRIER();
  return n;
}

void intercept_name(uint32_t id, const char **library, const char **symbol)
{
  int ok = id < A.count;
  *library = ok ? A.e[id].library : "";
  *symbol = ok ? A.e[id].symbol : "";
}

void intercept_skip(uint32_t reason, const char *library, const char *symbol)
{
  os_lock();
  if (!registry_ready()) goto out;
  for (uint32_t i = 0; i < A.nskips; i++) {
    struct skip_entry *k = &A.skips[i];
    if (k->reason == reason && !strcmp(k->library, library) && !strcmp(k->symbol, symbol)) {
      k->slots++;
      goto out;
    }
  }
  if (A.nskips >= SKIPS_MAX) goto out;
  const char *l = arena_copy(library, strlen(library));
  const char *s = l ? arena_copy(symbol, strlen(symbol)) : NULL;
  if (!s) goto out;
  struct skip_entry *k = &A.skips[A.nskips];
  k->reason = reason;
  k->slots = 1;
  k->library = l;
  k->symbol = s;
  CP_BARRIER();
  A.nskips++;
out:
  os_unlock();
}

uint32_t intercept_skip_count(void)
{
  uint32_t n = A.nskips;
  CP_BARRIER();
  return n;
}

void intercept_skip_get(uint32_t i, uint32_t *reason, uint64_t *slots, const char **library,
                        const char **symbol)
{
  const struct skip_entry *k = &A.skips[i];
  *reason = k->reason;
  *slots = k->slots;
  *library = k->library;
  *symbol = k->symbol;
}

void intercept_patched(uint64_t modules, uint64_t slots)
{
  os_lock();
  A.modules += modules;
  A.slots += slots;
  os_unlock();
}

void intercept_summary(struct intercept_summary *s)
{
  s->status = A.status;
  s->modules = A.modules;
  s->slots = A.slots;
  s->unrecorded = A.unrecorded;
  s->inner_mt = A.inner_mt;
  s->outer_mt = A.outer_mt;
  s->spec = A.spec;
}

/* ---- start ------------------------------------------------------------------ */

void intercept_set_spec(const char *spec)
{
  size_t n = spec ? strlen(spec) : 0;
  if (n >= sizeof A.spec) n = sizeof A.spec - 1;
  if (n) memcpy(A.spec, spec, n);
  A.spec[n] = '\0';
  A.all = !strcmp(A.spec, "all");
}

void intercept_start(void)
{
  const char *spec = settings_str(SET_API);
  if (!spec || !*spec || cp_g.disabled) return;
  intercept_set_spec(spec);
  uint32_t q = intercept_quiet_begin();
  A.status = (uint32_t)os_intercept_start();
  intercept_quiet_end(q);
}

uint32_t intercept_quiet_begin(void)
{
  struct cp_thread *t = os_get_thread();
  if (!t) t = runtime_thread_slow();
  uint32_t saved = t->gate;
  if (runtime_thread_real(t)) t->gate = CP_GATE_BUSY;
  return saved;
}

void intercept_quiet_end(uint32_t saved)
{
  struct cp_thread *t = os_get_thread();
  if (t && runtime_thread_real(t)) t->gate = saved;
}

uintptr_t intercept_return_trampoline(void)
{
  return A.ret_tramp;
}

void intercept_set_return_trampoline(uintptr_t addr)
{
  A.ret_tramp = addr;
}

/* ---- the per-thread return stack -------------------------------------------- */

static struct cp_rstack *rstack_new(struct cp_thread *t)
{
  uint32_t saved = t->gate;
  t->gate = CP_GATE_BUSY;                      /* a signal handler's calls pass by */
  os_errsave e = os_save_errors();
  struct cp_rstack *r = os_reserve(RSTACK_BYTES);
  if (r && os_commit(r, RSTACK_BYTES) != 0) {
    os_release(r, RSTACK_BYTES);
    r = NULL;
  }
  if (r) {
    r->top = r->base;
    r->end = r->base + (RSTACK_BYTES - sizeof *r) / sizeof(struct icpt_ret);
    r->base[0].slot = (uintptr_t *)UINTPTR_MAX;     /* the sentinel is never popped */
    t->rstack = r;
  }
  os_restore_errors(e);
  t->gate = saved;
  return r;
}

void intercept_thread_free(struct cp_thread *t)
{
  if (t->rstack) os_release(t->rstack, RSTACK_BYTES);
  t->rstack = NULL;
}

/* Drop the entries of calls that ended without returning (longjmp, an
** exception): a new call's return address is at slot, so every entry below
** it is dead, and so is one at it unless the new call is a tail call made by
** that one (tail: the slot holds the return trampoline already), when both
** are on the same stack. On a signal stack nothing is dropped: the
** interrupted calls below may be live. */
static struct icpt_ret *rstack_prune(struct cp_rstack *r, uintptr_t *slot, int tail)
{
  struct icpt_ret *e = r->top;
  if (os_on_alt_stack((uintptr_t)slot)) return e;
  while (e > r->base && (e->slot < slot || (e->slot == slot && !tail))) e--;
  r->top = e;
  return e;
}

/* ---- entry and exit (called by the back end's trampolines) ------------------ */

/* When the thread's state exists and the node is its parent's hot child:
** the TLS load, the gate compare, a return-stack entry, then cp_hot_enter.
** No lock, no allocation; errno is untouched. */
void *intercept_enter(const struct icpt_stub *s, uintptr_t *slot)
{
  return intercept_enter_thread(os_get_thread(), s, slot);
}

void *intercept_enter_thread(struct cp_thread *t, const struct icpt_stub *s, uintptr_t *slot)
{
  if (CP_UNLIKELY(!t)) t = runtime_thread_slow();
  if (!cp_hook_sync(t)) return s->real;      /* and samples of the caller's path */
  struct cp_rstack *r = t->rstack;
  if (CP_UNLIKELY(!r) && !(r = rstack_new(t))) {
    A.unrecorded++;
    return s->real;
  }
  /* A library function that tail-calls another intercepted one hands it
  ** its own return address: already the trampoline. The call is recorded
  ** nested in the first, and both end at the one return (intercept_exit). */
  uintptr_t orig = *slot;
  int tail = orig == A.ret_tramp;
  struct icpt_ret *e = r->top;
  if (CP_UNLIKELY(e->slot < slot || (e->slot == slot && !tail))) e = rstack_prune(r, slot, tail);
  if (CP_UNLIKELY(e + 1 >= r->end)) {
    A.unrecorded++;
    return s->real;
  }
  intercept_rpush(r, e, slot, orig, s->id);
  *slot = A.ret_tramp;
  uint64_t key = CPD_KEY_API | s->id;
  uintptr_t sp = (uintptr_t)slot - 16;
  if (CP_UNLIKELY(!cp_hot_enter_try_read(t, key, sp, intercept_read_mode())))
    cp_hot_enter(t, key, sp, 0);
  return s->real;
}

/* The matching entry for a return to after (one past its slot). Entries
** above it belong to calls that were left without returning. */
static struct icpt_ret *find_entry(struct cp_rstack *r, uintptr_t *slot)
{
  struct icpt_ret *e = r->top;
  while (e > r->base && e->slot != slot) e--;
  return e > r->base ? e : r->top;      /* not found cannot happen: best guess */
}

void *intercept_exit(uintptr_t *after)
{
  return intercept_exit_thread(os_get_thread(), after);
}

/* The clock read that ends an intercepted call is the plain one (rdtsc, not
** rdtscp): the return into the trampoline is a mispredicted branch, so the
** read comes after the callee's return address was loaded, and the callee's
** last instructions may retire a few ns later at most. rdtscp would cost
** ~10 ns more per call (bench/run_api.sh); library calls are longer than the
** difference. */
void *intercept_exit_thread(struct cp_thread *t, uintptr_t *after)
{
  uint64_t now = cp_now();
  uintptr_t *slot = after - 1;
  struct cp_rstack *r = t->rstack;
  int record = CP_LIKELY(t->gate == cp_g.gate) || !runtime_sync(t);
  if (cp_ring_pending(t)) cp_ring_drain(t);   /* samples of the returning call */
  uintptr_t orig;
  do {                        /* more than once after tail calls (see enter) */
    struct icpt_ret *e = r->top;
    if (CP_UNLIKELY(e->slot != slot)) e = find_entry(r, slot);
    orig = e->orig;
    uint32_t id = e->id;
    r->top = e - 1;
    if (record) {
      uint64_t key = CPD_KEY_API | id;
      struct cp_frame *f = t->top;
      struct cp_node *n = &t->nodes[f->node];
      if (CP_LIKELY(n->key == key)) {              /* cp_hot_exit's common case */
        calltree_charge(n, now - t->debt - f->tstart);   /* the thread clock */
        t->top = f - 1;
      } else {
        cp_hot_exit(t, key, (uintptr_t)slot - 16, 1);
      }
    }
  } while (CP_UNLIKELY(orig == A.ret_tramp) && r->top > r->base);
  return (void *)orig;
}

/* ---- unwinders ----------------------------------------------------------------- */

void intercept_restore_returns(uintptr_t sp)
{
  struct cp_thread *t = os_get_thread();
  struct cp_rstack *r = t ? t->rstack : NULL;
  if (!r || !runtime_thread_real(t)) return;
  struct icpt_ret *e = r->top;
  while (e > r->base && (uintptr_t)e->slot < sp) e--;      /* dead already */
  r->top = e;
  for (; e > r->base; e--) {
    if (!e->restored && *e->slot == A.ret_tramp) {
      *e->slot = e->orig;
      e->restored = 1;
    }
  }
}

void intercept_rehook(uintptr_t sp)
{
  struct cp_thread *t = os_get_thread();
  struct cp_rstack *r = t ? t->rstack : NULL;
  if (!r || !runtime_thread_real(t)) return;
  struct icpt_ret *e = r->top;
  while (e > r->base && (uintptr_t)e->slot < sp) e--;      /* unwound */
  r->top = e;
  for (; e > r->base; e--) {
    if (e->restored && *e->slot == e->orig) {
      *e->slot = A.ret_tramp;
      e->restored = 0;
    }
  }
}

/* ---- calibration ---------------------------------------------------------------- */

#define CAL_WARMUP 10
#define CAL_ROUNDS 100
#define CAL_CALLS  50

static uint64_t cal_round(void (*volatile fn)(void))
{
  uint64_t t0 = cp_now();
  for (int i = 0; i < CAL_CALLS; i++) fn();
  return cp_now() - t0;
}

/* Ticks the intercepted calls recorded so far in the scratch tree. */
static uint64_t cal_own(const struct cp_thread *t)
{
  uint64_t sum = 0;
  for (uint32_t i = CP_FIRST_NODE; i < t->nnodes; i++)
    if (CPD_KEY_IS_API(t->nodes[i].key)) sum += t->nodes[i].incl;
  return sum;
}

/* The probe cost of an intercepted call, as the hooks' (clock.c): each round
** through the trampolines against the plain round right after it, per call,
** the median of the rounds. inner: how much more than the plain call the
** call measured for itself; outer: how much more it cost its caller. (Inner
** was once the single shortest call: 10 ns where a typical call holds 17,
** which left 7 ns in every intercepted strlen.)
** Called once per start; a later call keeps the pair with the smaller
** outer. */
void intercept_calibrate(void (*through)(void), void (*plain)(void))
{
  struct cp_thread *scratch = calltree_new(64);
  if (!scratch) return;
  struct cp_thread *saved = os_get_thread();
  scratch->gate = cp_g.gate;
  scratch->calibrating = 1;
  os_set_thread(scratch);
  uint64_t outs[CAL_ROUNDS], ins[CAL_ROUNDS];
  for (int k = 0; k < CAL_WARMUP + CAL_ROUNDS; k++) {
    uint64_t own = cal_own(scratch);
    uint64_t a = cal_round(through);
    own = cal_own(scratch) - own;
    uint64_t b = cal_round(plain);
    if (k < CAL_WARMUP) continue;
    outs[k - CAL_WARMUP] = a > b ? a - b : 0;
    ins[k - CAL_WARMUP] = own > b ? own - b : 0;
  }
  os_set_thread(saved);
  uint64_t calls = 0;
  for (uint32_t i = CP_FIRST_NODE; i < scratch->nnodes; i++)
    if (CPD_KEY_IS_API(scratch->nodes[i].key)) calls += scratch->nodes[i].calls;
  uint64_t outer = cp_median(outs, CAL_ROUNDS), inner = cp_median(ins, CAL_ROUNDS);
  if (calls >= (uint64_t)(CAL_WARMUP + CAL_ROUNDS) * CAL_CALLS && outer > 0 && inner > 0)
    cp_keep_pair(&A.inner_mt, &A.outer_mt, inner * 1000 / CAL_CALLS, outer * 1000 / CAL_CALLS);
  calltree_free(scratch);                /* and its return stack */
}

/* API: the intercepted functions' names, then INTERCEPT (status, counts,
** probe cost) and INTERCEPT_SKIPS (what was left alone). Only when API
** interception was asked for. The API count is taken after the nodes were
** written: an id is published before a node can carry it. */
static void dump_sections(struct dump_writer *w, const struct dump_rows *rows)
{
  (void)rows;
  struct intercept_summary sum;
  intercept_summary(&sum);
  if (sum.status == CPD_IS_OFF && !intercept_count()) return;
  uint64_t s = dumpw_begin(w);
  uint32_t n = intercept_count();
  dumpw_u32(w, n);
  for (uint32_t id = 0; id < n; id++) {
    const char *lib, *sym;
    intercept_name(id, &lib, &sym);
    dumpw_u32(w, id);
    dumpw_u32(w, 0);
    dumpw_str(w, lib);
    dumpw_str(w, sym);
  }
  dumpw_end(w, CPD_SEC_API, s);

  s = dumpw_begin(w);
  dumpw_u32(w, sum.status);
  dumpw_u32(w, 0);
  dumpw_u64(w, sum.modules);
  dumpw_u64(w, sum.slots);
  dumpw_u64(w, sum.unrecorded);
  dumpw_u64(w, sum.inner_mt);
  dumpw_u64(w, sum.outer_mt);
  dumpw_str(w, sum.spec);
  dumpw_end(w, CPD_SEC_INTERCEPT, s);

  s = dumpw_begin(w);
  uint32_t k = intercept_skip_count();
  dumpw_u32(w, k);
  for (uint32_t i = 0; i < k; i++) {
    uint32_t reason;
    uint64_t slots;
    const char *lib, *sym;
    intercept_skip_get(i, &reason, &slots, &lib, &sym);
    dumpw_u32(w, reason);
    dumpw_u32(w, 0);
    dumpw_u64(w, slots);
    dumpw_str(w, lib);
    dumpw_str(w, sym);
  }
  dumpw_end(w, CPD_SEC_INTERCEPT_SKIPS, s);
}

/* API interception's part in the core's life cycle (src/features.c): import
** slots patched at start-up (CAPPROF_API). */
const struct cp_feature intercept_feature = {
  .name = "intercept",
  .start = intercept_start,
  .thread_free = intercept_thread_free,
  .dump = dump_sections,
};
