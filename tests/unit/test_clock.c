/*
** test_clock.c -- clock choice and calibration: the TSC decision agrees with
** what the kernel reports, the timer and probe overheads were measured at
** start-up and are plausible, and ticks convert to ns as the OS clock runs.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "internal.h"

static int cpuinfo_has(const char *flag)
{
  FILE *f = fopen("/proc/cpuinfo", "r");
  char line[8192];
  int found = 0;
  while (f && !found && fgets(line, sizeof line, f)) {
    if (strncmp(line, "flags", 5)) continue;
    for (char *p = strtok(line, " \t\n"); p; p = strtok(NULL, " \t\n"))
      if (!strcmp(p, flag)) found = 1;
  }
  if (f) fclose(f);
  return found;
}

static void test_tsc_decision_matches_kernel(void **state)
{
  (void)state;
  /* Linux derives "nonstop_tsc" and "constant_tsc" from the invariant bit. */
  int kernel = cpuinfo_has("constant_tsc") && cpuinfo_has("nonstop_tsc");
  assert_int_equal(clock_tsc_usable(), kernel);
  if (!capprof_is_active()) skip();
  assert_int_equal(cp_g.use_tsc != CP_CLOCK_OS, kernel);
  assert_int_equal(cp_g.clock_source, kernel ? CPD_CLOCK_TSC : CPD_CLOCK_MONOTONIC);
}

/* CAPPROF_CLOCK's names: rdtscp at both ends by default (a caller's stalls
** stay its own), the other read orders on request, the OS clock always. */
static void test_clock_names(void **state)
{
  (void)state;
  assert_int_equal(clock_select("os"), CP_CLOCK_OS);
  if (!clock_tsc_usable()) {
    assert_int_equal(clock_select(NULL), CP_CLOCK_OS);
    return;
  }
  assert_int_equal(clock_select("tsc-fast"), CP_CLOCK_TSC_FAST);
  int ordered = cpuinfo_has("rdtscp") ? CP_CLOCK_TSC_ORDERED : CP_CLOCK_TSC_FAST;
  assert_int_equal(clock_select(NULL), ordered);
  assert_int_equal(clock_select("tsc"), ordered);
  assert_int_equal(clock_select("tsc-ordered"), ordered);
  assert_int_equal(clock_select("tsc-mixed"), cpuinfo_has("rdtscp") ? CP_CLOCK_TSC : CP_CLOCK_TSC_FAST);
  if (capprof_is_active() && !getenv("CAPPROF_CLOCK")) assert_int_equal(cp_g.use_tsc, ordered);
}

static void test_timer_overhead_plausible(void **state)
{
  (void)state;
  assert_true(capprof_is_active());
  uint64_t ticks, ns;
  clock_span(&ticks, &ns);
  double per_ns = (double)ticks / (double)ns;
  double timer_ns = (double)cp_g.timer_overhead / per_ns;
  assert_true(timer_ns < 1000.0);            /* a timer read is far below 1 us */
  /* probe: an instrumented call costs at least one timer read, and well under 10 us */
  for (int k = 0; k < CP_PROBE_KINDS; k++) {   /* each kind of hook */
    const struct cp_probe_cost *pc = &cp_g.probe[k];
    double outer_ns = (double)pc->outer_mt / 1000.0 / per_ns;
    double inner_ns = (double)pc->inner_mt / 1000.0 / per_ns;
    assert_true(outer_ns > 0.0 && outer_ns < 10000.0);
    assert_true(inner_ns > 0.0 && inner_ns <= outer_ns * 2);
    /* one calibration's pair, each round's outer over its inner (a round
    ** lasts longer than its calls' own times): a caller pays something */
    assert_true(pc->inner_mt < pc->outer_mt);
    /* throttled calls: an untimed one costs its caller less than a timed
    ** one; a sampled one is timed */
    assert_true(pc->untimed_mt > 0 && pc->untimed_mt < pc->outer_mt);
    assert_true(pc->sinner_mt > 0 && pc->souter_mt > pc->untimed_mt);
  }
}

static uint64_t mono_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Over a separate 50 ms interval, ticks converted with the runtime's ratio
** agree with CLOCK_MONOTONIC to 0.5%. */
static void test_ticks_to_ns_ratio(void **state)
{
  (void)state;
  uint64_t ticks, ns;
  clock_span(&ticks, &ns);
  uint64_t t0 = cp_now(), m0 = mono_ns();
  while (mono_ns() - m0 < 50000000u) {}
  uint64_t t1 = cp_now(), m1 = mono_ns();
  double measured = (double)(t1 - t0) * (double)ns / (double)ticks;
  double truth = (double)(m1 - m0);
  assert_true(measured > truth * 0.995 && measured < truth * 1.005);
}

static void test_clock_monotonic_in_thread(void **state)
{
  (void)state;
  uint64_t prev = cp_now();
  for (int i = 0; i < 100000; i++) {
    uint64_t now = cp_now();
    assert_true(now >= prev);
    prev = now;
  }
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_tsc_decision_matches_kernel),
    cmocka_unit_test(test_clock_names),
    cmocka_unit_test(test_timer_overhead_plausible),
    cmocka_unit_test(test_ticks_to_ns_ratio),
    cmocka_unit_test(test_clock_monotonic_in_thread),
  };
  return cmocka_run_group_tests_name("clock", tests, NULL, NULL);
}
