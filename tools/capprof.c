/*
** capprof.c -- the capprof command: dispatches to one subcommand per file
** (cmd_*.c), in the style of git and uftrace.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "cmd/display.h"
#include "model/tool.h"
#include "platform/term.h"
#include "sym/symbols.h"

struct command {
  const char *name;
  int (*run)(int argc, char **argv);
  const char *summary;
};

static const struct command commands[] = {
  { "info", cmd_info, "header, calibration, modules and threads of a dump" },
  { "tree", cmd_tree, "the call tree of each thread (CAP view)" },
  { "report", cmd_report, "flat profile per function, over threads and dumps" },
  { "callers", cmd_callers, "who calls a function, with counts and times" },
  { "callees", cmd_callees, "what a function calls, with counts and times" },
  { "export", cmd_export, "json, csv, callgrind, folded, speedscope, html or pprof output" },
  { "merge", cmd_merge, "combine dumps of several runs into one dump" },
  { "diff", cmd_diff, "per-function changes between two dumps" },
  { "excludes", cmd_excludes, "compiler flags leaving out throttled or too short functions" },
  { "cflags", cmd_cflags, "recommended instrumentation flags for a compiler" },
  { "ldflags", cmd_ldflags, "flags that link the capprof runtime" },
  { "run", cmd_run, "run a program, its library calls profiled (no recompile)" },
  { "annotate", cmd_annotate, "a function's source lines with their samples" },
};

static void usage(FILE *f)
{
  fprintf(f, "usage: capprof <command> [options] DUMP...\n\ncommands:\n");
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
    fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
  fprintf(f, "\n'capprof <command> --help' describes a command's options.\n"
             "Programs are profiled by building them with the flags 'capprof cflags CC'\n"
             "prints (or /Gh /GH) and linking libcapprof ('capprof ldflags'), or without\n"
             "recompiling by 'capprof run -- PROGRAM' (library calls only); see docs/ and\n"
             "'man capprof'.\n");
  fputs(display_help, f);
}

/* Progress on stderr (tool.h): on a terminal only, after CAPPROF_PROGRESS
** seconds of work (default 1; off: never). */
static void progress_setup(void)
{
  const char *v = getenv("CAPPROF_PROGRESS");
  char *end = NULL;
  double delay = v && *v ? strtod(v, &end) : 1;
  if (v && *v && (*end || !(delay >= 0))) return;          /* off, or not a number */
  tool_progress_delay = delay;
  tool_progress_clock = term_cpu_seconds;
  tool_progress_on = term_is_tty(stderr);
}

int main(int argc, char **argv)
{
  if (display_options(&argc, argv) != 0) return 2;
  progress_setup();
  if (argc < 2) {
    usage(stderr);
    return 2;
  }
  if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
    usage(stdout);
    return 0;
  }
  if (!strcmp(argv[1], "--version")) {
    printf("capprof %s\n", CAPPROF_VERSION_STRING);
    return 0;
  }
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
    if (strcmp(argv[1], commands[i].name)) continue;
    int status = commands[i].run(argc - 1, argv + 1);
    tool_progress_done();
    display_end();
    /* Output was written, but some module was missing or rebuilt. */
    return status == 0 && sym_had_problems() ? 3 : status;
  }
  tool_error("unknown command '%s' (see 'capprof --help')", argv[1]);
  return 2;
}
