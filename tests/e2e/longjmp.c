/* longjmp.c -- longjmp out of instrumented frames, also out of recursion. */
#include <setjmp.h>
#include <capprof/capprof.h>
#include "e2e.h"

static jmp_buf env;
NOINLINE void after(void) { SINK(0); }
NOINLINE void deep(int n) { if (n == 0) longjmp(env, 1); deep(n - 1); SINK(n); }
NOINLINE void jumper(void) { deep(3); }
NOINLINE void catcher(void)
{
  if (setjmp(env) == 0) jumper();
  after();                      /* must land under catcher, not under deep */
}
NOINLINE void rec_jump(int n, jmp_buf *b) { if (n == 0) longjmp(*b, 1); rec_jump(n - 1, b); SINK(n); }
NOINLINE void rec_catch(int n)
{
  jmp_buf b;
  if (n > 0) rec_catch(n - 1);
  if (n == 2) { if (setjmp(b) == 0) rec_jump(4, &b); after(); }
}

int main(void)
{
  MAP(main); MAP(after); MAP(deep); MAP(jumper); MAP(catcher); MAP(rec_jump); MAP(rec_catch); MAP_DONE();
  capprof_set_thread_name("main");
  for (int i = 0; i < 4; i++) catcher();
  after();
  rec_catch(3);
  return 0;
}
