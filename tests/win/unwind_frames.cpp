/*
** unwind_frames.cpp -- instrumented functions (built like pg_example.c, as
** /Gh /GH code) that are left by a C++ exception, an SEH exception and a
** longjmp; test_unwind.c checks the tree they leave.
*/
#include <setjmp.h>
#include <windows.h>

extern "C" {
int seh_guard(void (*fn)(int), int n);   /* seh_guard.c: __try/__except */

__attribute__((noinline)) void after(void) { __asm__ __volatile__("" ::: "memory"); }

__attribute__((noinline)) void cxx_thrower(int n)
{
  if (n == 0) throw 42;
  cxx_thrower(n - 1);
  after();                                  /* never reached */
}

/* An exception caught, then another instrumented call: it must be a child
** of the catcher, not of the dead thrower frames. */
__attribute__((noinline)) int cxx_catcher(void)
{
  try {
    cxx_thrower(3);
  } catch (int) {
    after();
    return 1;
  }
  return 0;
}

/* Caught, and the catcher's own exit is the next hook. */
__attribute__((noinline)) int cxx_catcher_noafter(void)
{
  try {
    cxx_thrower(2);
  } catch (int) {
    return 1;
  }
  return 0;
}

__attribute__((noinline)) void seh_thrower(int n)
{
  if (n == 0) RaiseException(0xE0C0FFEEu, 0, 0, NULL);
  seh_thrower(n - 1);
  after();
}

__attribute__((noinline)) int seh_catcher(void)
{
  int r = seh_guard(seh_thrower, 3);
  after();
  return r;
}

static jmp_buf jb;

__attribute__((noinline)) void lj_thrower(int n)
{
  if (n == 0) longjmp(jb, 1);
  lj_thrower(n - 1);
  after();
}

__attribute__((noinline)) int lj_catcher(void)
{
  if (setjmp(jb)) {
    after();
    return 1;
  }
  lj_thrower(3);
  return 0;
}
}
