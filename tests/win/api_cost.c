/*
** api_cost.c -- built with no capprof flag: times 1,000,000 calls of
** GetTickCount (best of 5 rounds, QueryPerformanceCounter) and prints the
** time per call. Run alone and under `capprof run`, the difference is the
** cost of one intercepted call (run-wine.sh prints both; docs/run.md).
*/
#include <windows.h>
#include <stdio.h>

int main(void)
{
  LARGE_INTEGER f, a, b;
  QueryPerformanceFrequency(&f);
  double best = 1e30;
  volatile DWORD sink = 0;
  for (int r = 0; r < 5; r++) {
    QueryPerformanceCounter(&a);
    for (int i = 0; i < 1000000; i++) sink += GetTickCount();
    QueryPerformanceCounter(&b);
    double ns = (double)(b.QuadPart - a.QuadPart) * 1e9 / (double)f.QuadPart / 1e6;
    if (ns < best) best = ns;
  }
  printf("%.1f ns per GetTickCount call\n", best);
  return 0;
}
