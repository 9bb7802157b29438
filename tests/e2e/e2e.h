/*
** e2e.h -- helpers for the end-to-end test programs: NOINLINE keeps every
** function a real call at any optimisation level, and MAP writes a
** function's address to the map file named by $E2E_MAP for the checker.
*/
#ifndef E2E_H
#define E2E_H
#include <stdio.h>
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))

static inline FILE *e2e_map(void)
{
  static FILE *f;
  if (!f) f = fopen(getenv("E2E_MAP") ? getenv("E2E_MAP") : "/dev/null", "w");
  return f;
}
#define MAP(fn) fprintf(e2e_map(), "%s %p\n", #fn, (void *)(fn))
#define MAP_DONE() fflush(e2e_map())

/* Keep the optimiser from removing calls or merging functions. */
#define SINK(x) __asm__ __volatile__("" : : "r"(x) : "memory")
#endif
