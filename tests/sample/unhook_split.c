/*
** unhook_split.c -- what was unhooked is a fact of the process (issue 36):
** thread A calls f until f is unhooked (CAPPROF_THROTTLE's N calls, then
** ~1,500 more while its return sites are learnt), then thread B starts,
** after a barrier, and spends nearly all its time in f, called from
** b_loop. B's samples in f must go to f (>= 70 % of B's), not to b_loop.
** Prints "ok" and f's calls per thread.
**   unhook_split [B_CALLS]     (default 4,000,000)
*/
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))
static volatile unsigned sink;

/* ~50 ns of work: short, so throttled and unhooked. */
NOINLINE unsigned f(unsigned x)
{
  unsigned s = x;
  for (unsigned k = 0; k < 40; k++) s = s * 2654435761u + k;
  return s;
}

NOINLINE void a_loop(unsigned n)
{
  for (unsigned i = 0; i < n; i++) sink += f(i);
}

NOINLINE void b_loop(unsigned long n)
{
  for (unsigned long i = 0; i < n; i++) sink += f((unsigned)i);
}

static pthread_barrier_t barrier;
static unsigned long b_calls;

static void *thread_a(void *arg)
{
  (void)arg;
  a_loop(60000);
  pthread_barrier_wait(&barrier);          /* f unhooked by now */
  return NULL;
}

static void *thread_b(void *arg)
{
  (void)arg;
  pthread_barrier_wait(&barrier);
  b_loop(b_calls);
  return NULL;
}

int main(int argc, char **argv)
{
  b_calls = argc > 1 ? strtoul(argv[1], NULL, 10) : 4000000ul;
  pthread_t a, b;
  pthread_barrier_init(&barrier, NULL, 2);
  pthread_create(&a, NULL, thread_a, NULL);
  pthread_create(&b, NULL, thread_b, NULL);
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  printf("ok a 60000 b %lu\n", b_calls);
  return 0;
}
