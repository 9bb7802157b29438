/*
** throttle.c -- throttling, after TAU: a call path's node that is both very
** frequent and very short is no longer timed on every call. Its calls are
** still all counted, and it keeps its place in the tree (its callees stay
** below it), but only one call in P on average (cp_g.throttle_period,
** default 32), chosen at random, reads the clock; that call's time counts P
** times. The others cost their caller a few loads and stores instead of two
** clock reads, which calibration measures (clock.c) and the tool subtracts.
** The dump says which nodes were throttled and when.
**
** The rule (docs/runtime.md): when a node completes its Nth call (default
** 100,000; 10,000 while unhooking is on, below), it is throttled if it made
** no call so far (a leaf; any node while process-wide sampling runs) and
** its calls averaged less than T of raw inclusive time (the longest call
** left out)
** (default 1 us; "auto": twice the probe's own calibrated cost per call).
** A node not throttled then is decided again at every multiple of 2^17
** calls above N (CP_THROTTLE_AGAIN_MASK): its first calls may have been its
** long ones.
** CAPPROF_THROTTLE=N:T[:P] sets them (T in ns or us, or "auto"),
** CAPPROF_THROTTLE=off turns throttling off. Decided on the exit hook's slow
** side; the hot path pays a compare and a test.
*/
#include <stdlib.h>
#include <string.h>

#include "../core/core.h"
#include "../sample/sample.h"
#include "throttle.h"
#include "../dump/dump.h"
#include "../patch/patch.h"
#include "../core/settings.h"

#define DEFAULT_CALLS   100000u
#define UNHOOK_CALLS    10000u          /* the default while unhooking is on */
#define DEFAULT_PERIOD  32u
#define DEFAULT_NS      1000u           /* leaves averaging under 1 us */
#define MAX_PERIOD      65536u
#define SAMPLE_CAP_NS   50000u          /* a sampled call scaled up to 50 us */
#define MAX_RECORDS     (1u << 16)      /* per thread; later nodes are not throttled */

struct throttle_rec {
  uint32_t node;                        /* node index in the thread's tree */
  uint32_t pad_;
  uint64_t ticks;                       /* clock when throttled */
  uint64_t timed;                       /* calls whose time the node holds */
};

struct cp_throttle_log {
  uint32_t count;                       /* records in use */
  uint32_t committed;                   /* records backed by memory */
  struct throttle_rec recs[];           /* MAX_RECORDS reserved */
};

static uint64_t threshold_ns;           /* 0 ("auto"): twice the probe's own cost */

/* Unhooking: CAPPROF_UNHOOK and CAPPROF_UNHOOK_COUNT (the records of the
** functions unhooked are in src/patch/patch.c). */
#define UNHOOK_AUTO 2
static int unhook_mode = UNHOOK_AUTO;
static int unhook_count = 1;            /* CAPPROF_UNHOOK_COUNT: counting stubs */
static int cap_known;                   /* cp_g.sample_cap converted */

/* Whether CAPPROF_THROTTLE gave the calls (or turned throttling off). */
static int calls_set;

/* "off", "0", "N", "N:T", T = number with an optional "ns" or "us". An
** invalid value keeps the defaults. */
void throttle_init(void)
{
  const char *s = settings_str(SET_THROTTLE);
  cp_g.throttle_calls = DEFAULT_CALLS;
  cp_g.throttle_period = DEFAULT_PERIOD;
  cp_g.sample_cap = UINT64_MAX;
  threshold_ns = DEFAULT_NS;
  const char *u = settings_str(SET_UNHOOK);
  unhook_mode = UNHOOK_AUTO;
  if (u && (!strcmp(u, "off") || !strcmp(u, "0") || !strcmp(u, "no"))) unhook_mode = 0;
  else if (u && (!strcmp(u, "on") || !strcmp(u, "1") || !strcmp(u, "yes"))) unhook_mode = 1;
  const char *c = settings_str(SET_UNHOOK_COUNT);
  unhook_count = !(c && (!strcmp(c, "off") || !strcmp(c, "0") || !strcmp(c, "no")));
  calls_set = s && *s;
  if (!calls_set) {
    /* Decided before any hook runs (the check is an equality: a threshold
    ** lowered later would pass nodes already over it by); throttle_settle
    ** raises it back if sampling does not start. */
    if (unhook_mode == 1 || (unhook_mode == UNHOOK_AUTO && (sample_requested() || sample_default_wanted())))
      cp_g.throttle_calls = UNHOOK_CALLS;
    return;
  }
  if (!strcmp(s, "off") || !strcmp(s, "0") || !strcmp(s, "no")) {
    cp_g.throttle_calls = 0;
    return;
  }
  char *end;
  unsigned long long n = strtoull(s, &end, 10);
  if (end == s || n == 0) return;
  uint64_t ns = DEFAULT_NS;
  if (*end == ':') {
    const char *v = end + 1;
    if (!strncmp(v, "auto", 4)) {
      ns = 0;
      end = (char *)v + 4;
    } else {
      unsigned long long x = strtoull(v, &end, 10);
      if (end == v) return;
      if (!strncmp(end, "us", 2)) { x *= 1000; end += 2; }
      else if (!strncmp(end, "ns", 2)) end += 2;
      ns = x;
    }
  }
  unsigned long long period = DEFAULT_PERIOD;
  if (*end == ':') {
    const char *v = end + 1;
    period = strtoull(v, &end, 10);
    if (end == v || period < 1 || period > MAX_PERIOD) return;
  }
  if (*end) return;
  cp_g.throttle_calls = n;
  cp_g.throttle_period = (uint32_t)period;
  threshold_ns = ns;
}

/* ns as clock ticks; 0 when unknown (too early to tell the TSC's rate). */
static uint64_t ns_to_ticks(uint64_t ns)
{
  if (!cp_g.use_tsc) return ns;                 /* the OS clock counts ns */
  uint64_t ticks = cp_now() - cp_g.start_ticks;
  uint64_t span = os_monotonic_ns() - cp_g.start_mono;
  if (span < 100000) return 0;
  return (uint64_t)((double)ns * (double)ticks / (double)span);
}

/* The threshold as ticks per call; 0 when unknown. */
static uint64_t threshold_ticks(void)
{
  if (!threshold_ns) return 2 * cp_probe_cost()->inner_mt / 1000;
  return ns_to_ticks(threshold_ns);
}

void throttle_settings(uint64_t *calls, uint64_t *ns)
{
  *calls = cp_g.throttle_calls;
  *ns = 0;
  if (!cp_g.throttle_calls) return;
  if (threshold_ns) { *ns = threshold_ns; return; }
  uint64_t ticks, span_ns;
  clock_span(&ticks, &span_ns);
  if (ticks) *ns = (uint64_t)((double)(2 * cp_probe_cost()->inner_mt / 1000) * span_ns / ticks + 0.5);
}

/* Room for one more record; NULL when full or out of memory. */
CP_PROBE_CODE static struct throttle_rec *next_record(struct cp_thread *t)
{
  struct cp_throttle_log *log = t->throttled;
  size_t page = os_page_size();
  if (!log) {
    size_t bytes = sizeof *log + (size_t)MAX_RECORDS * sizeof log->recs[0];
    log = os_reserve(bytes);
    if (!log) return NULL;
    if (os_commit(log, page) != 0) {
      os_release(log, bytes);
      return NULL;
    }
    log->committed = (uint32_t)((page - sizeof *log) / sizeof log->recs[0]);
    t->throttled = log;
  }
  if (log->count == MAX_RECORDS) return NULL;
  if (log->count == log->committed) {
    size_t have = sizeof *log + (size_t)log->committed * sizeof log->recs[0];
    size_t from = (have + page - 1) / page * page;
    if (os_commit((char *)log + from, page) != 0) return NULL;
    log->committed = (uint32_t)((from + page - sizeof *log) / sizeof log->recs[0]);
    if (log->committed > MAX_RECORDS) log->committed = MAX_RECORDS;
  }
  return &log->recs[log->count];
}

/* Runs at a node's N-th call and at each multiple of 2^17 above while it
** is not throttled: a division, maybe a clock conversion (one OS clock
** read) and, when throttled, one record. */
CP_PROBE_CODE void calltree_throttle_due(struct cp_thread *t, uint32_t i)
{
  struct cp_node *n = &t->nodes[i];
  if (i < CP_FIRST_NODE || i >= t->nnodes || !n->calls) return;
  if (CPD_KEY_IS_SPECIAL(n->key) || (n->key & CP_KEY_THROTTLED) || t->calibrating) return;
  uint32_t saved = cp_enter_busy(t);         /* a signal's hooks do nothing */
  os_errsave e = os_save_errors();
  /* Leaves only (no call made from it so far: its hot child was never
  ** set): a caller's rare long calls (a rehash below a string lookup)
  ** would make its sampled estimate swing by the period times theirs.
  ** While process-wide sampling runs, callers too: the samples give the
  ** times then, and an untimed call's hooks cost a few ns where a timed
  ** one's cost ~20-30, which on Lua's interpreter is most of what the hooks
  ** left in place change in the program (docs/runtime.md, Throttling). */
  if (!cap_known) {                           /* once the TSC's rate is known */
    uint64_t cap = ns_to_ticks(SAMPLE_CAP_NS);
    if (cap) {
      cp_g.sample_cap = cap;
      cap_known = 1;
    }
  }
  if ((n->hot == CP_NODE_ROOT || sample_process_running()) && throttle_short(n))
    throttle_node(t, i);
  os_restore_errors(e);
  cp_leave_busy(t, saved);
}

/* Throttle node i of t (not throttled yet) from now on; 0 when there is no
** room for its record. */
CP_PROBE_CODE int throttle_node(struct cp_thread *t, uint32_t i)
{
  struct cp_node *n = &t->nodes[i];
  struct throttle_rec *r = next_record(t);
  if (!r) return -1;
  r->node = i;
  r->ticks = cp_now();
  r->timed = n->calls;
  CP_BARRIER();                               /* the dump reads count first */
  t->throttled->count++;
  n->key |= CP_KEY_THROTTLED;
  return 0;
}

/* Whether n's calls averaged under the threshold. The average leaves out
** the longest call: one preemption or page fault in 100,000 calls of a few
** ns would otherwise decide. */
CP_PROBE_CODE int throttle_short(const struct cp_node *n)
{
  uint64_t limit = threshold_ticks();
  uint64_t avg = n->calls > 1 ? (n->incl - n->max) / (n->calls - 1) : n->incl;
  return limit && avg < limit;
}

void throttle_records(const struct cp_thread *t, throttle_fn fn, void *ctx)
{
  const struct cp_throttle_log *log = t->throttled;
  if (!log) return;
  for (uint32_t k = 0; k < log->count; k++)
    fn(ctx, log->recs[k].node, log->recs[k].ticks, log->recs[k].timed);
}

void throttle_thread_reset(struct cp_thread *t)
{
  if (t->throttled) t->throttled->count = 0;
}

void throttle_thread_free(struct cp_thread *t)
{
  if (!t->throttled) return;
  os_release(t->throttled, sizeof *t->throttled + (size_t)MAX_RECORDS * sizeof t->throttled->recs[0]);
  t->throttled = NULL;
}

/* ---- unhooking --------------------------------------------------------- */

/* While unhooking is on, throttling decides at UNHOOK_CALLS unless
** CAPPROF_THROTTLE says otherwise (throttle_init chose it from the
** environment): the hooks of frequent short functions then go sooner, and
** their times come from the samples. Without unhooking, the compensated
** times are better with the later decision: a node that is a leaf at
** 10,000 calls and calls a callee later has a sampled inclusive time that
** the callee's rare long calls make swing (sqlite3 on the fidelity bench:
** 0.24 instead of 0.16-0.17). So once sampling has started, or failed to,
** the threshold goes back up if there is no unhooking after all: raised,
** a node over it decides later; lowered, a node past it would only decide
** at its next multiple of 2^17 calls. */
void throttle_settle(void)
{
  if (!calls_set && !unhook_wanted() && cp_g.throttle_calls) cp_g.throttle_calls = DEFAULT_CALLS;
}

int unhook_wanted(void)
{
  if (!cp_g.throttle_calls) return 0;
  return unhook_mode == UNHOOK_AUTO ? sample_process_running() : unhook_mode;
}

uint32_t unhook_next(void) { return unhook_count ? unhook_record_count() : UINT32_MAX; }

struct throttle_ctx { struct dump_writer *w; uint32_t thread, nnodes, records; };

static void write_throttle_rec(void *ctx, uint32_t node, uint64_t ticks, uint64_t timed)
{
  struct throttle_ctx *c = ctx;
  if (node >= c->nnodes) return;
  dumpw_u32(c->w, c->thread);
  dumpw_u32(c->w, node);
  dumpw_u64(c->w, ticks - cp_g.start_ticks);
  dumpw_u64(c->w, timed);
  c->records++;
}

/* THROTTLE: the settings, the hook kinds seen, each live thread's throttled
** nodes (a retired thread's records are not kept: its nodes keep the flag). */
static void dump_section(struct dump_writer *w, const struct dump_rows *rows)
{
  uint64_t s = dumpw_begin(w), calls, ns;
  throttle_settings(&calls, &ns);
  dumpw_u64(w, calls);
  dumpw_u64(w, ns);
  dumpw_u32(w, cp_g.hooks_seen);
  dumpw_u32(w, 0);                               /* count, patched below */
  struct throttle_ctx c = { w, 0, 0, 0 };
  uint32_t gen = cp_g.gate >> 1;
  for (uint32_t i = 0; i < rows->n; i++) {
    const struct dump_row *r = &rows->row[i];
    if (!r->count) continue;
    c.nnodes = r->count;
    if (!r->e && r->t->generation == gen) throttle_records(r->t, write_throttle_rec, &c);
    c.thread++;
  }
  dumpw_end(w, CPD_SEC_THROTTLE, s);
  dumpw_patch_u32(w, s + 20, c.records);
}

/* Throttling's part in the core's life cycle (src/features.c): its
** settings read at start-up, its defaults settled once sampling started. */
const struct cp_feature throttle_feature = {
  .name = "throttle",
  .init = throttle_init,
  .settle = throttle_settle,
  .thread_reset = throttle_thread_reset,
  .thread_free = throttle_thread_free,
  .dump = dump_section,
};
