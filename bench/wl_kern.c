/*
** wl_kern.c -- the call-heavy kernels, compiled per variant (see wl.h). The
** empty asm statements keep GCC from turning the recursions into loops, so
** every variant executes exactly the calls the comments in wl.h count.
*/
#include "wl.h"

#define KEEP(x) __asm__ __volatile__("" : "+r"(x))

__attribute__((noinline)) unsigned WL(wl_rec)(unsigned d)
{
  if (!d) return 1;
  unsigned a = WL(wl_rec)(d - 1);
  KEEP(a);
  unsigned b = WL(wl_rec)(d - 1);
  KEEP(b);
  return a + b;
}

__attribute__((noinline)) unsigned WL(wl_deep)(unsigned n)
{
  if (!n) return 0;
  unsigned r = WL(wl_deep)(n - 1);
  KEEP(r);
  return r + 1;
}
