/*
** diff_runs.c -- 'capprof diff BASE... -- NEW...': the diff of two sets of
** runs. Per function, the mean per run on each side with its run-to-run
** spread, the change, and whether the change exceeds that spread (Welch's
** t test, two-sided, 95%): a real difference, or noise.
*/
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "cmd/display.h"
#include "model/profile.h"
#include "model/run_stats.h"
#include "model/tool.h"

struct drow {
  const char *name;
  int zone;                     /* a zone, not a function */
  struct run_stat a[3], b[3];   /* self, total, calls: before and after */
  int verdict;                  /* runs_significant on the sort column */
  double t;
};

static int dsort;

static int by_change(const void *pa, const void *pb)
{
  const struct drow *x = pa, *y = pb;
  double u = fabs(x->b[dsort].mean - x->a[dsort].mean);
  double v = fabs(y->b[dsort].mean - y->a[dsort].mean);
  if (u != v) return u < v ? 1 : -1;
  return strcmp(x->name, y->name);
}

static void fill(const struct run_table *rt, uint32_t f, struct run_stat *s)
{
  static const double zeros[1] = { 0 };
  const double *col[3] = { rt->self, rt->total, rt->calls };
  for (int c = 0; c < 3; c++) {
    if (f == PROF_NONE) {                /* absent from every run: 0 in each */
      double *z = calloc(rt->nruns ? rt->nruns : 1, sizeof *z);
      runs_stat(z ? z : zeros, z ? rt->nruns : 1, &s[c]);
      free(z);
    } else {
      runs_stat(runs_row(rt, col[c], f), rt->nruns, &s[c]);
    }
  }
}

static const char *pm(double mean, double sd, int count, char *buf, size_t n)
{
  char a[32], b[32];
  if (count) snprintf(buf, n, "%.1f +- %.1f", mean, sd);
  else snprintf(buf, n, "%s +- %s", fmt_ns(mean, a, sizeof a), fmt_ns(sd, b, sizeof b));
  return buf;
}

int diff_runs(char **base, int nbase, char **after, int nafter, int key, int raw, double limit,
              int keep_modules)
{
  struct profile *a = prof_load_all(nbase, base);
  if (!a) return 1;
  struct profile *b = prof_load_all(nafter, after);
  if (!b) { prof_free(a); return 1; }
  struct run_table ra, rb;
  struct drow *rows = NULL;
  int rc = 0;
  if (runs_build(a, raw, &ra) != 0) { rc = tool_error("out of memory"); goto out_p; }
  if (runs_build(b, raw, &rb) != 0) { rc = tool_error("out of memory"); goto out_a; }
  const char *why = NULL;                /* why elapsed when either side was sampled */
  if (ra.cpu != rb.cpu) {
    why = ra.cpu ? "BASE's runs were sampled, NEW's were not all"
                 : "NEW's runs were sampled, BASE's were not all";
    runs_free(&ra);
    runs_free(&rb);
    if (runs_build_fig(a, raw, 0, &ra) != 0) { rc = tool_error("out of memory"); goto out_p; }
    if (runs_build_fig(b, raw, 0, &rb) != 0) { rc = tool_error("out of memory"); goto out_a; }
  }
  rows = calloc((size_t)a->nfuncs + b->nfuncs + 1, sizeof *rows);
  if (!rows) { rc = tool_error("out of memory"); goto out_b; }
  size_t n = 0;
  for (uint32_t f = 0; f < b->nfuncs; f++) {
    if (b->funcs[f].synthetic || !rb.present[f]) continue;
    uint32_t g = prof_lookup_in(a, b, f, keep_modules);
    rows[n].name = b->funcs[f].name;
    rows[n].zone = b->funcs[f].zone;
    fill(&ra, g, rows[n].a);
    fill(&rb, f, rows[n].b);
    n++;
  }
  for (uint32_t g = 0; g < a->nfuncs; g++) {
    if (a->funcs[g].synthetic || !ra.present[g]) continue;
    uint32_t f = prof_lookup_in(b, a, g, keep_modules);
    if (f != PROF_NONE && rb.present[f]) continue;
    rows[n].name = a->funcs[g].name;
    rows[n].zone = a->funcs[g].zone;
    fill(&ra, g, rows[n].a);
    fill(&rb, PROF_NONE, rows[n].b);
    n++;
  }
  dsort = key;
  for (size_t i = 0; i < n; i++)
    rows[i].verdict = runs_significant(&rows[i].a[key], ra.nruns, &rows[i].b[key], rb.nruns,
                                       &rows[i].t);
  qsort(rows, n, sizeof *rows, by_change);

  display_start(1);
  if (ra.cpu)
    printf("compared by cpu: the samples' CPU time (every run sampled)\n");
  else
    printf("compared by elapsed (the hooks' wall time)%s%s\n", why ? ": " : "", why ? why : "");
  printf("%u run%s before, %u run%s after%s. %s per function: mean per run +- sample\n"
         "standard deviation across runs. A change is 'real' when it exceeds the\n"
         "run-to-run spread (Welch's t test, 95%%), 'noise' when it does not%s.\n",
         ra.nruns, ra.nruns == 1 ? "" : "s", rb.nruns, rb.nruns == 1 ? "" : "s",
         raw && !ra.cpu ? " (raw times)" : "",
         key == 2 ? "Calls" : ra.cpu ? (key == 0 ? "Cpu self" : "Cpu incl")
                                     : (key == 0 ? "Elapsed self" : "Elapsed incl"),
         ra.nruns < 2 || rb.nruns < 2 ? "; each side needs two runs or more for a verdict" : "");
  printf("%s%22s %22s %10s %8s %7s  %s%s\n", disp_on(DISP_HEADER), "before", "after", "change", "t",
         "verdict", "function", disp_off());
  for (size_t i = 0; i < n && (limit < 0 || i < limit); i++) {
    const struct drow *r = &rows[i];
    char x[80], y[80], d[48], t[16];
    double dm = r->b[key].mean - r->a[key].mean;
    if (key == 2) snprintf(d, sizeof d, "%+.1f", dm);
    else {
      char tmp[32];
      fmt_ns(fabs(dm), tmp, sizeof tmp);
      snprintf(d, sizeof d, "%s%s", dm < 0 ? "-" : dm > 0 ? "+" : "", tmp);
    }
    if (r->verdict < 0) snprintf(t, sizeof t, "-");
    else if (isinf(r->t)) snprintf(t, sizeof t, "%sinf", r->t < 0 ? "-" : "");
    else snprintf(t, sizeof t, "%.2f", r->t);
    int used = printf("%22s %22s %10s %8s %7s  ",
                      pm(r->a[key].mean, r->a[key].sd, key == 2, x, sizeof x),
                      pm(r->b[key].mean, r->b[key].sd, key == 2, y, sizeof y), d, t,
                      r->verdict < 0 ? "-" : r->verdict ? "real" : dm == 0 ? "same" : "noise");
    disp_name(stdout, r->name, r->zone ? "  [zone]" : "", (size_t)used);
    putchar('\n');
  }
  free(rows);
out_b:
  runs_free(&rb);
out_a:
  runs_free(&ra);
out_p:
  prof_free(a);
  prof_free(b);
  return rc;
}
