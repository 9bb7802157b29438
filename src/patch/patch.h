/*
** patch.h -- unhooking: the records of functions whose hooks were patched
** out (patch.c), the patching itself (patch_x86_64.c;
** patch_none.c elsewhere) and the counting stubs.
*/
#ifndef CAPPROF_PATCH_H
#define CAPPROF_PATCH_H

#include "../core/core.h"

/* ---- unhooking (patch.c records; patch_x86_64.c patches) ------------ */

/* Nodes of one thread whose function is about to be unhooked: its hooks
** patched out of its code (GCC's after-inlining mode on x86-64 Linux). */
#define CP_UNHOOK_SLOTS   16u   /* nodes learning at once */
#define CP_UNHOOK_SITES   8u    /* return sites kept per node */
struct cp_unhook_learn {
  uint32_t node;                /* 0: free */
  uint32_t seen;                /* sampled returns so far */
  uint32_t nsites;
  uint32_t kind;                /* CP_PROBE_FENTRY or CP_PROBE_CYG */
  uint32_t born;                /* cp_unhook.events when it began */
  uint32_t pad_;
  uintptr_t key;                /* the node's key: fentry's return address,
                                ** or the function (-finstrument-functions) */
  uintptr_t entry;              /* the entry hook call's return address */
  uintptr_t sites[CP_UNHOOK_SITES]; /* return addresses of `call __return__` */
};
#define CP_UNHOOK_WAITING 64u   /* nodes waiting for a slot */
struct cp_unhook {
  uint32_t active;              /* slots in use, and nodes waiting */
  uint32_t nwaiting;
  uint32_t events;              /* sampled returns seen while learning */
  uint32_t pad_;
  struct cp_unhook_learn e[CP_UNHOOK_SLOTS];
  uint32_t waiting[CP_UNHOOK_WAITING];      /* nodes, learning when a slot frees */
  uint32_t waiting_kind[CP_UNHOOK_WAITING];
};

/* CAPPROF_UNHOOK: off, on, or auto (the default: on while process-wide
** sampling runs). Read by throttle_init. */
int unhook_wanted(void) CP_HIDDEN;
/* After sampling started, or failed to: throttling's default decision
** point back to 100,000 calls if there is no unhooking after all (throttle.c). */
void throttle_settle(void) CP_HIDDEN;
/* Record that the function whose entry key is key was unhooked at ticks, as
** the next record (unhook_next: its index); counted: its entry calls the
** counting stub of that index (UINT32_MAX: none, CAPPROF_UNHOOK_COUNT=off);
** synced: every store into its code was followed by a core serialization
** of the process's threads (patch_x86_64.c, code_sync).
** Visit the records in order. Process-wide, lock-free appends under
** patch_x86_64.c's patch lock. */
uint32_t unhook_next(void) CP_HIDDEN;
/* How many records there are (patch.c). */
uint32_t unhook_record_count(void) CP_HIDDEN;
void unhook_log(uint64_t key, uint64_t ticks, int counted, int synced) CP_HIDDEN;
typedef void (*unhook_fn)(void *ctx, uint64_t key, uint64_t ticks);
void unhook_records(unhook_fn fn, void *ctx) CP_HIDDEN;
/* The calls the k-th record's counting stub counted in threads with no
** tree of their own (the others are in the trees' nodes), or
** CPD_UNHOOKED_UNCOUNTED when its entry has no stub. */
uint64_t unhook_calls(uint32_t k) CP_HIDDEN;
/* The k-th record's key, or 0 when there is no such record yet. */
uint64_t unhook_key(uint32_t k) CP_HIDDEN;
/* CPD_UNHOOKED_* flags of the k-th record; the record of key is marked
** not synced (exit sites patched later without a core serialization). */
uint32_t unhook_flags(uint32_t k) CP_HIDDEN;
void unhook_mark_unsynced(uint64_t key) CP_HIDDEN;
/* The counts in no tree restarted from the counters as they are
** (capprof_reset), and from 0 in a fork child, whose only thread is self,
** its stubs' slots cleared. Under os_lock. */
void unhook_counts_reset(void) CP_HIDDEN;
void unhook_counts_fork(struct cp_thread *self) CP_HIDDEN;
/* The counting stubs' counts, per platform (src/patch/patch_x86_64.c;
** patch_none.c: none, all 0): the calls of stub k counted so far in
** threads with no state; t's stub slots cleared (its tree is rebuilt or
** freed: each stub takes its slow path again); in a fork child, the
** counts in no tree dropped and self's slots cleared. */
/* Calls counted by the stubs in threads with no state of their own
** (asm/fentry_x86_64.S, a locked add; x86-64 ELF only). */
extern uint64_t unhook_nostate[CP_UNHOOK_COUNTED] CP_HIDDEN;
uint64_t patch_live_calls(uint32_t k) CP_HIDDEN;
void patch_slots_clear(struct cp_thread *t) CP_HIDDEN;
/* A counting stub's slow path (asm cp_stub_slot, x86-64 ELF). */
void patch_stub_slot(uint64_t k) CP_HIDDEN;
void patch_counts_fork(struct cp_thread *self) CP_HIDDEN;
/* The code of counting stub k written near the program's code (104 bytes at
** p; off: posix_tls's offset from the thread pointer; test_unhook.c). */
void unhook_near_code(unsigned char *p, uint32_t k, int32_t off) CP_HIDDEN;
/* Around fork (runtime.c): no patch in progress while the process forks. */
void unhook_fork_prepare(void) CP_HIDDEN;
void unhook_fork_parent(void) CP_HIDDEN;
/* t's learning state: allocated on first use, cleared, freed. */
struct cp_unhook *unhook_state(struct cp_thread *t) CP_HIDDEN;
void unhook_thread_reset(struct cp_thread *t) CP_HIDDEN;
void unhook_thread_free(struct cp_thread *t) CP_HIDDEN;
/* src/patch/patch_x86_64.c (x86-64): node i just completed its throttling
** decision call, returning through the exit hook call at site (kind:
** CP_PROBE_*); a sampled call of node returned through site (its frame
** popped); a sampled call of node entered through the entry hook call at
** site (-finstrument-functions, whose keys are not call sites). */
void unhook_consider(struct cp_thread *t, uint32_t i, uintptr_t site, uint32_t kind) CP_HIDDEN;
void unhook_seen(struct cp_thread *t, uint32_t node, uintptr_t site) CP_HIDDEN;
void unhook_entry_site(struct cp_thread *t, uint32_t node, uintptr_t site) CP_HIDDEN;
/* In a fork child (runtime_fork_child). */
void unhook_fork_child(void) CP_HIDDEN;
/* Whether pc is in a counting stub (the runtime's or one written near the
** program's code); async-signal-safe (sample.c). */
int unhook_in_stub(uintptr_t pc) CP_HIDDEN;
/* pc in a counting stub written near the program's code (an anonymous
** mapping, which no symbolizer names): the same place in the runtime's own
** stubs, cp_count_stubs; any other pc as it is. Async-signal-safe. */
uintptr_t unhook_stub_home(uintptr_t pc) CP_HIDDEN;
/* The patch unhooking would make for the hook call ending at end (exit:
** the exit hook's, else the entry hook's; fn: the function, for
** -finstrument-functions): 1 with the jump and where it goes, 0 when
** patched already, -1 when it is not such a call (tests/unit/test_unhook.c). */
int unhook_patch_for(uintptr_t end, int exit, uint32_t kind, uintptr_t fn, uintptr_t *at,
                     uint16_t *jmp) CP_HIDDEN;
/* Tests: the stores of one patch (unhook.c: a jump of len 2, or a call of
** len bytes turned into a call of to), *synced when each was followed by a
** core serialization; and how many stores have been followed by one
** (attempted) so far. */
int unhook_test_poke(uintptr_t at, size_t len, uintptr_t to, uint16_t jmp, int *synced) CP_HIDDEN;
uint32_t unhook_syncs(void) CP_HIDDEN;
/* Tests (tests/harden/host.sh): called in a patch right after a page was
** made writable, before the store (where a host's mprotect or seccomp
** filter would race with it). */
extern void (*unhook_test_opened)(uintptr_t first, size_t len) CP_HIDDEN;

#endif /* CAPPROF_PATCH_H */
