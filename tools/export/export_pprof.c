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

/* Module m of dump d as a mapping: its id and the base the mapping has
** (the first dump's with that module), which a program counter of d is
** moved to so that every dump's addresses fall inside the one mapping. */
struct modmap {
  uint64_t id, base;
};

/* The mappings: one per distinct module (path and build id) of the dumps;
** fmap[f] gets the id of the first one whose base name is function f's
** module, 0 for none; mm[first[d] + m] module m of dump d. Returns 0 or -1
** when out of memory. */
static int write_mappings(struct pb_buf *b, struct pb_buf *tmp, struct strtab *st,
                          const struct profile *p, uint64_t *fmap, struct modmap *mm,
                          const size_t *first)
{
  size_t total = 0, nseen = 0;
  for (uint32_t di = 0; di < p->ndumps; di++) total += p->dumps[di].d->nmodules;
  int64_t *seen = malloc((total + 1) * 2 * sizeof *seen);  /* mapping k: (file, build id) */
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
      if (k < nseen) {                     /* the same module in an earlier dump */
        for (size_t e = 0; e < first[di]; e++)
          if (mm[e].id == k + 1) mm[first[di] + m] = mm[e];
        continue;
      }
      seen[2 * nseen] = file;
      seen[2 * nseen + 1] = id;
      uint64_t mid = ++nseen;
      mm[first[di] + m].id = mid;
      mm[first[di] + m].base = mod->base;
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

/* A hash table from two 64-bit keys to an id, for the locations of program
** counters and the functions of their source files. */
struct idmap {
  struct { uint64_t a, b, id; } *e;    /* id 0: empty */
  size_t n, mask;
};

/* The slot of (a, b) in *slot: found, or empty to fill. -1 when out of
** memory. */
static int idmap_find(struct idmap *m, uint64_t a, uint64_t b, size_t *slot)
{
  if ((m->n + 1) * 2 > (m->mask ? m->mask + 1 : 0)) {
    size_t size = m->mask ? (m->mask + 1) * 2 : 1024;
    void *ne = calloc(size, sizeof *m->e);
    if (!ne) return -1;
    struct idmap old = *m;
    m->e = ne;
    m->mask = size - 1;
    for (size_t k = 0; old.mask && k <= old.mask; k++) {
      if (!old.e[k].id) continue;
      size_t h = (size_t)((old.e[k].a * 0x9E3779B97F4A7C15ull ^ old.e[k].b) >> 17) & m->mask;
      while (m->e[h].id) h = (h + 1) & m->mask;
      m->e[h] = old.e[k];
    }
    free(old.e);
  }
  size_t h = (size_t)((a * 0x9E3779B97F4A7C15ull ^ b) >> 17) & m->mask;
  while (m->e[h].id && !(m->e[h].a == a && m->e[h].b == b)) h = (h + 1) & m->mask;
  *slot = h;
  return 0;
}

/* What the writer carries from part to part. */
struct writer {
  const struct profile *p;
  struct pb_buf b, tmp, sub;           /* the Profile; scratch messages */
  struct strtab st;
  uint64_t *fmap;                      /* function -> mapping id (0: none) */
  struct modmap *mm;                   /* (dump, module) -> mapping */
  size_t *first;                       /* per dump, its first module in mm */
  struct idmap pcs;                    /* (function, address) -> location id */
  struct idmap files;                  /* (function, file string) -> function id */
  uint64_t next_loc, next_func;        /* ids of the next new ones */
  uint64_t elided;                     /* the "[frames elided]" location */
};

/* The location of the samples of function f at program counter pc of
** dump di, with its line: written when new. 0 when out of memory. */
static uint64_t pc_location(struct writer *w, int di, uint32_t f, const struct prof_pc *e)
{
  const struct cpd_dump *d = w->p->dumps[di].d;
  int m = cpd_find_module(d, e->addr);
  uint64_t map = 0, addr = e->addr;
  if (m >= 0) {
    const struct modmap *mm = &w->mm[w->first[di] + (size_t)m];
    map = mm->id;
    addr = e->addr - d->modules[m].base + mm->base;
  }
  size_t slot;
  if (idmap_find(&w->pcs, f, addr, &slot)) return 0;
  if (w->pcs.e[slot].id) return w->pcs.e[slot].id;
  /* A line in another file than the function's (inlined from a header) is
  ** told with a function of the same name in that file. */
  const struct prof_func *fn = &w->p->funcs[f];
  uint64_t fid = f + 1ull;
  if (e->file && (!fn->file || strcmp(e->file, fn->file))) {
    uint64_t file = (uint64_t)str_id(&w->st, e->file);
    size_t fs;
    if (idmap_find(&w->files, f, file, &fs)) return 0;
    if (!w->files.e[fs].id) {
      w->files.e[fs].a = f;
      w->files.e[fs].b = file;
      w->files.e[fs].id = w->next_func++;
      w->files.n++;
      pb_reset(&w->tmp);
      pb_uint(&w->tmp, 1, w->files.e[fs].id);
      pb_uint(&w->tmp, 2, (uint64_t)str_id(&w->st, fn->name));
      pb_uint(&w->tmp, 3, (uint64_t)str_id(&w->st, fn->name));
      pb_uint(&w->tmp, 4, file);
      pb_msg(&w->b, 5, &w->tmp);
    }
    fid = w->files.e[fs].id;
  }
  w->pcs.e[slot].a = f;
  w->pcs.e[slot].b = addr;
  w->pcs.e[slot].id = w->next_loc++;
  w->pcs.n++;
  pb_reset(&w->tmp);
  pb_uint(&w->tmp, 1, w->pcs.e[slot].id);
  if (map) pb_uint(&w->tmp, 2, map);
  pb_uint(&w->tmp, 3, addr);
  pb_reset(&w->sub);
  pb_uint(&w->sub, 1, fid);
  pb_uint(&w->sub, 2, e->line ? e->line : fn->line);
  pb_msg(&w->tmp, 4, &w->sub);
  pb_msg(&w->b, 4, &w->tmp);
  return w->pcs.e[slot].id;
}

/* One Sample: the stack of leaf (a location id, at depth d) over
** path[1..d-1] (node indices of t, root side first), the three values, the
** labels. */
static void sample(struct writer *w, const struct prof_thread *t, const uint32_t *path,
                   uint32_t d, uint64_t leaf, int64_t calls, int64_t cpu, int64_t elapsed,
                   const char *tl, int64_t pid)
{
  struct pb_buf *m = &w->tmp, *sub = &w->sub;
  pb_reset(m);
  pb_reset(sub);                            /* location ids, leaf first */
  pb_varint(sub, leaf);
  if (d <= HEAD + TAIL) {
    for (uint32_t k = d - 1; k >= 1; k--) pb_varint(sub, t->nodes[path[k]].func + 1ull);
  } else {
    for (uint32_t k = d - 1; k > d - TAIL; k--) pb_varint(sub, t->nodes[path[k]].func + 1ull);
    pb_varint(sub, w->elided);
    for (uint32_t k = HEAD; k >= 1; k--) pb_varint(sub, t->nodes[path[k]].func + 1ull);
  }
  pb_msg(m, 1, sub);
  pb_reset(sub);
  pb_varint(sub, (uint64_t)calls);
  pb_varint(sub, (uint64_t)cpu);
  pb_varint(sub, (uint64_t)elapsed);
  pb_msg(m, 2, sub);
  label(m, sub, &w->st, "thread", tl, 0);
  label(m, sub, &w->st, "pid", NULL, pid);
  pb_msg(&w->b, 2, m);
}

/* The samples of thread t: per node with a non-zero figure one sample at
** its function's location with its calls, elapsed time and the CPU time
** not told apart by program counter, and one per program counter of its
** samples. Returns 0 or -1 when out of memory. */
static int write_thread(struct writer *w, const struct prof_thread *t)
{
  const struct profile *p = w->p;
  size_t n = (size_t)t->nnodes + 1;
  uint32_t *stack = malloc(n * sizeof *stack), *depth = malloc(n * sizeof *depth);
  uint32_t *path = malloc(n * sizeof *path), *pcfirst = malloc(n * sizeof *pcfirst);
  uint32_t *pcnext = malloc(((size_t)t->npcs + 1) * sizeof *pcnext);
  if (!stack || !depth || !path || !pcfirst || !pcnext) {
    free(stack); free(depth); free(path); free(pcfirst); free(pcnext);
    return -1;
  }
  for (uint32_t i = 0; i < t->nnodes; i++) pcfirst[i] = PROF_NONE;
  for (uint32_t k = t->npcs; k-- > 0;)
    if (t->pcs[k].node < t->nnodes) {
      pcnext[k] = pcfirst[t->pcs[k].node];
      pcfirst[t->pcs[k].node] = k;
    }
  char tl[512];
  thread_label(t, tl, sizeof tl);
  int64_t pid = t->dump >= 0 ? (int64_t)p->dumps[t->dump].d->pid : 0;
  int rc = 0;
  size_t sp = 0;
  depth[0] = 0;
  stack[sp++] = 0;
  uint32_t seen = 0;
  while (sp && !rc) {
    uint32_t i = stack[--sp];
    const struct prof_node *nd = &t->nodes[i];
    tool_progress("exporting pprof", ++seen, t->nnodes);
    uint32_t d = depth[i];
    path[d] = i;
    for (uint32_t c = nd->first; c != PROF_NONE; c = t->nodes[c].next) {
      depth[c] = d + 1;
      stack[sp++] = c;
    }
    if (!i) continue;
    uint64_t rest = nd->s_self;               /* samples at no known pc */
    for (uint32_t k = pcfirst[i]; k != PROF_NONE && !rc; k = pcnext[k]) {
      const struct prof_pc *e = &t->pcs[k];
      uint64_t loc = t->dump >= 0 ? pc_location(w, t->dump, nd->func, e) : 0;
      if (!loc) rc = -1;
      uint64_t c = e->count < rest ? e->count : rest;
      rest -= c;
      if (c) sample(w, t, path, d, loc, 0, ns_value(c * t->sample_ns), 0, tl, pid);
    }
    int64_t calls = t->sampled ? 0 : (int64_t)(nd->calls > INT64_MAX ? INT64_MAX : nd->calls);
    int64_t cpu = ns_value(rest * t->sample_ns);
    int64_t elapsed = t->sampled ? 0 : ns_value(nd->t.excl);
    if (calls || cpu || elapsed)
      sample(w, t, path, d, nd->func + 1ull, calls, cpu, elapsed, tl, pid);
  }
  free(stack); free(depth); free(path); free(pcfirst); free(pcnext);
  return rc;
}

static int write_pprof(FILE *f, const struct profile *p)
{
  struct writer w;
  memset(&w, 0, sizeof w);
  w.p = p;
  size_t total = 0;
  w.first = malloc(((size_t)p->ndumps + 1) * sizeof *w.first);
  for (uint32_t di = 0; w.first && di < p->ndumps; di++) {
    w.first[di] = total;
    total += p->dumps[di].d->nmodules;
  }
  w.mm = calloc(total + 1, sizeof *w.mm);
  w.fmap = calloc((size_t)p->nfuncs + 1, sizeof *w.fmap);
  int rc = w.first && w.mm && w.fmap ? 0 : -1;
  str_id(&w.st, "");
  int sampled = p->node_samples > 0 || p->has_sampled_threads;
  double sample_ns = 0;
  for (uint32_t k = 0; k < p->nthreads && !sample_ns; k++) sample_ns = p->threads[k].sample_ns;

  value_type(&w.b, &w.tmp, 1, &w.st, "calls", "count");
  value_type(&w.b, &w.tmp, 1, &w.st, "cpu", "nanoseconds");
  value_type(&w.b, &w.tmp, 1, &w.st, "elapsed", "nanoseconds");
  if (!rc) rc = write_mappings(&w.b, &w.tmp, &w.st, p, w.fmap, w.mm, w.first);
  /* A function per function of the model and a location per function at
  ** its first line, both id f + 1; then "[frames elided]"; the locations
  ** of program counters and the functions of other files come after. */
  for (uint32_t i = 0; !rc && i < p->nfuncs; i++) {
    const struct prof_func *fn = &p->funcs[i];
    pb_reset(&w.tmp);
    pb_uint(&w.tmp, 1, i + 1ull);
    pb_uint(&w.tmp, 2, (uint64_t)str_id(&w.st, fn->name));
    pb_uint(&w.tmp, 3, (uint64_t)str_id(&w.st, fn->name));
    pb_uint(&w.tmp, 4, (uint64_t)str_id(&w.st, fn->file));
    pb_uint(&w.tmp, 5, fn->line);
    pb_msg(&w.b, 5, &w.tmp);
    pb_reset(&w.tmp);
    pb_uint(&w.tmp, 1, i + 1ull);
    if (w.fmap[i]) pb_uint(&w.tmp, 2, w.fmap[i]);
    pb_reset(&w.sub);
    pb_uint(&w.sub, 1, i + 1ull);
    pb_uint(&w.sub, 2, fn->line);
    pb_msg(&w.tmp, 4, &w.sub);
    pb_msg(&w.b, 4, &w.tmp);
  }
  w.elided = p->nfuncs + 1ull;
  w.next_loc = w.next_func = w.elided + 1;
  pb_reset(&w.tmp);
  pb_uint(&w.tmp, 1, w.elided);
  pb_uint(&w.tmp, 2, (uint64_t)str_id(&w.st, "[frames elided]"));
  pb_msg(&w.b, 5, &w.tmp);
  pb_reset(&w.tmp);
  pb_uint(&w.tmp, 1, w.elided);
  pb_reset(&w.sub);
  pb_uint(&w.sub, 1, w.elided);
  pb_msg(&w.tmp, 4, &w.sub);
  pb_msg(&w.b, 4, &w.tmp);

  for (uint32_t k = 0; !rc && k < p->nthreads; k++) rc = write_thread(&w, &p->threads[k]);

  uint64_t start = UINT64_MAX, end = 0;
  for (uint32_t di = 0; di < p->ndumps; di++) {
    const struct cpd_dump *d = p->dumps[di].d;
    if (d->start_ns && d->start_ns < start) start = d->start_ns;
    if (d->dump_ns > end) end = d->dump_ns;
  }
  if (start != UINT64_MAX) {
    pb_uint(&w.b, 9, start);
    if (end > start) pb_uint(&w.b, 10, end - start);
  }
  if (sample_ns > 0) {
    value_type(&w.b, &w.tmp, 11, &w.st, "cpu", "nanoseconds");
    pb_uint(&w.b, 12, (uint64_t)ns_value(sample_ns));
  } else {
    value_type(&w.b, &w.tmp, 11, &w.st, "calls", "count");
    pb_uint(&w.b, 12, 1);
  }
  pb_uint(&w.b, 13, (uint64_t)str_id(&w.st, sampled
      ? "capprof: cpu is CPU time from samples, the figure capprof ranks by; elapsed is "
        "compensated elapsed self time from the hooks; calls are exact"
      : "capprof: no samples; elapsed is compensated elapsed self time from the hooks; "
        "calls are exact"));
  pb_uint(&w.b, 14, (uint64_t)str_id(&w.st, sampled ? "cpu" : "elapsed"));

  if (!rc && (w.b.oom || w.tmp.oom || w.sub.oom || w.st.oom || w.st.out.oom)) rc = -1;
  if (!rc) {
    /* The string table goes last: protobuf fields may come in any order. */
    size_t n = w.b.len + w.st.out.len;
    unsigned char *msg = malloc(n ? n : 1);
    if (!msg) {
      rc = -1;
    } else {
      memcpy(msg, w.b.p, w.b.len);
      memcpy(msg + w.b.len, w.st.out.p, w.st.out.len);
      gz_write(f, msg, n);
      free(msg);
    }
  }
  str_free(&w.st);
  pb_free(&w.b);
  pb_free(&w.tmp);
  pb_free(&w.sub);
  free(w.pcs.e);
  free(w.files.e);
  free(w.fmap);
  free(w.mm);
  free(w.first);
  return rc ? tool_error("export: out of memory") : 0;
}

const struct exporter export_pprof = {
  "pprof", "pprof's profile.proto, gzipped (go tool pprof, Pyroscope...)", write_pprof
};
