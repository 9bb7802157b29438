/* ring.c -- built with hooks and run without CAPPROF_SAMPLE: the default
** sampling (a ring buffer per hooked thread, read by the hooks). heavy()
** does three times light()'s work, in the main thread and in two others;
** a fork child runs child_work(). main() also checks what the host sees:
** the handlers of the real-time signals and the open descriptors must be
** the same at its end as at its start (no signal, no descriptor kept). */
#define _GNU_SOURCE
#include <dirent.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

volatile unsigned sink;

__attribute__((noinline)) void tick(void) { sink++; }

__attribute__((noinline)) unsigned heavy(unsigned n)
{
  unsigned x = sink;
  for (unsigned i = 0; i < n; i++) {
    x = x * 2654435761u + i;
    if ((i & 4095) == 0) tick();
  }
  return x;
}

__attribute__((noinline)) unsigned light(unsigned n)
{
  unsigned x = sink;
  for (unsigned i = 0; i < n; i++) {
    x = x * 2654435761u + i;
    if ((i & 4095) == 0) tick();
  }
  return x;
}

__attribute__((noinline)) void child_work(unsigned n)
{
  unsigned x = sink;
  for (unsigned i = 0; i < n; i++) {
    x = x * 2654435761u + i;
    if ((i & 4095) == 0) tick();
  }
  sink = x;
}

static unsigned rounds = 1;
#define UNIT 40000000u

static void *worker(void *arg)
{
  (void)arg;
  for (unsigned r = 0; r < rounds; r++) sink += heavy(3 * UNIT) + light(UNIT);
  return NULL;
}

/* What the host sees of capprof, in one line: handlers of the real-time
** signals that are not SIG_DFL, then the open descriptors. */
__attribute__((no_instrument_function)) static void host_view(char *buf, size_t n)
{
  size_t at = 0;
  buf[0] = '\0';
  for (int s = SIGRTMIN; s <= SIGRTMAX; s++) {
    struct sigaction sa;
    if (sigaction(s, NULL, &sa) == 0 && sa.sa_handler != SIG_DFL)
      at += (size_t)snprintf(buf + at, n - at, "sig%d ", s);
  }
  DIR *d = opendir("/proc/self/fd");
  if (!d) return;
  int self = dirfd(d);
  struct dirent *e;
  while ((e = readdir(d)) != NULL && at < n - 16)
    if (e->d_name[0] != '.' && atoi(e->d_name) != self)
      at += (size_t)snprintf(buf + at, n - at, "fd%s ", e->d_name);
  closedir(d);
}

int main(int argc, char **argv)
{
  if (argc > 1) rounds = (unsigned)atoi(argv[1]);
  char before[512], after[512];
  host_view(before, sizeof before);
  pthread_t th[2];
  for (int i = 0; i < 2; i++) pthread_create(&th[i], NULL, worker, NULL);
  for (unsigned r = 0; r < rounds; r++) sink += heavy(3 * UNIT) + light(UNIT);
  for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
  pid_t child = fork();
  if (child == 0) {
    child_work(2 * UNIT);
    exit(0);
  }
  int status = 0;
  waitpid(child, &status, 0);
  host_view(after, sizeof after);
  printf("child %s\n", WIFEXITED(status) && WEXITSTATUS(status) == 0 ? "ok" : "failed");
  printf("host view: before [%s] after [%s]: %s\n", before, after,
         strcmp(before, after) ? "CHANGED" : "same");
  return 0;
}
