/*
** cmd_diff.c -- 'capprof diff BASE NEW': per-function changes between two
** profiles (each a dump, or a merged dump of several runs) in calls,
** inclusive and exclusive time, largest change first. Functions are matched
** by name and module. 'capprof diff BASE... -- NEW...' compares two sets of
** runs with their spread (diff_runs.c).
*/
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "cmd/display.h"
#include "export/export.h"
#include "model/profile.h"
#include "model/tool.h"
#include "model/weight.h"

static const char usage[] =
  "usage: capprof diff [options] BASE NEW\n"
  "       capprof diff [options] BASE... -- NEW...\n"
  "\n"
  "Per-function changes from BASE to NEW (two dumps of the same program),\n"
  "sorted by the size of the change in self (exclusive) time (or --sort);\n"
  "incl is inclusive time.\n"
  "With '--' between two sets of dumps, each dump is one run: the diff shows\n"
  "the mean per run and its spread on each side, and says whether a change\n"
  "exceeds the run-to-run spread (real) or not (noise); that needs two runs\n"
  "or more on each side.\n"
  "\n"
  "The first line names the figure compared. When both dumps have samples\n"
  "charged to call paths (the default on Linux), 'cpu self' is the change in\n"
  "report's cpu self and sorts by default; when only one has, the elapsed\n"
  "times are compared and the line says why. Runs sampled without hooks\n"
  "(capprof run --sample) compare the samples' program counters\n"
  "(report --samples) in 'cpu self'.\n"
  "\n"
  "  -s, --sort=KEY   self, incl, calls or cpu: the change to sort by (default:\n"
  "                   cpu when both runs were sampled, else self)\n"
  "  -n, --limit=N    show the first N functions\n"
  "  -r, --raw        uncompensated times\n"
  "  -k, --keep-modules  match functions by name and module only: by default\n"
  "                   a function of BASE's executable also matches the same\n"
  "                   name in NEW's executable when the two are named apart\n"
  "  -f, --format=F   text (default) or html: one self-contained page with a\n"
  "                   flame graph coloured by change (docs/tool.md)\n"
  "  -o, --output=FILE  html: write to FILE instead of standard output\n"
  "      --max-nodes=N  html: at most N call-tree nodes in the page\n"
  "  -h, --help       this text\n";

struct row {
  const struct prof_func *base, *new;   /* either may be NULL */
  double d_calls, d_incl, d_excl, d_cpu;
};

static int sort_key;

static double impact(const struct row *r)
{
  return fabs(sort_key == 1 ? r->d_incl : sort_key == 2 ? r->d_calls
              : sort_key == 3 ? r->d_cpu : r->d_excl);
}

static int by_impact(const void *pa, const void *pb)
{
  const struct row *a = pa, *b = pb;
  double x = impact(a), y = impact(b);
  if (x != y) return x < y ? 1 : -1;
  return strcmp(a->new ? a->new->name : a->base->name, b->new ? b->new->name : b->base->name);
}

static const char *signed_ns(double v, char *buf, size_t n)
{
  char tmp[32];
  fmt_ns(fabs(v), tmp, sizeof tmp);
  snprintf(buf, n, "%s%s", v < 0 ? "-" : v > 0 ? "+" : "", tmp);
  return buf;
}

static const char *change(double before, double after, char *buf, size_t n)
{
  if (before <= 0) snprintf(buf, n, after > 0 ? "new" : "");
  else snprintf(buf, n, "%+.1f%%", 100.0 * (after - before) / before);
  return buf;
}

int cmd_diff(int argc, char **argv)
{
  static const struct option longopts[] = {
    { "sort", required_argument, NULL, 's' },
    { "limit", required_argument, NULL, 'n' },
    { "raw", no_argument, NULL, 'r' },
    { "keep-modules", no_argument, NULL, 'k' },
    { "format", required_argument, NULL, 'f' },
    { "output", required_argument, NULL, 'o' },
    { "max-nodes", required_argument, NULL, 'N' },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
  };
  double limit = -1, max_nodes;
  int raw = 0, c, sep = 0, keep = 0, html = 0, sorted = 0;
  const char *out = NULL;
  sort_key = 0;
  opterr = 0;
  for (int i = 1; i < argc && !sep; i++)
    if (!strcmp(argv[i], "--")) sep = i;
  int nopt = sep ? sep : argc;           /* options before '--' only */
  while ((c = getopt_long(nopt, argv, ":s:n:rkf:o:h", longopts, NULL)) != -1) {
    switch (c) {
    case 's':
      if (!strcmp(optarg, "self")) sort_key = 0;
      else if (!strcmp(optarg, "incl") || !strcmp(optarg, "total")) sort_key = 1;
      else if (!strcmp(optarg, "calls")) sort_key = 2;
      else if (!strcmp(optarg, "cpu")) sort_key = 3;
      else return 1 + tool_error("diff: --sort wants self, incl, calls or cpu, not '%s'", optarg);
      sorted = 1;
      break;
    case 'n': if (tool_parse_num("diff", "--limit", optarg, 1e9, &limit)) return 2; break;
    case 'r': raw = 1; break;
    case 'k': keep = 1; break;
    case 'f':
      if (!strcmp(optarg, "html")) html = 1;
      else if (!strcmp(optarg, "text")) html = 0;
      else return 1 + tool_error("diff: --format wants text or html, not '%s'", optarg);
      break;
    case 'o': out = optarg; break;
    case 'N':
      if (tool_parse_num("diff", "--max-nodes", optarg, 4e9, &max_nodes)) return 2;
      export_html_max_nodes = (uint32_t)max_nodes;
      break;
    case 'h': fputs(usage, stdout); fputs(display_help, stdout); return 0;
    default: return tool_bad_option("diff", argv, c);
    }
  }
  if (out && !html) return 1 + tool_error("diff: --output is for --format=html");
  if (html && sep) {
    if (optind >= sep || sep + 1 >= argc)
      return 1 + tool_error("diff: wants dumps on both sides of '--' "
                            "(usage: capprof diff BASE... -- NEW...)");
    return diff_html(argv + optind, sep - optind, argv + sep + 1, argc - sep - 1, sort_key, raw,
                     keep, out);
  }
  if (html) {
    if (argc - optind != 2)
      return 1 + tool_error("diff: wants two dumps (usage: capprof diff BASE NEW)");
    return diff_html(argv + optind, 1, argv + optind + 1, 1, sort_key, raw, keep, out);
  }
  if (sep) {
    if (optind >= sep || sep + 1 >= argc)
      return 1 + tool_error("diff: wants dumps on both sides of '--' "
                            "(usage: capprof diff BASE... -- NEW...)");
    return diff_runs(argv + optind, sep - optind, argv + sep + 1, argc - sep - 1, sort_key,
                     raw, limit, keep);
  }
  if (argc - optind != 2)
    return 1 + tool_error("diff: wants two dumps (usage: capprof diff BASE NEW)");
  struct profile *a = prof_load_all(1, argv + optind);
  if (!a) return 1;
  struct profile *b = prof_load_all(1, argv + optind + 1);
  if (!b) { prof_free(a); return 1; }
  struct row *rows = calloc((size_t)a->nfuncs + b->nfuncs + 1, sizeof *rows);
  if (!rows) { prof_free(a); prof_free(b); return tool_error("out of memory"); }
  size_t n = 0;
  for (uint32_t f = 0; f < b->nfuncs; f++) {
    const struct prof_func *nf = &b->funcs[f];
    if (nf->synthetic) continue;
    uint32_t g = prof_lookup_in(a, b, f, keep);
    rows[n].new = nf;
    rows[n].base = g == PROF_NONE ? NULL : &a->funcs[g];
    n++;
  }
  for (uint32_t g = 0; g < a->nfuncs; g++) {
    const struct prof_func *of = &a->funcs[g];
    if (!of->synthetic && prof_lookup_in(b, a, g, keep) == PROF_NONE)
      rows[n++].base = of;
  }
  /* The figure compared (model/weight.h): cpu when both runs have samples
  ** charged to call paths, as report ranks each of them; else elapsed. */
  int both = a->node_samples > 0 && b->node_samples > 0;
  int one = (a->node_samples > 0) != (b->node_samples > 0);
  for (size_t i = 0; i < n; i++) {
    struct row *r = &rows[i];
    const struct prof_times none = { 0 }, *x = r->base ? &r->base->t : &none,
                            *y = r->new ? &r->new->t : &none;
    r->d_calls = (double)(r->new ? prof_all_calls(r->new) : 0) -
                 (double)(r->base ? prof_all_calls(r->base) : 0);
    r->d_incl = raw ? y->incl_raw - x->incl_raw : y->incl - x->incl;
    r->d_excl = raw ? y->excl_raw - x->excl_raw : y->excl - x->excl;
    r->d_cpu = both ? (r->new ? prof_func_figure(b, r->new, PROF_W_CPU, 0) : 0) -
                      (r->base ? prof_func_figure(a, r->base, PROF_W_CPU, 0) : 0)
                    : (r->new ? r->new->pc.cpu_self : 0) - (r->base ? r->base->pc.cpu_self : 0);
  }
  int pcs = a->pc_samples && b->pc_samples;
  int cpu = both || pcs;
  if (!sorted && both) sort_key = 3;
  if (sort_key == 3 && !cpu) sort_key = 0;
  qsort(rows, n, sizeof *rows, by_impact);

  display_start(1);
  const char *how = raw ? "raw" : "probe cost subtracted";
  if (both)
    printf("compared by cpu: the samples' CPU time (cpu self), both runs sampled; self and\n"
           "incl are elapsed\n");
  else if (one)
    printf("compared by elapsed (the hooks' wall time, %s):\n"
           "only %s has samples charged to call paths%s\n", how,
           a->node_samples > 0 ? "BASE" : "NEW",
           pcs ? "; cpu self: the samples' program counters" : ", so CPU time is not compared");
  else
    printf("compared by elapsed (the hooks' wall time, %s)%s\n", how,
           cpu ? "; cpu self: the samples' program counters" : "");
  if (cpu)
    printf("%s%14s %14s %8s %10s %8s %10s %8s  %10s %8s  %s%s\n", disp_on(DISP_HEADER),
           "calls before", "calls after", "change", "self", "change", "incl", "change",
           "cpu self", "change", "function", disp_off());
  else
    printf("%s%14s %14s %8s %10s %8s %10s %8s  %s%s\n", disp_on(DISP_HEADER), "calls before",
           "calls after", "change", "self", "change", "incl", "change", "function", disp_off());
  char s1[32], s2[32], s3[32], s4[48], s5[32], s6[48], s7[32];
  for (size_t i = 0; i < n && (limit < 0 || i < limit); i++) {
    const struct row *r = &rows[i];
    const struct prof_times none = { 0 }, *x = r->base ? &r->base->t : &none,
                            *y = r->new ? &r->new->t : &none;
    uint64_t cb = r->base ? prof_all_calls(r->base) : 0, ca = r->new ? prof_all_calls(r->new) : 0;
    int used = printf("%14s %14s %8s %10s %8s %10s %8s  ", fmt_count(cb, s1, sizeof s1),
           fmt_count(ca, s2, sizeof s2), change((double)cb, (double)ca, s3, sizeof s3),
           signed_ns(r->d_excl, s4, sizeof s4),
           change(raw ? x->excl_raw : x->excl, raw ? y->excl_raw : y->excl, s5, sizeof s5),
           signed_ns(r->d_incl, s6, sizeof s6),
           change(raw ? x->incl_raw : x->incl, raw ? y->incl_raw : y->incl, s7, sizeof s7));
    if (cpu) {
      char c1[48], c2[32];
      double cb0 = !r->base ? 0 : both ? prof_func_figure(a, r->base, PROF_W_CPU, 0)
                                       : r->base->pc.cpu_self;
      double ca0 = !r->new ? 0 : both ? prof_func_figure(b, r->new, PROF_W_CPU, 0)
                                      : r->new->pc.cpu_self;
      used += printf("%10s %8s  ", signed_ns(r->d_cpu, c1, sizeof c1),
                     change(cb0, ca0, c2, sizeof c2));
    }
    disp_name(stdout, r->new ? r->new->name : r->base->name,
              r->new ? (r->base ? "" : "  [new]") : "  [gone]", (size_t)used);
    putchar('\n');
  }
  free(rows);
  prof_free(a);
  prof_free(b);
  return 0;
}
