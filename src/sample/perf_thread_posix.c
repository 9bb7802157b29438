/*
** perf_thread.c (POSIX) -- the pthread_create interposer of libcapprof.so:
** once sampling has started, a new thread first opens its sampling events
** (sampler_thread_begin, perf.c), then runs its start routine. Built into the
** shared library only: in a fully static program there is no next
** pthread_create to call, and a hooked thread's first hook does the same.
*/
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "sample.h"

extern volatile int sampler_ever_started CP_HIDDEN;

struct start { void *(*fn)(void *); void *arg; };

static void *start_thread(void *p)
{
  struct start a = *(struct start *)p;
  free(p);
  sampler_thread_begin();
  return a.fn(a.arg);
}

/* Weak, so that a program's own definition wins. */
__attribute__((weak, visibility("default"))) CP_NOINSTR
int pthread_create(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
  static int (*next)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
  if (!next) {
    next = (int (*)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *))
               dlsym(RTLD_NEXT, "pthread_create");
    if (!next) return EAGAIN;
  }
  struct start *a = sampler_ever_started ? malloc(sizeof *a) : NULL;
  if (!a) return next(th, attr, fn, arg);
  a->fn = fn;
  a->arg = arg;
  int rc = next(th, attr, start_thread, a);
  if (rc) free(a);
  return rc;
}
