/*
** zones_frames.c -- functions built like /Gh /GH code (-pg -mfentry, see
** CMakeLists.txt) that open zones: nested between a function and its
** callees, and one left open by its function (popped by _pexit).
*/
#define CAPPROF_ENABLED 1
#include "capprof/capprof.h"

__attribute__((noinline)) void zinner(int x) { __asm__ __volatile__("" : : "r"(x) : "memory"); }

__attribute__((noinline)) void zouter(int n)
{
  CAPPROF_ZONE_BEGIN("phase");
  for (int i = 0; i < n; i++) zinner(i);
  CAPPROF_ZONE_END("phase");
  zinner(-1);
}

__attribute__((noinline)) void zforget(void)
{
  CAPPROF_ZONE_BEGIN("forgotten");
  zinner(0);
}

__attribute__((noinline)) void zcaller(void)
{
  zforget();
  zinner(1);               /* under zcaller, not under the forgotten zone */
}
