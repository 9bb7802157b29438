/*
** tls_cost.c -- what reading the thread's state pointer costs, the three
** ways a Windows runtime could do it: TlsGetValue (an API call that also
** clears GetLastError), MinGW GCC's __thread (emulated TLS: a call to
** __emutls_get_address), and the TEB slot read the runtime uses. Prints ns
** per read; a figure for docs/windows.md, not a check.
*/
#include <stdio.h>
#include <windows.h>

#include "../../src/win/win.h"

static __thread void *emu_slot;

#define N 20000000

/* Each read in a function of its own, as in a hook: nothing is hoisted. */
static DWORD idx;
__attribute__((noinline)) static void *read_api(void) { return TlsGetValue(idx); }
__attribute__((noinline)) static void *read_emutls(void) { return emu_slot; }
__attribute__((noinline)) static void *read_teb(void) { return win_tls_get(); }

static double per_read(LARGE_INTEGER a, LARGE_INTEGER b, LARGE_INTEGER f)
{
  return (double)(b.QuadPart - a.QuadPart) * 1e9 / (double)f.QuadPart / N;
}

int main(void)
{
  idx = TlsAlloc();
  TlsSetValue(idx, &idx);
  emu_slot = &idx;
  os_set_thread((struct cp_thread *)&idx);
  LARGE_INTEGER f, a, b;
  QueryPerformanceFrequency(&f);
  volatile uintptr_t sink = 0;
  double best[3] = { 1e30, 1e30, 1e30 };
  for (int r = 0; r < 3; r++) {
    QueryPerformanceCounter(&a);
    for (int i = 0; i < N; i++) sink += (uintptr_t)read_api();
    QueryPerformanceCounter(&b);
    if (per_read(a, b, f) < best[0]) best[0] = per_read(a, b, f);
    QueryPerformanceCounter(&a);
    for (int i = 0; i < N; i++) sink += (uintptr_t)read_emutls();
    QueryPerformanceCounter(&b);
    if (per_read(a, b, f) < best[1]) best[1] = per_read(a, b, f);
    QueryPerformanceCounter(&a);
    for (int i = 0; i < N; i++) sink += (uintptr_t)read_teb();
    QueryPerformanceCounter(&b);
    if (per_read(a, b, f) < best[2]) best[2] = per_read(a, b, f);
  }
  printf("thread pointer read: TlsGetValue %.2f ns, __thread (emutls) %.2f ns, TEB slot %.2f ns\n",
         best[0], best[1], best[2]);
  return sink == 0;
}
