/*
** cmd_tree.c -- 'capprof tree DUMP...': the CAP view, one indented call tree
** per thread (or one for all threads) with calls, inclusive, exclusive,
** average, min and max per call, and the share of the thread's total.
*/
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "cmd/display.h"
#include "model/filter.h"
#include "model/profile.h"
#include "model/tool.h"
#include "model/weight.h"
#include "sym/symbols.h"

static const char usage[] =
  "usage: capprof tree [options] DUMP...\n"
  "\n"
  "The call tree of each thread: one line per call path, children sorted by\n"
  "the inclusive figure the profile ranks by (--weight: cpu from the samples\n"
  "in a sampled run, else elapsed). Elapsed times have the probe overhead\n"
  "subtracted unless --raw.\n"
  "Columns: calls (exact), incl = elapsed inclusive time (with callees), self\n"
  "= elapsed exclusive time, incl/call and self/call = their means per timed\n"
  "call, incl min and incl max = the inclusive time of the shortest and the\n"
  "longest single call; with samples, samples and cpu incl (their CPU time,\n"
  "samples x interval, with callees; samples in capprof's hooks are left\n"
  "out); last the ranking figure's inclusive share of the thread's total\n"
  "(cpu incl%, elapsed incl% or calls%). A thread without hooks shows the\n"
  "call tree of its sampled stacks instead, with CPU times from samples.\n"
  "\n"
  "  -m, --merge-threads  one tree summing every thread (and every DUMP)\n"
  "  -d, --depth=N        show N levels of calls (default: all)\n"
  "  -p, --prune=PCT      hide paths under PCT percent of the thread's total\n"
  "  -s, --sort=KEY       order siblings by total (the ranking figure's\n"
  "                       inclusive, default), calls or name\n"
  "  -l, --location       show each function's file:line (or its module)\n"
  "  -r, --raw            uncompensated times\n"
  "  -h, --help           this text\n";

struct opts { double depth, prune; int raw, sort, location, samples; };

static const struct profile *sort_prof;
static const struct prof_node *sort_nodes;
static int sort_key;

/* Siblings by calls or name (ties by name, then total); total order is the
** profile's own. */
static const struct prof_thread *sort_thread;

static int cmp_siblings(const void *pa, const void *pb)
{
  const struct prof_node *a = &sort_nodes[*(const uint32_t *)pa];
  const struct prof_node *b = &sort_nodes[*(const uint32_t *)pb];
  if (sort_key == 0) {
    double x = prof_node_incl(sort_prof, sort_thread, *(const uint32_t *)pa);
    double y = prof_node_incl(sort_prof, sort_thread, *(const uint32_t *)pb);
    if (x != y) return x < y ? 1 : -1;
    return *(const uint32_t *)pa < *(const uint32_t *)pb ? -1 : 1;  /* the profile's order */
  }
  if (sort_key == 1 && a->calls != b->calls) return a->calls < b->calls ? 1 : -1;
  int c = strcmp(sort_prof->funcs[a->func].name, sort_prof->funcs[b->func].name);
  if (c) return c;
  if (a->calls != b->calls) return a->calls < b->calls ? 1 : -1;
  return *(const uint32_t *)pa < *(const uint32_t *)pb ? -1 : 1;
}

static void print_tree(const struct profile *p, const struct prof_thread *t,
                       const struct opts *o)
{
  uint32_t unhooked = 0;             /* nodes marked [unhooked] */
  uint32_t via = 0;                  /* nodes marked [caller unhooked] */
  char a[40], b[40], c[40], d[40], e[40], f[40], g[40], h[40];
  int marks = 0;
  const struct prof_node *nd = t->nodes;
  double total = o->raw ? nd[0].t.incl_raw : nd[0].t.incl;
  double wtotal = prof_tree_total(p, t);
  char share_name[24];
  snprintf(share_name, sizeof share_name, "%s%s", prof_weight_name(p),
           prof_weight_of(p) == PROF_W_CALLS ? "%" : " incl%");
  int sw = (int)strlen(share_name);
  uint64_t calls = 0;
  uint32_t paths = 0;       /* the overflow nodes count only when used */
  for (uint32_t i = 1; i < t->nnodes; i++) {
    calls += nd[i].calls;
    paths += nd[i].calls || !p->funcs[nd[i].func].synthetic;
  }
  if (t->dump >= 0)
    printf("thread %" PRIu64 " \"%s\"", t->tid, t->name);
  else
    printf("all threads");
  printf(": %s, %s calls, %u paths%s\n", fmt_ns(total, a, sizeof a), fmt_count(calls, b, sizeof b),
         paths, t->sampled ? ", CPU time from samples" : o->raw ? " (raw times)"
                                                            : ", probe cost subtracted");
  if (t->lost_calls)
    printf("  %s calls were lost past the node cap\n", fmt_count(t->lost_calls, a, sizeof a));
  if (t->sampled) {
    printf("  sampled call tree (no hooked functions in this thread): times are CPU time from samples\n");
    printf("%s%12s %10s %10s %*s  %s%s\n", disp_on(DISP_HEADER), "samples", "cpu incl",
           "cpu self", sw, share_name, "function", disp_off());
  } else if (o->samples) {
    printf("%s%12s %10s %10s %10s %10s %10s %10s %9s %10s %*s  %s%s\n", disp_on(DISP_HEADER),
           "calls", "incl", "self", "incl/call", "self/call", "incl min", "incl max", "samples",
           "cpu incl", sw, share_name, "function", disp_off());
  } else {
    printf("%s%12s %10s %10s %10s %10s %10s %10s %*s  %s%s\n", disp_on(DISP_HEADER), "calls",
           "incl", "self", "incl/call", "self/call", "incl min", "incl max", sw, share_name,
           "function", disp_off());
  }

  /* Depth-first with an explicit stack of (node, depth); children are
  ** pushed in reverse so the largest is printed first. */
  uint32_t *stack = malloc((size_t)t->nnodes * sizeof *stack);
  uint32_t *depth = malloc((size_t)t->nnodes * sizeof *depth);
  uint32_t *tmp = malloc((size_t)t->nnodes * sizeof *tmp);
  if (!stack || !depth || !tmp) {
    tool_error("out of memory");
    goto out;
  }
  size_t sp = 0;
  depth[0] = 0;
  stack[sp++] = 0;
  while (sp) {
    uint32_t i = stack[--sp];
    const struct prof_node *n = &nd[i];
    if (i) {
      double incl = o->raw ? n->t.incl_raw : n->t.incl;
      const struct prof_func *fn = &p->funcs[n->func];
      int used;
      if (t->sampled) {
        used = printf("%12s %10s %10s ", fmt_count(n->s_incl, a, sizeof a), fmt_ns(incl, b, sizeof b),
                      fmt_ns(o->raw ? n->t.excl_raw : n->t.excl, c, sizeof c));
      } else {
        used = printf("%12s %10s %10s %10s %10s %10s %10s ", fmt_count(n->calls, a, sizeof a),
                      prof_fmt_ns(n->t.incl, n->t.incl_raw, o->raw, &marks, b, sizeof b),
                      prof_fmt_ns_basis(n->t.excl, n->t.excl_raw, prof_excl_basis(&n->t), o->raw,
                                        &marks, c, sizeof c),
                      prof_fmt_ns(prof_per_call(n->t.incl, n->timed),
                                  prof_per_call(n->t.incl_raw, n->timed), o->raw, NULL, d, sizeof d),
                      prof_fmt_ns_basis(prof_per_call(n->t.excl, n->timed),
                                        prof_per_call(n->t.excl_raw, n->timed),
                                        prof_per_call(prof_excl_basis(&n->t), n->timed), o->raw,
                                        NULL, h, sizeof h),
                      fmt_ns(o->raw ? n->t.min_raw : n->t.min, e, sizeof e),
                      fmt_ns(o->raw ? n->t.max_raw : n->t.max, f, sizeof f));
        if (o->samples)
          used += printf("%9s %10s ", fmt_count(n->s_incl, a, sizeof a),
                         fmt_ns(prof_node_figure(p, t, i, PROF_W_CPU, 1), b, sizeof b));
      }
      double wincl = prof_node_incl(p, t, i);
      int hot = disp_pct_kind(wincl, wtotal);
      fputs(hot < 0 ? "" : disp_on(hot), stdout);
      fprintf(stdout, "%*s", sw, fmt_pct(prof_share(wincl, wtotal), 1, g, sizeof g));
      fputs(hot < 0 ? "  " : disp_off(), stdout);
      if (hot >= 0) fputs("  ", stdout);
      used += sw + 2;
      static const char indent[] = "                                        "
                                   "                                        ";
      uint32_t dep = depth[i] - 1;
      if (dep > 40) used += printf("[%u] ", dep);
      fwrite(indent, 1, 2 * (dep > 40 ? 40 : dep), stdout);
      used += 2 * (dep > 40 ? 40 : dep);
      char where[600] = "";
      size_t wl = 0;
      if (o->location && fn->file)
        wl = (size_t)snprintf(where, sizeof where, "  (%s:%u)", sym_base_name(fn->file), fn->line);
      else if (o->location && fn->module[0])
        wl = (size_t)snprintf(where, sizeof where, "  (%s)", fn->module);
      uint64_t period = t->dump >= 0 ? p->dumps[t->dump].period : 0;
      if (fn->unhooked_ns > 0 && wl < sizeof where) {
        wl += (size_t)snprintf(where + wl, sizeof where - wl, " [unhooked]");
        unhooked++;
      }
      else if (n->flags & CPD_NODE_THROTTLED && wl < sizeof where && period)
        wl += (size_t)snprintf(where + wl, sizeof where - wl, " [throttled: 1 in %llu timed]",
                               (unsigned long long)period);
      else if (n->flags & CPD_NODE_THROTTLED && wl < sizeof where)
        wl += (size_t)snprintf(where + wl, sizeof where - wl, " [throttled: %s calls timed]",
                               fmt_count(n->timed, a, sizeof a));
      if (n->flags & PROF_VIA_UNHOOKED && wl < sizeof where) {
        wl += (size_t)snprintf(where + wl, sizeof where - wl, " [caller unhooked]");
        via++;
      }
      if (n->flags & CPD_NODE_OPEN && wl < sizeof where)
        snprintf(where + wl, sizeof where - wl, " [still running]");
      disp_name(stdout, fn->name, where, (size_t)used);
      putchar('\n');
    }
    if (o->depth >= 0 && depth[i] >= o->depth) continue;
    size_t k = 0;
    for (uint32_t ch = n->first; ch != PROF_NONE; ch = nd[ch].next) {
      if (o->prune > 0 && prof_node_incl(p, t, ch) < wtotal * o->prune / 100.0) continue;
      if (nd[ch].calls == 0 && p->funcs[nd[ch].func].synthetic) continue;
      tmp[k++] = ch;
    }
    if (k > 1 && (o->sort || prof_weight_of(p) != PROF_W_ELAPSED || o->raw)) {
      sort_prof = p;
      sort_thread = t;
      sort_nodes = nd;
      sort_key = o->sort;
      qsort(tmp, k, sizeof *tmp, cmp_siblings);
    }
    while (k) {
      uint32_t ch = tmp[--k];
      depth[ch] = depth[i] + 1;
      stack[sp++] = ch;
    }
  }
  prof_legend(marks);
  if (unhooked)
    printf("[unhooked]: its hooks were patched out: later calls counted on each path, not\n"
           "timed (before dump format 1.9: only 'capprof report' counts them; docs/runtime.md).\n");
  if (via)
    printf("[caller unhooked]: some of these calls may have come through an unhooked\n"
           "function called here: counted under this, the nearest hooked caller's path.\n");
out:
  free(stack);
  free(depth);
  free(tmp);
}

int cmd_tree(int argc, char **argv)
{
  static const struct option longopts[] = {
    { "merge-threads", no_argument, NULL, 'm' },
    { "thread", required_argument, NULL, 't' },
    { "depth", required_argument, NULL, 'd' },
    { "prune", required_argument, NULL, 'p' },
    { "sort", required_argument, NULL, 's' },
    { "location", no_argument, NULL, 'l' },
    { "raw", no_argument, NULL, 'r' },
    { "help", no_argument, NULL, 'h' },
    FILTER_LONGOPTS,
    { NULL, 0, NULL, 0 },
  };
  struct opts o = { -1, 0, 0, 0, 0, 0 };
  int merge = 0, c;
  struct filter flt = { 0 };
  opterr = 0;
  while ((c = getopt_long(argc, argv, ":mt:d:p:s:lrh", longopts, NULL)) != -1) {
    int fo = filter_option("tree", c, optarg, &flt);
    if (fo < 0) return 2;
    if (fo) continue;
    switch (c) {
    case 'm': merge = 1; break;
    case 'd': if (tool_parse_num("tree", "--depth", optarg, 1e9, &o.depth)) return 2; break;
    case 'p': if (tool_parse_num("tree", "--prune", optarg, 100, &o.prune)) return 2; break;
    case 's':
      if (!strcmp(optarg, "total")) o.sort = 0;
      else if (!strcmp(optarg, "calls")) o.sort = 1;
      else if (!strcmp(optarg, "name")) o.sort = 2;
      else return 1 + tool_error("tree: --sort wants total, calls or name, not '%s'", optarg);
      break;
    case 'l': o.location = 1; break;
    case 'r': o.raw = 1; break;
    case 'h': fputs(usage, stdout); fputs(filter_help, stdout); fputs(display_help, stdout); return 0;
    default: return tool_bad_option("tree", argv, c);
    }
  }
  if (optind >= argc) return 1 + tool_error("tree: no dump given (usage: capprof tree DUMP...)");
  struct profile *p = prof_load_all(argc - optind, argv + optind);
  if (!p) return 1;
  flt.raw = o.raw;
  if (filter_apply(p, &flt) != 0) { prof_free(p); return 1; }
  o.samples = p->node_samples > 0;
  if (o.samples) {
    for (uint32_t i = 0; i < p->ndumps; i++) samples_describe(stdout, p->dumps[i].d);
    char line[300];
    printf("%s\n", prof_weight_line(p, line, sizeof line));
    fputs(prof_probe_note(p), stdout);
    putchar('\n');
  } else if (!o.raw) {
    samples_refused(stdout, p);
  }
  uint32_t *sel = malloc((p->nthreads + 1) * sizeof *sel), n = 0;
  int status = 0;
  if (!sel) { prof_free(p); return tool_error("out of memory"); }
  for (uint32_t i = 0; i < p->nthreads; i++) sel[n++] = i;
  display_start(1);
  if (merge) {
    struct prof_thread m;
    if (prof_merge_threads(p, sel, n, &m) != 0) {
      status = tool_error("out of memory");
    } else {
      print_tree(p, &m, &o);
      prof_thread_free(&m);
    }
  } else {
    for (uint32_t k = 0; k < n; k++) {
      if (k) putchar('\n');
      if (p->ndumps > 1 && (k == 0 || p->threads[sel[k]].dump != p->threads[sel[k - 1]].dump))
        printf("== %s\n", p->dumps[p->threads[sel[k]].dump].d->path);
      print_tree(p, &p->threads[sel[k]], &o);
    }
  }
  free(sel);
  prof_free(p);
  return status;
}
