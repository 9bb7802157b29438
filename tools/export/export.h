/*
** export.h -- the one small interface every export format implements: write
** a whole profile to a stream. One format per file (export_*.c); cmd_export.c
** holds the table. The JSON schema is documented in docs/tool.md.
*/
#ifndef CAPPROF_EXPORT_H
#define CAPPROF_EXPORT_H

#include <stdio.h>

#include "model/profile.h"

struct exporter {
  const char *name;        /* --format value */
  const char *summary;     /* one line for --help */
  /* Write p (flat totals already computed) to f. Returns 0, or an exit
  ** status after printing the one-line error. Write errors are caught by
  ** the caller from ferror(f). */
  int (*write)(FILE *f, const struct profile *p);
};

/* Options of 'capprof export' the formats may read. */
struct export_opts {
  const char *out;         /* -o FILE, NULL for standard output */
  int per_thread;          /* callgrind: also one file per thread, OUT-01... */
};
extern struct export_opts export_opts;

extern const struct exporter export_json, export_csv, export_callgrind, export_folded,
    export_speedscope, export_html, export_pprof;

/* The HTML page (export_html.c) holds at most this many call-tree nodes over
** all its trees; above it, each tree keeps its paths with the most inclusive
** time and sums the rest, per parent, into one "[other]" node. 0: no limit.
** Set by --max-nodes of 'export' and 'diff'. */
#define EXPORT_HTML_MAX_NODES 1000000u
extern uint32_t export_html_max_nodes;

/* 'capprof diff --format=html': the page comparing the runs BASE with the
** runs NEW (one run per dump), first coloured by key (0 self, 1 incl, 2
** calls); functions matched as 'diff' does (keep: --keep-modules). Returns
** an exit status; errors are printed. */
int diff_html(char **base, int nbase, char **after, int nafter, int key, int raw, int keep,
              const char *out);

/* Copy the JSON text of in to out re-indented, two spaces per level
** (json_pretty.c). Returns 0, or -1 when in could not be read. */
int json_pretty(FILE *in, FILE *out);

/* s as a JSON string literal, quotes included; invalid UTF-8 becomes '?'. */
void json_string(FILE *f, const char *s);

/* One tree summing every thread of every dump (for formats with a single
** profile); 0 or an exit status after an error line. */
int export_merged_tree(const struct profile *p, struct prof_thread *out);

#endif /* CAPPROF_EXPORT_H */
