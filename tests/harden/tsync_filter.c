/*
** tsync_filter.c -- a filter that kills membarrier, installed for every
** thread (TSYNC) by another thread while a patch is under way
** (tests/harden/host.sh, issue 33 case 4). The runtime's check point
** between opening the page and its store (unhook_test_opened) lets the
** host thread install it, and returns once it is installed or waits for
** the patch; the patch's membarrier comes after.
*/
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The runtime's test check points (static runtime only; weak: the program
** also runs in the campaign's other builds, tests/harden/campaign.sh,
** where the race is left to chance). */
extern void (*unhook_test_opened)(uintptr_t first, size_t len) __attribute__((weak));
uint32_t posix_guard_waits(void) __attribute__((weak));

static volatile unsigned sink;
static volatile int go, done, raced;

__attribute__((noinline)) static unsigned leaf(unsigned x) { return x * 3u + 1u; }

__attribute__((no_instrument_function)) static void *host(void *arg)
{
  (void)arg;
  struct sock_filter f[] = {
    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_membarrier, 0, 1),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog prog = { sizeof f / sizeof f[0], f };
  while (!__atomic_load_n(&go, __ATOMIC_ACQUIRE)) sched_yield();
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
      syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &prog) != 0)
    perror("seccomp");
  __atomic_store_n(&done, 1, __ATOMIC_RELEASE);
  return NULL;
}

__attribute__((no_instrument_function)) static void opened(uintptr_t first, size_t len)
{
  (void)first;
  (void)len;
  if (raced) return;
  raced = 1;
  __atomic_store_n(&go, 1, __ATOMIC_RELEASE);
  while (!__atomic_load_n(&done, __ATOMIC_ACQUIRE) && posix_guard_waits() == 0) sched_yield();
}

int main(void)
{
  pthread_t th;
  if (&unhook_test_opened) unhook_test_opened = opened;
  if (pthread_create(&th, NULL, host, NULL) != 0) return 2;
  for (unsigned i = 0; i < 400000; i++) sink += leaf(i);
  __atomic_store_n(&go, 1, __ATOMIC_RELEASE);
  pthread_join(th, NULL);
  for (unsigned i = 0; i < 400000; i++) sink += leaf(i);   /* under the filter now */
  fprintf(stderr, "raced %d\n", raced);
  printf("ok %u\n", sink);
  return 0;
}
