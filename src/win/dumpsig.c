/*
** dumpsig.c (Windows) -- dumps on demand are not available on Windows.
** CAPPROF_DUMP_SIGNAL and CAPPROF_DUMP_ON_SIGNAL name POSIX signals, which
** Windows processes do not receive (a console's Ctrl+C and close events, and
** TerminateProcess, are other mechanisms with other rules), and the periodic
** CAPPROF_DUMP_INTERVAL shares their thread; the variables are ignored here
** (docs/runtime.md, docs/windows.md). Programs call capprof_dump() instead.
*/
#include "win.h"

void os_dumpsig_start(void)
{
}
