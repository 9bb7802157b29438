/*
** run_stats.h -- statistics across runs. A profile loaded from N dumps of the
** same program treats each dump as one run; per function it gives the value
** in each run (self, total, calls: a run where the function is absent counts
** 0), and over the runs the mean, sample standard deviation, min, max and the
** number of runs it appears in. Used by report, diff and the CSV export.
*/
#ifndef CAPPROF_RUNS_H
#define CAPPROF_RUNS_H

#include <stdint.h>

#include "model/profile.h"

struct run_stat {
  double mean, sd;              /* sd: sample standard deviation, 0 for one run */
  double min, max;
};

struct run_table {
  uint32_t nruns, nfuncs;
  double *self, *total, *calls; /* [func * nruns + run], ns and counts */
  int cpu;                      /* self and total are cpu from the samples
                                ** (model/weight.h), else elapsed */
  uint32_t *present;            /* per function: runs in which it was called */
};

/* Per-run flat totals of every function of p: self and total are cpu when
** cpu is not 0, p ranks by cpu and every run was sampled (cpu < 0: as
** that says; rt->cpu tells), else elapsed (compensated, or raw). Returns
** 0, or CAPPROF_ENOMEM. Free with runs_free. */
int runs_build_fig(const struct profile *p, int raw, int cpu, struct run_table *rt);
/* The same, elapsed when cpu is not what p ranks by (cpu < 0). */
static inline int runs_build(const struct profile *p, int raw, struct run_table *rt)
{
  return runs_build_fig(p, raw, -1, rt);
}
void runs_free(struct run_table *rt);

/* The values of function f in column col (rt->self, ->total or ->calls). */
static inline const double *runs_row(const struct run_table *rt, const double *col, uint32_t f)
{
  return col + (size_t)f * rt->nruns;
}

/* Statistics of v[0..n-1]. */
void runs_stat(const double *v, uint32_t n, struct run_stat *out);

/* Whether two sets of runs differ by more than their run-to-run spread:
** Welch's t test, two-sided, 95%. Returns 1 if so, 0 if the difference is
** within the noise, -1 when either side has fewer than two runs (no spread
** to compare with). *t gets the t statistic (0 if undefined). */
int runs_significant(const struct run_stat *a, uint32_t na, const struct run_stat *b,
                     uint32_t nb, double *t);

#endif /* CAPPROF_RUNS_H */
