/*
** term_win.c -- the terminal on Windows (term.h): _isatty and the console
** buffer's width. No pager: Windows consoles scroll back, and there is no
** 'less' to rely on, so term_pager_start always declines.
*/
#include <io.h>
#include <windows.h>

#include "platform/term.h"

double term_cpu_seconds(void)
{
  FILETIME created, ended, kernel, user;
  if (!GetProcessTimes(GetCurrentProcess(), &created, &ended, &kernel, &user)) return 0;
  ULARGE_INTEGER k, u;                   /* 100 ns units */
  k.LowPart = kernel.dwLowDateTime;
  k.HighPart = kernel.dwHighDateTime;
  u.LowPart = user.dwLowDateTime;
  u.HighPart = user.dwHighDateTime;
  return (double)(k.QuadPart + u.QuadPart) * 1e-7;
}

int term_is_tty(FILE *f)
{
  return _isatty(_fileno(f));
}

int term_width(void)
{
  CONSOLE_SCREEN_BUFFER_INFO info;
  if (GetConsoleScreenBufferInfo(GetStdHandle(STD_OUTPUT_HANDLE), &info))
    return info.srWindow.Right - info.srWindow.Left + 1;
  return 0;
}

int term_pager_start(const char *cmd)
{
  (void)cmd;
  return -1;
}

void term_pager_end(void)
{
}
