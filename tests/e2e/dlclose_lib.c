/* dlclose_lib.c -- the library dlclose.c loads and unloads. */
#include "e2e.h"

NOINLINE int lib_inner(int x) { SINK(x); return 1; }
NOINLINE int lib_outer(int n) { int s = 0; for (int i = 0; i < n; i++) s += lib_inner(i); return s; }
