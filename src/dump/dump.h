/*
** dump.h -- writing the dump file (dump_write.c).
*/
#ifndef CAPPROF_DUMP_H
#define CAPPROF_DUMP_H

#include "../core/core.h"

/* ---- dump writer (dump_write.c) ---------------------------------------- */

/* Write a dump (under os_lock). Returns 0 or a CAPPROF_E* code; out gets
** the file's name. On failure dump_failure() says which step failed on
** which file ("creating PATH.tmpXXXX", "writing ...", "naming it PATH"),
** valid until the next dump. */
int dump_write(const char *path, int explicit_path, char *out, size_t outsize) CP_HIDDEN;
const char *dump_failure(void) CP_HIDDEN;
/* Expand the output pattern into buf; returns 0 or CAPPROF_EINVAL. */
int dump_expand_pattern(const char *pattern, char *buf, size_t n) CP_HIDDEN;

#endif /* CAPPROF_DUMP_H */
