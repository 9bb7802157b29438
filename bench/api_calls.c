/* api_calls.c -- the workload of bench/run_api.sh: N calls to a cheap libc
** function through the PLT (mode "libc"), or N calls to an empty function of
** api_leaf.c (mode "leaf": built with or without the compiler hooks). Prints
** the loop's own CPU time (the thread's), so start-up, dump writing and
** the other programs of a shared machine are not counted. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void api_leaf(void);

static double now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);   /* not counting preemption */
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
  long n = argc > 2 ? atol(argv[2]) : 3000000;
  int libc = argc > 1 && !strcmp(argv[1], "libc");
  static const char s[] = "capprof";
  size_t sum = 0;
  double t0 = now();
  if (libc)
    for (long i = 0; i < n; i++) sum += strlen(s + (i & 3));   /* -fno-builtin */
  else
    for (long i = 0; i < n; i++) api_leaf();
  double t = now() - t0;
  printf("loop_ns=%.0f calls=%ld sum=%zu\n", t, n, sum);
  return 0;
}
