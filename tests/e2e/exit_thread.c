/* exit_thread.c -- exit() from a worker thread deep in calls: the dump is complete. */
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>
#include <capprof/capprof.h>
#include "e2e.h"

NOINLINE void work(int x) { SINK(x); }
NOINLINE void quit(void) { exit(0); }
static volatile int main_waiting;
NOINLINE void inner(void)
{
  for (int i = 0; i < 10; i++) work(i);
  while (!main_waiting) usleep(1000);      /* main is inside wait_forever */
  quit();
}
NOINLINE void *worker(void *arg) { (void)arg; capprof_set_thread_name("worker"); inner(); return NULL; }
NOINLINE void wait_forever(void) { main_waiting = 1; for (;;) pause(); }

int main(void)
{
  MAP(main); MAP(work); MAP(quit); MAP(inner); MAP(worker); MAP(wait_forever); MAP_DONE();
  capprof_set_thread_name("main");
  work(1);
  pthread_t th;
  pthread_create(&th, NULL, worker, NULL);
  wait_forever();
}
