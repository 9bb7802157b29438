/*
** run_stats.c -- per-run flat totals of a multi-dump profile and the statistics
** over them (mean, sample standard deviation, min, max, Welch's t test).
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/run_stats.h"
#include "model/weight.h"

int runs_build_fig(const struct profile *p, int raw, int cpu, struct run_table *rt)
{
  memset(rt, 0, sizeof *rt);
  rt->nruns = p->ndumps ? p->ndumps : 1;
  rt->nfuncs = p->nfuncs;
  size_t cells = (size_t)rt->nruns * (p->nfuncs ? p->nfuncs : 1);
  rt->self = calloc(cells, sizeof *rt->self);
  rt->total = calloc(cells, sizeof *rt->total);
  rt->calls = calloc(cells, sizeof *rt->calls);
  rt->present = calloc(p->nfuncs ? p->nfuncs : 1, sizeof *rt->present);
  if (!rt->self || !rt->total || !rt->calls || !rt->present) {
    runs_free(rt);
    return CAPPROF_ENOMEM;
  }
  /* cpu only when every run has samples charged to call paths: a run
  ** without would count 0 and pass for a change. */
  rt->cpu = cpu != 0 && prof_weight_of(p) == PROF_W_CPU;
  for (uint32_t r = 0; rt->cpu && r < rt->nruns; r++) {
    int any = 0;
    for (uint32_t k = 0; k < p->nthreads && !any; k++)
      any = p->threads[k].dump == (int)r && p->threads[k].nnodes && p->threads[k].nodes[0].s_incl;
    rt->cpu = any;
  }
  for (uint32_t k = 0; k < p->nthreads; k++) {
    const struct prof_thread *t = &p->threads[k];
    if (t->dump < 0 || (uint32_t)t->dump >= rt->nruns) continue;
    for (uint32_t i = 1; i < t->nnodes; i++) {
      const struct prof_node *s = &t->nodes[i];
      size_t at = (size_t)s->func * rt->nruns + (uint32_t)t->dump;
      rt->calls[at] += (double)s->calls;
      if (rt->cpu) {
        rt->self[at] += prof_node_figure(p, t, i, PROF_W_CPU, 0);
        if (s->flags & PROF_OUTER) rt->total[at] += prof_node_figure(p, t, i, PROF_W_CPU, 1);
        continue;
      }
      rt->self[at] += raw ? s->t.excl_raw : s->t.excl;
      /* Outermost activations only, as the flat profile counts them. */
      if (s->flags & PROF_OUTER) rt->total[at] += raw ? s->t.incl_raw : s->t.incl;
    }
  }
  /* Unhooked functions' calls counted after (the process's, per dump). */
  for (uint32_t r = 0; !p->ucalls_off && r < rt->nruns && r < p->ndumps; r++) {
    const struct cpd_dump *d = p->dumps[r].d;
    for (uint32_t u = 0; p->dumps[r].ufunc && u < d->nunhooked; u++)
      if (p->dumps[r].ufunc[u] < p->nfuncs && d->unhooked[u].calls != CPD_UNHOOKED_UNCOUNTED)
        rt->calls[(size_t)p->dumps[r].ufunc[u] * rt->nruns + r] += (double)d->unhooked[u].calls;
  }
  for (uint32_t f = 0; f < p->nfuncs; f++)
    for (uint32_t r = 0; r < rt->nruns; r++)
      rt->present[f] += rt->calls[(size_t)f * rt->nruns + r] > 0;
  return 0;
}

void runs_free(struct run_table *rt)
{
  free(rt->self);
  free(rt->total);
  free(rt->calls);
  free(rt->present);
  memset(rt, 0, sizeof *rt);
}

void runs_stat(const double *v, uint32_t n, struct run_stat *out)
{
  memset(out, 0, sizeof *out);
  if (!n) return;
  double sum = 0;
  out->min = out->max = v[0];
  for (uint32_t i = 0; i < n; i++) {
    sum += v[i];
    if (v[i] < out->min) out->min = v[i];
    if (v[i] > out->max) out->max = v[i];
  }
  out->mean = sum / n;
  if (n < 2) return;
  double ss = 0;
  for (uint32_t i = 0; i < n; i++) ss += (v[i] - out->mean) * (v[i] - out->mean);
  out->sd = sqrt(ss / (n - 1));
}

/* Two-sided 95% critical values of Student's t for 1..30 degrees of freedom. */
static const double t95[30] = {
  12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
  2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
  2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
};

int runs_significant(const struct run_stat *a, uint32_t na, const struct run_stat *b,
                     uint32_t nb, double *t)
{
  *t = 0;
  if (na < 2 || nb < 2) return -1;
  double va = a->sd * a->sd / na, vb = b->sd * b->sd / nb, se = sqrt(va + vb);
  double diff = b->mean - a->mean;
  if (se == 0) {                       /* no spread at all: any change is real */
    *t = diff == 0 ? 0 : (diff > 0 ? INFINITY : -INFINITY);
    return diff != 0;
  }
  *t = diff / se;
  /* Welch-Satterthwaite degrees of freedom. */
  double df = (va + vb) * (va + vb) /
              (va * va / (na - 1) + vb * vb / (nb - 1));
  int k = df < 1 ? 1 : (int)df;        /* round down: the safe side */
  double crit = k <= 30 ? t95[k - 1] : 1.960 + 2.4 / k;
  return fabs(*t) > crit;
}
