/*
** export_callgrind.c -- '--format=callgrind': the callgrind profile format
** read by KCachegrind and callgrind_annotate. Events: ns (elapsed), and with
** samples Samples and CPU_ns, charged to call paths; the ranking figure
** (--weight, model/weight.h) comes first, Calls too when it ranks. Each function
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
#include "model/weight.h"

/* The events, as stored per function and per arc; written in the order of
** struct event_order (the ranking figure first). */
enum { EV_NS, EV_SAMPLES, EV_CPU, EV_CALLS, NEV };
struct arc { uint32_t caller, callee; uint64_t calls; double v[NEV]; };

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

/* Events to write, ranking figure first (model/weight.h): KCachegrind and
** callgrind_annotate show and sort by the first. */
static int event_order(const struct profile *p, int *ev)
{
  int smp = p->node_samples > 0 || p->has_sampled_threads, n = 0;
  switch (prof_weight_of(p)) {
  case PROF_W_CPU: ev[n++] = EV_CPU; ev[n++] = EV_SAMPLES; ev[n++] = EV_NS; break;
  case PROF_W_CALLS:
    ev[n++] = EV_CALLS; ev[n++] = EV_NS;
    if (smp) { ev[n++] = EV_CPU; ev[n++] = EV_SAMPLES; }
    break;
  default:
    ev[n++] = EV_NS;
    if (smp) { ev[n++] = EV_CPU; ev[n++] = EV_SAMPLES; }
  }
  return n;
}

static const char *const ev_name[NEV] = { "ns", "Samples", "CPU_ns", "Calls" };
static const char *const ev_desc[NEV] = {
  "elapsed: wall time from the hooks", "samples charged to the call path",
  "cpu: CPU time of the samples (samples x interval)", "calls: exact calls",
};

static void put_costs(FILE *f, const double *v, const int *ev, int nev)
{
  for (int k = 0; k < nev; k++) fprintf(f, " %.0f", v[ev[k]]);
  putc('\n', f);
}

/* One callgrind file of threads idx[0..n-1]; part > 0 numbers a thread's
** file among the parts. 0 or an exit status after an error line. */
static int write_part(FILE *f, const struct profile *p, const uint32_t *idx, uint32_t n, int part)
{
  size_t nn = 0;
  for (uint32_t k = 0; k < n; k++) nn += p->threads[idx[k]].nnodes;
  struct arc *arcs = malloc((nn + 1) * sizeof *arcs);
  unsigned char *seen = calloc((size_t)p->nfuncs + 1, 1);  /* fn names written */
  double *self = calloc(((size_t)p->nfuncs + 1) * NEV, sizeof *self);
  unsigned char *used = calloc((size_t)p->nfuncs + 1, 1);
  if (!arcs || !seen || !self || !used) {
    free(arcs); free(seen); free(self); free(used);
    return tool_error("export: out of memory");
  }
  int ev[NEV], nev = event_order(p, ev);
  size_t na = 0;
  double total[NEV] = { 0 };
  /* Every figure through the model: elapsed, cpu and calls as the
  ** weight functions give them; samples as counts. */
  for (uint32_t k = 0; k < n; k++) {
    const struct prof_thread *t = &p->threads[idx[k]];
    for (uint32_t i = 1; i < t->nnodes; i++) {
      const struct prof_node *s = &t->nodes[i];
      double v[NEV];
      v[EV_NS] = prof_node_figure(p, t, i, PROF_W_ELAPSED, 0);
      double in_ns = prof_node_figure(p, t, i, PROF_W_ELAPSED, 1);
      v[EV_CPU] = prof_node_figure(p, t, i, PROF_W_CPU, 0);
      double in_cpu = prof_node_figure(p, t, i, PROF_W_CPU, 1);
      v[EV_SAMPLES] = (double)s->s_self;
      v[EV_CALLS] = (double)s->calls;
      for (int e = 0; e < NEV; e++) { self[s->func * NEV + e] += v[e]; total[e] += v[e]; }
      used[s->func] |= s->calls != 0 || s->s_incl != 0;
      if (s->parent == 0) continue;
      arcs[na++] = (struct arc){ t->nodes[s->parent].func, s->func, s->calls,
                                 { in_ns, (double)s->s_incl, in_cpu, (double)s->calls } };
    }
  }
  qsort(arcs, na, sizeof *arcs, by_pair);
  size_t m = 0;
  for (size_t i = 0; i < na; i++) {
    if (m && arcs[m - 1].caller == arcs[i].caller && arcs[m - 1].callee == arcs[i].callee) {
      arcs[m - 1].calls += arcs[i].calls;
      for (int e = 0; e < NEV; e++) arcs[m - 1].v[e] += arcs[i].v[e];
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
  fprintf(f, "positions: line\n");
  for (int k = 0; k < nev; k++) fprintf(f, "event: %s : %s\n", ev_name[ev[k]], ev_desc[ev[k]]);
  fprintf(f, "events:");
  for (int k = 0; k < nev; k++) fprintf(f, " %s", ev_name[ev[k]]);
  fprintf(f, "\nsummary:");
  put_costs(f, total, ev, nev);
  putc('\n', f);
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
    fprintf(f, "%u", fn->line);
    put_costs(f, &self[fi * NEV], ev, nev);
    while (a < m && arcs[a].caller < fi) a++;
    for (; a < m && arcs[a].caller == fi; a++) {
      const struct prof_func *cf = &p->funcs[arcs[a].callee];
      if (cf->synthetic) continue;
      int cost = 0;
      for (int k = 0; k < nev; k++) cost |= arcs[a].v[ev[k]] >= 0.5;
      if (!arcs[a].calls && !cost) continue;
      if (strcmp(cf->module, fn->module))
        fprintf(f, "cob=%s\n", cf->module[0] ? cf->module : "???");
      if (!same_file(cf, fn)) fprintf(f, "cfi=%s\n", cf->file ? cf->file : "???");
      name_ref(f, "cfn", arcs[a].callee, seen, cf->name);
      /* A reader charges a call line's cost to the callee only when calls
      ** is above 0 (callgrind_annotate adds it to the caller's self
      ** otherwise): a path whose calls were not counted (a callee unhooked
      ** before this caller first called it) is written as one call
      ** (docs/tool.md, "callgrind"). */
      if (!arcs[a].calls) fprintf(f, "# calls on this path not counted: written as 1\n");
      fprintf(f, "calls=%" PRIu64 " %u\n%u", arcs[a].calls ? arcs[a].calls : 1, cf->line, fn->line);
      put_costs(f, arcs[a].v, ev, nev);
    }
    putc('\n', f);
  }
  fprintf(f, "totals:");
  put_costs(f, total, ev, nev);
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
