/*
** cmd.h -- the subcommands of the capprof command-line tool (one file each
** in cmd/), dispatched by capprof.c, and the engines two of them share.
*/
#ifndef CAPPROF_CMD_H
#define CAPPROF_CMD_H

#include <stdio.h>

#include "model/cpd_reader.h"

/* Each subcommand gets argv with argv[0] set to its own name; returns the
** process exit status. */
int cmd_info(int argc, char **argv);
int cmd_tree(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_callers(int argc, char **argv);
int cmd_callees(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_merge(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_cflags(int argc, char **argv);      /* cmd_cflags.c */
int cmd_ldflags(int argc, char **argv);
int cmd_excludes(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_annotate(int argc, char **argv);
/* diff over two sets of runs (diff_runs.c); key 0 self, 1 total, 2 calls. */
int diff_runs(char **base, int nbase, char **after, int nafter, int key, int raw, double limit,
              int keep_modules);

/* callers (callees = 0) and callees (1): the shared engine in calls.c. */
int calls_main(int argc, char **argv, int callees);

/* One line on f saying how dump d was sampled (cmd_report.c); its process-wide
** sampling session, or NULL when it has none. */
const struct cpd_sample_session *samples_describe(FILE *f, const struct cpd_dump *d);
/* For each dump whose process-wide sampling did not run (the default's,
** refused by the kernel), the line saying why: its times are the hooks'. */
struct profile;
void samples_refused(FILE *f, const struct profile *p);

#endif /* CAPPROF_CMD_H */
