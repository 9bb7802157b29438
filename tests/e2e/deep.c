/* deep.c -- recursion one million levels deep, in a thread with a big stack. */
#include <pthread.h>
#include <capprof/capprof.h>
#include "e2e.h"

NOINLINE long down(long n) { if (n == 0) return 0; long r = down(n - 1) + 1; SINK(r); return r; }
NOINLINE void *run(void *arg) { capprof_set_thread_name("deep"); SINK(down((long)arg - 1)); return NULL; }

int main(void)
{
  MAP(main); MAP(down); MAP(run); MAP_DONE();
  pthread_attr_t a;
  pthread_attr_init(&a);
  pthread_attr_setstacksize(&a, (size_t)1 << 30);
  pthread_t th;
  if (pthread_create(&th, &a, run, (void *)1000000L) != 0) return 1;
  pthread_join(th, NULL);
  return 0;
}
