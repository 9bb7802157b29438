/*
** api_calls.c -- a program built with no capprof flag at all, for
** `capprof.exe run` (run-wine.sh): known numbers of GetTickCount,
** CreateFileW/CloseHandle and Sleep calls on the main thread and on two
** threads, a callback (qsort's comparator) that calls the API, a longjmp out
** of a comparator, a thread that ends by ExitThread, a DLL loaded after
** start (api_late.dll: 6 GetCurrentThreadId calls), and ExitProcess at the
** end. It prints the counts it made, for the test to compare with the dump.
*/
#include <windows.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>

static volatile LONG compares;
static jmp_buf escape;
static wchar_t path[MAX_PATH];

static int by_value(const void *a, const void *b)
{
  InterlockedIncrement(&compares);
  GetTickCount();
  return *(const int *)a - *(const int *)b;
}

static int escaping(const void *a, const void *b)
{
  (void)a;
  (void)b;
  longjmp(escape, 1);
}

static void files(int n)
{
  for (int i = 0; i < n; i++) {
    HANDLE h = CreateFileW(path, GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_WRITE, NULL,
                           OPEN_EXISTING, FILE_ATTRIBUTE_NORMAL, NULL);
    if (h == INVALID_HANDLE_VALUE) {
      fprintf(stderr, "CreateFileW failed: %lu\n", GetLastError());
      exit(2);
    }
    CloseHandle(h);
  }
}

static DWORD WINAPI worker(void *arg)
{
  int n = (int)(INT_PTR)arg;
  for (int i = 0; i < n; i++) GetTickCount();
  files(n);
  Sleep(1);
  if (n == 3) ExitThread(0);       /* never returns through the trampoline */
  return 0;
}

int main(void)
{
  GetTempPathW(MAX_PATH, path);
  wcscat(path, L"capprof_api_calls.txt");
  HANDLE h = CreateFileW(path, GENERIC_WRITE, 0, NULL, CREATE_ALWAYS, FILE_ATTRIBUTE_NORMAL, NULL);
  if (h == INVALID_HANDLE_VALUE) return 2;
  CloseHandle(h);

  SetLastError(1234);                    /* the last error crosses intercepted calls */
  GetTickCount();
  if (GetLastError() != 1234) {
    fprintf(stderr, "GetLastError changed: %lu\n", GetLastError());
    return 3;
  }
  for (int i = 0; i < 4; i++) GetTickCount();
  files(5);
  Sleep(1);
  Sleep(2);

  int v[64];
  for (int i = 0; i < 64; i++) v[i] = (i * 37) % 64;
  qsort(v, 64, sizeof v[0], by_value);
  if (setjmp(escape) == 0) qsort(v, 64, sizeof v[0], escaping);

  HMODULE late = LoadLibraryW(L"api_late.dll");
  DWORD (*late_work)(int) = late ? (DWORD (*)(int))(void (*)(void))
      GetProcAddress(late, "late_work") : NULL;
  if (!late_work) {
    fprintf(stderr, "api_late.dll: %lu\n", GetLastError());
    return 4;
  }
  late_work(6);
  FreeLibrary(late);

  HANDLE t[2];
  t[0] = CreateThread(NULL, 0, worker, (void *)(INT_PTR)7, 0, NULL);
  t[1] = CreateThread(NULL, 0, worker, (void *)(INT_PTR)3, 0, NULL);
  WaitForMultipleObjects(2, t, TRUE, INFINITE);
  CloseHandle(t[0]);
  CloseHandle(t[1]);
  DeleteFileW(path);
  char line[64];                         /* standard input is the program's */
  if (fgets(line, sizeof line, stdin)) printf("stdin: %s", line);
  printf("compares %ld\n", compares);
  fflush(stdout);
  ExitProcess(5);
}
