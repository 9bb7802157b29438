/*
** profile.c -- builds the profile model of profile.h: symbolizes each
** dump's keys once, turns tick counts into compensated and raw nanoseconds,
** links children, marks outermost activations, merges trees by function and
** sums the flat profile. Every walk is a loop over the node array (parents
** come before children) or an explicit stack: trees can be a million levels
** deep, and everything is O(n) or O(n log n) in the number of nodes.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/profile.h"
#include "model/tool.h"
#include "sym/symbols.h"

/* ---- a u64 -> u32 hash map ------------------------------------------------- */

struct u64map { uint64_t *keys; uint32_t *vals; size_t mask, used; };

static uint64_t mix(uint64_t k)
{
  k ^= k >> 33;
  k *= UINT64_C(0xff51afd7ed558ccd);
  k ^= k >> 33;
  return k;
}

static int map_init(struct u64map *m, size_t hint)
{
  size_t cap = 64;
  while (cap < hint * 2) cap *= 2;
  m->keys = malloc(cap * sizeof *m->keys);
  m->vals = malloc(cap * sizeof *m->vals);
  m->mask = cap - 1;
  m->used = 0;
  if (!m->keys || !m->vals) return -1;
  for (size_t i = 0; i < cap; i++) m->vals[i] = PROF_NONE;
  return 0;
}

static void map_free(struct u64map *m) { free(m->keys); free(m->vals); }

/* Slot of key; its value is PROF_NONE if absent. */
static size_t map_slot(const struct u64map *m, uint64_t key)
{
  size_t h = (size_t)mix(key) & m->mask;
  while (m->vals[h] != PROF_NONE && m->keys[h] != key) h = (h + 1) & m->mask;
  return h;
}

/* Store at a slot from map_slot; may rehash. -1 when out of memory. */
static int map_put(struct u64map *m, size_t slot, uint64_t key, uint32_t val)
{
  m->keys[slot] = key;
  m->vals[slot] = val;
  if (++m->used * 2 <= m->mask + 1) return 0;
  struct u64map n;
  if (map_init(&n, m->mask + 1) != 0) { map_free(&n); return -1; }
  for (size_t i = 0; i <= m->mask; i++)
    if (m->vals[i] != PROF_NONE) {
      size_t s = map_slot(&n, m->keys[i]);
      n.keys[s] = m->keys[i];
      n.vals[s] = m->vals[i];
    }
  n.used = m->used;
  map_free(m);
  *m = n;
  return 0;
}

/* ---- functions -------------------------------------------------------------- */

static uint64_t str_hash(const char *a, const char *b)
{
  uint64_t h = UINT64_C(1469598103934665603);
  for (; *a; a++) h = (h ^ (unsigned char)*a) * UINT64_C(1099511628211);
  h = (h ^ 0xFF) * UINT64_C(1099511628211);
  for (; *b; b++) h = (h ^ (unsigned char)*b) * UINT64_C(1099511628211);
  return h;
}

static int fhash_grow(struct profile *p)
{
  uint32_t cap = (p->fmask + 1) * 2;
  uint32_t *t = malloc(cap * sizeof *t);
  if (!t) return -1;
  for (uint32_t i = 0; i < cap; i++) t[i] = PROF_NONE;
  for (uint32_t f = 0; f < p->nfuncs; f++) {
    uint32_t h = (uint32_t)str_hash(p->funcs[f].name, p->funcs[f].module) & (cap - 1);
    while (t[h] != PROF_NONE) h = (h + 1) & (cap - 1);
    t[h] = f;
  }
  free(p->fhash);
  p->fhash = t;
  p->fmask = cap - 1;
  return 0;
}

uint32_t prof_lookup(const struct profile *p, const char *name, const char *module)
{
  uint32_t h = (uint32_t)str_hash(name, module) & p->fmask;
  for (; p->fhash[h] != PROF_NONE; h = (h + 1) & p->fmask) {
    const struct prof_func *f = &p->funcs[p->fhash[h]];
    if (!strcmp(f->name, name) && !strcmp(f->module, module)) return p->fhash[h];
  }
  return PROF_NONE;
}

/* Whether module is the base name of one of p's executables. */
static int is_exe(const struct profile *p, const char *module)
{
  for (uint32_t i = 0; i < p->ndumps; i++)
    if (!strcmp(sym_base_name(p->dumps[i].d->exe), module)) return 1;
  return 0;
}

uint32_t prof_lookup_in(const struct profile *to, const struct profile *from, uint32_t f,
                        int keep_modules)
{
  const struct prof_func *fn = &from->funcs[f];
  uint32_t g = prof_lookup(to, fn->name, fn->module);
  if (g != PROF_NONE || keep_modules || !fn->module[0] || !is_exe(from, fn->module)) return g;
  for (uint32_t i = 0; i < to->ndumps && g == PROF_NONE; i++)
    g = prof_lookup(to, fn->name, sym_base_name(to->dumps[i].d->exe));
  return g;
}

/* Length of a valid UTF-8 sequence at s, or 0. */
static int utf8_len(const unsigned char *s)
{
  int n = s[0] >= 0xF0 && s[0] <= 0xF4 ? 4 : s[0] >= 0xE0 && s[0] < 0xF0 ? 3
        : s[0] >= 0xC2 && s[0] < 0xE0 ? 2 : 0;
  for (int i = 1; i < n; i++)
    if ((s[i] & 0xC0) != 0x80) return 0;
  return n;
}

/* Whether s has control characters or bytes that are not UTF-8. */
static int needs_cleaning(const char *str)
{
  const unsigned char *s = (const unsigned char *)str;
  while (*s) {
    if (*s < 0x20 || *s == 0x7f) return 1;
    if (*s < 0x80) { s++; continue; }
    int n = utf8_len(s);
    if (!n) return 1;
    s += n;
  }
  return 0;
}

/* A copy with control characters and non-UTF-8 bytes as '?': names from a
** dump reach terminals, CSV, callgrind, folded lines and JSON, where they
** would break lines, inject escape sequences or make invalid text. */
static char *clean_dup(const char *str)
{
  char *c = strdup(str);
  unsigned char *s = (unsigned char *)c;
  while (s && *s) {
    if (*s < 0x20 || *s == 0x7f) { *s++ = '?'; continue; }
    if (*s < 0x80) { s++; continue; }
    int n = utf8_len(s);
    if (n) s += n;
    else *s++ = '?';
  }
  return c;
}

uint32_t prof_intern(struct profile *p, const char *name, const char *module, const char *file,
                     unsigned line)
{
  if (needs_cleaning(name) || needs_cleaning(module)) {   /* look up the clean names */
    char *n = clean_dup(name), *m = clean_dup(module);
    uint32_t f = n && m ? prof_intern(p, n, m, file, line) : PROF_NONE;
    free(n);
    free(m);
    return f;
  }
  if ((p->nfuncs + 1) * 2 > p->fmask + 1 && fhash_grow(p) != 0) return PROF_NONE;
  uint32_t h = (uint32_t)str_hash(name, module) & p->fmask;
  for (; p->fhash[h] != PROF_NONE; h = (h + 1) & p->fmask) {
    struct prof_func *f = &p->funcs[p->fhash[h]];
    if (!strcmp(f->name, name) && !strcmp(f->module, module)) return p->fhash[h];
  }
  if (p->nfuncs == p->capfuncs) {
    uint32_t cap = p->capfuncs ? p->capfuncs * 2 : 256;
    struct prof_func *nf = realloc(p->funcs, cap * sizeof *nf);
    if (!nf) return PROF_NONE;
    p->funcs = nf;
    p->capfuncs = cap;
  }
  struct prof_func *f = &p->funcs[p->nfuncs];
  memset(f, 0, sizeof *f);
  f->name = strdup(name);
  f->module = strdup(module);
  f->file = file ? clean_dup(file) : NULL;
  f->line = line;
  if (!f->name || !f->module || (file && !f->file)) {
    free(f->name); free(f->module); free(f->file);
    return PROF_NONE;
  }
  p->fhash[h] = p->nfuncs;
  return p->nfuncs++;
}

uint32_t prof_find_func(const struct profile *p, const char *name)
{
  for (uint32_t f = 0; f < p->nfuncs; f++)
    if (!strcmp(p->funcs[f].name, name)) return f;
  for (uint32_t f = 0; f < p->nfuncs; f++)
    if (!p->funcs[f].synthetic && strstr(p->funcs[f].name, name)) return f;
  return PROF_NONE;
}

/* ---- trees ------------------------------------------------------------------ */

static const struct prof_node *sort_nodes;

static int by_incl_desc(const void *a, const void *b)
{
  const struct prof_times *x = &sort_nodes[*(const uint32_t *)a].t;
  const struct prof_times *y = &sort_nodes[*(const uint32_t *)b].t;
  if (x->incl != y->incl) return x->incl < y->incl ? 1 : -1;
  if (x->incl_raw != y->incl_raw) return x->incl_raw < y->incl_raw ? 1 : -1;
  return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

/* *max at most incl and, when up >= 0, at most up (the caller's longest
** call); *min at most *max. */
static void clamp_max(double *max, double *min, double incl, double up)
{
  if (*max > incl) *max = incl;
  if (up >= 0 && *max > up) *max = up;
  if (*min > *max) *min = *max;
}

/* Exclusive times from inclusive ones, the root's totals, children lists
** sorted by compensated inclusive time, and the PROF_OUTER flags. */
static int finish_tree(struct prof_thread *t, uint32_t nfuncs)
{
  struct prof_node *nd = t->nodes;
  uint32_t n = t->nnodes;
  for (uint32_t i = 0; i < n; i++) {
    nd[i].t.excl = nd[i].t.excl_raw = 0;     /* children's sums, for now */
    nd[i].first = nd[i].next = PROF_NONE;
    nd[i].flags &= ~PROF_OUTER;
    nd[i].s_incl = nd[i].s_self;
  }
  for (uint32_t i = n; i-- > 1;) {
    /* Children come after their parent, so nd[i]'s children are summed by
    ** now. Compensation that subtracts more than a node's own time would
    ** leave it below its children: its exclusive time is 0 instead. */
    if (nd[i].t.incl < nd[i].t.excl) nd[i].t.incl = nd[i].t.excl;
    struct prof_node *p = &nd[nd[i].parent];
    p->t.excl += nd[i].t.incl;
    p->t.excl_raw += nd[i].t.incl_raw;
    p->s_incl += nd[i].s_incl;
  }
  nd[0].t.incl = nd[0].t.excl;
  nd[0].t.incl_raw = nd[0].t.excl_raw;
  for (uint32_t i = 0; i < n; i++) {
    double e = nd[i].t.incl - nd[i].t.excl, r = nd[i].t.incl_raw - nd[i].t.excl_raw;
    nd[i].t.excl = e > 0 ? e : 0;
    nd[i].t.excl_raw = r > 0 ? r : 0;
    nd[i].t.excl_adj = !i ? 0 : r > nd[i].t.excl ? r - nd[i].t.excl : nd[i].t.excl - r;
    if (i && nd[i].timed) {             /* the shortest <= average <= the longest */
      double avg = nd[i].t.incl / (double)nd[i].timed;
      if (nd[i].t.min > avg) nd[i].t.min = avg;
      if (nd[i].t.max < avg) nd[i].t.max = avg;
    }
    /* One call lasts no longer than all calls of its node together, nor
    ** than the longest call of its caller. The compensated max only loses
    ** an average call's share of the probes below it: a node whose longest
    ** call made most of its descendant calls would otherwise show a call
    ** longer than its whole thread. Parents come first, so theirs is final. */
    if (i) {
      const struct prof_node *up = nd[i].parent ? &nd[nd[i].parent] : NULL;
      clamp_max(&nd[i].t.max, &nd[i].t.min, nd[i].t.incl, up ? up->t.max : -1);
      clamp_max(&nd[i].t.max_raw, &nd[i].t.min_raw, nd[i].t.incl_raw, up ? up->t.max_raw : -1);
    }
  }

  uint32_t *order = malloc((size_t)n * sizeof *order);
  uint32_t *active = calloc(nfuncs ? nfuncs : 1, sizeof *active);
  uint32_t *stack = malloc(((size_t)n * 2 + 1) * sizeof *stack);
  if (!order || !active || !stack) {
    free(order); free(active); free(stack);
    return CAPPROF_ENOMEM;
  }
  for (uint32_t i = 1; i < n; i++) order[i - 1] = i;
  sort_nodes = nd;
  qsort(order, n - 1, sizeof *order, by_incl_desc);
  for (uint32_t k = n - 1; k-- > 0;) {       /* prepend smallest first */
    uint32_t i = order[k];
    nd[i].next = nd[nd[i].parent].first;
    nd[nd[i].parent].first = i;
  }

  /* Depth-first with an explicit stack; a pushed ~i marks leaving node i. */
  size_t sp = 0;
  stack[sp++] = 0;
  while (sp) {
    uint32_t i = stack[--sp];
    if (i & 0x80000000u) {
      i = ~i;
      active[nd[i].func]--;
      continue;
    }
    if (i) {
      if (active[nd[i].func]++ == 0) nd[i].flags |= PROF_OUTER;
      stack[sp++] = ~i;
    }
    for (uint32_t c = nd[i].first; c != PROF_NONE; c = nd[c].next) stack[sp++] = c;
  }
  free(order);
  free(active);
  free(stack);
  return 0;
}

/* The probe costs a node's calls put in its own raw time (own) and in its
** caller's (outer), ns. A throttled node's calls from its throttling on
** (docs/runtime.md) are, in a dump of format 1.3 or later, timed one in P
** at random and scaled by P: each costs the sampled own cost on average, its
** caller the sampled outer cost one time in P and the untimed cost
** otherwise. In older dumps they were counted only: no cost is known. */
static void node_probe(const struct prof_dump *pd, const struct cpd_node *c, uint64_t at,
                       double *own, double *outer)
{
  int api = CPD_KEY_IS_API(c->key);
  double n0 = (double)at, rest = (double)(c->calls - at);
  *own = n0 * (api ? pd->api_inner_ns : pd->inner_ns);
  *outer = n0 * (api ? pd->api_outer_ns : pd->outer_ns);
  if (pd->period && rest > 0) {
    double p = (double)pd->period;
    *own += rest * pd->sinner_ns;
    *outer += rest / p * pd->souter_ns + rest * (1.0 - 1.0 / p) * pd->untimed_ns;
  }
}

/* Node i of a dump thread into prof_node form, compensated: probe is the
** probe cost in its raw inclusive time (own, node_probe's figure for its
** own calls, and the outer cost of every call below it). */
static void convert(const struct cpd_dump *d, const struct cpd_node *c, uint64_t timed,
                    uint64_t at, double own, double probe, struct prof_node *o)
{
  o->calls = c->calls;
  o->timed = timed;
  o->throttled_at = at;
  o->probe_ns = probe;
  o->flags = c->flags;
  o->t.incl_raw = cpd_ticks_to_ns(d, (double)c->incl);
  o->t.min_raw = cpd_ticks_to_ns(d, (double)c->min);
  o->t.max_raw = cpd_ticks_to_ns(d, (double)c->max);
  double incl = o->t.incl_raw - probe;
  o->t.incl = incl > 0 ? incl : 0;
  /* How many calls ran below the shortest and the longest call is not
  ** recorded. The shortest loses its own probe only (it may have made no
  ** calls); the longest loses its own and those of an average call's
  ** descendants. finish_tree then keeps both on their side of the average. */
  double n = (double)timed, inner = c->calls ? own / (double)c->calls : 0;
  double min = o->t.min_raw - inner;
  double max = o->t.max_raw - inner - (n > 0 ? (probe - own) / n : 0);
  o->t.min = min > 0 ? min : 0;
  o->t.max = max > 0 ? max : 0;
}

/* The function of a key or code address, interned on first sight; PROF_NONE
** when out of memory. */
static uint32_t key_func(struct profile *p, struct symbolizer *sym, struct u64map *keys,
                         uint64_t key)
{
  size_t slot = map_slot(keys, key);
  uint32_t f = keys->vals[slot];
  if (f != PROF_NONE) return f;
  struct sym_info si;
  sym_lookup(sym, key, &si);
  f = prof_intern(p, si.name, si.module, si.file, si.line);
  if (f == PROF_NONE || map_put(keys, slot, key, f) != 0) return PROF_NONE;
  struct prof_func *fn = &p->funcs[f];
  fn->zone = CPD_KEY_IS_ZONE(key);
  fn->api = CPD_KEY_IS_API(key);
  fn->synthetic = CPD_KEY_IS_SPECIAL(key) && !fn->zone && !fn->api && !CPD_KEY_IS_SYMBOL(key);
  if (fn->synthetic) fn->key = key;
  return f;
}

/* The function already known to p that holds code address pc, or
** PROF_NONE (code of a function no node names: a library, the runtime). */
static uint32_t pc_func(const struct profile *p, struct symbolizer *sym, uint64_t pc)
{
  struct sym_info si;
  sym_lookup(sym, pc, &si);
  if (!needs_cleaning(si.name) && !needs_cleaning(si.module))
    return prof_lookup(p, si.name, si.module);
  char *n = clean_dup(si.name), *m = clean_dup(si.module);
  uint32_t f = n && m ? prof_lookup(p, n, m) : PROF_NONE;
  free(n);
  free(m);
  return f;
}

/* Notes count samples of node `node` at program counter pc in t->pcs, with
** its source line. Returns 0 or CAPPROF_ENOMEM. */
static int note_pc(struct prof_thread *t, struct symbolizer *sym, uint32_t node, uint64_t pc,
                   uint64_t count)
{
  if (!count) return 0;
  if ((t->npcs & (t->npcs - 1)) == 0) {         /* 0, 1, 2, 4...: grow to twice */
    struct prof_pc *np = realloc(t->pcs, (t->npcs ? 2 * (size_t)t->npcs : 1) * sizeof *np);
    if (!np) return CAPPROF_ENOMEM;
    t->pcs = np;
  }
  struct prof_pc *e = &t->pcs[t->npcs++];
  e->node = node;
  e->count = count < UINT32_MAX ? (uint32_t)count : UINT32_MAX;
  e->addr = pc;
  e->file = NULL;
  e->line = 0;
  if (sym_line(sym, pc, &e->file, &e->line) != 0) {
    e->file = NULL;
    e->line = 0;
  }
  return 0;
}

/* Program samples charged to a node (the call on top of the shadow stack)
** whose program counter lies in a function the node called: that callee's
** code before its entry hook or after its exit hook (Clang and GCC's
** -finstrument-functions call the hooks after the prologue and before the
** epilogue), which perf charges to the callee. Moved to the child node of
** that function (dump format 1.5, docs/tool.md). Returns 0 or
** CAPPROF_ENOMEM; counts the samples moved in p->pc_moved. */
static int charge_pcs(struct profile *p, struct prof_thread *t, const struct cpd_thread *ct,
                      struct symbolizer *sym)
{
  if (!ct->npcs || !ct->samples) return 0;
  struct u64map kids;                       /* (parent, func) -> child node */
  if (map_init(&kids, t->nnodes) != 0) {
    map_free(&kids);
    return CAPPROF_ENOMEM;
  }
  int rc = 0;
  for (uint32_t i = 1; !rc && i < t->nnodes; i++) {
    uint64_t k = (uint64_t)t->nodes[i].parent << 32 | t->nodes[i].func;
    size_t slot = map_slot(&kids, k);
    if (kids.vals[slot] == PROF_NONE && map_put(&kids, slot, k, i) != 0) rc = CAPPROF_ENOMEM;
  }
  /* Unhooked functions (UNHOOKED): a pc two or more calls below the node,
  ** through functions whose hooks were patched out, goes to the node of its
  ** function found below the node through such functions' nodes. */
  /* Which functions were unhooked: the dump's records, the process's, not
  ** this thread's nodes (a thread that first called a function after
  ** another thread unhooked it has no node of it from before). */
  const struct prof_dump *pd = &p->dumps[t->dump];
  const struct cpd_dump *d = pd->d;
  uint32_t *first = NULL, *next = NULL, *stack = NULL, ndump = t->nnodes;
  unsigned char *unh = NULL, *funh = NULL;
  if (!rc && d->nunhooked && pd->ufunc) {
    first = malloc(t->nnodes * sizeof *first);
    next = malloc(t->nnodes * sizeof *next);
    stack = malloc(t->nnodes * sizeof *stack);
    unh = calloc(t->nnodes, 1);
    funh = calloc(p->nfuncs ? p->nfuncs : 1, 1);
    if (!first || !next || !stack || !unh || !funh) rc = CAPPROF_ENOMEM;
    for (uint32_t r = 0; !rc && r < d->nunhooked; r++)
      if (pd->ufunc[r] < p->nfuncs) funh[pd->ufunc[r]] = 1;
    for (uint32_t i = 0; !rc && i < t->nnodes; i++) first[i] = next[i] = PROF_NONE;
    for (uint32_t i = t->nnodes; !rc && i-- > 1;) {
      uint32_t par = ct->nodes[i].parent;
      if (par >= t->nnodes) continue;
      next[i] = first[par];
      first[par] = i;
      unh[i] = funh[t->nodes[i].func];
    }
  }
  for (uint32_t j = 0; !rc && j < ct->npcs; j++) {
    const struct cpd_node_pc *e = &ct->pcs[j];
    struct prof_node *n = &t->nodes[e->node];
    uint64_t pc = e->pc & ~CPD_PC_CALLER;
    uint32_t f = pc_func(p, sym, pc);
    /* An intercepted library function's node has the library's module: a
    ** pc in that library without its trampoline's frame (called from inside
    ** the library) stays with the node, as a library's code does. */
    if (f == PROF_NONE || f == n->func || p->funcs[f].api || p->funcs[f].zone) {
      rc = note_pc(t, sym, e->node, pc, e->count < n->s_self ? e->count : n->s_self);
      continue;
    }
    uint32_t c = kids.vals[map_slot(&kids, (uint64_t)e->node << 32 | f)];
    if (c == PROF_NONE && unh) {                /* depth first, unhooked nodes only */
      uint32_t top = 0;
      for (uint32_t k = first[e->node]; k != PROF_NONE; k = next[k])
        if (unh[k]) stack[top++] = k;
      while (top && c == PROF_NONE) {
        uint32_t u = stack[--top];
        if (u >= ndump) continue;
        c = kids.vals[map_slot(&kids, (uint64_t)u << 32 | f)];
        for (uint32_t k = first[u]; k != PROF_NONE && top < ndump; k = next[k])
          if (unh[k]) stack[top++] = k;
      }
      /* An unhooked function under a call path first taken after it lost
      ** its hooks has no node there: one is added, with no calls. */
      if (c == PROF_NONE && funh[f]) {
        if (t->nnodes == t->cap) {
          uint32_t cap = t->cap * 2 + 16;
          struct prof_node *nn = realloc(t->nodes, cap * sizeof *nn);
          if (!nn) {
            rc = CAPPROF_ENOMEM;
            break;
          }
          t->nodes = nn;
          t->cap = cap;
          n = &t->nodes[e->node];
        }
        c = t->nnodes++;
        memset(&t->nodes[c], 0, sizeof t->nodes[c]);
        t->nodes[c].func = f;
        t->nodes[c].parent = e->node;
        uint64_t k = (uint64_t)e->node << 32 | f;
        if (map_put(&kids, map_slot(&kids, k), k, c) != 0) {
          rc = CAPPROF_ENOMEM;
          break;
        }
      }
    }
    uint32_t v = e->count < n->s_self ? (uint32_t)e->count : n->s_self;
    if (c == PROF_NONE) {
      rc = note_pc(t, sym, e->node, pc, v);
      continue;
    }
    n->s_self -= v;
    struct prof_node *to = &t->nodes[c];
    to->s_self = to->s_self > UINT32_MAX - v ? UINT32_MAX : to->s_self + v;
    p->pc_moved += v;
    rc = note_pc(t, sym, c, pc, v);
  }
  free(first);
  free(next);
  free(stack);
  free(unh);
  free(funh);
  map_free(&kids);
  return rc;
}

/* Nodes whose path may be their nearest hooked ancestor's rather than
** their own (PROF_VIA_UNHOOKED): an unhooked function's calls are counted
** under the node on top of the shadow stack when they are made (dump
** format 1.9), which is the caller's only while the caller keeps its
** hooks. So node (P, g), g unhooked, is marked when P also called an
** unhooked f != g that called g (a node f -> g in any thread of the dump,
** recorded while f had its hooks): some of its calls may have come from f.
** Threads first_thread on are the dump's. Returns 0 or CAPPROF_ENOMEM. */
static int mark_via_unhooked(struct profile *p, uint32_t di, uint32_t first_thread)
{
  const struct prof_dump *pd = &p->dumps[di];
  unsigned char *funh = calloc(p->nfuncs ? p->nfuncs : 1, 1);
  struct u64map calls;                      /* (f, g) both unhooked, f called g */
  if (!funh || map_init(&calls, 64) != 0) {
    free(funh);
    map_free(&calls);
    return CAPPROF_ENOMEM;
  }
  for (uint32_t r = 0; r < pd->d->nunhooked; r++)
    if (pd->ufunc[r] < p->nfuncs) funh[pd->ufunc[r]] = 1;
  int rc = 0;
  for (uint32_t k = first_thread; !rc && k < p->nthreads; k++) {
    const struct prof_thread *t = &p->threads[k];
    for (uint32_t i = 1; !rc && i < t->nnodes; i++) {
      uint32_t g = t->nodes[i].func, par = t->nodes[i].parent;
      if (par >= t->nnodes || !funh[g]) continue;
      uint32_t f = t->nodes[par].func;
      if (f == g || !funh[f]) continue;
      uint64_t key = (uint64_t)f << 32 | g;
      size_t slot = map_slot(&calls, key);
      if (calls.vals[slot] == PROF_NONE && map_put(&calls, slot, key, 1) != 0) rc = CAPPROF_ENOMEM;
    }
  }
  for (uint32_t k = first_thread; !rc && calls.used && k < p->nthreads; k++) {
    struct prof_thread *t = &p->threads[k];
    for (uint32_t i = 1; i < t->nnodes; i++) {
      uint32_t g = t->nodes[i].func, par = t->nodes[i].parent;
      if (par >= t->nnodes || !funh[g]) continue;
      for (uint32_t s = t->nodes[par].first; s != PROF_NONE; s = t->nodes[s].next) {
        uint32_t f = t->nodes[s].func;
        if (f == g || !funh[f]) continue;
        if (calls.vals[map_slot(&calls, (uint64_t)f << 32 | g)] != PROF_NONE) {
          t->nodes[i].flags |= PROF_VIA_UNHOOKED;
          break;
        }
      }
    }
  }
  free(funh);
  map_free(&calls);
  return rc;
}

static int add_thread(struct profile *p, uint32_t di, const struct cpd_thread *ct,
                      struct symbolizer *sym, struct u64map *keys)
{
  const struct cpd_dump *d = p->dumps[di].d;
  struct prof_thread *t = &p->threads[p->nthreads];
  memset(t, 0, sizeof *t);
  t->tid = ct->tid;
  t->dump = (int)di;
  t->sample_ns = p->dumps[di].sample_ns;
  t->lost_calls = ct->lost_calls;
  t->open_calls = ct->open_calls;
  t->name = clean_dup(ct->name ? ct->name : "");
  t->nnodes = t->cap = ct->node_count;
  t->nodes = calloc(ct->node_count, sizeof *t->nodes);
  double *probe = calloc(ct->node_count, sizeof *probe);
  double *own = calloc(ct->node_count, sizeof *own);
  if (!t->name || !t->nodes || !probe || !own) {
    free(probe);
    free(own);
    prof_thread_free(t);
    return CAPPROF_ENOMEM;
  }
  p->nthreads++;
  uint32_t th = (uint32_t)(ct - d->threads);
  char what[160];
  snprintf(what, sizeof what, "symbolizing %s, thread %u of %u", sym_base_name(d->path), th + 1,
           d->nthreads);
  const struct prof_dump *pd = &p->dumps[di];
  for (uint32_t i = ct->node_count; i-- > 1;) {
    double outer;
    node_probe(pd, &ct->nodes[i], cpd_throttled_at(d, th, i), &own[i], &outer);
    probe[i] += own[i];
    probe[ct->nodes[i].parent] += probe[i] - own[i] + outer;
  }
  for (uint32_t i = 0; i < ct->node_count; i++) {
    const struct cpd_node *c = &ct->nodes[i];
    tool_progress(what, i, ct->node_count);
    uint32_t f = key_func(p, sym, keys, c->key);
    if (f == PROF_NONE) {
      free(probe);
      free(own);
      return CAPPROF_ENOMEM;
    }
    struct prof_node *o = &t->nodes[i];
    o->func = f;
    o->parent = i ? c->parent : PROF_NONE;
    convert(d, c, cpd_timed_calls(d, th, i), cpd_throttled_at(d, th, i), own[i], probe[i], o);
    if (ct->samples) {
      o->s_self = ct->samples[i] < UINT32_MAX ? (uint32_t)ct->samples[i] : UINT32_MAX;
      p->node_samples += ct->samples[i];
    }
    if (ct->probe_samples) {
      o->s_probe = ct->probe_samples[i] < UINT32_MAX ? (uint32_t)ct->probe_samples[i] : UINT32_MAX;
      p->probe_samples += ct->probe_samples[i];
    }
    p->dumps[di].calls += i ? c->calls : 0;
  }
  free(probe);
  free(own);
  int rc = charge_pcs(p, t, ct, sym);
  return rc ? rc : finish_tree(t, p->nfuncs);
}

/* ---- sampled stacks ------------------------------------------------------------ */

double prof_sample_ns(const struct cpd_dump *d)
{
  const struct cpd_sample_session *s = cpd_process_sampling(d);
  return s && s->unit == CPD_SS_UNIT_NS ? (double)s->interval : 0;
}

/* The flat profile of program counters: self where the pc was, incl once per
** function on the sampled stack (recursion counted once). */
static int add_pc_samples(struct profile *p, const struct cpd_sample_thread *st,
                          const uint32_t *func, double ns)
{
  uint32_t seen[64];
  for (uint32_t k = 1; k < st->nnodes; k++) {
    uint32_t self = st->nodes[k].self;
    if (!self) continue;
    struct prof_func *leaf = &p->funcs[func[k]];
    leaf->pc.self += self;
    leaf->pc.cpu_self += self * ns;
    p->pc_samples += self;
    p->pc_cpu += self * ns;
    uint32_t nseen = 0;
    for (uint32_t a = k; a != 0 && a != CPD_NO_PARENT; a = st->nodes[a].parent) {
      uint32_t f = func[a], dup = 0;
      for (uint32_t j = 0; j < nseen && !dup; j++) dup = seen[j] == f;
      if (dup) continue;
      if (nseen < 64) seen[nseen++] = f;
      p->funcs[f].pc.incl += self;
      p->funcs[f].pc.cpu_incl += self * ns;
    }
  }
  return 0;
}

/* A call tree from a thread's sampled stacks (a thread without hooks):
** paths matched by function; a node's times are the CPU time of its samples. */
static int add_sampled_thread(struct profile *p, uint32_t di, const struct cpd_sample_thread *st,
                              const uint32_t *func, double ns, struct symbolizer *sym)
{
  struct prof_thread *t = &p->threads[p->nthreads];
  memset(t, 0, sizeof *t);
  t->tid = st->tid;
  t->dump = (int)di;
  t->sampled = 1;
  t->sample_ns = ns;
  t->name = clean_dup(st->name ? st->name : "");
  t->nodes = calloc(st->nnodes, sizeof *t->nodes);
  uint32_t *out = malloc((size_t)st->nnodes * sizeof *out);
  struct u64map paths;
  int rc = map_init(&paths, st->nnodes);
  if (!t->name || !t->nodes || !out || rc) {
    free(out);
    map_free(&paths);
    prof_thread_free(t);
    return CAPPROF_ENOMEM;
  }
  p->nthreads++;
  p->has_sampled_threads = 1;
  t->nnodes = 1;
  t->nodes[0].func = func[0];
  t->nodes[0].parent = PROF_NONE;
  out[0] = 0;
  for (uint32_t k = 1; k < st->nnodes && !rc; k++) {
    uint32_t parent = out[st->nodes[k].parent];
    uint64_t key = (uint64_t)parent << 32 | func[k];
    size_t slot = map_slot(&paths, key);
    uint32_t o = paths.vals[slot];
    if (o == PROF_NONE) {
      o = t->nnodes++;
      t->nodes[o].func = func[k];
      t->nodes[o].parent = parent;
      if (map_put(&paths, slot, key, o) != 0) rc = CAPPROF_ENOMEM;
    }
    t->nodes[o].s_self += st->nodes[k].self;
    out[k] = o;
    if (st->nodes[k].self) rc = note_pc(t, sym, o, st->nodes[k].addr, st->nodes[k].self);
  }
  t->cap = t->nnodes;
  free(out);
  map_free(&paths);
  if (rc) return rc;
  /* Inclusive CPU time as the node's time, so that every view reads it. */
  for (uint32_t i = 0; i < t->nnodes; i++) t->nodes[i].t.incl = t->nodes[i].s_self * ns;
  for (uint32_t i = t->nnodes; i-- > 1;) t->nodes[t->nodes[i].parent].t.incl += t->nodes[i].t.incl;
  for (uint32_t i = 0; i < t->nnodes; i++) t->nodes[i].t.incl_raw = t->nodes[i].t.incl;
  return finish_tree(t, p->nfuncs);
}

int prof_thread_hooked(const struct cpd_dump *d, uint32_t i)
{
  if (i == CPD_NO_PARENT || i >= d->nthreads) return 0;
  const struct cpd_thread *t = &d->threads[i];
  for (uint32_t k = 1; k < t->node_count; k++)
    if (!CPD_KEY_IS_SPECIAL(t->nodes[k].key) || CPD_KEY_IS_SYMBOL(t->nodes[k].key)) return 1;
  return 0;
}

/* A sampled stack's outer frames are return addresses minus one, read by
** the runtime's frame-pointer walk. In code built without frame pointers
** (GCC's -pg -mfentry at -O2 omits them) %rbp is data, and the walk can take
** any stack word for a return address: sample.unhook once had the
** executable's load address, so a "caller" one byte below the executable,
** named by a bare address. A return address follows a call: minus one it
** lies in a module's code. So a caller frame in no module ends its stacks
** there: it and the frames outer to it (read through the same bad frame
** pointer) are dropped, the frames below it hang from the root. A pc (a
** stack's last frame) in no module stays (code outside any module). */
int prof_sampled_stacks(const struct cpd_sample_thread *st, struct symbolizer *sym,
                        struct cpd_sample_thread *out)
{
  uint32_t n = st->nnodes;
  *out = *st;
  out->nodes = NULL;
  out->nnodes = 0;
  uint32_t *up = malloc(((size_t)n + 1) * sizeof *up);
  unsigned char *keep = calloc((size_t)n + 1, 1);
  out->nodes = malloc(((size_t)n + 1) * sizeof *out->nodes);
  if (!up || !keep || !out->nodes) {
    free(up);
    free(keep);
    free(out->nodes);
    out->nodes = NULL;
    return CAPPROF_ENOMEM;
  }
  for (uint32_t k = 1; k < n; k++) {
    uint32_t a = st->nodes[k].parent;
    uint64_t pa = a < k ? st->nodes[a].addr : 0;
    int astray = a && a < k && !CPD_KEY_IS_SPECIAL(pa) && sym_module_of(sym, pa) < 0;
    up[k] = a < k && !astray ? a : 0;
  }
  keep[0] = n > 0;
  for (uint32_t k = n; k-- > 1;) {               /* children before their parents */
    if (st->nodes[k].self) keep[k] = 1;
    if (keep[k]) keep[up[k]] = 1;
  }
  /* up[k], the old index of k's parent, becomes k's new index once k is
  ** copied: a parent (a lower index) is copied before its children. */
  for (uint32_t k = 0; k < n; k++) {
    if (!keep[k]) continue;
    out->nodes[out->nnodes] = st->nodes[k];
    if (k) out->nodes[out->nnodes].parent = up[up[k]];
    up[k] = out->nnodes++;
  }
  free(up);
  free(keep);
  return 0;
}

static int add_samples(struct profile *p, uint32_t di, struct symbolizer *sym, struct u64map *keys)
{
  const struct cpd_dump *d = p->dumps[di].d;
  double ns = p->dumps[di].sample_ns;
  for (uint32_t i = 0; i < d->nsample_threads; i++) {
    struct cpd_sample_thread kept;
    if (prof_sampled_stacks(&d->sample_threads[i], sym, &kept) != 0) return CAPPROF_ENOMEM;
    const struct cpd_sample_thread *st = &kept;
    uint32_t *func = malloc(((size_t)st->nnodes + 1) * sizeof *func);
    if (!func) {
      free(kept.nodes);
      return CAPPROF_ENOMEM;
    }
    int rc = 0;
    func[0] = key_func(p, sym, keys, CPD_KEY_ROOT);
    for (uint32_t k = 1; k < st->nnodes && func[0] != PROF_NONE; k++)
      if ((func[k] = key_func(p, sym, keys, st->nodes[k].addr)) == PROF_NONE) break;
    if (func[0] == PROF_NONE || (st->nnodes > 1 && func[st->nnodes - 1] == PROF_NONE))
      rc = CAPPROF_ENOMEM;
    if (!rc) rc = add_pc_samples(p, st, func, ns);
    if (!rc && !prof_thread_hooked(d, st->thread)) rc = add_sampled_thread(p, di, st, func, ns, sym);
    free(func);
    free(kept.nodes);
    if (rc) return rc;
  }
  return 0;
}

/* Warn when the dump's probe costs exceed what was measured: compensation
** then clamps everything to 0, and the calibration, not the program, is off. */
static void check_calibration(const struct profile *p, uint32_t di)
{
  const struct prof_dump *pd = &p->dumps[di];
  for (uint32_t k = 0; k < p->nthreads; k++) {
    const struct prof_thread *t = &p->threads[k];
    if (t->dump != (int)di) continue;
    double raw = 0, cost = 0;
    for (uint32_t c = t->nodes[0].first; c != PROF_NONE; c = t->nodes[c].next) {
      const struct prof_node *n = &t->nodes[c];
      raw += n->t.incl_raw;
      cost += n->probe_ns;
    }
    if (raw > 0 && cost > raw) {
      char a[32], b[32], c[32], e[32];
      tool_warn("%s: the dump's probe costs (%s own, %s caller's per call) add up to %s in "
                "thread %llu, more than its measured %s: compensated times there clamp to 0; "
                "the probe calibration is off, see --raw", pd->d->path,
                fmt_ns(pd->inner_ns, a, sizeof a), fmt_ns(pd->outer_ns, b, sizeof b),
                fmt_ns(cost, c, sizeof c), (unsigned long long)t->tid, fmt_ns(raw, e, sizeof e));
      return;
    }
  }
}

/* ---- the probe model -------------------------------------------------------- */

/* Leaves with at least this many calls bound the probe's own cost. */
#define LEAF_MIN_CALLS 1000

int prof_unreliable(double comp, double raw)
{
  return raw - comp > 2.0 * comp && raw > 0;
}

const char *prof_fmt_ns(double comp, double raw_ns, int raw, int *marks, char *buf, size_t n)
{
  return prof_fmt_ns_basis(comp, raw_ns, raw_ns, raw, marks, buf, n);
}

const char *prof_fmt_ns_basis(double comp, double raw_ns, double basis, int raw, int *marks,
                              char *buf, size_t n)
{
  if (raw || !prof_unreliable(comp, basis) || n < 34) return fmt_ns(raw ? raw_ns : comp, buf, n);
  buf[0] = '~';
  fmt_ns(comp, buf + 1, n - 1);
  if (marks) (*marks)++;
  return buf;
}

void prof_legend(int marks)
{
  if (marks)
    printf("~ mostly probe cost (over twice what is left was subtracted): may be off by half\n");
}

/* Leaves ignored at the short end: a function whose calls end by longjmp or
** an exception is timed up to wherever the unwinding is noticed, which can be
** shorter than any real call (Lua's luaD_throw). */
#define LEAF_SKIP 2

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* The run's own bound on the probe (docs/tool.md): a call of a leaf (a
** call path whose calls called nothing instrumented) measures the probe's own part
** plus its body, so the shortest average over frequently called leaves bounds
** the probe's own cost from above, under this program's cache and branch-
** predictor conditions, which the start-up loop does not have. When that
** bound is below the calibration, both probe costs are scaled down to it:
** the same hook code runs on both sides of the call, and is sped up alike.
** A bound above it says nothing (the leaf's body and the call are in it),
** and the calibration stands: scaling up to it, as the tool did before,
** over-compensated every call by the leaf's body (docs/tool.md). Fills
** pd->probe_scale and scale_leaf_ns, and *leaf_key (0 if none) for the
** caller to name the leaf. */
void prof_probe_model(struct prof_dump *pd, uint64_t *leaf_key)
{
  const struct cpd_dump *d = pd->d;
  *leaf_key = 0;
  pd->probe_scale = 1.0;
  pd->scale_func = PROF_NONE;
  pd->scale_leaf_ns = 0;
  /* Leaf nodes: call paths whose calls called nothing instrumented. */
  uint8_t **inner = calloc(d->nthreads + 1, sizeof *inner);
  size_t total = 0, n = 0;
  int ok = inner != NULL;
  for (uint32_t k = 0; ok && k < d->nthreads; k++) {
    const struct cpd_thread *t = &d->threads[k];
    if (!(inner[k] = calloc(t->node_count + 1, 1))) { ok = 0; break; }
    for (uint32_t i = 1; i < t->node_count; i++)
      if (t->nodes[i].parent < t->node_count) inner[k][t->nodes[i].parent] = 1;
    for (uint32_t i = 1; i < t->node_count; i++)
      total += !inner[k][i] && t->nodes[i].calls && !CPD_KEY_IS_SPECIAL(t->nodes[i].key);
  }
  struct u64map fn;                           /* key -> slot, leaf nodes summed */
  double *calls = ok ? calloc(total + 1, sizeof *calls) : NULL;
  double *incl = ok ? calloc(total + 1, sizeof *incl) : NULL;
  uint64_t *keys = ok ? calloc(total + 1, sizeof *keys) : NULL;
  int have_map = calls && incl && keys && map_init(&fn, total + 1) == 0;
  ok = have_map;
  for (uint32_t k = 0; ok && k < d->nthreads; k++) {
    const struct cpd_thread *t = &d->threads[k];
    for (uint32_t i = 1; ok && i < t->node_count; i++) {
      const struct cpd_node *c = &t->nodes[i];
      if (inner[k][i] || !c->calls || CPD_KEY_IS_SPECIAL(c->key)) continue;
      size_t slot = map_slot(&fn, c->key);
      uint32_t v = fn.vals[slot];
      if (v == PROF_NONE) {
        v = (uint32_t)n++;
        keys[v] = c->key;
        if (map_put(&fn, slot, c->key, v) != 0) ok = 0;
      }
      /* A throttled node's incl covers only its timed calls: the average
      ** must divide by those, or the bound comes out far too low. Since
      ** format 1.3 its later calls are sampled, through other paths of
      ** the hooks: they bound nothing about the usual probe. */
      if ((c->flags & CPD_NODE_THROTTLED) && d->throttle_period) continue;
      calls[v] += (double)cpd_timed_calls(d, k, i);
      incl[v] += (double)c->incl;
    }
  }
  double *avg = ok ? malloc((n + 1) * sizeof *avg) : NULL;
  size_t m = 0;
  for (size_t v = 0; avg && v < n; v++)
    if (calls[v] >= LEAF_MIN_CALLS && incl[v] > 0) avg[m++] = incl[v] / calls[v];
  if (avg && m > LEAF_SKIP) {
    double *sorted = malloc(m * sizeof *sorted);
    if (sorted) {
      memcpy(sorted, avg, m * sizeof *sorted);
      qsort(sorted, m, sizeof *sorted, cmp_double);
      double best = cpd_ticks_to_ns(d, sorted[LEAF_SKIP]);
      if (pd->cal_inner_ns > 0 && best < pd->cal_inner_ns) {
        pd->probe_scale = best / pd->cal_inner_ns;
        pd->scale_leaf_ns = best;
        m = 0;
        for (size_t v = 0; v < n; v++)
          if (calls[v] >= LEAF_MIN_CALLS && incl[v] > 0 && avg[m++] == sorted[LEAF_SKIP])
            *leaf_key = keys[v];
      }
      free(sorted);
    }
  }
  if (have_map) map_free(&fn);
  for (uint32_t k = 0; inner && k < d->nthreads; k++) free(inner[k]);
  free(inner); free(avg); free(calls); free(incl); free(keys);
}

/* A one-line hint, once, when the program's own functions have names but
** no source lines (built without -g: CMake's default build type): every
** location would show as the module. */
static void check_lines(const struct profile *p, uint32_t di)
{
  static int hinted;
  const struct cpd_dump *d = p->dumps[di].d;
  if (hinted || !d->exe || !*d->exe) return;
  const char *exe = sym_base_name(d->exe);
  uint32_t named = 0;
  for (uint32_t f = 0; f < p->nfuncs; f++) {
    const struct prof_func *fn = &p->funcs[f];
    if (fn->synthetic || fn->zone || fn->api || strcmp(fn->module, exe) || strstr(fn->name, "+0x"))
      continue;
    if (fn->file) return;
    named++;
  }
  if (!named) return;
  hinted = 1;
  tool_warn("%s has no line information (built without -g?): locations show as the module; "
            "build with -g (CMake: -DCMAKE_BUILD_TYPE=RelWithDebInfo)", exe);
}

int prof_add_dump(struct profile *p, struct cpd_dump *d)
{
  struct prof_dump *nd = realloc(p->dumps, (p->ndumps + 1) * sizeof *nd);
  if (!nd) { cpd_free(d); return CAPPROF_ENOMEM; }
  p->dumps = nd;
  struct prof_dump *pd = &p->dumps[p->ndumps];
  uint32_t di = p->ndumps++;
  memset(pd, 0, sizeof *pd);
  pd->d = d;
  pd->cal_inner_ns = cpd_ticks_to_ns(d, (double)d->probe_inner_mt / 1000.0);
  pd->cal_outer_ns = cpd_ticks_to_ns(d, (double)d->probe_outer_mt / 1000.0);
  uint64_t leaf_key;
  prof_probe_model(pd, &leaf_key);
  pd->inner_ns = pd->cal_inner_ns * pd->probe_scale;
  pd->outer_ns = pd->cal_outer_ns * pd->probe_scale;
  pd->api_inner_ns = cpd_ticks_to_ns(d, (double)d->intercept.inner_mt / 1000.0);
  pd->api_outer_ns = cpd_ticks_to_ns(d, (double)d->intercept.outer_mt / 1000.0);
  pd->period = d->throttle_period;
  pd->untimed_ns = cpd_ticks_to_ns(d, (double)d->probe_untimed_mt / 1000.0) * pd->probe_scale;
  pd->sinner_ns = cpd_ticks_to_ns(d, (double)d->probe_sinner_mt / 1000.0) * pd->probe_scale;
  pd->souter_ns = cpd_ticks_to_ns(d, (double)d->probe_souter_mt / 1000.0) * pd->probe_scale;
  pd->sampling = cpd_process_sampling(d);
  pd->sample_ns = prof_sample_ns(d);
  size_t nthreads = (size_t)p->nthreads + d->nthreads + d->nsample_threads;
  struct prof_thread *nt = realloc(p->threads, (nthreads ? nthreads : 1) * sizeof *nt);
  if (!nt) return CAPPROF_ENOMEM;
  if (nt) p->threads = nt;
  struct symbolizer *sym = sym_open(d);
  struct u64map keys;
  int rc = sym && map_init(&keys, 1024) == 0 ? 0 : CAPPROF_ENOMEM;
  /* Each UNHOOKED record's function, by its key, before the threads: what
  ** was unhooked is a fact of the process, the same in every thread
  ** (charge_pcs). */
  if (!rc && d->nunhooked) {
    pd->ufunc = malloc(d->nunhooked * sizeof *pd->ufunc);
    for (uint32_t r = 0; pd->ufunc && r < d->nunhooked; r++)
      pd->ufunc[r] = key_func(p, sym, &keys, d->unhooked[r].key);
    if (!pd->ufunc) rc = CAPPROF_ENOMEM;
  }
  uint32_t first_thread = p->nthreads;
  for (uint32_t i = 0; !rc && i < d->nthreads; i++)
    rc = add_thread(p, di, &d->threads[i], sym, &keys);
  if (!rc && pd->ufunc) rc = mark_via_unhooked(p, di, first_thread);
  if (!rc) rc = add_samples(p, di, sym, &keys);
  if (!rc && leaf_key) {
    size_t slot = map_slot(&keys, leaf_key);
    pd->scale_func = keys.vals[slot];
  }
  if (sym) map_free(&keys);
  sym_close(sym);
  if (!rc) check_calibration(p, di);
  if (!rc) check_lines(p, di);
  return rc;
}

int prof_load(struct profile *p, const char *path)
{
  struct cpd_dump *d = tool_load(path);
  if (!d) return -1;
  if (prof_add_dump(p, d) != 0) {
    tool_error("%s: out of memory", path);
    return -1;
  }
  return 0;
}

struct profile *prof_new(void)
{
  struct profile *p = calloc(1, sizeof *p);
  if (!p) return NULL;
  p->fmask = 255;
  p->fhash = malloc((p->fmask + 1) * sizeof *p->fhash);
  if (!p->fhash) { free(p); return NULL; }
  for (uint32_t i = 0; i <= p->fmask; i++) p->fhash[i] = PROF_NONE;
  return p;
}

struct profile *prof_load_all(int n, char **paths)
{
  struct profile *p = prof_new();
  if (!p) { tool_error("out of memory"); return NULL; }
  for (int i = 0; i < n; i++) {
    char what[160];
    snprintf(what, sizeof what, "loading %s (%d of %d)", sym_base_name(paths[i]), i + 1, n);
    tool_progress(what, 0, 0);
    if (prof_load(p, paths[i]) != 0) { prof_free(p); return NULL; }
  }
  prof_flat(p);
  return p;
}

void prof_thread_free(struct prof_thread *t)
{
  for (uint32_t i = 0; i < t->npcs; i++) free(t->pcs[i].file);
  free(t->pcs);
  t->pcs = NULL;
  t->npcs = 0;
  free(t->name);
  free(t->nodes);
  t->name = NULL;
  t->nodes = NULL;
}

void prof_free(struct profile *p)
{
  if (!p) return;
  for (uint32_t i = 0; i < p->nthreads; i++) prof_thread_free(&p->threads[i]);
  for (uint32_t i = 0; i < p->ndumps; i++) {
    cpd_free(p->dumps[i].d);
    free(p->dumps[i].ufunc);
  }
  for (uint32_t f = 0; f < p->nfuncs; f++) {
    free(p->funcs[f].name);
    free(p->funcs[f].module);
    free(p->funcs[f].file);
  }
  free(p->threads);
  free(p->dumps);
  free(p->funcs);
  free(p->fhash);
  free(p);
}

/* ---- merging ------------------------------------------------------------------ */

static void add_times(struct prof_node *o, const struct prof_node *s, int first)
{
  o->calls = cpd_sat_add(o->calls, s->calls);
  o->timed = cpd_sat_add(o->timed, s->timed);
  o->throttled_at = cpd_sat_add(o->throttled_at, s->throttled_at);
  o->probe_ns += s->probe_ns;
  o->flags |= s->flags & (CPD_NODE_OPEN | CPD_NODE_THROTTLED | PROF_VIA_UNHOOKED);
  o->t.incl += s->t.incl;
  o->t.incl_raw += s->t.incl_raw;
  o->s_self += s->s_self;
  o->s_probe += s->s_probe;
  if (first || s->t.min_raw < o->t.min_raw) { o->t.min_raw = s->t.min_raw; o->t.min = s->t.min; }
  if (first || s->t.max_raw > o->t.max_raw) { o->t.max_raw = s->t.max_raw; o->t.max = s->t.max; }
}

int prof_merge_threads(const struct profile *p, const uint32_t *idx, uint32_t n,
                       struct prof_thread *out)
{
  memset(out, 0, sizeof *out);
  out->dump = -1;
  size_t total = 1;
  for (uint32_t k = 0; k < n; k++) total += p->threads[idx[k]].nnodes - 1;
  out->name = strdup(n ? p->threads[idx[0]].name : "");
  out->tid = n ? p->threads[idx[0]].tid : 0;
  out->nodes = calloc(total, sizeof *out->nodes);
  uint32_t *map = NULL;
  struct u64map paths;
  int rc = map_init(&paths, total);
  if (!out->name || !out->nodes || rc) goto oom;
  out->nnodes = 1;
  out->cap = (uint32_t)total;
  out->nodes[0].parent = PROF_NONE;
  out->nodes[0].func = n ? p->threads[idx[0]].nodes[0].func : 0;
  for (uint32_t k = 0; k < n; k++) {
    const struct prof_thread *t = &p->threads[idx[k]];
    out->lost_calls = cpd_sat_add(out->lost_calls, t->lost_calls);
    out->open_calls += t->open_calls;
    out->sampled = k == 0 ? t->sampled : out->sampled && t->sampled;
    if (k == 0) out->sample_ns = t->sample_ns;
    free(map);
    map = malloc((size_t)t->nnodes * sizeof *map);
    if (!map) goto oom;
    map[0] = 0;
    for (uint32_t i = 1; i < t->nnodes; i++) {
      const struct prof_node *s = &t->nodes[i];
      uint64_t key = (uint64_t)map[s->parent] << 32 | s->func;
      size_t slot = map_slot(&paths, key);
      uint32_t o = paths.vals[slot];
      int first = o == PROF_NONE;
      if (first) {
        o = out->nnodes++;
        out->nodes[o].func = s->func;
        out->nodes[o].parent = map[s->parent];
        if (map_put(&paths, slot, key, o) != 0) goto oom;
      }
      add_times(&out->nodes[o], s, first);
      map[i] = o;
    }
  }
  free(map);
  map_free(&paths);
  return finish_tree(out, p->nfuncs);
oom:
  free(map);
  map_free(&paths);
  prof_thread_free(out);
  return CAPPROF_ENOMEM;
}

int prof_filter_thread(const struct profile *p, const struct prof_thread *t,
                       const unsigned char *act, struct prof_thread *out)
{
  memset(out, 0, sizeof *out);
  out->tid = t->tid;
  out->dump = t->dump;
  out->sampled = t->sampled;
  out->sample_ns = t->sample_ns;
  out->lost_calls = t->lost_calls;
  out->open_calls = t->open_calls;
  out->name = strdup(t->name);
  out->nodes = calloc(t->nnodes, sizeof *out->nodes);
  uint32_t *map = malloc((size_t)t->nnodes * sizeof *map);
  struct u64map paths;
  int rc = map_init(&paths, t->nnodes);
  if (!out->name || !out->nodes || !map || rc) goto oom;
  out->nnodes = 1;
  out->cap = t->nnodes;
  out->nodes[0] = t->nodes[0];
  out->nodes[0].parent = PROF_NONE;
  out->nodes[0].calls = 0;
  memset(&out->nodes[0].t, 0, sizeof out->nodes[0].t);
  map[0] = 0;
  for (uint32_t i = 1; i < t->nnodes; i++) {
    const struct prof_node *s = &t->nodes[i];
    uint32_t up = act[i] == PROF_REROOT ? 0 : map[s->parent];
    if (up == PROF_NONE || act[i] == PROF_DROP) { map[i] = PROF_NONE; continue; }
    if (act[i] == PROF_HIDE) { map[i] = up; continue; }
    uint64_t key = (uint64_t)up << 32 | s->func;
    size_t slot = map_slot(&paths, key);
    uint32_t o = paths.vals[slot];
    int first = o == PROF_NONE;
    if (first) {
      o = out->nnodes++;
      out->nodes[o].func = s->func;
      out->nodes[o].parent = up;
      if (map_put(&paths, slot, key, o) != 0) goto oom;
    }
    add_times(&out->nodes[o], s, first);
    map[i] = o;
  }
  free(map);
  map_free(&paths);
  return finish_tree(out, p->nfuncs);
oom:
  free(map);
  map_free(&paths);
  prof_thread_free(out);
  return CAPPROF_ENOMEM;
}

/* ---- flat profile ------------------------------------------------------------- */

const char *prof_probe_note(const struct profile *p)
{
  static char note[320];
  note[0] = '\0';
  if (p->pc_moved) {
    char a[40];
    snprintf(note, sizeof note,
             "(%s samples in a callee's code outside its hooks, its prologue or\n"
             "epilogue, are charged to the callee)\n", fmt_count(p->pc_moved, a, sizeof a));
  }
  for (uint32_t i = 0; i < p->ndumps; i++) {
    const struct cpd_dump *d = p->dumps[i].d;
    if (d->minor >= 4) continue;
    for (uint32_t k = 0; k < d->nthreads; k++)
      if (d->threads[k].samples) {
        size_t n = strlen(note);
        snprintf(note + n, sizeof note - n, "%s",
                 "(a dump written before format 1.4 does not tell them apart: its hooks'\n"
                 "samples are counted as the program's)\n");
        return note;
      }
  }
  return note;
}

double prof_probe_share(const struct profile *p, double *measured, double *subtracted)
{
  double raw = 0, comp = 0;
  for (uint32_t i = 0; i < p->nthreads; i++) {
    if (p->threads[i].sampled || !p->threads[i].nnodes) continue;
    raw += p->threads[i].nodes[0].t.incl_raw;
    comp += p->threads[i].nodes[0].t.incl;
  }
  double sub = comp < raw ? raw - comp : 0;
  if (measured) *measured = raw;
  if (subtracted) *subtracted = sub;
  return raw > 0 ? sub / raw : 0;
}

void prof_flat(struct profile *p)
{
  for (uint32_t f = 0; f < p->nfuncs; f++) {
    p->funcs[f].calls = p->funcs[f].timed = 0;
    p->funcs[f].throttled = 0;
    p->funcs[f].throttled_ns = 0;
    p->funcs[f].unhooked_ns = 0;
    p->funcs[f].ucalls = 0;
    p->funcs[f].uncounted = 0;
    p->funcs[f].per_path = 0;
    p->funcs[f].unsynced = p->funcs[f].sync_unknown = 0;
    p->funcs[f].incl_all = p->funcs[f].incl_all_raw = 0;
    memset(&p->funcs[f].t, 0, sizeof p->funcs[f].t);
    memset(&p->funcs[f].s, 0, sizeof p->funcs[f].s);
  }
  uint8_t *seen = calloc(p->nfuncs ? p->nfuncs : 1, 1);
  /* Trees with measured calls first, then trees built from sampled stacks,
  ** whose times (CPU from samples, no calls) count only for functions no
  ** measured call names: added to a timed function's, they made its time
  ** per call exceed its longest call (a sample in printf, which 'capprof
  ** run' also intercepts). Their samples count everywhere. */
  for (int pass = 0; pass < 2; pass++)
  for (uint32_t k = 0; k < p->nthreads; k++) {
    const struct prof_thread *t = &p->threads[k];
    if ((t->sampled != 0) != pass) continue;
    for (uint32_t i = 1; i < t->nnodes; i++) {
      const struct prof_node *s = &t->nodes[i];
      struct prof_func *f = &p->funcs[s->func];
      int first = seen ? !seen[s->func] : 0;
      f->s.self += s->s_self;
      f->s.probe += s->s_probe;
      f->s.cpu_self += s->s_self * t->sample_ns;
      if (s->flags & PROF_OUTER) {
        f->s.incl += s->s_incl;
        f->s.cpu_incl += s->s_incl * t->sample_ns;
      }
      if (pass && f->calls) continue;
      f->calls = cpd_sat_add(f->calls, s->calls);
      f->timed = cpd_sat_add(f->timed, s->timed);
      f->throttled += (s->flags & CPD_NODE_THROTTLED) != 0;
      f->t.excl += s->t.excl;
      f->t.excl_raw += s->t.excl_raw;
      f->t.excl_adj += s->t.excl_adj;
      f->incl_all += s->t.incl;
      f->incl_all_raw += s->t.incl_raw;
      if (s->flags & PROF_OUTER) {
        f->t.incl += s->t.incl;
        f->t.incl_raw += s->t.incl_raw;
      }
      if (s->calls && (first || s->t.min_raw < f->t.min_raw)) {
        f->t.min_raw = s->t.min_raw;
        f->t.min = s->t.min;
      }
      if (s->calls && seen) seen[s->func] = 1;
      if (s->t.max_raw > f->t.max_raw) { f->t.max_raw = s->t.max_raw; f->t.max = s->t.max; }
    }
  }
  free(seen);
  /* The shortest call <= the mean <= the longest, per function too: its
  ** min and max are one node's, compensated for that node, and another
  ** node's calls, with more probes below them, can bring the mean across
  ** (worker: min 1293 ns, mean 1288, max 1283 in a tool_e2e run). */
  for (uint32_t f = 0; f < p->nfuncs; f++) {
    struct prof_func *fn = &p->funcs[f];
    if (!fn->timed) continue;
    double avg = fn->incl_all / (double)fn->timed;
    if (fn->t.min > avg) fn->t.min = avg;
    if (fn->t.max < avg) fn->t.max = avg;
  }
  /* When each function was first throttled: the dumps' records, by thread
  ** (a tree read from a dump has that dump's node indices). */
  for (uint32_t k = 0; k < p->nthreads; k++) {
    const struct prof_thread *t = &p->threads[k];
    if (t->dump < 0) continue;
    const struct cpd_dump *d = p->dumps[t->dump].d;
    for (uint32_t r = 0; r < d->nthrottled; r++) {
      const struct cpd_throttled *rec = &d->throttled[r];
      if (d->threads[rec->thread].tid != t->tid || rec->node >= t->nnodes) continue;
      struct prof_func *f = &p->funcs[t->nodes[rec->node].func];
      double ns = cpd_ticks_to_ns(d, (double)rec->ticks);
      if (f->throttled && (f->throttled_ns == 0 || ns < f->throttled_ns)) f->throttled_ns = ns;
    }
  }
  /* Unhooked functions, from each dump's records (their keys resolved when
  ** it was loaded): when, and the calls counted after, once per record.
  ** Those are the whole process's: left out when a filter keeps part of
  ** it (ucalls_off), where the function's later calls are not known. */
  for (uint32_t di = 0; di < p->ndumps; di++) {
    const struct cpd_dump *d = p->dumps[di].d;
    for (uint32_t r = 0; p->dumps[di].ufunc && r < d->nunhooked; r++) {
      uint32_t fi = p->dumps[di].ufunc[r];
      if (fi == PROF_NONE || fi >= p->nfuncs) continue;
      struct prof_func *f = &p->funcs[fi];
      double ns = cpd_ticks_to_ns(d, (double)d->unhooked[r].ticks);
      if (ns <= 0) ns = 1;
      if (f->unhooked_ns == 0 || ns < f->unhooked_ns) f->unhooked_ns = ns;
      if (d->unhooked[r].flags & CPD_UNHOOKED_SYNC_UNKNOWN) f->sync_unknown = 1;
      else if (!(d->unhooked[r].flags & CPD_UNHOOKED_SYNCED)) f->unsynced = 1;
      if (d->unhooked[r].flags & CPD_UNHOOKED_PER_PATH) {
        /* Format 1.9: its later calls are in the nodes, each thread's and
        ** path's, which every filter keeps; the record has those counted
        ** in no tree, which a filter of threads or paths leaves out. */
        if (!f->per_path) f->per_path = 1;
        if (d->unhooked[r].calls == CPD_UNHOOKED_UNCOUNTED) f->uncounted = 1;
        else if (!p->ucalls_off) f->ucalls += d->unhooked[r].calls;
        continue;
      }
      f->per_path = -1;
      if (d->unhooked[r].calls == CPD_UNHOOKED_UNCOUNTED || p->ucalls_off) f->uncounted = 1;
      else f->ucalls += d->unhooked[r].calls;
    }
  }
}
