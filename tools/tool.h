/*
** tool.h -- shared declarations of the capprof command-line tool: the
** subcommands (one file each), error reporting and number formatting.
*/
#ifndef CAPPROF_TOOL_H
#define CAPPROF_TOOL_H

#include <stddef.h>
#include <stdint.h>

#include "dumpread.h"

/* Each subcommand gets argv with argv[0] set to its own name; returns the
** process exit status. */
int cmd_info(int argc, char **argv);
int cmd_tree(int argc, char **argv);

/* Print "capprof: <message>" on stderr; returns 1 (an exit status). */
int tool_error(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
/* Print "capprof: warning: <message>" on stderr. */
void tool_warn(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

/* Load a dump or print the one-line error; NULL on failure. */
struct cpd_dump *tool_load(const char *path);

/* A duration for people: "812 ns", "3.25 us", "17.1 ms", "2.04 s". */
const char *fmt_ns(double ns, char *buf, size_t n);
/* An integer with thousands separators. */
const char *fmt_count(uint64_t v, char *buf, size_t n);

#endif /* CAPPROF_TOOL_H */
