/*
** features.c -- the features linked into the runtime, in the order the core
** calls their parts of a thread's and the process's life (struct cp_feature,
** internal.h). The core walks this table and never names a feature itself;
** tests/layout/deps.sh checks that it does not.
*/
#include "core/core.h"

const struct cp_feature *const cp_features[] = {
  &zone_feature,
  &intercept_feature,
  &throttle_feature,
  &sample_feature,
  &patch_feature,
  NULL,
};
