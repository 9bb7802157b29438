/*
** emfile.c -- a program that ends with every descriptor taken
** (tests/harden/host.sh, issue 33 case 16): the dump cannot be written,
** and the line must name the cause.
*/
#include <fcntl.h>
#include <stdio.h>

static volatile unsigned sink;

__attribute__((noinline)) static unsigned work(unsigned x) { return x * 3u + 1u; }

int main(void)
{
  for (unsigned i = 0; i < 1000; i++) sink += work(i);
  int n = 0;
  while (open("/dev/null", O_RDONLY) >= 0) n++;
  printf("ok %u\n", sink);
  fflush(stdout);
  return n > 0 ? 0 : 2;
}
