/*
** export_pprof.c -- '--format=pprof': pprof's profile.proto, gzipped, for
** 'go tool pprof' and the services that ingest it. Every call path of every
** thread is one sample whose stack is that path (leaf first) and whose
** values are the node's self figures: calls, cpu (CPU time of its samples)
** and elapsed (compensated exclusive time), so pprof's sums up the stack
** give the inclusive figures and its flame graph is capprof's tree merged
** over threads. Each sample carries a 'thread' and a 'pid' label.
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "export/export.h"
#include "export/pprof_enc.h"
#include "model/tool.h"
#include "sym/symbols.h"

/* Stacks deeper than HEAD + TAIL frames keep their TAIL frames nearest the
** leaf and HEAD nearest the root around one "[frames elided]" frame, so the
** file stays linear in the number of nodes (export_folded.c does the same). */
#define HEAD 64
#define TAIL 64

/* The string table: strings interned once, index 0 the empty string. */
struct strtab {
  struct pb_buf out;       /* the Profile message's string_table fields */
  char **s;                /* by index */
  uint32_t n, cap;
  uint32_t *hash, mask;    /* open addressing, index + 1, 0 empty */
  int oom;
};

static uint64_t str_hash(const char *s)
{
  uint64_t h = 1469598103934665603ull;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

static int str_grow(struct strtab *t)
{
  uint32_t size = t->mask ? (t->mask + 1) * 2 : 1024;
  uint32_t *h = calloc(size, sizeof *h);
  if (!h) return -1;
  for (uint32_t i = 0; i < t->n; i++) {
    uint32_t k = (uint32_t)str_hash(t->s[i]) & (size - 1);
    while (h[k]) k = (k + 1) & (size - 1);
    h[k] = i + 1;
  }
  free(t->hash);
  t->hash = h;
  t->mask = size - 1;
  return 0;
}

/* The index of s in the table, added if new; 0 (the empty string) with
** t->oom set when out of memory. */
static int64_t str_id(struct strtab *t, const char *s)
{
  if (!s) s = "";
  if (t->oom) return 0;
  if ((t->n + 1) * 2 > t->mask + 1 && str_grow(t)) goto oom;
  uint32_t k = (uint32_t)str_hash(s) & t->mask;
  for (; t->hash[k]; k = (k + 1) & t->mask)
    if (!strcmp(t->s[t->hash[k] - 1], s)) return t->hash[k] - 1;
  if (t->n == t->cap) {
    uint32_t cap = t->cap ? t->cap * 2 : 256;
    char **ns = realloc(t->s, cap * sizeof *ns);
    if (!ns) goto oom;
    t->s = ns;
    t->cap = cap;
  }
  size_t len = strlen(s);
  if (!(t->s[t->n] = malloc(len + 1))) goto oom;
  memcpy(t->s[t->n], s, len + 1);
  pb_bytes(&t->out, 6, s, len);
  t->hash[k] = ++t->n;
  return t->n - 1;
oom:
  t->oom = 1;
  return 0;
}

static void str_free(struct strtab *t)
{
  for (uint32_t i = 0; i < t->n; i++) free(t->s[i]);
  free(t->s);
  free(t->hash);
  pb_free(&t->out);
}

static void value_type(struct pb_buf *b, struct pb_buf *tmp, unsigned field, struct strtab *st,
                       const char *type, const char *unit)
{
  pb_reset(tmp);
  pb_uint(tmp, 1, (uint64_t)str_id(st, type));
  pb_uint(tmp, 2, (uint64_t)str_id(st, unit));
  pb_msg(b, field, tmp);
}

static void label(struct pb_buf *b, struct pb_buf *tmp, struct strtab *st, const char *key,
                  const char *str, int64_t num)
{
  pb_reset(tmp);
  pb_uint(tmp, 1, (uint64_t)str_id(st, key));
  if (str) pb_uint(tmp, 2, (uint64_t)str_id(st, str));
  else pb_uint(tmp, 3, (uint64_t)num);
  pb_msg(b, 3, tmp);
}

static int64_t ns_value(double ns)
{
  return ns > 0 ? (int64_t)llround(ns) : 0;
}

/* The mappings: one per distinct module (path and build id) of the dumps;
** fmap[f] gets the id of the first one whose base name is function f's
** module, 0 for none. Returns 0 or -1 when out of memory. */
static int write_mappings(struct pb_buf *b, struct pb_buf *tmp, struct strtab *st,
                          const struct profile *p, uint64_t *fmap)
{
  size_t total = 0, nseen = 0;
  for (uint32_t di = 0; di < p->ndumps; di++) total += p->dumps[di].d->nmodules;
  int64_t *seen = malloc((total + 1) * 2 * sizeof *seen);   /* (file, build id) written */
  if (!seen) return -1;
  for (uint32_t di = 0; di < p->ndumps; di++) {
    const struct cpd_dump *d = p->dumps[di].d;
    for (uint32_t m = 0; m < d->nmodules; m++) {
      const struct cpd_module *mod = &d->modules[m];
      char hex[2 * 64 + 1] = "";
      for (uint32_t k = 0; k < mod->id_len && k < 64; k++)
        snprintf(hex + 2 * k, 3, "%02x", mod->id[k]);
      int64_t file = str_id(st, mod->path), id = str_id(st, hex);
      size_t k = 0;
      while (k < nseen && !(seen[2 * k] == file && seen[2 * k + 1] == id)) k++;
      if (k < nseen) continue;
      seen[2 * nseen] = file;
      seen[2 * nseen + 1] = id;
      uint64_t mid = ++nseen;
      pb_reset(tmp);
      pb_uint(tmp, 1, mid);
      pb_uint(tmp, 2, mod->base);
      pb_uint(tmp, 3, mod->base + mod->size);
      pb_uint(tmp, 5, (uint64_t)file);
      pb_uint(tmp, 6, (uint64_t)id);
      pb_uint(tmp, 7, 1);                  /* has_functions: symbolized here */
      pb_uint(tmp, 8, 1);                  /* has_filenames */
      pb_uint(tmp, 9, 1);                  /* has_line_numbers */
      pb_msg(b, 3, tmp);
      const char *base = sym_base_name(mod->path);
      for (uint32_t f = 0; f < p->nfuncs; f++)
        if (!fmap[f] && !strcmp(p->funcs[f].module, base)) fmap[f] = mid;
    }
  }
  free(seen);
  return 0;
}

/* The thread label of t: its name and tid. */
static void thread_label(const struct prof_thread *t, char *buf, size_t n)
{
  if (t->name[0]) snprintf(buf, n, "%s (tid %llu)", t->name, (unsigned long long)t->tid);
  else snprintf(buf, n, "tid %llu", (unsigned long long)t->tid);
}

/* One sample per node of thread t with a non-zero figure, its stack the
** node's path; elided is the location id of the "[frames elided]" frame. */
static int write_thread(struct pb_buf *b, struct pb_buf *tmp, struct pb_buf *sub,
                        struct strtab *st, const struct profile *p, const struct prof_thread *t,
                        uint64_t elided)
{
  uint32_t *stack = malloc(((size_t)t->nnodes + 1) * sizeof *stack);
  uint32_t *depth = malloc(((size_t)t->nnodes + 1) * sizeof *depth);
  uint32_t *path = malloc(((size_t)t->nnodes + 1) * sizeof *path);
  if (!stack || !depth || !path) {
    free(stack); free(depth); free(path);
    return -1;
  }
  char tl[512];
  thread_label(t, tl, sizeof tl);
  int64_t pid = t->dump >= 0 ? (int64_t)p->dumps[t->dump].d->pid : 0;
  size_t sp = 0;
  depth[0] = 0;
  stack[sp++] = 0;
  while (sp) {
    uint32_t i = stack[--sp];
    const struct prof_node *n = &t->nodes[i];
    uint32_t d = depth[i];
    path[d] = i;
    for (uint32_t c = n->first; c != PROF_NONE; c = t->nodes[c].next) {
      depth[c] = d + 1;
      stack[sp++] = c;
    }
    if (!i) continue;
    int64_t calls = t->sampled ? 0 : (int64_t)(n->calls > INT64_MAX ? INT64_MAX : n->calls);
    int64_t cpu = ns_value(n->s_self * t->sample_ns);
    int64_t elapsed = t->sampled ? 0 : ns_value(n->t.excl);
    if (!calls && !cpu && !elapsed) continue;
    pb_reset(tmp);
    pb_reset(sub);                          /* location ids, leaf first */
    if (d <= HEAD + TAIL + 1) {
      for (uint32_t k = d; k >= 1; k--) pb_varint(sub, t->nodes[path[k]].func + 1ull);
    } else {
      for (uint32_t k = d; k > d - TAIL; k--) pb_varint(sub, t->nodes[path[k]].func + 1ull);
      pb_varint(sub, elided);
      for (uint32_t k = HEAD; k >= 1; k--) pb_varint(sub, t->nodes[path[k]].func + 1ull);
    }
    pb_msg(tmp, 1, sub);
    pb_reset(sub);
    pb_varint(sub, (uint64_t)calls);
    pb_varint(sub, (uint64_t)cpu);
    pb_varint(sub, (uint64_t)elapsed);
    pb_msg(tmp, 2, sub);
    label(tmp, sub, st, "thread", tl, 0);
    label(tmp, sub, st, "pid", NULL, pid);
    pb_msg(b, 2, tmp);
  }
  free(stack);
  free(depth);
  free(path);
  return 0;
}

static int write_pprof(FILE *f, const struct profile *p)
{
  struct strtab st = { 0 };
  struct pb_buf b = { 0 }, tmp = { 0 }, sub = { 0 };
  uint64_t *fmap = calloc(p->nfuncs + 1, sizeof *fmap);
  int rc = fmap ? 0 : -1;
  str_id(&st, "");
  int sampled = p->node_samples > 0 || p->has_sampled_threads;
  double sample_ns = 0;
  for (uint32_t k = 0; k < p->nthreads && !sample_ns; k++) sample_ns = p->threads[k].sample_ns;

  value_type(&b, &tmp, 1, &st, "calls", "count");
  value_type(&b, &tmp, 1, &st, "cpu", "nanoseconds");
  value_type(&b, &tmp, 1, &st, "elapsed", "nanoseconds");
  if (!rc) rc = write_mappings(&b, &tmp, &st, p, fmap);
  /* A function per function of the model (id f + 1), and for now a
  ** location per function (the same id) at its first line. */
  for (uint32_t i = 0; !rc && i < p->nfuncs; i++) {
    const struct prof_func *fn = &p->funcs[i];
    pb_reset(&tmp);
    pb_uint(&tmp, 1, i + 1ull);
    pb_uint(&tmp, 2, (uint64_t)str_id(&st, fn->name));
    pb_uint(&tmp, 3, (uint64_t)str_id(&st, fn->name));
    pb_uint(&tmp, 4, (uint64_t)str_id(&st, fn->file));
    pb_uint(&tmp, 5, fn->line);
    pb_msg(&b, 5, &tmp);
    pb_reset(&tmp);
    pb_uint(&tmp, 1, i + 1ull);
    if (fmap[i]) pb_uint(&tmp, 2, fmap[i]);
    pb_reset(&sub);
    pb_uint(&sub, 1, i + 1ull);
    pb_uint(&sub, 2, fn->line);
    pb_msg(&tmp, 4, &sub);
    pb_msg(&b, 4, &tmp);
  }
  uint64_t elided = p->nfuncs + 1ull;
  pb_reset(&tmp);
  pb_uint(&tmp, 1, elided);
  pb_uint(&tmp, 2, (uint64_t)str_id(&st, "[frames elided]"));
  pb_msg(&b, 5, &tmp);
  pb_reset(&tmp);
  pb_uint(&tmp, 1, elided);
  pb_reset(&sub);
  pb_uint(&sub, 1, elided);
  pb_msg(&tmp, 4, &sub);
  pb_msg(&b, 4, &tmp);

  for (uint32_t k = 0; !rc && k < p->nthreads; k++)
    rc = write_thread(&b, &tmp, &sub, &st, p, &p->threads[k], elided);

  uint64_t start = UINT64_MAX, end = 0;
  for (uint32_t di = 0; di < p->ndumps; di++) {
    const struct cpd_dump *d = p->dumps[di].d;
    if (d->start_ns && d->start_ns < start) start = d->start_ns;
    if (d->dump_ns > end) end = d->dump_ns;
  }
  if (start != UINT64_MAX) {
    pb_uint(&b, 9, start);
    if (end > start) pb_uint(&b, 10, end - start);
  }
  if (sample_ns > 0) {
    value_type(&b, &tmp, 11, &st, "cpu", "nanoseconds");
    pb_uint(&b, 12, (uint64_t)ns_value(sample_ns));
  } else {
    value_type(&b, &tmp, 11, &st, "calls", "count");
    pb_uint(&b, 12, 1);
  }
  pb_uint(&b, 13, (uint64_t)str_id(&st, sampled
      ? "capprof: cpu is CPU time from samples, the figure capprof ranks by; elapsed is "
        "compensated elapsed self time from the hooks; calls are exact"
      : "capprof: no samples; elapsed is compensated elapsed self time from the hooks; "
        "calls are exact"));
  pb_uint(&b, 14, (uint64_t)str_id(&st, sampled ? "cpu" : "elapsed"));

  if (!rc && (b.oom || tmp.oom || sub.oom || st.oom || st.out.oom)) rc = -1;
  if (!rc) {
    /* The string table goes last: protobuf fields may come in any order. */
    size_t n = b.len + st.out.len;
    unsigned char *msg = malloc(n ? n : 1);
    if (!msg) rc = -1;
    else {
      memcpy(msg, b.p, b.len);
      memcpy(msg + b.len, st.out.p, st.out.len);
      gz_write(f, msg, n);
      free(msg);
    }
  }
  str_free(&st);
  pb_free(&b);
  pb_free(&tmp);
  pb_free(&sub);
  free(fmap);
  return rc ? tool_error("export: out of memory") : 0;
}

const struct exporter export_pprof = {
  "pprof", "pprof's profile.proto, gzipped (go tool pprof, Pyroscope...)", write_pprof
};
