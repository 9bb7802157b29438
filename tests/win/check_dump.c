/*
** check_dump.c -- native (Linux) checker of a dump written under wine: maps
** each node's key into the executable with its symbol table (the output of
** `objdump -p` for ImageBase followed by `nm -n`), and compares exact call counts with an
** expectation file ("path A;B;C N" and "func F N" lines). Exit 0 if all hold.
**   check_dump DUMP NM-OUTPUT EXPECT [EXE-MODULE-NAME]
*/
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/cpd_reader.h"

struct sym { uint64_t addr; char name[128]; };
static struct sym *syms;
static size_t nsyms;
static uint64_t image_base;

static int load_nm(const char *path)
{
  FILE *f = fopen(path, "r");
  if (!f) return -1;
  char line[512];
  size_t cap = 0;
  while (fgets(line, sizeof line, f)) {
    unsigned long long a;
    char type, name[256];
    if (sscanf(line, "ImageBase %llx", &a) == 1) image_base = a;
    if (sscanf(line, "%llx %c %255s", &a, &type, name) != 3) continue;
    if (type != 'T' && type != 't') continue;
    if (nsyms == cap) {
      cap = cap ? cap * 2 : 1024;
      syms = realloc(syms, cap * sizeof *syms);
    }
    syms[nsyms].addr = a;
    snprintf(syms[nsyms].name, sizeof syms[nsyms].name, "%s", name);
    nsyms++;
  }
  fclose(f);
  return 0;
}

/* The function containing vma: the last symbol at or below it (nm -n sorts). */
static const char *lookup(uint64_t vma)
{
  const char *best = "?";
  for (size_t i = 0; i < nsyms && syms[i].addr <= vma; i++) best = syms[i].name;
  return best;
}

struct count { char key[512]; uint64_t calls; };
static struct count *counts;
static size_t ncounts, capcounts;

static void add(const char *key, uint64_t calls)
{
  for (size_t i = 0; i < ncounts; i++)
    if (!strcmp(counts[i].key, key)) { counts[i].calls += calls; return; }
  if (ncounts == capcounts) {
    capcounts = capcounts ? capcounts * 2 : 256;
    counts = realloc(counts, capcounts * sizeof *counts);
  }
  snprintf(counts[ncounts].key, sizeof counts[ncounts].key, "%s", key);
  counts[ncounts++].calls = calls;
}

static uint64_t get(const char *key)
{
  for (size_t i = 0; i < ncounts; i++)
    if (!strcmp(counts[i].key, key)) return counts[i].calls;
  return 0;
}

static void node_path(const struct cpd_dump *d, const struct cpd_thread *t, uint32_t n,
                      int exe, char *buf, size_t len)
{
  if (n == 0 || t->nodes[n].parent == CPD_NO_PARENT) { buf[0] = '\0'; return; }
  node_path(d, t, t->nodes[n].parent, exe, buf, len);
  uint64_t key = t->nodes[n].key;
  const struct cpd_module *m = &d->modules[exe];
  const char *name = "[other]";
  if (key >= m->base && key < m->base + m->size) name = lookup(key - m->base + image_base);
  size_t k = strlen(buf);
  snprintf(buf + k, len - k, "%s%s", k ? ";" : "", name);
}

int main(int argc, char **argv)
{
  if (argc < 4) {
    fprintf(stderr, "usage: check_dump DUMP NM-OUTPUT EXPECT [MODULE]\n");
    return 2;
  }
  struct cpd_dump *d;
  char err[256];
  if (cpd_load(argv[1], &d, err, sizeof err) != 0) {
    fprintf(stderr, "check_dump: %s: %s\n", argv[1], err);
    return 1;
  }
  if (load_nm(argv[2]) != 0 || !nsyms || !image_base) {
    fprintf(stderr, "check_dump: cannot read symbols from %s\n", argv[2]);
    return 1;
  }
  int exe = -1;
  for (uint32_t i = 0; i < d->nmodules; i++) {
    const char *p = d->modules[i].path;
    if (argc > 4 ? strstr(p, argv[4]) != NULL : i == 0) { exe = (int)i; break; }
  }
  if (exe < 0) {
    fprintf(stderr, "check_dump: module not found in the dump\n");
    return 1;
  }
  char path[512];
  for (uint32_t ti = 0; ti < d->nthreads; ti++) {
    const struct cpd_thread *t = &d->threads[ti];
    for (uint32_t n = 1; n < t->node_count; n++) {
      if (CPD_KEY_IS_SPECIAL(t->nodes[n].key)) continue;
      node_path(d, t, n, exe, path, sizeof path);
      char key[600];
      snprintf(key, sizeof key, "path %s", path);
      add(key, t->nodes[n].calls);
      const char *last = strrchr(path, ';');
      snprintf(key, sizeof key, "func %s", last ? last + 1 : path);
      add(key, t->nodes[n].calls);
    }
  }
  FILE *f = fopen(argv[3], "r");
  if (!f) {
    fprintf(stderr, "check_dump: cannot open %s\n", argv[3]);
    return 1;
  }
  char line[600];
  int bad = 0, checked = 0;
  while (fgets(line, sizeof line, f)) {
    char kind[16], what[512];
    unsigned long long want;
    if (line[0] == '#' || sscanf(line, "%15s %511s %llu", kind, what, &want) != 3) continue;
    char key[600];
    snprintf(key, sizeof key, "%s %s", kind, what);
    uint64_t have = get(key);
    checked++;
    if (have != want) {
      fprintf(stderr, "check_dump: %s: %" PRIu64 " calls, expected %llu\n", key, have, want);
      bad++;
    }
  }
  fclose(f);
  if (bad) {
    fprintf(stderr, "check_dump: recorded counts:\n");
    for (size_t i = 0; i < ncounts; i++)
      fprintf(stderr, "  %s %" PRIu64 "\n", counts[i].key, counts[i].calls);
  }
  printf("check_dump: %s: %d counts checked, %d wrong\n", argv[1], checked, bad);
  cpd_free(d);
  return bad ? 1 : 0;
}
