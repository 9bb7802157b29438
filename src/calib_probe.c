/*
** calib_probe.c -- the only runtime code built with the compiler's hooks on:
** an empty function whose instrumented calls clock_calibrate_probe times, and
** its uninstrumented twin. CMake gives this file the hook flags.
*/
#include "internal.h"

CP_NOINLINE void cp_calib_instrumented(void)
{
  CP_BARRIER();
}

CP_NOINLINE CP_NOINSTR void cp_calib_plain(void)
{
  CP_BARRIER();
}

