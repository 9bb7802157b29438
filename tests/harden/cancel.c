/*
** cancel.c -- threads cancelled right after pthread_create (tests/harden/
** host.sh, issue 33 case 8). Each thread's body makes no cancellation point
** until it is done, so in the plain build it always runs whole: it waits
** (spinning, no system call) until the main thread has cancelled it, then
** makes its first hooked call (the runtime's set-up for a new thread),
** marks itself done, and, in the second kind, does so holding a mutex that
** main takes afterwards (a thread that died holding it would hang main).
*/
#include <pthread.h>
#include <stdio.h>

#define THREADS 20

static volatile unsigned sink;
static volatile int go[THREADS], ran[THREADS];
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;

__attribute__((noinline)) static unsigned work(unsigned x) { return x * 3u + 1u; }

__attribute__((no_instrument_function)) static void *body(void *arg)
{
  int i = (int)(long)arg;
  while (!__atomic_load_n(&go[i], __ATOMIC_ACQUIRE)) {}
  if (i & 1) pthread_mutex_lock(&m);       /* not a cancellation point */
  sink += work((unsigned)i);
  ran[i] = 1;
  if (i & 1) pthread_mutex_unlock(&m);
  return NULL;
}

int main(void)
{
  int n = 0;
  for (int i = 0; i < THREADS; i++) {
    pthread_t th;
    if (pthread_create(&th, NULL, body, (void *)(long)i) != 0) return 2;
    pthread_cancel(th);
    __atomic_store_n(&go[i], 1, __ATOMIC_RELEASE);
    pthread_join(th, NULL);
    pthread_mutex_lock(&m);
    pthread_mutex_unlock(&m);
    n += ran[i];
  }
  printf("ran %d of %d\n", n, THREADS);
  return 0;
}
