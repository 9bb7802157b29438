/*
** symbols.c -- the symbolizer's common part: synthetic node names, zone
** names, symbol keys of merged dumps, and the module+0xoffset form for
** addresses the back end (sym_elf.c, ...) does not resolve. Each distinct key
** is resolved once and cached in an open-addressing table.
*/
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/tool.h"
#include "sym/symbols.h"

struct entry { uint64_t key; struct sym_info info; int used; };

struct symbolizer {
  const struct cpd_dump *d;
  uint32_t *by_base;        /* module indices sorted by base */
  struct sym_backend *be;   /* NULL: fallback names only */
  struct entry *tab;
  size_t mask, used;
};

static int problems;        /* modules that were missing or rebuilt */

const char *sym_base_name(const char *path)
{
  const char *s = strrchr(path, '/');
  const char *b = strrchr(path, '\\');
  if (b && (!s || b > s)) s = b;
  return s ? s + 1 : path;
}

void sym_module_problem(const struct cpd_dump *d, int m, const char *why)
{
  /* Once per file, even when several dumps of one program name it. */
  static char *warned[64];
  static unsigned nwarned;
  for (unsigned i = 0; i < nwarned; i++)
    if (!strcmp(warned[i], d->modules[m].path)) return;
  if (nwarned < 64) warned[nwarned] = strdup(d->modules[m].path);
  if (nwarned < 64 && warned[nwarned]) nwarned++;
  if (++problems <= 20)
    tool_warn("%s: %s; its functions show as %s+0xoffset", d->modules[m].path, why,
              sym_base_name(d->modules[m].path));
  else if (problems == 21)
    tool_warn("more modules are missing or rebuilt; not naming them");
}

int sym_had_problems(void) { return problems != 0; }

const char *sym_module_desc(struct symbolizer *s, int m, char *buf, size_t n)
{
  if (s->d->flags & CPD_F_MERGED)
    snprintf(buf, n, "names are stored in the merged dump");
  else if (!s->be)
    snprintf(buf, n, "not symbolized (no symbol reader)");
  else if (symb_module_info(s->be, m, buf, n) != 0 && !buf[0])
    snprintf(buf, n, "not symbolized: shown as %s+0xoffset",
             sym_base_name(s->d->modules[m].path));
  return buf;
}

static const struct cpd_dump *sort_dump;

static int by_base(const void *pa, const void *pb)
{
  const struct cpd_module *a = &sort_dump->modules[*(const uint32_t *)pa];
  const struct cpd_module *b = &sort_dump->modules[*(const uint32_t *)pb];
  if (a->base != b->base) return a->base < b->base ? -1 : 1;
  return *(const uint32_t *)pa < *(const uint32_t *)pb ? -1 : 1;
}

/* As cpd_find_module (the innermost module holding addr), by binary search:
** a hostile dump may list a million modules. Overlapping modules are looked
** through for at most 64 steps. */
static int find_module(const struct symbolizer *s, uint64_t addr)
{
  const struct cpd_dump *d = s->d;
  size_t lo = 0, hi = d->nmodules;             /* first base > addr */
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (d->modules[s->by_base[mid]].base <= addr) lo = mid + 1;
    else hi = mid;
  }
  for (size_t k = lo, steps = 0; k-- > 0 && steps < 64; steps++) {
    const struct cpd_module *m = &d->modules[s->by_base[k]];
    if (addr - m->base < m->size) return (int)s->by_base[k];
  }
  return -1;
}

int sym_module_of(const struct symbolizer *s, uint64_t addr) { return find_module(s, addr); }

struct symbolizer *sym_open(const struct cpd_dump *d)
{
  struct symbolizer *s = calloc(1, sizeof *s);
  if (!s) return NULL;
  s->d = d;
  s->by_base = malloc((d->nmodules + 1) * sizeof *s->by_base);
  if (!s->by_base) { free(s); return NULL; }
  for (uint32_t i = 0; i < d->nmodules; i++) s->by_base[i] = i;
  sort_dump = d;
  qsort(s->by_base, d->nmodules, sizeof *s->by_base, by_base);
  s->mask = 1023;
  s->tab = calloc(s->mask + 1, sizeof *s->tab);
  if (!s->tab) { free(s->by_base); free(s); return NULL; }
  if (!(d->flags & CPD_F_MERGED)) s->be = symb_open(d);
  return s;
}

void sym_close(struct symbolizer *s)
{
  if (!s) return;
  for (size_t i = 0; i <= s->mask; i++) {
    if (!s->tab[i].used) continue;
    free((char *)s->tab[i].info.name);
    free((char *)s->tab[i].info.file);
  }
  symb_close(s->be);
  free(s->by_base);
  free(s->tab);
  free(s);
}

/* strndup, which MinGW and MSVC lack. */
static char *dup_n(const char *s, size_t n)
{
  char *p = malloc(n + 1);
  if (p) {
    memcpy(p, s, n);
    p[n] = '\0';
  }
  return p;
}

/* A merged dump's symbol string: "name" or "name\nfile\nline". */
static void split_symbol(const char *str, struct sym_info *out)
{
  const char *nl = strchr(str, '\n');
  if (!nl) { out->name = strdup(str); return; }
  out->name = dup_n(str, (size_t)(nl - str));
  const char *nl2 = strchr(nl + 1, '\n');
  out->file = nl2 ? dup_n(nl + 1, (size_t)(nl2 - nl - 1)) : strdup(nl + 1);
  out->line = nl2 ? (unsigned)strtoul(nl2 + 1, NULL, 10) : 0;
}

static void resolve(struct symbolizer *s, uint64_t key, struct sym_info *out)
{
  const struct cpd_dump *d = s->d;
  char buf[512];
  memset(out, 0, sizeof *out);
  out->module = "";
  buf[0] = '\0';
  if (key == CPD_KEY_ROOT) snprintf(buf, sizeof buf, "[root]");
  else if (key == CPD_KEY_OVERFLOW) snprintf(buf, sizeof buf, "[calls past the node cap]");
  else if (key == CPD_KEY_SINK) snprintf(buf, sizeof buf, "[nested calls past the node cap]");
  else if (CPD_KEY_IS_ZONE(key) && (key & 0xFFFFFFFFu) < d->nstrings)
    snprintf(buf, sizeof buf, "%s", d->strings[key & 0xFFFFFFFFu]);
  else if (CPD_KEY_IS_API(key) && (key & 0xFFFFFFFFu) < d->napis) {
    const struct cpd_api *a = &d->apis[key & 0xFFFFFFFFu];   /* library as module */
    out->module = a->library;
    snprintf(buf, sizeof buf, "%s", a->symbol);
  } else if (CPD_KEY_IS_SYMBOL(key) && (key & 0xFFFFFFFFu) < d->nstrings) {
    uint32_t m = (uint32_t)(key >> 32) & 0xFFFFu;
    if (m && m <= d->nmodules) out->module = sym_base_name(d->modules[m - 1].path);
    split_symbol(d->strings[key & 0xFFFFFFFFu], out);
  } else if (CPD_KEY_IS_SPECIAL(key)) {
    snprintf(buf, sizeof buf, "[key %#" PRIx64 "]", key);
  } else {
    int m = find_module(s, key);
    if (m >= 0) {
      out->module = sym_base_name(d->modules[m].path);
      char *name = NULL, *file = NULL;
      unsigned line = 0;
      if (s->be && symb_lookup(s->be, m, key, &name, &file, &line) == 0) {
        out->name = name;
        out->file = file;
        out->line = line;
      } else {
        snprintf(buf, sizeof buf, "%s+0x%" PRIx64, out->module, key - d->modules[m].base);
      }
    } else {
      snprintf(buf, sizeof buf, "0x%" PRIx64, key);
    }
  }
  if (!out->name) out->name = strdup(buf);
  if (!out->name) out->name = strdup("?");
}

static void grow(struct symbolizer *s)
{
  size_t old = s->mask + 1;
  struct entry *tab = calloc(old * 2, sizeof *tab);
  if (!tab) return;
  for (size_t i = 0; i < old; i++) {
    if (!s->tab[i].used) continue;
    size_t h = (size_t)(s->tab[i].key * UINT64_C(0x9E3779B97F4A7C15) >> 32) & (old * 2 - 1);
    while (tab[h].used) h = (h + 1) & (old * 2 - 1);
    tab[h] = s->tab[i];
  }
  free(s->tab);
  s->tab = tab;
  s->mask = old * 2 - 1;
}

int sym_line(struct symbolizer *s, uint64_t addr, char **file, unsigned *line)
{
  *file = NULL;
  *line = 0;
  if (!s->be || CPD_KEY_IS_SPECIAL(addr)) return -1;
  int m = find_module(s, addr);
  return m < 0 ? -1 : symb_line(s->be, m, addr, file, line);
}

void sym_lookup(struct symbolizer *s, uint64_t key, struct sym_info *out)
{
  if ((s->used + 1) * 2 > s->mask + 1) grow(s);
  size_t h = (size_t)(key * UINT64_C(0x9E3779B97F4A7C15) >> 32) & s->mask;
  while (s->tab[h].used && s->tab[h].key != key) h = (h + 1) & s->mask;
  if (!s->tab[h].used) {
    s->tab[h].used = 1;
    s->tab[h].key = key;
    resolve(s, key, &s->tab[h].info);
    s->used++;
  }
  *out = s->tab[h].info;
}
