/*
** test_runs.c -- statistics across runs on dumps whose values are known:
** per-run totals, mean, sample standard deviation, min, max and runs
** present; the run-to-run significance test; and the zone mismatch tally
** over runs. The dumps are made in memory (1 tick = 1 ns, no probe cost).
*/
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "model/cpd_writer.h"
#include "model/mismatches.h"
#include "model/profile.h"
#include "model/run_stats.h"

/* One run: zone "work" called twice for work_ns in all, and zone "rare"
** (inside work) for rare_ns when rare_ns > 0; one zone issue record. */
static struct cpd_dump *make_run(uint64_t work_ns, uint64_t rare_ns, uint64_t left_open)
{
  static char *strings[] = { "work", "rare" };
  struct cpd_node nodes[3] = {
    { CPD_KEY_ROOT, CPD_NO_PARENT, 0, 0, 0, 0, 0 },
    { CPD_KEY_ZONE | 0, 0, 0, 2, work_ns, work_ns / 2, work_ns / 2 },
    { CPD_KEY_ZONE | 1, 1, 0, 1, rare_ns, rare_ns, rare_ns },
  };
  struct cpd_thread t = { .tid = 1, .name = "main", .node_count = rare_ns ? 3 : 2,
                          .nodes = nodes };
  struct cpd_zone_issue zi = { 0, 0, { 0 } };
  zi.n[CPD_ZI_LEFT_OPEN] = left_open;
  struct cpd_dump d = { 0 };
  d.exe = "synthetic";
  d.cmdline = "";
  d.calib_ticks = d.calib_ns = 1000;
  d.nthreads = 1;
  d.threads = &t;
  d.nstrings = 2;
  d.strings = strings;
  d.nzone_issues = left_open ? 1 : 0;
  d.zone_issues = &zi;
  unsigned char *buf;
  size_t len;
  struct cpd_dump *out;
  char err[128];
  assert_int_equal(cpd_serialize(&d, &buf, &len), 0);
  if (cpd_parse(buf, len, &out, err, sizeof err)) fail_msg("%s", err);
  free(buf);
  return out;
}

static const uint64_t work[5] = { 1000, 2000, 3000, 4000, 5000 };
static const uint64_t rare[5] = { 0, 600, 0, 600, 0 };

static struct profile *five_runs(void)
{
  struct profile *p = prof_new();
  assert_non_null(p);
  for (int r = 0; r < 5; r++) assert_int_equal(prof_add_dump(p, make_run(work[r], rare[r], r == 1 || r == 4)), 0);
  return p;
}

static void test_per_run_values(void **state)
{
  (void)state;
  struct profile *p = five_runs();
  struct run_table rt;
  assert_int_equal(runs_build(p, 0, &rt), 0);
  assert_int_equal(rt.nruns, 5);
  uint32_t w = prof_find_func(p, "work"), q = prof_find_func(p, "rare");
  assert_int_not_equal(w, PROF_NONE);
  assert_int_not_equal(q, PROF_NONE);
  for (int r = 0; r < 5; r++) {
    assert_true(runs_row(&rt, rt.total, w)[r] == (double)work[r]);
    assert_true(runs_row(&rt, rt.self, w)[r] == (double)(work[r] - rare[r]));
    assert_true(runs_row(&rt, rt.calls, w)[r] == 2);
    assert_true(runs_row(&rt, rt.total, q)[r] == (double)rare[r]);
  }
  assert_int_equal(rt.present[w], 5);
  assert_int_equal(rt.present[q], 2);

  struct run_stat s;
  runs_stat(runs_row(&rt, rt.total, w), rt.nruns, &s);
  assert_true(s.mean == 3000);
  assert_true(fabs(s.sd - 1581.1388300841897) < 1e-6);   /* sqrt(2.5e6) */
  assert_true(s.min == 1000 && s.max == 5000);
  runs_stat(runs_row(&rt, rt.total, q), rt.nruns, &s);
  assert_true(s.mean == 240);                              /* absent runs count 0 */
  assert_true(fabs(s.sd - sqrt(108000.0)) < 1e-6);          /* (2*360^2+3*240^2)/4 */
  assert_true(s.min == 0 && s.max == 600);
  runs_stat(runs_row(&rt, rt.calls, w), rt.nruns, &s);
  assert_true(s.mean == 2 && s.sd == 0);
  runs_free(&rt);
  prof_free(p);
}

static void test_stat_edges(void **state)
{
  (void)state;
  struct run_stat s;
  double one = 7;
  runs_stat(&one, 1, &s);
  assert_true(s.mean == 7 && s.sd == 0 && s.min == 7 && s.max == 7);
  runs_stat(&one, 0, &s);
  assert_true(s.mean == 0 && s.sd == 0);
}

static void test_significance(void **state)
{
  (void)state;
  double a[5] = { 100, 110, 90, 105, 95 };
  double b[5] = { 200, 210, 190, 205, 195 };     /* +100, spread ~8 */
  double c[5] = { 101, 112, 89, 104, 99 };       /* +1: noise */
  struct run_stat sa, sb, sc;
  double t;
  runs_stat(a, 5, &sa);
  runs_stat(b, 5, &sb);
  runs_stat(c, 5, &sc);
  assert_int_equal(runs_significant(&sa, 5, &sb, 5, &t), 1);
  assert_true(t > 10);
  assert_int_equal(runs_significant(&sa, 5, &sc, 5, &t), 0);
  assert_true(fabs(t) < 1);
  assert_int_equal(runs_significant(&sa, 1, &sb, 5, &t), -1);  /* one run: no spread */
  /* Two runs each: t = 1/sqrt(2), well inside the 4.303 that df 2 needs. */
  double d[2] = { 0, 2 }, e[2] = { 1, 3 };
  struct run_stat sd, se;
  runs_stat(d, 2, &sd);
  runs_stat(e, 2, &se);
  assert_int_equal(runs_significant(&sd, 2, &se, 2, &t), 0);
  assert_true(fabs(t - 1 / sqrt(2.0 / 2 + 2.0 / 2) * 1) < 1e-9);
}

static void test_zone_tally(void **state)
{
  (void)state;
  struct profile *p = five_runs();
  struct cpd_dump *d[5];
  for (int r = 0; r < 5; r++) d[r] = p->dumps[r].d;
  struct zone_tally *z;
  int n = zone_tally(d, 5, &z);
  assert_int_equal(n, 1);
  assert_string_equal(z[0].name, "work");
  assert_int_equal(z[0].n[CPD_ZI_LEFT_OPEN], 2);
  assert_int_equal(z[0].runs, 2);
  free(z);
  prof_free(p);
}

/* --write DIR: the five runs as files a.1..a.5.capprof, and five slower
** runs b.1..b.5.capprof (work 10 us more per run), for runs_cli.sh. */
static int write_runs(const char *dir)
{
  for (int set = 0; set < 2; set++)
    for (int r = 0; r < 5; r++) {
      char path[512], err[128];
      snprintf(path, sizeof path, "%s/%c.%d.capprof", dir, set ? 'b' : 'a', r + 1);
      struct cpd_dump *d = make_run(work[r] + (set ? 10000 : 0), set ? 0 : rare[r], r == 1 || r == 4);
      int rc = cpd_write(d, path, err, sizeof err);
      cpd_free(d);
      if (rc) { fprintf(stderr, "%s: %s\n", path, err); return 1; }
    }
  return 0;
}

int main(int argc, char **argv)
{
  if (argc == 3 && !strcmp(argv[1], "--write")) return write_runs(argv[2]);
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_per_run_values),
    cmocka_unit_test(test_stat_edges),
    cmocka_unit_test(test_significance),
    cmocka_unit_test(test_zone_tally),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
