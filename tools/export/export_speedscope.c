/*
** export_speedscope.c -- '--format=speedscope': speedscope's file format
** (https://www.speedscope.app/file-format-schema.json), one evented profile
** per thread. A call tree has no timeline, so each node is laid out as one
** block: its children one after another from its start, then its own time.
** With samples charged to call paths, each thread gets a second profile laid
** out by the CPU time of its samples.
*/
#include <inttypes.h>
#include <stdlib.h>

#include "export/export.h"
#include "model/tool.h"

/* A node's length in the layout: its inclusive time, or the CPU time of its
** samples. */
static double span(const struct prof_thread *t, const struct prof_node *n, int cpu)
{
  return cpu ? n->s_incl * t->sample_ns : n->t.incl;
}

static int write_thread(FILE *f, const struct prof_thread *t, int cpu)
{
  uint32_t *stack = malloc(((size_t)t->nnodes * 2 + 1) * sizeof *stack);
  double *start = malloc((size_t)t->nnodes * sizeof *start);
  if (!stack || !start) {
    free(stack); free(start);
    return tool_error("export: out of memory");
  }
  fprintf(f, "{\"type\":\"evented\",\"name\":");
  char name[512];
  snprintf(name, sizeof name, "%s (tid %" PRIu64 ")%s", t->name[0] ? t->name : "thread", t->tid,
           cpu ? " CPU time from samples" : t->sampled ? " sampled call tree, CPU time" : "");
  json_string(f, name);
  fprintf(f, ",\"unit\":\"nanoseconds\",\"startValue\":0,\"events\":[");
  double cursor = 0;
  int first = 1;
  size_t sp = 0;
  stack[sp++] = 0;
  while (sp) {
    uint32_t i = stack[--sp];
    if (i & 0x80000000u) {            /* leaving node ~i */
      i = ~i;
      double end = start[i] + span(t, &t->nodes[i], cpu);
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
  for (uint32_t k = 0; k < p->nthreads; k++) {
    if (k) fputs(",\n", f);
    int rc = write_thread(f, &p->threads[k], 0);
    if (!rc && !p->threads[k].sampled && p->threads[k].nodes[0].s_incl) {
      fputs(",\n", f);
      rc = write_thread(f, &p->threads[k], 1);
    }
    if (rc) return rc;
  }
  fprintf(f, "]}\n");
  return 0;
}

const struct exporter export_speedscope = {
  "speedscope", "speedscope JSON, one evented profile per thread", write_speedscope
};
