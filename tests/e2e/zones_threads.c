/* zones_threads.c -- e2e: no hooks. Zones in several threads: one tree per
** thread, names shared, a zone still open when its thread exits. */
#include <pthread.h>
#include <stdio.h>
#include <capprof/capprof.h>
#include "e2e.h"

NOINLINE void *worker(void *arg)
{
  long id = (long)arg;
  char name[16];
  snprintf(name, sizeof name, "w%ld", id);
  capprof_set_thread_name(name);
  for (long i = 0; i < (id + 1) * 10; i++) {
    CAPPROF_ZONE("task");
    char kind[16];
    snprintf(kind, sizeof kind, "kind-%ld", i % 2);
    CAPPROF_ZONE_BEGIN(kind);
    SINK(i);
    CAPPROF_ZONE_END();
  }
  if (id == 3) {
    CAPPROF_ZONE_BEGIN("abandoned");
    pthread_exit(NULL);
  }
  return NULL;
}

int main(void)
{
  MAP(main); MAP_DONE();
  pthread_t th[4];
  for (long i = 0; i < 4; i++) pthread_create(&th[i], NULL, worker, (void *)i);
  for (int i = 0; i < 4; i++) pthread_join(th[i], NULL);
  capprof_set_thread_name("main");
  CAPPROF_ZONE_BEGIN("joined");
  CAPPROF_ZONE_END();
  return 0;
}
