/* probe.c -- built with hooks: with_calls() and without_calls() do the same
** work (a dependent multiply chain), but with_calls() also calls tiny() after
** every few steps, so that most of its elapsed time is the hooks of those
** calls. Sampled, the samples in capprof's hooks are counted apart: the
** CPU self time of with_calls() from the remaining samples stays close to
** without_calls()', where with them it would be several times larger. */
#include <stdio.h>
#include <stdlib.h>

volatile unsigned sink;

__attribute__((noinline)) void tiny(void) { sink++; }

__attribute__((always_inline, no_instrument_function))
static inline unsigned steps(unsigned x, unsigned n)
{
  for (unsigned i = 0; i < n; i++) {
    x = x * 2654435761u + i;
    __asm__ __volatile__("" : "+r"(x));
  }
  return x;
}

__attribute__((noinline)) void with_calls(unsigned n, unsigned k)
{
  unsigned x = sink;
  for (unsigned i = 0; i < n; i++) {
    x = steps(x, k);
    tiny();
  }
  sink = x;
}

__attribute__((noinline)) void without_calls(unsigned n, unsigned k)
{
  unsigned x = sink;
  for (unsigned i = 0; i < n; i++) {
    x = steps(x, k);
    __asm__ __volatile__("" ::: "memory");
  }
  sink = x;
}

int main(int argc, char **argv)
{
  unsigned rounds = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 20;
  unsigned k = argc > 2 ? (unsigned)strtoul(argv[2], NULL, 10) : 8;   /* steps per call */
  unsigned n = 8000000 / k;
  for (unsigned r = 0; r < rounds; r++) {
    with_calls(n, k);
    without_calls(n, k);
  }
  printf("%u\n", sink);
  return 0;
}
