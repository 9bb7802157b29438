/*
** calls.c -- the engine of 'capprof callers' and 'capprof callees'
** (cmd_callers.c, cmd_callees.c): a gprof-style breakdown of who calls a
** function and what it calls, summed over every call path, thread and dump.
*/
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "cmd/display.h"
#include "model/profile.h"
#include "model/tool.h"
#include "model/weight.h"
#include "sym/symbols.h"

/* A caller->callee pair summed over call paths: incl counts a recursion's
** outermost calls, incl_all every call (for the mean per call). */
struct edge {
  uint64_t calls;
  double incl, excl, incl_raw, excl_raw, incl_all, incl_all_raw;
  double w;                /* the ranking figure's inclusive value (model/weight.h) */
};

static const char usage_fmt[] =
  "usage: capprof %s [options] FUNC DUMP...\n"
  "\n"
  "%s\n"
  "FUNC is a function name as 'capprof report' prints it, or a part of one.\n"
  "Columns: calls; in a sampled run cpu incl, the CPU time of the samples in\n"
  "the callee and below; incl = elapsed inclusive time, self = elapsed\n"
  "exclusive time (of the callee in each caller->callee pair; of FUNC on its\n"
  "own line); incl/call and self/call = their means per call; last the share\n"
  "of FUNC's inclusive figure that ranks (cpu incl%%, elapsed incl%%: --weight).\n"
  "Calls and self times add up over every call path; an inclusive time is not\n"
  "counted again inside a call of the same pair.\n"
  "\n"
  "When FUNC matches several functions (a part of several names, or one name\n"
  "in several modules), they are listed and the command fails; --all shows\n"
  "each of them instead. An exact name wins over parts of names.\n"
  "\n"
  "  -a, --all    every function FUNC matches, one after the other\n"
  "  -r, --raw    uncompensated times\n"
  "      --weight=W  the figure that orders and shares: cpu, elapsed or calls\n"
  "  -h, --help   this text\n";

static const struct profile *sort_prof;
static struct edge *sort_edges;

static int by_incl(const void *pa, const void *pb)
{
  uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
  if (sort_edges[a].w != sort_edges[b].w) return sort_edges[a].w < sort_edges[b].w ? 1 : -1;
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
static int add_edges(const struct profile *p, const struct prof_thread *t, uint32_t f,
                     int callees, struct edge *e, uint32_t *active)
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
      x->incl_all += s->t.incl;
      x->incl_all_raw += s->t.incl_raw;
      if (active[g]++ == 0) {
        x->incl += s->t.incl;
        x->incl_raw += s->t.incl_raw;
        x->w += prof_node_incl(p, t, i);
      }
      stack[sp++] = ~i;
    }
    for (uint32_t c = s->first; c != PROF_NONE; c = t->nodes[c].next) stack[sp++] = c;
  }
  free(stack);
  return 0;
}

static void line(const struct profile *p, const char *mark, const char *name, const char *where,
                 const struct edge *e, const struct edge *self, int raw, int sw)
{
  char a[32], b[32], c[32], d[32], g[32], h[32];
  double incl = raw ? e->incl_raw : e->incl;
  double excl = raw ? e->excl_raw : e->excl;
  int used = printf("%12s ", fmt_count(e->calls, a, sizeof a));
  if (prof_weight_of(p) == PROF_W_CPU) used += printf("%10s ", fmt_ns(e->w, a, sizeof a));
  used += printf("%10s %10s %10s %10s ", fmt_ns(incl, b, sizeof b), fmt_ns(excl, c, sizeof c),
                 fmt_ns(prof_per_call(raw ? e->incl_all_raw : e->incl_all, e->calls), g, sizeof g),
                 fmt_ns(prof_per_call(excl, e->calls), h, sizeof h));
  int hot = e == self ? -1 : disp_pct_kind(e->w, self->w);
  printf("%s%*s%s  %s", hot < 0 ? "" : disp_on(hot), sw, fmt_pct(prof_share(e->w, self->w), 1, d, sizeof d),
         hot < 0 ? "" : disp_off(), mark);
  disp_name(stdout, name, where, (size_t)used + (size_t)sw + 2 + strlen(mark));
  putchar('\n');
}

/* Every function FUNC names: those whose name equals it, or else those
** whose name contains it. Returns how many, written to out (nfuncs slots). */
static uint32_t find_funcs(const struct profile *p, const char *want, uint32_t *out)
{
  uint32_t n = 0;
  for (uint32_t f = 0; f < p->nfuncs; f++)
    if (p->funcs[f].calls && !strcmp(p->funcs[f].name, want)) out[n++] = f;
  if (n) return n;
  for (uint32_t f = 0; f < p->nfuncs; f++)
    if (p->funcs[f].calls && !p->funcs[f].synthetic && strstr(p->funcs[f].name, want))
      out[n++] = f;
  return n;
}

/* The callers or callees section of function f. 0, or 1 after an error. */
static int show(const struct profile *p, uint32_t f, int callees, int raw)
{
  struct edge *e = calloc(p->nfuncs, sizeof *e);
  uint32_t *order = malloc(p->nfuncs * sizeof *order), n = 0;
  uint32_t *active = calloc(p->nfuncs, sizeof *active);
  int rc = !e || !order || !active ? CAPPROF_ENOMEM : 0;
  /* callers: each node of f adds to its parent's function; callees: each
  ** child of a node of f adds to the child's function. */
  for (uint32_t k = 0; k < p->nthreads && rc == 0; k++)
    rc = add_edges(p, &p->threads[k], f, callees, e, active);
  if (rc) {
    free(e); free(order); free(active);
    return tool_error("out of memory");
  }
  for (uint32_t g = 0; g < p->nfuncs; g++)
    if (e[g].calls || e[g].incl_raw > 0) order[n++] = g;
  sort_prof = p;
  sort_edges = e;
  qsort(order, n, sizeof *order, by_incl);

  const struct prof_func *fn = &p->funcs[f];
  struct edge self = { fn->calls, fn->t.incl, fn->t.excl, fn->t.incl_raw, fn->t.excl_raw,
                       fn->incl_all, fn->incl_all_raw, 0 };
  self.w = prof_func_incl(p, fn);           /* its outermost calls', as incl */
  char share[24];
  snprintf(share, sizeof share, "%s%s", prof_weight_name(p),
           prof_weight_of(p) == PROF_W_CALLS ? "%" : " incl%");
  int sw = (int)strlen(share);
  printf("%s%12s ", disp_on(DISP_HEADER), "calls");
  if (prof_weight_of(p) == PROF_W_CPU) printf("%10s ", "cpu incl");
  printf("%10s %10s %10s %10s %*s  %s%s\n", "incl", "self", "incl/call", "self/call", sw, share,
         "function", disp_off());
  if (!callees) {
    for (uint32_t i = 0; i < n; i++)
      line(p, "  ", p->funcs[order[i]].synthetic ? "[thread start]" : p->funcs[order[i]].name, "",
           &e[order[i]], &self, raw, sw);
  }
  char where[600] = "";
  if (fn->file) snprintf(where, sizeof where, "  (%s:%u)", sym_base_name(fn->file), fn->line);
  else if (fn->module[0]) snprintf(where, sizeof where, "  (%s)", fn->module);
  line(p, "", fn->name, where, &self, &self, raw, sw);
  if (callees) {
    for (uint32_t i = 0; i < n; i++)
      line(p, "  ", p->funcs[order[i]].name, "", &e[order[i]], &self, raw, sw);
  }
  free(e);
  free(order);
  free(active);
  return 0;
}

int calls_main(int argc, char **argv, int callees)
{
  const char *cmd = callees ? "callees" : "callers";
  static const struct option longopts[] = {
    { "all", no_argument, NULL, 'a' },
    { "raw", no_argument, NULL, 'r' },
    { "weight", required_argument, NULL, 'W' },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
  };
  int raw = 0, all = 0, c;
  enum prof_weight weight = PROF_W_AUTO;
  opterr = 0;
  while ((c = getopt_long(argc, argv, ":arh", longopts, NULL)) != -1) {
    switch (c) {
    case 'a': all = 1; break;
    case 'r': raw = 1; break;
    case 'W':
      if (prof_weight_parse(optarg, &weight) != 0)
        return 1 + tool_error("%s: --weight wants cpu, elapsed or calls, not '%s'", cmd, optarg);
      break;
    case 'h':
      printf(usage_fmt, cmd, callees ? "What FUNC calls: per callee, the calls made from FUNC and "
                                       "the time spent in them."
                                     : "Who calls FUNC: per caller, the calls it made to FUNC and "
                                       "the time FUNC spent on them.");
      fputs(display_help, stdout);
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
  prof_weight_set(p, weight, raw);
  uint32_t *match = malloc(((size_t)p->nfuncs + 1) * sizeof *match);
  if (!match) { prof_free(p); return tool_error("out of memory"); }
  uint32_t n = find_funcs(p, want, match);
  int rc = 0;
  if (n == 0) {
    rc = tool_error("%s: no function named '%s' in the profile", cmd, want);
  } else if (n > 1 && !all) {
    /* Never pick one silently: name them all, on stderr, and fail. */
    tool_error("%s: '%s' matches %u functions; give one exactly, or --all for each:", cmd, want, n);
    for (uint32_t i = 0; i < n; i++) {
      const struct prof_func *fn = &p->funcs[match[i]];
      if (fn->file)
        tool_error("  %s  (%s:%u, %s)", fn->name, sym_base_name(fn->file), fn->line,
                   fn->module[0] ? fn->module : "no module");
      else
        tool_error("  %s  (%s)", fn->name, fn->module[0] ? fn->module : "no module");
    }
    rc = 1;
  } else {
    display_start(1);
    for (uint32_t i = 0; i < n && !rc; i++) {
      if (i) putchar('\n');
      rc = show(p, match[i], callees, raw);
    }
  }
  free(match);
  prof_free(p);
  return rc;
}
