/*
** wtdump.h -- for the Windows tests that check their own call trees: write
** a dump of this process now and load it back with the reader library.
*/
#ifndef CAPPROF_WTDUMP_H
#define CAPPROF_WTDUMP_H

#include <windows.h>
#include <stdio.h>

#include "capprof/capprof.h"
#include "model/cpd_reader.h"
#include "wintest.h"

/* Dump to "<name>.<pid>.capprof" and load it; NULL (a failed check) if
** either step fails. Free with wt_dump_free. */
static struct cpd_dump *wt_dump(const char *name)
{
  char path[MAX_PATH], err[256];
  snprintf(path, sizeof path, "%s.%lu.capprof", name, GetCurrentProcessId());
  DeleteFileA(path);
  WT_CHECK_EQ_U64(capprof_dump(path, NULL, 0), 0);
  struct cpd_dump *d = NULL;
  int rc = cpd_load(path, &d, err, sizeof err);
  WT_CHECK_EQ_U64(rc, 0);
  if (rc) fprintf(stderr, "%s: %s\n", path, err);
  return rc ? NULL : d;
}

/* Free a dump from wt_dump and remove its file. */
static void wt_dump_free(struct cpd_dump *d)
{
  if (!d) return;
  DeleteFileA(d->path);
  cpd_free(d);
}

#endif
