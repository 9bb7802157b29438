/*
** perf_filter.c -- explicit sampling (CAPPROF_SAMPLE=time:1ms) in a program
** that then installs, for every thread (TSYNC), a seccomp filter killing
** perf_event_open, and starts a thread (tests/harden/host.sh, issue 33
** case 7): the new thread's first hook must not open a perf event.
*/
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static volatile unsigned sink;

__attribute__((noinline)) static unsigned work(unsigned n)
{
  unsigned s = 0;
  for (unsigned i = 0; i < n; i++) s += i * 7u;
  return s;
}

static void *body(void *arg)
{
  (void)arg;
  sink += work(100000);
  return NULL;
}

int main(void)
{
  sink += work(1000);
  struct sock_filter f[] = {
    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_perf_event_open, 0, 1),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog prog = { sizeof f / sizeof f[0], f };
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
      syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &prog) != 0) {
    perror("seccomp");
    return 2;
  }
  pthread_t th;
  if (pthread_create(&th, NULL, body, NULL) != 0) return 2;
  pthread_join(th, NULL);
  printf("ok %u\n", sink);
  return 0;
}
