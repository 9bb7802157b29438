/* prologue.c -- built with hooks and stack-clash protection: big() has a
** 256 KiB frame, so its prologue touches every page of it in a loop before
** the entry hook runs, and its body does next to nothing. Sampled, the
** samples in that loop find outer() on top of the shadow stack; their program
** counter is in big(), and the tool charges them to big(), as perf does:
** big()'s CPU self time is most of outer()'s inclusive, not outer()'s. */
#include <stdio.h>
#include <stdlib.h>

volatile char sinkc;

/* Not hooked; takes the frame's address, so that the whole array stays. */
__attribute__((noinline, no_instrument_function)) void touch(volatile char *p)
{
  p[0] = 1;
  sinkc = p[0];
}

__attribute__((noinline)) void big(void)
{
  volatile char buf[1 << 18];
  touch(buf);
}

__attribute__((noinline)) void outer(unsigned n)
{
  for (unsigned i = 0; i < n; i++) big();
}

int main(int argc, char **argv)
{
  unsigned rounds = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 20;
  for (unsigned r = 0; r < rounds; r++) outer(20000);
  printf("%d\n", sinkc);
  return 0;
}
