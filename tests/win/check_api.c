/*
** check_api.c -- native (Linux) reader of a dump written under wine by
** `capprof.exe run`: prints one line per thread with the exact call counts
** of the intercepted functions named on the command line, by call path
** ("library!symbol/library!symbol=calls", sorted), for run-wine.sh to
** compare with what the program says it did. Calls still running at the
** dump (ExitThread, ExitProcess) count as the dump counts them.
**   check_api DUMP SYMBOL[,SYMBOL...]
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/cpd_reader.h"

static int wanted(const char *list, const char *sym)
{
  size_t n = strlen(sym);
  for (const char *p = list; (p = strstr(p, sym)) != NULL; p += n)
    if ((p == list || p[-1] == ',') && (p[n] == ',' || p[n] == '\0')) return 1;
  return 0;
}

/* The path of API node i, from the root: "lib!sym/lib!sym"; "" if some
** node on it is not an intercepted function of the list. */
static void path_of(const struct cpd_dump *d, const struct cpd_thread *t, uint32_t i,
                    const char *list, char *buf, size_t n)
{
  const struct cpd_node *nd = &t->nodes[i];
  buf[0] = '\0';
  if (!CPD_KEY_IS_API(nd->key) || (nd->key & 0xFFFFFFFFu) >= d->napis) return;
  const struct cpd_api *a = &d->apis[nd->key & 0xFFFFFFFFu];
  if (!wanted(list, a->symbol)) return;
  char up[1024] = "";
  if (nd->parent != CPD_NO_PARENT && nd->parent != 0) {
    path_of(d, t, nd->parent, list, up, sizeof up);
    if (!up[0]) return;
  }
  snprintf(buf, n, "%s%s%s!%s", up, up[0] ? "/" : "", a->library, a->symbol);
}

static int cmp(const void *a, const void *b)
{
  return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv)
{
  if (argc != 3) {
    fprintf(stderr, "usage: check_api DUMP SYMBOL[,SYMBOL...]\n");
    return 2;
  }
  struct cpd_dump *d;
  char err[256];
  if (cpd_load(argv[1], &d, err, sizeof err) != 0) {
    fprintf(stderr, "check_api: %s: %s\n", argv[1], err);
    return 1;
  }
  if (!d->napis) {
    fprintf(stderr, "check_api: %s: no intercepted functions in the dump\n", argv[1]);
    return 1;
  }
  for (uint32_t ti = 0; ti < d->nthreads; ti++) {
    const struct cpd_thread *t = &d->threads[ti];
    char **lines = calloc(t->node_count + 1, sizeof *lines);
    size_t n = 0;
    for (uint32_t i = 1; i < t->node_count; i++) {
      char path[1024];
      path_of(d, t, i, argv[2], path, sizeof path);
      if (!path[0]) continue;
      lines[n] = malloc(strlen(path) + 24);
      sprintf(lines[n++], "%s=%llu", path, (unsigned long long)t->nodes[i].calls);
    }
    qsort(lines, n, sizeof *lines, cmp);
    printf("thread:");
    for (size_t i = 0; i < n; i++) {
      printf(" %s", lines[i]);
      free(lines[i]);
    }
    printf("\n");
    free(lines);
  }
  cpd_free(d);
  return 0;
}
