/*
** weight.c -- the figure every view sizes and orders by (weight.h): cpu from
** the samples, compensated elapsed time from the hooks, or calls.
*/
#include <string.h>

#include "model/tool.h"
#include "model/weight.h"

static const char *const names[] = { "auto", "cpu", "elapsed", "calls" };

int prof_weight_parse(const char *s, enum prof_weight *w)
{
  for (int i = 1; i < 4; i++)
    if (!strcmp(s, names[i])) { *w = (enum prof_weight)i; return 0; }
  return -1;
}

/* Whether the samples are counts (event sources), not CPU time. */
static int cpu_counts(const struct profile *p)
{
  for (uint32_t i = 0; i < p->nthreads; i++)
    if (p->threads[i].sample_ns > 0) return 0;
  return 1;
}

void prof_weight_set(struct profile *p, enum prof_weight w, int raw)
{
  int sampled = p->node_samples > 0;
  if (w == PROF_W_AUTO || (w == PROF_W_CPU && !sampled)) w = sampled ? PROF_W_CPU : PROF_W_ELAPSED;
  p->weight = (int)w;
  p->weight_raw = raw;
}

enum prof_weight prof_weight_of(const struct profile *p)
{
  return p->weight ? (enum prof_weight)p->weight : p->node_samples > 0 ? PROF_W_CPU : PROF_W_ELAPSED;
}

const char *prof_weight_name(const struct profile *p) { return names[prof_weight_of(p)]; }

int prof_weight_is_time(const struct profile *p)
{
  enum prof_weight w = prof_weight_of(p);
  return w == PROF_W_ELAPSED || (w == PROF_W_CPU && !cpu_counts(p));
}

static double unit(const struct prof_thread *t) { return t->sample_ns > 0 ? t->sample_ns : 1; }

double prof_node_figure(const struct profile *p, const struct prof_thread *t, uint32_t i,
                        enum prof_weight w, int incl)
{
  const struct prof_node *n = &t->nodes[i];
  switch (w == PROF_W_AUTO ? prof_weight_of(p) : w) {
  case PROF_W_CPU: return (incl ? n->s_incl : n->s_self) * unit(t);
  case PROF_W_CALLS: return (double)n->calls;
  default:
    if (incl) return p->weight_raw ? n->t.incl_raw : n->t.incl;
    return p->weight_raw ? n->t.excl_raw : n->t.excl;
  }
}

double prof_func_figure(const struct profile *p, const struct prof_func *f, enum prof_weight w,
                        int incl)
{
  switch (w == PROF_W_AUTO ? prof_weight_of(p) : w) {
  case PROF_W_CPU:
    if (cpu_counts(p)) return (double)(incl ? f->s.incl : f->s.self);
    return incl ? f->s.cpu_incl : f->s.cpu_self;
  case PROF_W_CALLS: return (double)prof_all_calls(f);
  default:
    if (incl) return p->weight_raw ? f->t.incl_raw : f->t.incl;
    return p->weight_raw ? f->t.excl_raw : f->t.excl;
  }
}

double prof_node_self(const struct profile *p, const struct prof_thread *t, uint32_t i)
{
  return prof_node_figure(p, t, i, PROF_W_AUTO, 0);
}

double prof_node_incl(const struct profile *p, const struct prof_thread *t, uint32_t i)
{
  return prof_node_figure(p, t, i, PROF_W_AUTO, 1);
}

double prof_func_self(const struct profile *p, const struct prof_func *f)
{
  return prof_func_figure(p, f, PROF_W_AUTO, 0);
}

double prof_func_incl(const struct profile *p, const struct prof_func *f)
{
  return prof_func_figure(p, f, PROF_W_AUTO, 1);
}

double prof_tree_total(const struct profile *p, const struct prof_thread *t)
{
  if (!t->nnodes) return 0;
  switch (prof_weight_of(p)) {
  case PROF_W_CPU: return (t->nodes[0].s_incl - t->nodes[0].s_self) * unit(t);
  case PROF_W_CALLS: {
    double c = 0;
    for (uint32_t i = 1; i < t->nnodes; i++) c += (double)t->nodes[i].calls;
    return c;
  }
  default: return p->weight_raw ? t->nodes[0].t.incl_raw : t->nodes[0].t.incl;
  }
}

double prof_weight_total(const struct profile *p)
{
  double s = 0;
  if (prof_weight_of(p) == PROF_W_CALLS) {
    for (uint32_t f = 0; f < p->nfuncs; f++)
      if (!p->funcs[f].synthetic || strcmp(p->funcs[f].name, "[root]"))
        s += (double)prof_all_calls(&p->funcs[f]);
    return s;
  }
  for (uint32_t i = 0; i < p->nthreads; i++) s += prof_tree_total(p, &p->threads[i]);
  return s;
}

double prof_share(double part, double whole)
{
  if (!(whole > 0) || !(part > 0)) return 0;
  return part >= whole ? 1 : part / whole;
}

/* The sampler that took a profile's samples, in one word (the first
** dump's sampling session: the default's perf ring or its CPU-time timer
** fallback, a signal per sample, a Windows sampler). */
static const char *sampler_label(const struct profile *p)
{
  const struct cpd_sample_session *ss = p->ndumps ? cpd_process_sampling(p->dumps[0].d) : NULL;
  switch (ss ? ss->method : CPD_SM_NONE) {
  case CPD_SM_RING: return "ring";
  case CPD_SM_PERF: return "signal";
  case CPD_SM_CPU_TIMER: return "timer";
  case CPD_SM_NT_PROFILE: return "profile";
  case CPD_SM_SUSPEND: return "suspend";
  default: return "the";
  }
}

const char *prof_weight_line(const struct profile *p, char *buf, size_t n)
{
  char a[32];
  const char *how = p->weight_raw ? "raw" : "probe cost subtracted";
  switch (prof_weight_of(p)) {
  case PROF_W_CPU:
    snprintf(buf, n, "ranked by cpu (%s samples): leaves out blocked time and %s in hooks",
             sampler_label(p), fmt_pct((double)p->probe_samples, (double)(p->probe_samples + p->node_samples), a,
                     sizeof a));
    break;
  case PROF_W_CALLS: snprintf(buf, n, "ranked by calls: exact call counts"); break;
  default:
    snprintf(buf, n, "ranked by elapsed: the hooks' wall time, %s%s", how,
             p->node_samples > 0 ? "" : " (no samples)");
  }
  return buf;
}
