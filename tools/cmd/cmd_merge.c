/*
** cmd_merge.c -- 'capprof merge -o OUT DUMP...': combines dumps of the same
** program (several runs or processes) into one dump that every subcommand
** reads. Call paths are matched by function name and module, never by
** address, since ASLR moves code between runs; threads are matched by name,
** entry function and order. The merged dump's format is in docs/dump-format.md: nodes carry
** symbol keys whose names sit in the STRINGS section, times are nanoseconds.
** Zone mismatch counts (ZONE_ISSUES) follow their threads.
*/
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "model/cpd_writer.h"
#include "model/profile.h"
#include "model/tool.h"
#include "sym/symbols.h"

static const char usage[] =
  "usage: capprof merge -o OUT DUMP...\n"
  "\n"
  "Combines dumps of the same program into the dump OUT: call paths are\n"
  "matched by function, threads by name, entry function and order of\n"
  "appearance. Counts and times are summed, min and max combined.\n"
  "\n"
  "  -o, --output=OUT  the merged dump to write (required)\n"
  "  -h, --help        this text\n";

struct builder {
  struct cpd_dump *d;      /* the dump being built */
  uint32_t *merged_of;     /* per profile thread: its merged thread's index */
  uint32_t *func_key_lo;   /* per function: string index + 1, 0 if not yet */
  uint32_t *func_mod;      /* per function: module index + 1, 0 if none */
  uint32_t cap_strings, cap_modules, cap_apis;
  int oom;
};

/* An intercepted library function of the merged dump: API id + 1, 0 on
** failure (the function then gets a symbol key). */
static uint32_t add_api(struct builder *b, const struct prof_func *fn)
{
  struct cpd_dump *d = b->d;
  if (d->napis == b->cap_apis) {
    uint32_t cap = b->cap_apis ? b->cap_apis * 2 : 64;
    struct cpd_api *na = realloc(d->apis, cap * sizeof *na);
    if (!na) { b->oom = 1; return 0; }
    d->apis = na;
    b->cap_apis = cap;
  }
  struct cpd_api *a = &d->apis[d->napis];
  a->library = strdup(fn->module);
  a->symbol = strdup(fn->name);
  if (!a->library || !a->symbol) {
    free(a->library);
    free(a->symbol);
    b->oom = 1;
    return 0;
  }
  return ++d->napis;
}

static uint32_t add_string(struct builder *b, char *s)
{
  struct cpd_dump *d = b->d;
  if (!s) { b->oom = 1; return 0; }
  if (d->nstrings == b->cap_strings) {
    uint32_t cap = b->cap_strings ? b->cap_strings * 2 : 64;
    char **ns = realloc(d->strings, cap * sizeof *ns);
    if (!ns) { free(s); b->oom = 1; return 0; }
    d->strings = ns;
    b->cap_strings = cap;
  }
  d->strings[d->nstrings] = s;
  return d->nstrings++;
}

/* Merged module index (+1) for a module base name, copied from the first
** source dump that has it; 0 for "". */
static uint32_t module_of(struct builder *b, const struct profile *p, const char *name)
{
  struct cpd_dump *d = b->d;
  if (!name[0]) return 0;
  for (uint32_t i = 0; i < d->nmodules; i++)
    if (!strcmp(sym_base_name(d->modules[i].path), name)) return i + 1;
  for (uint32_t k = 0; k < p->ndumps; k++) {
    const struct cpd_dump *s = p->dumps[k].d;
    for (uint32_t i = 0; i < s->nmodules; i++) {
      const struct cpd_module *m = &s->modules[i];
      if (strcmp(sym_base_name(m->path), name)) continue;
      if (d->nmodules == b->cap_modules) {
        uint32_t cap = b->cap_modules ? b->cap_modules * 2 : 16;
        struct cpd_module *nm = realloc(d->modules, cap * sizeof *nm);
        if (!nm) { b->oom = 1; return 0; }
        d->modules = nm;
        b->cap_modules = cap;
      }
      struct cpd_module *o = &d->modules[d->nmodules];
      *o = *m;
      o->id = malloc(m->id_len ? m->id_len : 1);
      o->path = strdup(m->path);
      o->debug_path = strdup(m->debug_path);
      d->nmodules++;
      if (!o->id || !o->path || !o->debug_path) { b->oom = 1; return 0; }
      memcpy(o->id, m->id, m->id_len);
      return d->nmodules;
    }
  }
  return 0;
}

static uint64_t key_of(struct builder *b, const struct profile *p, uint32_t f)
{
  const struct prof_func *fn = &p->funcs[f];
  if (fn->synthetic) return fn->key;
  if (fn->api) {                    /* keeps its API key: report --api sees it */
    if (!b->func_key_lo[f]) b->func_key_lo[f] = add_api(b, fn);
    if (b->func_key_lo[f]) return CPD_KEY_API | (b->func_key_lo[f] - 1);
  }
  if (!b->func_key_lo[f]) {
    char *s;
    if (fn->zone || !fn->file) {
      s = strdup(fn->name);
    } else {
      size_t n = strlen(fn->name) + strlen(fn->file) + 16;
      s = malloc(n);
      if (s) snprintf(s, n, "%s\n%s\n%u", fn->name, fn->file, fn->line);
    }
    b->func_key_lo[f] = add_string(b, s) + 1;
    if (!fn->zone) b->func_mod[f] = module_of(b, p, fn->module);
  }
  if (fn->zone) return CPD_KEY_ZONE | (b->func_key_lo[f] - 1);
  return CPD_KEY_SYMBOL | (uint64_t)b->func_mod[f] << 32 | (b->func_key_lo[f] - 1);
}

static uint64_t ns(double v) { return v > 0 ? (uint64_t)llround(v) : 0; }

/* Keep that the function of key was unhooked, once per key. */
static int add_unhooked(struct cpd_dump *d, uint64_t key, const struct prof_func *f)
{
  for (uint32_t k = 0; k < d->nunhooked; k++)
    if (d->unhooked[k].key == key) return 0;
  struct cpd_unhooked *r = realloc(d->unhooked, (d->nunhooked + 1) * sizeof *r);
  if (!r) return -1;
  d->unhooked = r;
  r[d->nunhooked++] = (struct cpd_unhooked){ key, ns(f->unhooked_ns),
                                              f->uncounted ? CPD_UNHOOKED_UNCOUNTED : f->ucalls,
                                              f->unsynced ? 0
                                              : f->sync_unknown ? CPD_UNHOOKED_SYNC_UNKNOWN
                                              : CPD_UNHOOKED_SYNCED };
  return 0;
}

static int add_tree(struct builder *b, const struct profile *p, const struct prof_thread *t,
                    const uint32_t *members, uint32_t n)
{
  struct cpd_dump *d = b->d;
  struct cpd_thread *o = &d->threads[d->nthreads++];
  memset(o, 0, sizeof *o);
  o->tid = t->tid;
  o->name = strdup(t->name);
  o->lost_calls = t->lost_calls;
  o->open_calls = t->open_calls;
  o->node_count = t->nnodes;
  o->nodes = calloc(t->nnodes, sizeof *o->nodes);
  if (!o->name || !o->nodes) return -1;
  for (uint32_t k = 0; k < n; k++) {
    const struct cpd_thread *s = NULL;
    const struct prof_thread *pt = &p->threads[members[k]];
    const struct cpd_dump *sd = p->dumps[pt->dump].d;
    for (uint32_t i = 0; i < sd->nthreads && !s; i++)
      if (sd->threads[i].tid == pt->tid) s = &sd->threads[i];
    if (!s) continue;
    if (!o->start_ns || (s->start_ns && s->start_ns < o->start_ns)) o->start_ns = s->start_ns;
    if (s->end_ns > o->end_ns) o->end_ns = s->end_ns;
  }
  for (uint32_t i = 0; i < t->nnodes && !o->samples; i++)
    if (t->nodes[i].s_self && !(o->samples = calloc(t->nnodes, sizeof *o->samples))) return -1;
  for (uint32_t i = 0; i < t->nnodes && !o->probe_samples; i++)
    if (t->nodes[i].s_probe &&
        !(o->probe_samples = calloc(t->nnodes, sizeof *o->probe_samples))) return -1;
  for (uint32_t i = 0; i < t->nnodes; i++) {
    const struct prof_node *s = &t->nodes[i];
    struct cpd_node *c = &o->nodes[i];
    if (o->samples) o->samples[i] = s->s_self;
    if (o->probe_samples) o->probe_samples[i] = s->s_probe;
    c->key = i ? key_of(b, p, s->func) : CPD_KEY_ROOT;
    if (i && p->funcs[s->func].unhooked_ns > 0 && add_unhooked(d, c->key, &p->funcs[s->func]))
      return -1;
    c->parent = i ? s->parent : CPD_NO_PARENT;
    c->flags = s->flags & (CPD_NODE_OPEN | CPD_NODE_THROTTLED);
    c->calls = s->calls;
    /* Keep what the times cover; when: the function's earliest throttling
    ** in any input (prof_flat). */
    if (i && (s->flags & CPD_NODE_THROTTLED)) {
      struct cpd_throttled *r = realloc(d->throttled, (d->nthrottled + 1) * sizeof *r);
      if (!r) return -1;
      d->throttled = r;
      r[d->nthrottled++] = (struct cpd_throttled){ d->nthreads - 1, i, ns(p->funcs[s->func].throttled_ns), s->throttled_at };
    }
    c->incl = i ? ns(s->t.incl_raw) : 0;
    c->min = ns(s->t.min_raw);
    c->max = ns(s->t.max_raw);
  }
  return b->oom ? -1 : 0;
}

/* The merged clock: 1 tick = 1 ns; probe costs averaged over the dumps,
** weighted by their calls, so that reading the merged dump compensates the
** summed raw times as the sources would have. */
static void set_clock(struct cpd_dump *d, const struct profile *p)
{
  double w = 0, inner = 0, outer = 0, timer = 0;
  for (uint32_t k = 0; k < p->ndumps; k++) {
    const struct prof_dump *pd = &p->dumps[k];
    double c = (double)(pd->calls ? pd->calls : 1);
    w += c;
    inner += c * pd->cal_inner_ns;      /* the reader scales them again */
    outer += c * pd->cal_outer_ns;
    timer += c * cpd_ticks_to_ns(pd->d, (double)pd->d->timer_overhead);
  }
  d->clock_source = p->dumps[0].d->clock_source;
  d->clock_reads = p->dumps[0].d->clock_reads;   /* 0 when the runs read it differently */
  for (uint32_t i = 1; i < p->ndumps; i++)
    if (p->dumps[i].d->clock_reads != d->clock_reads) d->clock_reads = 0;
  d->calib_ticks = d->calib_ns = 1000000000u;
  d->timer_overhead = ns(timer / w);
  d->probe_inner_mt = ns(inner / w * 1000.0);
  d->probe_outer_mt = ns(outer / w * 1000.0);
  /* Throttled calls (format 1.3): the sampling period, if every dump had
  ** the same, and their probe costs, the same way. */
  double untimed = 0, sinner = 0, souter = 0;
  uint64_t period = p->dumps[0].period;
  for (uint32_t k = 0; k < p->ndumps; k++) {
    const struct prof_dump *pd = &p->dumps[k];
    double c = (double)(pd->calls ? pd->calls : 1);
    if (pd->period != period) period = 0;
    untimed += c * pd->untimed_ns;
    sinner += c * pd->sinner_ns;
    souter += c * pd->souter_ns;
  }
  d->throttle_period = period;
  d->probe_untimed_mt = ns(untimed / w * 1000.0);
  d->probe_sinner_mt = ns(sinner / w * 1000.0);
  d->probe_souter_mt = ns(souter / w * 1000.0);
  /* Intercepted calls ('capprof run'): their probe costs, the same way. */
  double aw = 0, ainner = 0, aouter = 0;
  for (uint32_t k = 0; k < p->ndumps; k++) {
    const struct prof_dump *pd = &p->dumps[k];
    if (!pd->d->intercept.present) continue;
    double c = (double)(pd->calls ? pd->calls : 1);
    aw += c;
    ainner += c * pd->api_inner_ns;
    aouter += c * pd->api_outer_ns;
  }
  if (aw > 0) {
    d->intercept.present = 1;
    d->intercept.status = CPD_IS_ACTIVE;
    d->intercept.inner_mt = ns(ainner / aw * 1000.0);
    d->intercept.outer_mt = ns(aouter / aw * 1000.0);
    d->intercept.spec = strdup("merged");
  }
}

/* Zone mismatch counts of the source threads of merged thread out_thread,
** their names re-interned in the merged STRINGS. Returns -1 when out of
** memory. */
static int add_zone_issues(struct builder *b, const struct profile *p, const uint32_t *members,
                           uint32_t n, uint32_t out_thread, uint32_t *cap)
{
  struct cpd_dump *d = b->d;
  for (uint32_t k = 0; k < n; k++) {
    const struct prof_thread *pt = &p->threads[members[k]];
    const struct cpd_dump *sd = p->dumps[pt->dump].d;
    for (uint32_t i = 0; i < sd->nzone_issues; i++) {
      const struct cpd_zone_issue *z = &sd->zone_issues[i];
      if (sd->threads[z->thread].tid != pt->tid) continue;
      const char *name = sd->strings[z->zone];
      uint32_t s = 0;
      while (s < d->nstrings && strcmp(d->strings[s], name)) s++;
      if (s == d->nstrings) s = add_string(b, strdup(name));
      if (b->oom) return -1;
      if (d->nzone_issues == *cap) {
        uint32_t nc = *cap ? *cap * 2 : 16;
        struct cpd_zone_issue *nz = realloc(d->zone_issues, nc * sizeof *nz);
        if (!nz) return -1;
        d->zone_issues = nz;
        *cap = nc;
      }
      struct cpd_zone_issue *o = &d->zone_issues[d->nzone_issues++];
      *o = *z;
      o->thread = out_thread;
      o->zone = s;
    }
  }
  return 0;
}

/* Sampling: one process-wide session summing the inputs', and every input
** thread's sampled stacks with its addresses turned into symbol keys (a
** merged dump is never symbolized again). Stacks of threads with hooks go
** with their merged thread; the others stay threads of their own. Returns
** -1 when out of memory. */
static int add_sampling(struct builder *b, struct profile *p, uint32_t nfuncs)
{
  struct cpd_dump *d = b->d;
  const struct cpd_sample_session *first = NULL;
  uint32_t nst = 0;
  int mixed = 0;
  for (uint32_t k = 0; k < p->ndumps; k++) {
    const struct cpd_sample_session *s = cpd_process_sampling(p->dumps[k].d);
    if (s && !first) first = s;
    if (s && first && (s->interval != first->interval || s->unit != first->unit)) mixed = 1;
    nst += p->dumps[k].d->nsample_threads;
  }
  if (!first) return 0;
  struct cpd_sample_session *o = d->sessions = calloc(1, sizeof *d->sessions);
  if (!o) return -1;
  d->nsessions = 1;
  *o = *first;
  o->samples = o->hits = o->lost = o->walked = 0;
  o->nbuckets = 0;
  o->buckets = NULL;
  o->name = strdup("merged");
  o->method_text = strdup(first->method_text);
  o->note = strdup(mixed ? "the runs sampled at different intervals: CPU times use the first's"
                         : "");
  if (!o->name || !o->method_text || !o->note) return -1;
  if (mixed) tool_warn("merge: the runs sampled at different intervals; the merged dump's "
                       "CPU times use the first run's");
  for (uint32_t k = 0; k < p->ndumps; k++) {
    const struct cpd_sample_session *s = cpd_process_sampling(p->dumps[k].d);
    if (!s) continue;
    o->samples += s->samples;
    o->hits += s->hits;
    o->lost += s->lost;
    o->walked += s->walked;
  }
  d->sample_threads = calloc(nst + 1, sizeof *d->sample_threads);
  if (!d->sample_threads) return -1;
  for (uint32_t k = 0; k < p->ndumps; k++) {
    const struct cpd_dump *sd = p->dumps[k].d;
    if (!sd->nsample_threads) continue;
    struct symbolizer *sym = sym_open(sd);
    if (!sym) return -1;
    for (uint32_t i = 0; i < sd->nsample_threads; i++) {
      struct cpd_sample_thread kept;              /* without frames read astray */
      if (prof_sampled_stacks(&sd->sample_threads[i], sym, &kept) != 0) {
        sym_close(sym);
        return -1;
      }
      const struct cpd_sample_thread *st = &kept;
      struct cpd_sample_thread *t = &d->sample_threads[d->nsample_threads++];
      *t = *st;
      t->name = strdup(st->name ? st->name : "");
      t->nodes = kept.nodes;
      if (!t->name) { sym_close(sym); return -1; }
      t->thread = CPD_NO_PARENT;               /* its own sampled tree, unless hooked: */
      if (prof_thread_hooked(sd, st->thread)) { /* the st->thread-th thread of dump k */
        for (uint32_t j = 0, seen = 0; j < p->nthreads; j++) {
          if (p->threads[j].sampled || p->threads[j].dump != (int)k) continue;
          if (seen++ == st->thread) { t->thread = b->merged_of[j]; break; }
        }
      }
      for (uint32_t n = 1; n < st->nnodes; n++) {
        struct sym_info si;
        sym_lookup(sym, st->nodes[n].addr, &si);
        uint32_t f = prof_intern(p, si.name, si.module, si.file, si.line);
        t->nodes[n].addr = f < nfuncs ? key_of(b, p, f) : CPD_KEY_SINK;
      }
    }
    sym_close(sym);
  }
  return b->oom ? -1 : 0;
}

static const struct profile *sort_prof;
static const uint32_t *sort_ord;

/* A thread's entry function: its top-level call with the most time (main,
** a thread's start routine), "" if it made no call. */
static const char *entry(const struct prof_thread *t)
{
  uint32_t c = t->nodes[0].first;
  return c == PROF_NONE ? "" : sort_prof->funcs[t->nodes[c].func].name;
}

/* Threads alike: same name and entry function. */
static int cmp_kind(const struct prof_thread *x, const struct prof_thread *y)
{
  int c = strcmp(x->name, y->name);
  return c ? c : strcmp(entry(x), entry(y));
}

/* Threads by kind, then dump, then position. */
static int by_name_dump(const void *pa, const void *pb)
{
  uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
  const struct prof_thread *x = &sort_prof->threads[a], *y = &sort_prof->threads[b];
  int c = cmp_kind(x, y);
  if (c) return c;
  if (x->dump != y->dump) return x->dump < y->dump ? -1 : 1;
  return a < b ? -1 : a > b;
}

/* Threads by kind, then ordinal among their kind in their dump, then
** position: a group's members are adjacent, in dump order. */
static int by_name_ord(const void *pa, const void *pb)
{
  uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
  int c = cmp_kind(&sort_prof->threads[a], &sort_prof->threads[b]);
  if (c) return c;
  if (sort_ord[a] != sort_ord[b]) return sort_ord[a] < sort_ord[b] ? -1 : 1;
  return a < b ? -1 : a > b;
}

static int build(struct builder *b, struct profile *p)
{
  struct cpd_dump *d = b->d;
  const struct cpd_dump *f = p->dumps[0].d;
  d->flags = CPD_F_MERGED;
  d->ptr_size = f->ptr_size;
  d->pid = f->pid;
  d->ppid = f->ppid;
  d->os = f->os;
  d->arch = f->arch;
  d->start_ns = f->start_ns;
  d->dump_ns = f->dump_ns;
  for (uint32_t k = 1; k < p->ndumps; k++) {
    if (p->dumps[k].d->start_ns < d->start_ns) d->start_ns = p->dumps[k].d->start_ns;
    if (p->dumps[k].d->dump_ns > d->dump_ns) d->dump_ns = p->dumps[k].d->dump_ns;
  }
  d->exe = strdup(f->exe);
  d->cmdline = malloc(f->cmdline_len + 1);
  if (!d->exe || !d->cmdline) return -1;
  memcpy(d->cmdline, f->cmdline, f->cmdline_len + 1);
  d->cmdline_len = f->cmdline_len;
  set_clock(d, p);

  /* Trees built from sampled stacks (threads without hooks) are not merged
  ** as call trees: their stacks are copied below (add_sampling). */
  uint32_t nt = 0, zcap = 0;
  for (uint32_t i = 0; i < p->nthreads; i++) {
    if (p->threads[i].sampled) continue;
    struct prof_thread tmp = p->threads[nt];
    p->threads[nt++] = p->threads[i];
    p->threads[i] = tmp;
  }
  b->merged_of = malloc(((size_t)p->nthreads + 1) * sizeof *b->merged_of);
  if (!b->merged_of) return -1;

  /* Group threads: the k-th thread named X entering function F of each dump
  ** goes with the k-th such thread of the others. Two sorts, so that a dump with a hundred
  ** thousand threads does not take n^2 steps. */
  uint32_t *ord = malloc((nt + 1) * sizeof *ord), *sorted = malloc((nt + 1) * sizeof *sorted);
  uint32_t *gstart = malloc((nt + 1) * sizeof *gstart), *gcount = malloc((nt + 1) * sizeof *gcount);
  d->threads = calloc(nt + 1, sizeof *d->threads);
  uint32_t nfuncs = p->nfuncs;
  b->func_key_lo = calloc(p->nfuncs + 1, sizeof *b->func_key_lo);
  b->func_mod = calloc(p->nfuncs + 1, sizeof *b->func_mod);
  int rc = -1;
  if (!ord || !sorted || !gstart || !gcount || !d->threads || !b->func_key_lo || !b->func_mod)
    goto out;
  sort_prof = p;
  sort_ord = ord;
  for (uint32_t i = 0; i < nt; i++) sorted[i] = i;
  qsort(sorted, nt, sizeof *sorted, by_name_dump);
  for (uint32_t k = 0; k < nt; k++) {
    const struct prof_thread *t = &p->threads[sorted[k]], *u = k ? &p->threads[sorted[k - 1]] : NULL;
    ord[sorted[k]] = u && u->dump == t->dump && !cmp_kind(u, t) ? ord[sorted[k - 1]] + 1 : 0;
  }
  qsort(sorted, nt, sizeof *sorted, by_name_ord);
  for (uint32_t i = 0; i < nt; i++) gcount[i] = 0;
  for (uint32_t k = 0, lead = 0; k < nt; k++) {
    const struct prof_thread *t = &p->threads[sorted[k]], *u = k ? &p->threads[sorted[k - 1]] : NULL;
    if (!u || ord[sorted[k]] != ord[sorted[k - 1]] || cmp_kind(u, t)) {
      lead = sorted[k];                      /* the lowest index of its group */
      gstart[lead] = k;
    }
    gcount[lead]++;
  }
  for (uint32_t i = 0; i < nt; i++) {        /* groups in the order threads appear */
    if (!gcount[i]) continue;
    struct prof_thread t;
    if (prof_merge_threads(p, sorted + gstart[i], gcount[i], &t) != 0) goto out;
    for (uint32_t k = 0; k < gcount[i]; k++) b->merged_of[sorted[gstart[i] + k]] = d->nthreads;
    int bad = add_tree(b, p, &t, sorted + gstart[i], gcount[i]);
    prof_thread_free(&t);
    if (bad || add_zone_issues(b, p, sorted + gstart[i], gcount[i], d->nthreads - 1, &zcap) != 0)
      goto out;
  }
  if (add_sampling(b, p, nfuncs) != 0) goto out;
  rc = 0;
out:
  free(ord);
  free(sorted);
  free(gstart);
  free(gcount);
  free(b->func_key_lo);
  free(b->func_mod);
  free(b->merged_of);
  return rc;
}

int cmd_merge(int argc, char **argv)
{
  static const struct option longopts[] = {
    { "output", required_argument, NULL, 'o' },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
  };
  const char *out = NULL;
  int c;
  opterr = 0;
  while ((c = getopt_long(argc, argv, ":o:h", longopts, NULL)) != -1) {
    switch (c) {
    case 'o': out = optarg; break;
    case 'h': fputs(usage, stdout); return 0;
    default: return tool_bad_option("merge", argv, c);
    }
  }
  if (!out) return 1 + tool_error("merge: no output given (usage: capprof merge -o OUT DUMP...)");
  if (optind >= argc)
    return 1 + tool_error("merge: no dump given (usage: capprof merge -o OUT DUMP...)");
  for (int i = optind; i < argc; i++)
    if (!strcmp(argv[i], out))
      return tool_error("merge: %s: the output would overwrite an input", out);
  struct profile *p = prof_load_all(argc - optind, argv + optind);
  if (!p) return 1;
  /* Which figure the merged dump ranks by (model/weight.h): cpu as soon as
  ** one part has samples charged to call paths, so say when only some do. */
  uint32_t sampled = 0;
  for (uint32_t i = 0; i < p->ndumps; i++) {
    int any = 0;
    for (uint32_t k = 0; k < p->nthreads && !any; k++)
      any = p->threads[k].dump == (int)i && p->threads[k].nnodes && p->threads[k].nodes[0].s_incl;
    sampled += any != 0;
  }
  if (sampled && sampled < p->ndumps)
    tool_warn("merge: %u of the %u dumps were sampled: the merged profile ranks by their CPU "
              "time, which leaves the other runs out; --weight=elapsed compares them all",
              sampled, p->ndumps);
  struct builder b = { 0 };
  b.d = calloc(1, sizeof *b.d);
  int rc = 0;
  char err[256];
  prof_flat(p);                               /* functions' throttling times */
  if (!b.d || build(&b, p) != 0 || b.oom) rc = tool_error("merge: out of memory");
  else if (cpd_write(b.d, out, err, sizeof err) != 0) rc = tool_error("%s: %s", out, err);
  cpd_free(b.d);
  prof_free(p);
  return rc;
}
