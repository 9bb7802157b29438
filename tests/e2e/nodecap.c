/* nodecap.c -- run with CAPPROF_MAX_NODES=16 (nodecap.env): spin() calls 40
** distinct functions; those past the cap must be charged under spin, as
** "[calls past the node cap]", not beside main, so totals stay right. */
#include <time.h>
#include <capprof/capprof.h>
#include "e2e.h"

__attribute__((no_instrument_function)) static void busy(long ns)
{
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  do clock_gettime(CLOCK_MONOTONIC, &b);
  while ((b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec) < ns);
}

NOINLINE void leaf(void) { SINK(0); }
#define F(i) NOINLINE void f##i(void) { busy(2000000); leaf(); }
F(0) F(1) F(2) F(3) F(4) F(5) F(6) F(7) F(8) F(9) F(10) F(11) F(12) F(13)
F(14) F(15) F(16) F(17) F(18) F(19) F(20) F(21) F(22) F(23) F(24) F(25)
F(26) F(27) F(28) F(29) F(30) F(31) F(32) F(33) F(34) F(35) F(36) F(37)
F(38) F(39)
typedef void (*fn)(void);
static fn fns[] = { f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13,
  f14, f15, f16, f17, f18, f19, f20, f21, f22, f23, f24, f25, f26, f27, f28, f29,
  f30, f31, f32, f33, f34, f35, f36, f37, f38, f39 };

NOINLINE void spin(void) { for (int i = 0; i < 40; i++) fns[i](); }

int main(void)
{
  MAP(main); MAP(spin); MAP(leaf); MAP(f0); MAP(f4); MAP(f5); MAP_DONE();
  capprof_set_thread_name("main");
  spin();
  return 0;
}
