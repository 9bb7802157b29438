/* dlclose.c -- calls into an instrumented library that is unloaded with
** dlclose before the dump: the dump still maps its addresses. */
#include <dlfcn.h>
#include <capprof/capprof.h>
#include "e2e.h"

NOINLINE int run(void)
{
  void *h = dlopen("./libdlclose_lib.so", RTLD_NOW);
  if (!h) return 1;
  int (*outer)(int) = (int (*)(int))dlsym(h, "lib_outer");
  if (!outer) return 1;
  fprintf(e2e_map(), "lib_outer %p\nlib_inner %p\n", (void *)outer, dlsym(h, "lib_inner"));
  MAP_DONE();
  int s = 0;
  for (int i = 0; i < 4; i++) s += outer(3);
  dlclose(h);
  return s == 4 * 3 ? 0 : 1;
}

int main(void)
{
  MAP(main); MAP(run);
  capprof_set_thread_name("main");
  return run();
}
