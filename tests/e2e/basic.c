/* basic.c -- exact counts per call path, recursion, and errno preservation. */
#include <errno.h>
#include <capprof/capprof.h>
#include "e2e.h"

NOINLINE int leaf(int x) { SINK(x); return x + 1; }
NOINLINE int twice(int x) { return leaf(x) + leaf(x + 1); }
NOINLINE int rec(int n) { return n == 0 ? leaf(0) : rec(n - 1) + 1; }
NOINLINE int check_errno(void) { errno = 1234; int v = leaf(7); return errno == 1234 ? v : -1; }

int main(void)
{
  MAP(main); MAP(leaf); MAP(twice); MAP(rec); MAP(check_errno); MAP_DONE();
  capprof_set_thread_name("main");
  int s = 0;
  for (int i = 0; i < 3; i++) s += twice(i);
  s += rec(4);
  for (int i = 0; i < 5; i++) s += leaf(i);
  if (check_errno() < 0) { fprintf(stderr, "errno was not preserved\n"); return 1; }
  printf("%d\n", s);
  return 0;
}
