/* sample_spin.c -- no hooks: heavy() does three times the work of light(),
** in turns, sampled by CAPPROF_SAMPLE through capprof.dll (run-wine.sh). The
** call to capprof_is_active only makes the program load capprof.dll. Each
** turn's length is drawn at random (0.5 to 1.5 times the mean): turns of one
** length made a strict period that the sampler's steps could lock onto
** (under wine, CPU time moves in 10 ms steps), once giving heavy 30 times
** light's samples. */
#include <stdio.h>

#include "capprof/capprof.h"

volatile unsigned long sink;

__attribute__((noinline)) void heavy(unsigned long n)
{
  for (unsigned long i = 0; i < 3 * n; i++) sink += i ^ (i >> 3);
}

__attribute__((noinline)) void light(unsigned long n)
{
  for (unsigned long i = 0; i < n; i++) sink += i ^ (i >> 3);
}

int main(void)
{
  printf("capprof active: %d\n", capprof_is_active());
  unsigned long long x = 12345;
  for (int r = 0; r < 600; r++) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    unsigned long n = 500000ul + (unsigned long)((x >> 40) % 1000000ull);
    heavy(n);
    light(n);
  }
  printf("%lu\n", sink);
  return 0;
}
