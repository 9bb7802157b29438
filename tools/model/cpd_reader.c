/*
** cpd_reader.c -- parses and validates a capprof dump (see dumpfmt.h). Every
** read goes through a bounds-checked cursor; every count is checked against
** the bytes that must hold it before anything is allocated for it.
*/
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "model/cpd_reader.h"

#define MAX_SECTIONS 64

struct cursor {
  const unsigned char *p, *end;
  int bad;                         /* set when a read ran past end */
};

static uint32_t c_u32(struct cursor *c)
{
  if (c->bad || (size_t)(c->end - c->p) < 4) { c->bad = 1; return 0; }
  uint32_t v = cpd_get32(c->p);
  c->p += 4;
  return v;
}

static uint64_t c_u64(struct cursor *c)
{
  if (c->bad || (size_t)(c->end - c->p) < 8) { c->bad = 1; return 0; }
  uint64_t v = cpd_get64(c->p);
  c->p += 8;
  return v;
}

/* A u32 length then bytes; returns a NUL-terminated copy (may hold NULs). */
static char *c_str(struct cursor *c, size_t *len_out)
{
  uint32_t len = c_u32(c);
  if (c->bad || (size_t)(c->end - c->p) < len) { c->bad = 1; return NULL; }
  char *s = malloc((size_t)len + 1);
  if (!s) { c->bad = 2; return NULL; }
  memcpy(s, c->p, len);
  s[len] = '\0';
  c->p += len;
  if (len_out) *len_out = len;
  return s;
}

static int fail(char *err, size_t errlen, int code, const char *fmt, ...)
{
  if (err && errlen) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
  }
  return code;
}

void cpd_free(struct cpd_dump *d)
{
  if (!d) return;
  for (uint32_t i = 0; d->modules && i < d->nmodules; i++) {
    free(d->modules[i].id);
    free(d->modules[i].path);
    free(d->modules[i].debug_path);
  }
  for (uint32_t i = 0; d->threads && i < d->nthreads; i++) {
    free(d->threads[i].name);
    free(d->threads[i].nodes);
    free(d->threads[i].samples);
    free(d->threads[i].probe_samples);
    free(d->threads[i].pcs);
  }
  for (uint32_t i = 0; d->sessions && i < d->nsessions; i++) {
    free(d->sessions[i].name);
    free(d->sessions[i].method_text);
    free(d->sessions[i].note);
    free(d->sessions[i].buckets);
  }
  free(d->sessions);
  for (uint32_t i = 0; d->sample_threads && i < d->nsample_threads; i++) {
    free(d->sample_threads[i].name);
    free(d->sample_threads[i].nodes);
  }
  free(d->sample_threads);
  for (uint32_t i = 0; d->strings && i < d->nstrings; i++) free(d->strings[i]);
  free(d->merges);
  free(d->strings);
  free(d->zone_issues);
  free(d->throttled);
  free(d->unhooked);
  for (uint32_t i = 0; d->apis && i < d->napis; i++) {
    free(d->apis[i].library);
    free(d->apis[i].symbol);
  }
  free(d->apis);
  for (uint32_t i = 0; d->skips && i < d->nskips; i++) {
    free(d->skips[i].library);
    free(d->skips[i].symbol);
  }
  free(d->skips);
  free(d->intercept.spec);
  free(d->modules);
  free(d->threads);
  free(d->exe);
  free(d->cmdline);
  free(d->path);
  free(d);
}

struct section { uint32_t type; uint64_t off, size; };

static int parse_process(struct cpd_dump *d, struct cursor *c)
{
  d->pid = c_u64(c);
  d->ppid = c_u64(c);
  d->start_ns = c_u64(c);
  d->dump_ns = c_u64(c);
  d->os = c_u32(c);
  d->arch = c_u32(c);
  d->exe = c_str(c, NULL);
  d->cmdline = c_str(c, &d->cmdline_len);
  return c->bad;
}

static int parse_clock(struct cpd_dump *d, struct cursor *c)
{
  d->clock_source = c_u32(c);
  d->clock_reads = c_u32(c);
  d->calib_ticks = c_u64(c);
  d->calib_ns = c_u64(c);
  d->timer_overhead = c_u64(c);
  d->probe_inner_mt = c_u64(c);
  d->probe_outer_mt = c_u64(c);
  if (!c->bad && (size_t)(c->end - c->p) >= 32) {   /* minor 3 */
    d->throttle_period = c_u64(c);
    d->probe_untimed_mt = c_u64(c);
    d->probe_sinner_mt = c_u64(c);
    d->probe_souter_mt = c_u64(c);
  }
  return c->bad;
}

#define MODULE_MIN 32u             /* a module record with empty strings */

static int parse_modules(struct cpd_dump *d, struct cursor *c)
{
  uint32_t n = c_u32(c);
  if (c->bad || (uint64_t)n * MODULE_MIN > (uint64_t)(c->end - c->p)) return 1;
  d->modules = calloc(n ? n : 1, sizeof *d->modules);
  if (!d->modules) return 2;
  for (uint32_t i = 0; i < n && !c->bad; i++) {
    struct cpd_module *m = &d->modules[i];
    d->nmodules = i + 1;
    m->base = c_u64(c);
    m->size = c_u64(c);
    m->id_kind = c_u32(c);
    size_t idlen = 0;
    m->id = (unsigned char *)c_str(c, &idlen);
    m->id_len = (uint32_t)idlen;
    m->path = c_str(c, NULL);
    m->debug_path = c_str(c, NULL);
  }
  return c->bad;
}

static int parse_strings(struct cpd_dump *d, struct cursor *c)
{
  uint32_t n = c_u32(c);
  if (c->bad || (uint64_t)n * 4 > (uint64_t)(c->end - c->p)) return 1;
  d->strings = calloc(n ? n : 1, sizeof *d->strings);
  if (!d->strings) return 2;
  for (uint32_t i = 0; i < n && !c->bad; i++) {
    d->nstrings = i + 1;
    d->strings[i] = c_str(c, NULL);
  }
  return c->bad;
}

/* Records are kept as written (a (thread, zone) pair may repeat); the kinds a newer writer adds are
** skipped, missing ones read as 0. Parsed after threads and strings. */
static int parse_zone_issues(struct cpd_dump *d, struct cursor *c, char *err, size_t errlen)
{
  uint32_t n = c_u32(c), kinds = c_u32(c);
  uint64_t rec = 8 + (uint64_t)kinds * 8;
  if (c->bad || kinds > 1024 || (uint64_t)n * rec > (uint64_t)(c->end - c->p))
    return fail(err, errlen, CAPPROF_ECORRUPT, "zone issue count %u does not fit its section", n);
  d->zone_issues = calloc(n ? n : 1, sizeof *d->zone_issues);
  if (!d->zone_issues) return fail(err, errlen, CAPPROF_ENOMEM, "out of memory");
  for (uint32_t i = 0; i < n; i++) {
    uint32_t th = c_u32(c), zone = c_u32(c);
    uint64_t v[CPD_ZI_KINDS] = { 0 };
    for (uint32_t k = 0; k < kinds; k++) {
      uint64_t x = c_u64(c);
      if (k < CPD_ZI_KINDS) v[k] = x;
    }
    if (th >= d->nthreads || zone >= d->nstrings)
      return fail(err, errlen, CAPPROF_ECORRUPT, "zone issue %u: thread %u or zone %u unknown",
                  i, th, zone);
    struct cpd_zone_issue *r = &d->zone_issues[d->nzone_issues++];
    r->thread = th;
    r->zone = zone;
    memcpy(r->n, v, sizeof v);
  }
  return 0;
}

/* THROTTLE: settings, hook kinds, and the throttled nodes, each of which
** must exist. Parsed after threads. */
static int parse_throttle(struct cpd_dump *d, struct cursor *c, char *err, size_t errlen)
{
  d->throttle_calls = c_u64(c);
  d->throttle_ns = c_u64(c);
  d->hooks = c_u32(c);
  uint32_t n = c_u32(c);
  if (c->bad || (uint64_t)n * CPD_THROTTLE_REC_SIZE > (uint64_t)(c->end - c->p))
    return fail(err, errlen, CAPPROF_ECORRUPT, "throttle record count %u does not fit its section", n);
  d->throttled = calloc(n ? n : 1, sizeof *d->throttled);
  if (!d->throttled) return fail(err, errlen, CAPPROF_ENOMEM, "out of memory");
  for (uint32_t i = 0; i < n; i++) {
    struct cpd_throttled *r = &d->throttled[i];
    r->thread = c_u32(c);
    r->node = c_u32(c);
    r->ticks = c_u64(c);
    r->timed = c_u64(c);
    if (r->thread >= d->nthreads || r->node == 0 || r->node >= d->threads[r->thread].node_count)
      return fail(err, errlen, CAPPROF_ECORRUPT, "throttle record %u: thread %u node %u unknown",
                  i, r->thread, r->node);
    d->nthrottled = i + 1;
  }
  return 0;
}

/* UNHOOKED: the functions whose hooks were patched out, and when. */
static int parse_unhooked(struct cpd_dump *d, struct cursor *c, char *err, size_t errlen)
{
  uint32_t n = c_u32(c), rec = c_u32(c);
  if (c->bad || rec < CPD_UNHOOKED_REC_SIZE_MIN || rec > 4096 ||
      (uint64_t)n * rec > (uint64_t)(c->end - c->p))
    return fail(err, errlen, CAPPROF_ECORRUPT, "unhooked count %u does not fit its section", n);
  d->unhooked = calloc(n ? n : 1, sizeof *d->unhooked);
  if (!d->unhooked) return fail(err, errlen, CAPPROF_ENOMEM, "out of memory");
  for (uint32_t i = 0; i < n; i++) {
    d->unhooked[i].key = cpd_get64(c->p);
    d->unhooked[i].ticks = cpd_get64(c->p + 8);
    d->unhooked[i].calls = rec >= CPD_UNHOOKED_REC_SIZE_CALLS ? cpd_get64(c->p + 16)
                                                              : CPD_UNHOOKED_UNCOUNTED;
    d->unhooked[i].flags = rec >= CPD_UNHOOKED_REC_SIZE ? cpd_get32(c->p + 24)
                                                        : CPD_UNHOOKED_SYNC_UNKNOWN;
    c->p += rec;
  }
  d->nunhooked = n;
  return 0;
}

/* THREAD_MERGES: which thread records hold several ended threads. */
static int parse_merges(struct cpd_dump *d, struct cursor *c, char *err, size_t errlen)
{
  uint32_t n = c_u32(c), rec = c_u32(c);
  d->ended_kept = c_u64(c);
  d->ended_merged = c_u64(c);
  d->ended_dropped = c_u64(c);
  if (c->bad || rec < CPD_MERGE_RECORD_SIZE || rec > 4096 ||
      (uint64_t)n * rec > (uint64_t)(c->end - c->p))
    return fail(err, errlen, CAPPROF_ECORRUPT, "thread merge count %u does not fit its section", n);
  d->merges = calloc(n ? n : 1, sizeof *d->merges);
  if (!d->merges) return fail(err, errlen, CAPPROF_ENOMEM, "out of memory");
  for (uint32_t i = 0; i < n; i++) {
    const unsigned char *p = c->p;
    struct cpd_merge *m = &d->merges[i];
    m->thread = cpd_get32(p);
    m->kind = cpd_get32(p + 4);
    m->threads = cpd_get64(p + 8);
    m->start_key = cpd_get64(p + 16);
    c->p += rec;
    if (m->thread >= d->nthreads)
      return fail(err, errlen, CAPPROF_ECORRUPT, "thread merge %u: thread %u unknown", i, m->thread);
    d->nmerges++;
  }
  return 0;
}

uint64_t cpd_throttled_at(const struct cpd_dump *d, uint32_t th, uint32_t node)
{
  const struct cpd_node *nd = &d->threads[th].nodes[node];
  if (!(nd->flags & CPD_NODE_THROTTLED)) return nd->calls;
  for (uint32_t i = 0; i < d->nthrottled; i++)
    if (d->throttled[i].thread == th && d->throttled[i].node == node)
      return d->throttled[i].timed < nd->calls ? d->throttled[i].timed : nd->calls;
  return nd->calls;
}

uint64_t cpd_timed_calls(const struct cpd_dump *d, uint32_t th, uint32_t node)
{
  if (d->throttle_period) return d->threads[th].nodes[node].calls;   /* sampled, scaled */
  return cpd_throttled_at(d, th, node);
}

/* CALIBRATION (optional, docs/dump-format.md): per-thread slow-path time. */
static int parse_calibration(struct cpd_dump *d, struct cursor *c, char *err, size_t errlen)
{
  uint32_t n = c_u32(c), fields = c_u32(c);
  uint64_t rec = 8 + (uint64_t)fields * 8;
  if (c->bad || fields > 1024 || (uint64_t)n * rec > (uint64_t)(c->end - c->p))
    return fail(err, errlen, CAPPROF_ECORRUPT, "calibration record count %u does not fit", n);
  for (uint32_t i = 0; i < n; i++) {
    uint32_t th = c_u32(c);
    (void)c_u32(c);
    uint64_t v[CPD_CAL_FIELDS] = { 0 };
    for (uint32_t k = 0; k < fields; k++) {
      uint64_t x = c_u64(c);
      if (k < CPD_CAL_FIELDS) v[k] = x;
    }
    if (th >= d->nthreads)
      return fail(err, errlen, CAPPROF_ECORRUPT, "calibration record %u: thread %u unknown", i, th);
    d->threads[th].hidden_ticks = v[CPD_CAL_HIDDEN_TICKS];
    d->threads[th].slow_calls = v[CPD_CAL_SLOW_CALLS];
  }
  return 0;
}

const struct cpd_merge *cpd_thread_merge(const struct cpd_dump *d, uint32_t thread)
{
  for (uint32_t i = 0; i < d->nmerges; i++)
    if (d->merges[i].thread == thread) return &d->merges[i];
  return NULL;
}

uint64_t cpd_zone_issue_total(const struct cpd_dump *d, uint32_t zone, unsigned kind)
{
  uint64_t sum = 0;
  for (uint32_t i = 0; kind < CPD_ZI_KINDS && i < d->nzone_issues; i++)
    if (d->zone_issues[i].zone == zone) sum += d->zone_issues[i].n[kind];
  return sum;
}

/* ---- sampling ---------------------------------------------------------------- */

#define SESSION_MIN 96u            /* a session record with empty strings, no buckets */

static int parse_sessions(struct cpd_dump *d, struct cursor *c, char *err, size_t errlen)
{
  uint32_t n = c_u32(c);
  if (c->bad || (uint64_t)n * SESSION_MIN > (uint64_t)(c->end - c->p))
    return fail(err, errlen, CAPPROF_ECORRUPT, "sampling session count %u does not fit its section", n);
  d->sessions = calloc(n ? n : 1, sizeof *d->sessions);
  if (!d->sessions) return fail(err, errlen, CAPPROF_ENOMEM, "out of memory");
  for (uint32_t i = 0; i < n; i++) {
    struct cpd_sample_session *s = &d->sessions[i];
    d->nsessions = i + 1;
    s->kind = c_u32(c);
    s->flags = c_u32(c);
    s->source = c_u32(c);
    s->method = c_u32(c);
    s->interval = c_u64(c);
    s->unit = c_u32(c);
    s->shift = c_u32(c);
    s->samples = c_u64(c);
    s->hits = c_u64(c);
    s->lost = c_u64(c);
    s->walked = c_u64(c);
    s->lo = c_u64(c);
    s->hi = c_u64(c);
    s->name = c_str(c, NULL);
    s->method_text = c_str(c, NULL);
    s->note = c_str(c, NULL);
    s->nbuckets = c_u32(c);
    if (c->bad == 2) return fail(err, errlen, CAPPROF_ENOMEM, "out of memory");
    if (c->bad || (uint64_t)s->nbuckets * 4 > (uint64_t)(c->end - c->p))
      return fail(err, errlen, CAPPROF_ECORRUPT, "sampling session %u is cut short", i);
    if (s->shift > 63 || s->lo > s->hi)
      return fail(err, errlen, CAPPROF_ECORRUPT, "sampling session %u: bad range or bucket size", i);
    s->buckets = malloc(((size_t)s->nbuckets + 1) * sizeof *s->buckets);
    if (!s->buckets) return fail(err, errlen, CAPPROF_ENOMEM, "out of memory");
    for (uint32_t k = 0; k < s->nbuckets; k++) s->buckets[k] = c_u32(c);
  }
  return 0;
}

/* Samples per call-tree node (PROBE: those in capprof's hooks, section 18);
** parsed after the threads. */
static int parse_node_samples(struct cpd_dump *d, struct cursor *c, int probe, char *err,
                              size_t errlen)
{
  uint32_t n = c_u32(c);
  if (c->bad || (uint64_t)n * 16 > (uint64_t)(c->end - c->p))
    return fail(err, errlen, CAPPROF_ECORRUPT, "node sample count %u does not fit its section", n);
  for (uint32_t i = 0; i < n; i++) {
    uint32_t th = c_u32(c), node = c_u32(c);
    uint64_t v = c_u64(c);
    if (th >= d->nthreads || node >= d->threads[th].node_count)
      return fail(err, errlen, CAPPROF_ECORRUPT, "node samples %u: thread %u node %u unknown",
                  i, th, node);
    struct cpd_thread *t = &d->threads[th];
    uint64_t **to = probe ? &t->probe_samples : &t->samples;
    if (!*to && !(*to = calloc(t->node_count, sizeof **to)))
      return fail(err, errlen, CAPPROF_ENOMEM, "out of memory");
    (*to)[node] += v;
  }
  return 0;
}

/* Section 19: program samples per (thread, node, pc); parsed after section
** 13, whose per-node counts they split. */
static int parse_node_pcs(struct cpd_dump *d, struct cursor *c, char *err, size_t errlen)
{
  uint32_t n = c_u32(c);
  if (c->bad || (uint64_t)n * 24 > (uint64_t)(c->end - c->p))
    return fail(err, errlen, CAPPROF_ECORRUPT, "node pc count %u does not fit its section", n);
  const unsigned char *start = c->p;
  for (int pass = 0; pass < 2; pass++) {
    c->p = start;
    for (uint32_t i = 0; i < n; i++) {
      uint32_t th = c_u32(c), node = c_u32(c);
      uint64_t pc = c_u64(c), v = c_u64(c);
      if (th >= d->nthreads || node >= d->threads[th].node_count)
        return fail(err, errlen, CAPPROF_ECORRUPT, "node pcs %u: thread %u node %u unknown",
                    i, th, node);
      struct cpd_thread *t = &d->threads[th];
      if (pass == 0) { t->npcs++; continue; }
      t->pcs[t->npcs++] = (struct cpd_node_pc){ node, pc, v };
    }
    for (uint32_t k = 0; pass == 0 && k < d->nthreads; k++) {
      struct cpd_thread *t = &d->threads[k];
      if (t->npcs && !(t->pcs = calloc(t->npcs, sizeof *t->pcs)))
        return fail(err, errlen, CAPPROF_ENOMEM, "out of memory");
      t->npcs = 0;
    }
  }
  return 0;
}

#define STHREAD_MIN 36u

static int parse_stacks(struct cpd_dump *d, struct cursor *c, char *err, size_t errlen)
{
  uint32_t n = c_u32(c);
  if (c->bad || (uint64_t)n * STHREAD_MIN > (uint64_t)(c->end - c->p))
    return fail(err, errlen, CAPPROF_ECORRUPT, "sampled thread count %u does not fit its section", n);
  d->sample_threads = calloc(n ? n : 1, sizeof *d->sample_threads);
  if (!d->sample_threads) return fail(err, errlen, CAPPROF_ENOMEM, "out of memory");
  for (uint32_t i = 0; i < n; i++) {
    struct cpd_sample_thread *t = &d->sample_threads[i];
    d->nsample_threads = i + 1;
    t->tid = c_u64(c);
    t->thread = c_u32(c);
    t->nnodes = c_u32(c);
    t->samples = c_u64(c);
    t->lost = c_u64(c);
    t->name = c_str(c, NULL);
    if (c->bad == 2) return fail(err, errlen, CAPPROF_ENOMEM, "out of memory");
    if (c->bad || t->nnodes == 0 || (uint64_t)t->nnodes * 16 > (uint64_t)(c->end - c->p))
      return fail(err, errlen, CAPPROF_ECORRUPT, "sampled thread %u is cut short", i);
    if (t->thread != CPD_NO_PARENT && t->thread >= d->nthreads)
      return fail(err, errlen, CAPPROF_ECORRUPT, "sampled thread %u: thread %u unknown", i,
                  t->thread);
    t->nodes = malloc((size_t)t->nnodes * sizeof *t->nodes);
    if (!t->nodes) return fail(err, errlen, CAPPROF_ENOMEM, "out of memory");
    for (uint32_t k = 0; k < t->nnodes; k++) {
      struct cpd_snode *s = &t->nodes[k];
      s->addr = c_u64(c);
      s->parent = c_u32(c);
      s->self = c_u32(c);
      if (k == 0 ? s->parent != CPD_NO_PARENT : s->parent >= k)
        return fail(err, errlen, CAPPROF_ECORRUPT, "sampled thread %u node %u: bad parent %u",
                    i, k, s->parent);
    }
  }
  return 0;
}

const char *cpd_source_name(uint32_t source)
{
  static const char *const names[] = { "?", "task-clock", "cpu-clock", "cpu-timer", "cycles",
                                       "instructions", "branches", "branch-misses",
                                       "cache-references", "cache-misses" };
  return source < sizeof names / sizeof names[0] ? names[source] : "?";
}

const struct cpd_sample_session *cpd_process_sampling(const struct cpd_dump *d)
{
  for (uint32_t i = 0; i < d->nsessions; i++)
    if (d->sessions[i].kind == CPD_SK_PROCESS) return &d->sessions[i];
  return NULL;
}

/* API: u32 count, then (u32 id, u32 flags, str library, str symbol) with
** ids 0..count-1 in order. */
static int parse_apis(struct cpd_dump *d, struct cursor *c)
{
  uint32_t n = c_u32(c);
  if (c->bad || (uint64_t)n * 16 > (uint64_t)(c->end - c->p)) return 1;
  d->apis = calloc(n ? n : 1, sizeof *d->apis);
  if (!d->apis) return 2;
  for (uint32_t i = 0; i < n && !c->bad; i++) {
    uint32_t id = c_u32(c);
    (void)c_u32(c);
    d->napis = i + 1;
    d->apis[i].library = c_str(c, NULL);
    d->apis[i].symbol = c_str(c, NULL);
    if (!c->bad && id != i) return 1;
  }
  return c->bad;
}

static int parse_intercept(struct cpd_dump *d, struct cursor *c)
{
  struct cpd_intercept *x = &d->intercept;
  x->present = 1;
  x->status = c_u32(c);
  (void)c_u32(c);
  x->modules = c_u64(c);
  x->slots = c_u64(c);
  x->unrecorded = c_u64(c);
  x->inner_mt = c_u64(c);
  x->outer_mt = c_u64(c);
  x->spec = c_str(c, NULL);
  return c->bad;
}

static int parse_skips(struct cpd_dump *d, struct cursor *c)
{
  uint32_t n = c_u32(c);
  if (c->bad || (uint64_t)n * 24 > (uint64_t)(c->end - c->p)) return 1;
  d->skips = calloc(n ? n : 1, sizeof *d->skips);
  if (!d->skips) return 2;
  for (uint32_t i = 0; i < n && !c->bad; i++) {
    struct cpd_skip *k = &d->skips[i];
    d->nskips = i + 1;
    k->reason = c_u32(c);
    (void)c_u32(c);
    k->slots = c_u64(c);
    k->library = c_str(c, NULL);
    k->symbol = c_str(c, NULL);
  }
  return c->bad;
}

const char *cpd_intercept_status_text(uint32_t status)
{
  switch (status) {
  case CPD_IS_OFF: return "off";
  case CPD_IS_ACTIVE: return "on";
  case CPD_IS_STATIC: return "cannot apply: statically linked program";
  case CPD_IS_UNSUPPORTED: return "not implemented for this platform";
  case CPD_IS_FAILED: return "failed to start (out of memory)";
  }
  return "unknown status";
}

const char *cpd_skip_reason_text(uint32_t reason)
{
  switch (reason) {
  case CPD_SKIP_RETURNS_TWICE: return "returns twice";
  case CPD_SKIP_UNWINDS: return "leaves by unwinding";
  case CPD_SKIP_SHARES_STACK: return "child shares the thread";
  case CPD_SKIP_LIBRARY: return "loader/unwinder/capprof";
  case CPD_SKIP_SLOT: return "unexpected slot value";
  case CPD_SKIP_PROTECT: return "page not writable";
  case CPD_SKIP_FULL: return "capprof's tables full";
  case CPD_SKIP_START: return "program start (calls main)";
  }
  return "unknown reason";
}

#define THREAD_MIN 52u

static int parse_threads(struct cpd_dump *d, struct cursor *c, const struct section *nodes,
                         const unsigned char *data, char *err, size_t errlen)
{
  uint64_t total = nodes->size / CPD_NODE_SIZE, claimed = 0, calls_total = 0;
  uint32_t n = c_u32(c);
  if (c->bad || (uint64_t)n * THREAD_MIN > (uint64_t)(c->end - c->p))
    return fail(err, errlen, CAPPROF_ECORRUPT, "thread count %u does not fit its section", n);
  d->threads = calloc(n ? n : 1, sizeof *d->threads);
  if (!d->threads) return fail(err, errlen, CAPPROF_ENOMEM, "out of memory");
  for (uint32_t i = 0; i < n; i++) {
    struct cpd_thread *t = &d->threads[i];
    d->nthreads = i + 1;
    t->tid = c_u64(c);
    t->start_ns = c_u64(c);
    t->end_ns = c_u64(c);
    t->lost_calls = c_u64(c);
    uint64_t first = c_u64(c);
    t->node_count = c_u32(c);
    t->open_calls = c_u32(c);
    t->name = c_str(c, NULL);
    if (c->bad == 2) return fail(err, errlen, CAPPROF_ENOMEM, "out of memory");
    if (c->bad) return fail(err, errlen, CAPPROF_ETRUNC, "thread %u record is cut short", i);
    if (t->node_count == 0 || first > total || t->node_count > total - first)
      return fail(err, errlen, CAPPROF_ECORRUPT,
                  "thread %u: nodes %llu+%u outside the %llu nodes present", i,
                  (unsigned long long)first, t->node_count, (unsigned long long)total);
    /* Threads may not share nodes: memory stays proportional to the file. */
    claimed += t->node_count;
    if (claimed > total)
      return fail(err, errlen, CAPPROF_ECORRUPT,
                  "threads claim %llu nodes, more than the %llu present",
                  (unsigned long long)claimed, (unsigned long long)total);
    t->nodes = malloc((size_t)t->node_count * sizeof *t->nodes);
    if (!t->nodes) return fail(err, errlen, CAPPROF_ENOMEM, "out of memory");
    const unsigned char *r = data + nodes->off + first * CPD_NODE_SIZE;
    for (uint32_t k = 0; k < t->node_count; k++, r += CPD_NODE_SIZE) {
      struct cpd_node *nd = &t->nodes[k];
      nd->key = cpd_get64(r);
      nd->parent = cpd_get32(r + 8);
      nd->flags = cpd_get32(r + 12);
      nd->calls = cpd_get64(r + 16);
      nd->incl = cpd_get64(r + 24);
      nd->min = cpd_get64(r + 32);
      nd->max = cpd_get64(r + 40);
      /* Every sum of call counts the tool makes from one dump stays below
      ** 2^64 (sums over several dumps saturate: cpd_sat_add). */
      if (nd->calls > UINT64_MAX - calls_total)
        return fail(err, errlen, CAPPROF_ECORRUPT,
                    "thread %u node %u: call counts add up to more than 2^64-1", i, k);
      calls_total += nd->calls;
      if (k == 0 ? (nd->parent != CPD_NO_PARENT || nd->key != CPD_KEY_ROOT)
                 : nd->parent >= k)
        return fail(err, errlen, CAPPROF_ECORRUPT,
                    "thread %u node %u: bad parent %u", i, k, nd->parent);
      if (CPD_KEY_IS_ZONE(nd->key) && (nd->key & 0xFFFFFFFFu) >= d->nstrings)
        return fail(err, errlen, CAPPROF_ECORRUPT,
                    "thread %u node %u: zone name %u not in the string table", i, k,
                    (unsigned)(nd->key & 0xFFFFFFFFu));
      if (CPD_KEY_IS_API(nd->key) && (nd->key & 0xFFFFFFFFu) >= d->napis)
        return fail(err, errlen, CAPPROF_ECORRUPT,
                    "thread %u node %u: API id %u not in the API section", i, k,
                    (unsigned)(nd->key & 0xFFFFFFFFu));
      if (CPD_KEY_IS_SYMBOL(nd->key) &&
          ((nd->key & 0xFFFFFFFFu) >= d->nstrings ||
           ((nd->key >> 32) & 0xFFFFu) > d->nmodules))
        return fail(err, errlen, CAPPROF_ECORRUPT,
                    "thread %u node %u: symbol key %#llx names no string or module", i, k,
                    (unsigned long long)nd->key);
    }
  }
  return 0;
}

int cpd_parse(const unsigned char *data, size_t size, struct cpd_dump **out,
              char *err, size_t errlen)
{
  *out = NULL;
  /* The runtime writes the header last, over zeros: a file that starts with
  ** zeros is a dump whose writer was killed (NAME.capprof.tmpXXXX). */
  size_t lead = 0;
  while (lead < size && lead < CPD_HEADER_SIZE && data[lead] == 0) lead++;
  if (size == 0)
    return fail(err, errlen, CAPPROF_ETRUNC,
                "empty file (an interrupted dump, or not a dump)");
  if (lead == size || lead == CPD_HEADER_SIZE)
    return fail(err, errlen, CAPPROF_ETRUNC,
                "an interrupted dump: the process writing it ended before it finished"
                " (%zu bytes, no header)", size);
  if (size < CPD_MAGIC_LEN || memcmp(data, CPD_MAGIC, CPD_MAGIC_LEN) != 0)
    return fail(err, errlen, CAPPROF_EFORMAT, "not a capprof dump (bad magic)");
  if (size < CPD_HEADER_SIZE)
    return fail(err, errlen, CAPPROF_ETRUNC, "dump is truncated (%zu bytes, header needs %u)",
                size, CPD_HEADER_SIZE);
  unsigned version = cpd_get16(data + CPD_H_VERSION);
  if (version != CPD_VERSION)
    return fail(err, errlen, CAPPROF_EVERSION, "dump format version %u (this capprof reads %u)",
                version, CPD_VERSION);
  uint32_t hsize = cpd_get32(data + CPD_H_HEADER_SIZE);
  uint32_t nsec = cpd_get32(data + CPD_H_NSECTIONS);
  uint32_t flags = cpd_get32(data + CPD_H_FLAGS);
  uint64_t table = cpd_get64(data + CPD_H_TABLE_OFF);
  uint64_t fsize = cpd_get64(data + CPD_H_FILE_SIZE);
  if (!(flags & CPD_F_COMPLETE))
    return fail(err, errlen, CAPPROF_ETRUNC, "dump is incomplete (the writer did not finish)");
  if (fsize > size)
    return fail(err, errlen, CAPPROF_ETRUNC, "dump is truncated (%zu of %llu bytes)", size,
                (unsigned long long)fsize);
  if (fsize < size)
    return fail(err, errlen, CAPPROF_ECORRUPT, "dump has %llu unexpected trailing bytes",
                (unsigned long long)(size - fsize));
  if (hsize < CPD_HEADER_SIZE || hsize > size || nsec > MAX_SECTIONS || table < hsize ||
      table > size || (size - table) / CPD_SECTION_SIZE < nsec)
    return fail(err, errlen, CAPPROF_ECORRUPT, "dump header is corrupt");

  struct section sec[MAX_SECTIONS], *want[CPD_SEC_UNHOOKED + 1] = { 0 };
  for (uint32_t i = 0; i < nsec; i++) {
    const unsigned char *e = data + table + (size_t)i * CPD_SECTION_SIZE;
    sec[i].type = cpd_get32(e);
    sec[i].off = cpd_get64(e + 8);
    sec[i].size = cpd_get64(e + 16);
    if (sec[i].off < hsize || sec[i].off > table || sec[i].size > table - sec[i].off)
      return fail(err, errlen, CAPPROF_ECORRUPT, "section %u lies outside the file", i);
    if (sec[i].type >= 1 && sec[i].type <= CPD_SEC_UNHOOKED) {
      if (want[sec[i].type])
        return fail(err, errlen, CAPPROF_ECORRUPT, "section type %u appears twice", sec[i].type);
      want[sec[i].type] = &sec[i];
    }
  }
  static const char *const names[] = { "", "process", "clock", "modules", "threads", "nodes" };
  for (int ty = CPD_SEC_PROCESS; ty <= CPD_SEC_NODES; ty++)
    if (!want[ty])
      return fail(err, errlen, CAPPROF_ECORRUPT, "the %s section is missing", names[ty]);
  if (want[CPD_SEC_NODES]->size % CPD_NODE_SIZE)
    return fail(err, errlen, CAPPROF_ECORRUPT, "nodes section is not a whole number of nodes");

  struct cpd_dump *d = calloc(1, sizeof *d);
  if (!d) return fail(err, errlen, CAPPROF_ENOMEM, "out of memory");
  d->version = version;
  d->minor = cpd_get16(data + CPD_H_VERSION + 2);
  d->ptr_size = cpd_get32(data + CPD_H_PTR_SIZE);
  d->flags = flags;
  int rc = 0;
  struct cursor c;
#define SECTION_CURSOR(ty) \
  (c.p = data + want[ty]->off, c.end = c.p + want[ty]->size, c.bad = 0, &c)

  if (parse_process(d, SECTION_CURSOR(CPD_SEC_PROCESS)))
    rc = fail(err, errlen, c.bad == 2 ? CAPPROF_ENOMEM : CAPPROF_ECORRUPT,
              "process section is corrupt");
  else if (parse_clock(d, SECTION_CURSOR(CPD_SEC_CLOCK)) || !d->calib_ticks || !d->calib_ns)
    rc = fail(err, errlen, CAPPROF_ECORRUPT, "clock section is corrupt");
  else if (parse_modules(d, SECTION_CURSOR(CPD_SEC_MODULES)))
    rc = fail(err, errlen, c.bad == 2 ? CAPPROF_ENOMEM : CAPPROF_ECORRUPT,
              "module section is corrupt");
  else if (want[CPD_SEC_STRINGS] && parse_strings(d, SECTION_CURSOR(CPD_SEC_STRINGS)))
    rc = fail(err, errlen, c.bad == 2 ? CAPPROF_ENOMEM : CAPPROF_ECORRUPT,
              "string section is corrupt");
  else if (want[CPD_SEC_API] && parse_apis(d, SECTION_CURSOR(CPD_SEC_API)))
    rc = fail(err, errlen, c.bad == 2 ? CAPPROF_ENOMEM : CAPPROF_ECORRUPT,
              "API section is corrupt");
  else if (want[CPD_SEC_INTERCEPT] && parse_intercept(d, SECTION_CURSOR(CPD_SEC_INTERCEPT)))
    rc = fail(err, errlen, c.bad == 2 ? CAPPROF_ENOMEM : CAPPROF_ECORRUPT,
              "interception section is corrupt");
  else if (want[CPD_SEC_INTERCEPT_SKIPS] &&
           parse_skips(d, SECTION_CURSOR(CPD_SEC_INTERCEPT_SKIPS)))
    rc = fail(err, errlen, c.bad == 2 ? CAPPROF_ENOMEM : CAPPROF_ECORRUPT,
              "interception skips section is corrupt");
  else
    rc = parse_threads(d, SECTION_CURSOR(CPD_SEC_THREADS), want[CPD_SEC_NODES], data, err,
                       errlen);
  if (!rc && want[CPD_SEC_ZONE_ISSUES])
    rc = parse_zone_issues(d, SECTION_CURSOR(CPD_SEC_ZONE_ISSUES), err, errlen);
  if (!rc && want[CPD_SEC_THROTTLE])
    rc = parse_throttle(d, SECTION_CURSOR(CPD_SEC_THROTTLE), err, errlen);

  if (!rc && want[CPD_SEC_UNHOOKED])
    rc = parse_unhooked(d, SECTION_CURSOR(CPD_SEC_UNHOOKED), err, errlen);
  if (!rc && want[CPD_SEC_THREAD_MERGES])
    rc = parse_merges(d, SECTION_CURSOR(CPD_SEC_THREAD_MERGES), err, errlen);
  for (uint32_t i = 0; !rc && i < nsec; i++)       /* CALIBRATION: the first one */
    if (sec[i].type == CPD_SEC_CALIBRATION) {
      c.p = data + sec[i].off;
      c.end = c.p + sec[i].size;
      c.bad = 0;
      rc = parse_calibration(d, &c, err, errlen);
      break;
    }
  if (!rc && want[CPD_SEC_SAMPLE_SESSIONS])
    rc = parse_sessions(d, SECTION_CURSOR(CPD_SEC_SAMPLE_SESSIONS), err, errlen);
  if (!rc && want[CPD_SEC_SAMPLE_NODES])
    rc = parse_node_samples(d, SECTION_CURSOR(CPD_SEC_SAMPLE_NODES), 0, err, errlen);
  if (!rc && want[CPD_SEC_SAMPLE_PROBE])
    rc = parse_node_samples(d, SECTION_CURSOR(CPD_SEC_SAMPLE_PROBE), 1, err, errlen);
  if (!rc && want[CPD_SEC_SAMPLE_NODE_PCS])
    rc = parse_node_pcs(d, SECTION_CURSOR(CPD_SEC_SAMPLE_NODE_PCS), err, errlen);
  if (!rc && want[CPD_SEC_SAMPLE_STACKS])
    rc = parse_stacks(d, SECTION_CURSOR(CPD_SEC_SAMPLE_STACKS), err, errlen);
#undef SECTION_CURSOR
  if (rc) {
    cpd_free(d);
    return rc;
  }
  d->path = calloc(1, 1);
  if (!d->path) {
    cpd_free(d);
    return fail(err, errlen, CAPPROF_ENOMEM, "out of memory");
  }
  *out = d;
  return 0;
}

int cpd_load(const char *path, struct cpd_dump **out, char *err, size_t errlen)
{
  *out = NULL;
  /* Regular files only: /dev/zero or a FIFO would never end. */
  struct stat st;
  if (stat(path, &st) != 0)
    return fail(err, errlen, errno == ENOENT ? CAPPROF_ENOENT : CAPPROF_EIO, "%s",
                strerror(errno));
  if ((st.st_mode & S_IFMT) != S_IFREG)
    return fail(err, errlen, CAPPROF_EIO, "not a regular file");
  FILE *f = fopen(path, "rb");
  if (!f)
    return fail(err, errlen, errno == ENOENT ? CAPPROF_ENOENT : CAPPROF_EIO, "%s",
                strerror(errno));
  size_t cap = 1 << 16, len = 0;
  unsigned char *buf = malloc(cap);
  int rc = 0;
  while (buf) {
    size_t k = fread(buf + len, 1, cap - len, f);
    len += k;
    if (k == 0) break;
    if (len == cap) {
      unsigned char *nb = realloc(buf, cap * 2);
      if (!nb) { free(buf); buf = NULL; break; }
      buf = nb;
      cap *= 2;
    }
  }
  if (!buf) rc = fail(err, errlen, CAPPROF_ENOMEM, "out of memory");
  else if (ferror(f)) rc = fail(err, errlen, CAPPROF_EIO, "read error");
  fclose(f);
  if (!rc) rc = cpd_parse(buf, len, out, err, errlen);
  free(buf);
  if (!rc) {
    free((*out)->path);
    (*out)->path = strdup(path);
    if (!(*out)->path) {
      cpd_free(*out);
      *out = NULL;
      rc = fail(err, errlen, CAPPROF_ENOMEM, "out of memory");
    }
  }
  return rc;
}

double cpd_ticks_to_ns(const struct cpd_dump *d, double ticks)
{
  return ticks * (double)d->calib_ns / (double)d->calib_ticks;
}

int cpd_find_module(const struct cpd_dump *d, uint64_t addr)
{
  int best = -1;
  for (uint32_t i = 0; i < d->nmodules; i++) {
    const struct cpd_module *m = &d->modules[i];
    if (addr >= m->base && addr - m->base < m->size &&
        (best < 0 || m->base > d->modules[best].base))
      best = (int)i;
  }
  return best;
}
