/* spin3.c -- no hooks: heavy() does three times the work of light(), in
** turns, so that CPU-time samples fall on them 3:1. Built with frame
** pointers so that main shows as their caller in the sampled tree. */
#include <stdio.h>
#include <stdlib.h>

volatile unsigned long sink, ticks;

/* A call now and then gives heavy and light a frame of their own (GCC
** sets up no frame pointer in a leaf). */
__attribute__((noinline)) void tick(void) { ticks++; }

/* The work: a chain of dependent multiplies, whose speed does not depend on
** where the loop lies in memory (an earlier loop through the volatile sink,
** bound by store-to-load forwarding, ran heavy 3.6-4.4 times as long as
** light on an AMD EPYC, by perf too, for its alignment alone). */
__attribute__((noinline)) void heavy(unsigned long n)
{
  unsigned long x = sink;
  for (unsigned long i = 0; i < 3 * n; i++) {
    x = x * 2654435761u + i;
    __asm__ __volatile__("" : "+r"(x));
    if ((i & 0xFFFFF) == 0) tick();
  }
  sink = x;
}

__attribute__((noinline)) void light(unsigned long n)
{
  unsigned long x = sink;
  for (unsigned long i = 0; i < n; i++) {
    x = x * 2654435761u + i;
    __asm__ __volatile__("" : "+r"(x));
    if ((i & 0xFFFFF) == 0) tick();
  }
  sink = x;
}

int main(int argc, char **argv)
{
  unsigned long rounds = argc > 1 ? strtoul(argv[1], NULL, 10) : 100;
  /* Work per call: a round far shorter than the scheduler tick lets a
  ** sampler that fires on the tick (the CPU-time timer) find it at any
  ** phase; a round near the tick's length (4 ms at HZ=250) aliases. */
  unsigned long n = argc > 2 ? strtoul(argv[2], NULL, 10) : 1000000;
  for (unsigned long r = 0; r < rounds; r++) {
    heavy(n);
    light(n);
  }
  printf("%lu\n", sink);
  return 0;
}
