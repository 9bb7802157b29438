/*
** sample_cost.c -- what one sample costs the sampled thread inside the
** handler: sample_hit (sample.c) called directly in a loop, for process-wide
** sampling (a charge to the shadow-stack top, a frame-pointer walk of a real
** 12-frame stack, the record of that stack) and for a profile object (one
** bucket). The signal's delivery by the kernel comes on top: bench/sample.sh
** measures the whole. Prints key=value minima in ns. Never instrumented.
*/
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../src/sample/sample.h"

static uint64_t now_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static struct sample_session proc, obj;
static struct sample_thread *st;
static struct cp_thread *tree;
static double best_proc = 1e18, best_obj = 1e18;

#define N 200000

/* At the bottom of a 12-frame stack: time N samples of each kind. */
__attribute__((noinline)) static void measure(void)
{
  struct sample_regs r;
  r.pc = (uintptr_t)__builtin_return_address(0);
  r.fp = (uintptr_t)__builtin_frame_address(0);
  r.sp = (uintptr_t)&r;
  for (int rep = 0; rep < 5; rep++) {
    uint64_t t0 = now_ns();
    for (int i = 0; i < N; i++) sample_hit(&proc, st, tree, &r);
    uint64_t t1 = now_ns();
    for (int i = 0; i < N; i++) sample_hit(&obj, NULL, NULL, &r);
    uint64_t t2 = now_ns();
    double a = (double)(t1 - t0) / N, b = (double)(t2 - t1) / N;
    if (a < best_proc) best_proc = a;
    if (b < best_obj) best_obj = b;
  }
}

__attribute__((noinline)) static int descend(int depth)
{
  if (depth == 0) { measure(); return 0; }
  int r = descend(depth - 1);
  __asm__ volatile("" ::: "memory");        /* no tail call: a real frame */
  return r + 1;
}

int main(void)
{
  st = sample_thread_claim((uint64_t)syscall(SYS_gettid));
  tree = calltree_new(1024);
  if (!st || !tree) return 1;
  pthread_attr_t attr;
  void *addr;
  size_t size;
  if (pthread_getattr_np(pthread_self(), &attr) == 0 &&
      pthread_attr_getstack(&attr, &addr, &size) == 0) {
    st->stack_lo = (uintptr_t)addr;
    st->stack_hi = (uintptr_t)addr + size;
  }
  proc.used = obj.used = 1;
  proc.running = obj.running = 1;
  proc.kind = CPD_SK_PROCESS;
  obj.kind = CPD_SK_OBJECT;
  obj.lo = 0;
  obj.hi = UINTPTR_MAX;
  obj.shift = 40;
  static uint32_t buckets[1 << 24];
  obj.buckets = buckets;
  descend(11);
  printf("handler_process_ns=%.1f handler_object_ns=%.1f walked=%llu\n", best_proc, best_obj,
         (unsigned long long)proc.walked);
  return proc.walked ? 0 : 1;
}
