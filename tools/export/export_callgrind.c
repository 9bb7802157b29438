/*
** export_callgrind.c -- '--format=callgrind': the callgrind profile format
** read by KCachegrind and callgrind_annotate. One event, ns (with samples,
** two more: Samples and CPU_ns, charged to call paths). Each function
** carries its exclusive time on a cost line; each caller->callee pair, summed
** over call paths and threads, a calls= line followed by its inclusive time.
** With --per-thread, one more file per thread (OUT-01, OUT-02...: the parts
** KCachegrind loads together) beside the summed one.
*/
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "export/export.h"
#include "model/tool.h"

struct arc { uint32_t caller, callee; uint64_t calls; double incl, samples, cpu; };

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

static int same_file(const struct prof_func *a, const struct prof_func *b)
{
  if (!a->file || !b->file) return !a->file && !b->file;
  return !strcmp(a->file, b->file);
}

/* One callgrind file of threads idx[0..n-1]; part > 0 numbers a thread's
** file among the parts. 0 or an exit status after an error line. */
static int write_part(FILE *f, const struct profile *p, const uint32_t *idx, uint32_t n, int part)
{
  size_t nn = 0;
  for (uint32_t k = 0; k < n; k++) nn += p->threads[idx[k]].nnodes;
  struct arc *arcs = malloc((nn + 1) * sizeof *arcs);
  unsigned char *seen = calloc((size_t)p->nfuncs + 1, 1);  /* fn names written */
  double *self = calloc(((size_t)p->nfuncs + 1) * 3, sizeof *self);  /* ns, samples, cpu */
  unsigned char *used = calloc((size_t)p->nfuncs + 1, 1);
  if (!arcs || !seen || !self || !used) {
    free(arcs); free(seen); free(self); free(used);
    return tool_error("export: out of memory");
  }
  int smp = p->node_samples > 0 || p->has_sampled_threads;
  size_t na = 0;
  double total = 0, total_samples = 0, total_cpu = 0;
  for (uint32_t k = 0; k < n; k++) {
    const struct prof_thread *t = &p->threads[idx[k]];
    total += t->nodes[0].t.incl;
    total_samples += (double)t->nodes[0].s_incl;
    total_cpu += t->nodes[0].s_incl * t->sample_ns;
    for (uint32_t i = 1; i < t->nnodes; i++) {
      const struct prof_node *s = &t->nodes[i];
      self[s->func * 3] += s->t.excl;
      self[s->func * 3 + 1] += (double)s->s_self;
      self[s->func * 3 + 2] += s->s_self * t->sample_ns;
      used[s->func] |= s->calls != 0 || s->s_incl != 0;
      if (s->parent == 0) continue;
      arcs[na++] = (struct arc){ t->nodes[s->parent].func, s->func, s->calls, s->t.incl,
                                 (double)s->s_incl, s->s_incl * t->sample_ns };
    }
  }
  qsort(arcs, na, sizeof *arcs, by_pair);
  size_t m = 0;
  for (size_t i = 0; i < na; i++) {
    if (m && arcs[m - 1].caller == arcs[i].caller && arcs[m - 1].callee == arcs[i].callee) {
      arcs[m - 1].calls += arcs[i].calls;
      arcs[m - 1].incl += arcs[i].incl;
      arcs[m - 1].samples += arcs[i].samples;
      arcs[m - 1].cpu += arcs[i].cpu;
    } else {
      arcs[m++] = arcs[i];
    }
  }

  fprintf(f, "# callgrind format\nversion: 1\ncreator: capprof\n");
  if (p->ndumps) fprintf(f, "pid: %" PRIu64 "\ncmd: %s\n", p->dumps[0].d->pid, p->dumps[0].d->exe);
  if (part) {
    const struct prof_thread *t = &p->threads[idx[0]];
    fprintf(f, "part: %d\nthread: %d\ndesc: Thread: tid %" PRIu64 " %s\n", part, part, t->tid,
            t->name);
  }
  if (smp)
    fprintf(f, "positions: line\nevent: Samples : samples charged to the call path\n"
               "event: CPU_ns : CPU time of the samples (samples x interval)\n"
               "events: ns Samples CPU_ns\nsummary: %.0f %.0f %.0f\n\n", total, total_samples,
            total_cpu);
  else
    fprintf(f, "positions: line\nevents: ns\nsummary: %.0f\n\n", total);
  /* Function ids are the profile's function indices, unique per (name,
  ** module); file and object names are written out in full. A call line
  ** names the callee's file (cfi=) only when it differs from the caller's,
  ** as callgrind does: callgrind_annotate strips the working directory
  ** from fl= but not from cfi=, and would list such functions twice. */
  size_t a = 0;
  for (uint32_t fi = 0; fi < p->nfuncs; fi++) {
    const struct prof_func *fn = &p->funcs[fi];
    if (fn->synthetic || !used[fi]) continue;
    fprintf(f, "ob=%s\nfl=%s\n", fn->module[0] ? fn->module : "???", fn->file ? fn->file : "???");
    name_ref(f, "fn", fi, seen, fn->name);
    if (smp)
      fprintf(f, "%u %.0f %.0f %.0f\n", fn->line, self[fi * 3], self[fi * 3 + 1], self[fi * 3 + 2]);
    else
      fprintf(f, "%u %.0f\n", fn->line, self[fi * 3]);
    while (a < m && arcs[a].caller < fi) a++;
    for (; a < m && arcs[a].caller == fi; a++) {
      const struct prof_func *cf = &p->funcs[arcs[a].callee];
      if (cf->synthetic) continue;
      if (strcmp(cf->module, fn->module))
        fprintf(f, "cob=%s\n", cf->module[0] ? cf->module : "???");
      if (!same_file(cf, fn)) fprintf(f, "cfi=%s\n", cf->file ? cf->file : "???");
      name_ref(f, "cfn", arcs[a].callee, seen, cf->name);
      fprintf(f, "calls=%" PRIu64 " %u\n%u %.0f", arcs[a].calls, cf->line, fn->line, arcs[a].incl);
      if (smp) fprintf(f, " %.0f %.0f", arcs[a].samples, arcs[a].cpu);
      putc('\n', f);
    }
    putc('\n', f);
  }
  if (smp) fprintf(f, "totals: %.0f %.0f %.0f\n", total, total_samples, total_cpu);
  else fprintf(f, "totals: %.0f\n", total);
  free(arcs);
  free(seen);
  free(self);
  free(used);
  return 0;
}

static int write_callgrind(FILE *f, const struct profile *p)
{
  uint32_t *all = malloc(((size_t)p->nthreads + 1) * sizeof *all);
  if (!all) return tool_error("export: out of memory");
  for (uint32_t k = 0; k < p->nthreads; k++) all[k] = k;
  int rc = write_part(f, p, all, p->nthreads, 0);
  for (uint32_t k = 0; !rc && export_opts.per_thread && k < p->nthreads; k++) {
    char path[4096];
    snprintf(path, sizeof path, "%s-%02u", export_opts.out, k + 1);
    FILE *t = tool_open_out(path);
    if (!t) { rc = 1; break; }
    rc = write_part(t, p, &all[k], 1, (int)k + 1);
    if (tool_close_out(t, path) != 0 && !rc) rc = 1;
  }
  free(all);
  return rc;
}

const struct exporter export_callgrind = {
  "callgrind", "callgrind format for KCachegrind and callgrind_annotate", write_callgrind
};
