/*
** dump.h -- writing the dump file (dump_write.c): the writer's primitives
** and the threads a dump writes, for the features that write their own
** sections (struct cp_feature's dump, in the order of cp_dump_order).
*/
#ifndef CAPPROF_DUMP_H
#define CAPPROF_DUMP_H

#include "../core/core.h"

/* ---- dump writer (dump_write.c) ---------------------------------------- */

/* Write a dump (under os_lock). Returns 0 or a CAPPROF_E* code; out gets
** the file's name. On failure dump_failure() says which step failed on
** which file ("creating PATH.tmpXXXX", "writing ...", "naming it PATH"),
** valid until the next dump. The core calls it through dump_feature. */
int dump_write(const char *path, int explicit_path, char *out, size_t outsize) CP_HIDDEN;
const char *dump_failure(void) CP_HIDDEN;
/* Expand the output pattern into buf; returns 0 or CAPPROF_EINVAL. */
int dump_expand_pattern(const char *pattern, char *buf, size_t n) CP_HIDDEN;

/* One THREADS record: a live thread's state (t) or an ended thread's record
** (e: packed, or a merge group), and the nodes written of it (count, 0 when
** it was left out: it ended before a reset). */
struct dump_row {
  struct cp_thread *t;         /* live (or ended but not yet retired) */
  struct cp_ended *e;          /* retired: packed or group */
  uint64_t first, lost;        /* its first node in NODES; calls past the cap */
  uint32_t count, open;        /* nodes written; calls open at its end or now */
};
/* The threads a dump writes, in THREADS' order: row[i], and the same as
** who[i] (row[i].e or row[i].t) and counts[i] (row[i].count). */
struct dump_rows {
  const struct dump_row *row;
  uint32_t n;
  const void *const *who;
  const uint32_t *counts;
};

/* A feature's sections: bytes appended to the file; a section is what lies
** between dumpw_begin and dumpw_end (its CPD_SEC_* type). dumpw_patch_u32
** writes v at offset off of the file, within what was written (a count
** known only once the section's records are). */
struct dump_writer;
void dumpw_bytes(struct dump_writer *w, const void *p, size_t n) CP_HIDDEN;
void dumpw_u32(struct dump_writer *w, uint32_t v) CP_HIDDEN;
void dumpw_u64(struct dump_writer *w, uint64_t v) CP_HIDDEN;
void dumpw_str(struct dump_writer *w, const char *s) CP_HIDDEN;
void dumpw_strn(struct dump_writer *w, const char *s, size_t len) CP_HIDDEN;
uint64_t dumpw_begin(struct dump_writer *w) CP_HIDDEN;
void dumpw_end(struct dump_writer *w, uint32_t type, uint64_t start) CP_HIDDEN;
void dumpw_patch_u32(struct dump_writer *w, uint64_t off, uint32_t v) CP_HIDDEN;

#endif /* CAPPROF_DUMP_H */
