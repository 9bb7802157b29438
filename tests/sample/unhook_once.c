/*
** unhook_once.c -- unhooking with CAPPROF_THROTTLE=1 (tests/sample/run.sh,
** case unhook_edges): parent() completes one call, then its callee leaf()
** is unhooked while parent has one call, which the cascade's average must
** not divide by zero for.
*/
#include <stdio.h>

static volatile unsigned sink;

__attribute__((noinline)) static unsigned leaf(unsigned x) { return x * 3u + 1u; }

__attribute__((noinline)) static void parent(unsigned n)
{
  for (unsigned i = 0; i < n; i++) sink += leaf(i);
}

int main(void)
{
  parent(2);
  parent(100000);
  printf("ok %u\n", sink);
  return 0;
}
