/*
** api_seh.c -- built with no capprof flag (clang, MinGW target, for
** __try/__except): RaiseException from a qsort comparator, through msvcrt's
** qsort (intercepted), handled by __except in main; twice.
*/
#include <windows.h>
#include <stdio.h>
#include <stdlib.h>

static int raising(const void *a, const void *b)
{
  (void)a;
  (void)b;
  GetTickCount();
  RaiseException(0xE0C0FFEE, 0, 0, NULL);
  return 0;
}

int main(void)
{
  int v[4] = { 4, 3, 2, 1 }, handled = 0;
  for (int i = 0; i < 2; i++) {
    __try {
      qsort(v, 4, sizeof v[0], raising);
    } __except (GetExceptionCode() == 0xE0C0FFEE ? EXCEPTION_EXECUTE_HANDLER
                                                 : EXCEPTION_CONTINUE_SEARCH) {
      handled++;
    }
  }
  for (int i = 0; i < 3; i++) GetTickCount();
  printf("handled %d\n", handled);
  return handled == 2 ? 0 : 1;
}
