/*
** calib_probe.c -- the only runtime code built with the compiler's hooks on:
** a small function whose instrumented calls clock_calibrate_probe times, and
** its uninstrumented twin. CMake gives this file the hook flags. The function
** takes two arguments and returns a value, as most do: its arguments live
** across the entry hook, so the instrumented one keeps them in registers it
** must save and restore, a cost of the hooks that an empty function would
** not show (asm/fentry_x86_64.S has the twin for GCC's after-inlining hooks).
*/
#include "../core/core.h"

CP_NOINLINE long cp_calib_instrumented(long a, long b)
{
  CP_BARRIER();
  return a + b;
}

CP_NOINLINE CP_NOINSTR long cp_calib_plain(long a, long b)
{
  CP_BARRIER();
  return a + b;
}
