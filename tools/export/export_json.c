/*
** export_json.c -- '--format=json': the flat profile and every thread's tree
** as one JSON document (schema in docs/tool.md). Trees are flat node lists
** with parent ids, so a million-deep tree needs no deep nesting to parse.
*/
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export/export.h"
#include "model/tool.h"
#include "model/weight.h"

/* Length of a valid UTF-8 sequence at s, or 0. */
static int utf8_len(const unsigned char *s)
{
  int n = s[0] >= 0xF0 && s[0] <= 0xF4 ? 4 : s[0] >= 0xE0 ? 3 : s[0] >= 0xC2 && s[0] < 0xE0 ? 2 : 0;
  for (int i = 1; i < n; i++)
    if ((s[i] & 0xC0) != 0x80) return 0;
  return n;
}

void json_string(FILE *f, const char *str)
{
  const unsigned char *s = (const unsigned char *)(str ? str : "");
  putc('"', f);
  while (*s) {
    if (*s == '"' || *s == '\\') { putc('\\', f); putc(*s++, f); }
    else if (*s < 0x20) fprintf(f, "\\u%04x", *s++);
    else if (*s < 0x80) putc(*s++, f);
    else {
      int n = utf8_len(s);
      if (n) { fwrite(s, 1, (size_t)n, f); s += n; }
      else { putc('?', f); s++; }
    }
  }
  putc('"', f);
}

/* Append key and v (a whole number of ns) to buf at *o; no printf: a
** million nodes make twelve million numbers. */
static void num(char *buf, size_t *o, const char *key, double v)
{
  size_t k = strlen(key);
  memcpy(buf + *o, key, k);
  *o += k;
  if (v >= 0 && v < 1e18) *o += fmt_u64((uint64_t)(v + 0.5), buf + *o, 24);
  else *o += (size_t)snprintf(buf + *o, 32, "%.0f", v > 0 ? v : 0);
}

/* The calls and the times of a function or a node, in the names every
** command and export shares (docs/tool.md): self = exclusive, incl =
** inclusive, per_call = mean per call, incl_min/incl_max = one call's.
** Per-call figures divide by timed: a throttled function's times cover its
** timed calls only (docs/runtime.md). */
static void times(FILE *f, uint64_t calls, uint64_t timed, const struct prof_times *t,
                  double incl_all, double incl_all_raw)
{
  char buf[1024];
  size_t o = 0;
  memcpy(buf, "\"calls\":", 8);
  o = 8;
  o += fmt_u64(calls, buf + o, 24);
  num(buf, &o, ",\"self_ns\":", t->excl);
  num(buf, &o, ",\"incl_ns\":", t->incl);
  num(buf, &o, ",\"self_per_call_ns\":", prof_per_call(t->excl, timed));
  num(buf, &o, ",\"incl_per_call_ns\":", prof_per_call(incl_all, timed));
  num(buf, &o, ",\"incl_min_ns\":", t->min);
  num(buf, &o, ",\"incl_max_ns\":", t->max);
  num(buf, &o, ",\"self_ns_raw\":", t->excl_raw);
  num(buf, &o, ",\"incl_ns_raw\":", t->incl_raw);
  num(buf, &o, ",\"self_per_call_ns_raw\":", prof_per_call(t->excl_raw, timed));
  num(buf, &o, ",\"incl_per_call_ns_raw\":", prof_per_call(incl_all_raw, timed));
  num(buf, &o, ",\"incl_min_ns_raw\":", t->min_raw);
  num(buf, &o, ",\"incl_max_ns_raw\":", t->max_raw);
  /* mostly probe cost (prof_unreliable): the compensated figure may be off by half */
  o += (size_t)snprintf(buf + o, 64, ",\"self_unreliable\":%s,\"incl_unreliable\":%s",
                        prof_unreliable(t->excl, prof_excl_basis(t)) ? "true" : "false",
                        prof_unreliable(t->incl, t->incl_raw) ? "true" : "false");
  fwrite(buf, 1, o, f);
}

/* Whether node n is written: the placeholders of the runtime's overflow
** paths are left out until a call lands in them. */
static int node_listed(const struct profile *p, const struct prof_node *n)
{
  return n->calls || !p->funcs[n->func].synthetic;
}

/* Samples charged to a function or node (docs/tool.md): "samples" and
** "cpu_ns" count it and everything below it, "self_samples" and
** "cpu_self_ns" itself only (the program's own code), "probe_samples" those
** in capprof's hooks on it. Written when the profile has samples. */
static void samples(FILE *f, const struct prof_samples *s)
{
  char buf[256];
  size_t o = 0;
  num(buf, &o, ",\"samples\":", (double)s->incl);
  num(buf, &o, ",\"self_samples\":", (double)s->self);
  num(buf, &o, ",\"cpu_ns\":", s->cpu_incl);
  num(buf, &o, ",\"cpu_self_ns\":", s->cpu_self);
  num(buf, &o, ",\"probe_samples\":", (double)s->probe);
  fwrite(buf, 1, o, f);
}

static int write_json(FILE *f, const struct profile *p)
{
  int with_samples = p->node_samples || p->pc_samples;
  /* The figure every view ranks by, and the total its shares divide. */
  fprintf(f, "{\"format\":\"capprof\",\"version\":2,\"weight\":\"%s\",\"weight_total\":%.0f,"
             "\n\"dumps\":[", prof_weight_name(p), prof_weight_total(p));
  for (uint32_t i = 0; i < p->ndumps; i++) {
    const struct prof_dump *pd = &p->dumps[i];
    fprintf(f, "%s\n{\"path\":", i ? "," : "");
    json_string(f, pd->d->path);
    fprintf(f, ",\"pid\":%" PRIu64 ",\"exe\":", pd->d->pid);
    json_string(f, pd->d->exe);
    fprintf(f, ",\"probe_inner_ns\":%.3f,\"probe_outer_ns\":%.3f,\"probe_scale\":%.4f",
            pd->inner_ns, pd->outer_ns, pd->probe_scale);
    if (pd->sampling) {
      const struct cpd_sample_session *ss = pd->sampling;
      fprintf(f, ",\"sampling\":{\"source\":");
      json_string(f, cpd_source_name(ss->source));
      fprintf(f, ",\"interval\":%" PRIu64 ",\"unit\":\"%s\",\"samples\":%" PRIu64
              ",\"walked\":%" PRIu64 ",\"failed\":%s,\"method\":", ss->interval,
              ss->unit == CPD_SS_UNIT_NS ? "ns" : "events", ss->samples, ss->walked,
              ss->flags & CPD_SS_F_FAILED ? "true" : "false");
      json_string(f, ss->method_text);
      fprintf(f, ",\"note\":");
      json_string(f, ss->note);
      putc('}', f);
    }
    putc('}', f);
  }
  fprintf(f, "],\n\"functions\":[");
  /* Exactly the functions some written node names, and those with sampled
  ** program counters: every id resolves, and functions a filter left
  ** without calls are not listed. */
  unsigned char *used = calloc((size_t)p->nfuncs + 1, 1);
  if (!used) return tool_error("export: out of memory");
  for (uint32_t k = 0; k < p->nthreads; k++)
    for (uint32_t i = 1; i < p->threads[k].nnodes; i++)
      if (node_listed(p, &p->threads[k].nodes[i])) used[p->threads[k].nodes[i].func] = 1;
  for (uint32_t i = 0; i < p->nfuncs; i++)      /* and those with sampled program counters */
    if ((p->funcs[i].pc.incl || p->funcs[i].ucalls) && !p->funcs[i].synthetic) used[i] = 1;
  int first = 1;
  for (uint32_t i = 0; i < p->nfuncs; i++) {
    const struct prof_func *fn = &p->funcs[i];
    if (!used[i]) continue;
    fprintf(f, "%s\n{\"id\":%u,\"name\":", first ? "" : ",", i);
    first = 0;
    json_string(f, fn->name);
    fprintf(f, ",\"module\":");
    json_string(f, fn->module);
    fprintf(f, ",\"file\":");
    if (fn->file) json_string(f, fn->file);
    else fputs("null", f);
    fprintf(f, ",\"line\":%u,", fn->line);
    times(f, prof_all_calls(fn), fn->timed, &fn->t, fn->incl_all, fn->incl_all_raw);
    fprintf(f, ",\"weight_self\":%.0f,\"weight_incl\":%.0f", prof_func_self(p, fn),
            prof_func_incl(p, fn));
    if (fn->unhooked_ns > 0) {
      char buf[32];
      fmt_u64(fn->ucalls, buf, sizeof buf);
      fprintf(f, ",\"unhooked_ns\":%.0f,\"unhooked_calls\":%s,\"unhooked_counted\":%s",
              fn->unhooked_ns, buf, fn->uncounted ? "false" : "true");
      /* null: a dump older than format 1.8 does not say */
      fprintf(f, ",\"unhooked_synced\":%s",
              fn->unsynced ? "false" : fn->sync_unknown ? "null" : "true");
    }
    if (with_samples) {
      samples(f, &fn->s);
      char buf[32];
      fmt_u64(fn->pc.self, buf, sizeof buf);
      fprintf(f, ",\"pc_self_samples\":%s", buf);
      fmt_u64(fn->pc.incl, buf, sizeof buf);
      fprintf(f, ",\"pc_samples\":%s", buf);
    }
    putc('}', f);
  }
  fprintf(f, "],\n\"threads\":[");
  for (uint32_t k = 0; k < p->nthreads; k++) {
    const struct prof_thread *t = &p->threads[k];
    fprintf(f, "%s\n{\"tid\":%" PRIu64 ",\"name\":", k ? "," : "", t->tid);
    json_string(f, t->name);
    fprintf(f, ",\"dump\":%d,\"incl_ns\":%.0f,\"incl_ns_raw\":%.0f,", t->dump,
            t->nodes[0].t.incl, t->nodes[0].t.incl_raw);
    if (with_samples) fprintf(f, "\"sampled\":%s,", t->sampled ? "true" : "false");
    fprintf(f, "\"nodes\":[");
    int any = 0;
    for (uint32_t i = 1; i < t->nnodes; i++) {
      const struct prof_node *n = &t->nodes[i];
      const struct prof_func *fn = &p->funcs[n->func];
      /* An unused placeholder has no calls and no children: skipping it
      ** leaves no dangling parent. */
      if (!node_listed(p, n)) continue;
      fprintf(f, "%s\n{\"id\":%u,\"parent\":", any++ ? "," : "", i);
      if (n->parent == 0) fputs("null", f);
      else fprintf(f, "%u", n->parent);
      fprintf(f, ",\"function\":%u,\"name\":", n->func);
      json_string(f, fn->name);
      fprintf(f, ",\"module\":");
      json_string(f, fn->module);
      putc(',', f);
      times(f, n->calls, n->timed, &n->t, n->t.incl, n->t.incl_raw);
      fprintf(f, ",\"weight_self\":%.0f,\"weight_incl\":%.0f", prof_node_self(p, t, i),
              prof_node_incl(p, t, i));
      /* its calls may include some made through an unhooked function:
      ** counted on this, the nearest hooked caller's path */
      if (n->flags & PROF_VIA_UNHOOKED) fputs(",\"caller_unhooked\":true", f);
      if (with_samples) {
        struct prof_samples ns = { n->s_self, n->s_incl, n->s_self * t->sample_ns,
                                   n->s_incl * t->sample_ns, n->s_probe };
        samples(f, &ns);
      }
      putc('}', f);
    }
    fprintf(f, "]}");
  }
  fprintf(f, "]}\n");
  free(used);
  return 0;
}

const struct exporter export_json = {
  "json", "flat profile and per-thread trees as JSON (schema in docs/tool.md)", write_json
};
