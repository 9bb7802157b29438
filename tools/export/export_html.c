/*
** export_html.c -- 'capprof export --format=html' and 'capprof diff
** --format=html': one self-contained page. Its code is tools/export/html/
** (embedded at build time by its embed.cmake); this file writes the data it
** shows as compact JSON: header facts and the tool's warnings, the flat
** profile with report's columns, caller->callee edges, and each call tree in
** preorder as columns of numbers. docs/tool.md describes the page.
*/
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export/export.h"
#include "model/mismatches.h"
#include "model/run_stats.h"
#include "model/tool.h"
#include "model/weight.h"
#include "sym/symbols.h"

extern const unsigned char html_page_head[], html_page_tail[];
extern const size_t html_page_head_len, html_page_tail_len;

uint32_t export_html_max_nodes = EXPORT_HTML_MAX_NODES;

#define OTHER_BIT 0x80000000u   /* a preorder entry that is a parent's "[other]" */

/* ---- JSON inside a script element ------------------------------------------ */

/* Length of a valid UTF-8 sequence at s (avail bytes left), or 0. */
static int utf8_len(const unsigned char *s, size_t avail)
{
  int n = s[0] >= 0xF0 && s[0] <= 0xF4 ? 4 : s[0] >= 0xE0 ? 3 : s[0] >= 0xC2 && s[0] < 0xE0 ? 2 : 0;
  if ((size_t)n > avail) return 0;
  for (int i = 1; i < n; i++)
    if ((s[i] & 0xC0) != 0x80) return 0;
  return n;
}

/* s[0..len-1] as a JSON string that cannot end the script element holding
** it: '<', '>' and '&' are \u escapes; NUL (command-line separators) becomes
** a space; bytes that are not UTF-8 become '?'. */
static void jstrn(FILE *f, const char *str, size_t len)
{
  const unsigned char *s = (const unsigned char *)str, *end = s + len;
  putc('"', f);
  while (s < end) {
    if (*s == '"' || *s == '\\') { putc('\\', f); putc(*s++, f); }
    else if (*s == 0) { putc(' ', f); s++; }
    else if (*s < 0x20 || *s == '<' || *s == '>' || *s == '&') fprintf(f, "\\u%04x", *s++);
    else if (*s < 0x80) putc(*s++, f);
    else {
      int n = utf8_len(s, (size_t)(end - s));
      if (n) { fwrite(s, 1, (size_t)n, f); s += n; }
      else { putc('?', f); s++; }
    }
  }
  putc('"', f);
}

static void jstr(FILE *f, const char *s)
{
  s = s ? s : "";
  jstrn(f, s, strlen(s));
}

/* A whole number (ns, counts), rounded; no printf: a million-node tree
** makes six million of them. */
static void jint(FILE *f, double v)
{
  char buf[32];
  if (v < 0) { putc('-', f); v = -v; }
  if (!(v < 1e18)) { fputs(v == v ? "1e18" : "0", f); return; }
  fwrite(buf, 1, fmt_u64((uint64_t)(v + 0.5), buf, sizeof buf), f);
}

/* A number exactly (shares, means of calls), or null: the page rounds it as
** the tool's fmt_pct and fmt_mean do, so it must see the same double. */
static void jdec(FILE *f, double v)
{
  if (v != v || isinf(v)) fputs("null", f);
  else fprintf(f, "%.17g", v);
}

/* Numbers through a buffer of our own: a million-node tree writes six
** million of them, and a stdio call each costs more than formatting. */
struct out { FILE *f; size_t n; char b[1 << 16]; };

static void out_flush(struct out *o)
{
  fwrite(o->b, 1, o->n, o->f);
  o->n = 0;
}

/* v rounded to a whole number, after a comma (a newline every 32) unless j is 0. */
static void out_num(struct out *o, uint32_t j, double v)
{
  if (o->n > sizeof o->b - 48) out_flush(o);
  if (j) o->b[o->n++] = ',';
  if (j && j % 32 == 0) o->b[o->n++] = '\n';
  if (v < 0) { o->b[o->n++] = '-'; v = -v; }
  if (!(v < 1e18)) v = v == v ? 1e18 : 0;
  o->n += fmt_u64((uint64_t)(v + 0.5), o->b + o->n, 24);
}

/* ---- a u64 -> u32 map (edges, the diff's union of paths) -------------------- */

struct hmap { uint64_t *k; uint32_t *v; size_t mask, used; };

static int hm_init(struct hmap *m, size_t hint)
{
  size_t cap = 64;
  while (cap < hint * 2) cap *= 2;
  m->k = malloc(cap * sizeof *m->k);
  m->v = malloc(cap * sizeof *m->v);
  m->mask = cap - 1;
  m->used = 0;
  if (!m->k || !m->v) { free(m->k); free(m->v); m->k = NULL; m->v = NULL; return -1; }
  memset(m->v, 0xff, cap * sizeof *m->v);
  return 0;
}

static void hm_free(struct hmap *m) { free(m->k); free(m->v); }

static size_t hm_slot(const struct hmap *m, uint64_t key)
{
  uint64_t h = key * UINT64_C(0x9E3779B97F4A7C15);
  size_t i = (size_t)(h >> 20) & m->mask;
  while (m->v[i] != PROF_NONE && m->k[i] != key) i = (i + 1) & m->mask;
  return i;
}

static uint32_t hm_get(const struct hmap *m, uint64_t key) { return m->v[hm_slot(m, key)]; }

/* Add key (absent) -> val; -1 when out of memory. */
static int hm_put(struct hmap *m, uint64_t key, uint32_t val)
{
  if ((m->used + 1) * 2 > m->mask + 1) {
    struct hmap n;
    if (hm_init(&n, m->mask + 1) != 0) return -1;
    for (size_t i = 0; i <= m->mask; i++)
      if (m->v[i] != PROF_NONE) {
        size_t s = hm_slot(&n, m->k[i]);
        n.k[s] = m->k[i];
        n.v[s] = m->v[i];
      }
    n.used = m->used;
    hm_free(m);
    *m = n;
  }
  size_t s = hm_slot(m, key);
  m->k[s] = key;
  m->v[s] = val;
  m->used++;
  return 0;
}

/* ---- header facts ------------------------------------------------------------ */

static const char *clock_name(uint32_t c)
{
  return c == CPD_CLOCK_TSC ? "rdtsc (invariant TSC)" : c == CPD_CLOCK_MONOTONIC
       ? "clock_gettime(CLOCK_MONOTONIC)" : c == CPD_CLOCK_QPC ? "QueryPerformanceCounter"
       : "unknown";
}

/* Dumps from..to-1 of p as a JSON array. */
static void write_dumps(FILE *f, const struct profile *p, uint32_t from, uint32_t to)
{
  putc('[', f);
  for (uint32_t i = from; i < to; i++) {
    const struct prof_dump *pd = &p->dumps[i];
    const struct cpd_dump *d = pd->d;
    uint64_t nodes = 0;
    for (uint32_t k = 0; k < d->nthreads; k++) nodes += d->threads[k].node_count;
    fputs(i > from ? ",\n{\"path\":" : "\n{\"path\":", f);
    jstr(f, d->path);
    fputs(",\"exe\":", f);
    jstr(f, d->exe);
    fputs(",\"cmdline\":", f);
    jstrn(f, d->cmdline ? d->cmdline : "",
          d->cmdline_len && d->cmdline && !d->cmdline[d->cmdline_len - 1] ? d->cmdline_len - 1
                                                                           : d->cmdline_len);
    fprintf(f, ",\"pid\":%" PRIu64 ",\"duration_ns\":", d->pid);
    jint(f, d->dump_ns > d->start_ns ? (double)(d->dump_ns - d->start_ns) : 0);
    fputs(",\"probe_inner_ns\":", f);
    jdec(f, pd->inner_ns);
    fputs(",\"probe_outer_ns\":", f);
    jdec(f, pd->outer_ns);
    fputs(",\"clock\":", f);
    jstr(f, clock_name(d->clock_source));
    fprintf(f, ",\"merged\":%d,\"threads\":%u,\"nodes\":%" PRIu64 ",\"calls\":%" PRIu64,
            !!(d->flags & CPD_F_MERGED), d->nthreads, nodes, pd->calls);
    if (d->intercept.present) {            /* 'capprof run': library calls intercepted */
      fputs(",\"intercept\":{\"status\":", f);
      jstr(f, cpd_intercept_status_text(d->intercept.status));
      fputs(",\"spec\":", f);
      jstr(f, d->intercept.spec);
      fprintf(f, ",\"modules\":%" PRIu64 ",\"slots\":%" PRIu64 ",\"unrecorded\":%" PRIu64
                 ",\"inner_ns\":", d->intercept.modules, d->intercept.slots,
              d->intercept.unrecorded);
      jdec(f, pd->api_inner_ns);
      fputs(",\"outer_ns\":", f);
      jdec(f, pd->api_outer_ns);
      putc('}', f);
    }
    putc('}', f);
  }
  putc(']', f);
}

/* The tool's warnings so far, and what the models ps[0..np-1] know that
** 'tree' and 'info' print: calls lost past the node cap, calls still running. */
static void write_warnings(FILE *f, const struct profile *const *ps, int np)
{
  const char *const *lines;
  size_t dropped, n = tool_warnings(&lines, &dropped), k = 0;
  fputs("[", f);
  for (size_t i = 0; i < n; i++, k++) {
    fputs(k ? ",\n" : "\n", f);
    jstr(f, lines[i]);
  }
  if (dropped) {
    fprintf(f, "%s\"and %zu more warnings (see the tool's standard error)\"", k++ ? ",\n" : "\n",
            dropped);
  }
  for (int pi = 0; pi < np; pi++) {
    const struct profile *p = ps[pi];
    for (uint32_t i = 0; i < p->nthreads; i++) {
      const struct prof_thread *t = &p->threads[i];
      char line[512], a[32];
      const char *dump = t->dump >= 0 ? p->dumps[t->dump].d->path : "";
      if (t->lost_calls) {
        snprintf(line, sizeof line, "%s: thread %" PRIu64 " \"%s\": %s calls were lost past the "
                 "node cap (not in any time or count shown)", dump, t->tid, t->name,
                 fmt_count(t->lost_calls, a, sizeof a));
        fputs(k++ ? ",\n" : "\n", f);
        jstr(f, line);
      }
      if (t->open_calls) {
        snprintf(line, sizeof line, "%s: thread %" PRIu64 " \"%s\": %u calls were still running "
                 "when the dump was written (their paths are marked [still running])", dump,
                 t->tid, t->name, t->open_calls);
        fputs(k++ ? ",\n" : "\n", f);
        jstr(f, line);
      }
    }
  }
  fputs("]", f);
}

static void zone_warnings(const struct profile *p)
{
  struct cpd_dump **d = malloc((p->ndumps + 1) * sizeof *d);
  if (!d) return;
  for (uint32_t i = 0; i < p->ndumps; i++) d[i] = p->dumps[i].d;
  zone_warn(d, p->ndumps);
  free(d);
}

/* The functions fn[0..n-1], then the "[other]" function of pruned paths. */
static void write_funcs(FILE *f, const struct prof_func *const *fn, uint32_t n)
{
  fputs("{\"name\":[", f);
  for (uint32_t i = 0; i < n; i++) {
    if (i) putc(',', f);
    jstr(f, fn[i]->name);
  }
  fputs(n ? ",\"[other]\"],\n\"module\":[" : "\"[other]\"],\n\"module\":[", f);
  for (uint32_t i = 0; i < n; i++) {
    if (i) putc(',', f);
    jstr(f, fn[i]->module);
  }
  fputs(n ? ",\"\"],\n\"file\":[" : "\"\"],\n\"file\":[", f);
  for (uint32_t i = 0; i < n; i++) {
    if (i) putc(',', f);
    if (fn[i]->file) jstr(f, fn[i]->file);
    else fputs("null", f);
  }
  fputs(n ? ",null],\n\"line\":[" : "null],\n\"line\":[", f);
  for (uint32_t i = 0; i < n; i++) fprintf(f, "%s%u", i ? "," : "", fn[i]->line);
  /* kind: 0 a function, 1 a zone, 2 synthetic (the root, overflow nodes),
  ** 3 an intercepted library function ('capprof run'). */
  fputs(n ? ",0],\n\"kind\":[" : "0],\n\"kind\":[", f);
  for (uint32_t i = 0; i < n; i++)
    fprintf(f, "%s%d", i ? "," : "", fn[i]->zone ? 1 : fn[i]->synthetic ? 2 : fn[i]->api ? 3 : 0);
  /* The flat totals (prof_flat), for the callers/callees pane. */
  fputs(n ? ",2],\n\"calls\":[" : "2],\n\"calls\":[", f);
  for (uint32_t i = 0; i < n; i++) {
    if (i) putc(',', f);
    jint(f, (double)fn[i]->calls);
  }
  fputs(n ? ",0],\n\"incl\":[" : "0],\n\"incl\":[", f);
  for (uint32_t i = 0; i < n; i++) {
    if (i) putc(',', f);
    jdec(f, fn[i]->t.incl);
  }
  fputs(n ? ",0],\n\"excl\":[" : "0],\n\"excl\":[", f);
  for (uint32_t i = 0; i < n; i++) {
    if (i) putc(',', f);
    jdec(f, fn[i]->t.excl);
  }
  /* Unhooked functions (their hooks patched out): 1, shown as [unhooked]
  ** rather than as throttled. */
  fputs(n ? ",0],\n\"unhooked\":[" : "0],\n\"unhooked\":[", f);
  for (uint32_t i = 0; i < n; i++) fprintf(f, "%s%d", i ? "," : "", fn[i]->unhooked_ns > 0);
  /* Throttled functions (CAPPROF_THROTTLE): paths throttled, calls timed. */
  fputs(n ? ",0],\n\"throttled\":[" : "0],\n\"throttled\":[", f);
  for (uint32_t i = 0; i < n; i++) fprintf(f, "%s%u", i ? "," : "", fn[i]->throttled);
  fputs(n ? ",0],\n\"timed\":[" : "0],\n\"timed\":[", f);
  for (uint32_t i = 0; i < n; i++) {
    if (i) putc(',', f);
    jint(f, (double)fn[i]->timed);
  }
  fputs(n ? ",0],\n\"incl_all\":[" : "0],\n\"incl_all\":[", f);
  for (uint32_t i = 0; i < n; i++) {
    if (i) putc(',', f);
    jdec(f, fn[i]->incl_all);
  }
  fputs(n ? ",0]}" : "0]}", f);
}

/* p's functions as a table of pointers (NULL when out of memory). */
static const struct prof_func **func_table(const struct profile *p)
{
  const struct prof_func **t = malloc(((size_t)p->nfuncs + 1) * sizeof *t);
  for (uint32_t i = 0; t && i < p->nfuncs; i++) t[i] = &p->funcs[i];
  return t;
}

/* ---- the table --------------------------------------------------------------- */

/* A column of the page's table. kind says how the page formats it: ns,
** count, mean (a mean count, one decimal if not whole), dec1 (one decimal), pct (a percentage), sns (signed ns), snum
** (signed, one decimal), spct (signed %, null: "new"), pm ([mean, sd]),
** pmc ([mean, sd] of counts), t (t statistic, null: "-"), text. group: the
** diff's metric the column belongs to, or NULL. */
struct col { const char *key, *label, *kind, *group, *title; unsigned mark; };

static void write_col(FILE *f, const struct col *c)
{
  fputs("\n{\"key\":", f);
  jstr(f, c->key);
  fputs(",\"label\":", f);
  jstr(f, c->label);
  fputs(",\"kind\":", f);
  jstr(f, c->kind);
  if (c->group) {
    fputs(",\"group\":", f);
    jstr(f, c->group);
  }
  fputs(",\"title\":", f);
  jstr(f, c->title);
  if (c->mark) fprintf(f, ",\"mark\":%u", c->mark);
  putc('}', f);
}

static void write_cols(FILE *f, const struct col *c, size_t n)
{
  fputs("\"cols\":[", f);
  for (size_t i = 0; i < n; i++) {
    if (i) putc(',', f);
    write_col(f, &c[i]);
  }
  fputs("]", f);
}

/* The columns of 'capprof report' (one run, or --sum), same names. mark:
** the bit of the row's "marks" that says the figure is mostly probe cost
** (prof_unreliable), shown with '~' as report does. */
static const struct col flat_cols[] = {
  { "selfpct", "elapsed self%", "pct", NULL,
    "elapsed self (exclusive) time as a share of all threads' total", 0 },
  { "self", "elapsed self", "ns", NULL,
    "elapsed self (exclusive) time from the hooks, summed over call paths and threads", 1 },
  { "incl", "elapsed incl", "ns", NULL,
    "elapsed inclusive time of the outermost calls (a recursion counted once)", 2 },
  { "calls", "calls", "count", NULL, "calls, over every call path and thread", 0 },
  { "selfcall", "self/call", "ns", NULL, "elapsed self time per timed call", 4 },
  { "inclcall", "incl/call", "ns", NULL,
    "elapsed inclusive time per timed call (every activation's inclusive time / timed calls)", 8 },
  { "min", "incl min", "ns", NULL, "the shortest single call (inclusive)", 0 },
  { "max", "incl max", "ns", NULL, "the longest single call (inclusive)", 0 },
  /* a sampled run: report's cpu columns, which then rank */
  { "cpupct", "cpu self%", "pct", NULL, "cpu self as a share of all functions' (samples)", 0 },
  { "cpuself", "cpu self", "ns", NULL,
    "CPU time of the function's own code from the samples charged to its call paths "
    "(samples in capprof's hooks left out)", 0 },
  { "cpuinclpct", "cpu incl%", "pct", NULL,
    "cpu incl as a share of all functions' cpu self (samples)", 0 },
  { "cpuincl", "cpu incl", "ns", NULL,
    "CPU time from the samples in the function or below it (outermost calls)", 0 },
};

/* The columns of 'capprof report' over several runs, same names. */
static const struct col runs_cols[] = {
  { "self", "self", "ns", NULL, "self (exclusive) time: mean per run", 0 },
  { "selfsd", "sd", "ns", NULL, "self time: sample standard deviation across runs", 0 },
  { "selfmin", "min run", "ns", NULL, "self time in the run with the least", 0 },
  { "selfmax", "max run", "ns", NULL, "self time in the run with the most", 0 },
  { "incl", "incl", "ns", NULL, "inclusive time (outermost calls of a recursion): mean per run", 0 },
  { "inclsd", "sd", "ns", NULL, "inclusive time: sample standard deviation across runs", 0 },
  { "calls", "calls", "mean", NULL, "calls: mean per run", 0 },
  { "runs", "runs", "text", NULL, "runs the function was called in, of all runs", 0 },
};

/* Whether 'report' lists the function: called (functions without calls are
** placeholders, e.g. left by filters), and not the root. */
static int report_row(const struct prof_func *fn)
{
  return prof_all_calls(fn) && !(fn->synthetic && !strcmp(fn->name, "[root]"));
}

/* The flat profile as 'report' prints it for one run (or --sum). */
static int write_flat(FILE *f, const struct profile *p, double total)
{
  /* The columns in report's order: a sampled run's cpu figures first. */
  static const int plain[] = { 0, 1, 2, 3, 4, 5, 6, 7 };
  static const int cpu[] = { 8, 10, 3, 2, 9, 11, 0, 1, 4, 5, 6, 7 };
  int sampled = p->node_samples > 0, ncols = sampled ? 12 : 8;
  const int *order = sampled ? cpu : plain;
  double cpu_total = 0;
  for (uint32_t i = 0; i < p->nfuncs; i++)
    if (report_row(&p->funcs[i])) cpu_total += prof_func_figure(p, &p->funcs[i], PROF_W_CPU, 0);
  fputs("{\"title\":\"Flat profile: per function, summed over call paths, threads and dumps", f);
  if (sampled)
    fprintf(f, "; cpu from samples, %" PRIu64 " of them in capprof's hooks left out\","
               "\"sort\":\"%s\",", p->probe_samples,
               prof_weight_of(p) == PROF_W_CPU ? "cpupct" : "self");
  else
    fputs("\",", f);
  fputs("\"cols\":[", f);
  for (int c = 0; c < ncols; c++) {
    if (c) putc(',', f);
    write_col(f, &flat_cols[order[c]]);
  }
  fputs("]", f);
  fputs(",\n\"rows\":[", f);
  int first = 1;
  for (uint32_t i = 0; i < p->nfuncs; i++) {
    if (!report_row(&p->funcs[i])) continue;
    fprintf(f, "%s%u", first ? "" : ",", i);
    first = 0;
  }
  fputs("],\n\"v\":[", f);
  for (int c = 0; c < ncols; c++) {
    fputs(c ? "],\n[" : "[", f);
    first = 1;
    for (uint32_t i = 0; i < p->nfuncs; i++) {
      const struct prof_func *fn = &p->funcs[i];
      if (!report_row(fn)) continue;
      if (!first) putc(',', f);
      first = 0;
      /* exact values: the page rounds them as 'report' does */
      switch (order[c]) {
      case 0: jdec(f, 100.0 * prof_share(fn->t.excl, total)); break;
      case 1: jdec(f, fn->t.excl); break;
      case 2: jdec(f, fn->t.incl); break;
      case 3: jint(f, (double)prof_all_calls(fn)); break;
      case 4: jdec(f, prof_per_call(fn->t.excl, fn->timed)); break;     /* timed calls: */
      case 5: jdec(f, prof_per_call(fn->incl_all, fn->timed)); break;   /* as report */
      case 6: jdec(f, fn->t.min); break;
      case 7: jdec(f, fn->t.max); break;
      case 8: jdec(f, 100.0 * prof_share(prof_func_figure(p, fn, PROF_W_CPU, 0), cpu_total)); break;
      case 9: jdec(f, prof_func_figure(p, fn, PROF_W_CPU, 0)); break;
      case 10: jdec(f, 100.0 * prof_share(prof_func_figure(p, fn, PROF_W_CPU, 1), cpu_total)); break;
      default: jdec(f, prof_func_figure(p, fn, PROF_W_CPU, 1)); break;
      }
    }
  }
  /* '~' marks, as report prints them: self, incl, self/call, incl/call. */
  fputs("]],\n\"marks\":[", f);
  first = 1;
  for (uint32_t i = 0; i < p->nfuncs; i++) {
    const struct prof_func *fn = &p->funcs[i];
    if (!report_row(fn)) continue;
    unsigned m = (prof_unreliable(fn->t.excl, prof_excl_basis(&fn->t)) ? 1u : 0u) |
                 (prof_unreliable(fn->t.incl, fn->t.incl_raw) ? 2u : 0u) |
                 (prof_unreliable(prof_per_call(fn->t.excl, fn->timed),
                                  prof_per_call(prof_excl_basis(&fn->t), fn->timed)) ? 4u : 0u) |
                 (prof_unreliable(prof_per_call(fn->incl_all, fn->timed),
                                  prof_per_call(fn->incl_all_raw, fn->timed)) ? 8u : 0u);
    fprintf(f, "%s%u", first ? "" : ",", m);
    first = 0;
  }
  fputs("]}", f);
  return 0;
}

/* Several runs: per function the mean per run and the spread, as 'report'. */
static int write_flat_runs(FILE *f, const struct profile *p)
{
  struct run_table rt;
  if (runs_build_fig(p, 0, 0, &rt) != 0) return tool_error("out of memory");
  struct run_stat *st = malloc(((size_t)p->nfuncs * 3 + 1) * sizeof *st);
  double *tot = calloc(rt.nruns, sizeof *tot);
  if (!st || !tot) {
    free(st); free(tot); runs_free(&rt);
    return tool_error("out of memory");
  }
  for (uint32_t i = 0; i < p->nthreads; i++)
    if (p->threads[i].dump >= 0) tot[p->threads[i].dump] += p->threads[i].nodes[0].t.incl;
  struct run_stat all;
  runs_stat(tot, rt.nruns, &all);
  for (uint32_t fn = 0; fn < p->nfuncs; fn++) {
    runs_stat(runs_row(&rt, rt.self, fn), rt.nruns, &st[fn * 3]);
    runs_stat(runs_row(&rt, rt.total, fn), rt.nruns, &st[fn * 3 + 1]);
    runs_stat(runs_row(&rt, rt.calls, fn), rt.nruns, &st[fn * 3 + 2]);
  }
  fprintf(f, "{\"title\":\"Several runs (one per dump): per function, the mean per run, the "
             "spread across runs (sample standard deviation, min and max) and the runs it "
             "appears in\",\"runs\":%u,\"run_mean\":", rt.nruns);
  jint(f, all.mean);
  fputs(",\"run_sd\":", f);
  jint(f, all.sd);
  fputs(",\"run_min\":", f);
  jint(f, all.min);
  fputs(",\"run_max\":", f);
  jint(f, all.max);
  putc(',', f);
  write_cols(f, runs_cols, sizeof runs_cols / sizeof runs_cols[0]);
  fputs(",\n\"rows\":[", f);
  int first = 1;
  for (uint32_t i = 0; i < p->nfuncs; i++) {
    if (!rt.present[i] || (p->funcs[i].synthetic && !strcmp(p->funcs[i].name, "[root]")))
      continue;
    fprintf(f, "%s%u", first ? "" : ",", i);
    first = 0;
  }
  fputs("],\n\"v\":[", f);
  for (int c = 0; c < 8; c++) {
    fputs(c ? "],\n[" : "[", f);
    first = 1;
    for (uint32_t i = 0; i < p->nfuncs; i++) {
      if (!rt.present[i] || (p->funcs[i].synthetic && !strcmp(p->funcs[i].name, "[root]")))
        continue;
      const struct run_stat *s = &st[i * 3];
      if (!first) putc(',', f);
      first = 0;
      switch (c) {
      case 0: jdec(f, s[0].mean); break;
      case 1: jdec(f, s[0].sd); break;
      case 2: jdec(f, s[0].min); break;
      case 3: jdec(f, s[0].max); break;
      case 4: jdec(f, s[1].mean); break;
      case 5: jdec(f, s[1].sd); break;
      case 6: jdec(f, s[2].mean); break;
      default: fprintf(f, "\"%u/%u\"", rt.present[i], rt.nruns); break;
      }
    }
  }
  fputs("]]}", f);
  free(st);
  free(tot);
  runs_free(&rt);
  return 0;
}

/* ---- caller -> callee edges ---------------------------------------------------- */

struct edge { uint32_t from, to; uint64_t calls; double incl, excl, incl_all; uint32_t active; };

/* Every caller->callee pair over all threads, as 'callers' and 'callees'
** sum them (calls.c): calls and exclusive times over every path; inclusive
** time only where no ancestor is the same pair. The caller of a thread's
** top-level calls is its root ([thread start] on the page). */
static int write_edges(FILE *f, const struct profile *p)
{
  struct hmap m;
  struct edge *e = NULL;
  uint32_t ne = 0, cap = 0, *stack = NULL, *eix = NULL;
  int rc = CAPPROF_ENOMEM;
  if (hm_init(&m, 1024) != 0) return tool_error("out of memory");
  for (uint32_t k = 0; k < p->nthreads; k++) {
    const struct prof_thread *t = &p->threads[k];
    free(stack);
    free(eix);
    stack = malloc(((size_t)t->nnodes * 2 + 1) * sizeof *stack);
    eix = malloc((size_t)t->nnodes * sizeof *eix);
    if (!stack || !eix) goto out;
    size_t sp = 0;
    stack[sp++] = 0;
    while (sp) {
      uint32_t i = stack[--sp];
      if (i & 0x80000000u) {
        e[eix[~i]].active--;
        continue;
      }
      const struct prof_node *s = &t->nodes[i];
      if (i) {
        uint32_t from = t->nodes[s->parent].func;
        uint64_t key = (uint64_t)from << 32 | s->func;
        uint32_t x = hm_get(&m, key);
        if (x == PROF_NONE) {
          if (ne == cap) {
            cap = cap ? cap * 2 : 256;
            struct edge *ng = realloc(e, cap * sizeof *e);
            if (!ng) goto out;
            e = ng;
          }
          x = ne++;
          memset(&e[x], 0, sizeof e[x]);
          e[x].from = from;
          e[x].to = s->func;
          if (hm_put(&m, key, x) != 0) goto out;
        }
        e[x].calls += s->calls;
        e[x].excl += s->t.excl;
        e[x].incl_all += s->t.incl;           /* every call, for incl/call */
        if (e[x].active++ == 0) e[x].incl += s->t.incl;
        eix[i] = x;
        stack[sp++] = ~i;
      }
      for (uint32_t c = s->first; c != PROF_NONE; c = t->nodes[c].next) stack[sp++] = c;
    }
  }
  /* [caller, callee, calls, incl ns, self ns, incl of every call ns] per edge. */
  struct out *ob = malloc(sizeof *ob);
  if (!ob) goto out;
  ob->f = f;
  ob->n = 0;
  putc('[', f);
  for (uint32_t x = 0, j = 0; x < ne; x++) {
    out_num(ob, j++, e[x].from);
    out_num(ob, j++, e[x].to);
    out_num(ob, j++, (double)e[x].calls);
    out_num(ob, j++, e[x].incl);
    out_num(ob, j++, e[x].excl);
    out_num(ob, j++, e[x].incl_all);
  }
  out_flush(ob);
  free(ob);
  putc(']', f);
  rc = 0;
out:
  free(stack);
  free(eix);
  free(e);
  hm_free(&m);
  return rc ? tool_error("out of memory") : 0;
}

/* ---- trees --------------------------------------------------------------------- */

/* One tree to write: nodes as in prof_thread (parents before children,
** children linked largest first). For a diff, bcalls/bincl hold the base
** side's calls and inclusive time per node, and weight the pruning key. */
struct wtree {
  const char *label;
  const struct prof_thread *t;
  const double *bcalls, *bincl;  /* NULL for a profile */
  const double *weight;          /* pruning key; a profile's: the ranking figure's
                                 ** inclusive value (model/weight.h) */
  int wout;                      /* write weight as "w" and order siblings by it */
};

static const struct wtree *sort_tree;

static double weight(const struct wtree *w, uint32_t i)
{
  return w->weight ? w->weight[i] : w->t->nodes[i].t.incl;
}

static int by_weight(const void *pa, const void *pb)
{
  uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
  double x = weight(sort_tree, a), y = weight(sort_tree, b);
  if (x != y) return x < y ? 1 : -1;
  return a < b ? -1 : 1;                /* parents (smaller index) first */
}

struct other { double calls, incl, min, max, bcalls, bincl, w; uint32_t n; };

/* Write tree w with at most budget nodes (0: all) as a JSON object. The
** nodes go in preorder, children largest first as in 'tree'; "n" is each
** entry's number of children, which is all the page needs to rebuild the
** shape. Returns 0 or CAPPROF_ENOMEM. */
static int write_tree(FILE *f, const struct prof_func *const *fn, const struct wtree *w,
                      uint32_t budget, uint32_t other_func)
{
  const struct prof_thread *t = w->t;
  const struct prof_node *nd = t->nodes;
  uint32_t n = t->nnodes, nvis = 0, m = 0, nothers = 0;
  uint8_t *keep = calloc(n, 1);            /* 0 hidden, 1 pruned, 2 written */
  uint32_t *kids = calloc(n, sizeof *kids);
  uint32_t *ord = malloc((size_t)n * 2 * sizeof *ord);
  uint32_t *stack = malloc(((size_t)n * 2 + 1) * sizeof *stack);
  uint32_t *tmp = malloc((size_t)n * sizeof *tmp);
  struct other *o = NULL;
  int rc = CAPPROF_ENOMEM;
  if (!keep || !kids || !ord || !stack || !tmp) goto out;

  /* Unused overflow nodes are not shown, as in 'tree'. */
  keep[0] = 2;
  for (uint32_t i = 1; i < n; i++) {
    int unused = fn[nd[i].func]->synthetic && nd[i].calls == 0 &&
                 (!w->bcalls || w->bcalls[i] == 0);
    keep[i] = keep[nd[i].parent] == 2 && !unused ? 2 : 0;
    nvis += keep[i] == 2;
  }
  if (budget && nvis > budget) {
    /* Keep the budget's worth of heaviest paths; a child weighs no more
    ** than its parent and ties go to the smaller index, so what is kept is
    ** a tree. Each parent's pruned children become one "[other]". */
    uint32_t k = 0;
    for (uint32_t i = 1; i < n; i++)
      if (keep[i] == 2) tmp[k++] = i;
    sort_tree = w;
    qsort(tmp, k, sizeof *tmp, by_weight);
    for (uint32_t j = budget; j < k; j++) keep[tmp[j]] = 1;
    for (uint32_t i = 1; i < n; i++)
      if (keep[i] == 2 && keep[nd[i].parent] != 2) keep[i] = 1;
    o = calloc(n, sizeof *o);
    if (!o) goto out;
    for (uint32_t i = 1; i < n; i++) {
      if (keep[i] != 1 || keep[nd[i].parent] != 2) continue;
      struct other *x = &o[nd[i].parent];
      x->calls += (double)nd[i].calls;
      x->incl += nd[i].t.incl;
      x->w += weight(w, i);
      if (!x->n || nd[i].t.min < x->min) x->min = nd[i].t.min;
      if (nd[i].t.max > x->max) x->max = nd[i].t.max;
      if (w->bcalls) {
        x->bcalls += w->bcalls[i];
        x->bincl += w->bincl[i];
      }
      x->n++;
    }
  }

  /* Preorder; an "[other]" comes after its parent's written children. */
  size_t sp = 0;
  stack[sp++] = 0;
  while (sp) {
    uint32_t e = stack[--sp];
    ord[m++] = e;
    if (e & OTHER_BIT) continue;
    if (o && o[e].n) { stack[sp++] = OTHER_BIT | e; nothers++; }
    uint32_t k = 0;
    for (uint32_t c = nd[e].first; c != PROF_NONE; c = nd[c].next)
      if (keep[c] == 2) tmp[k++] = c;
    if (w->wout && k > 1) {                  /* siblings by the ranking figure */
      sort_tree = w;
      qsort(tmp, k, sizeof *tmp, by_weight);
    }
    kids[e] = k + (o && o[e].n);
    while (k) stack[sp++] = tmp[--k];
  }

  uint64_t calls = 0;
  for (uint32_t i = 1; i < n; i++) calls += nd[i].calls;
  fputs("{\"label\":", f);
  jstr(f, w->label);
  fprintf(f, ",\"tid\":%" PRIu64 ",\"dump\":%d,\"calls\":%" PRIu64 ",\"nodes\":%u,"
             "\"written\":%u,\"pruned\":%u,\"lost_calls\":%" PRIu64 ",\"open_calls\":%u",
          t->tid, t->dump, calls, nvis, m, nothers, t->lost_calls, t->open_calls);
  /* Gather the six columns in one pass over the nodes (in preorder, an
  ** order that jumps around the node array), then write each. */
  static const char *const keys[2][6] = { { "n", "f", "c", "t", "mn", "mx" },
                                          { "n", "f", "c", "t", "bc", "bt" } };
  double *v = malloc((size_t)m * 6 * sizeof *v);
  struct out *ob = malloc(sizeof *ob);
  if (!v || !ob) { free(v); free(ob); goto out; }
  for (uint32_t j = 0; j < m; j++) {
    uint32_t e = ord[j], i = e & ~OTHER_BIT;
    double *r = &v[(size_t)j * 6];
    if (e & OTHER_BIT) {
      const struct other *x = &o[i];
      r[0] = 0; r[1] = other_func; r[2] = x->calls; r[3] = x->incl;
      r[4] = w->bcalls ? x->bcalls : x->min;
      r[5] = w->bcalls ? x->bincl : x->max;
    } else {
      r[0] = kids[i]; r[1] = nd[i].func; r[2] = (double)nd[i].calls; r[3] = nd[i].t.incl;
      r[4] = w->bcalls ? w->bcalls[i] : nd[i].t.min;
      r[5] = w->bcalls ? w->bincl[i] : nd[i].t.max;
    }
  }
  ob->f = f;
  ob->n = 0;
  for (int col = 0; col < 6; col++) {
    fprintf(f, ",\n\"%s\":[", keys[w->bcalls != NULL][col]);
    for (uint32_t j = 0; j < m; j++) out_num(ob, j, v[(size_t)j * 6 + col]);
    out_flush(ob);
    putc(']', f);
  }
  if (w->wout) {                            /* what the icicle's widths show */
    fputs(",\n\"w\":[", f);
    for (uint32_t j = 0; j < m; j++)
      out_num(ob, j, ord[j] & OTHER_BIT ? o[ord[j] & ~OTHER_BIT].w : w->weight[ord[j]]);
    out_flush(ob);
    putc(']', f);
  }
  /* '~' marks as 'tree' prints them (1: incl and incl/call, 2: self and
  ** self/call are mostly probe cost), only when some node has one. */
  int marked = 0;
  for (uint32_t j = 0; j < m && !w->bcalls && !marked; j++) {
    const struct prof_node *x = &nd[ord[j] & ~OTHER_BIT];
    marked = !(ord[j] & OTHER_BIT) && (prof_unreliable(x->t.incl, x->t.incl_raw) ||
                                      prof_unreliable(x->t.excl, prof_excl_basis(&x->t)));
  }
  /* Calls the times cover, when throttling left some untimed (per-call
  ** figures divide by them, as 'tree' does). */
  int throttled = 0;
  for (uint32_t j = 0; j < m && !throttled; j++)
    throttled = !(ord[j] & OTHER_BIT) && nd[ord[j]].timed != nd[ord[j]].calls;
  if (throttled) {
    fputs(",\n\"tm\":[", f);
    for (uint32_t j = 0; j < m; j++) {
      const struct prof_node *x = &nd[ord[j] & ~OTHER_BIT];
      out_num(ob, j, ord[j] & OTHER_BIT ? v[(size_t)j * 6 + 2] : (double)x->timed);
    }
    out_flush(ob);
    putc(']', f);
  }
  if (marked) {
    fputs(",\n\"u\":[", f);
    for (uint32_t j = 0; j < m; j++) {
      const struct prof_node *x = &nd[ord[j] & ~OTHER_BIT];
      int u = ord[j] & OTHER_BIT ? 0 : (prof_unreliable(x->t.incl, x->t.incl_raw) ? 1 : 0) |
                                       (prof_unreliable(x->t.excl, prof_excl_basis(&x->t)) ? 2 : 0);
      out_num(ob, j, u);
    }
    out_flush(ob);
    putc(']', f);
  }
  free(v);
  free(ob);
  /* Sparse lists: [entry, paths summed] of each "[other]", open entries. */
  fputs(",\n\"other\":[", f);
  for (uint32_t j = 0, k = 0; j < m; j++)
    if (ord[j] & OTHER_BIT) fprintf(f, "%s%u,%u", k++ ? "," : "", j, o[ord[j] & ~OTHER_BIT].n);
  fputs("],\n\"open\":[", f);
  for (uint32_t j = 0, k = 0; j < m; j++)
    if (!(ord[j] & OTHER_BIT) && (nd[ord[j]].flags & CPD_NODE_OPEN))
      fprintf(f, "%s%u", k++ ? "," : "", j);
  fputs("]}", f);
  rc = 0;
out:
  free(keep);
  free(kids);
  free(ord);
  free(stack);
  free(tmp);
  free(o);
  return rc;
}

/* The node budget of a tree of n nodes among trees of total nodes. */
static uint32_t budget_of(uint32_t n, uint64_t total)
{
  if (!export_html_max_nodes || total <= export_html_max_nodes) return 0;
  /* Each tree's share, but at least 100 nodes (or the whole limit if less). */
  uint64_t b = (uint64_t)export_html_max_nodes * n / total;
  uint64_t floor = export_html_max_nodes < 100 ? export_html_max_nodes : 100;
  return (uint32_t)(b < floor ? floor : b);
}

static void page_start(FILE *f)
{
  fwrite(html_page_head, 1, html_page_head_len, f);
}

static void page_end(FILE *f)
{
  fwrite(html_page_tail, 1, html_page_tail_len, f);
}

/* ---- export --format=html ---------------------------------------------------------- */

/* The ranking figure's inclusive value of every node of t (model/weight.h),
** or NULL when out of memory. */
static double *node_weights(const struct profile *p, const struct prof_thread *t)
{
  double *w = malloc(((size_t)t->nnodes + 1) * sizeof *w);
  for (uint32_t i = 0; w && i < t->nnodes; i++) w[i] = prof_node_incl(p, t, i);
  return w;
}

static int write_html(FILE *f, const struct profile *p)
{
  struct prof_thread merged;
  int have_merged = p->nthreads > 1, rc = 0;
  const struct prof_func **fn = func_table(p);
  if (!fn) return tool_error("out of memory");
  if (have_merged && export_merged_tree(p, &merged) != 0) { free(fn); return 1; }
  zone_warnings(p);

  double total = 0;
  uint64_t calls = 0, nodes = 0;
  for (uint32_t i = 0; i < p->nthreads; i++) {
    total += p->threads[i].nodes[0].t.incl;
    nodes += p->threads[i].nnodes - 1;
  }
  for (uint32_t i = 0; i < p->nfuncs; i++)
    if (report_row(&p->funcs[i])) calls += prof_all_calls(&p->funcs[i]);
  if (have_merged) nodes += merged.nnodes - 1;

  page_start(f);
  char wline[300];
  fprintf(f, "{\"kind\":\"profile\",\"version\":1,\"compensated\":true,\"weight\":\"%s\","
             "\"weight_time\":%s,\"weight_line\":", prof_weight_name(p),
          prof_weight_is_time(p) ? "true" : "false");
  jstr(f, prof_weight_line(p, wline, sizeof wline));
  fprintf(f, ",\"max_nodes\":%u,\"total_ns\":", export_html_max_nodes);
  jint(f, total);
  fprintf(f, ",\"calls\":%" PRIu64 ",\"threads\":%u,\n\"dumps\":", calls, p->nthreads);
  write_dumps(f, p, 0, p->ndumps);
  fputs(",\n\"warnings\":", f);
  write_warnings(f, &p, 1);
  fputs(",\n\"funcs\":", f);
  write_funcs(f, fn, p->nfuncs);
  fputs(",\n\"flat\":", f);
  rc = p->ndumps > 1 ? write_flat_runs(f, p) : write_flat(f, p, total);
  if (!rc) {
    fputs(",\n\"edges\":", f);
    rc = write_edges(f, p);
  }
  if (!rc) {
    fputs(",\n\"trees\":[", f);
    if (have_merged) {
      char label[64];
      snprintf(label, sizeof label, "all %u threads", p->nthreads);
      double *wg = node_weights(p, &merged);
      struct wtree w = { label, &merged, NULL, NULL, wg, 1 };
      rc = wg ? write_tree(f, fn, &w, budget_of(merged.nnodes - 1, nodes), p->nfuncs) : 1;
      free(wg);
    }
    for (uint32_t k = 0; k < p->nthreads && !rc; k++) {
      const struct prof_thread *t = &p->threads[k];
      char label[300];
      snprintf(label, sizeof label, "thread %" PRIu64 "%s%s%s", t->tid, t->name[0] ? " \"" : "",
               t->name, t->name[0] ? "\"" : "");
      double *wg = node_weights(p, t);
      struct wtree w = { label, t, NULL, NULL, wg, 1 };
      if (have_merged || k) fputs(",\n", f);
      rc = wg ? write_tree(f, fn, &w, budget_of(t->nnodes - 1, nodes), p->nfuncs) : 1;
      free(wg);
    }
    if (rc) tool_error("out of memory");
    fputs("]}", f);
  }
  page_end(f);
  if (have_merged) prof_thread_free(&merged);
  free(fn);
  return rc ? 1 : 0;
}

const struct exporter export_html = {
  "html", "one self-contained interactive page: flame graph, tables (docs/tool.md)", write_html
};

/* ---- diff --format=html -------------------------------------------------------------- */

static const struct col diff_cols[] = {
  { "self_b", "self before", "pm", "self", "self time per run before: mean +- sd across runs", 0 },
  { "self_a", "self after", "pm", "self", "self time per run after: mean +- sd across runs", 0 },
  { "self_d", "change", "sns", "self", "change of the mean self time per run", 0 },
  { "self_p", "%", "spct", "self", "relative change of the mean self time", 0 },
  { "self_t", "t", "t", "self", "Welch's t statistic of the self-time change", 0 },
  { "self_v", "verdict", "text", "self",
    "real: the change exceeds the run-to-run spread (Welch's t test, 95%); noise: it does not", 0 },
  { "incl_b", "incl before", "pm", "incl", "inclusive time per run before: mean +- sd across runs", 0 },
  { "incl_a", "incl after", "pm", "incl", "inclusive time per run after: mean +- sd across runs", 0 },
  { "incl_d", "change", "sns", "incl", "change of the mean inclusive time per run", 0 },
  { "incl_p", "%", "spct", "incl", "relative change of the mean inclusive time", 0 },
  { "incl_t", "t", "t", "incl", "Welch's t statistic of the inclusive-time change", 0 },
  { "incl_v", "verdict", "text", "incl",
    "real: the change exceeds the run-to-run spread (Welch's t test, 95%); noise: it does not", 0 },
  { "calls_b", "calls before", "pmc", "calls", "calls per run before", 0 },
  { "calls_a", "calls after", "pmc", "calls", "calls per run after", 0 },
  { "calls_d", "change", "snum", "calls", "change of the mean calls per run", 0 },
  { "calls_p", "%", "spct", "calls", "relative change of the mean calls per run", 0 },
  { "calls_t", "t", "t", "calls", "Welch's t statistic of the change in calls", 0 },
  { "calls_v", "verdict", "text", "calls",
    "real: the change exceeds the run-to-run spread (Welch's t test, 95%); noise: it does not", 0 },
};

struct drow {
  uint32_t func;
  struct run_stat a[3], b[3];
  int verdict[3];               /* -1 no verdict, 0 noise, 1 real, 2 same */
  double t[3];
};

static int by_self_change(const void *pa, const void *pb)
{
  const struct drow *x = pa, *y = pb;
  double u = fabs(x->b[0].mean - x->a[0].mean), v = fabs(y->b[0].mean - y->a[0].mean);
  if (u != v) return u < v ? 1 : -1;
  return x->func < y->func ? -1 : 1;
}

static const char *verdict_word(int v)
{
  return v < 0 ? "-" : v == 1 ? "real" : v == 2 ? "same" : "noise";
}

static void write_diff_table(FILE *f, const struct drow *r, size_t n)
{
  fputs("{\"title\":\"Per function: mean per run +- sample standard deviation across runs, "
        "before and after\",", f);
  write_cols(f, diff_cols, sizeof diff_cols / sizeof diff_cols[0]);
  fputs(",\n\"rows\":[", f);
  for (size_t i = 0; i < n; i++) fprintf(f, "%s%u", i ? "," : "", r[i].func);
  fputs("],\n\"v\":[", f);
  for (int c = 0; c < 18; c++) {
    int m = c / 6, k = c % 6;
    fputs(c ? "],\n[" : "[", f);
    for (size_t i = 0; i < n; i++) {
      const struct run_stat *a = &r[i].a[m], *b = &r[i].b[m];
      if (i) putc(',', f);
      switch (k) {
      case 0: case 1:
        putc('[', f);
        jdec(f, k ? b->mean : a->mean);
        putc(',', f);
        jdec(f, k ? b->sd : a->sd);
        putc(']', f);
        break;
      case 2: jdec(f, b->mean - a->mean); break;
      case 3: jdec(f, a->mean > 0 ? 100.0 * (b->mean - a->mean) / a->mean : NAN); break;
      case 4:
        if (r[i].verdict[m] < 0) fputs("null", f);
        else if (isinf(r[i].t[m])) fputs(r[i].t[m] < 0 ? "\"-inf\"" : "\"inf\"", f);
        else jdec(f, r[i].t[m]);
        break;
      default: jstr(f, verdict_word(r[i].verdict[m])); break;
      }
    }
  }
  fputs("]]}", f);
}

/* The union of the base and new merged trees, paths matched by function
** (jid maps each side's function to the page's joint function id): u gets
** the new side's nodes (calls, times, flags), bc/bt the base side's calls and
** inclusive times, wt the pruning weight (the larger side per run). Returns
** 0 or CAPPROF_ENOMEM. */
static int union_tree(const struct prof_thread *a, const struct prof_thread *b,
                      const uint32_t *const jid[2], int raw, double na, double nb,
                      struct prof_thread *u, double **bc, double **bt, double **wt)
{
  size_t cap = (size_t)a->nnodes + b->nnodes;
  memset(u, 0, sizeof *u);
  u->dump = -1;
  u->name = calloc(1, 1);              /* "" */
  u->nodes = calloc(cap, sizeof *u->nodes);
  *bc = calloc(cap, sizeof **bc);
  *bt = calloc(cap, sizeof **bt);
  *wt = calloc(cap, sizeof **wt);
  uint32_t *map = malloc(cap * sizeof *map), *order = malloc(cap * sizeof *order);
  struct hmap m;
  int ok = hm_init(&m, cap) == 0;
  if (!ok || !u->name || !u->nodes || !*bc || !*bt || !*wt || !map || !order) goto oom;
  u->nnodes = 1;
  u->nodes[0].func = b->nnodes && jid[1][0] != PROF_NONE ? jid[1][b->nodes[0].func] : 0;
  u->nodes[0].parent = PROF_NONE;
  for (int side = 0; side < 2; side++) {
    const struct prof_thread *t = side ? b : a;
    map[0] = 0;
    for (uint32_t i = 0; i < t->nnodes; i++) {
      const struct prof_node *s = &t->nodes[i];
      uint32_t o = 0, fn = jid[side][s->func];
      if (i) {
        uint64_t key = (uint64_t)map[s->parent] << 32 | fn;
        o = hm_get(&m, key);
        if (o == PROF_NONE) {
          o = u->nnodes++;
          u->nodes[o].func = fn;
          u->nodes[o].parent = map[s->parent];
          if (hm_put(&m, key, o) != 0) goto oom;
        }
      }
      map[i] = o;
      double incl = raw ? s->t.incl_raw : s->t.incl;
      if (side) {
        struct prof_node *x = &u->nodes[o];
        x->calls = s->calls;
        x->flags = s->flags;
        x->t.incl = incl;
        x->t.min = raw ? s->t.min_raw : s->t.min;
        x->t.max = raw ? s->t.max_raw : s->t.max;
      } else {
        (*bc)[o] = (double)s->calls;
        (*bt)[o] = incl;
      }
    }
  }
  for (uint32_t i = 0; i < u->nnodes; i++) {
    double x = u->nodes[i].t.incl / nb, y = (*bt)[i] / na;
    (*wt)[i] = x > y ? x : y;
    u->nodes[i].first = u->nodes[i].next = PROF_NONE;
    order[i] = i;
  }
  static struct wtree w;                /* by_weight's view of the union */
  w.t = u;
  w.weight = *wt;
  sort_tree = &w;
  qsort(order + 1, u->nnodes - 1, sizeof *order, by_weight);
  for (uint32_t k = u->nnodes; k-- > 1;) {        /* prepend smallest first */
    struct prof_node *x = &u->nodes[order[k]];
    x->next = u->nodes[x->parent].first;
    u->nodes[x->parent].first = order[k];
  }
  free(map);
  free(order);
  hm_free(&m);
  return 0;
oom:
  if (ok) hm_free(&m);
  free(map);
  free(order);
  free(*bc); free(*bt); free(*wt);
  *bc = *bt = *wt = NULL;
  prof_thread_free(u);
  return CAPPROF_ENOMEM;
}

/* One tree summing every thread of p (CAPPROF_ENOMEM when out of memory). */
static int merge_all(const struct profile *p, struct prof_thread *out)
{
  uint32_t *all = malloc((p->nthreads + 1) * sizeof *all);
  if (!all) return CAPPROF_ENOMEM;
  for (uint32_t i = 0; i < p->nthreads; i++) all[i] = i;
  int rc = prof_merge_threads(p, all, p->nthreads, out);
  free(all);
  return rc;
}

/* Statistics of function f (PROF_NONE: absent, 0 in every run) in rt. */
static void fill_stats(const struct run_table *rt, uint32_t f, struct run_stat *s)
{
  const double *col[3] = { rt->self, rt->total, rt->calls };
  double *z = f == PROF_NONE ? calloc(rt->nruns ? rt->nruns : 1, sizeof *z) : NULL;
  for (int c = 0; c < 3; c++) {
    if (f != PROF_NONE) runs_stat(runs_row(rt, col[c], f), rt->nruns, &s[c]);
    else if (z) runs_stat(z, rt->nruns, &s[c]);
    else memset(&s[c], 0, sizeof s[c]);
  }
  free(z);
}

int diff_html(char **base, int nbase, char **after, int nafter, int key, int raw, int keep,
              const char *out)
{
  /* Two profiles, as diff_runs: functions match by prof_lookup_in (so two
  ** builds of a program named apart still line up), and the page's joint
  ** function ids are NEW's functions, then BASE's that NEW lacks. */
  struct profile *a = prof_load_all(nbase, base);
  if (!a) return 1;
  struct profile *b = prof_load_all(nafter, after);
  if (!b) { prof_free(a); return 1; }
  zone_warnings(a);
  zone_warnings(b);

  struct run_table ra, rb;
  struct drow *rows = NULL;
  int8_t *fv = NULL;
  uint32_t *jid[2] = { NULL, NULL }, nj = b->nfuncs;
  const struct prof_func **fn = NULL;
  struct prof_thread ta, tb, u;
  double *bc = NULL, *bt = NULL, *wt = NULL;
  int have_trees = 0, rc = 1;
  memset(&ra, 0, sizeof ra);
  memset(&rb, 0, sizeof rb);
  if (runs_build_fig(a, raw, 0, &ra) != 0 || runs_build_fig(b, raw, 0, &rb) != 0) goto oom;
  size_t nall = (size_t)a->nfuncs + b->nfuncs + 1;
  rows = calloc(nall, sizeof *rows);
  fv = malloc(nall * 3);
  jid[0] = malloc(((size_t)a->nfuncs + 1) * sizeof *jid[0]);
  jid[1] = malloc(((size_t)b->nfuncs + 1) * sizeof *jid[1]);
  fn = malloc(nall * sizeof *fn);
  if (!rows || !fv || !jid[0] || !jid[1] || !fn) goto oom;
  jid[1][0] = PROF_NONE;                 /* stays so when NEW has no function */
  for (uint32_t f = 0; f < b->nfuncs; f++) {
    jid[1][f] = f;
    fn[f] = &b->funcs[f];
  }
  for (uint32_t g = 0; g < a->nfuncs; g++) {
    uint32_t f = prof_lookup_in(b, a, g, keep);
    if (f == PROF_NONE) {
      fn[nj] = &a->funcs[g];
      f = nj++;
    }
    jid[0][g] = f;
  }

  /* Per function, diff_runs' rows and verdicts. */
  size_t nr = 0;
  memset(fv, 0xff, nall * 3);
  for (uint32_t f = 0; f < b->nfuncs; f++) {
    if (b->funcs[f].synthetic || !rb.present[f]) continue;
    struct drow *r = &rows[nr++];
    r->func = f;
    fill_stats(&ra, prof_lookup_in(a, b, f, keep), r->a);
    fill_stats(&rb, f, r->b);
  }
  for (uint32_t g = 0; g < a->nfuncs; g++) {
    if (a->funcs[g].synthetic || !ra.present[g]) continue;
    uint32_t f = prof_lookup_in(b, a, g, keep);
    if (f != PROF_NONE && rb.present[f]) continue;
    struct drow *r = &rows[nr++];
    r->func = jid[0][g];
    fill_stats(&ra, g, r->a);
    fill_stats(&rb, PROF_NONE, r->b);
  }
  for (size_t i = 0; i < nr; i++) {
    struct drow *r = &rows[i];
    for (int c = 0; c < 3; c++) {
      r->verdict[c] = runs_significant(&r->a[c], ra.nruns, &r->b[c], rb.nruns, &r->t[c]);
      if (r->verdict[c] == 0 && r->b[c].mean == r->a[c].mean) r->verdict[c] = 2;
      fv[(size_t)r->func * 3 + c] = (int8_t)r->verdict[c];
    }
  }
  qsort(rows, nr, sizeof *rows, by_self_change);

  if (merge_all(a, &ta) != 0) goto oom;
  if (merge_all(b, &tb) != 0) { prof_thread_free(&ta); goto oom; }
  int urc = union_tree(&ta, &tb, (const uint32_t *const *)jid, raw, ra.nruns, rb.nruns, &u, &bc,
                       &bt, &wt);
  prof_thread_free(&ta);
  prof_thread_free(&tb);
  if (urc) goto oom;
  have_trees = 1;

  FILE *f = tool_open_out(out);
  if (!f) goto out;
  page_start(f);
  fprintf(f, "{\"kind\":\"diff\",\"version\":1,\"compensated\":%s,\"max_nodes\":%u,"
             "\"metric\":%d,\n\"base\":{\"runs\":%u,\"dumps\":", raw ? "false" : "true",
          export_html_max_nodes, key, ra.nruns);
  write_dumps(f, a, 0, a->ndumps);
  fprintf(f, "},\n\"new\":{\"runs\":%u,\"dumps\":", rb.nruns);
  write_dumps(f, b, 0, b->ndumps);
  fputs("},\n\"warnings\":", f);
  const struct profile *both[2] = { a, b };
  write_warnings(f, both, 2);
  fputs(",\n\"funcs\":", f);
  write_funcs(f, fn, nj);
  /* Per function and metric (self, incl, calls): -1 no verdict, 0 noise, 1 real, 2 same. */
  fputs(",\n\"verdict\":[", f);
  for (uint32_t i = 0; i < nj * 3; i++) fprintf(f, "%s%d", i ? "," : "", fv[i]);
  fputs("],\n\"flat\":", f);
  write_diff_table(f, rows, nr);
  fputs(",\n\"trees\":[", f);
  struct wtree w = { "all threads", &u, bc, bt, wt, 0 };
  rc = write_tree(f, fn, &w, budget_of(u.nnodes - 1, u.nnodes - 1), nj);
  if (rc) tool_error("out of memory");
  fputs("]}", f);
  page_end(f);
  if (tool_close_out(f, out) != 0) rc = 1;
  rc = rc ? 1 : 0;
  goto out;
oom:
  rc = tool_error("out of memory");
out:
  if (have_trees) {
    prof_thread_free(&u);
    free(bc); free(bt); free(wt);
  }
  free(rows);
  free(fv);
  free(jid[0]);
  free(jid[1]);
  free(fn);
  runs_free(&ra);
  runs_free(&rb);
  prof_free(a);
  prof_free(b);
  return rc;
}
