/*
** export_folded.c -- '--format=folded': one "a;b;c <self>" line per
** call path of the tree summed over all threads and dumps, the figure the
** profile ranks by (--weight: cpu ns, elapsed ns or calls), the input of
** flamegraph.pl and most flame-graph viewers. Paths deeper than HEAD + TAIL
** frames keep their first HEAD and last TAIL frames around a "[N frames elided]"
** marker, so the output stays linear in the number of nodes even for a
** recursion a million calls deep.
*/
#include <stdlib.h>
#include <string.h>

#include "export/export.h"
#include "model/tool.h"
#include "model/weight.h"

#define HEAD 64
#define TAIL 64

static void put_name(FILE *f, const char *name)
{
  if (!strchr(name, ';')) { fputs(name, f); return; }
  for (; *name; name++) putc(*name == ';' ? ':' : *name, f);
}

static int write_folded(FILE *f, const struct profile *p)
{
  struct prof_thread t;
  int rc = export_merged_tree(p, &t);
  if (rc) return rc;
  size_t cap = 4096, len = 0, n = t.nnodes;
  char *path = malloc(cap);
  size_t *plen = malloc(n * sizeof *plen);   /* path length before the node */
  size_t *head = malloc(n * sizeof *head);   /* length of its first HEAD frames */
  uint32_t *depth = malloc(n * sizeof *depth);
  uint32_t *stack = malloc(n * sizeof *stack), tail[TAIL];
  if (!path || !plen || !head || !depth || !stack) {
    rc = tool_error("export: out of memory");
    goto out;
  }
  size_t sp = 0;
  plen[0] = head[0] = 0;
  depth[0] = 0;
  stack[sp++] = 0;
  while (sp) {
    uint32_t i = stack[--sp];
    const struct prof_node *nd = &t.nodes[i];
    len = plen[i];
    if (i && depth[i] <= HEAD + TAIL) {
      const char *name = p->funcs[nd->func].name;
      size_t nl = strlen(name);
      if (len + nl + 2 > cap) {
        while (len + nl + 2 > cap) cap *= 2;
        char *np = realloc(path, cap);
        if (!np) { rc = tool_error("export: out of memory"); goto out; }
        path = np;
      }
      if (len) path[len++] = ';';
      for (size_t k = 0; k < nl; k++) path[len + k] = name[k] == ';' ? ':' : name[k];
      len += nl;
    }
    if (i) head[i] = depth[i] <= HEAD ? len : head[nd->parent];
    double w = i ? prof_node_self(p, &t, i) : 0;
    if (w >= 0.5) {
      if (depth[i] <= HEAD + TAIL) {
        fwrite(path, 1, len, f);
      } else {
        fwrite(path, 1, head[i], f);
        fprintf(f, ";[%u frames elided]", depth[i] - HEAD - TAIL);
        uint32_t k = 0;
        for (uint32_t a = i; k < TAIL; a = t.nodes[a].parent) tail[k++] = a;
        while (k) {
          putc(';', f);
          put_name(f, p->funcs[t.nodes[tail[--k]].func].name);
        }
      }
      fprintf(f, " %.0f\n", w);
    }
    for (uint32_t c = nd->first; c != PROF_NONE; c = t.nodes[c].next) {
      plen[c] = len;
      depth[c] = depth[i] + 1;
      stack[sp++] = c;
    }
  }
out:
  free(path);
  free(plen);
  free(head);
  free(depth);
  free(stack);
  prof_thread_free(&t);
  return rc;
}

const struct exporter export_folded = {
  "folded", "folded stacks 'a;b;c ns' for flame graphs (all threads)", write_folded
};
