/*
** seh_guard.c -- calls fn(n) inside __try/__except, catching whatever SEH
** exception it raises. Built with clang (MinGW GCC has no __try), without
** hooks: the frames it unwinds are the instrumented ones in between.
*/
#include <windows.h>

int seh_guard(void (*fn)(int), int n);

int seh_guard(void (*fn)(int), int n)
{
  __try {
    fn(n);
  } __except (GetExceptionCode() == 0xE0C0FFEEu ? EXCEPTION_EXECUTE_HANDLER
                                                : EXCEPTION_CONTINUE_SEARCH) {
    return 1;
  }
  return 0;
}
