/*
** launch.h -- 'capprof run': the portable launcher (cmd_run.c) and what each
** platform's launch file provides (launch_posix.c: fork, exec, LD_PRELOAD;
** launch_win.c: a suspended process and capprof.dll loaded into it).
*/
#ifndef CAPPROF_RUN_H
#define CAPPROF_RUN_H

#include <stddef.h>

/* An environment setting for the program: value NULL removes name. */
struct run_setting {
  const char *name;
  const char *value;
};

#define RUN_SETTINGS_MAX 16

/* The runtime's variables 'capprof run' sets, named through their entry in
** the runtime's settings table: RUN_VAR(SAMPLE) is "CAPPROF_SAMPLE" (wide:
** RUN_WVAR), and a name the table lacks does not compile. */
enum run_var {
#define SETTING(id, type, dflt, lo, hi, help) RUN_VAR_##id,
#include "../../src/core/settings.def"
#undef SETTING
  RUN_VAR_COUNT
};
#define RUN_VAR(id)  ((void)RUN_VAR_##id, "CAPPROF_" #id)
#define RUN_WVAR(id) ((void)RUN_VAR_##id, L"CAPPROF_" #id)

struct run_opts {
  char **argv;             /* PROGRAM and its arguments, NULL-terminated */
  int quiet;               /* -q: no line naming the dumps */
  int no_api;              /* --no-api: the runtime only */
  struct run_setting env[RUN_SETTINGS_MAX];
  int nenv;
};

/* Create an empty file the runtimes of the process tree append their dump
** paths to (CAPPROF_RUN_LOG); fills path. 0, or -1 after an error line. */
int run_log_create(char *path, size_t n);

/* Start o->argv[0] (searched in PATH) with o->env applied and the runtime
** loaded into it (unless the program carries one already), wait for it and
** return its exit status the way a shell reports it (killed by signal S:
** 128 + S). Standard streams are the program's. On failure to start prints
** one 'capprof: ...' line and returns 127 (not found) or 126. */
int run_program(const struct run_opts *o);

#endif /* CAPPROF_RUN_H */
