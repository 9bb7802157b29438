/*
** unhook_reset.c -- an unhooked function's calls counted exactly across
** capprof_reset and in a thread with no state of its own (unhook.c's
** counting stubs; run with CAPPROF_SAMPLE, which unhooks). tiny() is
** unhooked in main's first loop. Then a thread calls it inside one call
** of spanning(), before and after main's capprof_reset, with no hook in
** between: only its calls after the reset count. main calls it after the reset; so does a thread
** whose start routine has no hooks, which never gets a state. Prints how
** many calls of tiny the program made after the reset.
**   unhook_reset [CALLS]    (default 1,000,000)
*/
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

#include <capprof/capprof.h>

static volatile unsigned sink;
static volatile int stage;             /* 1: the thread waits; 2: reset done */

__attribute__((noinline)) static unsigned tiny(unsigned x)
{
  return (x * 2654435761u) ^ (x >> 7);
}

__attribute__((noinline)) static void work(unsigned long n, unsigned seed)
{
  unsigned s = 0;
  for (unsigned long i = 0; i < n; i++) s += tiny(seed + (unsigned)i);
  sink += s;
}

/* One call, across the reset, with no hooked call inside it. */
__attribute__((noinline)) static void spanning(unsigned long before, unsigned long after)
{
  unsigned s = 0;
  for (unsigned long i = 0; i < before; i++) s += tiny((unsigned)i);
  stage = 1;
  while (stage != 2) sched_yield();
  for (unsigned long i = 0; i < after; i++) s += tiny((unsigned)i + 7u);
  sink += s;
}

static unsigned long unit;

static void *spanner(void *arg)
{
  (void)arg;
  spanning(unit, 2 * unit);
  return NULL;
}

__attribute__((no_instrument_function)) static void *bare(void *arg)
{
  (void)arg;
  unsigned s = 0;
  for (unsigned long i = 0; i < 3 * unit; i++) s += tiny((unsigned)i + 11u);
  sink += s;
  return NULL;
}

int main(int argc, char **argv)
{
  unit = argc > 1 ? strtoul(argv[1], NULL, 10) : 1000000;
  work(3 * unit, 1);                   /* tiny is unhooked */
  pthread_t t;
  pthread_create(&t, NULL, spanner, NULL);
  while (stage != 1) sched_yield();
  capprof_reset();
  stage = 2;
  work(unit, 2);
  pthread_join(t, NULL);
  pthread_create(&t, NULL, bare, NULL);
  pthread_join(t, NULL);
  printf("tiny calls %lu\n", 2 * unit + unit + 3 * unit);
  return 0;
}
