/*
** sym_elf.c -- the ELF/DWARF back end of the symbolizer, on elfutils'
** libdwfl. Each module of the dump gets its own Dwfl session, opened on first
** use: the recorded path if its build-id matches the dump's, else a file of
** the same name beside the dump (moved together), else the separate debug
** file found by build-id under /usr/lib/debug/.build-id/.
** libdwfl's standard find-debuginfo then locates DWARF for stripped files.
*/
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sym/symbols.h"

struct elf_module {
  int state;               /* 0 not opened yet, 1 usable, -1 unusable */
  Dwfl *dwfl;
  Dwfl_Module *mod;
  uint64_t delta;          /* added to a run-time address gives a Dwfl address */
  char *file;              /* the file the symbols come from (malloc'd) */
  struct cu_range *cus;    /* address ranges of the compile units, sorted */
  size_t ncus;             /* (built on first need; see cu_line) */
  int cus_built;
};

/* One address range of one compile unit, in Dwfl addresses. */
struct cu_range {
  Dwarf_Addr lo, hi, bias;
  Dwarf_Die cu;
};

struct sym_backend {
  const struct cpd_dump *d;
  struct elf_module *mods; /* one per module of the dump */
  unsigned opened;         /* modules tried so far */
};

/* Real processes map a few hundred objects; a hostile dump could name a
** million files. Past this many, modules are not opened. */
#define MAX_OPEN 1024

static char *debuginfo_path;   /* NULL: libdwfl's default search path */

static const Dwfl_Callbacks callbacks = {
  .find_elf = dwfl_build_id_find_elf,
  .find_debuginfo = dwfl_standard_find_debuginfo,
  .section_address = dwfl_offline_section_address,
  .debuginfo_path = &debuginfo_path,
};

struct sym_backend *symb_open(const struct cpd_dump *d)
{
  struct sym_backend *b = calloc(1, sizeof *b);
  if (!b) return NULL;
  b->d = d;
  b->mods = calloc(d->nmodules ? d->nmodules : 1, sizeof *b->mods);
  if (!b->mods) { free(b); return NULL; }
  return b;
}

void symb_close(struct sym_backend *b)
{
  if (!b) return;
  for (uint32_t i = 0; i < b->d->nmodules; i++)
  {
    if (b->mods[i].dwfl) dwfl_end(b->mods[i].dwfl);
    free(b->mods[i].file);
    free(b->mods[i].cus);
  }
  free(b->mods);
  free(b);
}

/* Report file as module m into a fresh session. Returns 0 and fills em, or
** 1 if the file opened but its build-id differs, or -1 if it did not open. */
static int try_file(const struct cpd_module *m, const char *file, struct elf_module *em)
{
  struct stat st;
  /* Regular files only: a hostile dump may name a FIFO or a device. */
  if (stat(file, &st) != 0) return -1;
  if (!S_ISREG(st.st_mode) || access(file, R_OK) != 0) { errno = EACCES; return -1; }
  Dwfl *dwfl = dwfl_begin(&callbacks);
  if (!dwfl) return -1;
  dwfl_report_begin(dwfl);
  Dwfl_Module *mod = dwfl_report_elf(dwfl, sym_base_name(m->path), file, -1, m->base, false);
  dwfl_report_end(dwfl, NULL, NULL);
  if (!mod) { dwfl_end(dwfl); return -1; }
  if (m->id_kind == CPD_MODID_GNU_BUILD_ID && m->id_len) {
    const unsigned char *bits;
    GElf_Addr vaddr;
    int len = dwfl_module_build_id(mod, &bits, &vaddr);
    if (len != (int)m->id_len || memcmp(bits, m->id, m->id_len) != 0) {
      dwfl_end(dwfl);
      return 1;
    }
  }
  Dwarf_Addr bias = 0;
  if (!dwfl_module_getelf(mod, &bias)) { dwfl_end(dwfl); return -1; }
  em->dwfl = dwfl;
  em->mod = mod;
  em->delta = bias - m->base;
  em->file = strdup(file);
  return 0;
}

static void open_module(struct sym_backend *b, int i)
{
  const struct cpd_module *m = &b->d->modules[i];
  struct elf_module *em = &b->mods[i];
  em->state = -1;
  if (!strchr(m->path, '/')) return;    /* linux-vdso.so.1: in no file */
  if (++b->opened > MAX_OPEN) {
    if (b->opened == MAX_OPEN + 1)
      sym_module_problem(b->d, i, "the dump lists over 1024 modules; no more are opened");
    return;
  }
  int rc = m->path[0] ? try_file(m, m->path, em) : -1;
  if (rc == 0) { em->state = 1; return; }
  int file_errno = errno;
  /* Moved with its dump: the same file name beside the dump, if its
  ** build-id matches. */
  const char *slash = strrchr(b->d->path, '/');
  if (rc == -1 && m->id_kind == CPD_MODID_GNU_BUILD_ID && m->id_len) {
    char near[4096];
    snprintf(near, sizeof near, "%.*s%s", slash ? (int)(slash - b->d->path + 1) : 0,
             b->d->path, sym_base_name(m->path));
    if (strcmp(near, m->path) && try_file(m, near, em) == 0) { em->state = 1; return; }
  }
  /* The separate debug file named by build-id has the symbols and DWARF. */
  if (m->id_kind == CPD_MODID_GNU_BUILD_ID && m->id_len >= 2) {
    char dbg[4096];
    int n = snprintf(dbg, sizeof dbg, "/usr/lib/debug/.build-id/%02x/", m->id[0]);
    for (uint32_t k = 1; k < m->id_len && n < (int)sizeof dbg - 8; k++)
      n += snprintf(dbg + n, sizeof dbg - (size_t)n, "%02x", m->id[k]);
    snprintf(dbg + n, sizeof dbg - (size_t)n, ".debug");
    if (try_file(m, dbg, em) == 0) { em->state = 1; return; }
  }
  if (rc == 1)
    sym_module_problem(b->d, i, "build-id differs from the dump's (the binary was rebuilt)");
  else
    sym_module_problem(b->d, i, file_errno == ENOENT ? "file not found (moved or deleted)"
                                                     : "cannot read the file");
}

static int by_lo(const void *a, const void *b)
{
  const struct cu_range *x = a, *y = b;
  return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* The ranges of every compile unit of the module, from their DW_AT_ranges or
** low/high pc: libdw finds a unit by .debug_aranges, which Clang does not
** emit unless asked (-gdwarf-aranges). */
static void build_cus(struct elf_module *em)
{
  em->cus_built = 1;
  size_t cap = 0;
  Dwarf_Addr bias;
  for (Dwarf_Die *cu = NULL; (cu = dwfl_module_nextcu(em->mod, cu, &bias)) != NULL;) {
    Dwarf_Addr base, start, end;
    ptrdiff_t off = 0;
    while ((off = dwarf_ranges(cu, off, &base, &start, &end)) > 0) {
      if (em->ncus == cap) {
        size_t ncap = cap ? cap * 2 : 64;
        struct cu_range *n = realloc(em->cus, ncap * sizeof *n);
        if (!n) return;
        em->cus = n;
        cap = ncap;
      }
      em->cus[em->ncus++] = (struct cu_range){ start + bias, end + bias, bias, *cu };
    }
  }
  if (em->ncus) qsort(em->cus, em->ncus, sizeof *em->cus, by_lo);   /* cus may be NULL */
}

/* The source line of Dwfl address q through the unit ranges; NULL if none. */
static const char *cu_line(struct elf_module *em, Dwarf_Addr q, int *ln)
{
  if (!em->cus_built) build_cus(em);
  size_t lo = 0, hi = em->ncus;
  while (lo < hi) {                      /* last range starting at or below q */
    size_t mid = lo + (hi - lo) / 2;
    if (em->cus[mid].lo <= q) lo = mid + 1;
    else hi = mid;
  }
  if (lo == 0 || q >= em->cus[lo - 1].hi) return NULL;
  struct cu_range *r = &em->cus[lo - 1];
  Dwarf_Line *l = dwarf_getsrc_die(&r->cu, q - r->bias);
  if (!l || dwarf_lineno(l, ln) != 0) return NULL;
  return dwarf_linesrc(l, NULL, NULL);
}

int symb_lookup(struct sym_backend *b, int m, uint64_t addr, char **name, char **file,
                unsigned *line)
{
  struct elf_module *em = &b->mods[m];
  if (em->state == 0) open_module(b, m);
  if (em->state != 1) return -1;
  Dwarf_Addr q = addr + em->delta;
  GElf_Off off = 0;
  GElf_Sym es;
  const char *nm = dwfl_module_addrinfo(em->mod, q, &off, &es, NULL, NULL, NULL);
  if (!nm || !nm[0]) return -1;
  char *dem = sym_demangle(nm);
  *name = dem ? dem : strdup(nm);
  if (!*name) return -1;
  *file = NULL;
  *line = 0;
  /* The line of the function's first address: where it is defined. */
  Dwfl_Line *l = dwfl_module_getsrc(em->mod, q - off);
  int ln = 0;
  const char *src = l ? dwfl_lineinfo(l, NULL, &ln, NULL, NULL, NULL) : cu_line(em, q - off, &ln);
  if (src) {
    *file = strdup(src);
    *line = ln > 0 ? (unsigned)ln : 0;
  }
  return 0;
}

int symb_line(struct sym_backend *b, int m, uint64_t addr, char **file, unsigned *line)
{
  struct elf_module *em = &b->mods[m];
  if (em->state == 0) open_module(b, m);
  if (em->state != 1) return -1;
  Dwarf_Addr q = addr + em->delta;
  Dwfl_Line *l = dwfl_module_getsrc(em->mod, q);
  int ln = 0;
  const char *src = l ? dwfl_lineinfo(l, NULL, &ln, NULL, NULL, NULL) : cu_line(em, q, &ln);
  if (!src || ln <= 0) return -1;
  *file = strdup(src);
  *line = (unsigned)ln;
  return *file ? 0 : -1;
}

int symb_module_info(struct sym_backend *b, int m, char *buf, size_t n)
{
  struct elf_module *em = &b->mods[m];
  if (em->state == 0) open_module(b, m);
  if (em->state != 1) {
    buf[0] = '\0';
    return -1;
  }
  Dwarf_Addr bias;
  const char *dbg = NULL;
  int has_dwarf = dwfl_module_getdwarf(em->mod, &bias) != NULL;
  if (has_dwarf)
    dwfl_module_info(em->mod, NULL, NULL, NULL, NULL, NULL, NULL, &dbg);
  int syms = dwfl_module_getsymtab(em->mod);
  snprintf(buf, n, "%d symbols from %s%s%s", syms > 0 ? syms : 0, em->file,
           has_dwarf ? ", lines from " : ", no line info",
           has_dwarf ? (dbg && dbg[0] ? dbg : em->file) : "");
  return 0;
}
