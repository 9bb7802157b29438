/*
** mismatches.h -- what the tool says about zones: the mismatched BEGIN/END a
** dump records (ZONE_ISSUES), summed per zone name over threads and runs,
** as warnings for 'report' and a table for 'info'.
*/
#ifndef CAPPROF_ZONES_H
#define CAPPROF_ZONES_H

#include <stdio.h>

#include "model/cpd_reader.h"

/* Mismatches of one zone name over a set of dumps. */
struct zone_tally {
  const char *name;             /* borrowed from a dump's string table */
  uint64_t n[CPD_ZI_KINDS];     /* per CPD_ZI_* kind */
  uint32_t runs;                /* dumps with at least one mismatch of it */
};

/* Sum the mismatches of n dumps per zone name, sorted by name. Returns the
** number of entries in *out (malloc'd, free it), or -1 when out of memory. */
int zone_tally(struct cpd_dump *const *d, uint32_t n, struct zone_tally **out);

/* One 'capprof: warning: zone "x": ...' line on stderr per zone name with
** mismatches. Returns how many were printed. */
int zone_warn(struct cpd_dump *const *d, uint32_t n);

/* The zone section of 'capprof info' for one dump. */
void zone_print_info(FILE *f, const struct cpd_dump *d);

#endif /* CAPPROF_ZONES_H */
