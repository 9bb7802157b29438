/* zones_nested.c -- zones inside a hook-instrumented program: each zone sits
** between the function that begins it and that function's callees. Scoped
** zones, CAPPROF_FUNCTION, dynamic names, and every kind of mismatch. */
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <capprof/capprof.h>
#include "e2e.h"

NOINLINE void leaf(int x) { SINK(x); }
NOINLINE void scoped(void) { CAPPROF_FUNCTION(); leaf(1); }

NOINLINE void phases(void)
{
  CAPPROF_ZONE_BEGIN("phase1");
  leaf(1);
  scoped();
  CAPPROF_ZONE_END();
  CAPPROF_ZONE_BEGIN("phase2");
  leaf(2);
  CAPPROF_ZONE_END("phase2");
  for (int i = 0; i < 6; i++) {
    CAPPROF_ZONE("iter");
    char name[16];                       /* one buffer, three names */
    snprintf(name, sizeof name, "req-%d", i % 3);
    CAPPROF_ZONE_BEGIN(name);
    leaf(i);
    CAPPROF_ZONE_END();
  }
}

NOINLINE void forget(void) { CAPPROF_ZONE_BEGIN("forgotten"); leaf(3); }
NOINLINE void after_forget(void) { forget(); leaf(4); }

static jmp_buf jb;
NOINLINE void jumper(void) { CAPPROF_ZONE_BEGIN("jumped"); leaf(5); longjmp(jb, 1); }
NOINLINE void jumps(void) { if (!setjmp(jb)) jumper(); leaf(6); }

NOINLINE void misnest(void)
{
  CAPPROF_ZONE_BEGIN("outer");
  CAPPROF_ZONE_BEGIN("inner");
  leaf(7);
  CAPPROF_ZONE_END("outer");             /* closes inner too */
  leaf(8);
}

NOINLINE void stray(void) { CAPPROF_ZONE_END("nothing"); CAPPROF_ZONE_END(); }

NOINLINE void wrong_function_end(void) { CAPPROF_ZONE_END("cross"); }
NOINLINE void cross(void)
{
  CAPPROF_ZONE_BEGIN("cross");
  wrong_function_end();                  /* not its function: no effect, counted */
  CAPPROF_ZONE_END("cross");
}

int main(void)
{
  MAP(main); MAP(leaf); MAP(scoped); MAP(phases); MAP(forget); MAP(after_forget);
  MAP(jumper); MAP(jumps); MAP(misnest); MAP(stray); MAP(wrong_function_end); MAP(cross);
  MAP_DONE();
  phases();
  after_forget();
  jumps();
  misnest();
  stray();
  cross();
  CAPPROF_ZONE_BEGIN("tail");
  leaf(9);
  exit(0);                               /* main's exit hook never runs */
}
