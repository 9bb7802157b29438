/* setuid_prog.c -- a program installed setuid root: it must ignore the
** caller's CAPPROF_* variables and write no dump unless it asks for one
** (argv[1] = "dump" PATH: capprof_dump(PATH), which must be mode 0600). */
#include <stdio.h>
#include <string.h>
#include <capprof/capprof.h>

__attribute__((noinline)) int work(int x) { __asm__ __volatile__("" : : "r"(x)); return x + 1; }

int main(int argc, char **argv)
{
  int s = 0;
  for (int i = 0; i < 100; i++) s += work(i);
  if (argc > 2 && !strcmp(argv[1], "dump")) {
    int rc = capprof_dump(argv[2], NULL, 0);
    if (rc) { printf("dump failed: %s\n", capprof_strerror(rc)); return 1; }
  }
  printf("ok %d\n", s);
  return 0;
}
