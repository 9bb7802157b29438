/*
** sample.c -- sampling, the portable part: profile objects (an address range
** counted in buckets, started and stopped at will, as NT's profile objects),
** the process-wide sampling of CAPPROF_SAMPLE (each sample charged to the
** call-tree node on top of the thread's shadow stack, and its program
** counter and frame-pointer stack recorded per thread), and their dump
** sections. The sampler back ends (sample/sample_posix.c, sample/sample_win.c) deliver
** samples to sample_hit from a signal handler or a sampler thread.
*/
#include <string.h>

#include "sample.h"
#include "../dump/dump.h"
#include "../patch/patch.h"
#include "../core/settings.h"

struct sample_session sample_sessions[SAMPLE_MAX_SESSIONS];

static const struct sample_source sources[] = {
  { "time", CPD_SRC_TASK_CLOCK, 1 },
  { "task-clock", CPD_SRC_TASK_CLOCK, 1 },
  { "cpu-clock", CPD_SRC_CPU_CLOCK, 1 },
  { "cpu-timer", CPD_SRC_CPU_TIMER, 1 },
  { "cycles", CPD_SRC_CYCLES, 0 },
  { "instructions", CPD_SRC_INSTRUCTIONS, 0 },
  { "branches", CPD_SRC_BRANCHES, 0 },
  { "branch-misses", CPD_SRC_BRANCH_MISSES, 0 },
  { "cache-references", CPD_SRC_CACHE_REFERENCES, 0 },
  { "cache-misses", CPD_SRC_CACHE_MISSES, 0 },
};
#define NSOURCES (sizeof sources / sizeof sources[0])

#define DEFAULT_TIME_NS   1000000u      /* 1 ms */
#define DEFAULT_RING_NS   250000u       /* the default sampling's: 4 kHz of CPU time */
#define DEFAULT_TIMER_NS  1000000u      /* the timer fallback's: 1 ms (it fires on the tick) */
#define DEFAULT_EVENTS    1000000u
#define MIN_TIME_NS       10000u        /* 10 us: below it the handler is the profile */
#define MAX_BUCKETS       (1u << 26)

const struct sample_source *sample_find_source(const char *name)
{
  for (size_t i = 0; name && i < NSOURCES; i++)
    if (!strcmp(sources[i].name, name)) return &sources[i];
  return NULL;
}

int sample_parse_interval(const char *s, int is_time, uint64_t *out)
{
  if (!s || !*s) return CAPPROF_EINVAL;
  uint64_t v = 0;
  const char *p = s;
  for (; *p >= '0' && *p <= '9'; p++) {
    if (v > UINT64_MAX / 10 - 10) return CAPPROF_EINVAL;
    v = v * 10 + (uint64_t)(*p - '0');
  }
  if (p == s || v == 0) return CAPPROF_EINVAL;
  uint64_t mul;
  if (is_time) {
    if (!strcmp(p, "ns")) mul = 1;
    else if (!strcmp(p, "us")) mul = 1000;
    else if (!strcmp(p, "ms")) mul = 1000000;
    else if (!strcmp(p, "s")) mul = 1000000000;
    else return CAPPROF_EINVAL;               /* a time needs its unit */
    if (v > UINT64_MAX / mul || v * mul < MIN_TIME_NS) return CAPPROF_EINVAL;
  } else {
    if (!*p) mul = 1;
    else if (!strcmp(p, "k")) mul = 1000;
    else if (!strcmp(p, "M")) mul = 1000000;
    else return CAPPROF_EINVAL;
    if (v > UINT64_MAX / mul || v * mul < 1000) return CAPPROF_EINVAL;
  }
  *out = v * mul;
  return 0;
}

/* ---- per-thread state ----------------------------------------------------- */

static struct sample_thread *pool[SAMPLE_MAX_THREADS];
static uint32_t pool_claimed;      /* may run past SAMPLE_MAX_THREADS: then full */

static size_t page_round(size_t n)
{
  size_t pg = os_page_size();
  return (n + pg - 1) / pg * pg;
}

/* Reserve and commit zeroed memory; the OS backs it with pages only as they
** are touched. NULL when out of address space. */
static void *zeroed(size_t bytes)
{
  void *p = os_reserve(bytes);
  if (p && os_commit(p, bytes) != 0) {
    os_release(p, bytes);
    p = NULL;
  }
  return p;
}

struct sample_thread *sample_thread_claim(uint64_t tid)
{
  uint32_t i = SAMPLE_CLAIM(&pool_claimed);
  if (i >= SAMPLE_MAX_THREADS) return NULL;
  /* One mapping for all of it (a program that starts many short threads
  ** must not run out of mappings): the state, the sampled stacks and their
  ** table, the (node, pc) table, and the samples per call-tree node, both
  ** halves, for the node cap every thread's tree has. Reserved without
  ** swap (MAP_NORESERVE); only the pages touched take memory. */
  size_t head = page_round(sizeof(struct sample_thread));
  size_t nodes = page_round(SAMPLE_STACK_NODES * sizeof(struct sample_snode));
  size_t table = page_round(2 * SAMPLE_STACK_NODES * sizeof(uint32_t));
  size_t pcs = page_round(SAMPLE_PC_SLOTS * sizeof(struct sample_pc));
  size_t per_node = page_round((size_t)cp_g.node_cap * sizeof(uint32_t));
  char *mem = zeroed(head + nodes + table + pcs + 2 * per_node);
  if (!mem) return NULL;
  struct sample_thread *st = (struct sample_thread *)mem;
  st->tid = tid;
  st->nodes = (struct sample_snode *)(mem + head);
  st->table = (uint32_t *)(mem + head + nodes);
  st->pcs_area = (struct sample_pc *)(mem + head + nodes + table);
  st->node_area = (uint32_t *)(mem + head + nodes + table + pcs);
  st->node_area_bytes = per_node;
  st->mask = 2 * SAMPLE_STACK_NODES - 1;
  st->nodes[0].parent = CPD_NO_PARENT;          /* the root */
  st->nnodes = 1;
  CP_BARRIER();
  pool[i] = st;
  return st;
}

/* Zero the samples charged to nodes (both halves) up to the highest one,
** and the (node, pc) table. */
static void clear_node_samples(struct sample_thread *st)
{
  if (st->node_samples) {
    memset(st->node_samples, 0, (size_t)st->node_hw * sizeof(uint32_t));
    memset(st->probe_samples, 0, (size_t)st->node_hw * sizeof(uint32_t));
  }
  if (st->pcs && st->pcs_used) memset(st->pcs, 0, SAMPLE_PC_SLOTS * sizeof *st->pcs);
  st->pcs_used = 0;
  st->node_hw = 0;
}

/* Count a program sample at pc charged to node in st's (node, pc) table:
** open addressing, at most SAMPLE_PC_PROBES slots tried; a pair that finds
** none is not kept (its node has the sample either way). Only the thread's
** own handler writes; a slot's pc is published last, so that a dump that
** sees it sees its node. */
static void count_pc(struct sample_thread *st, uint32_t node, uint64_t pc)
{
  uint64_t h = (pc ^ (uint64_t)node << 40) * UINT64_C(0x9E3779B97F4A7C15);
  for (uint32_t i = 0, k = (uint32_t)(h >> 40); i < SAMPLE_PC_PROBES; i++, k++) {
    struct sample_pc *e = &st->pcs[k & (SAMPLE_PC_SLOTS - 1)];
    if (e->pc == pc && e->node == node) {
      if (e->count < UINT32_MAX) e->count++;
      return;
    }
    if (e->pc == 0 && st->pcs_used < SAMPLE_PC_SLOTS / 4 * 3) {
      e->node = node;
      e->count = 1;
      SAMPLE_PUBLISH64(&e->pc, pc);
      st->pcs_used++;
      return;
    }
  }
}

/* The runtime's hook code (CP_PROBE_CODE): a sample whose program counter
** is in it measures the probe, not the program. */
#if CP_HAVE_PROBE_SECTION == 1
/* ELF: the linker defines these for the section; weak, so that a build
** without it links and classifies nothing as probe. */
extern const char __start_capprof_probe[] __attribute__((weak, visibility("hidden")));
extern const char __stop_capprof_probe[] __attribute__((weak, visibility("hidden")));
#  define PROBE_LO ((uint64_t)(uintptr_t)__start_capprof_probe)
#  define PROBE_HI ((uint64_t)(uintptr_t)__stop_capprof_probe)
#elif CP_HAVE_PROBE_SECTION == 2
/* PE: markers in the sections sorted just before and after .text$cpp_m.
** Data, not functions, so that an incremental link's jump thunks do not
** stand for them; different bytes, so that identical folding keeps both. */
#  if defined(_MSC_VER)                 /* MSVC and clang-cl */
#    pragma section(".text$cpp_a", read, execute)
#    pragma section(".text$cpp_z", read, execute)
__declspec(allocate(".text$cpp_a")) const unsigned char capprof_probe_begin[1] = { 0xCC };
__declspec(allocate(".text$cpp_z")) const unsigned char capprof_probe_end[2] = { 0xCC, 0xCC };
#  else
__attribute__((section(".text$cpp_a"), used)) const unsigned char capprof_probe_begin[1] = { 0xCC };
__attribute__((section(".text$cpp_z"), used)) const unsigned char capprof_probe_end[2] = { 0xCC, 0xCC };
#  endif
#  define PROBE_LO ((uint64_t)(uintptr_t)capprof_probe_begin)
#  define PROBE_HI ((uint64_t)(uintptr_t)capprof_probe_end)
#endif
#if defined(PROBE_LO) && defined(CAPPROF_HAVE_FENTRY)
/* Counting stubs written near the program's code count as probe too. */
static int in_probe(uint64_t pc)
{
  return (pc >= PROBE_LO && pc < PROBE_HI) || unhook_in_stub((uintptr_t)pc);
}
/* A stack's address in such a stub is named as the runtime's own stubs. */
static uint64_t stub_home(uint64_t a) { return (uint64_t)unhook_stub_home((uintptr_t)a); }
#elif defined(PROBE_LO)
static int in_probe(uint64_t pc) { return pc >= PROBE_LO && pc < PROBE_HI; }
#else
static int in_probe(uint64_t pc) { (void)pc; return 0; }
#endif
#if !(defined(PROBE_LO) && defined(CAPPROF_HAVE_FENTRY))
static uint64_t stub_home(uint64_t a) { return a; }
#endif

/* Charge the sample to the node on top of tree's shadow stack: to its
** program samples, or to its probe samples when the program counter was in
** capprof's hooks (their cost is what compensation estimates; here it is
** measured, and left out of the program's own time). */
static void charge_node_at(struct sample_thread *st, struct cp_thread *tree, uint32_t node,
                           uint64_t pc, uint64_t caller, uint32_t weight);

static void charge_node(struct sample_thread *st, struct cp_thread *tree, uint64_t pc,
                        uint64_t caller)
{
  /* A calibration's scratch tree stands in for the thread's for a moment and
  ** is freed after: its nodes are no call paths of the program. */
  if (tree->calibrating) return;
  struct cp_frame *top = tree->top;
  if (top < tree->frames || top >= tree->commit_end) return;
  charge_node_at(st, tree, top->node, pc, caller, 1);
}

/* weight: how many samples this one stands for (1, or the lost ones). */
static void charge_node_at(struct sample_thread *st, struct cp_thread *tree, uint32_t node,
                           uint64_t pc, uint64_t caller, uint32_t weight)
{
  uint32_t n = tree->nnodes;
  if (node >= n) return;
  if (!st->node_samples) {
    if (!st->node_area_bytes) return;
    st->probe_samples = st->node_area + st->node_area_bytes / sizeof(uint32_t);
    st->node_samples_bytes = st->node_area_bytes;
    CP_BARRIER();
    st->node_samples = st->node_area;
    st->tree = tree;
    st->tree_gen = tree->generation;
    st->pcs = st->pcs_area;
  }
  if (st->tree != tree || st->tree_gen != tree->generation) {
    /* capprof_reset rebuilt the tree: node indexes mean other paths now.
    ** Marked first: a read of the ring nested in the clearing (a signal
    ** handler's hook) must not clear again. */
    st->tree = tree;
    st->tree_gen = tree->generation;
    clear_node_samples(st);
  }
  if ((size_t)node * sizeof(uint32_t) >= st->node_samples_bytes) return;
  if (in_probe(pc)) {
    st->probe_samples[node] += weight;
  } else {
    st->node_samples[node] += weight;
    if (st->pcs && pc) count_pc(st, node, caller ? caller : pc);
  }
  if (node >= st->node_hw) st->node_hw = node + 1;
}

/* A sample outside the executable's code (in a library) is charged, in the
** (node, pc) table, to the executable's call into the library that the
** stack shows: the first word above the stack pointer that is a return
** address into the executable whose call goes to a library. So a
** library call made by an unhooked function (unhook.c), whose node is not
** on top, can still be charged to it by the tool. The pair's pc is that
** return address minus one with SAMPLE_PC_CALLER set (docs/dump-format.md);
** without one found, the library pc itself. Stack words are read within the
** thread's bounds only, code bytes within the executable's code. */
#define SAMPLE_SCAN_WORDS 128u
static uintptr_t exe_lo, exe_hi;           /* the executable's code, once sampling starts */

#if defined(__x86_64__) || defined(_M_X64)
/* Whether v follows a call from the executable into a library: `call rel32`
** to a PLT entry (`jmp *GOT(%rip)`, or with `endbr64` first) or out of the
** executable, or `call *GOT(%rip)` (-fno-plt). Only such a call starts a
** library's frames; a return address of a call within the executable above
** the pc is a stale word of the library's frames as often as a real one. */
static int after_call(uintptr_t v)
{
  const unsigned char *p = (const unsigned char *)v;
  if (v - 7 < exe_lo || v >= exe_hi) return 0;
  if (p[-6] == 0xFF && p[-5] == 0x15) return 1;
  if (p[-5] != 0xE8) return 0;
  int32_t rel;
  memcpy(&rel, p - 4, 4);
  uintptr_t to = v + (uintptr_t)(intptr_t)rel;
  if (to < exe_lo || to >= exe_hi - 16) return 1;
  const unsigned char *q = (const unsigned char *)to;
  if (q[0] == 0xFF && q[1] == 0x25) return 1;
  if (q[0] == 0xF3 && q[1] == 0x0F && q[2] == 0x1E && q[3] == 0xFA)       /* endbr64 */
    return (q[4] == 0xFF && q[5] == 0x25) || (q[4] == 0xF2 && q[5] == 0xFF && q[6] == 0x25);
  return 0;
}

/* The caller, from nwords stack words from the stack pointer up, word k
** read by word(ctx, k): the live stack (a signal's sample) or its copy (a
** ring's). */
static uint64_t library_caller(uint64_t pc, sample_word_fn word, void *ctx, uint32_t nwords)
{
  if (!exe_hi || (pc >= exe_lo && pc < exe_hi)) return 0;
  for (uint32_t k = 0; k < nwords && k < SAMPLE_SCAN_WORDS; k++) {
    uintptr_t v = (uintptr_t)word(ctx, k);
    if (v >= exe_lo && v < exe_hi && after_call(v)) return ((uint64_t)v - 1) | SAMPLE_PC_CALLER;
  }
  return 0;
}
#else
static uint64_t library_caller(uint64_t pc, sample_word_fn word, void *ctx, uint32_t nwords)
{
  (void)pc;
  (void)word;
  (void)ctx;
  (void)nwords;
  return 0;                                  /* the call patterns are x86-64's */
}
#endif

static uint64_t live_word(void *ctx, uint32_t k) { return ((const uintptr_t *)ctx)[k]; }

/* The interrupted thread's own stack, within its bounds. */
static uint64_t library_caller_live(const struct sample_thread *st, const struct sample_regs *r)
{
  uintptr_t hi = st->stack_hi;
  if (!hi || r->sp < st->stack_lo || r->sp >= hi || (r->sp & (sizeof(uintptr_t) - 1))) return 0;
  size_t n = (hi - r->sp) / sizeof(uintptr_t);
  return library_caller(r->pc, live_word, (void *)r->sp,
                        n < SAMPLE_SCAN_WORDS ? (uint32_t)n : SAMPLE_SCAN_WORDS);
}

/* Frame-pointer walk: out[0] is the pc, then return addresses minus one.
** Every frame must lie within the thread's stack, above the interrupted
** stack pointer, aligned, and above the previous one: a bad frame pointer
** (a program built without them) ends the walk instead of faulting. */
static int walk(const struct sample_thread *st, const struct sample_regs *r, uint64_t *out)
{
  int n = 0;
  out[n++] = r->pc;
  uintptr_t lo = st->stack_lo > r->sp ? st->stack_lo : r->sp, hi = st->stack_hi;
  uintptr_t fp = r->fp;
  if (!hi || r->sp < st->stack_lo || r->sp >= hi) return n;
  while (n < SAMPLE_MAX_DEPTH) {
    if (fp < lo || fp > hi - 2 * sizeof(uintptr_t) || (fp & (sizeof(uintptr_t) - 1))) break;
    const uintptr_t *frame = (const uintptr_t *)fp;
    uintptr_t next = frame[0], ret = frame[1];
    if (ret < 4096) break;
    out[n++] = (uint64_t)ret - 1;
    if (next <= fp) break;
    fp = next;
  }
  return n;
}

static uint32_t snode_slot(const struct sample_thread *st, uint32_t parent, uint64_t addr)
{
  uint64_t h = addr * UINT64_C(0x9E3779B97F4A7C15) ^ (uint64_t)(parent + 1) * UINT64_C(0xC2B2AE3D27D4EB4F);
  return (uint32_t)(h >> 32) & st->mask;
}

/* Record the stack out[n-1] (outermost) .. out[0] (the pc); 0, or -1 when
** the thread's node space is full. Only the owning handler writes. */
static int record_stack(struct sample_thread *st, const uint64_t *out, int n)
{
  uint32_t parent = 0;
  for (int i = n - 1; i >= 0; i--) {
    uint64_t a = stub_home(out[i]);
    uint32_t s = snode_slot(st, parent, a), idx;
    while ((idx = st->table[s]) != 0) {
      if (st->nodes[idx].addr == a && st->nodes[idx].parent == parent) break;
      s = (s + 1) & st->mask;
    }
    if (!idx) {
      idx = st->nnodes;
      if (idx >= SAMPLE_STACK_NODES) return -1;
      st->nodes[idx].addr = a;
      st->nodes[idx].parent = parent;
      st->nodes[idx].self = 0;
      CP_BARRIER();
      st->nnodes = idx + 1;
      st->table[s] = idx;
    }
    parent = idx;
  }
  st->nodes[parent].self++;
  return 0;
}

/* A sample's stack (stack[0] the pc) into st's sampled stacks, counted. */
static void keep_stack(struct sample_session *s, struct sample_thread *st, const uint64_t *stack,
                       int n)
{
  if (n > 1) SAMPLE_ADD64(&s->walked, 1);
  if (record_stack(st, stack, n) == 0) {
    SAMPLE_ADD64(&s->hits, 1);
  } else {
    st->lost++;
    SAMPLE_ADD64(&s->lost, 1);
  }
}

void sample_hit(struct sample_session *s, struct sample_thread *st, struct cp_thread *tree,
                const struct sample_regs *r)
{
  if (!s->running) return;
  SAMPLE_ADD64(&s->samples, 1);
  if (s->kind == CPD_SK_OBJECT) {
    if (r->pc >= s->lo && r->pc < s->hi) {
      SAMPLE_ADD32(&s->buckets[(r->pc - s->lo) >> s->shift], 1);
      SAMPLE_ADD64(&s->hits, 1);
    }
    return;
  }
  if (!st) {
    SAMPLE_ADD64(&s->lost, 1);
    return;
  }
  st->samples++;
  if (tree) {
    uint64_t caller = library_caller_live(st, r);
    charge_node(st, tree, r->pc, caller);
  }
  uint64_t stack[SAMPLE_MAX_DEPTH];
  int n = walk(st, r, stack);
  keep_stack(s, st, stack, n);
}

void sample_hit_copied(struct sample_session *s, struct sample_thread *st, struct cp_thread *tree,
                       uint64_t pc, sample_word_fn word, void *ctx, uint32_t nwords)
{
  if (!s->running) return;
  SAMPLE_ADD64(&s->samples, 1);
  if (!st) {
    SAMPLE_ADD64(&s->lost, 1);
    return;
  }
  st->samples++;
  if (tree) charge_node(st, tree, pc, library_caller(pc, word, ctx, nwords));
  keep_stack(s, st, &pc, 1);
}

void sample_lost(struct sample_session *s, struct sample_thread *st, struct cp_thread *tree,
                 uint32_t node, uint64_t n)
{
  if (!s->running || !n) return;
  SAMPLE_ADD64(&s->samples, n);
  SAMPLE_ADD64(&s->lost, n);
  if (!st || !tree) return;
  st->samples += n;
  charge_node_at(st, tree, node, 0, 0, n < UINT32_MAX ? (uint32_t)n : UINT32_MAX);
}

/* ---- sessions ------------------------------------------------------------- */

static struct sample_session *new_session(uint32_t kind)
{
  for (uint32_t i = 0; i < SAMPLE_MAX_SESSIONS; i++) {
    struct sample_session *s = &sample_sessions[i];
    if (s->used) continue;
    memset(s, 0, sizeof *s);
    s->used = 1;
    s->kind = kind;
    s->slot = i;
    return s;
  }
  return NULL;
}

/* Copy at most n-1 bytes of src into dst, NUL-terminated. */
static void copy_text(char *dst, size_t n, const char *src)
{
  size_t k = strlen(src);
  if (k >= n) k = n - 1;
  memcpy(dst, src, k);
  dst[k] = '\0';
}

static void append_text(char *dst, size_t n, const char *src)
{
  size_t at = strlen(dst);
  if (at < n) copy_text(dst + at, n - at, src);
}

/* The names of the usable sources into buf, the reason for the others into why. */
static void list_sources(char *buf, size_t n, char *why, size_t whyn)
{
  if (n) buf[0] = '\0';
  if (why && whyn) why[0] = '\0';
  for (size_t i = 0; i < NSOURCES; i++) {
    char reason[256];
    if (sampler_probe(&sources[i], reason, sizeof reason) != 0) {
      if (why && whyn && !why[0]) copy_text(why, whyn, reason);
      continue;
    }
    if (buf[0]) append_text(buf, n, " ");
    append_text(buf, n, sources[i].name);
  }
}

int capprof_sample_sources(char *buf, size_t n, char *why, size_t whyn)
{
  if (!buf || !n) return CAPPROF_EINVAL;
  list_sources(buf, n, why, whyn);
  return 0;
}

/* "capprof: sampling source 'cycles' is not available here (REASON);
** available: time task-clock ..." into msg. */
static void unavailable_text(const char *name, const char *reason, char *msg, size_t n)
{
  char avail[256];
  list_sources(avail, sizeof avail, NULL, 0);
  copy_text(msg, n, "sampling source '");
  append_text(msg, n, name);
  append_text(msg, n, "' is not available here (");
  append_text(msg, n, reason);
  append_text(msg, n, "); available sources: ");
  append_text(msg, n, avail[0] ? avail : "none");
}

static struct sample_session *as_session(const capprof_profile *p)
{
  const struct sample_session *s = (const struct sample_session *)(const void *)p;
  if (s < sample_sessions || s >= sample_sessions + SAMPLE_MAX_SESSIONS) return NULL;
  if ((size_t)((const char *)s - (const char *)sample_sessions) % sizeof *s) return NULL;
  if (!s->used || s->closed || s->kind != CPD_SK_OBJECT) return NULL;
  return (struct sample_session *)s;
}

int capprof_profile_create(const struct capprof_profile_desc *d, capprof_profile **out)
{
  if (!d || !out) return CAPPROF_EINVAL;
  *out = NULL;
  if (!cp_g.initialized) runtime_init();
  const struct sample_source *src = sample_find_source(d->source ? d->source : "time");
  if (!src) return CAPPROF_EINVAL;
  uint64_t interval = src->is_time ? DEFAULT_TIME_NS : DEFAULT_EVENTS;
  if (d->interval && sample_parse_interval(d->interval, src->is_time, &interval) != 0)
    return CAPPROF_EINVAL;
  size_t bsize = d->bucket_size ? d->bucket_size : 16;
  if (bsize < 4 || (bsize & (bsize - 1))) return CAPPROF_EINVAL;
  uintptr_t lo, hi;
  switch (d->range) {
  case CAPPROF_RANGE_PROCESS:
    lo = 0;                              /* user space: 2^47 bytes on 64-bit */
    hi = UINTPTR_MAX >> (sizeof(void *) == 8 ? 17 : 0);
    while ((hi - lo) / bsize >= MAX_BUCKETS && !d->bucket_size) bsize <<= 1;
    break;
  case CAPPROF_RANGE_MODULE:
    if (sampler_module_range(d->base, &lo, &hi) != 0) return CAPPROF_EINVAL;
    break;
  case CAPPROF_RANGE_ADDRESS:
    if (!d->base || !d->size || (uintptr_t)d->base + d->size < (uintptr_t)d->base)
      return CAPPROF_EINVAL;
    lo = (uintptr_t)d->base;
    hi = lo + d->size;
    break;
  default:
    return CAPPROF_EINVAL;
  }
  uint32_t shift = 0;
  while (((size_t)1 << shift) < bsize) shift++;
  uint64_t nb = ((uint64_t)(hi - lo) + bsize - 1) >> shift;
  if (nb == 0 || nb > MAX_BUCKETS) return CAPPROF_EINVAL;
  char why[256];
  if (sampler_probe(src, why, sizeof why) != 0) return CAPPROF_ENOTSUP;

  os_lock();
  struct sample_session *s = new_session(CPD_SK_OBJECT);
  int rc = 0;
  if (!s) {
    rc = CAPPROF_ELIMIT;
  } else {
    s->source = src;
    s->interval = interval;
    s->lo = lo;
    s->hi = hi;
    s->shift = shift;
    s->nbuckets = (uint32_t)nb;
    s->buckets_bytes = page_round((size_t)nb * sizeof(uint32_t));
    s->buckets = zeroed(s->buckets_bytes);
    if (!s->buckets) {
      s->used = 0;
      rc = CAPPROF_ENOMEM;
    } else if (d->name && *d->name) {
      copy_text(s->name, sizeof s->name, d->name);
    } else {
      char num[12];
      uint32_t k = s->slot + 1, at = 0;
      char tmp[12];
      do { tmp[at++] = (char)('0' + k % 10); k /= 10; } while (k);
      for (uint32_t j = 0; j < at; j++) num[j] = tmp[at - 1 - j];
      num[at] = '\0';
      copy_text(s->name, sizeof s->name, "profile ");
      append_text(s->name, sizeof s->name, num);
    }
  }
  os_unlock();
  if (!rc) *out = (capprof_profile *)(void *)s;
  return rc;
}

int capprof_profile_start(capprof_profile *p)
{
  os_lock();
  struct sample_session *s = as_session(p);
  int rc = s ? 0 : CAPPROF_EINVAL;
  if (s && !s->running && !cp_g.finished) {
    char why[256];
    s->running = 1;
    rc = sampler_start(s, why, sizeof why);
    if (rc) s->running = 0;
  }
  os_unlock();
  return rc;
}

int capprof_profile_stop(capprof_profile *p)
{
  os_lock();
  struct sample_session *s = as_session(p);
  if (s && s->running) {
    s->running = 0;
    sampler_stop(s);
  }
  os_unlock();
  return s ? 0 : CAPPROF_EINVAL;
}

int capprof_profile_query(const capprof_profile *p, struct capprof_profile_info *info)
{
  const struct sample_session *s = as_session(p);
  if (!s || !info) return CAPPROF_EINVAL;
  memset(info, 0, sizeof *info);
  info->base = s->lo;
  info->end = s->hi;
  info->bucket_size = (size_t)1 << s->shift;
  info->buckets = s->nbuckets;
  info->running = s->running;
  info->interval_is_time = s->source->is_time;
  info->interval = s->interval;
  info->samples = s->samples;
  info->hits = s->hits;
  copy_text(info->source, sizeof info->source, s->source->name);
  copy_text(info->method, sizeof info->method, s->method_text[0] ? s->method_text : "not started");
  return 0;
}

int capprof_profile_set_interval(capprof_profile *p, const char *interval)
{
  os_lock();
  struct sample_session *s = as_session(p);
  uint64_t v;
  int rc = s ? sample_parse_interval(interval, s->source->is_time, &v) : CAPPROF_EINVAL;
  if (!rc) {
    s->interval = v;
    if (s->running) rc = sampler_set_interval(s);
  }
  os_unlock();
  return rc;
}

int capprof_profile_buckets(const capprof_profile *p, uint32_t *counts, size_t n, size_t *total)
{
  const struct sample_session *s = as_session(p);
  if (!s || (n && !counts)) return CAPPROF_EINVAL;
  if (total) *total = s->nbuckets;
  for (size_t i = 0; i < n && i < s->nbuckets; i++) counts[i] = s->buckets[i];
  return 0;
}

int capprof_profile_close(capprof_profile *p)
{
  os_lock();
  struct sample_session *s = as_session(p);
  if (s) {
    if (s->running) {
      s->running = 0;
      sampler_stop(s);
    }
    s->closed = 1;
  }
  os_unlock();
  return s ? 0 : CAPPROF_EINVAL;
}

/* ---- process-wide sampling (CAPPROF_SAMPLE) -------------------------------- */

static struct sample_session *process_session;

int sample_process_running(void)
{
  return process_session && process_session->running;
}

static void report_line(const char *text)
{
  char msg[700] = "capprof: ";
  append_text(msg, sizeof msg, text);
  os_report(msg);
}

/* The default sampler CAPPROF_SAMPLE names: auto (unset, empty), perf
** (the ring only), timer (the CPU-time timer only); -1 for anything else. */
enum { MODE_AUTO, MODE_PERF, MODE_TIMER };
static int default_mode(void)
{
  const char *env = settings_str(SET_SAMPLE);
  if (!env || !*env || !strcmp(env, "auto")) return MODE_AUTO;
  if (!strcmp(env, "perf")) return MODE_PERF;
  if (!strcmp(env, "timer")) return MODE_TIMER;
  return -1;
}

/* CAPPROF_SAMPLE=SOURCE[:INTERVAL], or 1 / "time" for CPU time every 1 ms.
** A bad value or an unavailable source is said once on stderr and recorded
** in the dump as a failed session: never a silent empty profile. */
int sample_requested(void)
{
  const char *env = settings_str(SET_SAMPLE);
  return env && *env && strcmp(env, "0") != 0 && strcmp(env, "off") != 0 && default_mode() < 0;
}

int sample_default_wanted(void)
{
#if defined(__linux__)
  return default_mode() >= 0;
#else
  return 0;                      /* the ring buffer and the timer fallback are Linux's */
#endif
}

/* A new process-wide session called name, returned with os_lock held; NULL
** (the lock not held) when every slot is taken. */
static struct sample_session *process_session_new(const char *name)
{
  /* Before os_lock: the module list takes the loader's lock. */
  if (!exe_hi && sampler_module_range(NULL, &exe_lo, &exe_hi) != 0) exe_lo = exe_hi = 0;
  os_lock();
  struct sample_session *s = new_session(CPD_SK_PROCESS);
  if (!s) {
    os_unlock();
    return NULL;
  }
  copy_text(s->name, sizeof s->name, name);
  s->lo = 0;
  s->hi = UINTPTR_MAX;
  return s;
}

/* Without CAPPROF_SAMPLE (auto), or with perf or timer: sample every hooked
** thread through a ring buffer its hooks read (ring_posix.c), else (auto,
** timer) with a CPU-time timer per thread and a signal (sample_posix.c),
** charged the same way, so that each function's time comes from where the
** samples land. Where neither can run the session is recorded as not run,
** with the reasons, and the times are the hooks' compensated ones; nothing
** is printed (the program did not ask). */
static void sample_default_start(int mode)
{
  struct sample_session *s = process_session_new("default");
  if (!s) return;
  s->source = &sources[0];                     /* time: task-clock */
  s->interval = DEFAULT_RING_NS;
  char why[200], ring_why[200];
  ring_why[0] = '\0';
  if (mode != MODE_TIMER) {
    if (sampler_ring_start(s, ring_why, sizeof ring_why) == 0) {
      s->running = 1;
      process_session = s;
      os_unlock();
      return;
    }
  }
  if (mode != MODE_PERF) {
    s->source = sample_find_source("cpu-timer");
    s->interval = DEFAULT_TIMER_NS;
    s->running = 1;
    why[0] = '\0';
    if (sampler_start(s, why, sizeof why) == 0) {
      process_session = s;
      if (ring_why[0]) {
        copy_text(s->note, sizeof s->note, "no ring buffer: ");
        append_text(s->note, sizeof s->note, ring_why);
      }
      sampler_note(s);
      os_unlock();
      return;
    }
    s->running = 0;
  }
  s->failed = 1;
  s->note[0] = '\0';
  if (ring_why[0]) copy_text(s->note, sizeof s->note, ring_why);
  if (mode != MODE_PERF) {
    if (s->note[0]) append_text(s->note, sizeof s->note, "; ");
    append_text(s->note, sizeof s->note, why);
  }
  append_text(s->note, sizeof s->note, "; times are the hooks' compensated estimates");
  os_unlock();
}

void sample_init_from_env(void)
{
  const char *env = settings_str(SET_SAMPLE);
  if (cp_g.disabled) return;
  if (sample_default_wanted()) {
    sample_default_start(default_mode());
    return;
  }
  if (!sample_requested()) return;
  char spec[128], msg[600];
  copy_text(spec, sizeof spec, env);
  char *colon = strchr(spec, ':');
  const char *ival = NULL;
  if (colon) {
    *colon = '\0';
    ival = colon + 1;
  }
  const char *name = !strcmp(spec, "1") ? "time" : spec;
  const struct sample_source *src = sample_find_source(name);
  uint64_t interval = 0;
  struct sample_session *s = process_session_new(settings_name(SET_SAMPLE));
  if (!s) return;
  msg[0] = '\0';
  if (!src) {
    char avail[256];
    list_sources(avail, sizeof avail, NULL, 0);
    copy_text(msg, sizeof msg, settings_name(SET_SAMPLE));
    append_text(msg, sizeof msg, "=");
    append_text(msg, sizeof msg, env);
    append_text(msg, sizeof msg, ": unknown sampling source '");
    append_text(msg, sizeof msg, name);
    append_text(msg, sizeof msg, "'; available sources: ");
    append_text(msg, sizeof msg, avail);
    src = &sources[0];
  } else if (ival && sample_parse_interval(ival, src->is_time, &interval) != 0) {
    copy_text(msg, sizeof msg, settings_name(SET_SAMPLE));
    append_text(msg, sizeof msg, "=");
    append_text(msg, sizeof msg, env);
    append_text(msg, sizeof msg, src->is_time
                ? ": bad interval (a CPU time of at least 10us with its unit: 100us, 1ms, 1s)"
                : ": bad interval (a count of at least 1000 events: 100000, 10k, 1M)");
  }
  s->source = src;
  s->interval = interval ? interval : src->is_time ? DEFAULT_TIME_NS : DEFAULT_EVENTS;
  if (!msg[0]) {
    char why[256];
    if (sampler_probe(src, why, sizeof why) != 0) {
      unavailable_text(src->name, why, msg, sizeof msg);
    } else {
      s->running = 1;
      process_session = s;
      if (sampler_start(s, why, sizeof why) != 0) {
        s->running = 0;
        unavailable_text(src->name, why, msg, sizeof msg);
      }
    }
  }
  if (msg[0]) {
    s->failed = 1;
    copy_text(s->note, sizeof s->note, msg);
  }
  os_unlock();
  if (msg[0]) report_line(msg);
}

void sample_tree_retired(struct cp_thread *t, const struct cp_ended *e)
{
  uint32_t n = pool_claimed < SAMPLE_MAX_THREADS ? pool_claimed : SAMPLE_MAX_THREADS;
  for (uint32_t i = 0; i < n; i++) {
    struct sample_thread *st = pool[i];
    if (!st || st->tree != t) continue;
    /* The tree is packed or merged, and its state reused for another thread
    ** or freed: the samples charged to its nodes are dropped with it. */
    if (!st->ended) {
      memcpy(st->name, t->name, sizeof st->name);
      st->name[sizeof st->name - 1] = '\0';
      st->ended = 1;
    }
    st->tree = NULL;
    st->ended_rec = e;
    if (!e) st->node_hw = 0;
  }
}

void sample_finish(void)
{
  sampler_ring_flush();          /* the calling thread's last samples */
  os_lock();
  for (uint32_t i = 0; i < SAMPLE_MAX_SESSIONS; i++) {
    struct sample_session *s = &sample_sessions[i];
    if (s->used && s->running) {
      s->running = 0;
      sampler_stop(s);
    }
  }
  os_unlock();
}

void sample_fork_child(void)
{
  int any = 0;
  for (uint32_t i = 0; i < SAMPLE_MAX_SESSIONS; i++) any |= sample_sessions[i].used;
  if (!any) return;
  sampler_fork_child();
  uint32_t n = pool_claimed < SAMPLE_MAX_THREADS ? pool_claimed : SAMPLE_MAX_THREADS;
  for (uint32_t i = 0; i < n; i++) {
    struct sample_thread *st = pool[i];
    if (!st) continue;
    st->nnodes = 1;
    memset(st->table, 0, ((size_t)st->mask + 1) * sizeof(uint32_t));
    st->nodes[0].self = 0;
    st->samples = st->lost = 0;
    if (st->pcs && st->pcs_used) {
      /* Fresh pages rather than zeroed copies of the parent's. */
      size_t bytes = SAMPLE_PC_SLOTS * sizeof *st->pcs;
      os_decommit(st->pcs, bytes);
      if (os_commit(st->pcs, bytes) != 0) st->pcs = NULL;
      st->pcs_used = 0;
    }
    clear_node_samples(st);
    st->tree = NULL;           /* the other threads' trees are freed in the child */
    st->ended_rec = NULL;
  }
  char why[256];
  for (uint32_t i = 0; i < SAMPLE_MAX_SESSIONS; i++) {
    struct sample_session *s = &sample_sessions[i];
    if (!s->used) continue;
    s->samples = s->hits = s->lost = s->walked = s->signals = 0;
    if (s->buckets) {
      os_release(s->buckets, s->buckets_bytes);
      s->buckets = zeroed(s->buckets_bytes);
      if (!s->buckets) s->nbuckets = 0, s->running = 0;
    }
    if (s->running && sampler_start(s, why, sizeof why) != 0) s->running = 0;
  }
}

/* ---- dump sections ----------------------------------------------------------- */

static void write_sessions(struct dump_writer *w)
{
  uint64_t at = dumpw_begin(w);
  uint32_t n = 0;
  for (uint32_t i = 0; i < SAMPLE_MAX_SESSIONS; i++) n += sample_sessions[i].used != 0;
  dumpw_u32(w, n);
  for (uint32_t i = 0; i < SAMPLE_MAX_SESSIONS; i++) {
    struct sample_session *s = &sample_sessions[i];
    if (!s->used) continue;
    sampler_note(s);
    dumpw_u32(w, s->kind);
    dumpw_u32(w, (s->failed ? CPD_SS_F_FAILED : 0) | (s->closed ? CPD_SS_F_CLOSED : 0));
    dumpw_u32(w, s->source ? s->source->code : 0);
    dumpw_u32(w, s->failed ? CPD_SM_NONE : s->method);
    dumpw_u64(w, s->interval);
    dumpw_u32(w, s->source && s->source->is_time ? CPD_SS_UNIT_NS : CPD_SS_UNIT_EVENTS);
    dumpw_u32(w, s->shift);
    dumpw_u64(w, s->samples);
    dumpw_u64(w, s->hits);
    dumpw_u64(w, s->lost);
    dumpw_u64(w, s->walked);
    dumpw_u64(w, s->lo);
    dumpw_u64(w, s->hi);
    dumpw_str(w, s->name);
    dumpw_str(w, s->method_text);
    dumpw_str(w, s->note);
    uint32_t nb = s->buckets ? s->nbuckets : 0;
    dumpw_u32(w, nb);
    unsigned char buf[4096];
    for (uint32_t k = 0; k < nb;) {
      uint32_t m = 0;
      for (; k < nb && m + 4 <= sizeof buf; k++, m += 4) cpd_put32(buf + m, s->buckets[k]);
      dumpw_bytes(w, buf, m);
    }
  }
  dumpw_end(w, CPD_SEC_SAMPLE_SESSIONS, at);
}

static uint32_t pool_count(void)
{
  return pool_claimed < SAMPLE_MAX_THREADS ? pool_claimed : SAMPLE_MAX_THREADS;
}

/* The rows of THREADS as the dump wrote them (sample_write_sections). */
struct rows { const void *const *who; const uint32_t *counts; uint32_t n; };

/* The THREADS index of st's call tree (live or packed) and its node count;
** CPD_NO_PARENT when it has none written. */
static uint32_t thread_index(const struct sample_thread *st, const struct rows *r,
                             uint32_t *count)
{
  const void *me = st->tree ? (const void *)st->tree : (const void *)st->ended_rec;
  uint32_t written = 0;
  if (!me) return CPD_NO_PARENT;
  for (uint32_t i = 0; i < r->n; i++) {
    if (!r->counts[i]) continue;
    if (r->who[i] == me) {
      *count = r->counts[i];
      return written;
    }
    written++;
  }
  return CPD_NO_PARENT;
}

/* The THREADS index of st's tree when its samples belong in this dump (its
** tree written, of the current generation; its count of nodes in *count),
** else CPD_NO_PARENT. */
static uint32_t written_index(const struct sample_thread *st, const struct rows *rows,
                              uint32_t *count)
{
  uint32_t gen = cp_g.gate >> 1;
  if (!st->tree && !st->ended_rec) return CPD_NO_PARENT;
  if ((st->tree && st->tree->generation != gen) || st->tree_gen != gen) return CPD_NO_PARENT;
  return thread_index(st, rows, count);
}

/* The records of section SECTION for st's tree (THREADS index idx, count
** nodes written): per node, its program samples (SAMPLE_NODES) or its hook
** samples (SAMPLE_PROBE); or per (node, pc), its program samples
** (SAMPLE_NODE_PCS). Written when emit, else only counted; returns how many. */
static uint32_t node_records(struct dump_writer *w, const struct sample_thread *st,
                             uint32_t section, uint32_t idx, uint32_t count, int emit)
{
  uint32_t records = 0;
  if (section == CPD_SEC_SAMPLE_NODE_PCS) {
    for (uint32_t k = 0; st->pcs && st->pcs_used && k < SAMPLE_PC_SLOTS; k++) {
      const struct sample_pc *e = &st->pcs[k];
      uint64_t pc = SAMPLE_ACQUIRE64(&e->pc);
      if (!pc || e->node >= count || !e->count) continue;
      records++;
      if (!emit) continue;
      dumpw_u32(w, idx);
      dumpw_u32(w, e->node);
      dumpw_u64(w, pc);
      dumpw_u64(w, e->count);
    }
    return records;
  }
  uint32_t hw = st->node_hw < count ? st->node_hw : count;
  const uint32_t *v = section == CPD_SEC_SAMPLE_PROBE ? st->probe_samples : st->node_samples;
  for (uint32_t k = 0; k < hw; k++) {
    if (!v[k]) continue;
    records++;
    if (!emit) continue;
    dumpw_u32(w, idx);
    dumpw_u32(w, k);
    dumpw_u64(w, v[k]);
  }
  return records;
}

/* Section SECTION (13, 18 or 19): a count, then node_records' records of
** every written thread. */
static void write_node_samples(struct dump_writer *w, const struct rows *rows, uint32_t section)
{
  uint64_t at = dumpw_begin(w);
  uint32_t records = 0, n = pool_count();
  for (int pass = 0; pass < 2; pass++) {
    if (pass == 1) dumpw_u32(w, records);
    for (uint32_t i = 0; i < n; i++) {
      const struct sample_thread *st = pool[i];
      uint32_t count = 0, idx;
      if (!st || !st->node_samples || (idx = written_index(st, rows, &count)) == CPD_NO_PARENT)
        continue;
      uint32_t k = node_records(w, st, section, idx, count, pass == 1);
      if (pass == 0) records += k;
    }
  }
  dumpw_end(w, section, at);
}

static void write_stacks(struct dump_writer *w, const struct rows *rows)
{
  uint64_t at = dumpw_begin(w);
  uint32_t n = pool_count(), threads = 0;
  for (uint32_t i = 0; i < n; i++) threads += pool[i] && pool[i]->nnodes > 1;
  dumpw_u32(w, threads);
  for (uint32_t i = 0; i < n && threads; i++) {
    struct sample_thread *st = pool[i];
    if (!st || st->nnodes <= 1) continue;
    threads--;
    uint32_t count = 0, nn = st->nnodes;
    char name[64];
    name[0] = '\0';
    if (st->ended) copy_text(name, sizeof name, st->name);
    else if (st->tree && st->tree->name[0]) copy_text(name, sizeof name, st->tree->name);
    else os_thread_name(st->tid, name, sizeof name);
    dumpw_u64(w, st->tid);
    dumpw_u32(w, thread_index(st, rows, &count));
    dumpw_u32(w, nn);
    dumpw_u64(w, st->samples);
    dumpw_u64(w, st->lost);
    dumpw_str(w, name);
    unsigned char buf[16 * 256];
    for (uint32_t k = 0; k < nn;) {
      uint32_t m = 0;
      for (; k < nn && m + 16 <= sizeof buf; k++, m += 16) {
        cpd_put64(buf + m, st->nodes[k].addr);
        cpd_put32(buf + m + 8, k ? st->nodes[k].parent : CPD_NO_PARENT);
        cpd_put32(buf + m + 12, st->nodes[k].self);
      }
      dumpw_bytes(w, buf, m);
    }
  }
  dumpw_end(w, CPD_SEC_SAMPLE_STACKS, at);
}

void sample_write_sections(struct dump_writer *w, const void *const *who,
                           const uint32_t *counts, uint32_t nrows)
{
  int any = 0;
  for (uint32_t i = 0; i < SAMPLE_MAX_SESSIONS; i++) any |= sample_sessions[i].used;
  if (!any) return;                   /* dumps without sampling stay as they were */
  struct rows rows = { who, counts, nrows };
  write_sessions(w);
  /* Threads go on sampling while the dump is written: the (node, pc) pairs
  ** first, so that SAMPLE_NODES, read later, holds at least their samples. */
  write_node_samples(w, &rows, CPD_SEC_SAMPLE_NODE_PCS);
  write_node_samples(w, &rows, CPD_SEC_SAMPLE_NODES);
  write_node_samples(w, &rows, CPD_SEC_SAMPLE_PROBE);
  write_stacks(w, &rows);
}

static void dump_sections(struct dump_writer *w, const struct dump_rows *rows)
{
  sample_write_sections(w, rows->who, rows->counts, rows->n);
}

/* Sampling's part in the core's life cycle (src/features.c): the thread
** hooks and fork handling of the sampler back end (sample_posix.c,
** sample_win.c) and of the portable part. */
const struct cp_feature sample_feature = {
  .name = "sample",
  .start = sample_init_from_env,
  .finish = sample_finish,
  .thread_begin = sampler_thread_begin,
  .thread_exit = sampler_ring_end,
  .thread_retired = sample_tree_retired,
  .fork_prepare = sampler_ring_fork_prepare,
  .fork_parent = sampler_ring_fork_parent,
  .fork_child = sample_fork_child,
  .dump = dump_sections,
};
