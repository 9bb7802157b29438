/* threads8.c -- no hooks: eight threads, all started after sampling began
** (CAPPROF_SAMPLE starts it before main), each spinning in its own loop. */
#include <pthread.h>
#include <stdio.h>

volatile unsigned long sink;

__attribute__((noinline)) void *spinner(void *arg)
{
  unsigned long n = (unsigned long)arg, s = 0;
  for (unsigned long i = 0; i < n; i++) s += i ^ (i >> 5);
  sink += s;
  return NULL;
}

int main(void)
{
  pthread_t t[8];
  for (int i = 0; i < 8; i++) pthread_create(&t[i], NULL, spinner, (void *)150000000ul);
  for (int i = 0; i < 8; i++) pthread_join(t[i], NULL);
  printf("%lu\n", sink);
  return 0;
}
