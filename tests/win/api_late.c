/*
** api_late.c -- a DLL built with no capprof flag that api_calls.exe loads
** with LoadLibraryW after start: its imports of kernel32 are patched when
** LoadLibraryW returns (src/intercept/iat_win.c watches it).
*/
#include <windows.h>

__declspec(dllexport) DWORD late_work(int n)
{
  DWORD sum = 0;
  for (int i = 0; i < n; i++) sum += GetCurrentThreadId();
  return sum;
}
