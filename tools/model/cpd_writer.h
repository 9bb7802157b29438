/*
** cpd_writer.h -- the tool's dump writer: serializes a struct cpd_dump held
** in memory into the dump format of dumpfmt.h. Used by 'capprof merge' and by
** the tests to build dumps (seed corpus, large synthetic trees).
*/
#ifndef CAPPROF_DUMPWRITE_H
#define CAPPROF_DUMPWRITE_H

#include <stddef.h>

#include "model/cpd_reader.h"

/* Serialize d into a malloc'd buffer (*out, *len; owned by the caller).
** d->flags is written as is (CPD_F_COMPLETE is added). Returns 0 or
** CAPPROF_ENOMEM. Thread-safe. */
int cpd_serialize(const struct cpd_dump *d, unsigned char **out, size_t *len);

/* Serialize d into a new file at path (replacing it). Returns 0, or a
** negative CAPPROF_E* code with a one-line explanation in err. */
int cpd_write(const struct cpd_dump *d, const char *path, char *err, size_t errlen);

#endif /* CAPPROF_DUMPWRITE_H */
