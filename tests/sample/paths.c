/*
** paths.c -- known per-call-path counts in the default run (sampling,
** unhooking): an unhooked function's later calls are counted on each call
** path (asm/fentry_x86_64.S's counting stubs), so `capprof tree` and the
** JSON export give exact counts (issue 36). mid and warm take ~4 us a call
** (not short: they keep their hooks); leaf_a, chain_f and chain_g are
** short and frequent, and lose theirs after 10,000 calls (the default while
** sampling) and ~1,500 more to learn their return sites.
**   main -> warm 20,000, warm -> leaf_a 20,000 (unhooked on this path)
**   main -> mid 12,345, mid -> leaf_a 12,345 (every call after unhooking)
**   main -> rec, rec -> rec 10 times (11 deep), the deepest -> leaf_a 100
**   main -> chain_f 30,000, chain_f -> chain_g once a call: chain_g is
**   unhooked, then chain_f (its only callee is): chain_g's later calls are
**   counted under main, the nearest hooked caller, marked [caller unhooked]
** Prints "ok" when the program ran; tests/sample/paths.py checks the dump.
*/
#include <stdio.h>

#define NOINLINE __attribute__((noinline))
static volatile unsigned sink;

/* ~4 us of work in the caller itself (no call: a callee would be unhooked,
** and then its caller, whose only callee it is). */
#define SPIN() for (unsigned k = 0; k < 4000; k++) sink += k

NOINLINE unsigned leaf_a(unsigned x) { sink += x; return x * 3u; }
NOINLINE unsigned chain_g(unsigned x) { sink += x; return x + 7u; }
NOINLINE unsigned chain_f(unsigned x) { return chain_g(x) ^ 5u; }

NOINLINE void warm(unsigned i)
{
  SPIN();
  sink += leaf_a(i);
}

NOINLINE void mid(unsigned i)
{
  SPIN();
  sink += leaf_a(i);
}

NOINLINE void rec(int depth)
{
  if (depth > 1) {
    rec(depth - 1);
    sink += 1;                        /* not a tail call */
    return;
  }
  for (unsigned i = 0; i < 100; i++) sink += leaf_a(i);
}

int main(void)
{
  for (unsigned i = 0; i < 20000; i++) warm(i);
  for (unsigned i = 0; i < 12345; i++) mid(i);
  rec(11);
  for (unsigned i = 0; i < 30000; i++) sink += chain_f(i);
  printf("ok\n");
  return 0;
}
