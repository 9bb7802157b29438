/*
** export_csv.c -- '--format=csv': the flat profile, one row per function
** with a header row, RFC 4180 quoting, times in nanoseconds, sorted as
** report sorts: by the ranking figure's self (--weight, model/weight.h),
** whose shares of the total are the two columns after line, named for the
** figure (cpu_self_pct, cpu_incl_pct; elapsed_...; calls_pct). The columns
** are one table, so new columns (e.g. per-run statistics) are one line each.
** With several dumps (runs), per-run columns follow: runs (how many runs
** the function appears in), mean and sample standard deviation per run of
** self, incl and calls, then self/incl/calls of each run in the order the
** dumps were given (self_ns_run1 ...).
*/
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export/export.h"
#include "model/run_stats.h"
#include "model/weight.h"

struct column {
  const char *header;
  double (*value)(const struct prof_func *f);   /* NULL: a text column */
};

#define TIME_GETTER(field) \
  static double get_##field(const struct prof_func *f) { return f->t.field; }
TIME_GETTER(excl)
TIME_GETTER(incl)
TIME_GETTER(min)
TIME_GETTER(max)
TIME_GETTER(excl_raw)
TIME_GETTER(incl_raw)
TIME_GETTER(min_raw)
TIME_GETTER(max_raw)
static double get_calls(const struct prof_func *f) { return (double)prof_all_calls(f); }
static double get_self_unreliable(const struct prof_func *f)
{
  return prof_unreliable(f->t.excl, prof_excl_basis(&f->t));
}
static double get_incl_unreliable(const struct prof_func *f)
{
  return prof_unreliable(f->t.incl, f->t.incl_raw);
}
static double get_self_avg(const struct prof_func *f) { return prof_per_call(f->t.excl, f->timed); }
static double get_incl_avg(const struct prof_func *f) { return prof_per_call(f->incl_all, f->timed); }
static double get_self_avg_raw(const struct prof_func *f)
{
  return prof_per_call(f->t.excl_raw, f->timed);
}
static double get_incl_avg_raw(const struct prof_func *f)
{
  return prof_per_call(f->incl_all_raw, f->timed);
}

/* The names every command and export shares (docs/tool.md). */
static const struct column numeric[] = {
  { "calls", get_calls },
  { "self_ns", get_excl }, { "incl_ns", get_incl },
  { "self_per_call_ns", get_self_avg }, { "incl_per_call_ns", get_incl_avg },
  { "incl_min_ns", get_min }, { "incl_max_ns", get_max },
  { "self_ns_raw", get_excl_raw }, { "incl_ns_raw", get_incl_raw },
  { "self_per_call_ns_raw", get_self_avg_raw }, { "incl_per_call_ns_raw", get_incl_avg_raw },
  { "incl_min_ns_raw", get_min_raw }, { "incl_max_ns_raw", get_max_raw },
  /* 1 when the compensated figure is mostly probe cost (prof_unreliable) */
  { "self_unreliable", get_self_unreliable }, { "incl_unreliable", get_incl_unreliable },
};

/* With samples (docs/tool.md, "Samples"): the same names as JSON. */
static double get_samples(const struct prof_func *f) { return (double)f->s.incl; }
static double get_self_samples(const struct prof_func *f) { return (double)f->s.self; }
static double get_cpu(const struct prof_func *f) { return f->s.cpu_incl; }
static double get_cpu_self(const struct prof_func *f) { return f->s.cpu_self; }
static double get_probe(const struct prof_func *f) { return (double)f->s.probe; }
static double get_pc_self(const struct prof_func *f) { return (double)f->pc.self; }
static double get_pc(const struct prof_func *f) { return (double)f->pc.incl; }

static const struct column sampled[] = {
  { "samples", get_samples }, { "self_samples", get_self_samples },
  { "cpu_ns", get_cpu }, { "cpu_self_ns", get_cpu_self }, { "probe_samples", get_probe },
  { "pc_self_samples", get_pc_self }, { "pc_samples", get_pc },
};

static void csv_field(FILE *f, const char *s)
{
  if (!s) s = "";
  if (!strpbrk(s, ",\"\r\n")) { fputs(s, f); return; }
  putc('"', f);
  for (; *s; s++) {
    if (*s == '"') putc('"', f);
    putc(*s, f);
  }
  putc('"', f);
}

static const char *const run_cols[3] = { "self_ns", "incl_ns", "calls" };

static void run_header(FILE *f, const struct run_table *rt)
{
  fputs(",runs", f);
  for (int c = 0; c < 3; c++) fprintf(f, ",%s_mean,%s_sd", run_cols[c], run_cols[c]);
  for (int c = 0; c < 3; c++)
    for (uint32_t r = 0; r < rt->nruns; r++) fprintf(f, ",%s_run%u", run_cols[c], r + 1);
}

static void run_values(FILE *f, const struct run_table *rt, uint32_t fn)
{
  const double *col[3] = { rt->self, rt->total, rt->calls };
  fprintf(f, ",%u", rt->present[fn]);
  for (int c = 0; c < 3; c++) {
    struct run_stat s;
    runs_stat(runs_row(rt, col[c], fn), rt->nruns, &s);
    fprintf(f, c == 2 ? ",%.3f,%.3f" : ",%.0f,%.0f", s.mean, s.sd);
  }
  for (int c = 0; c < 3; c++)
    for (uint32_t r = 0; r < rt->nruns; r++) fprintf(f, ",%.0f", runs_row(rt, col[c], fn)[r]);
}

static const struct profile *sort_prof;

/* Rows by the ranking figure's self, largest first, as 'report' lists
** them; ties by its inclusive figure, then name. */
static int by_self(const void *pa, const void *pb)
{
  const struct prof_func *a = &sort_prof->funcs[*(const uint32_t *)pa];
  const struct prof_func *b = &sort_prof->funcs[*(const uint32_t *)pb];
  double x = prof_func_self(sort_prof, a), y = prof_func_self(sort_prof, b);
  if (x != y) return x < y ? 1 : -1;
  x = prof_func_incl(sort_prof, a), y = prof_func_incl(sort_prof, b);
  if (x != y) return x < y ? 1 : -1;
  int c = strcmp(a->name, b->name);
  return c ? c : strcmp(a->module, b->module);
}

static int write_csv(FILE *f, const struct profile *p)
{
  struct run_table rt;
  int runs = p->ndumps > 1;
  if (runs && runs_build_fig(p, 0, 0, &rt) != 0) {     /* columns named _ns: elapsed */
    fprintf(stderr, "capprof: out of memory\n");
    return 1;
  }
  const char *w = prof_weight_name(p);
  if (prof_weight_of(p) == PROF_W_CALLS) fprintf(f, "function,module,file,line,calls_pct,calls_incl_pct");
  else fprintf(f, "function,module,file,line,%s_self_pct,%s_incl_pct", w, w);
  double total = prof_weight_total(p);
  for (size_t c = 0; c < sizeof numeric / sizeof numeric[0]; c++) fprintf(f, ",%s", numeric[c].header);
  int with_samples = p->node_samples || p->pc_samples;
  for (size_t c = 0; with_samples && c < sizeof sampled / sizeof sampled[0]; c++)
    fprintf(f, ",%s", sampled[c].header);
  if (runs) run_header(f, &rt);
  fputs("\r\n", f);
  uint32_t *order = malloc(((size_t)p->nfuncs + 1) * sizeof *order), n = 0;
  if (!order) {
    if (runs) runs_free(&rt);
    fprintf(stderr, "capprof: out of memory\n");
    return 1;
  }
  for (uint32_t i = 0; i < p->nfuncs; i++)
    if (prof_all_calls(&p->funcs[i]) || (runs && rt.present[i]) ||
        (!p->funcs[i].synthetic && (p->funcs[i].s.incl || p->funcs[i].pc.incl)))
      order[n++] = i;
  sort_prof = p;
  qsort(order, n, sizeof *order, by_self);
  for (uint32_t k = 0; k < n; k++) {
    uint32_t i = order[k];
    const struct prof_func *fn = &p->funcs[i];
    csv_field(f, fn->name);
    putc(',', f);
    csv_field(f, fn->module);
    putc(',', f);
    csv_field(f, fn->file);
    fprintf(f, ",%u,%.4f,%.4f", fn->line, 100 * prof_share(prof_func_self(p, fn), total),
            100 * prof_share(prof_func_incl(p, fn), total));
    for (size_t c = 0; c < sizeof numeric / sizeof numeric[0]; c++)
      fprintf(f, ",%.0f", numeric[c].value(fn));
    for (size_t c = 0; with_samples && c < sizeof sampled / sizeof sampled[0]; c++)
      fprintf(f, ",%.0f", sampled[c].value(fn));
    if (runs) run_values(f, &rt, i);
    fputs("\r\n", f);
  }
  free(order);
  if (runs) runs_free(&rt);
  return 0;
}

const struct exporter export_csv = {
  "csv", "flat profile for spreadsheets, with a header row", write_csv
};
