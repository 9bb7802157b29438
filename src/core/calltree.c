/*
** calltree.c -- the per-thread call tree's slow paths: node lookup and
** creation, shadow-stack growth, popping frames skipped by longjmp or
** exceptions, and rebuilding a tree after reset or fork. The fast paths are
** cp_hot_enter/cp_hot_exit in internal.h. Only the owning thread calls these.
*/
#include <string.h>

#include "../core/core.h"
#include "../hooks/hotpath.h"
#include "../throttle/throttle.h"

/* Reservation sizes: address space only; memory is committed as used. */
#if UINTPTR_MAX > 0xFFFFFFFFu
#  define MAX_DEPTH      (UINT64_C(1) << 24)   /* frames: 384 MiB of address space */
#else
#  define MAX_DEPTH      (UINT64_C(1) << 20)
#endif
#define NODE_CHUNK       (64u * 1024u)          /* bytes committed at a time, at least */
#define FRAME_CHUNK      (64u * 1024u)
#define TABLE_MIN        1024u                  /* slots */

static size_t round_up(size_t n, size_t to)
{
  return (n + to - 1) / to * to;
}

#define hash_slot calltree_slot

CP_PROBE_CODE static void init_node(struct cp_node *n, uint64_t key, uint32_t parent)
{
  n->key = key;
  n->parent = parent;
  n->hot = CP_NODE_ROOT;
  n->calls = 0;
  n->incl = 0;
  n->min = UINT64_MAX;
  n->max = 0;
}

static void init_fixed_nodes(struct cp_thread *t)
{
  init_node(&t->nodes[CP_NODE_ROOT], CPD_KEY_ROOT, CPD_NO_PARENT);
  init_node(&t->nodes[CP_NODE_OVERFLOW], CPD_KEY_OVERFLOW, CP_NODE_ROOT);
  init_node(&t->nodes[CP_NODE_SINK], CPD_KEY_SINK, CP_NODE_OVERFLOW);
  t->nnodes = CP_FIRST_NODE;
}

/* Make room for node index i; 0 or CAPPROF_ENOMEM. */
CP_PROBE_CODE static int commit_nodes(struct cp_thread *t, size_t i)
{
  if (i < t->nodes_committed) return 0;
  size_t have = t->nodes_committed * sizeof(struct cp_node);
  size_t want = round_up((i + 1) * sizeof(struct cp_node), NODE_CHUNK);
  if (want < 2 * have) want = 2 * have;               /* amortise commits */
  size_t limit = t->nodes_bytes;          /* the cap plus room for overflow nodes */
  if (want > limit) want = limit;
  size_t from = round_up(have, os_page_size());
  if (want > from && os_commit((char *)t->nodes + from, want - from) != 0)
    return CAPPROF_ENOMEM;
  t->nodes_committed = want / sizeof(struct cp_node);
  return i < t->nodes_committed ? 0 : CAPPROF_ENOMEM;
}

static uint32_t *table_alloc(size_t slots, size_t *bytes)
{
  *bytes = round_up(slots * sizeof(uint32_t), os_page_size());
  uint32_t *tab = os_reserve(*bytes);
  if (tab && os_commit(tab, *bytes) != 0) {
    os_release(tab, *bytes);
    tab = NULL;
  }
  return tab;
}

CP_PROBE_CODE static void table_insert(struct cp_thread *t, uint32_t idx)
{
  const struct cp_node *n = &t->nodes[idx];
  uint32_t s = hash_slot(t, n->parent, n->key);
  while (t->table[s] != 0) s = (s + 1) & t->mask;
  t->table[s] = idx;
  t->table_used++;
}

/* Double the table when it is half full; 0 or CAPPROF_ENOMEM. */
CP_PROBE_CODE static int table_grow(struct cp_thread *t)
{
  size_t slots = ((size_t)t->mask + 1) * 2, bytes;
  uint32_t *tab = table_alloc(slots, &bytes);
  if (!tab) return CAPPROF_ENOMEM;
  uint32_t *old = t->table;
  size_t old_bytes = t->table_bytes;
  t->table = tab;
  t->table_bytes = bytes;
  t->mask = (uint32_t)(slots - 1);
  t->table_used = 0;
  for (uint32_t i = CP_FIRST_NODE; i < t->nnodes; i++) table_insert(t, i);
  os_release(old, old_bytes);
  return 0;
}

/* The child of parent with key, or 0 (node 0 is nobody's child). */
CP_PROBE_CODE static uint32_t find_child(const struct cp_thread *t, uint32_t parent, uint64_t key)
{
  uint32_t s = hash_slot(t, parent, key), idx;
  while ((idx = t->table[s]) != 0) {
    if ((t->nodes[idx].key | CP_KEY_THROTTLED) == (key | CP_KEY_THROTTLED) &&
        t->nodes[idx].parent == parent)
      return idx;                /* a throttled node's key has the bit set */
    s = (s + 1) & t->mask;
  }
  return 0;
}

/* Create the child of parent with key; its index, or CPD_NO_PARENT when
** memory cannot be had. */
CP_PROBE_CODE static uint32_t add_child(struct cp_thread *t, uint32_t parent, uint64_t key)
{
  uint32_t idx = t->nnodes;
  if (commit_nodes(t, idx) != 0 ||
      ((t->table_used + 1) * 2 > t->mask + 1 && table_grow(t) != 0))
    return CPD_NO_PARENT;
  init_node(&t->nodes[idx], key, parent);
  t->nnodes = idx + 1;       /* before table_insert: it reads nodes[idx] */
  table_insert(t, idx);
  return idx;
}

/* The node of (parent, key), created if needed. Past the cap a call on a new
** path goes to its parent's own overflow node, "[calls past the node cap]",
** so that its time stays under the path where the cap was hit; calls below
** an overflow node go to the sink (counted, their time is the overflow
** node's). The reservation holds one overflow node per node, so only a
** failed commit (out of memory) falls back to the global overflow node. */
CP_PROBE_CODE static uint32_t get_child(struct cp_thread *t, uint32_t parent, uint64_t key)
{
  if (calltree_node_capped(t, parent)) return CP_NODE_SINK;
  uint32_t idx = find_child(t, parent, key);
  if (idx) return idx;
  if (t->nnodes < t->cap) {
    idx = add_child(t, parent, key);
    if (idx != CPD_NO_PARENT) return idx;
    t->cap = t->nnodes;        /* out of memory: behave as if capped */
  }
  if (parent == CP_NODE_ROOT && key == CPD_KEY_OVERFLOW) return CP_NODE_OVERFLOW;
  if ((idx = find_child(t, parent, CPD_KEY_OVERFLOW)) != 0) return idx;
  idx = add_child(t, parent, CPD_KEY_OVERFLOW);
  return idx != CPD_NO_PARENT ? idx : CP_NODE_OVERFLOW;
}

/* Node idx, found by a lookup that did not start at its first table slot:
** move it there when the node in that slot is not in its own first slot
** either, or has had fewer than half idx's calls (less 64, so that two
** callees of about the same frequency do not swap back and forth). The
** fast paths probe only the first slot, so a frequent callee that an
** earlier, unrelated node pushed on would otherwise take the slow path on
** every call (which of a program's callees do depends on their addresses:
** on ASLR). Linear probing without deletions keeps both findable: every
** slot from either one's first slot to its new place is occupied, since
** the lookup passed through them. */
CP_PROBE_CODE static void table_promote(struct cp_thread *t, uint32_t idx)
{
  const struct cp_node *n = &t->nodes[idx];
  uint32_t home = hash_slot(t, n->parent, n->key);
  uint32_t other = t->table[home];
  if (other == idx) return;
  const struct cp_node *o = &t->nodes[other];
  if (hash_slot(t, o->parent, o->key) == home && n->calls <= 2 * o->calls + 64)
    return;                      /* it belongs there, and is not much colder */
  uint32_t s = home;
  while (t->table[s] != idx) s = (s + 1) & t->mask;
  t->table[s] = other;
  t->table[home] = idx;
}

/* Find or create the child of parent with key (get_child), and make it
** parent's hot child. */
CP_PROBE_CODE uint32_t calltree_lookup(struct cp_thread *t, uint32_t parent, uint64_t key)
{
  if (calltree_node_capped(t, parent)) return CP_NODE_SINK;
  /* Busy: a signal handler's hooks must not see the table mid-swap, nor
  ** grow it under a promotion. */
  uint32_t saved = cp_enter_busy(t);
  uint32_t idx = find_child(t, parent, key);
  if (idx) table_promote(t, idx);
  else {
    os_errsave e = os_save_errors();
    idx = get_child(t, parent, key);
    os_restore_errors(e);
  }
  cp_leave_busy(t, saved);
  if (!calltree_node_capped(t, idx)) t->nodes[parent].hot = idx;
  return idx;
}

/* Commit more shadow stack; returns the top frame, or NULL when the stack is
** at its reserved maximum (the call is then not recorded). */
CP_PROBE_CODE struct cp_frame *calltree_grow(struct cp_thread *t)
{
  if (t->frames + (t->frames_bytes + FRAME_CHUNK) / sizeof(struct cp_frame) > t->frames_end) {
    t->lost_frames++;
    return NULL;
  }
  uint32_t saved = cp_enter_busy(t);
  os_errsave e = os_save_errors();
  size_t have = t->frames_bytes;
  size_t add = have < FRAME_CHUNK ? FRAME_CHUNK : have;   /* double */
  size_t room = (size_t)((char *)t->frames_end - (char *)t->frames) - have;
  if (add > room) add = room;
  struct cp_frame *top = t->top;
  if (os_commit((char *)t->frames + have, add) == 0) {
    t->frames_bytes = have + add;
    t->commit_end = t->frames + t->frames_bytes / sizeof(struct cp_frame);
  } else {
    t->lost_frames++;
    top = NULL;
  }
  os_restore_errors(e);
  cp_leave_busy(t, saved);
  return top;
}

/* A frame popped without its exit: a zone's is counted as left open, by
** the feature that registers for it (zone.c). Slow paths only. */
static void popped_open(struct cp_thread *t, const struct cp_frame *f)
{
  uint64_t key = t->nodes[f->node].key;
  if (CP_LIKELY(!CPD_KEY_IS_ZONE(key))) return;
  for (const struct cp_feature *const *p = cp_features; *p; p++)
    if ((*p)->zone_popped) (*p)->zone_popped(t, (uint32_t)(key & 0xFFFFFFFFu));
}

/* Pop every frame whose sp is below sp, charging each with the time up to
** now: those calls were left without an exit. */
CP_PROBE_CODE struct cp_frame *calltree_unwind(struct cp_thread *t, uintptr_t sp, uint64_t now)
{
  uint32_t saved = cp_enter_busy(t);
  struct cp_frame *f = t->top;
  while (f > t->frames && f->sp < sp) {
    calltree_charge_frame(t, f, now);
    popped_open(t, f);
    f--;
  }
  t->top = f;
  cp_leave_busy(t, saved);
  return f;
}

/* An exit whose key is not the innermost frame's. Frames of calls lost to the
** node cap carry synthetic keys: they match any exit. Otherwise look a little
** way down the stack for the call that is returning (its inner frames lost
** their exits) and pop to it; if it is not there, the exit has no recorded
** entry (entered while paused, or before the runtime was ready): ignore it. */
CP_PROBE_CODE void calltree_exit_mismatch(struct cp_thread *t, uint64_t key, uintptr_t sp,
                            uint64_t now)
{
  struct cp_frame *f = t->top;
  if (f == t->frames) return;
  if (calltree_node_capped(t, f->node)) {
    calltree_charge_frame(t, f, now);
    t->top = f - 1;
    return;
  }
  struct cp_frame *stop = f - 64 > t->frames ? f - 64 : t->frames;
  for (struct cp_frame *g = f - 1; g > stop; g--) {
    if ((t->nodes[g->node].key | CP_KEY_THROTTLED) == (key | CP_KEY_THROTTLED) && g->sp >= sp) {
      uint32_t saved = cp_enter_busy(t);
      for (; f >= g; f--) {
        calltree_charge_frame(t, f, now);
        popped_open(t, f);
      }
      t->top = g - 1;
      cp_leave_busy(t, saved);
      return;
    }
  }
}

void calltree_rebase(struct cp_thread *t, uint64_t now)
{
  uint32_t saved = cp_enter_busy(t);
  struct cp_frame *f;
  /* Remember each open frame's key in its start field, then rebuild. */
  for (f = t->frames + 1; f <= t->top; f++) f->tstart = t->nodes[f->node].key;
  memset(t->table, 0, ((size_t)t->mask + 1) * sizeof(uint32_t));
  t->table_used = 0;
  init_fixed_nodes(t);
  t->lost_frames = 0;
  t->slow_calls = 0;
  t->debt_at_reset = t->debt;
  for (const struct cp_feature *const *p = cp_features; *p; p++)
    if ((*p)->thread_reset) (*p)->thread_reset(t);
  for (f = t->frames + 1; f <= t->top; f++) {
    uint64_t key = f->tstart;
    f->node = CPD_KEY_IS_SPECIAL(key) && !CPD_KEY_IS_ZONE(key)
                  ? CP_NODE_SINK : calltree_lookup(t, f[-1].node, key);
    f->tstart = now;
  }
  cp_leave_busy(t, saved);
}

struct cp_thread *calltree_new(uint32_t node_cap)
{
  if (node_cap < CP_FIRST_NODE + 1) node_cap = CP_FIRST_NODE + 1;
  size_t tbytes = round_up(sizeof(struct cp_thread), os_page_size());
  /* Room for the cap and one overflow node per node (get_child). */
  size_t nbytes = round_up((2 * (size_t)node_cap + CP_FIRST_NODE) * sizeof(struct cp_node),
                           os_page_size());
  size_t fbytes = (size_t)(MAX_DEPTH * sizeof(struct cp_frame));
  struct cp_thread *t = os_reserve(tbytes);
  if (!t) return NULL;
  if (os_commit(t, tbytes) != 0) goto fail_t;

  t->cap = node_cap;
  t->nodes_bytes = nbytes;
  t->nodes = os_reserve(nbytes);
  if (!t->nodes) goto fail_t;
  t->frames = os_reserve(fbytes);
  if (!t->frames) goto fail_n;
  t->frames_end = t->frames + MAX_DEPTH;
  if (os_commit(t->frames, FRAME_CHUNK) != 0) goto fail_f;
  t->frames_bytes = FRAME_CHUNK;
  t->commit_end = t->frames + FRAME_CHUNK / sizeof(struct cp_frame);
  t->table = table_alloc(TABLE_MIN, &t->table_bytes);
  if (!t->table) goto fail_f;
  t->mask = TABLE_MIN - 1;
  if (commit_nodes(t, CP_FIRST_NODE) != 0) goto fail_tab;

  init_fixed_nodes(t);
  cp_ring_none(t);
  t->top = t->frames;
  t->frames[0].node = CP_NODE_ROOT;
  t->frames[0].sp = UINTPTR_MAX;     /* the sentinel is never popped */
  t->frames[0].tstart = 0;
  return t;

fail_tab:
  os_release(t->table, t->table_bytes);
fail_f:
  os_release(t->frames, fbytes);
fail_n:
  os_release(t->nodes, nbytes);
fail_t:
  os_release(t, tbytes);
  return NULL;
}

/* Each feature frees its part of t's state. */
static void free_features(struct cp_thread *t)
{
  for (const struct cp_feature *const *p = cp_features; *p; p++)
    if ((*p)->thread_free) (*p)->thread_free(t);
}

void calltree_free(struct cp_thread *t)
{
  if (!t) return;
  free_features(t);
  os_release(t->table, t->table_bytes);
  os_release(t->frames, (size_t)((char *)t->frames_end - (char *)t->frames));
  os_release(t->nodes, t->nodes_bytes);
  os_release(t, round_up(sizeof(struct cp_thread), os_page_size()));
}

/* ---- ended threads (ended.c uses these under os_lock) -------------------- */

/* Charge t's open calls up to end and flag their nodes: afterwards every
** node's hot field holds its CPD_NODE_* flags, and t's hooks must not run
** again. Returns the number of open calls. */
uint32_t calltree_close(struct cp_thread *t, uint64_t end)
{
  uint32_t open = 0, n = t->nnodes;
  for (uint32_t i = 0; i < n; i++) t->nodes[i].hot = 0;
  for (struct cp_frame *f = t->frames + 1; f <= t->top; f++) {
    if (f->node >= n || f->tstart > end) continue;
    calltree_charge_frame(t, f, end);
    t->nodes[f->node].hot |= CPD_NODE_OPEN;
    open++;
  }
  t->top = t->frames;
  return open;
}

/* Add n nodes of another tree (flags in hot, parents before children) into
** g, path by path, under g's cap. map: n scratch slots. */
void calltree_merge(struct cp_thread *g, const struct cp_node *src, uint32_t n, uint32_t *map)
{
  for (uint32_t i = 0; i < n; i++) {
    const struct cp_node *s = &src[i];
    uint32_t d = i < CP_FIRST_NODE ? i : get_child(g, map[s->parent], s->key);
    map[i] = d;
    struct cp_node *to = &g->nodes[d];
    to->calls += s->calls;
    to->incl += s->incl;
    if (s->min < to->min) to->min = s->min;
    if (s->max > to->max) to->max = s->max;
    to->hot |= s->hot;
  }
}

/* Make a state that served an ended thread ready for a new one: memory past
** the first chunks is given back (decommitted), the tree emptied. 0, or
** CAPPROF_ENOMEM (then free it). */
int calltree_recycle(struct cp_thread *t, uint32_t node_cap)
{
  size_t page = os_page_size();
  size_t keep = round_up(NODE_CHUNK, page);
  size_t used = round_up(t->nodes_committed * sizeof(struct cp_node), page);
  if (used > keep) os_decommit((char *)t->nodes + keep, used - keep);
  if (t->nodes_committed * sizeof(struct cp_node) > keep)
    t->nodes_committed = keep / sizeof(struct cp_node);
  if (t->frames_bytes > FRAME_CHUNK) {
    os_decommit((char *)t->frames + FRAME_CHUNK, t->frames_bytes - FRAME_CHUNK);
    t->frames_bytes = FRAME_CHUNK;
    t->commit_end = t->frames + FRAME_CHUNK / sizeof(struct cp_frame);
  }
  if (t->mask + 1 > TABLE_MIN) {
    size_t bytes;
    uint32_t *tab = table_alloc(TABLE_MIN, &bytes);
    if (!tab) return CAPPROF_ENOMEM;
    os_release(t->table, t->table_bytes);
    t->table = tab;
    t->table_bytes = bytes;
    t->mask = TABLE_MIN - 1;
  } else {
    memset(t->table, 0, ((size_t)t->mask + 1) * sizeof(uint32_t));
  }
  free_features(t);
  t->cap = node_cap < CP_FIRST_NODE + 1 ? CP_FIRST_NODE + 1 : node_cap;
  t->table_used = 0;
  t->lost_frames = 0;
  t->next = NULL;
  t->tid = t->start_ns = t->end_ns = t->end_ticks = 0;
  t->exit_rounds = 0;
  cp_ring_none(t);
  t->name_fixed = 0;
  t->name[0] = '\0';
  init_fixed_nodes(t);
  t->top = t->frames;
  t->frames[0].node = CP_NODE_ROOT;
  t->frames[0].sp = UINTPTR_MAX;
  t->frames[0].tstart = 0;
  t->debt = t->debt_at_reset = t->slow_calls = 0;
  return 0;
}
