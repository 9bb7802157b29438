/* existing.c -- threads that were already running when sampling started:
** two threads spin; then main creates and starts a profile object over the
** executable, sleeps (so that its own samples are none), stops it, and
** checks that the spinners' samples were counted. Exits 1 if not. */
#include <pthread.h>
#include <stdio.h>
#include <time.h>

#include <capprof/capprof.h>

static volatile int stop;
volatile unsigned long sink;

__attribute__((noinline)) static void *spin(void *arg)
{
  (void)arg;
  unsigned long s = 0;
  while (!stop) s += s ^ (s >> 3);
  sink += s;
  return NULL;
}

int main(void)
{
  pthread_t t[2];
  for (int i = 0; i < 2; i++) pthread_create(&t[i], NULL, spin, NULL);
  struct timespec ts = { 0, 50 * 1000000L };
  nanosleep(&ts, NULL);                         /* they run before sampling starts */
  struct capprof_profile_desc d = { 0 };
  d.range = CAPPROF_RANGE_MODULE;
  d.interval = "200us";
  capprof_profile *p;
  if (capprof_profile_create(&d, &p) != 0 || capprof_profile_start(p) != 0) return 1;
  ts.tv_nsec = 300 * 1000000L;
  nanosleep(&ts, NULL);
  capprof_profile_stop(p);
  stop = 1;
  for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
  struct capprof_profile_info info;
  capprof_profile_query(p, &info);
  printf("samples %llu, in the executable %llu (%s)\n", (unsigned long long)info.samples,
         (unsigned long long)info.hits, info.method);
  return info.hits >= 100 ? 0 : 1;
}
