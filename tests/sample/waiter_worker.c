/* waiter_worker.c -- built with hooks: main -> waiter sleeps 200 ms,
** main -> worker spins 200 ms of CPU time. Both take ~200 ms elapsed; under
** CAPPROF_SAMPLE the worker's path gets ~200 ms of CPU time and the
** waiter's almost none. */
#include <stdio.h>
#include <time.h>

static double cpu_ms(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

volatile unsigned long sink;

/* The CPU clock is read every ~1 ms only: reading it is a system call,
** and samples count user time. */
__attribute__((noinline)) void worker(void)
{
  double end = cpu_ms() + 200;
  while (cpu_ms() < end)
    for (int i = 0; i < 1000000; i++) sink += (unsigned long)i;
}

__attribute__((noinline)) void waiter(void)
{
  struct timespec ts = { 0, 200 * 1000000L };
  while (nanosleep(&ts, &ts) != 0) {}
}

int main(void)
{
  waiter();
  worker();
  printf("%lu\n", sink);
  return 0;
}
