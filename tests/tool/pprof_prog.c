/* pprof_prog.c -- the pprof export's test program: known call counts on
** two threads (worker: 7 x spin under work, 3 x spin direct; main: 4 x spin
** under work, recursion 5 deep) and enough CPU time in spin for a few
** hundred samples. Built with -finstrument-functions by tests/tool/pprof.sh. */
#include <pthread.h>
#include <stdio.h>

static volatile unsigned long sink;

void spin(void)
{
  unsigned long x = sink;
  for (unsigned long i = 0; i < 4000000; i++) {
    x = x * 2654435761u + i;
    __asm__ __volatile__("" : "+r"(x));
  }
  sink = x;
}

void work(int k)
{
  for (int i = 0; i < k; i++) spin();
}

int down(int n)
{
  return n ? down(n - 1) + 1 : 0;
}

static void *worker(void *arg)
{
  (void)arg;
  work(7);
  for (int i = 0; i < 3; i++) spin();
  return NULL;
}

int main(void)
{
  pthread_t t;
  pthread_create(&t, NULL, worker, NULL);
  work(4);
  pthread_join(t, NULL);
  printf("%d\n", down(5));
  return 0;
}
