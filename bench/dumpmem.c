/* dumpmem.c -- bench/churn.sh: the peak memory a dump adds, for 2^21 call
** paths (a binary tree of calls): VmHWM before and after capprof_dump(). */
#include <stdio.h>
#include <string.h>
#include <capprof/capprof.h>
__attribute__((noinline)) void b(int d);
__attribute__((noinline)) void a(int d) { if (d) { a(d - 1); b(d - 1); } __asm__ volatile(""); }
__attribute__((noinline)) void b(int d) { if (d) { a(d - 1); b(d - 1); } __asm__ volatile(""); }
static long hwm(void)
{
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  long kb = -1;
  while (fgets(line, sizeof line, f)) if (!strncmp(line, "VmHWM:", 6)) sscanf(line + 6, "%ld", &kb);
  fclose(f);
  return kb;
}
int main(int argc, char **argv)
{
  a(20);
  long before = hwm();
  capprof_dump(argc > 1 ? argv[1] : "dumpmem.capprof", NULL, 0);
  long after = hwm();
  printf("peak RSS before dump %ld KiB, after %ld KiB: the dump added %ld KiB\n", before, after, after - before);
  return 0;
}
