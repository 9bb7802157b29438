/* ring.c -- built with hooks and run without CAPPROF_SAMPLE: the default
** sampling (a ring buffer per hooked thread, read by the hooks). heavy()
** does three times light()'s work, in the main thread and in two others;
** a fork child runs child_work(). main() also checks what the host sees:
** the handlers of the real-time signals and the open descriptors must be
** the same at its end as at its start (no signal, no descriptor kept).
**   ring ROUNDS fdfull   no descriptor left: a new thread's first hook
**                        cannot open its ring (errno must stay), and a fork
**                        child cannot either (it must not hang)
**   ring ROUNDS profile  a profile object runs too: threads started later
**                        must not be sampled twice */
#define _GNU_SOURCE
#include <capprof/capprof.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

volatile unsigned sink;

__attribute__((noinline)) void tick(void) { sink++; }

/* The work of each function below, in its own code (inlined). */
__attribute__((always_inline, no_instrument_function)) static inline unsigned spin(unsigned n)
{
  unsigned x = sink;
  for (unsigned i = 0; i < n; i++) {
    x = x * 2654435761u + i;
    if ((i & 4095) == 0) tick();
  }
  return x;
}

__attribute__((noinline)) unsigned heavy(unsigned n) { return spin(n); }
__attribute__((noinline)) unsigned light(unsigned n) { return spin(n); }
__attribute__((noinline)) void child_work(unsigned n) { sink = spin(n); }

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

static int errno_kept = -1;

static void *first_hook(void *arg)
{
  (void)arg;
  errno = 0;
  sink += light(UNIT / 8);                   /* its first hook: no ring to be had */
  errno_kept = errno == 0;
  return NULL;
}

/* No descriptor left; returns how many were taken (closed by fd_release). */
__attribute__((no_instrument_function)) static int fd_fill(int *fds, int max)
{
  int n = 0;
  while (n < max && (fds[n] = open("/dev/null", O_RDONLY)) >= 0) n++;
  return n;
}

static int fdfull(void)
{
  struct rlimit rl;
  getrlimit(RLIMIT_NOFILE, &rl);
  rl.rlim_cur = 64;
  setrlimit(RLIMIT_NOFILE, &rl);
  static int fds[64];
  int n = fd_fill(fds, 64);
  pthread_t th;
  pthread_create(&th, NULL, first_hook, NULL);
  pthread_join(th, NULL);
  alarm(20);                                 /* a hung child fails the test */
  pid_t child = fork();
  if (child == 0) {
    child_work(UNIT / 4);
    for (int i = 0; i < n; i++) close(fds[i]);   /* room for its dump */
    exit(0);
  }
  int status = 0;
  waitpid(child, &status, 0);
  alarm(0);
  for (int i = 0; i < n; i++) close(fds[i]);
  printf("fdfull: errno %s, fork child %s\n", errno_kept == 1 ? "kept" : "CHANGED",
         WIFEXITED(status) && WEXITSTATUS(status) == 0 ? "ok" : "failed");
  return 0;
}

int main(int argc, char **argv)
{
  if (argc > 1) rounds = (unsigned)atoi(argv[1]);
  if (argc > 2 && !strcmp(argv[2], "fdfull")) return fdfull();
  if (argc > 2 && !strcmp(argv[2], "profile")) {
    struct capprof_profile_desc d;
    memset(&d, 0, sizeof d);
    d.range = CAPPROF_RANGE_PROCESS;
    d.interval = "1ms";
    capprof_profile *p;
    if (capprof_profile_create(&d, &p) != 0 || capprof_profile_start(p) != 0) {
      printf("no profile object here\n");
      return 1;
    }
  }
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
