/* throttle_mix.c -- a caller that calls two throttled leaves and a timed
** function in turn: its callees are rarely its hot child, so the hooks take
** their table-slot paths (in assembly for GCC's __fentry__), for untimed,
** sampled and timed calls alike; all three are counted exactly and stay in
** their places. Run with CAPPROF_THROTTLE=100000:20us
** (throttle_mix.expect) and CAPPROF_THROTTLE=off (throttle_mix.off.expect). */
#include <capprof/capprof.h>
#include "e2e.h"

NOINLINE int below(int x) { SINK(x); return x; }
NOINLINE int acc_a(int x) { SINK(x); return x + 2; }
NOINLINE int acc_b(int x) { SINK(x); return x ^ 5; }
/* Not a leaf when its throttling is decided: stays timed. */
NOINLINE int middle(int x) { SINK(x); return x % 1000 == 0 ? below(x) : x; }
NOINLINE int mixer(int n)
{
  unsigned s = 0;                       /* wraps, as signed int would not */
  for (int i = 0; i < n; i++) {
    s += (unsigned)acc_a(i);
    s += (unsigned)middle(i);
    s += (unsigned)acc_b((int)(s & 0xFFFFF));
  }
  return (int)(s & 0x7FFFFFFF);
}

int main(void)
{
  MAP(main); MAP(below); MAP(acc_a); MAP(acc_b); MAP(middle); MAP(mixer); MAP_DONE();
  capprof_set_thread_name("main");
  unsigned s = (unsigned)mixer(250000);
  s += (unsigned)acc_a((int)(s & 0xFFFFF));
  printf("%u\n", s);
  return 0;
}
