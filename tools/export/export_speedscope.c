/*
** export_speedscope.c -- '--format=speedscope': speedscope's file format
** (https://www.speedscope.app/file-format-schema.json), one evented profile
** per thread. A call tree has no timeline, so each node is laid out as one
** block: its children one after another from its start, then its own time.
** Each thread's first profile (the one speedscope opens) is laid out by the
** figure the profile ranks by (--weight, model/weight.h); with samples
** charged to call paths a second one by the other of cpu and elapsed.
*/
#include <inttypes.h>
#include <stdlib.h>

#include "export/export.h"
#include "model/tool.h"
#include "model/weight.h"

static int write_thread(FILE *f, const struct profile *p, const struct prof_thread *t,
                        enum prof_weight w)
{
  uint32_t *stack = malloc(((size_t)t->nnodes * 2 + 1) * sizeof *stack);
  double *start = malloc((size_t)t->nnodes * sizeof *start);
  if (!stack || !start) {
    free(stack); free(start);
    return tool_error("export: out of memory");
  }
  fprintf(f, "{\"type\":\"evented\",\"name\":");
  char name[512];
  snprintf(name, sizeof name, "%s (tid %" PRIu64 ") %s", t->name[0] ? t->name : "thread", t->tid,
           w == PROF_W_CPU ? "cpu: CPU time from samples"
           : w == PROF_W_CALLS ? "calls"
           : t->sampled ? "sampled call tree, CPU time" : "elapsed: wall time from the hooks");
  json_string(f, name);
  fprintf(f, ",\"unit\":\"%s\",\"startValue\":0,\"events\":[",
          w == PROF_W_CALLS ? "none" : "nanoseconds");
  double cursor = 0;
  int first = 1;
  size_t sp = 0;
  stack[sp++] = 0;
  while (sp) {
    uint32_t i = stack[--sp];
    if (i & 0x80000000u) {            /* leaving node ~i */
      i = ~i;
      double end = start[i] + prof_node_figure(p, t, i, w, 1);
      if (end > cursor) cursor = end;
      fprintf(f, ",\n{\"type\":\"C\",\"frame\":%u,\"at\":%.1f}", t->nodes[i].func, cursor);
      continue;
    }
    if (i) {
      start[i] = cursor;
      fprintf(f, "%s\n{\"type\":\"O\",\"frame\":%u,\"at\":%.1f}", first ? "" : ",",
              t->nodes[i].func, cursor);
      first = 0;
      stack[sp++] = ~i;
    }
    /* push children smallest first so the largest is laid out first */
    size_t base = sp;
    for (uint32_t c = t->nodes[i].first; c != PROF_NONE; c = t->nodes[c].next) stack[sp++] = c;
    for (size_t a = base, b = sp ? sp - 1 : 0; a < b; a++, b--) {
      uint32_t x = stack[a]; stack[a] = stack[b]; stack[b] = x;
    }
  }
  fprintf(f, "],\"endValue\":%.1f}", cursor);
  free(stack);
  free(start);
  return 0;
}

static int write_speedscope(FILE *f, const struct profile *p)
{
  fprintf(f, "{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\","
             "\"exporter\":\"capprof\",\"name\":");
  json_string(f, p->ndumps ? p->dumps[0].d->exe : "capprof");
  fprintf(f, ",\"activeProfileIndex\":0,\n\"shared\":{\"frames\":[");
  for (uint32_t i = 0; i < p->nfuncs; i++) {
    const struct prof_func *fn = &p->funcs[i];
    fprintf(f, "%s\n{\"name\":", i ? "," : "");
    json_string(f, fn->name);
    if (fn->file) {
      fprintf(f, ",\"file\":");
      json_string(f, fn->file);
      fprintf(f, ",\"line\":%u", fn->line);
    }
    putc('}', f);
  }
  fprintf(f, "]},\n\"profiles\":[");
  enum prof_weight w = prof_weight_of(p);
  enum prof_weight other = w == PROF_W_CPU ? PROF_W_ELAPSED : PROF_W_CPU;
  for (uint32_t k = 0; k < p->nthreads; k++) {
    const struct prof_thread *t = &p->threads[k];
    if (k) fputs(",\n", f);
    int rc = write_thread(f, p, t, t->sampled ? PROF_W_ELAPSED : w);
    if (!rc && !t->sampled && t->nodes[0].s_incl && w != PROF_W_CALLS) {
      fputs(",\n", f);
      rc = write_thread(f, p, t, other);
    }
    if (rc) return rc;
  }
  fprintf(f, "]}\n");
  return 0;
}

const struct exporter export_speedscope = {
  "speedscope", "speedscope JSON, one evented profile per thread", write_speedscope
};
