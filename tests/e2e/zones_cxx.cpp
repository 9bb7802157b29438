// zones_cxx.cpp -- the C++ RAII zone in a hook-instrumented program, also
// when an exception leaves its scope.
#include <stdexcept>
#include <capprof/capprof.h>
#include "e2e.h"

NOINLINE void leaf(int x) { SINK(x); }
NOINLINE void thrower(int i)
{
  capprof::Zone z("throwing");
  leaf(1);
  if (i >= 0) throw std::runtime_error("x");
}
NOINLINE void catcher(int i)
{
  CAPPROF_ZONE("catching");
  try { thrower(i); } catch (const std::exception &) { leaf(2); }
}
NOINLINE void raii()
{
  CAPPROF_FUNCTION();
  { capprof::Zone a("a"); leaf(3); }
  leaf(4);
}

int main()
{
  MAP(main); MAP(leaf); MAP(thrower); MAP(catcher); MAP(raii); MAP_DONE();
  for (int i = 0; i < 3; i++) catcher(i);
  raii();
  return 0;
}
