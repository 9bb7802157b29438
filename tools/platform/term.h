/*
** term.h -- what the tool needs from the terminal, one file per platform
** (term_posix.c, term_win.c): whether a stream is a terminal, its width,
** a pager for long output as git has, and the CPU time used.
*/
#ifndef CAPPROF_TERM_H
#define CAPPROF_TERM_H

#include <stdio.h>

/* Whether f writes to a terminal. */
int term_is_tty(FILE *f);
/* CPU seconds the process has used, for progress lines (tool.h). */
double term_cpu_seconds(void);
/* Columns of the terminal stdout writes to, or 0 when unknown. */
int term_width(void);
/* Send stdout through the pager command cmd (run by the shell). Returns 0
** when stdout now goes to it, -1 when it could not start (stdout is left
** alone). */
int term_pager_start(const char *cmd);
/* Flush stdout, close the pager's end and wait for the pager to exit. */
void term_pager_end(void);

#endif /* CAPPROF_TERM_H */
