/*
** run.h -- `capprof run`: the portable command (cmd_run.c) and the launcher
** each platform implements once (run_win.c on Windows).
*/
#ifndef CAPPROF_RUN_H
#define CAPPROF_RUN_H

struct run_request {
  int argc;          /* PROGRAM and its arguments */
  char **argv;
  int no_api;        /* --no-api: runtime only */
  int no_runtime;    /* do not load the runtime (the program has it) */
};

/* Start the program with the runtime loaded (settings are in the
** environment already), wait for it; returns its exit status, or 126/127
** after an error line when it could not be started. */
int run_platform(const struct run_request *rq);

#endif
