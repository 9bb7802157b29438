/*
** quick_exit.c -- a program that ends with quick_exit() (tests/harden/
** host.sh, issue 33 case 14): its at_quick_exit handler runs, then the
** dump must be written with every call, and the exit status kept.
*/
#include <stdio.h>
#include <stdlib.h>

static volatile unsigned sink;

__attribute__((noinline)) static unsigned work(unsigned x) { return x * 3u + 1u; }

static void said(void) { puts("handler"); fflush(stdout); }

int main(void)
{
  for (unsigned i = 0; i < 1000; i++) sink += work(i);
  at_quick_exit(said);
  printf("ok %u\n", sink);
  fflush(stdout);
  quick_exit(3);
}
