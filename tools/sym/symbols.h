/*
** symbols.h -- the symbolizer interface of the tool: node key to function
** name, source position and module. Back ends plug in behind it (ELF/DWARF
** on Linux in sym_elf.c, DbgHelp on Windows); names of synthetic nodes and
** zones, symbol keys of merged dumps, and the module+0xoffset fallback are
** common to all and live in symbols.c.
*/
#ifndef CAPPROF_SYMBOLS_H
#define CAPPROF_SYMBOLS_H

#include <stddef.h>
#include <stdint.h>

#include "model/cpd_reader.h"

struct sym_info {
  const char *name;     /* never NULL: function, zone, or module+0xoffset */
  const char *file;     /* source file or NULL */
  unsigned line;        /* 0 if unknown */
  const char *module;   /* base name of the module, or "" */
};

struct symbolizer;

/* Open a symbolizer for a dump; NULL only when out of memory. Problems with
** individual modules (missing, rebuilt) are warned about once, on stderr.
** Not thread-safe: one symbolizer per thread. */
struct symbolizer *sym_open(const struct cpd_dump *d);
void sym_close(struct symbolizer *s);
/* Resolve a node key; each distinct key is resolved once. Strings stay valid
** until sym_close. */
void sym_lookup(struct symbolizer *s, uint64_t key, struct sym_info *out);

/* The source file and line of any code address (a sampled program counter,
** not only a function's entry): 0 with *file a malloc'd string owned by the
** caller, or -1 when the address has no line information. */
int sym_line(struct symbolizer *s, uint64_t addr, char **file, unsigned *line);

/* How module m of the dump is symbolized, in words, into buf. */
const char *sym_module_desc(struct symbolizer *s, int m, char *buf, size_t n);

/* The module of the dump holding code address addr (the innermost), or -1. */
int sym_module_of(const struct symbolizer *s, uint64_t addr);

/* Base name of a path (after the last '/' or '\'). */
const char *sym_base_name(const char *path);

/* ---- back end ---------------------------------------------------------------
** Implemented once per object format (sym_elf.c, sym_dbghelp.c, sym_none.c);
** CMake picks the file. The common part calls it only for code addresses
** that fall inside module m of the dump. */
struct sym_backend;

/* NULL if the back end cannot work at all (the fallback names are used). */
struct sym_backend *symb_open(const struct cpd_dump *d);
void symb_close(struct sym_backend *b);
/* Resolve addr (a run-time address inside module m, not necessarily a
** function's first byte). On success returns 0 and sets *name and *file to
** malloc'd strings owned by the caller (*file may be NULL, *name demangled)
** and *line (0 if unknown). Returns -1 when the address has no symbol; the
** back end warns once per module about missing or mismatched files. */
int symb_lookup(struct sym_backend *b, int m, uint64_t addr, char **name, char **file,
                unsigned *line);

/* The source line of addr inside module m, as symb_lookup's *file and
** *line; 0, or -1 without line information. */
int symb_line(struct sym_backend *b, int m, uint64_t addr, char **file, unsigned *line);

/* Describe how module m is symbolized ("symbols and lines from FILE"), for
** 'capprof info'. Returns 0 if the module is usable, -1 if not (buf then
** says why, or is empty when the back end already warned). */
int symb_module_info(struct sym_backend *b, int m, char *buf, size_t n);

/* Called by a back end, once per module it cannot use: prints one warning
** line and makes the tool's exit status 3 (output written, symbols missing). */
void sym_module_problem(const struct cpd_dump *d, int m, const char *why);
int sym_had_problems(void);

/* Demangle a C++ (Itanium ABI) name: a malloc'd string, or NULL if name is
** not mangled. demangle.cc; the only C++ in the tool. */
char *sym_demangle(const char *name);

#endif /* CAPPROF_SYMBOLS_H */
