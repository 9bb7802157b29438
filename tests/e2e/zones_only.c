/* zones_only.c -- e2e: no hooks. A program instrumented with zones only
** gets a full profile; the runtime starts on the first zone. A zone left
** open in a function that returned is recognised when a shallower frame
** begins the next zone. */
#include <capprof/capprof.h>
#include "e2e.h"

NOINLINE void work(int n) { CAPPROF_ZONE("work"); for (int i = 0; i < n; i++) SINK(i); }
NOINLINE void leaky(void) { CAPPROF_ZONE_BEGIN("leaky"); SINK(0); }

int main(void)
{
  MAP(main); MAP_DONE();
  CAPPROF_ZONE_BEGIN("main");
  for (int i = 0; i < 5; i++) {
    CAPPROF_ZONE("step");
    work(1000 * i);
  }
  leaky();
  CAPPROF_ZONE_BEGIN("after");
  SINK(1);
  CAPPROF_ZONE_END("after");
  CAPPROF_ZONE_BEGIN("unterminated");
  return 0;
}
