/*
** unhook_deeprec.c -- a recursion always four calls deep (rec) between
** rounds of its caller's own work (outer). Unhooking rec from one of its
** inner calls would leave the outer calls' frames on the shadow stack, never
** popped (they return through patched exits), and every later sample of
** outer's own work would be charged to them. Prints rounds and a checksum.
**   unhook_deeprec SECONDS
*/
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile unsigned sink;

__attribute__((noinline)) static unsigned rec(unsigned depth, unsigned x)
{
  if (depth) return rec(depth - 1, x * 3u + 1u) + 1u;
  return x ^ 0x12345u;
}

static double now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

__attribute__((noinline)) static unsigned long outer(double seconds)
{
  unsigned acc = 0;
  unsigned long n = 0;
  double end = now() + seconds;
  while (n < 100 || now() < end) {
    for (unsigned i = 0; i < 200; i++) acc += rec(4, i + (unsigned)n);
    for (unsigned i = 0; i < 20000; i++) {       /* outer's own work */
      acc = acc * 2654435761u + i;
      __asm__ __volatile__("" : "+r"(acc));
    }
    n++;
  }
  sink = acc;
  return n;
}

int main(int argc, char **argv)
{
  unsigned long rounds = outer(argc > 1 ? atof(argv[1]) : 1.0);
  printf("ok %lu\n", rounds);
  return 0;
}
