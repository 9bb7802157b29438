/*
** sym_none.c -- the symbolizer back end for builds with no object-file
** library: every address shows as module+0xoffset.
*/
#include <stddef.h>
#include <stdio.h>

#include "sym/symbols.h"

struct sym_backend *symb_open(const struct cpd_dump *d) { (void)d; return NULL; }
void symb_close(struct sym_backend *b) { (void)b; }

int symb_lookup(struct sym_backend *b, int m, uint64_t addr, char **name, char **file,
                unsigned *line)
{
  (void)b; (void)m; (void)addr; (void)name; (void)file; (void)line;
  return -1;
}

int symb_line(struct sym_backend *b, int m, uint64_t addr, char **file, unsigned *line)
{
  (void)b; (void)m; (void)addr; (void)file; (void)line;
  return -1;
}

int symb_module_info(struct sym_backend *b, int m, char *buf, size_t n)
{
  (void)b; (void)m;
  snprintf(buf, n, "not symbolized (capprof was built without a symbol reader)");
  return -1;
}
