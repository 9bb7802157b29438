/*
** symbols.c -- the symbolizer's common part: synthetic node names, zone
** names, and the module+0xoffset form for addresses no back end resolves.
** Each distinct key is resolved once and cached.
*/
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbols.h"

struct entry { uint64_t key; struct sym_info info; int used; };

struct symbolizer {
  const struct cpd_dump *d;
  struct entry *tab;
  size_t mask, used;
};

static const char *base_name(const char *path)
{
  const char *s = strrchr(path, '/');
  const char *b = strrchr(path, '\\');
  if (b && (!s || b > s)) s = b;
  return s ? s + 1 : path;
}

struct symbolizer *sym_open(const struct cpd_dump *d)
{
  struct symbolizer *s = calloc(1, sizeof *s);
  if (!s) return NULL;
  s->d = d;
  s->mask = 1023;
  s->tab = calloc(s->mask + 1, sizeof *s->tab);
  if (!s->tab) { free(s); return NULL; }
  return s;
}

void sym_close(struct symbolizer *s)
{
  if (!s) return;
  for (size_t i = 0; i <= s->mask; i++)
    if (s->tab[i].used) free((char *)s->tab[i].info.name);
  free(s->tab);
  free(s);
}

static void resolve(struct symbolizer *s, uint64_t key, struct sym_info *out)
{
  char buf[512];
  memset(out, 0, sizeof *out);
  out->module = "";
  if (key == CPD_KEY_ROOT) snprintf(buf, sizeof buf, "[root]");
  else if (key == CPD_KEY_OVERFLOW) snprintf(buf, sizeof buf, "[calls past the node cap]");
  else if (key == CPD_KEY_SINK) snprintf(buf, sizeof buf, "[nested calls past the node cap]");
  else if (CPD_KEY_IS_ZONE(key) && (key & 0xFFFFFFFFu) < s->d->nstrings)
    snprintf(buf, sizeof buf, "%s", s->d->strings[key & 0xFFFFFFFFu]);
  else {
    int m = cpd_find_module(s->d, key);
    if (m >= 0) {
      out->module = base_name(s->d->modules[m].path);
      snprintf(buf, sizeof buf, "%s+0x%" PRIx64, out->module, key - s->d->modules[m].base);
    } else {
      snprintf(buf, sizeof buf, "0x%" PRIx64, key);
    }
  }
  out->name = strdup(buf);
  if (!out->name) out->name = "?";
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
