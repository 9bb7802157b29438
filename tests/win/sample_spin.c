/* sample_spin.c -- no hooks: heavy() does three times the work of light(),
** in turns, sampled by CAPPROF_SAMPLE through capprof.dll (run-wine.sh). The
** call to capprof_is_active only makes the program load capprof.dll. */
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
  for (int r = 0; r < 600; r++) {
    heavy(1000000);
    light(1000000);
  }
  printf("%lu\n", sink);
  return 0;
}
