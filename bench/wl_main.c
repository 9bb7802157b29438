/*
** wl_main.c -- driver of workloads (a)-(d): runs one kernel several times in
** this process and prints one line of key=value figures for bench/run.sh:
** calls per repetition, the best (minimum) thread-CPU time of a repetition,
** and the floor (two back-to-back timer reads) measured in the same process.
** Never instrumented; only the kernels it calls are.
**
**   wl rec D R        (a) binary recursion of depth D, R repetitions
**   wl wide W R       (b) W + W^2 distinct call paths
**   wl deep N R       (c) recursion N deep, on a 1 GiB thread stack
**   wl threads T D R  (d) T threads each running rec D at once
*/
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#include "wl.h"

static uint64_t cpu_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Cost of two timer reads, the floor of any per-call timing: the best of 20
** runs of 100,000 back-to-back rdtsc, as the runtime reads it. */
static double floor_ns(void)
{
  double best = 1e30;
  for (int r = 0; r < 20; r++) {
    uint64_t sum = 0, t0 = cpu_ns();
    for (int i = 0; i < 100000; i++) sum += __rdtsc();
    uint64_t t1 = cpu_ns();
    __asm__ __volatile__("" :: "r"(sum));
    double per = (double)(t1 - t0) / 100000.0;
    if (per < best) best = per;
  }
  return 2 * best;
}

static long rss_kb(void)
{
  long pages = 0, rss = 0;
  FILE *f = fopen("/proc/self/statm", "r");
  if (f) {
    if (fscanf(f, "%ld %ld", &pages, &rss) != 2) rss = 0;
    fclose(f);
  }
  return rss * (sysconf(_SC_PAGESIZE) / 1024);
}

struct job {
  const char *kind;
  unsigned arg;
  uint64_t ns;                 /* thread CPU time of one run */
  pthread_barrier_t *start;
};

static void *run_job(void *p)
{
  struct job *j = p;
  if (j->start) pthread_barrier_wait(j->start);
  uint64_t t0 = cpu_ns();
  if (!strcmp(j->kind, "deep")) wl_deep(j->arg);
  else if (!strcmp(j->kind, "wide")) wl_wide(j->arg);
  else wl_rec(j->arg);
  j->ns = cpu_ns() - t0;
  return NULL;
}

/* Run kind with arg on nthreads threads at once; the mean thread time. */
static double run_threads(const char *kind, unsigned arg, unsigned nthreads,
                          size_t stack)
{
  pthread_t *tid = calloc(nthreads, sizeof *tid);
  struct job *jobs = calloc(nthreads, sizeof *jobs);
  pthread_barrier_t bar;
  pthread_attr_t attr;
  pthread_barrier_init(&bar, NULL, nthreads);
  pthread_attr_init(&attr);
  if (stack) pthread_attr_setstacksize(&attr, stack);
  for (unsigned i = 0; i < nthreads; i++) {
    jobs[i] = (struct job){ kind, arg, 0, &bar };
    if (pthread_create(&tid[i], &attr, run_job, &jobs[i]) != 0) {
      perror("wl: pthread_create");
      exit(1);
    }
  }
  double sum = 0;
  for (unsigned i = 0; i < nthreads; i++) {
    pthread_join(tid[i], NULL);
    sum += (double)jobs[i].ns;
  }
  pthread_barrier_destroy(&bar);
  pthread_attr_destroy(&attr);
  free(tid);
  free(jobs);
  return sum / nthreads;
}

int main(int argc, char **argv)
{
  if (argc < 4) {
    fprintf(stderr, "usage: wl rec D R | wide W R | deep N R | threads T D R\n");
    return 2;
  }
  const char *kind = argv[1];
  unsigned nthreads = 1, arg, reps;
  size_t stack = 0;
  if (!strcmp(kind, "threads")) {
    if (argc < 5) return 2;
    nthreads = (unsigned)strtoul(argv[2], NULL, 0);
    arg = (unsigned)strtoul(argv[3], NULL, 0);
    reps = (unsigned)strtoul(argv[4], NULL, 0);
    kind = "rec";
  } else {
    arg = (unsigned)strtoul(argv[2], NULL, 0);
    reps = (unsigned)strtoul(argv[3], NULL, 0);
  }
  double calls;
  if (!strcmp(kind, "rec")) calls = (double)((UINT64_C(2) << arg) - 1);
  else if (!strcmp(kind, "wide")) calls = 1.0 + arg + (double)arg * arg;
  else if (!strcmp(kind, "deep")) { calls = arg + 1.0; stack = (size_t)1 << 30; }
  else { fprintf(stderr, "wl: unknown workload %s\n", kind); return 2; }

  double fl = floor_ns();
  double best = 1e300;
  for (unsigned r = 0; r < reps; r++) {
    double ns = run_threads(kind, arg, nthreads, stack);
    if (ns < best) best = ns;
    double f = floor_ns();
    if (f < fl) fl = f;
  }
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  printf("calls=%.0f best_ns=%.0f per_call_ns=%.3f floor_ns=%.3f threads=%u "
         "rss_kb=%ld maxrss_kb=%ld\n", calls, best, best / calls, fl, nthreads,
         rss_kb(), ru.ru_maxrss);
  return 0;
}
