/* throttle_again.c -- a node whose first calls are long is not throttled at
** its Nth call, but at a later decision (every 2^17 calls) once its calls
** have become short on average; a caller is not throttled at either (hooks
** alone: leaves only), a rare long one neither, and a leaf short from the
** start is throttled at its Nth call. Run with CAPPROF_THROTTLE=1000:20us.
** The decisions do not depend on load: early's first 1,100 calls spin for
** 50 us of elapsed time each, so its first 1,000 average at least 50 us
** whatever the machine does; by its 131,072nd call they add 0.42 us to the
** average, and preemptions inside its calls would have to add 19.6 us more
** (2.6 s in all) to keep it over 20 us. tiny's first 1,000 calls would need
** 20 ms of preemption besides their longest call. */
#include <time.h>

#include <capprof/capprof.h>
#include "e2e.h"

/* Not a call of its own to the hooks: early stays a leaf. */
__attribute__((no_instrument_function, always_inline)) static inline void spin_ns(long ns)
{
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  do clock_gettime(CLOCK_MONOTONIC, &b);
  while ((b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec) < ns);
}

static int early_calls;
NOINLINE int early(int x) { SINK(x); if (++early_calls <= 1100) spin_ns(50000); return x + 1; }
NOINLINE int tiny(int x) { SINK(x); return x ^ 1; }
NOINLINE int wrap(int x) { SINK(x); return tiny(x) + 1; }
NOINLINE int slow(int x) { SINK(x); spin_ns(2000); return x - 1; }

int main(void)
{
  MAP(main); MAP(early); MAP(tiny); MAP(wrap); MAP(slow); MAP_DONE();
  capprof_set_thread_name("main");
  unsigned s = 0;
  for (int i = 0; i < 300000; i++) s += (unsigned)(early(i) + wrap(i));
  for (int i = 0; i < 200; i++) s += (unsigned)slow(i);
  printf("%u\n", s);
  return 0;
}
