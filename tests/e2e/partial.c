/* partial.c -- only this file is instrumented; main lives in partial_noinstr.c. */
#include "e2e.h"

NOINLINE void lib_inner(int x) { SINK(x); }
NOINLINE void lib_outer(int n) { for (int i = 0; i < n; i++) lib_inner(i); }
void *partial_map[] = { (void *)lib_outer, (void *)lib_inner };
