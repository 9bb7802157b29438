/* threads.c -- one tree per thread, named threads, trees of ended threads kept. */
#include <pthread.h>
#include <stdio.h>
#include <capprof/capprof.h>
#include "e2e.h"

NOINLINE void work(int x) { SINK(x); }
NOINLINE void *worker(void *arg)
{
  long id = (long)arg;
  char name[16];
  snprintf(name, sizeof name, "w%ld", id);
  capprof_set_thread_name(name);
  for (long i = 0; i < (id + 1) * 1000; i++) work((int)i);
  return NULL;
}

int main(void)
{
  MAP(main); MAP(work); MAP(worker); MAP_DONE();
  capprof_set_thread_name("main");
  pthread_t th[4];
  for (long i = 0; i < 4; i++) pthread_create(&th[i], NULL, worker, (void *)i);
  for (int i = 0; i < 4; i++) pthread_join(th[i], NULL);
  work(0);
  return 0;
}
