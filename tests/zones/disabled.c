/* disabled.c -- every zone macro, compiled without CAPPROF_ENABLED (and once
** with it, as the control): check_nm.cmake proves with nm that the disabled
** object references no capprof symbol. */
#include <capprof/capprof.h>

int disabled_demo(int n)
{
  CAPPROF_FUNCTION();
  int s = 0;
  CAPPROF_ZONE_BEGIN("outer");
  for (int i = 0; i < n; i++) {
    CAPPROF_ZONE("loop");
    s += i;
  }
  const char *dyn = n > 3 ? "big" : "small";
  CAPPROF_ZONE_BEGIN(dyn);
  CAPPROF_ZONE_END();
  CAPPROF_ZONE_END("outer");
  return s;
}
