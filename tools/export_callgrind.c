/*
** export_callgrind.c -- '--format=callgrind': the callgrind profile format
** read by KCachegrind and callgrind_annotate. One event, ns. Each function
** carries its exclusive time on a cost line; each caller->callee pair, summed
** over call paths and threads, a calls= line followed by its inclusive time.
*/
#include <inttypes.h>
#include <stdlib.h>

#include "export.h"
#include "tool.h"

struct arc { uint32_t caller, callee; uint64_t calls; double incl; };

static int by_pair(const void *pa, const void *pb)
{
  const struct arc *a = pa, *b = pb;
  if (a->caller != b->caller) return a->caller < b->caller ? -1 : 1;
  if (a->callee != b->callee) return a->callee < b->callee ? -1 : 1;
  return 0;
}

/* Callgrind's name compression: "(id) name" the first time, "(id)" after. */
static void name_ref(FILE *f, const char *key, uint32_t id, unsigned char *seen, const char *name)
{
  fprintf(f, "%s=(%u)", key, id + 1);
  if (!seen[id]) {
    seen[id] = 1;
    putc(' ', f);
    fputs(name, f);
  }
  putc('\n', f);
}

static int write_callgrind(FILE *f, const struct profile *p)
{
  size_t n = 0;
  for (uint32_t k = 0; k < p->nthreads; k++) n += p->threads[k].nnodes;
  struct arc *arcs = malloc((n + 1) * sizeof *arcs);
  unsigned char *seen = calloc((size_t)p->nfuncs + 1, 1);  /* fn names written */
  if (!arcs || !seen) {
    free(arcs); free(seen);
    return tool_error("export: out of memory");
  }
  size_t na = 0;
  for (uint32_t k = 0; k < p->nthreads; k++) {
    const struct prof_thread *t = &p->threads[k];
    for (uint32_t i = 1; i < t->nnodes; i++) {
      const struct prof_node *s = &t->nodes[i];
      if (s->parent == 0) continue;
      arcs[na++] = (struct arc){ t->nodes[s->parent].func, s->func, s->calls, s->t.incl };
    }
  }
  qsort(arcs, na, sizeof *arcs, by_pair);
  size_t m = 0;
  for (size_t i = 0; i < na; i++) {
    if (m && arcs[m - 1].caller == arcs[i].caller && arcs[m - 1].callee == arcs[i].callee) {
      arcs[m - 1].calls += arcs[i].calls;
      arcs[m - 1].incl += arcs[i].incl;
    } else {
      arcs[m++] = arcs[i];
    }
  }
  double total = 0;
  for (uint32_t k = 0; k < p->nthreads; k++) total += p->threads[k].nodes[0].t.incl;

  fprintf(f, "# callgrind format\nversion: 1\ncreator: capprof\n");
  if (p->ndumps) {
    fprintf(f, "pid: %" PRIu64 "\ncmd: %s\n", p->dumps[0].d->pid, p->dumps[0].d->exe);
  }
  fprintf(f, "positions: line\nevents: ns\nsummary: %.0f\n\n", total);
  /* Function ids are the profile's function indices, unique per (name,
  ** module); file and object names are written out in full. */
  size_t a = 0;
  for (uint32_t fi = 0; fi < p->nfuncs; fi++) {
    const struct prof_func *fn = &p->funcs[fi];
    if (fn->synthetic) continue;
    fprintf(f, "ob=%s\nfl=%s\n", fn->module[0] ? fn->module : "???", fn->file ? fn->file : "???");
    name_ref(f, "fn", fi, seen, fn->name);
    fprintf(f, "%u %.0f\n", fn->line, fn->t.excl);
    while (a < m && arcs[a].caller < fi) a++;
    for (; a < m && arcs[a].caller == fi; a++) {
      const struct prof_func *cf = &p->funcs[arcs[a].callee];
      if (cf->synthetic) continue;
      fprintf(f, "cob=%s\ncfi=%s\n", cf->module[0] ? cf->module : "???", cf->file ? cf->file : "???");
      name_ref(f, "cfn", arcs[a].callee, seen, cf->name);
      fprintf(f, "calls=%" PRIu64 " %u\n%u %.0f\n", arcs[a].calls, cf->line, fn->line, arcs[a].incl);
    }
    putc('\n', f);
  }
  fprintf(f, "totals: %.0f\n", total);
  free(arcs);
  free(seen);
  return 0;
}

const struct exporter export_callgrind = {
  "callgrind", "callgrind format for KCachegrind and callgrind_annotate", write_callgrind
};
