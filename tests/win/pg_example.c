/*
** pg_example.c -- the end-to-end Windows example: built with
** -pg -mfentry -mfentry-name=_penter -minstrument-return=call, so that GCC
** calls _penter as each function's first instruction (where MSVC /Gh puts
** it) and __return__ (linked to _pexit) right before each ret, as /GH does.
** Its exact call counts are in pg_example.expect.
*/
#include <stdio.h>
#include <windows.h>

__attribute__((noinline)) int leaf(int x)
{
  __asm__ __volatile__("" ::: "memory");
  return x * 3 + 1;
}

__attribute__((noinline)) int fib(int n)
{
  return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

__attribute__((noinline)) int loop(int k)
{
  int s = 0;
  for (int i = 0; i < k; i++) s += leaf(i);
  return s;
}

/* Sets GetLastError, then calls through instrumented code: it must survive. */
__attribute__((noinline)) int keeps_last_error(void)
{
  SetLastError(4321);
  leaf(1);
  return GetLastError() == 4321;
}

static DWORD WINAPI worker(void *arg)
{
  (void)arg;
  return (DWORD)(loop(7) + fib(5));
}

int main(void)
{
  int r = fib(10);                       /* 177 calls of fib */
  r += loop(100);                        /* 100 calls of leaf */
  HANDLE h = CreateThread(NULL, 0, worker, NULL, 0, NULL);
  if (!h) return 2;
  WaitForSingleObject(h, INFINITE);
  CloseHandle(h);
  if (!keeps_last_error()) {
    printf("GetLastError was not preserved\n");
    return 1;
  }
  printf("pg_example: %d\n", r);
  return 0;
}
