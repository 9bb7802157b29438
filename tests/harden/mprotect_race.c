/*
** mprotect_race.c -- a host thread that calls mprotect(text, PROT_READ |
** PROT_EXEC) (a no-op for the host) while capprof patches that text
** (tests/harden/host.sh, issue 33 case 2). The race is made to happen each
** run: the runtime's check point between opening the page and its store
** (unhook_test_opened) lets the host thread go and returns once its
** mprotect either completed (the store then faults) or waits for the patch.
*/
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>

/* The runtime's test check points (static runtime only; weak: the program
** also runs in the campaign's other builds, tests/harden/campaign.sh,
** where the race is left to chance). */
extern void (*unhook_test_opened)(uintptr_t first, size_t len) __attribute__((weak));
uint32_t posix_guard_waits(void) __attribute__((weak));

static volatile unsigned sink;
static volatile uintptr_t page;
static volatile size_t page_len;
static volatile int go, done, raced;
static volatile int hammer, stop;       /* no check point: the race left to chance */

__attribute__((noinline)) static unsigned leaf(unsigned x) { return x * 3u + 1u; }

/* The host's thread: one mprotect of the code being patched. */
__attribute__((no_instrument_function)) static void *host(void *arg)
{
  (void)arg;
  while (!__atomic_load_n(&go, __ATOMIC_ACQUIRE)) sched_yield();
  do
    if (mprotect((void *)page, page_len, PROT_READ | PROT_EXEC) != 0) perror("mprotect");
  while (hammer && !__atomic_load_n(&stop, __ATOMIC_ACQUIRE));
  __atomic_store_n(&done, 1, __ATOMIC_RELEASE);
  return NULL;
}

__attribute__((no_instrument_function)) static void opened(uintptr_t first, size_t len)
{
  if (raced) return;
  raced = 1;
  page = first;
  page_len = len;
  __atomic_store_n(&go, 1, __ATOMIC_RELEASE);
  while (!__atomic_load_n(&done, __ATOMIC_ACQUIRE) && posix_guard_waits() == 0) sched_yield();
}

int main(void)
{
  pthread_t th;
  if (&unhook_test_opened) {
    unhook_test_opened = opened;
  } else {                               /* mprotect all the time instead */
    page = (uintptr_t)&leaf & ~(uintptr_t)4095;
    page_len = 4096;
    hammer = go = 1;
  }
  if (pthread_create(&th, NULL, host, NULL) != 0) return 2;
  for (unsigned i = 0; i < 400000; i++) sink += leaf(i);
  __atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
  if (!raced && !hammer) {               /* nothing patched: let the thread end */
    page = (uintptr_t)&leaf & ~(uintptr_t)4095;
    page_len = 4096;
    __atomic_store_n(&go, 1, __ATOMIC_RELEASE);
  }
  pthread_join(th, NULL);
  fprintf(stderr, "raced %d\n", raced);
  printf("ok %u\n", sink);
  return 0;
}
