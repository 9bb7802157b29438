/*
** calib_probe.c -- the only runtime code built with the compiler's hooks on:
** a small function whose instrumented calls the clock's calibration times
** (clock_calibrate_probe), and its uninstrumented twin, registered with the
** core as the hooks' part (hooks_feature). CMake gives this file the hook
** flags. The function takes two arguments and returns a value, as most do:
** its arguments live across the entry hook, so the instrumented one keeps
** them in registers it must save and restore, a cost of the hooks that an
** empty function would not show (asm/fentry_x86_64.S has the twin for GCC's
** after-inlining hooks).
*/
#include "../core/core.h"

long cp_calib_instrumented(long a, long b) CP_HIDDEN;
long cp_calib_plain(long a, long b) CP_HIDDEN;
#ifdef CAPPROF_HAVE_FENTRY
long cp_calib_fentry(long a, long b) CP_HIDDEN;      /* asm/fentry_x86_64.S */
#endif

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

static const struct cp_calib calib = {
  cp_calib_plain,
  {
    cp_calib_instrumented,                 /* CP_PROBE_CYG */
#ifdef CAPPROF_HAVE_FENTRY
    cp_calib_fentry,                       /* CP_PROBE_FENTRY */
#else
    NULL,
#endif
  },
};

/* The hooks' part in the core's life cycle (src/features.c): the probe
** whose calls calibrate what they cost. */
const struct cp_feature hooks_feature = {
  .name = "hooks",
  .calib = &calib,
};
