/*
** iat_none.c (Win32 x86) -- API interception is implemented for x64 only
** (src/intercept/iat_win.c, asm/intercept_x64.asm): on 32-bit Windows `capprof run`
** finds no interception and says so (docs/windows.md).
*/
#include "../win/win.h"

int os_intercept_start(void)
{
  os_report("capprof: API interception is implemented for x64 Windows only");
  return CPD_IS_UNSUPPORTED;
}

void iat_thread_attach(void) {}

void iat_run_ready(void) {}
