/*
** truth_main.c -- accuracy benchmark (e). Measures each function of the
** ground-truth tree uninstrumented (inclusive time per call of the plain
** copy, in a loop; exclusive = inclusive minus its children's), then runs the
** instrumented copy, dumps, reads the dump back with the reader library and
** compares capprof's exclusive and inclusive times per call, compensated for
** probe overhead and raw, with the truth. All in one process, interleaved,
** minimum of several repetitions. Never instrumented itself.
**
**   bench_truth [REPS] [DUMP-PATH]
**   bench_truth --sampled SECONDS DUMP-PATH
**   bench_truth --plain SECONDS
**
** The dump of the least disturbed repetition (smallest root time) is left
** at DUMP-PATH.best, so that bench/run.sh can check what 'capprof export'
** reports for it against the same truth.
**
** --sampled: the second witness, for a run with CAPPROF_SAMPLE set (and so
** with unhooking). Calls the instrumented root for SECONDS of thread CPU
** time, without resets, dumps to DUMP-PATH and prints how many calls each
** function really made ("sampled fn=tiny calls=N"): unhooked functions stop
** being counted, so bench/run.sh divides each function's sampled CPU self
** time ('capprof export --format=csv', cpu_self_ns) by these to compare it
** with the truth of a plain run: as a share of all the program's CPU time,
** and per call. --plain: thread CPU time per call of the plain root over
** SECONDS ("plain root_cpu_ns=N"), the long-run cost that the sampled run's
** total is compared with (the truth above is a minimum over short loops).
*/
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "capprof/capprof.h"
#include "model/cpd_reader.h"
#include "truth.h"

enum { F_NANO, F_TINY, F_SMALL, F_MID, F_HEAVY, F_FAN, F_ROOT, NF };
static const char *const fname[NF] = { "nano", "tiny", "small", "mid", "heavy", "fan", "root" };
static void (*const plain_fn[NF])(void) = { plain_nano, plain_tiny, plain_small, plain_mid,
                                            plain_heavy, plain_fan, plain_root };
static void (*const cap_fn[NF])(void) = { cap_nano, cap_tiny, cap_small, cap_mid,
                                          cap_heavy, cap_fan, cap_root };

static uint64_t clock_ns(clockid_t id)
{
  struct timespec ts;
  clock_gettime(id, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t mono_ns(void) { return clock_ns(CLOCK_MONOTONIC); }

/* Plain ns per call of f: a loop of calls lasting ~0.4 ms. Inclusive time,
** or in leaf mode (children skipped) exclusive time. Short loops and many
** repetitions: the minimum then comes from a repetition that no other
** process preempted (times here are wall clock, as the TSC is). */
static double plain_time(int f)
{
  static const int loops[NF] = { 50000, 20000, 3000, 500, 80, 150, 20 };
  uint64_t t0 = mono_ns();
  for (int i = 0; i < loops[f]; i++) plain_fn[f]();
  return (double)(mono_ns() - t0) / loops[f];
}

struct meas { double excl, incl; };   /* ns per call */

/* Per function from one dump: raw and compensated, aggregated over nodes. */
static int read_dump(const char *path, struct meas raw[NF], struct meas comp[NF],
                     double calib[3])
{
  char err[256];
  struct cpd_dump *d;
  if (cpd_load(path, &d, err, sizeof err) != 0) {
    fprintf(stderr, "bench_truth: %s\n", err);
    return -1;
  }
  calib[0] = cpd_ticks_to_ns(d, (double)d->timer_overhead);
  calib[1] = cpd_ticks_to_ns(d, d->probe_inner_mt / 1000.0);
  calib[2] = cpd_ticks_to_ns(d, d->probe_outer_mt / 1000.0);
  double inner = d->probe_inner_mt / 1000.0, outer = d->probe_outer_mt / 1000.0;
  double sum_calls[NF] = {0}, r_ex[NF] = {0}, r_in[NF] = {0}, c_ex[NF] = {0},
         c_in[NF] = {0};
  for (uint32_t ti = 0; ti < d->nthreads; ti++) {
    const struct cpd_thread *t = &d->threads[ti];
    uint32_t n = t->node_count;
    double *sub = calloc(n, sizeof *sub), *cin = calloc(n, sizeof *cin),
           *kin_raw = calloc(n, sizeof *kin_raw), *kin_comp = calloc(n, sizeof *kin_comp);
    /* Calls below each node; parent indices are smaller than their children's. */
    for (uint32_t i = n; i-- > 1;) {
      const struct cpd_node *nd = &t->nodes[i];
      sub[nd->parent] += (double)nd->calls + sub[i];
    }
    for (uint32_t i = 1; i < n; i++) {
      const struct cpd_node *nd = &t->nodes[i];
      double c = (double)nd->incl - nd->calls * inner - sub[i] * outer;
      cin[i] = c > 0 ? c : 0;
    }
    for (uint32_t i = n; i-- > 1;) {
      kin_raw[t->nodes[i].parent] += (double)t->nodes[i].incl;
      kin_comp[t->nodes[i].parent] += cin[i];
    }
    for (uint32_t i = 1; i < n; i++) {
      const struct cpd_node *nd = &t->nodes[i];
      for (int f = 0; f < NF; f++) {
        /* The function's address, or (GCC's __fentry__) the return
        ** address of the hook call at its start. */
        uint64_t fn = (uint64_t)(uintptr_t)cap_fn[f];
        if (nd->key < fn || nd->key >= fn + 16) continue;
        sum_calls[f] += (double)nd->calls;
        r_in[f] += (double)nd->incl;
        r_ex[f] += (double)nd->incl - kin_raw[i];
        c_in[f] += cin[i];
        c_ex[f] += cin[i] - kin_comp[i];
      }
    }
    free(sub); free(cin); free(kin_raw); free(kin_comp);
  }
  for (int f = 0; f < NF; f++) {
    double k = sum_calls[f] ? 1.0 / sum_calls[f] : 0;
    raw[f] = (struct meas){ cpd_ticks_to_ns(d, r_ex[f] * k), cpd_ticks_to_ns(d, r_in[f] * k) };
    comp[f] = (struct meas){ cpd_ticks_to_ns(d, c_ex[f] * k), cpd_ticks_to_ns(d, c_in[f] * k) };
  }
  cpd_free(d);
  return 0;
}

/* Calls of each function per call of root (truth_tree.c). */
static double calls_per_root(int f)
{
  const double heavy = TT_HEAVY_PER_ROOT, mid = heavy * TT_MID_PER_HEAVY,
               small = mid * TT_SMALL_PER_MID;
  switch (f) {
  case F_NANO: return small * TT_NANO_PER_SMALL;
  case F_TINY: return small * TT_TINY_PER_SMALL + heavy * TT_TINY_PER_HEAVY + TT_FANOUT;
  case F_SMALL: return small;
  case F_MID: return mid;
  case F_HEAVY: return heavy;
  default: return 1;                     /* fan, root */
  }
}

/* Calls root() for SECONDS of this thread's CPU time; how many calls, and
** the CPU time they took in *ns. */
static uint64_t run_roots(void (*root)(void), double seconds, double *ns)
{
  uint64_t t0 = clock_ns(CLOCK_THREAD_CPUTIME_ID), want = (uint64_t)(seconds * 1e9), roots = 0;
  while (clock_ns(CLOCK_THREAD_CPUTIME_ID) - t0 < want)
    for (int i = 0; i < 100; i++, roots++) root();
  *ns = (double)(clock_ns(CLOCK_THREAD_CPUTIME_ID) - t0);
  return roots;
}

static int plain_run(double seconds)
{
  double ns;
  uint64_t roots = run_roots(plain_root, seconds, &ns);
  printf("plain root_cpu_ns=%.1f\n", ns / (double)roots);
  return 0;
}

static int sampled_run(double seconds, const char *path)
{
  double ns;
  uint64_t roots = run_roots(cap_root, seconds, &ns);
  int rc = capprof_dump(path, NULL, 0);
  if (rc != 0) {
    fprintf(stderr, "bench_truth: dump: %s\n", capprof_strerror(rc));
    return 1;
  }
  for (int f = NF; f-- > 0;)
    printf("sampled fn=%s calls=%.0f\n", fname[f], calls_per_root(f) * (double)roots);
  return 0;
}

static double pct(double got, double want) { return 100.0 * (got - want) / want; }

int main(int argc, char **argv)
{
  int sampled = argc > 1 && strcmp(argv[1], "--sampled") == 0;
  if (sampled || (argc > 1 && strcmp(argv[1], "--plain") == 0)) {
    if (argc != (sampled ? 4 : 3) || !(atof(argv[2]) > 0)) {
      fprintf(stderr, "usage: bench_truth --sampled SECONDS DUMP-PATH | --plain SECONDS\n");
      return 2;
    }
    return sampled ? sampled_run(atof(argv[2]), argv[3]) : plain_run(atof(argv[2]));
  }
  int reps = argc > 1 ? atoi(argv[1]) : 30;
  char path[512];
  if (argc > 2) snprintf(path, sizeof path, "%s", argv[2]);
  else snprintf(path, sizeof path, "/tmp/bench_truth.%d.capprof", (int)getpid());

  char best_path[600];
  snprintf(best_path, sizeof best_path, "%s.best", path);
  remove(best_path);
  double best_root = 1e300;
  struct meas truth[NF], raw[NF], comp[NF], r1[NF], c1[NF];
  double calib[3] = {0};
  for (int f = 0; f < NF; f++) {
    truth[f] = (struct meas){ 1e300, 1e300 };
    raw[f] = comp[f] = truth[f];
  }
  for (int r = 0; r < reps; r++) {
    for (int f = 0; f < NF; f++) {          /* truth, this repetition */
      plain_leaf = 0;
      double in = plain_time(f);
      plain_leaf = 1;
      double ex = plain_time(f);
      plain_leaf = 0;
      if (in < truth[f].incl) truth[f].incl = in;
      if (ex < truth[f].excl) truth[f].excl = ex;
    }
    capprof_reset();                        /* instrumented, this repetition */
    uint64_t t0 = mono_ns();
    while (mono_ns() - t0 < 1000000u) cap_root();   /* ~1 ms: see plain_time */
    remove(path);
    int rc = capprof_dump(path, NULL, 0);
    if (rc != 0) {
      fprintf(stderr, "bench_truth: dump: %s\n", capprof_strerror(rc));
      return 1;
    }
    if (read_dump(path, r1, c1, calib) != 0) return 1;
    if (r1[F_ROOT].incl < best_root) {     /* keep the least disturbed dump */
      best_root = r1[F_ROOT].incl;
      remove(best_path);
      if (rename(path, best_path) != 0) remove(path);
    } else {
      remove(path);
    }
    for (int f = 0; f < NF; f++) {
      if (r1[f].excl < raw[f].excl) raw[f].excl = r1[f].excl;
      if (r1[f].incl < raw[f].incl) raw[f].incl = r1[f].incl;
      if (c1[f].excl < comp[f].excl) comp[f].excl = c1[f].excl;
      if (c1[f].incl < comp[f].incl) comp[f].incl = c1[f].incl;
    }
  }
  printf("calib timer_ns=%.2f inner_ns=%.2f outer_ns=%.2f\n", calib[0], calib[1], calib[2]);
  for (int f = NF; f-- > 0;) {
    printf("truth fn=%s truth_excl=%.1f comp_excl=%.1f comp_excl_err=%.1f "
           "raw_excl=%.1f raw_excl_err=%.1f truth_incl=%.1f comp_incl=%.1f "
           "comp_incl_err=%.1f raw_incl=%.1f raw_incl_err=%.1f\n",
           fname[f], truth[f].excl, comp[f].excl, pct(comp[f].excl, truth[f].excl),
           raw[f].excl, pct(raw[f].excl, truth[f].excl), truth[f].incl, comp[f].incl,
           pct(comp[f].incl, truth[f].incl), raw[f].incl, pct(raw[f].incl, truth[f].incl));
  }
  return 0;
}
