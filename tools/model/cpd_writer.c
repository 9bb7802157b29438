/*
** cpd_writer.c -- writes a struct cpd_dump in the dump format (dumpfmt.h,
** docs/dump-format.md), section for section as the runtime's writer does:
** PROCESS, CLOCK, MODULES, STRINGS (if any), NODES, THREADS, ZONE_ISSUES (if
** any), CALIBRATION (if any thread has figures), THROTTLE (if any), section table.
*/
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/cpd_writer.h"

struct buf { unsigned char *p; size_t len, cap; int oom; };

static unsigned char *reserve(struct buf *b, size_t n)
{
  if (b->oom) return NULL;
  if (b->len + n > b->cap) {
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->len + n) cap *= 2;
    unsigned char *np = realloc(b->p, cap);
    if (!np) { b->oom = 1; return NULL; }
    b->p = np;
    b->cap = cap;
  }
  unsigned char *at = b->p + b->len;
  b->len += n;
  return at;
}

static void put32(struct buf *b, uint32_t v) { unsigned char *p = reserve(b, 4); if (p) cpd_put32(p, v); }
static void put64(struct buf *b, uint64_t v) { unsigned char *p = reserve(b, 8); if (p) cpd_put64(p, v); }

static void put_bytes(struct buf *b, const void *s, size_t n)
{
  put32(b, (uint32_t)n);
  unsigned char *p = reserve(b, n);
  if (p && n) memcpy(p, s, n);
}

static void put_str(struct buf *b, const char *s) { put_bytes(b, s ? s : "", s ? strlen(s) : 0); }

struct table { unsigned char e[24][CPD_SECTION_SIZE]; int n; };

static void section(struct table *t, uint32_t type, size_t start, size_t end)
{
  unsigned char *e = t->e[t->n++];
  cpd_put32(e, type);
  cpd_put32(e + 4, 0);
  cpd_put64(e + 8, start);
  cpd_put64(e + 16, end - start);
}

/* Section 13 (PROBE 0) or 18 (PROBE 1): the samples charged to each node. */
static void put_node_samples(struct table *t, struct buf *b, const struct cpd_dump *d, int probe)
{
  size_t s = b->len;
  uint32_t records = 0;
  for (uint32_t i = 0; i < d->nthreads; i++) {
    const uint64_t *v = probe ? d->threads[i].probe_samples : d->threads[i].samples;
    for (uint32_t k = 0; v && k < d->threads[i].node_count; k++) records += v[k] != 0;
  }
  put32(b, records);
  for (uint32_t i = 0; i < d->nthreads; i++) {
    const uint64_t *v = probe ? d->threads[i].probe_samples : d->threads[i].samples;
    for (uint32_t k = 0; v && k < d->threads[i].node_count; k++) {
      if (!v[k]) continue;
      put32(b, i);
      put32(b, k);
      put64(b, v[k]);
    }
  }
  section(t, probe ? CPD_SEC_SAMPLE_PROBE : CPD_SEC_SAMPLE_NODES, s, b->len);
}

int cpd_serialize(const struct cpd_dump *d, unsigned char **out, size_t *len)
{
  struct buf b = { 0 };
  struct table t = { .n = 0 };
  reserve(&b, CPD_HEADER_SIZE);
  if (b.p) memset(b.p, 0, CPD_HEADER_SIZE);

  size_t s = b.len;
  put64(&b, d->pid);
  put64(&b, d->ppid);
  put64(&b, d->start_ns);
  put64(&b, d->dump_ns);
  put32(&b, d->os);
  put32(&b, d->arch);
  put_str(&b, d->exe);
  put_bytes(&b, d->cmdline ? d->cmdline : "", d->cmdline ? d->cmdline_len : 0);
  section(&t, CPD_SEC_PROCESS, s, b.len);

  s = b.len;
  put32(&b, d->clock_source);
  put32(&b, d->clock_reads);
  put64(&b, d->calib_ticks);
  put64(&b, d->calib_ns);
  put64(&b, d->timer_overhead);
  put64(&b, d->probe_inner_mt);
  put64(&b, d->probe_outer_mt);
  put64(&b, d->throttle_period);
  put64(&b, d->probe_untimed_mt);
  put64(&b, d->probe_sinner_mt);
  put64(&b, d->probe_souter_mt);
  section(&t, CPD_SEC_CLOCK, s, b.len);

  s = b.len;
  put32(&b, d->nmodules);
  for (uint32_t i = 0; i < d->nmodules; i++) {
    const struct cpd_module *m = &d->modules[i];
    put64(&b, m->base);
    put64(&b, m->size);
    put32(&b, m->id_kind);
    put_bytes(&b, m->id, m->id ? m->id_len : 0);
    put_str(&b, m->path);
    put_str(&b, m->debug_path);
  }
  section(&t, CPD_SEC_MODULES, s, b.len);

  if (d->nstrings) {
    s = b.len;
    put32(&b, d->nstrings);
    for (uint32_t i = 0; i < d->nstrings; i++) put_str(&b, d->strings[i]);
    section(&t, CPD_SEC_STRINGS, s, b.len);
  }

  s = b.len;
  for (uint32_t i = 0; i < d->nthreads; i++) {
    const struct cpd_thread *th = &d->threads[i];
    for (uint32_t k = 0; k < th->node_count; k++) {
      const struct cpd_node *n = &th->nodes[k];
      unsigned char *r = reserve(&b, CPD_NODE_SIZE);
      if (!r) break;
      cpd_put64(r, n->key);
      cpd_put32(r + 8, k == 0 ? CPD_NO_PARENT : n->parent);
      cpd_put32(r + 12, n->flags);
      cpd_put64(r + 16, n->calls);
      cpd_put64(r + 24, n->incl);
      cpd_put64(r + 32, n->min);
      cpd_put64(r + 40, n->max);
    }
  }
  section(&t, CPD_SEC_NODES, s, b.len);

  s = b.len;
  put32(&b, d->nthreads);
  uint64_t first = 0;
  for (uint32_t i = 0; i < d->nthreads; i++) {
    const struct cpd_thread *th = &d->threads[i];
    put64(&b, th->tid);
    put64(&b, th->start_ns);
    put64(&b, th->end_ns);
    put64(&b, th->lost_calls);
    put64(&b, first);
    put32(&b, th->node_count);
    put32(&b, th->open_calls);
    put_str(&b, th->name);
    first += th->node_count;
  }
  section(&t, CPD_SEC_THREADS, s, b.len);

  if (d->nzone_issues) {
    s = b.len;
    put32(&b, d->nzone_issues);
    put32(&b, CPD_ZI_KINDS);
    for (uint32_t i = 0; i < d->nzone_issues; i++) {
      const struct cpd_zone_issue *z = &d->zone_issues[i];
      put32(&b, z->thread);
      put32(&b, z->zone);
      for (int k = 0; k < CPD_ZI_KINDS; k++) put64(&b, z->n[k]);
    }
    section(&t, CPD_SEC_ZONE_ISSUES, s, b.len);
  }

  if (d->nsessions) {                   /* sampling (12-14) */
    s = b.len;
    put32(&b, d->nsessions);
    for (uint32_t i = 0; i < d->nsessions; i++) {
      const struct cpd_sample_session *x = &d->sessions[i];
      put32(&b, x->kind);
      put32(&b, x->flags);
      put32(&b, x->source);
      put32(&b, x->method);
      put64(&b, x->interval);
      put32(&b, x->unit);
      put32(&b, x->shift);
      put64(&b, x->samples);
      put64(&b, x->hits);
      put64(&b, x->lost);
      put64(&b, x->walked);
      put64(&b, x->lo);
      put64(&b, x->hi);
      put_str(&b, x->name);
      put_str(&b, x->method_text);
      put_str(&b, x->note);
      put32(&b, x->buckets ? x->nbuckets : 0);
      for (uint32_t k = 0; x->buckets && k < x->nbuckets; k++) put32(&b, x->buckets[k]);
    }
    section(&t, CPD_SEC_SAMPLE_SESSIONS, s, b.len);

    put_node_samples(&t, &b, d, 0);
    put_node_samples(&t, &b, d, 1);

    s = b.len;
    put32(&b, d->nsample_threads);
    for (uint32_t i = 0; i < d->nsample_threads; i++) {
      const struct cpd_sample_thread *x = &d->sample_threads[i];
      put64(&b, x->tid);
      put32(&b, x->thread);
      put32(&b, x->nnodes);
      put64(&b, x->samples);
      put64(&b, x->lost);
      put_str(&b, x->name);
      for (uint32_t k = 0; k < x->nnodes; k++) {
        put64(&b, x->nodes[k].addr);
        put32(&b, k ? x->nodes[k].parent : CPD_NO_PARENT);
        put32(&b, x->nodes[k].self);
      }
    }
    section(&t, CPD_SEC_SAMPLE_STACKS, s, b.len);
  }

  if (d->nthrottled || d->throttle_calls || d->hooks) {
    s = b.len;
    put64(&b, d->throttle_calls);
    put64(&b, d->throttle_ns);
    put32(&b, d->hooks);
    put32(&b, d->nthrottled);
    for (uint32_t i = 0; i < d->nthrottled; i++) {
      put32(&b, d->throttled[i].thread);
      put32(&b, d->throttled[i].node);
      put64(&b, d->throttled[i].ticks);
      put64(&b, d->throttled[i].timed);
    }
    section(&t, CPD_SEC_THROTTLE, s, b.len);
  }

  if (d->nunhooked) {                           /* format 1.6, calls 1.7, flags 1.8 */
    s = b.len;
    put32(&b, d->nunhooked);
    put32(&b, CPD_UNHOOKED_REC_SIZE);
    for (uint32_t i = 0; i < d->nunhooked; i++) {
      put64(&b, d->unhooked[i].key);
      put64(&b, d->unhooked[i].ticks);
      put64(&b, d->unhooked[i].calls);
      put32(&b, d->unhooked[i].flags);
      put32(&b, 0);
    }
    section(&t, CPD_SEC_UNHOOKED, s, b.len);
  }

  if (d->napis || d->intercept.present) {      /* 'capprof run' */
    s = b.len;
    put32(&b, d->napis);
    for (uint32_t i = 0; i < d->napis; i++) {
      put32(&b, i);
      put32(&b, 0);
      put_str(&b, d->apis[i].library);
      put_str(&b, d->apis[i].symbol);
    }
    section(&t, CPD_SEC_API, s, b.len);
    s = b.len;
    put32(&b, d->intercept.status);
    put32(&b, 0);
    put64(&b, d->intercept.modules);
    put64(&b, d->intercept.slots);
    put64(&b, d->intercept.unrecorded);
    put64(&b, d->intercept.inner_mt);
    put64(&b, d->intercept.outer_mt);
    put_str(&b, d->intercept.spec ? d->intercept.spec : "");
    section(&t, CPD_SEC_INTERCEPT, s, b.len);
  }

  uint32_t cal = 0;
  for (uint32_t i = 0; i < d->nthreads; i++)
    cal += d->threads[i].hidden_ticks || d->threads[i].slow_calls;
  if (cal) {
    s = b.len;
    put32(&b, cal);
    put32(&b, CPD_CAL_FIELDS);
    for (uint32_t i = 0; i < d->nthreads; i++) {
      const struct cpd_thread *th = &d->threads[i];
      if (!th->hidden_ticks && !th->slow_calls) continue;
      put32(&b, i);
      put32(&b, 0);
      put64(&b, th->hidden_ticks);
      put64(&b, th->slow_calls);
    }
    section(&t, CPD_SEC_CALIBRATION, s, b.len);
  }

  size_t table = b.len;
  for (int i = 0; i < t.n; i++) {
    unsigned char *p = reserve(&b, CPD_SECTION_SIZE);
    if (p) memcpy(p, t.e[i], CPD_SECTION_SIZE);
  }
  if (b.oom) {
    free(b.p);
    return CAPPROF_ENOMEM;
  }
  unsigned char *h = b.p;
  memcpy(h + CPD_H_MAGIC, CPD_MAGIC, CPD_MAGIC_LEN);
  cpd_put16(h + CPD_H_VERSION, CPD_VERSION);
  cpd_put16(h + CPD_H_VERSION + 2, CPD_VERSION_MINOR);
  cpd_put32(h + CPD_H_HEADER_SIZE, CPD_HEADER_SIZE);
  cpd_put32(h + CPD_H_NSECTIONS, (uint32_t)t.n);
  cpd_put32(h + CPD_H_FLAGS, d->flags | CPD_F_COMPLETE);
  cpd_put64(h + CPD_H_TABLE_OFF, table);
  cpd_put64(h + CPD_H_FILE_SIZE, b.len);
  cpd_put32(h + CPD_H_PTR_SIZE, d->ptr_size ? d->ptr_size : 8);
  *out = b.p;
  *len = b.len;
  return 0;
}

int cpd_write(const struct cpd_dump *d, const char *path, char *err, size_t errlen)
{
  unsigned char *data;
  size_t len;
  if (cpd_serialize(d, &data, &len) != 0) {
    snprintf(err, errlen, "out of memory");
    return CAPPROF_ENOMEM;
  }
  FILE *f = fopen(path, "wb");
  if (!f) {
    snprintf(err, errlen, "cannot create: %s", strerror(errno));
    free(data);
    return CAPPROF_EIO;
  }
  int bad = fwrite(data, 1, len, f) != len;
  bad |= fclose(f) != 0;
  free(data);
  if (bad) {
    snprintf(err, errlen, "write error");
    remove(path);
    return CAPPROF_EIO;
  }
  return 0;
}
