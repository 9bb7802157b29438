/*
** cmd_calls.c -- 'capprof callers FUNC DUMP...' and 'capprof callees FUNC
** DUMP...': a gprof-style breakdown of who calls a function and what it
** calls, summed over every call path, thread and dump.
*/
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile.h"
#include "symbols.h"
#include "tool.h"

struct edge { uint64_t calls; double incl, excl, incl_raw, excl_raw; };

static const char usage_fmt[] =
  "usage: capprof %s [options] FUNC DUMP...\n"
  "\n"
  "%s\n"
  "FUNC is a function name as 'capprof report' prints it, or a part of one.\n"
  "Inclusive times of recursive calls are counted at the outermost call only.\n"
  "\n"
  "  -r, --raw    uncompensated times\n"
  "  -h, --help   this text\n";

static const struct profile *sort_prof;
static struct edge *sort_edges;

static int by_incl(const void *pa, const void *pb)
{
  uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
  if (sort_edges[a].incl_raw != sort_edges[b].incl_raw)
    return sort_edges[a].incl_raw < sort_edges[b].incl_raw ? 1 : -1;
  return strcmp(sort_prof->funcs[a].name, sort_prof->funcs[b].name);
}

static void line(const struct profile *p, const char *mark, const char *name, const struct edge *e,
                 const struct edge *self, int raw)
{
  char a[32], b[32], c[32], d[32];
  double incl = raw ? e->incl_raw : e->incl;
  printf("%12s %10s %10s %7s  %s%s\n", fmt_count(e->calls, a, sizeof a), fmt_ns(incl, b, sizeof b),
         fmt_ns(raw ? e->excl_raw : e->excl, c, sizeof c),
         fmt_pct(incl, raw ? self->incl_raw : self->incl, d, sizeof d), mark, name);
  (void)p;
}

static int run(int argc, char **argv, int callees)
{
  const char *cmd = callees ? "callees" : "callers";
  static const struct option longopts[] = {
    { "raw", no_argument, NULL, 'r' },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
  };
  int raw = 0, c;
  opterr = 0;
  while ((c = getopt_long(argc, argv, ":rh", longopts, NULL)) != -1) {
    switch (c) {
    case 'r': raw = 1; break;
    case 'h':
      printf(usage_fmt, cmd, callees ? "What FUNC calls: per callee, the calls made from FUNC and "
                                       "the time spent in them."
                                     : "Who calls FUNC: per caller, the calls it made to FUNC and "
                                       "the time FUNC spent on them.");
      return 0;
    default: return tool_bad_option(cmd, argv, c);
    }
  }
  if (argc - optind < 2)
    return 1 + tool_error("%s: %s (usage: capprof %s FUNC DUMP...)", cmd,
                          optind < argc ? "no dump given" : "no function given", cmd);
  const char *want = argv[optind];
  struct profile *p = prof_load_all(argc - optind - 1, argv + optind + 1);
  if (!p) return 1;
  uint32_t f = prof_find_func(p, want);
  if (f == PROF_NONE) {
    prof_free(p);
    return tool_error("%s: no function named '%s' in the profile", cmd, want);
  }
  struct edge *e = calloc(p->nfuncs, sizeof *e);
  uint32_t *order = malloc(p->nfuncs * sizeof *order), n = 0;
  if (!e || !order) {
    free(e); free(order); prof_free(p);
    return tool_error("out of memory");
  }
  /* callers: each node of f adds to its parent's function; callees: each
  ** child of a node of f adds to the child's function. */
  for (uint32_t k = 0; k < p->nthreads; k++) {
    const struct prof_thread *t = &p->threads[k];
    for (uint32_t i = 1; i < t->nnodes; i++) {
      const struct prof_node *s = &t->nodes[i];
      const struct prof_node *par = &t->nodes[s->parent];
      if (callees ? par->func != f || s->parent == 0 : s->func != f) continue;
      struct edge *x = &e[callees ? s->func : par->func];
      x->calls += s->calls;
      x->excl += s->t.excl;
      x->excl_raw += s->t.excl_raw;
      if (s->flags & PROF_OUTER) {
        x->incl += s->t.incl;
        x->incl_raw += s->t.incl_raw;
      }
    }
  }
  for (uint32_t g = 0; g < p->nfuncs; g++)
    if (e[g].calls || e[g].incl_raw > 0) order[n++] = g;
  sort_prof = p;
  sort_edges = e;
  qsort(order, n, sizeof *order, by_incl);

  const struct prof_func *fn = &p->funcs[f];
  struct edge self = { fn->calls, fn->t.incl, fn->t.excl, fn->t.incl_raw, fn->t.excl_raw };
  printf("%12s %10s %10s %7s  %s\n", "calls", "inclusive", "exclusive", "%", "function");
  if (!callees) {
    for (uint32_t i = 0; i < n; i++)
      line(p, "  ", p->funcs[order[i]].synthetic ? "[thread start]" : p->funcs[order[i]].name,
           &e[order[i]], &self, raw);
  }
  char where[512] = "";
  if (fn->file) snprintf(where, sizeof where, "  (%s:%u)", sym_base_name(fn->file), fn->line);
  char title[1024];
  snprintf(title, sizeof title, "%s%s", fn->name, where);
  line(p, "", title, &self, &self, raw);
  if (callees) {
    struct edge rest = self;
    for (uint32_t i = 0; i < n; i++) line(p, "  ", p->funcs[order[i]].name, &e[order[i]], &self, raw);
    (void)rest;
  }
  free(e);
  free(order);
  prof_free(p);
  return 0;
}

int cmd_callers(int argc, char **argv) { return run(argc, argv, 0); }
int cmd_callees(int argc, char **argv) { return run(argc, argv, 1); }
