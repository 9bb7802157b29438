/*
** unhook_threads.c -- an unhooked function's calls counted exactly in
** several threads (unhook.c's counting stubs, counting in each thread's
** state): tiny() is called by two threads that end before the dump (their
** counts are added to the process's when they end), by two that are still
** alive, blocked, when the program exits and the dump is written (their
** counts are read from them), and by main. It is unhooked while the threads
** call it. Prints how many calls of tiny the program made.
**   unhook_threads [CALLS]    (CALLS per unit; default 2,000,000)
*/
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static volatile unsigned sink;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t never = PTHREAD_COND_INITIALIZER;
static int done;                       /* late threads done, under lock */

__attribute__((noinline)) static unsigned tiny(unsigned x)
{
  return (x * 2654435761u) ^ (x >> 7);
}

__attribute__((noinline)) static void work(unsigned long n, unsigned seed)
{
  unsigned s = 0;
  for (unsigned long i = 0; i < n; i++) s += tiny(seed + (unsigned)i);
  sink += s;
}

static void *early(void *arg)
{
  work((unsigned long)arg, 1);
  return NULL;
}

static void *late(void *arg)
{
  work((unsigned long)arg, 2);
  pthread_mutex_lock(&lock);
  done++;
  pthread_cond_broadcast(&never);
  for (;;) pthread_cond_wait(&never, &lock);   /* alive at exit */
  return NULL;
}

int main(int argc, char **argv)
{
  unsigned long unit = argc > 1 ? strtoul(argv[1], NULL, 10) : 2000000, total = 0;
  pthread_t t[4];
  for (int i = 0; i < 2; i++) {
    pthread_create(&t[i], NULL, early, (void *)(unit * (unsigned long)(i + 1)));
    total += unit * (unsigned long)(i + 1);
  }
  for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
  for (int i = 2; i < 4; i++) {
    pthread_create(&t[i], NULL, late, (void *)(unit * (unsigned long)(i + 1)));
    total += unit * (unsigned long)(i + 1);
  }
  work(unit, 3);
  total += unit;
  pthread_mutex_lock(&lock);
  while (done < 2) pthread_cond_wait(&never, &lock);
  pthread_mutex_unlock(&lock);
  printf("tiny calls %lu\n", total);
  return 0;
}
