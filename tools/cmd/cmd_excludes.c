/*
** cmd_excludes.c -- 'capprof excludes DUMP...': the functions not worth their
** hooks (throttled by the runtime, or shorter per call than the throttling
** threshold over many calls), and the compiler flags that rebuild the program
** without hooks in them: GCC's -finstrument-functions-exclude-function-list,
** or, where no such list exists (Clang, GCC -pg -mfentry), the attribute.
*/
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "model/profile.h"
#include "model/tool.h"
#include "sym/symbols.h"

#define DEFAULT_MIN_CALLS 10000.0
#define DEFAULT_BELOW_NS  30.0   /* when the dumps had throttling off */

static const char usage_text[] =
  "usage: capprof excludes [options] DUMP...\n"
  "Lists the functions that were throttled, or that took less than the throttling\n"
  "threshold per call (raw inclusive time) over many calls, and prints the flags\n"
  "that rebuild the program without their hooks.\n"
  "  --below=NS       per-call threshold in ns (default: the dump's throttling\n"
  "                   threshold, 30 without one)\n"
  "  --min-calls=N    only functions with at least N calls (default 10000)\n"
  "  --flags-only     print only the GCC flag line (nothing if none), for Makefiles\n";

/* GCC matches each list entry as a substring of its printable name, e.g.
** "ns::Foo::bar" in "int ns::Foo::bar(int)". From a demangled name keep the
** qualified name without parameters or return type; inside a template
** scope only the last component, without template arguments. Empty when no
** entry can be written (a comma would split it, or it would match every
** operator of its kind). */
static void gcc_name(const char *name, char *out, size_t n)
{
  size_t len = strlen(name), end = len, start = 0;
  int depth = 0;
  for (size_t i = 0; i < len; i++) {
    char c = name[i];
    if (c == '<') depth++;
    else if (c == '>' && depth > 0) depth--;
    else if (c == '(' && depth == 0) {
      if (i >= 8 && !strncmp(name + i - 8, "operator", 8) && name[i + 1] == ')') { i++; continue; }
      end = i;
      break;
    } else if (c == ' ' && depth == 0 && strncmp(name + i + 1, "const", 5) &&
               (i < 8 || strncmp(name + i - 8, "operator", 8))) {
      start = i + 1;                                   /* after a return type */
    }
  }
  char q[1024];
  size_t k = 0;
  int templ = 0;
  depth = 0;
  for (size_t i = start; i < end && k + 1 < sizeof q; i++) {
    char c = name[i];
    if (c == '<') { depth++; templ = 1; continue; }
    if (c == '>' && depth > 0) { depth--; continue; }
    if (depth) continue;
    q[k++] = c;
  }
  q[k] = '\0';
  const char *r = q;
  if (templ) {                                         /* last component only */
    const char *last = strstr(r, "::");
    while (last) { r = last + 2; last = strstr(r, "::"); }
    if (!strncmp(r, "operator", 8)) r = "";            /* would match every operator */
  }
  if (!*r || strchr(r, ',') || strchr(r, ' ') || strlen(r) + 1 > n) { out[0] = '\0'; return; }
  snprintf(out, n, "%s", r);
}

int cmd_excludes(int argc, char **argv)
{
  static const struct option opts[] = {
    { "below", required_argument, NULL, 'b' },
    { "min-calls", required_argument, NULL, 'm' },
    { "flags-only", no_argument, NULL, 'f' },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 }
  };
  double below = -1, min_calls = DEFAULT_MIN_CALLS;
  int flags_only = 0, c;
  opterr = 0;
  optind = 1;
  while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
    switch (c) {
    case 'b': if (tool_parse_num("excludes", "--below", optarg, 1e12, &below)) return 2; break;
    case 'm': if (tool_parse_num("excludes", "--min-calls", optarg, 1e18, &min_calls)) return 2; break;
    case 'f': flags_only = 1; break;
    case 'h': fputs(usage_text, stdout); return 0;
    default: return tool_bad_option("excludes", argv, c);
    }
  }
  if (optind >= argc) {
    fputs(usage_text, stderr);
    return 2;
  }
  struct profile *p = prof_load_all(argc - optind, argv + optind);
  if (!p) return 1;
  prof_flat(p);
  uint32_t hooks = 0;
  double dump_below = 0;
  for (uint32_t k = 0; k < p->ndumps; k++) {
    hooks |= p->dumps[k].d->hooks;
    if ((double)p->dumps[k].d->throttle_ns > dump_below) dump_below = (double)p->dumps[k].d->throttle_ns;
  }
  if (below < 0) below = dump_below > 0 ? dump_below : DEFAULT_BELOW_NS;

  char list[65536] = "";
  size_t used = 0;
  uint32_t count = 0, unlisted = 0;
  char a[32], b[32], g[512];
  if (!flags_only)
    printf("# functions to build without hooks: throttled, or under %s per call (raw inclusive)\n"
           "# over at least %.0f calls\n", fmt_ns(below, a, sizeof a), min_calls);
  for (uint32_t f = 0; f < p->nfuncs; f++) {
    const struct prof_func *fn = &p->funcs[f];
    if (fn->synthetic || fn->zone || !fn->calls) continue;
    double avg = fn->timed ? fn->t.incl_raw / (double)fn->timed : 0;
    int short_calls = (double)fn->calls >= min_calls && avg < below;
    if (!fn->throttled && !short_calls) continue;
    count++;
    gcc_name(fn->name, g, sizeof g);
    if (!flags_only) {
      printf("#   %s", fn->name);
      if (fn->file) printf("  (%s:%u)", sym_base_name(fn->file), fn->line);
      if (fn->throttled) printf(": throttled, %s calls\n", fmt_count(fn->calls, a, sizeof a));
      else printf(": %s per call, %s calls\n", fmt_ns(avg, b, sizeof b), fmt_count(fn->calls, a, sizeof a));
    }
    if (!g[0] || strstr(list, g)) {                    /* no entry, or already matched */
      unlisted += !g[0];
      continue;
    }
    size_t gl = strlen(g);
    if (used + gl + 2 >= sizeof list) { unlisted++; continue; }
    if (used) list[used++] = ',';
    memcpy(list + used, g, gl + 1);
    used += gl;
  }
  if (flags_only) {
    if (used) printf("-finstrument-functions-exclude-function-list=%s\n", list);
    prof_free(p);
    return 0;
  }
  if (!count) {
    printf("# none\n");
    prof_free(p);
    return 0;
  }
  if (used) {
    printf("# GCC -finstrument-functions: entries match as substrings of GCC's function names%s\n",
           hooks & CPD_HOOKS_FENTRY ? "\n# (this program used gcc -pg -mfentry: GCC ignores this list there)" : "");
    printf("-finstrument-functions-exclude-function-list=%s\n", list);
  }
  if (unlisted)
    printf("# %u of them cannot be named in that list (an operator of a template, or a\n"
           "# comma or space in the name)\n", unlisted);
  printf("# Clang has no such list (clang 14: unknown argument), and gcc -pg -mfentry\n"
         "# ignores it: mark each function above __attribute__((no_instrument_function))\n");
  prof_free(p);
  return 0;
}
