/*
** filter.c -- the filters of report, tree and export (filter.h): thread
** selection, focus, hide and a time threshold, done as one rebuild of each
** thread's tree (prof_filter_thread) before anything is printed or written.
*/
#include <stdlib.h>
#include <string.h>

#include "model/filter.h"
#include "model/tool.h"

const char filter_help[] =
  "\nFilters:\n"
  "  -t, --thread=TID|NAME  only the threads with this id or name\n"
  "      --focus=FUNC     only FUNC's subtrees: its outermost calls become the\n"
  "                       top-level calls (several --focus: any of them)\n"
  "      --hide=FUNC      leave FUNC out, its time charged to its caller and\n"
  "                       its callees moved up to the caller (repeatable)\n"
  "      --time-filter=TIME  leave out call paths under TIME inclusive (e.g.\n"
  "                       500ns, 20us, 1.5ms; their time stays in the caller)\n"
  "      --weight=W       the figure that sizes, orders and shares every line:\n"
  "                       cpu (CPU time from samples; the default of a sampled\n"
  "                       run), elapsed (wall time from the hooks; the default\n"
  "                       otherwise) or calls\n"
  "  FUNC is a name as shown, or its qualified name (C++: without return type\n"
  "  and parameters, 'ns::f<int>'), with * and ? as wildcards (quote them).\n";

/* TIME with an optional unit ns, us, ms or s (default ns); -1 if bad. */
static double parse_time(const char *s)
{
  char *end;
  double v = strtod(s, &end);
  if (end == s || !(v >= 0) || v > 1e18) return -1;
  if (!*end || !strcmp(end, "ns")) return v;
  if (!strcmp(end, "us")) return v * 1e3;
  if (!strcmp(end, "ms")) return v * 1e6;
  if (!strcmp(end, "s")) return v * 1e9;
  return -1;
}

int filter_option(const char *cmd, int c, const char *arg, struct filter *f)
{
  switch (c) {
  case 't': f->thread = arg; return 1;
  case 0x200:
  case 0x201: {
    int *n = c == 0x200 ? &f->nfocus : &f->nhide;
    if (*n == FILTER_MAX) {
      tool_error("%s: at most %d --%s options", cmd, FILTER_MAX, c == 0x200 ? "focus" : "hide");
      return -1;
    }
    (c == 0x200 ? f->focus : f->hide)[(*n)++] = arg;
    return 1;
  }
  case 0x202:
    f->min_ns = parse_time(arg);
    if (f->min_ns < 0) {
      tool_error("%s: --time-filter wants a time such as 500ns, 20us, 1.5ms or 2s, not '%s'",
                 cmd, arg);
      return -1;
    }
    return 1;
  case 0x203:
    if (prof_weight_parse(arg, &f->weight) != 0) {
      tool_error("%s: --weight wants cpu, elapsed or calls, not '%s'", cmd, arg);
      return -1;
    }
    return 1;
  default: return 0;
  }
}

int filter_thread_matches(const struct prof_thread *t, const char *sel)
{
  char *end;
  unsigned long long tid = strtoull(sel, &end, 10);
  if (*sel && !*end && tid == t->tid) return 1;
  return !strcmp(t->name, sel);
}

/* Glob match of p against s[0..n-1]: * any run, ? one byte. */
static int glob(const char *p, const char *s, size_t n)
{
  const char *star = NULL, *mark = NULL, *end = s + n;
  while (s < end) {
    if (*p == '*') { star = p++; mark = s; continue; }
    if (*p && (*p == '?' || *p == *s)) { p++; s++; continue; }
    if (!star) return 0;
    p = star + 1;
    s = ++mark;
  }
  while (*p == '*') p++;
  return !*p;
}

/* Past the operator's symbol when s starts with "operator" followed by one
** ("operator()", "operator<<", "operator new", "operator int"), else s. */
static const char *skip_operator(const char *s)
{
  if (strncmp(s, "operator", 8)) return s;
  const char *p = s + 8;
  if (p[0] == '(' && p[1] == ')') return p + 2;
  if (*p == ' ') {                                /* new, delete, conversions */
    p++;
    while (*p && *p != '(' && *p != '<') p++;
    return p;
  }
  while (*p && strchr("<>=!+-*/%^&|~[],", *p)) p++;
  return p;
}

/* The qualified name in a demangled C++ name: without the return type that
** template functions' names start with, the parameters and what follows
** them ("int ns::f<int>(int) const" gives "ns::f<int>"). Sets *len. */
static const char *qualified_name(const char *name, size_t *len)
{
  const char *start = name, *p = name;
  int angle = 0, paren = 0;
  while (*p) {
    if (p == name || p[-1] == ' ' || p[-1] == ':') {
      const char *q = skip_operator(p);
      if (q != p) { p = q; continue; }
    }
    char c = *p;
    if (c == '<') angle++;
    else if (c == '>' && angle) angle--;
    else if (c == '(') {
      /* "(anonymous namespace)::" is part of the name; any other '(' at
      ** the top level opens the parameters */
      if (!angle && !paren && p != start && p[-1] != ':') break;
      paren++;
    } else if (c == ')' && paren) paren--;
    else if (c == ' ' && !angle && !paren) start = p + 1;
    p++;
  }
  *len = (size_t)(p - start);
  return start;
}

int filter_name_matches(const char *pattern, const char *name)
{
  size_t n = strlen(name);
  if (glob(pattern, name, n)) return 1;
  const char *paren = strchr(name, '(');
  if (paren && paren != name && glob(pattern, name, (size_t)(paren - name))) return 1;
  const char *q = qualified_name(name, &n);
  return glob(pattern, q, n);
}

/* Which functions match any of the patterns: a new array of nfuncs flags,
** or NULL when out of memory; *any tells whether one matched. */
static unsigned char *match_funcs(const struct profile *p, const char *const *pat, int n,
                                  int *any)
{
  unsigned char *m = calloc(p->nfuncs ? p->nfuncs : 1, 1);
  *any = 0;
  for (uint32_t f = 0; m && f < p->nfuncs; f++)
    for (int k = 0; k < n && !m[f]; k++)
      if (!p->funcs[f].synthetic && filter_name_matches(pat[k], p->funcs[f].name))
        m[f] = 1, *any = 1;
  return m;
}

/* The action for every node of t; 0 or CAPPROF_ENOMEM. */
static int thread_acts(const struct prof_thread *t, const struct filter *f,
                       const unsigned char *focus, const unsigned char *hide, unsigned char *act)
{
  /* inside[i]: node i is in (or is) a focused subtree */
  unsigned char *inside = focus ? calloc(t->nnodes, 1) : NULL;
  if (focus && !inside) return CAPPROF_ENOMEM;
  act[0] = PROF_KEEP;
  for (uint32_t i = 1; i < t->nnodes; i++) {
    const struct prof_node *n = &t->nodes[i];
    double incl = f->raw ? n->t.incl_raw : n->t.incl;
    act[i] = PROF_KEEP;
    if (focus) {
      inside[i] = inside[n->parent];
      if (!inside[i] && focus[n->func]) {
        inside[i] = 1;
        act[i] = PROF_REROOT;
      }
      if (!inside[i]) { act[i] = PROF_DROP; continue; }
    }
    if (f->min_ns > 0 && incl < f->min_ns) act[i] = PROF_DROP;
    else if (hide && hide[n->func]) act[i] = act[i] == PROF_REROOT ? PROF_DROP : PROF_HIDE;
  }
  free(inside);
  return 0;
}

int filter_apply(struct profile *p, const struct filter *f)
{
  prof_weight_set(p, f->weight, f->raw);
  /* Unhooked functions' later calls are counted for the whole process, not
  ** per thread or call path. */
  if (f->thread || f->nfocus || f->min_ns > 0) p->ucalls_off = 1;
  if (f->thread) {
    uint32_t n = 0;
    for (uint32_t i = 0; i < p->nthreads; i++) {
      if (filter_thread_matches(&p->threads[i], f->thread)) p->threads[n++] = p->threads[i];
      else prof_thread_free(&p->threads[i]);
    }
    p->nthreads = n;
    if (!n) return tool_error("no thread has the id or name '%s'", f->thread);
  }
  if (!f->nfocus && !f->nhide && !(f->min_ns > 0)) {
    if (f->thread) prof_flat(p);            /* else prof_load_all's stands */
    return 0;
  }
  int any_focus = 0, any_hide = 0;
  unsigned char *focus = f->nfocus ? match_funcs(p, f->focus, f->nfocus, &any_focus) : NULL;
  unsigned char *hide = f->nhide ? match_funcs(p, f->hide, f->nhide, &any_hide) : NULL;
  int rc = 0;
  if ((f->nfocus && !focus) || (f->nhide && !hide)) rc = tool_error("out of memory");
  else if (f->nfocus && !any_focus)
    rc = tool_error("--focus: no function matches '%s'%s", f->focus[0],
                    f->nfocus > 1 ? " or the other patterns" : "");
  else if (f->nhide && !any_hide)
    rc = tool_error("--hide: no function matches '%s'%s", f->hide[0],
                    f->nhide > 1 ? " or the other patterns" : "");
  for (uint32_t k = 0; !rc && k < p->nthreads; k++) {
    struct prof_thread *t = &p->threads[k], out;
    unsigned char *act = malloc(t->nnodes);
    if (!act || thread_acts(t, f, focus, hide, act) != 0 ||
        prof_filter_thread(p, t, act, &out) != 0) {
      rc = tool_error("out of memory");
    } else {
      prof_thread_free(t);
      *t = out;
    }
    free(act);
  }
  free(focus);
  free(hide);
  if (!rc) prof_flat(p);
  return rc;
}
