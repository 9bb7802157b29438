/*
** dumpsig.c (Windows) -- dumps on demand on Windows: CAPPROF_DUMP_INTERVAL
** (a dump every N seconds) runs as on POSIX, on a thread of the runtime that
** sleeps between dumps and takes the runtime lock through capprof_dump.
** CAPPROF_DUMP_SIGNAL and CAPPROF_DUMP_ON_SIGNAL name POSIX signals, which
** Windows processes do not receive (a console's Ctrl+C and close events and
** TerminateProcess follow other rules): they are refused with one line
** (docs/runtime.md, docs/windows.md); programs call capprof_dump() instead.
*/
#include <stdlib.h>
#include <string.h>

#include "../win/win.h"
#include "../core/settings.h"

static DWORD interval_ms;

static DWORD WINAPI dump_thread(LPVOID arg)
{
  (void)arg;
  for (;;) {
    Sleep(interval_ms);
    if (cp_g.finished) return 0;
    char path[1100] = "", msg[1400];
    int rc = capprof_dump(NULL, path, sizeof path);
    if (rc == 0 && !settings_bool(SET_VERBOSE)) continue;
    strcpy(msg, rc ? "capprof: cannot write dump " : "capprof: wrote ");
    strncat(msg, path, 1100);
    if (rc) {
      strcat(msg, ": ");
      strcat(msg, capprof_strerror(rc));
    }
    strcat(msg, " (");
    strcat(msg, settings_name(SET_DUMP_INTERVAL));
    strcat(msg, ")");
    os_report(msg);
  }
}

void os_dumpsig_start(void)
{
  const char *sig = settings_str(SET_DUMP_SIGNAL), *last = settings_str(SET_DUMP_ON_SIGNAL);
  const char *every = settings_str(SET_DUMP_INTERVAL);
  char msg[200];
  if ((sig && *sig) || (last && *last)) {
    settings_message(msg, sizeof msg, SET_DUMP_SIGNAL, " and ");
    strcat(msg, settings_name(SET_DUMP_ON_SIGNAL));
    strcat(msg, ": Windows has no signals; ignored (use ");
    strcat(msg, settings_name(SET_DUMP_INTERVAL));
    strcat(msg, " or capprof_dump())");
    os_report(msg);
  }
  if (!every || !*every) return;
  char *end;
  double s = strtod(every, &end);
  if (*end || !(s > 0) || s > 1e6) {
    os_report(settings_message(msg, sizeof msg, SET_DUMP_INTERVAL, ": not a number of seconds"));
    return;
  }
  interval_ms = s * 1000 < 1 ? 1 : (DWORD)(s * 1000);
  /* Runs no DllMain work of ours and never waits for the loader lock that
  ** may be held here (a hook inside DllMain can start the runtime). */
  HANDLE h = CreateThread(NULL, 64 * 1024, dump_thread, NULL, 0, NULL);
  if (!h) os_report("capprof: cannot start the thread for periodic dumps");
  else CloseHandle(h);
}
