/*
** tool.h -- helpers shared by every part of the capprof command-line tool
** (tool.c): error reporting, loading a dump, option parsing, output files
** and number formatting. The subcommands are declared in cmd/cmd.h.
*/
#ifndef CAPPROF_TOOL_H
#define CAPPROF_TOOL_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

#include "model/cpd_reader.h"

/* Print "capprof: <message>" on stderr; returns 1 (an exit status). */
int tool_error(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
/* Print "capprof: warning: <message>" on stderr, unless tool_quiet (set by
** the fuzzer, which feeds the model millions of absurd dumps). */
extern int tool_quiet;
void tool_warn(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

/* Progress on stderr for long work (loading, symbolizing, exporting):
** main sets tool_progress_on when stderr is a terminal and CAPPROF_PROGRESS
** allows, tool_progress_delay, the seconds of CPU time the command works
** before the first progress line (CAPPROF_PROGRESS, default 1), and the
** clock (the model has no platform code). */
extern int tool_progress_on;
extern double tool_progress_delay;
extern double (*tool_progress_clock)(void);   /* CPU seconds (term_cpu_seconds) */
/* "capprof: WHAT: 45%" (no percentage when total is 0), rewritten in place
** at most ten times a second once the command has worked the delay; cheap
** enough to call per node. Not thread-safe. */
void tool_progress(const char *what, uint64_t done, uint64_t total);
/* Clear the progress line, if one is shown: before other output on
** stderr, and at the end. */
void tool_progress_done(void);

/* The warnings tool_warn printed so far (the first 64, without the
** "capprof: warning: " prefix); *dropped gets how many more there were. */
size_t tool_warnings(const char *const **lines, size_t *dropped);

/* Load a dump or print the one-line error; NULL on failure. */
struct cpd_dump *tool_load(const char *path);

/* After getopt_long returned '?' or ':' (optstring starting with ':' and
** opterr = 0): print the one-line error; returns 2 (usage exit status). */
int tool_bad_option(const char *cmd, char **argv, int c);
/* Parse a number in [0, max] given to option opt; 0, or 1 after an error line. */
int tool_parse_num(const char *cmd, const char *opt, const char *s, double max, double *out);
/* stdout for NULL or "-", else a new file (NULL after an error line). */
FILE *tool_open_out(const char *path);
/* Flush and close (unless stdout); 0, or 1 after an error line. */
int tool_close_out(FILE *f, const char *path);

/* A duration for people: "812 ns", "3.25 us", "17.1 ms", "2.04 s". */
const char *fmt_ns(double ns, char *buf, size_t n);
/* A percentage "12.3%" of whole (0 when whole is 0). */
const char *fmt_pct(double part, double whole, char *buf, size_t n);
/* Decimal digits of v into buf (n >= 21); returns the length. No printf:
** exports format millions of numbers. */
size_t fmt_u64(uint64_t v, char *buf, size_t n);
/* An integer with thousands separators. */
const char *fmt_count(uint64_t v, char *buf, size_t n);
/* A mean count: as fmt_count when whole, else with one decimal ("2,345.5"). */
const char *fmt_mean(double v, char *buf, size_t n);

#endif /* CAPPROF_TOOL_H */
