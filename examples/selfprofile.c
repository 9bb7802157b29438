/*
** selfprofile.c -- a program that profiles one of its own algorithms, as
** NT's profile objects allow (seed 004, "A Demonstration of Self-Profiling"):
** a profile object over the address range of the algorithm's code only,
** 32-byte buckets, sampled every 200 us of CPU time; started and stopped
** around the runs it cares about, its interval changed half-way; then the
** program prints its own histogram. No compiler hooks are needed.
**
** The algorithm's functions are placed in their own section, algo_text;
** the linker provides __start_algo_text and __stop_algo_text, the range.
**
** Build: cc -O2 -g selfprofile.c -lcapprof -lpthread (CMake target
** 'selfprofile'). Run: ./selfprofile, or ./selfprofile --check (exits 1 if
** a property below does not hold; the test sample.selfprofile runs it).
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <capprof/capprof.h>

#define ALGO __attribute__((section("algo_text"), noinline))

extern const char __start_algo_text[], __stop_algo_text[];

/* ---- the algorithm: an insertion sort, deliberately quadratic ------------ */

ALGO static int less(unsigned a, unsigned b) { return a < b; }

ALGO static void insert(unsigned *v, size_t i)
{
  unsigned x = v[i];
  size_t j = i;
  for (; j > 0 && less(x, v[j - 1]); j--) v[j] = v[j - 1];
  v[j] = x;
}

ALGO static void algo_sort(unsigned *v, size_t n)
{
  for (size_t i = 1; i < n; i++) insert(v, i);
}

/* ---- everything else: outside the profiled range ------------------------- */

static volatile unsigned long sink;

static void other_work(unsigned long n)
{
  for (unsigned long i = 0; i < n; i++) sink += i ^ (sink >> 3);
}

static void fill(unsigned *v, size_t n, unsigned seed)
{
  for (size_t i = 0; i < n; i++) v[i] = seed = seed * 1103515245u + 12345u;
}

static double cpu_ms(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Sort a few arrays and do as much work outside the algorithm. */
static void run(unsigned *v, size_t n, int rounds)
{
  for (int r = 0; r < rounds; r++) {
    fill(v, n, (unsigned)r);
    algo_sort(v, n);
    other_work(4000000);
  }
}

static const struct { const char *name; const void *addr; } funcs[] = {
  { "less", (const void *)less },
  { "insert", (const void *)insert },
  { "algo_sort", (const void *)algo_sort },
};

/* The algorithm's function holding addr, by start address. */
static const char *func_name(uintptr_t addr, uintptr_t *start)
{
  const char *best = "?";
  *start = 0;
  for (size_t i = 0; i < sizeof funcs / sizeof funcs[0]; i++) {
    uintptr_t a = (uintptr_t)funcs[i].addr;
    if (a <= addr && a >= *start) { *start = a; best = funcs[i].name; }
  }
  return best;
}

static int failed;

static void expect(int ok, const char *what)
{
  if (!ok) {
    printf("CHECK FAILED: %s\n", what);
    failed = 1;
  }
}

int main(int argc, char **argv)
{
  int check = argc > 1 && !strcmp(argv[1], "--check");
  size_t n = 3000;
  unsigned *v = malloc(n * sizeof *v);
  if (!v) return 1;

  struct capprof_profile_desc desc;
  memset(&desc, 0, sizeof desc);
  desc.range = CAPPROF_RANGE_ADDRESS;
  desc.base = __start_algo_text;
  desc.size = (size_t)(__stop_algo_text - __start_algo_text);
  desc.bucket_size = 32;
  desc.source = "time";
  desc.interval = "200us";
  desc.name = "insertion sort";
  capprof_profile *p;
  int rc = capprof_profile_create(&desc, &p);
  if (rc) {
    char avail[256], why[256];
    capprof_sample_sources(avail, sizeof avail, why, sizeof why);
    printf("capprof_profile_create: %s (sources here: %s)\n", capprof_strerror(rc), avail);
    return 1;
  }

  /* First period: 200 us. */
  capprof_profile_start(p);
  double t0 = cpu_ms();
  run(v, n, 6);
  double cpu1 = cpu_ms() - t0;
  capprof_profile_stop(p);
  struct capprof_profile_info a, b, c;
  capprof_profile_query(p, &a);

  /* Stopped: nothing is counted. */
  run(v, n, 3);
  capprof_profile_query(p, &b);
  expect(b.samples == a.samples && b.hits == a.hits, "counts changed while stopped");

  /* Second period, the interval halved: twice the samples per CPU ms. */
  capprof_profile_set_interval(p, "100us");
  capprof_profile_start(p);
  t0 = cpu_ms();
  run(v, n, 6);
  double cpu2 = cpu_ms() - t0;
  capprof_profile_stop(p);
  capprof_profile_query(p, &c);

  size_t nb;
  capprof_profile_buckets(p, NULL, 0, &nb);
  uint32_t *counts = calloc(nb, sizeof *counts);
  if (!counts) return 1;
  capprof_profile_buckets(p, counts, nb, &nb);
  uint64_t sum = 0, peak = 0;
  for (size_t i = 0; i < nb; i++) {
    sum += counts[i];
    if (counts[i] > peak) peak = counts[i];
  }

  printf("profile \"insertion sort\": %#lx-%#lx, %zu buckets of %zu bytes, source %s (%s)\n",
         (unsigned long)c.base, (unsigned long)c.end, c.buckets, c.bucket_size, c.source,
         c.method);
  printf("samples %llu while running, %llu in the range (the rest ran outside the algorithm)\n",
         (unsigned long long)c.samples, (unsigned long long)c.hits);
  printf("   bucket  samples      %%  function+offset\n");
  for (size_t i = 0; i < nb; i++) {
    if (!counts[i]) continue;
    uintptr_t addr = c.base + i * c.bucket_size, start;
    const char *name = func_name(addr, &start);
    char bar[41];
    size_t len = (size_t)(40.0 * counts[i] / (double)peak + 0.5);
    memset(bar, '#', len);
    bar[len] = '\0';
    printf("%#9lx %8u %5.1f%%  %s+%#lx  %s\n", (unsigned long)addr, counts[i],
           100.0 * counts[i] / (double)sum, name, (unsigned long)(addr - start), bar);
  }

  double rate1 = (double)a.samples / cpu1, rate2 = (double)(c.samples - b.samples) / cpu2;
  printf("samples per CPU ms: %.2f at 200 us, %.2f at 100 us\n", rate1, rate2);
  if (check) {
    expect(c.hits > 50, "too few samples in the range");
    expect(sum == c.hits, "the buckets do not add up to the samples in the range");
    expect(c.samples > c.hits, "no sample fell outside the range: is the range the whole program?");
    expect(b.samples > 0 && c.samples > b.samples, "the second start took no samples");
    expect(rate2 > 1.4 * rate1 && rate2 < 2.8 * rate1, "halving the interval did not double the rate");
    printf(failed ? "selfprofile: FAILED\n" : "selfprofile: all checks passed\n");
  }
  capprof_profile_close(p);
  free(counts);
  free(v);
  return failed;
}
