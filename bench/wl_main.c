/*
** wl_main.c -- driver of workloads (a)-(d). Each repetition times, on every
** thread, back to back: the plain copy of the kernel, the instrumented copy,
** and the floor, i.e. as many pairs of back-to-back timer reads as the kernel
** makes calls (rdtsc+rdtsc, and rdtsc+rdtscp as the default clock reads
** them), so that each figure spans the same time and sees the same machine
** load. Prints one line of key=value minima (thread CPU ns per repetition,
** mean over threads) for bench/run.sh; the instrumented minimum leaves out
** the first repetition, which builds the call tree (inst_first_ns, shown
** apart). Never instrumented.
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

enum { PLAIN, INST, FLOOR, FLOOR_ORD, NPHASE };
static const char *const phase_name[NPHASE] = { "plain_ns", "inst_ns", "floor_ns",
                                                "floor_ord_ns" };

static uint64_t cpu_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* n pairs of back-to-back timer reads, as the hooks make them. */
__attribute__((noinline)) static uint64_t floor_loop(uint64_t n, int ordered)
{
  uint64_t sum = 0;
  for (uint64_t i = 0; i < n; i++) {
    sum += __rdtsc();
    if (ordered) {
      uint32_t lo, hi;
      __asm__ __volatile__("rdtscp" : "=a"(lo), "=d"(hi) :: "rcx");
      sum += (uint64_t)hi << 32 | lo;
    } else {
      sum += __rdtsc();
    }
  }
  return sum;
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
  char kind;                   /* 'r'ec, 'w'ide, 'd'eep */
  unsigned arg, reps;
  uint64_t calls;
  uint64_t *ns;                /* [rep][phase] thread CPU time */
  pthread_barrier_t *bar;
};

static void run_phase(struct job *j, int phase)
{
  int inst = phase == INST;
  switch (j->kind) {
  case 'd': (inst ? inst_wl_deep : plain_wl_deep)(j->arg); break;
  case 'w': (inst ? inst_wl_wide : plain_wl_wide)(j->arg); break;
  default:  (inst ? inst_wl_rec : plain_wl_rec)(j->arg); break;
  }
}

/* The repetitions run on the same threads: the first instrumented run
** builds the call tree (new nodes), the later ones find it. */
static void *run_job(void *p)
{
  struct job *j = p;
  for (unsigned r = 0; r < j->reps; r++) {
    for (int ph = 0; ph < NPHASE; ph++) {
      pthread_barrier_wait(j->bar);          /* all threads in the same phase */
      uint64_t t0 = cpu_ns();
      if (ph == FLOOR || ph == FLOOR_ORD) {
        uint64_t s = floor_loop(j->calls, ph == FLOOR_ORD);
        __asm__ __volatile__("" :: "r"(s));
      } else {
        run_phase(j, ph);
      }
      j->ns[r * NPHASE + ph] = cpu_ns() - t0;
    }
  }
  return NULL;
}

/* All repetitions on nthreads threads; out[rep][phase] = mean thread time. */
static void run_all(char kind, unsigned arg, uint64_t calls, unsigned nthreads,
                    unsigned reps, size_t stack, double *out)
{
  pthread_t *tid = calloc(nthreads, sizeof *tid);
  struct job *jobs = calloc(nthreads, sizeof *jobs);
  pthread_barrier_t bar;
  pthread_attr_t attr;
  pthread_barrier_init(&bar, NULL, nthreads);
  pthread_attr_init(&attr);
  if (stack) pthread_attr_setstacksize(&attr, stack);
  for (unsigned i = 0; i < nthreads; i++) {
    jobs[i] = (struct job){ .kind = kind, .arg = arg, .reps = reps, .calls = calls,
                            .ns = calloc((size_t)reps * NPHASE, sizeof(uint64_t)),
                            .bar = &bar };
    if (pthread_create(&tid[i], &attr, run_job, &jobs[i]) != 0) {
      perror("wl: pthread_create");
      exit(1);
    }
  }
  for (unsigned k = 0; k < reps * NPHASE; k++) out[k] = 0;
  for (unsigned i = 0; i < nthreads; i++) {
    pthread_join(tid[i], NULL);
    for (unsigned k = 0; k < reps * NPHASE; k++)
      out[k] += (double)jobs[i].ns[k] / nthreads;
    free(jobs[i].ns);
  }
  pthread_barrier_destroy(&bar);
  pthread_attr_destroy(&attr);
  free(tid);
  free(jobs);
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
  uint64_t calls;
  if (!strcmp(kind, "rec")) calls = (UINT64_C(2) << arg) - 1;
  else if (!strcmp(kind, "wide")) calls = 1 + arg + (uint64_t)arg * arg;
  else if (!strcmp(kind, "deep")) { calls = arg + UINT64_C(1); stack = (size_t)1 << 30; }
  else { fprintf(stderr, "wl: unknown workload %s\n", kind); return 2; }

  if (reps < 1) reps = 1;
  double best[NPHASE], *all = calloc((size_t)reps * NPHASE, sizeof(double));
  run_all(kind[0], arg, calls, nthreads, reps, stack, all);
  for (int ph = 0; ph < NPHASE; ph++) {
    best[ph] = 1e300;
    for (unsigned r = reps > 1 && ph == INST ? 1 : 0; r < reps; r++)
      if (all[r * NPHASE + ph] < best[ph]) best[ph] = all[r * NPHASE + ph];
  }
  printf("calls=%llu threads=%u", (unsigned long long)calls, nthreads);
  for (int ph = 0; ph < NPHASE; ph++) printf(" %s=%.0f", phase_name[ph], best[ph]);
  printf(" inst_first_ns=%.0f ov_ns=%.3f ov_first_ns=%.3f floor_pair_ns=%.3f"
         " floor_ord_pair_ns=%.3f rss_kb=%ld\n", all[INST],
         (best[INST] - best[PLAIN]) / (double)calls, (all[INST] - best[PLAIN]) / (double)calls,
         best[FLOOR] / (double)calls, best[FLOOR_ORD] / (double)calls, rss_kb());
  free(all);
  return 0;
}
