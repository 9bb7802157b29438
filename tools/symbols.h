/*
** symbols.h -- the symbolizer interface of the tool: node key to function
** name, source position and module. Back ends plug in behind it (ELF/DWARF
** on Linux, DbgHelp on Windows); names of synthetic nodes and zones, and the
** module+0xoffset fallback, are common to all.
*/
#ifndef CAPPROF_SYMBOLS_H
#define CAPPROF_SYMBOLS_H

#include <stdint.h>

#include "dumpread.h"

struct sym_info {
  const char *name;     /* never NULL: function, zone, or module+0xoffset */
  const char *file;     /* source file or NULL */
  unsigned line;        /* 0 if unknown */
  const char *module;   /* base name of the module, or "" */
};

struct symbolizer;

/* Open a symbolizer for a dump; NULL only when out of memory. Problems with
** individual modules (missing, rebuilt) are warned about once, on stderr. */
struct symbolizer *sym_open(const struct cpd_dump *d);
void sym_close(struct symbolizer *s);
/* Resolve a node key. Strings stay valid until sym_close. */
void sym_lookup(struct symbolizer *s, uint64_t key, struct sym_info *out);

#endif /* CAPPROF_SYMBOLS_H */
