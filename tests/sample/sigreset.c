/* sigreset.c -- built with hooks, run with the CPU-time timer sampling it
** (CAPPROF_SAMPLE=timer): two threads work in hooked functions while main
** resets the action of every signal it may (SIG_DFL), through signal() and
** sigaction() in turn, again and again. The sampler's real-time signal is
** among them: its default action would end the process at the next sample,
** unless capprof deleted its timers first. Prints "alive" at its end. */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

volatile unsigned sink;

__attribute__((noinline)) unsigned work(unsigned n)
{
  unsigned x = sink;
  for (unsigned i = 0; i < n; i++) x = x * 2654435761u + i;
  return x;
}

static volatile int stop;

static void *worker(void *arg)
{
  (void)arg;
  while (!stop) sink += work(200000);
  return NULL;
}

__attribute__((no_instrument_function)) static void reset_all(int round)
{
  for (int s = 1; s < NSIG; s++) {
    if (s == SIGKILL || s == SIGSTOP) continue;
    if (round & 1) {
      signal(s, SIG_DFL);
    } else {
      struct sigaction sa;
      memset(&sa, 0, sizeof sa);
      sa.sa_handler = SIG_DFL;
      sigaction(s, &sa, NULL);
    }
  }
}

int main(void)
{
  pthread_t th[2];
  for (int i = 0; i < 2; i++) pthread_create(&th[i], NULL, worker, NULL);
  for (int round = 0; round < 200; round++) {
    sink += work(400000);                    /* CPU time: the timer fires meanwhile */
    reset_all(round);
  }
  stop = 1;
  for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
  printf("alive\n");
  return 0;
}
