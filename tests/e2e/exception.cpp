// exception.cpp -- a C++ exception thrown through several instrumented frames.
#include <stdexcept>
#include <capprof/capprof.h>
#include "e2e.h"

NOINLINE void after() { SINK(0); }
NOINLINE void thrower3(int i) { if (i >= 0) throw std::runtime_error("x"); SINK(i); }
NOINLINE void thrower2(int i) { thrower3(i); SINK(i); }
NOINLINE void thrower1(int i) { thrower2(i); SINK(i); }
NOINLINE void catcher(int i)
{
  try { thrower1(i); } catch (const std::exception &) { after(); }
  after();
}

int main()
{
  MAP(main); MAP(after); MAP(thrower1); MAP(thrower2); MAP(thrower3); MAP(catcher); MAP_DONE();
  capprof_set_thread_name("main");
  for (int i = 0; i < 10; i++) catcher(i);
  after();
  return 0;
}
