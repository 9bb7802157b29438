/*
** filter.h -- the filters 'report', 'tree' and 'export' share, in the
** style of uftrace's and pprof's options: threads by id or name, focus on a
** function's subtrees, hide a function (its time charged to its caller),
** and an absolute time threshold.
*/
#ifndef CAPPROF_FILTER_H
#define CAPPROF_FILTER_H

#include <getopt.h>

#include "model/profile.h"
#include "model/weight.h"

#define FILTER_MAX 32

struct filter {
  const char *thread;              /* -t: a thread id or name, or NULL */
  const char *focus[FILTER_MAX];   /* --focus: names or globs */
  const char *hide[FILTER_MAX];    /* --hide */
  int nfocus, nhide;
  double min_ns;                   /* --time-filter, 0: none */
  int raw;                         /* judge min_ns on raw times */
  enum prof_weight weight;         /* --weight: the figure every view ranks by */
};

/* The long options, to append to a command's table (getopt values 0x200..). */
#define FILTER_LONGOPTS                                          \
  { "thread", required_argument, NULL, 't' },                    \
  { "focus", required_argument, NULL, 0x200 },                   \
  { "hide", required_argument, NULL, 0x201 },                    \
  { "time-filter", required_argument, NULL, 0x202 },             \
  { "min-time", required_argument, NULL, 0x202 },               \
  { "weight", required_argument, NULL, 0x203 }

/* The help lines of the filter options. */
extern const char filter_help[];

/* Whether getopt's c is a filter option; if so it is stored in f. Returns 1
** when handled, 0 when not a filter option, -1 after an error line (a usage
** error: exit status 2). */
int filter_option(const char *cmd, int c, const char *arg, struct filter *f);

/* Whether a thread matches a -t value (its id or its name). */
int filter_thread_matches(const struct prof_thread *t, const char *sel);

/* Whether a function name matches a pattern: the whole name, the name
** without its parameter list ("fib" for "fib(int)"), or the qualified name
** without the return type template functions' names start with and without
** the parameters ("ns::f<int>" for "int ns::f<int>(int) const"), with * and
** ? globs. */
int filter_name_matches(const char *pattern, const char *name);

/* Apply f to p: drop other threads, rebuild the trees, recompute the flat
** profile, choose the figure views rank by (f->weight, f->raw). Returns 0, or 1 after an error line (no thread matched, out of
** memory). */
int filter_apply(struct profile *p, const struct filter *f);

#endif /* CAPPROF_FILTER_H */
