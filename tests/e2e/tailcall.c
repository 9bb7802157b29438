/* tailcall.c -- sibling (tail) calls under gcc -pg -mfentry: a function that
** ends in a jump to another instrumented function, a chain of them, a jump
** into code without hooks that calls back, and recursion in tail position.
** The jumped-to function appears beside its jumper, under the jumper's
** caller: the jumper's frame is gone, as in the uninstrumented program.
** e2e: cflags -O2 -foptimize-sibling-calls */
#include <capprof/capprof.h>
#include "e2e.h"

int plain(int x);                      /* tailcall_noinstr.c: no hooks */
NOINLINE int leaf(int x) { SINK(x); return x + 1; }
NOINLINE int to_leaf(int x) { SINK(x); return leaf(x + 1); }
NOINLINE int chain1(int x) { SINK(x); return leaf(x * 2); }
NOINLINE int chain2(int x) { SINK(x); return chain1(x + 3); }
NOINLINE int to_plain(int x) { SINK(x); return plain(x); }
NOINLINE int callback(int x) { SINK(x); return x - 1; }
NOINLINE int count_down(int n) { SINK(n); if (n == 0) return leaf(0); return count_down(n - 1); }
NOINLINE int caller(int x) { int r = to_leaf(x); SINK(r); return r + leaf(r); }

int main(void)
{
  MAP(main); MAP(leaf); MAP(to_leaf); MAP(chain1); MAP(chain2); MAP(to_plain);
  MAP(callback); MAP(count_down); MAP(caller); MAP_DONE();
  capprof_set_thread_name("main");
  int s = 0;
  for (int i = 0; i < 10; i++) s += to_leaf(i);
  for (int i = 0; i < 7; i++) s += chain2(i);
  for (int i = 0; i < 5; i++) s += to_plain(i);
  for (int i = 0; i < 3; i++) s += caller(i);
  s += count_down(6);
  printf("%d\n", s);
  return 0;
}
