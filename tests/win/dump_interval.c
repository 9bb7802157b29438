/* dump_interval.c -- CAPPROF_DUMP_INTERVAL on Windows (src/dump/dumpsig_win.c):
** run with CAPPROF_DUMP_INTERVAL=0.25 and CAPPROF_OUTPUT=interval.capprof,
** the program works for 1.5 s and then counts the periodic dumps the runtime
** wrote meanwhile (interval.capprof, interval.1.capprof...): three or more. */
#include <stdio.h>
#include <windows.h>

static volatile unsigned sink;

__attribute__((noinline)) void work(void)
{
  for (unsigned i = 0; i < 1000; i++) sink += i;
}

static int count_dumps(int remove)
{
  WIN32_FIND_DATAA fd;
  int n = 0;
  HANDLE h = FindFirstFileA("interval*.capprof", &fd);
  if (h == INVALID_HANDLE_VALUE) return 0;
  do {
    n++;
    if (remove) DeleteFileA(fd.cFileName);
  } while (FindNextFileA(h, &fd));
  FindClose(h);
  return n;
}

int main(void)
{
  count_dumps(1);                        /* a previous run's */
  DWORD t0 = GetTickCount();
  while (GetTickCount() - t0 < 1500) {
    work();
    Sleep(5);
  }
  int n = count_dumps(0);
  printf("%d periodic dumps in 1.5 s at 0.25 s\n", n);
  return n >= 3 ? 0 : 1;
}
