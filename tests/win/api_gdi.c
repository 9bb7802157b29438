/*
** api_gdi.c -- built with no capprof flag, linked with gdi32: GDI calls on
** the main thread and on a second one. Under `capprof run` with GDI32
** selected, the runtime sets each thread's GDI batch limit to 1 (WAP's rule;
** run-wine.sh sees the calls in Wine's relay trace) and counts the calls.
*/
#include <windows.h>
#include <stdio.h>

static void draw(int n)
{
  for (int i = 0; i < n; i++) {
    HDC dc = CreateCompatibleDC(NULL);
    if (dc) DeleteDC(dc);
    GetStockObject(BLACK_PEN);
  }
}

static DWORD WINAPI worker(void *arg)
{
  (void)arg;
  draw(2);
  return 0;
}

int main(void)
{
  draw(3);
  HANDLE t = CreateThread(NULL, 0, worker, NULL, 0, NULL);
  WaitForSingleObject(t, INFINITE);
  CloseHandle(t);
  printf("batch limit %lu\n", GdiGetBatchLimit());
  return 0;
}
