/* signal_exit.c -- exit() from a SIGALRM handler while the program is inside
** the runtime's locked paths: capprof_dump() ("dump"), threads' first hooks
** ("threads"), the dlclose wrapper ("dlclose"). The process must end (exit
** status 0) with its final dump, never hang. */
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>
#include <capprof/capprof.h>

#define NOINLINE __attribute__((noinline))
#define SINK(x) __asm__ __volatile__("" : : "r"(x) : "memory")

static void on_alarm(int sig) { (void)sig; exit(0); }

NOINLINE void work(int x) { SINK(x); }
NOINLINE void *thread_main(void *arg) { work((int)(long)arg); return NULL; }

int main(int argc, char **argv)
{
  if (argc < 3) return 2;
  const char *mode = argv[1];
  char tmp[1024];
  snprintf(tmp, sizeof tmp, "%s/mid.%d.capprof", argv[2], (int)getpid());
  signal(SIGALRM, on_alarm);
  struct itimerval it = { { 0, 0 }, { 0, 2000 + (getpid() % 17) * 1000 } };
  setitimer(ITIMER_REAL, &it, NULL);
  for (long i = 0; i < 100000000; i++) {
    if (!strcmp(mode, "dump")) {
      capprof_dump(tmp, NULL, 0);
      unlink(tmp);
    } else if (!strcmp(mode, "threads")) {
      pthread_t th;
      if (pthread_create(&th, NULL, thread_main, (void *)i) == 0) pthread_detach(th);
    } else if (!strcmp(mode, "dlclose")) {
      void *h = dlopen(argv[3], RTLD_NOW);
      if (h) dlclose(h);
    }
    work((int)i);
  }
  return 1;
}
