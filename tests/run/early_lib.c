/* early_lib.c -- a library whose constructor starts a thread before the
** capprof runtime starts (its constructor runs first): the thread calls
** getpid in a loop while the import slots are patched, then, told by the
** program, getppid exactly 1000 times. */
#include <pthread.h>
#include <unistd.h>

static volatile int go;
static pthread_t spinner;

static void *spin(void *arg)
{
  (void)arg;
  while (!go) getpid();
  for (int i = 0; i < 1000; i++) getppid();
  return NULL;
}

void early_go(void)
{
  go = 1;
  pthread_join(spinner, NULL);
}

__attribute__((constructor)) static void early_start(void)
{
  pthread_create(&spinner, NULL, spin, NULL);
}
