/* service.c -- a long-running program for tests/dumpsig/run.sh: it works in
** instrumented functions until a stop file appears (or a time limit passes),
** and handles no signal itself unless run with "own-term". */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;
static volatile sig_atomic_t got_term;

__attribute__((noinline)) void work(int n)
{
  for (int i = 0; i < n; i++) sink += (unsigned long)i;
}

__attribute__((noinline)) void step(void)
{
  work(2000);
}

static void on_term(int sig)
{
  (void)sig;
  got_term = 1;
}

int main(int argc, char **argv)
{
  if (argc < 3) {
    fprintf(stderr, "usage: service READY-FILE STOP-FILE [own-term]\n");
    return 2;
  }
  if (argc > 3 && !strcmp(argv[3], "own-term")) signal(SIGTERM, on_term);
  step();                                   /* the runtime starts here */
  FILE *f = fopen(argv[1], "w");
  if (f) fclose(f);
  struct timespec nap = { 0, 2000000 };
  for (int i = 0; i < 15000 && !got_term; i++) {   /* at most ~30 s */
    step();
    if (access(argv[2], F_OK) == 0) break;
    nanosleep(&nap, NULL);
  }
  printf("%s\n", got_term ? "own handler" : "stopped");
  return got_term ? 7 : 0;
}
