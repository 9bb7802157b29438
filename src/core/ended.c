/*
** ended.c -- what is left of threads that ended. Each tree is packed into
** one shared arena and its shadow stack, table and node reservation are
** given back at once; past cp_g.keep_threads ended threads, trees are merged
** by thread name and start function instead; idle thread states are pooled
** for new threads. Everything here runs under os_lock (see internal.h).
*/
#include <string.h>

#include "../core/core.h"

/* The arena: one reservation, committed as records are added, never
** freed piecemeal (reset and fork give it all back). It also bounds what
** threads kept one by one may hold: past it, they are merged. */
#if UINTPTR_MAX > 0xFFFFFFFFu
#  define ARENA_BYTES ((size_t)1 << 30)
#else
#  define ARENA_BYTES ((size_t)64 << 20)
#endif
#define ARENA_STEP  ((size_t)1 << 20)
#define POOL_MAX    16u        /* idle states kept for new threads */

static struct {
  char *base;                  /* reservation, or NULL before first use */
  size_t committed, used;
} arena;

static struct cp_thread *pool[POOL_MAX];
static uint32_t npool;

static struct cp_ended *groups[CP_GROUPS_MAX + 1];   /* the last: catch-all */
static uint32_t ngroups;

static void *arena_alloc(size_t bytes)
{
  bytes = (bytes + 15) & ~(size_t)15;
  if (!arena.base && !(arena.base = os_reserve(ARENA_BYTES))) return NULL;
  if (bytes > ARENA_BYTES - arena.used) return NULL;
  size_t need = arena.used + bytes;
  if (need > arena.committed) {
    size_t want = (need + ARENA_STEP - 1) / ARENA_STEP * ARENA_STEP;
    if (want > ARENA_BYTES) want = ARENA_BYTES;
    if (os_commit(arena.base + arena.committed, want - arena.committed) != 0) return NULL;
    arena.committed = want;
  }
  void *p = arena.base + arena.used;
  arena.used = need;
  return p;
}

static void append(struct cp_ended *e)
{
  if (!cp_g.ended_tail) cp_g.ended_tail = &cp_g.ended;
  e->next = NULL;
  *cp_g.ended_tail = e;
  cp_g.ended_tail = &e->next;
}

static void unlink_thread(struct cp_thread *t)
{
  struct cp_thread **p = &cp_g.threads, *prev = NULL;
  while (*p && *p != t) {
    prev = *p;
    p = &(*p)->next;
  }
  if (!*p) return;
  *p = t->next;
  if (cp_g.threads_tail == &t->next) cp_g.threads_tail = prev ? &prev->next : &cp_g.threads;
  t->next = NULL;
}

/* Pack t's tree and record, and what the features keep with it, into the
** arena; 0, or -1 when the arena is full. */
static int pack(struct cp_thread *t, uint32_t open, uint64_t start_key)
{
  size_t nbytes = (size_t)t->nnodes * sizeof(struct cp_node);
  size_t head = (sizeof(struct cp_ended) + 15) & ~(size_t)15;
  size_t fbytes = 0;
  for (const struct cp_feature *const *p = cp_features; *p; p++)
    if ((*p)->pack_size) fbytes += ((*p)->pack_size(t) + 7) & ~(size_t)7;
  char *mem = arena_alloc(head + nbytes + fbytes);
  if (!mem) return -1;
  struct cp_ended *e = (struct cp_ended *)(void *)mem;
  memset(e, 0, sizeof *e);
  e->nodes = (struct cp_node *)(void *)(mem + head);
  memcpy(e->nodes, t->nodes, nbytes);
  char *more = mem + head + nbytes;
  for (const struct cp_feature *const *p = cp_features; *p; p++) {
    if (!(*p)->pack_size || !(*p)->pack) continue;
    size_t n = ((*p)->pack_size(t) + 7) & ~(size_t)7;
    (*p)->pack(t, e, more);
    more += n;
  }
  e->tid = t->tid;
  e->start_ns = t->start_ns;
  e->end_ns = t->end_ns;
  e->lost_frames = t->lost_frames;
  e->slow_ticks = t->debt - t->debt_at_reset;
  e->slow_calls = t->slow_calls;
  e->start_key = start_key;
  e->nnodes = t->nnodes;
  e->nopen = open;
  memcpy(e->name, t->name, sizeof e->name);
  e->name[sizeof e->name - 1] = '\0';
  append(e);
  cp_g.nended_kept++;
  return 0;
}

/* The group for threads named name that started with start_key: found,
** made, or the catch-all once CP_GROUPS_MAX groups exist. NULL without
** memory. */
static struct cp_ended *group_for(const char *name, uint64_t start_key)
{
  for (uint32_t i = 0; i < ngroups && i < CP_GROUPS_MAX; i++)
    if (groups[i]->start_key == start_key && strcmp(groups[i]->name, name) == 0)
      return groups[i];
  int others = ngroups >= CP_GROUPS_MAX;
  if (others && groups[CP_GROUPS_MAX]) return groups[CP_GROUPS_MAX];
  struct cp_ended *g = arena_alloc(sizeof *g);
  struct cp_thread *tree = g ? calltree_new(cp_g.node_cap) : NULL;
  if (!tree) return NULL;      /* the arena bytes, if any, stay unused */
  memset(g, 0, sizeof *g);
  g->group = tree;
  g->merge_kind = others ? CPD_MERGE_OTHERS : CPD_MERGE_NAME_AND_START;
  g->start_key = others ? 0 : start_key;
  g->start_ns = UINT64_MAX;
  if (!others) {
    size_t n = strlen(name);
    if (n >= sizeof g->name) n = sizeof g->name - 1;
    memcpy(g->name, name, n);
    g->name[n] = '\0';
  } else {
    strcpy(g->name, "[other ended threads]");
  }
  groups[others ? CP_GROUPS_MAX : ngroups++] = g;
  append(g);
  return g;
}

static void merge(struct cp_thread *t, uint32_t open, uint64_t start_key)
{
  struct cp_ended *g = group_for(t->name, start_key);
  if (!g) {
    cp_g.nended_dropped++;
    return;
  }
  /* t's table is no longer needed and has a slot per node at least (it is
  ** at most half full, and never smaller than TABLE_MIN): the index map. */
  calltree_merge(g->group, t->nodes, t->nnodes, t->table);
  for (const struct cp_feature *const *p = cp_features; *p; p++)
    if ((*p)->merged) (*p)->merged(t, g->group);
  g->merged++;
  g->nopen += open;
  g->lost_frames += t->lost_frames;
  g->slow_ticks += t->debt - t->debt_at_reset;
  g->slow_calls += t->slow_calls;
  if (t->start_ns < g->start_ns) g->start_ns = t->start_ns;
  if (t->end_ns > g->end_ns) g->end_ns = t->end_ns;
  cp_g.nended_merged++;
}

void ended_retire(struct cp_thread *t)
{
  unlink_thread(t);
  if (t->generation != cp_g.gate >> 1) return;    /* recorded before a reset */
  for (const struct cp_feature *const *p = cp_features; *p; p++)
    if ((*p)->thread_ending) (*p)->thread_ending(t);   /* zones still open */
  uint32_t open = calltree_close(t, t->end_ticks);
  uint64_t start_key = t->nnodes > CP_FIRST_NODE ? t->nodes[CP_FIRST_NODE].key : 0;
  if (cp_g.nended_kept < cp_g.keep_threads && pack(t, open, start_key) == 0) return;
  merge(t, open, start_key);
}

struct cp_thread *ended_pool_take(void)
{
  return npool ? pool[--npool] : NULL;
}

int ended_pool_put(struct cp_thread *t)
{
  if (npool == POOL_MAX || calltree_recycle(t, cp_g.node_cap) != 0) return 0;
  pool[npool++] = t;
  return 1;
}

void ended_reset(void)
{
  for (uint32_t i = 0; i <= CP_GROUPS_MAX; i++) {
    if (groups[i]) calltree_free(groups[i]->group);
    groups[i] = NULL;
  }
  ngroups = 0;
  if (arena.base) os_release(arena.base, ARENA_BYTES);
  memset(&arena, 0, sizeof arena);
  cp_g.ended = NULL;
  cp_g.ended_tail = &cp_g.ended;
  cp_g.nended_kept = 0;
  cp_g.nended_merged = 0;
  cp_g.nended_dropped = 0;
}
