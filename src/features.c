/*
** features.c -- the features linked into the runtime, in the order the core
** calls their parts of a thread's and the process's life (struct cp_feature,
** core/core.h), and the order of their sections in a dump. The core walks
** these tables and never names a feature itself; tests/layout/deps.sh
** checks that it does not.
*/
#include "core/core.h"

const struct cp_feature *const cp_features[] = {
  &zone_feature,
  &intercept_feature,
  &dump_feature,
  &throttle_feature,
  &sample_feature,
  &patch_feature,
  &hooks_feature,
  NULL,
};

/* After the core's PROCESS, CLOCK, MODULES, NODES and THREADS
** (docs/dump-format.md): */
const struct cp_feature *const cp_dump_order[] = {
  &zone_feature,         /* STRINGS (zone names), ZONE_ISSUES */
  &dump_feature,         /* THREAD_MERGES, CALIBRATION */
  &throttle_feature,     /* THROTTLE */
  &patch_feature,        /* UNHOOKED */
  &sample_feature,       /* the sampling sections */
  &intercept_feature,    /* API, INTERCEPT, INTERCEPT_SKIPS */
  NULL,
};
