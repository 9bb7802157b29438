/*
** calls.c -- the engine of 'capprof callers' and 'capprof callees'
** (cmd_callers.c, cmd_callees.c): a gprof-style breakdown of who calls a
** function and what it calls, summed over every call path, thread and dump.
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
  "Columns: calls; incl = inclusive time, self = exclusive time (of the callee\n"
  "in each caller->callee pair; of FUNC on its own line); incl%% = incl as a\n"
  "share of FUNC's incl. Calls and self times add up over every call path; an\n"
  "inclusive time is not counted again inside a call of the same pair.\n"
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

/* Sum the edges between f and its callers (or callees) over one tree. Calls
** and exclusive times add up over every node; an edge's inclusive time
** counts only where no ancestor is the same edge (a recursive fib->fib call
** inside another fib->fib call is already in that one's time). Depth-first
** with an explicit stack; active[g] counts open edges with function g.
** Returns 0 or CAPPROF_ENOMEM. */
static int add_edges(const struct prof_thread *t, uint32_t f, int callees, struct edge *e,
                     uint32_t *active)
{
  uint32_t *stack = malloc(((size_t)t->nnodes * 2 + 1) * sizeof *stack);
  if (!stack) return CAPPROF_ENOMEM;
  size_t sp = 0;
  stack[sp++] = 0;
  while (sp) {
    uint32_t i = stack[--sp], leaving = i & 0x80000000u;
    if (leaving) i = ~i;
    const struct prof_node *s = &t->nodes[i];
    int edge = i && (callees ? t->nodes[s->parent].func == f && s->parent != 0 : s->func == f);
    uint32_t g = edge ? (callees ? s->func : t->nodes[s->parent].func) : 0;
    if (leaving) {
      active[g]--;
      continue;
    }
    if (edge) {
      struct edge *x = &e[g];
      x->calls += s->calls;
      x->excl += s->t.excl;
      x->excl_raw += s->t.excl_raw;
      if (active[g]++ == 0) {
        x->incl += s->t.incl;
        x->incl_raw += s->t.incl_raw;
      }
      stack[sp++] = ~i;
    }
    for (uint32_t c = s->first; c != PROF_NONE; c = t->nodes[c].next) stack[sp++] = c;
  }
  free(stack);
  return 0;
}

static void line(const char *mark, const char *name, const struct edge *e,
                 const struct edge *self, int raw)
{
  char a[32], b[32], c[32], d[32];
  double incl = raw ? e->incl_raw : e->incl;
  printf("%12s %10s %10s %7s  %s%s\n", fmt_count(e->calls, a, sizeof a), fmt_ns(incl, b, sizeof b),
         fmt_ns(raw ? e->excl_raw : e->excl, c, sizeof c),
         fmt_pct(incl, raw ? self->incl_raw : self->incl, d, sizeof d), mark, name);
}

int calls_main(int argc, char **argv, int callees)
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
  uint32_t *active = calloc(p->nfuncs, sizeof *active);
  int rc = 0;
  if (!e || !order || !active) {
    free(e); free(order); free(active); prof_free(p);
    return tool_error("out of memory");
  }
  /* callers: each node of f adds to its parent's function; callees: each
  ** child of a node of f adds to the child's function. */
  for (uint32_t k = 0; k < p->nthreads && rc == 0; k++)
    rc = add_edges(&p->threads[k], f, callees, e, active);
  if (rc) {
    free(e); free(order); free(active); prof_free(p);
    return tool_error("out of memory");
  }
  for (uint32_t g = 0; g < p->nfuncs; g++)
    if (e[g].calls || e[g].incl_raw > 0) order[n++] = g;
  sort_prof = p;
  sort_edges = e;
  qsort(order, n, sizeof *order, by_incl);

  const struct prof_func *fn = &p->funcs[f];
  struct edge self = { fn->calls, fn->t.incl, fn->t.excl, fn->t.incl_raw, fn->t.excl_raw };
  printf("%12s %10s %10s %7s  %s\n", "calls", "incl", "self", "incl%", "function");
  if (!callees) {
    for (uint32_t i = 0; i < n; i++)
      line("  ", p->funcs[order[i]].synthetic ? "[thread start]" : p->funcs[order[i]].name,
           &e[order[i]], &self, raw);
  }
  char where[512] = "";
  if (fn->file) snprintf(where, sizeof where, "  (%s:%u)", sym_base_name(fn->file), fn->line);
  char title[1024];
  snprintf(title, sizeof title, "%s%s", fn->name, where);
  line("", title, &self, &self, raw);
  if (callees) {
    for (uint32_t i = 0; i < n; i++) line("  ", p->funcs[order[i]].name, &e[order[i]], &self, raw);
  }
  free(e);
  free(order);
  free(active);
  prof_free(p);
  return 0;
}
