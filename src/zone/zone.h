/*
** zone.h -- manual zones (zone.c): named regions timed as nodes of the
** calling thread's tree.
*/
#ifndef CAPPROF_ZONE_H
#define CAPPROF_ZONE_H

#include "../core/core.h"

/* ---- zones (zone.c) ---------------------------------------------------- */

/* A frame is a zone's when its node's key is a zone key. */
CP_INLINE int cp_frame_is_zone(const struct cp_thread *t, const struct cp_frame *f)
{
  return CPD_KEY_IS_ZONE(t->nodes[f->node].key);
}
/* Count one mismatch of kind CPD_ZI_* for zone id in t. Owner thread only. */
void zone_note(struct cp_thread *t, uint32_t id, unsigned kind) CP_HIDDEN;
/* A zone frame is being popped without its END (slow paths of calltree.c). */
CP_INLINE void zone_popped_open(struct cp_thread *t, const struct cp_frame *f)
{
  uint64_t key = t->nodes[f->node].key;
  if (CP_UNLIKELY(CPD_KEY_IS_ZONE(key)))
    zone_note(t, (uint32_t)(key & 0xFFFFFFFFu), CPD_ZI_LEFT_OPEN);
}
/* Pop the zones on top of t's stack, charged up to now and counted as left
** open: a function that began them is returning (hooks without a key). */
void zone_pop_open(struct cp_thread *t, uint64_t now) CP_HIDDEN;
/* Add counts[CPD_ZI_KINDS] to t's mismatch counts for zone id (merging an
** ended thread into a group; the zone state is made if needed). */
void zone_add(struct cp_thread *t, uint32_t id, const uint64_t *counts) CP_HIDDEN;
/* Forget t's mismatch counts (reset, fork); free its zone state. */
void zone_thread_reset(struct cp_thread *t) CP_HIDDEN;
void zone_thread_free(struct cp_thread *t) CP_HIDDEN;
/* Zone names for the dump: how many are published, and name i. Lock-free;
** a name's id is published before any node can carry it. */
uint32_t zone_name_count(void) CP_HIDDEN;
const char *zone_name(uint32_t id, uint32_t *len) CP_HIDDEN;
/* Visit t's mismatch counts: fn(ctx, id, counts[CPD_ZI_KINDS]). */
typedef void (*zone_issue_fn)(void *ctx, uint32_t id, const uint64_t *counts);
void zone_issues(const struct cp_thread *t, zone_issue_fn fn, void *ctx) CP_HIDDEN;

#endif /* CAPPROF_ZONE_H */
