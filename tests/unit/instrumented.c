/*
** instrumented.c -- functions compiled with the hooks for the dump tests:
** their calls are recorded by the runtime linked into the test program.
*/
#include "instrumented.h"

__attribute__((noinline)) int probe_leaf(int x)
{
  __asm__ __volatile__("" : : "r"(x) : "memory");
  return x + 1;
}

__attribute__((noinline)) int probe_parent(int n)
{
  int s = 0;
  for (int i = 0; i < n; i++) s += probe_leaf(i);
  return s;
}
