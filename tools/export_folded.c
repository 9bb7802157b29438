/*
** export_folded.c -- '--format=folded': one "a;b;c <exclusive ns>" line per
** call path of the tree summed over all threads and dumps, the input of
** flamegraph.pl and most flame-graph viewers. The output grows with the sum
** of path lengths, as the format requires; the walk itself is iterative.
*/
#include <stdlib.h>
#include <string.h>

#include "export.h"
#include "tool.h"

static int write_folded(FILE *f, const struct profile *p)
{
  struct prof_thread t;
  int rc = export_merged_tree(p, &t);
  if (rc) return rc;
  size_t cap = 4096, len = 0;
  char *path = malloc(cap);
  size_t *plen = malloc((size_t)t.nnodes * sizeof *plen);  /* path length before node */
  uint32_t *stack = malloc((size_t)t.nnodes * sizeof *stack);
  if (!path || !plen || !stack) { rc = tool_error("export: out of memory"); goto out; }
  size_t sp = 0;
  for (uint32_t c = t.nodes[0].first; c != PROF_NONE; c = t.nodes[c].next) {
    plen[c] = 0;
    stack[sp++] = c;
  }
  while (sp) {
    uint32_t i = stack[--sp];
    const struct prof_node *n = &t.nodes[i];
    const char *name = p->funcs[n->func].name;
    size_t nl = strlen(name);
    len = plen[i];
    if (len + nl + 2 > cap) {
      while (len + nl + 2 > cap) cap *= 2;
      char *np = realloc(path, cap);
      if (!np) { rc = tool_error("export: out of memory"); goto out; }
      path = np;
    }
    if (len) path[len++] = ';';
    for (size_t k = 0; k < nl; k++) path[len + k] = name[k] == ';' ? ':' : name[k];
    len += nl;
    double excl = n->t.excl;
    if (excl >= 0.5) {
      fwrite(path, 1, len, f);
      fprintf(f, " %.0f\n", excl);
    }
    for (uint32_t c = n->first; c != PROF_NONE; c = t.nodes[c].next) {
      plen[c] = len;
      stack[sp++] = c;
    }
  }
out:
  free(path);
  free(plen);
  free(stack);
  prof_thread_free(&t);
  return rc;
}

const struct exporter export_folded = {
  "folded", "folded stacks 'a;b;c ns' for flame graphs (all threads)", write_folded
};
