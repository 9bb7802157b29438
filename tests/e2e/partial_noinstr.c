/* partial_noinstr.c -- an uninstrumented main calling an instrumented file. */
#include <capprof/capprof.h>
#include "e2e.h"

void lib_outer(int n);
void lib_inner(int x);

int main(void)
{
  MAP(lib_outer); MAP(lib_inner); MAP_DONE();
  capprof_set_thread_name("main");
  for (int i = 0; i < 7; i++) lib_outer(3);
  lib_inner(1);
  return 0;
}
