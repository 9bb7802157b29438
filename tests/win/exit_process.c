/*
** exit_process.c -- an instrumented program (built like pg_example.c) that
** ends with ExitProcess, so no atexit handler runs: the runtime's TLS
** callback must still write the dump. Counts in exit_process.expect.
*/
#include <windows.h>

__attribute__((noinline)) int step(int i)
{
  __asm__ __volatile__("" ::: "memory");
  return i + 1;
}

__attribute__((noinline)) int run(int n)
{
  int s = 0;
  for (int i = 0; i < n; i++) s += step(i);
  return s;
}

int main(void)
{
  ExitProcess(run(25) == 325 ? 0 : 1);
}
