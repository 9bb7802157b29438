/*
** cmd_tree.c -- 'capprof tree DUMP': the CAP view, one indented call tree per
** thread with calls, inclusive and exclusive time, and min/max per call.
*/
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbols.h"
#include "tool.h"

struct kids { uint32_t *first, *next; };

static int by_incl_desc(const struct cpd_thread *t, uint32_t a, uint32_t b)
{
  return t->nodes[a].incl < t->nodes[b].incl;
}

/* Children lists, each sorted by inclusive time, largest first. */
static int build_kids(const struct cpd_thread *t, struct kids *k)
{
  k->first = malloc((size_t)t->node_count * sizeof(uint32_t));
  k->next = malloc((size_t)t->node_count * sizeof(uint32_t));
  if (!k->first || !k->next) return -1;
  for (uint32_t i = 0; i < t->node_count; i++) k->first[i] = k->next[i] = UINT32_MAX;
  for (uint32_t i = t->node_count; i-- > 1;) {        /* insertion keeps order */
    uint32_t p = t->nodes[i].parent, *pp = &k->first[p];
    while (*pp != UINT32_MAX && !by_incl_desc(t, *pp, i)) pp = &k->next[*pp];
    k->next[i] = *pp;
    *pp = i;
  }
  return 0;
}

static void print_thread(const struct cpd_dump *d, const struct cpd_thread *t,
                         struct symbolizer *sym)
{
  struct kids k;
  char c[32], in[32], ex[32], mn[32], mx[32];
  if (build_kids(t, &k) != 0) {
    free(k.first);
    free(k.next);
    tool_error("out of memory");
    return;
  }
  uint64_t total = 0;
  for (uint32_t i = k.first[0]; i != UINT32_MAX; i = k.next[i])
    if (t->nodes[i].key != CPD_KEY_OVERFLOW) total += t->nodes[i].incl;
  printf("thread %" PRIu64 " \"%s\": %u nodes, %s\n", t->tid, t->name, t->node_count - 1,
         fmt_ns(cpd_ticks_to_ns(d, (double)total), c, sizeof c));
  printf("%14s %10s %10s %10s %10s  %s\n", "calls", "inclusive", "exclusive", "min", "max",
         "function");

  /* Depth-first without recursion: trees can be a million levels deep. */
  uint32_t *stack = malloc((size_t)t->node_count * sizeof(uint32_t));
  uint32_t *depth = malloc((size_t)t->node_count * sizeof(uint32_t));
  size_t sp = 0;
  if (!stack || !depth) goto out;
  for (uint32_t i = k.first[0]; i != UINT32_MAX; i = k.next[i]) {
    stack[sp] = i;
    depth[i] = 0;
    sp++;
  }
  /* the pushes above reversed the order; reverse back so the largest is first */
  for (size_t a = 0, b = sp ? sp - 1 : 0; a < b; a++, b--) {
    uint32_t x = stack[a]; stack[a] = stack[b]; stack[b] = x;
  }
  while (sp) {
    uint32_t n = stack[--sp];
    const struct cpd_node *nd = &t->nodes[n];
    uint64_t kid_incl = 0;
    size_t base = sp;
    for (uint32_t ch = k.first[n]; ch != UINT32_MAX; ch = k.next[ch]) {
      kid_incl += t->nodes[ch].incl;
      depth[ch] = depth[n] + 1;
      stack[sp++] = ch;
    }
    for (size_t a = base, b = sp ? sp - 1 : 0; a < b; a++, b--) {
      uint32_t x = stack[a]; stack[a] = stack[b]; stack[b] = x;
    }
    if ((nd->key == CPD_KEY_OVERFLOW || nd->key == CPD_KEY_SINK) && nd->calls == 0) continue;
    struct sym_info si;
    sym_lookup(sym, nd->key, &si);
    double excl = nd->incl > kid_incl ? (double)(nd->incl - kid_incl) : 0;
    printf("%14s %10s %10s %10s %10s  ", fmt_count(nd->calls, c, sizeof c),
           fmt_ns(cpd_ticks_to_ns(d, (double)nd->incl), in, sizeof in),
           fmt_ns(cpd_ticks_to_ns(d, excl), ex, sizeof ex),
           fmt_ns(cpd_ticks_to_ns(d, (double)nd->min), mn, sizeof mn),
           fmt_ns(cpd_ticks_to_ns(d, (double)nd->max), mx, sizeof mx));
    uint32_t dep = depth[n];
    if (dep > 64) printf("[%u] ", dep);
    for (uint32_t i = 0; i < (dep > 64 ? 64 : dep); i++) fputs("  ", stdout);
    printf("%s%s\n", si.name, nd->flags & CPD_NODE_OPEN ? " [open]" : "");
  }
out:
  free(stack);
  free(depth);
  free(k.first);
  free(k.next);
}

int cmd_tree(int argc, char **argv)
{
  if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
    printf("usage: capprof tree DUMP\n");
    return 0;
  }
  if (argc != 2 || argv[1][0] == '-')
    return tool_error("tree: %s (usage: capprof tree DUMP)",
                      argc < 2 ? "no dump given" : argc > 2 ? "one dump at a time"
                                                            : "unknown option");
  struct cpd_dump *d = tool_load(argv[1]);
  if (!d) return 1;
  struct symbolizer *sym = sym_open(d);
  if (!sym) {
    cpd_free(d);
    return tool_error("out of memory");
  }
  for (uint32_t i = 0; i < d->nthreads; i++) {
    if (i) putchar('\n');
    print_thread(d, &d->threads[i], sym);
  }
  sym_close(sym);
  cpd_free(d);
  return 0;
}
