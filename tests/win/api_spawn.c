/*
** api_spawn.c -- built with no capprof flag: a program that starts itself
** twice, once with CreateProcessW and once with msvcrt's _spawnl (which calls
** CreateProcess from inside msvcrt); each child makes 3 GetTickCount calls
** and exits with 7. Under `capprof run` every process writes its own dump.
*/
#include <windows.h>
#include <process.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
  if (argc > 1 && strcmp(argv[1], "child") == 0) {
    for (int i = 0; i < 3; i++) GetTickCount();
    return 7;
  }
  wchar_t self[MAX_PATH], cmd[MAX_PATH + 16];
  GetModuleFileNameW(NULL, self, MAX_PATH);
  swprintf(cmd, MAX_PATH + 16, L"\"%ls\" child", self);
  STARTUPINFOW si = { sizeof si };
  PROCESS_INFORMATION pi;
  if (!CreateProcessW(NULL, cmd, NULL, NULL, FALSE, 0, NULL, NULL, &si, &pi)) return 2;
  WaitForSingleObject(pi.hProcess, INFINITE);
  DWORD code = 0;
  GetExitCodeProcess(pi.hProcess, &code);
  CloseHandle(pi.hThread);
  CloseHandle(pi.hProcess);
  intptr_t rc = _spawnl(_P_WAIT, argv[0], argv[0], "child", NULL);
  GetTickCount();
  printf("children exited with %lu and %d\n", code, (int)rc);
  return code == 7 && rc == 7 ? 0 : 1;
}
