/*
** zone.c -- manual zones: named regions timed as nodes of the calling
** thread's call tree (key CPD_KEY_ZONE | name id), the process-wide table
** of zone names, and the per-thread counts of mismatched BEGIN/END. The
** hooks never come here; zones cost nothing to programs that do not use them.
**
** Where a zone sits. A zone belongs to the function that begins it. Its
** frame takes the stack pointer of the innermost open hooked function (the
** hooks record the hook's frame address, and this file's functions have the
** same frame address when called from the same function), so the hooks'
** rules (a frame whose sp is below the current one is dead) put it above the
** function's callees, inlined ones included, and the function's exit hook
** pops it, counted as left open, if the function returns without ending it.
** With no hooked function open (a zones-only program) it takes the address
** of the caller's own frame: zones of functions that returned are then
** recognised as dead by later BEGINs and ENDs in shallower frames.
*/
#include <string.h>

#include "../core/core.h"
#include "../hooks/hotpath.h"
#include "zone.h"
#include "../dump/dump.h"

#define NAMES_MAX     65536u          /* distinct names; one more id collects the rest */
#define NAME_MAX_LEN  1023u           /* longer names are cut */
#define HASH_SLOTS    (2u * NAMES_MAX)
#define ARENA_BYTES   ((size_t)32 << 20)
#define ARENA_CHUNK   ((size_t)64 << 10)
#define CACHE_SLOTS   256u            /* per-thread: name pointer -> id */
#define ISSUE_SLOTS   1024u           /* per-thread: zone ids with mismatches */
#define GATE_BUSY     0xFFFFFFFFu
#define OVERFLOW_NAME "(more zone names than capprof keeps)"

/* The name table: append-only, written under os_lock, read lock-free by the
** dump. names[id] is set before count is raised past id. */
static struct {
  char **names;                 /* id -> NUL-terminated copy */
  uint32_t *lens;               /* id -> length */
  uint32_t *hash;               /* open addressing by content: id + 1, 0 empty */
  char *arena;                  /* the copies */
  size_t arena_used, arena_committed;
  volatile uint32_t count;      /* ids published */
  uint32_t overflow;            /* id of OVERFLOW_NAME once the table is full */
  int ready;                    /* reserved; -1 when that failed */
} Z;

struct zone_cache { const char *ptr; uint32_t id; uint32_t pad_; };
struct zone_issue { uint32_t id1; uint32_t pad_; uint64_t n[CPD_ZI_KINDS]; };

/* Per-thread zone state, made on the thread's first zone. */
struct cp_zones {
  struct zone_cache cache[CACHE_SLOTS];  /* recently used names of this thread */
  uint32_t nissues;                      /* used slots of issues */
  uint32_t issues_lost;                  /* mismatches not counted: table full */
  struct zone_issue issues[ISSUE_SLOTS]; /* open addressing: id1 = id + 1 */
};

/* ---- the name table (under os_lock) -------------------------------------- */

static uint32_t name_hash(const char *s, size_t len)
{
  uint32_t h = 2166136261u;                   /* FNV-1a */
  for (size_t i = 0; i < len; i++) h = (h ^ (unsigned char)s[i]) * 16777619u;
  return h;
}

static int table_ready(void)
{
  if (Z.ready) return Z.ready > 0;
  Z.ready = -1;
  size_t nb = (size_t)NAMES_MAX * sizeof(char *), lb = (size_t)NAMES_MAX * 4;
  size_t hb = (size_t)HASH_SLOTS * 4;
  char **names = os_reserve(nb);
  uint32_t *lens = os_reserve(lb), *hash = os_reserve(hb);
  char *arena = os_reserve(ARENA_BYTES);
  if (!names || !lens || !hash || !arena || os_commit(names, nb) || os_commit(lens, lb) ||
      os_commit(hash, hb)) {
    os_release(names, nb);
    os_release(lens, lb);
    os_release(hash, hb);
    os_release(arena, ARENA_BYTES);
    return 0;
  }
  Z.names = names;
  Z.lens = lens;
  Z.hash = hash;
  Z.arena = arena;
  Z.overflow = UINT32_MAX;
  Z.ready = 1;
  return 1;
}

/* Copy a name into the arena; NULL when it is full or memory is short. */
static char *arena_copy(const char *s, size_t len)
{
  size_t need = Z.arena_used + len + 1;
  if (need > ARENA_BYTES) return NULL;
  if (need > Z.arena_committed) {
    size_t want = (need + ARENA_CHUNK - 1) / ARENA_CHUNK * ARENA_CHUNK;
    if (want > ARENA_BYTES) want = ARENA_BYTES;
    if (os_commit(Z.arena + Z.arena_committed, want - Z.arena_committed) != 0) return NULL;
    Z.arena_committed = want;
  }
  char *p = Z.arena + Z.arena_used;
  memcpy(p, s, len);
  p[len] = '\0';
  Z.arena_used = need;
  return p;
}

/* The id of a name, interned if new. Caller holds os_lock. Returns
** UINT32_MAX only if the table could not be made at all. */
static uint32_t intern_locked(const char *s, size_t len)
{
  if (!table_ready()) return UINT32_MAX;
  uint32_t slot = name_hash(s, len) & (HASH_SLOTS - 1), v;
  while ((v = Z.hash[slot]) != 0) {
    uint32_t id = v - 1;
    if (Z.lens[id] == len && memcmp(Z.names[id], s, len) == 0) return id;
    slot = (slot + 1) & (HASH_SLOTS - 1);
  }
  uint32_t id = Z.count;
  char *copy = id < NAMES_MAX - 1 && Z.overflow == UINT32_MAX ? arena_copy(s, len) : NULL;
  if (!copy) {                 /* full: every further name shares one id */
    if (Z.overflow != UINT32_MAX) return Z.overflow;
    Z.overflow = id;
    copy = (char *)OVERFLOW_NAME;
    len = sizeof OVERFLOW_NAME - 1;
  } else {
    Z.hash[slot] = id + 1;
  }
  Z.names[id] = copy;
  Z.lens[id] = (uint32_t)len;
  CP_BARRIER();
  Z.count = id + 1;
  return id;
}

uint32_t zone_name_count(void)
{
  uint32_t n = Z.count;
  CP_BARRIER();
  return n;
}

const char *zone_name(uint32_t id, uint32_t *len)
{
  const char *s = id < Z.count ? Z.names[id] : NULL;
  *len = s ? Z.lens[id] : 0;
  return s ? s : "";
}

/* ---- per-thread state ------------------------------------------------------ */

static struct cp_zones *thread_zones(struct cp_thread *t)
{
  if (CP_LIKELY(t->zones != NULL)) return t->zones;
  size_t bytes = (sizeof(struct cp_zones) + os_page_size() - 1) / os_page_size() *
                 os_page_size();
  struct cp_zones *z = os_reserve(bytes);
  if (z && os_commit(z, bytes) != 0) {
    os_release(z, bytes);
    z = NULL;
  }
  t->zones = z;
  return z;
}

void zone_thread_free(struct cp_thread *t)
{
  if (!t->zones) return;
  size_t bytes = (sizeof(struct cp_zones) + os_page_size() - 1) / os_page_size() *
                 os_page_size();
  os_release(t->zones, bytes);
  t->zones = NULL;
}

void zone_thread_reset(struct cp_thread *t)
{
  struct cp_zones *z = t->zones;
  if (!z) return;
  memset(z->issues, 0, sizeof z->issues);
  z->nissues = 0;
  z->issues_lost = 0;
}

/* Id of name for thread t: a hit in the thread's cache costs a pointer
** compare and a compare of the text (names may live in reused buffers);
** a miss takes os_lock. UINT32_MAX if no id can be had. */
static uint32_t zone_id(struct cp_thread *t, struct cp_zones *z, const char *name)
{
  if (!name) name = "";
  uintptr_t p = (uintptr_t)name;
  struct zone_cache *c = &z->cache[((p >> 3) ^ (p >> 11)) & (CACHE_SLOTS - 1)];
  if (c->ptr == name && c->id < Z.count) {
    const char *s = Z.names[c->id];
    uint32_t len = Z.lens[c->id];
    /* strncmp stops at name's end: a shorter name is never read past. */
    if (strncmp(s, name, len) == 0 && (len == NAME_MAX_LEN || name[len] == '\0')) return c->id;
  }
  size_t len = strnlen(name, NAME_MAX_LEN);
  uint32_t saved = t->gate;
  t->gate = GATE_BUSY;                   /* hooks in a signal handler do nothing */
  os_lock();
  uint32_t id = intern_locked(name, len);
  os_unlock();
  t->gate = saved;
  if (id != UINT32_MAX) {
    c->ptr = name;
    c->id = id;
  }
  return id;
}

static void note_n(struct cp_zones *z, uint32_t id, unsigned kind, uint64_t n)
{
  uint32_t slot = (id * 2654435761u) & (ISSUE_SLOTS - 1);
  for (uint32_t i = 0; i < ISSUE_SLOTS; i++, slot = (slot + 1) & (ISSUE_SLOTS - 1)) {
    struct zone_issue *e = &z->issues[slot];
    if (e->id1 == id + 1) {
      e->n[kind] += n;
      return;
    }
    if (e->id1 == 0) {
      if (z->nissues + 1 >= ISSUE_SLOTS) break;
      e->n[kind] += n;
      e->id1 = id + 1;                  /* the dump reads id1 != 0 as "in use" */
      z->nissues++;
      return;
    }
  }
  z->issues_lost++;
}

void zone_note(struct cp_thread *t, uint32_t id, unsigned kind)
{
  struct cp_zones *z = t->zones;
  if (!z || kind >= CPD_ZI_KINDS) return;
  note_n(z, id, kind, 1);
}

void zone_add(struct cp_thread *t, uint32_t id, const uint64_t *counts)
{
  struct cp_zones *z = thread_zones(t);
  if (!z) return;
  for (unsigned k = 0; k < CPD_ZI_KINDS; k++)
    if (counts[k]) note_n(z, id, k, counts[k]);
}

void zone_issues(const struct cp_thread *t, zone_issue_fn fn, void *ctx)
{
  const struct cp_zones *z = t->zones;
  if (!z) return;
  for (uint32_t i = 0; i < ISSUE_SLOTS; i++) {
    uint32_t id1 = z->issues[i].id1;
    if (id1 && id1 - 1 < zone_name_count()) fn(ctx, id1 - 1, z->issues[i].n);
  }
}

void zone_pop_open(struct cp_thread *t, uint64_t now)
{
  uint32_t saved = t->gate;
  t->gate = GATE_BUSY;
  struct cp_frame *f = t->top;
  for (; f > t->frames && cp_frame_is_zone(t, f); f--) {
    calltree_charge_frame(t, f, now);
    zone_popped_open(t, f);
  }
  t->top = f;
  t->gate = saved;
}

/* ---- the API ----------------------------------------------------------------- */

/* The calling thread's state, made (and the runtime started) on first use. */
static struct cp_thread *zone_thread(void)
{
  struct cp_thread *t = os_get_thread();
  return CP_LIKELY(t != NULL) ? t : runtime_thread_slow();
}

/* 0 when t may record now. Closing a zone by token also goes on while paused:
** the token names the frame, and closing it keeps the stack true. */
static int zone_blocked(struct cp_thread *t, int closing)
{
  if (cp_ring_pending(t)) cp_ring_drain(t);   /* samples of the path before the zone's change */
  if (CP_LIKELY(t->gate == cp_g.gate)) return 0;
  if (!runtime_sync(t)) return 0;
  return !(closing && runtime_thread_real(t) && t->gate != GATE_BUSY && !cp_g.finished);
}

static uint32_t zone_of(const struct cp_thread *t, const struct cp_frame *f)
{
  return (uint32_t)(t->nodes[f->node].key & 0xFFFFFFFFu);
}

/* Pop frames from the top down to and including g, charging each; zones
** among those above g were left open. */
static void close_to(struct cp_thread *t, struct cp_frame *g, uint64_t now)
{
  uint32_t saved = t->gate;
  t->gate = GATE_BUSY;
  struct cp_frame *f = t->top;
  for (; f > g; f--) {
    calltree_charge_frame(t, f, now);
    zone_popped_open(t, f);
  }
  calltree_charge_frame(t, g, now);
  t->top = g - 1;
  t->gate = saved;
}

uint64_t capprof_zone_begin(const char *name)
{
  uintptr_t here = CP_FRAME_ADDRESS();
  struct cp_thread *t = zone_thread();
  if (zone_blocked(t, 0)) return 0;
  os_errsave e = os_save_errors();
  uint64_t token = 0;
  struct cp_zones *z = thread_zones(t);
  uint32_t id = z ? zone_id(t, z, name) : UINT32_MAX;
  if (id == UINT32_MAX) goto out;
  uint64_t key = CPD_KEY_ZONE | id;

  struct cp_frame *f = t->top;
  if (f->sp < here) f = calltree_unwind(t, here, cp_tnow(t));      /* dead frames */
  struct cp_frame *g = f;
  while (g > t->frames && cp_frame_is_zone(t, g)) g--;
  uintptr_t sp = g > t->frames ? g->sp : here;    /* anchored, or zones only */
  if (CP_UNLIKELY(f + 1 >= t->commit_end) && !(f = calltree_grow(t))) goto out;
  uint32_t c = t->nodes[f->node].hot;
  if (t->nodes[c].key != key || t->nodes[c].parent != f->node) {
    c = calltree_lookup(t, f->node, key);
    if (c == CPD_NO_PARENT) goto out;
  }
  calltree_push(t, f, c, sp, cp_now_enter() - t->debt);  /* as the entry hooks read */
  token = (uint64_t)(f + 1 - t->frames) << 32 | (uint64_t)id;
out:
  os_restore_errors(e);
  return token;
}

int capprof_zone_end(const char *name)
{
  uint64_t now = cp_now_exit();          /* the clock the exit hooks read */
  uintptr_t here = CP_FRAME_ADDRESS();
  struct cp_thread *t = zone_thread();
  if (zone_blocked(t, 0)) return cp_g.disabled ? CAPPROF_EDISABLED : 0;
  now -= t->debt;                        /* the thread clock, cp_tnow */
  os_errsave e = os_save_errors();
  int rc = 0;
  struct cp_zones *z = thread_zones(t);
  if (!z) goto out;
  struct cp_frame *f = t->top;
  if (f->sp < here) f = calltree_unwind(t, here, now);           /* dead frames */
  int named = name && *name;
  uint32_t id = named ? zone_id(t, z, name) : UINT32_MAX;
  /* The candidates: the zones above the innermost live function frame. */
  struct cp_frame *g = f;
  while (g > t->frames && cp_frame_is_zone(t, g) && named && zone_of(t, g) != id) g--;
  if (g > t->frames && cp_frame_is_zone(t, g)) {
    if (g != f) zone_note(t, zone_of(t, g), CPD_ZI_END_OUT_OF_ORDER);
    close_to(t, g, now);
  } else {
    if (!named) id = zone_id(t, z, "");
    if (id != UINT32_MAX) zone_note(t, id, CPD_ZI_END_WITHOUT_BEGIN);
    rc = CAPPROF_EINVAL;
  }
out:
  os_restore_errors(e);
  return rc;
}

void capprof_zone_end_token(uint64_t token)
{
  uint64_t now = cp_now_exit();
  if (!token) return;
  struct cp_thread *t = os_get_thread();
  if (!t || zone_blocked(t, 1)) return;
  now -= t->debt;                        /* the thread clock, cp_tnow */
  uint64_t depth = token >> 32;
  uint64_t key = CPD_KEY_ZONE | (token & 0xFFFFFFFFu);
  struct cp_frame *g = t->frames + depth;
  /* Not there any more: something popped it already, and counted it. A zone
  ** begun past the node cap sits on the overflow or sink node. */
  if (depth == 0 || g > t->top) return;
  if (t->nodes[g->node].key != key && !calltree_node_capped(t, g->node))
    return;
  os_errsave e = os_save_errors();
  close_to(t, g, now);
  os_restore_errors(e);
}

/* ---- ended threads and the dump -------------------------------------------- */

static void popped(struct cp_thread *t, uint32_t id)
{
  zone_note(t, id, CPD_ZI_LEFT_OPEN);
}

/* A thread retires: the zones still open on its stack are counted so. */
static void thread_ending(struct cp_thread *t)
{
  for (struct cp_frame *f = t->frames + 1; f <= t->top; f++) {
    uint64_t key = f->node < t->nnodes ? t->nodes[f->node].key : 0;
    if (CPD_KEY_IS_ZONE(key)) zone_note(t, (uint32_t)(key & 0xFFFFFFFFu), CPD_ZI_OPEN_AT_EXIT);
  }
}

struct zone_copy { struct cp_zone_count *to; uint32_t n; };

static void count_zone(void *ctx, uint32_t id, const uint64_t *counts)
{
  (void)id; (void)counts;
  ((struct zone_copy *)ctx)->n++;
}

static void copy_zone(void *ctx, uint32_t id, const uint64_t *counts)
{
  struct zone_copy *c = ctx;
  struct cp_zone_count *z = &c->to[c->n++];
  z->id = id;
  z->pad_ = 0;
  memcpy(z->n, counts, sizeof z->n);
}

/* A packed thread keeps its mismatch counts in its record (e->zones). */
static size_t pack_size(const struct cp_thread *t)
{
  struct zone_copy zc = { NULL, 0 };
  zone_issues(t, count_zone, &zc);
  return (size_t)zc.n * sizeof(struct cp_zone_count);
}

static void pack(const struct cp_thread *t, struct cp_ended *e, void *mem)
{
  struct zone_copy zc = { mem, 0 };
  zone_issues(t, copy_zone, &zc);
  e->zones = zc.n ? mem : NULL;
  e->nzones = zc.n;
}

static void merge_zone(void *ctx, uint32_t id, const uint64_t *counts)
{
  zone_add(ctx, id, counts);
}

/* A merged thread's counts are added to its group's. */
static void merged(const struct cp_thread *t, struct cp_thread *group)
{
  zone_issues(t, merge_zone, group);
}

struct issue_ctx { struct dump_writer *w; uint32_t thread, nnames, records; };

static void write_issue(void *ctx, uint32_t id, const uint64_t *counts)
{
  struct issue_ctx *c = ctx;
  if (id >= c->nnames) return;
  dumpw_u32(c->w, c->thread);
  dumpw_u32(c->w, id);
  for (int k = 0; k < CPD_ZI_KINDS; k++) dumpw_u64(c->w, counts[k]);
  c->records++;
}

/* ZONE_ISSUES: each thread's mismatch counts, and the zones still open now:
** at exit for a thread that ended (or at the final dump), else at dump. */
static void write_zone_issues(struct dump_writer *w, const struct dump_rows *rows,
                              uint32_t nnames)
{
  uint64_t s = dumpw_begin(w);
  struct issue_ctx c = { w, 0, nnames, 0 };
  dumpw_u32(w, 0);                               /* count, patched below */
  dumpw_u32(w, CPD_ZI_KINDS);
  uint32_t gen = cp_g.gate >> 1;
  for (uint32_t i = 0; i < rows->n; i++) {
    const struct dump_row *r = &rows->row[i];
    if (!r->count) continue;
    struct cp_thread *t = r->t;
    if (r->e && r->e->group) {
      zone_issues(r->e->group, write_issue, &c);
    } else if (r->e) {
      for (uint32_t z = 0; z < r->e->nzones; z++)
        write_issue(&c, r->e->zones[z].id, r->e->zones[z].n);
    } else if (t->generation == gen) {
      zone_issues(t, write_issue, &c);
      unsigned kind = t->end_ns || cp_g.finished ? CPD_ZI_OPEN_AT_EXIT : CPD_ZI_OPEN_AT_DUMP;
      struct cp_frame *top = t->top;
      if (top < t->frames || top >= t->commit_end) top = t->frames;
      for (struct cp_frame *f = t->frames + 1; f <= top; f++) {
        uint32_t node = f->node;
        if (node >= r->count) continue;
        uint64_t key = t->nodes[node].key;
        if (!CPD_KEY_IS_ZONE(key)) continue;
        uint64_t counts[CPD_ZI_KINDS] = { 0 };
        counts[kind] = 1;
        write_issue(&c, (uint32_t)(key & 0xFFFFFFFFu), counts);
      }
    }
    c.thread++;
  }
  dumpw_end(w, CPD_SEC_ZONE_ISSUES, s);
  dumpw_patch_u32(w, s, c.records);
}

/* STRINGS (the zone names), then ZONE_ISSUES. The names are counted after
** the nodes were written, so every zone key written has its name (a name
** is published before a node can carry it). */
static void dump_sections(struct dump_writer *w, const struct dump_rows *rows)
{
  uint64_t s = dumpw_begin(w);
  uint32_t nnames = zone_name_count();
  dumpw_u32(w, nnames);
  for (uint32_t k = 0; k < nnames; k++) {
    uint32_t len;
    const char *name = zone_name(k, &len);
    dumpw_strn(w, name, len);
  }
  dumpw_end(w, CPD_SEC_STRINGS, s);
  write_zone_issues(w, rows, nnames);
}

/* Zones' part in the core's life cycle (src/features.c). */
const struct cp_feature zone_feature = {
  .name = "zone",
  .zone_popped = popped,
  .thread_ending = thread_ending,
  .pack_size = pack_size,
  .pack = pack,
  .merged = merged,
  .thread_reset = zone_thread_reset,
  .thread_free = zone_thread_free,
  .dump = dump_sections,
};
