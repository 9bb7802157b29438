/* throttle.c -- a hot tiny function, a leaf when its Nth call decides, is
** throttled and still counted exactly; the calls it makes later stay below
** it; a rare one beside it is not throttled. Run with CAPPROF_THROTTLE=
** 100000:20us (throttle.expect) and with CAPPROF_THROTTLE=off
** (throttle.off.expect). */
#include <capprof/capprof.h>
#include "e2e.h"

NOINLINE int below(int x) { SINK(x); return x; }
static int tiny_calls;
NOINLINE int tiny(int x) { SINK(x); return ++tiny_calls > 150000 && tiny_calls % 1000 == 0 ? below(x) : x + 1; }
NOINLINE int rare(int x) { SINK(x); return x - 1; }
NOINLINE int hot_caller(int n)
{
  unsigned s = 0;
  for (int i = 0; i < n; i++) s += (unsigned)tiny(i);
  return s + rare(n);
}

int main(void)
{
  MAP(main); MAP(tiny); MAP(rare); MAP(below); MAP(hot_caller); MAP_DONE();
  capprof_set_thread_name("main");
  unsigned s = 0;
  for (int k = 0; k < 3; k++) s += (unsigned)hot_caller(100000);
  for (int k = 0; k < 10; k++) s += (unsigned)below(k);
  printf("%u\n", s);
  return 0;
}
