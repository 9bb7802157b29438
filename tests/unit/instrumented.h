/* instrumented.h -- functions of instrumented.c, built with the hooks. */
int probe_leaf(int x);
int probe_parent(int n);
