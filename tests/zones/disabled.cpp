// disabled.cpp -- the C++ zones (macros and capprof::Zone), compiled without
// CAPPROF_ENABLED (and once with it, as the control); see disabled.c.
#include <capprof/capprof.h>

int disabled_demo_cxx(int n)
{
  CAPPROF_FUNCTION();
  int s = 0;
  for (int i = 0; i < n; i++) {
    capprof::Zone z("loop");
    CAPPROF_ZONE("inner");
    s += i;
  }
  CAPPROF_ZONE_BEGIN("pair");
  CAPPROF_ZONE_END();
  return s;
}
