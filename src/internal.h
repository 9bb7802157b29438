/*
** internal.h -- every runtime header at once, for the unit tests (tests/unit)
** that reach into several modules. Runtime files include only the headers
** they use: the core's (core/core.h), the OS layer's (os.h), the hot path's
** (hooks/hotpath.h) and one per feature.
*/
#ifndef CAPPROF_INTERNAL_H
#define CAPPROF_INTERNAL_H

#include "core/core.h"
#include "os.h"
#include "hooks/hotpath.h"
#include "throttle/throttle.h"
#include "patch/patch.h"
#include "zone/zone.h"
#include "intercept/intercept.h"
#include "dump/dump.h"

#endif /* CAPPROF_INTERNAL_H */
