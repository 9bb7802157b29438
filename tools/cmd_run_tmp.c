/* TEMPORARY driver of run_win.c until cmd_run.c (branch run) lands. */
#include <stdlib.h>
#include <string.h>
#include <windows.h>
#include "run.h"
#include "tool.h"

int cmd_run(int argc, char **argv)
{
  int i = 1;
  struct run_request rq = { 0 };
  const char *api = "default";
  for (; i < argc; i++) {
    if (!strcmp(argv[i], "--")) { i++; break; }
    if (!strncmp(argv[i], "--api=", 6)) api = argv[i] + 6;
    else if (!strcmp(argv[i], "--no-api")) rq.no_api = 1;
    else if (!strncmp(argv[i], "--output=", 9)) SetEnvironmentVariableA("CAPPROF_OUTPUT", argv[i] + 9);
    else if (argv[i][0] == '-') return tool_error("run: unknown option %s", argv[i]), 2;
    else break;
  }
  if (i >= argc) return tool_error("run: no program"), 2;
  if (!rq.no_api) SetEnvironmentVariableA("CAPPROF_API", api);
  rq.argc = argc - i;
  rq.argv = argv + i;
  return run_platform(&rq);
}
