/*
** patch.c -- unhooking, the portable part: the records of the functions
** whose hooks were patched out (patch_x86_64.c does the patching; nothing
** is patched where patch_none.c stands in), the calls their counting stubs
** counted in no thread's tree, each thread's learning
** state, and the feature's registration with the core. Whether to unhook
** (CAPPROF_UNHOOK) is throttling's decision (throttle.c).
*/
#include <string.h>

#include "../core/core.h"
#include "patch.h"
#include "../dump/dump.h"

/* The functions unhooked, appended under patch_x86_64.c's patch lock, read
** by the dump. */
#define MAX_UNHOOKED 4096u
static struct { uint64_t key, ticks; uint32_t counted, synced; } unhooked[MAX_UNHOOKED];
static volatile uint32_t unhooked_count;
/* Less the calls the stubs counted in no tree at the last capprof_reset
** (os_lock; modulo 2^64). */
static uint64_t ended_calls[CP_UNHOOK_COUNTED];

uint32_t unhook_record_count(void) { return unhooked_count; }

void unhook_log(uint64_t key, uint64_t ticks, int counted, int synced)
{
  uint32_t n = unhooked_count;
  if (n == MAX_UNHOOKED) return;
  unhooked[n].key = key;
  unhooked[n].ticks = ticks;
  unhooked[n].counted = counted && n < CP_UNHOOK_COUNTED;
  unhooked[n].synced = synced != 0;
  __atomic_store_n(&unhooked_count, n + 1, __ATOMIC_RELEASE);
}

uint64_t unhook_calls(uint32_t k)
{
  if (k >= __atomic_load_n(&unhooked_count, __ATOMIC_ACQUIRE) || !unhooked[k].counted)
    return CPD_UNHOOKED_UNCOUNTED;
  return ended_calls[k] + patch_live_calls(k);
}

uint64_t unhook_key(uint32_t k)
{
  if (k >= __atomic_load_n(&unhooked_count, __ATOMIC_ACQUIRE)) return 0;
  return unhooked[k].key;
}

void unhook_mark_unsynced(uint64_t key)
{
  uint32_t n = __atomic_load_n(&unhooked_count, __ATOMIC_ACQUIRE);
  for (uint32_t k = 0; k < n; k++)
    if (unhooked[k].key == key) __atomic_store_n(&unhooked[k].synced, 0, __ATOMIC_RELAXED);
}

uint32_t unhook_flags(uint32_t k)
{
  if (k >= __atomic_load_n(&unhooked_count, __ATOMIC_ACQUIRE)) return 0;
  return (unhooked[k].synced ? CPD_UNHOOKED_SYNCED : 0) |
         (unhooked[k].counted ? CPD_UNHOOKED_PER_PATH : 0);
}

/* capprof_reset: the calls counted in no tree start again from 0, modulo
** 2^64 (the counters are process-wide and go on counting). The calls
** counted in trees go with the trees; every live thread's stub slots are
** cleared, so that a thread that runs no hook before its next unhooked
** call (one inside a long call across the reset) rebuilds its tree in the
** stub's slow path and counts there, not in the tree the reset drops. */
void unhook_counts_reset(void)
{
  for (uint32_t k = 0; k < CP_UNHOOK_COUNTED; k++) ended_calls[k] = 0 - patch_live_calls(k);
  for (struct cp_thread *t = cp_g.threads; t; t = t->next) patch_slots_clear(t);
}

/* A fork child: its only thread, self, starts from 0. */
void unhook_counts_fork(struct cp_thread *self)
{
  memset(ended_calls, 0, sizeof ended_calls);
  patch_counts_fork(self);
}

void unhook_records(unhook_fn fn, void *ctx)
{
  uint32_t n = __atomic_load_n(&unhooked_count, __ATOMIC_ACQUIRE);
  for (uint32_t k = 0; k < n; k++) fn(ctx, unhooked[k].key, unhooked[k].ticks);
}

static size_t unhook_bytes(void)
{
  size_t page = os_page_size();
  return (sizeof(struct cp_unhook) + page - 1) / page * page;
}

struct cp_unhook *unhook_state(struct cp_thread *t)
{
  if (t->unhook) return t->unhook;
  struct cp_unhook *u = os_reserve(unhook_bytes());
  if (!u) return NULL;
  if (os_commit(u, unhook_bytes()) != 0) {
    os_release(u, unhook_bytes());
    return NULL;
  }
  return t->unhook = u;
}

void unhook_thread_reset(struct cp_thread *t)
{
  if (t->unhook) memset(t->unhook, 0, sizeof *t->unhook);
  patch_slots_clear(t);
}

void unhook_thread_free(struct cp_thread *t)
{
  patch_slots_clear(t);
  if (!t->unhook) return;
  os_release(t->unhook, unhook_bytes());
  t->unhook = NULL;
}

/* UNHOOKED: the functions unhooked, when any were. */
struct unhook_ctx { struct dump_writer *w; uint32_t n, k; };

static void count_unhooked(void *ctx, uint64_t key, uint64_t ticks)
{
  (void)key;
  (void)ticks;
  ((struct unhook_ctx *)ctx)->n++;
}

static void write_unhooked_rec(void *ctx, uint64_t key, uint64_t ticks)
{
  struct unhook_ctx *c = ctx;
  if (!c->n) return;                             /* appended since counted */
  c->n--;
  dumpw_u64(c->w, key);
  dumpw_u64(c->w, ticks - cp_g.start_ticks);
  dumpw_u64(c->w, unhook_calls(c->k));
  dumpw_u32(c->w, unhook_flags(c->k++));
  dumpw_u32(c->w, 0);
}

static void dump_section(struct dump_writer *w, const struct dump_rows *rows)
{
  (void)rows;
  struct unhook_ctx c = { w, 0, 0 };
  unhook_records(count_unhooked, &c);
  if (!c.n) return;
  uint64_t s = dumpw_begin(w);
  dumpw_u32(w, c.n);
  dumpw_u32(w, CPD_UNHOOKED_REC_SIZE);
  unhook_records(write_unhooked_rec, &c);
  dumpw_end(w, CPD_SEC_UNHOOKED, s);
}

/* Unhooking's part in the core's life cycle (src/features.c): the records'
** counts and each thread's learning state; no patch in progress while the
** process forks (the fork handlers are per platform). */
const struct cp_feature patch_feature = {
  .name = "patch",
  .thread_reset = unhook_thread_reset,
  .thread_free = unhook_thread_free,
  .reset = unhook_counts_reset,
  .fork_prepare = unhook_fork_prepare,
  .fork_parent = unhook_fork_parent,
  .threads_forked = unhook_counts_fork,
  .fork_child = unhook_fork_child,
  .dump = dump_section,
};
