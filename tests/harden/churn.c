/* churn.c -- thread churn: starts N short-lived threads (C at a time), each
** making a few instrumented calls, then checks that the program can still
** create threads, map and allocate memory. Prints the memory mappings added
** per ended thread and the churn time. Built with and without capprof (the
** bench compares both); the names it writes to $E2E_MAP serve e2e_check.
**   churn N [C]       exit 0 when every check passes */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#define NOINLINE __attribute__((noinline))
#define SINK(x) __asm__ __volatile__("" : : "r"(x) : "memory")

NOINLINE void work(long x) { SINK(x); }
NOINLINE void *thread_main(void *arg)
{
  long i = (long)arg;
  /* Two names: ended threads past the kept number merge by name. */
  if (i >= 0) pthread_setname_np(pthread_self(), i % 2 ? "churn-odd" : "churn-even");
  for (int k = 0; k < 3; k++) work(i + k);
  return NULL;
}

static long maps(void)
{
  FILE *f = fopen("/proc/self/maps", "r");
  long n = 0;
  int c;
  if (!f) return -1;
  while ((c = getc(f)) != EOF) n += c == '\n';
  fclose(f);
  return n;
}

static double now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
  long n = argc > 1 ? atol(argv[1]) : 200000, conc = argc > 2 ? atol(argv[2]) : 4;
  FILE *map = fopen(getenv("E2E_MAP") ? getenv("E2E_MAP") : "/dev/null", "w");
  if (map) {
    fprintf(map, "main %p\nwork %p\nthread_main %p\n", (void *)main, (void *)work,
            (void *)thread_main);
    fclose(map);
  }
  pthread_t th[64];
  if (conc < 1 || conc > 64) conc = 4;
  /* Warm up, so that one-time mappings (thread stacks cached by libc, the
  ** runtime's own) are not counted against ended threads. */
  for (long i = 0; i < 64; i++) {
    if (pthread_create(&th[0], NULL, thread_main, (void *)i) == 0) pthread_join(th[0], NULL);
  }
  long before = maps();
  double t0 = now();
  long failed = 0;
  for (long i = 64; i < n; i += conc) {
    long k = 0;
    for (; k < conc && i + k < n; k++)
      if (pthread_create(&th[k], NULL, thread_main, (void *)(i + k)) != 0) { failed++; break; }
    while (k-- > 0) pthread_join(th[k], NULL);
  }
  double t1 = now();
  long after = maps();
  printf("churn: threads=%ld seconds=%.3f maps_before=%ld maps_after=%ld maps_per_thread=%.5f"
         " create_failed=%ld\n", n, t1 - t0, before, after,
         (double)(after - before) / (double)(n - 64), failed);

  /* Can the program still work? */
  long bad_threads = 0, bad_maps = 0, bad_mallocs = 0;
  for (int i = 0; i < 200; i++) {
    pthread_t t;
    if (pthread_create(&t, NULL, thread_main, (void *)-1L) != 0) bad_threads++;
    else pthread_join(t, NULL);
  }
  static void *m[2000];
  for (int i = 0; i < 2000; i++) {
    m[i] = mmap(NULL, 65536, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m[i] == MAP_FAILED) bad_maps++;
    else ((char *)m[i])[i] = 1;     /* distinct protections would split: keep RW */
  }
  for (int i = 0; i < 2000; i++) if (m[i] != MAP_FAILED) munmap(m[i], 65536);
  for (int i = 0; i < 100; i++) {
    char *p = malloc(1 << 20);
    if (!p) bad_mallocs++;
    else { memset(p, 1, 1 << 20); free(p); }
  }
  printf("after churn: failed pthread_create %ld/200, mmap %ld/2000, malloc(1 MB) %ld/100\n",
         bad_threads, bad_maps, bad_mallocs);
  work(n);
  return failed || bad_threads || bad_maps || bad_mallocs;
}
