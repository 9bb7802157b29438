/*
** strict.c -- a thread that enters SECCOMP_MODE_STRICT (tests/harden/
** host.sh, issue 33 case 5): from then on only read, write, _exit and
** sigreturn are allowed; any other system call kills the process. The
** thread then makes hooked calls on new call paths, writes its result and
** ends with the exit system call; main joins it and prints.
*/
#include <linux/seccomp.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static volatile unsigned sink;
static volatile int finished;

__attribute__((noinline)) static unsigned leaf(unsigned x) { return x * 3u + 1u; }
__attribute__((noinline)) static unsigned mid(unsigned x) { return leaf(x) + leaf(x + 1); }
__attribute__((noinline)) static unsigned deep(unsigned d, unsigned x)
{
  return d ? deep(d - 1, x) + mid(x) : leaf(x);
}

static void *body(void *arg)
{
  (void)arg;
  sink += leaf(1);
  if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT, 0, 0, 0) != 0) return NULL;
  for (unsigned i = 0; i < 1000; i++) sink += deep(i % 200, i);
  static const char msg[] = "strict thread done\n";
  if (write(1, msg, strlen(msg)) < 0) sink++;
  __atomic_store_n(&finished, 1, __ATOMIC_RELEASE);
  syscall(SYS_exit, 0);
  return NULL;
}

int main(void)
{
  pthread_t th;
  sink += leaf(0);
  if (pthread_create(&th, NULL, body, NULL) != 0) return 2;
  while (!__atomic_load_n(&finished, __ATOMIC_ACQUIRE)) usleep(1000);
  usleep(10000);                       /* the thread's exit system call */
  printf("ok %d\n", finished);
  return 0;
}
