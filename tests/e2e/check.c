/*
** check.c -- end-to-end checker: reads a dump with the reader library, names
** its nodes through a map file the test program wrote ("name 0xaddress" per
** line), and checks expectations, one per line of the expect file:
**   threads N          the dump has N threads
**   total a N          the nodes named a, in every thread, have N calls in all
**   merged-at-least N  at least N ended threads were merged (THREAD_MERGES)
**   thread NAME        later lines look at the thread with that name
**   path a;b;c N       the node at call path a->b->c has exactly N calls
**   none a;b           no node at that path (after the selected thread's root)
**   open a;b           that node is flagged as still running at dump time
**   chain f N          the longest chain f->f->...->f has N levels, 1 call each
**   nodes-at-least N   the thread has at least N nodes
**   consistent         every node's children's inclusive sum <= its inclusive
**   root-time-within-run  the thread's top-level calls last no longer than the run
**   module NAME        the module map has a module whose path contains NAME
**   calls f N          f has N calls in all, over every path and thread
**   throttled a;b      that node was throttled (flag and THROTTLE record)
**   unthrottled a;b    that node was not throttled
**   timed a;b N        that node's times cover N of its calls
**   throttled-at a;b N  that node was throttled when it had made N calls
**   zone-issue Z K N   the selected thread counted N mismatches of kind K
**                      (no-begin, out-of-order, left-open, open-at-exit,
**                      open-at-dump) for zone Z ("-": an END() with no name)
** Zone nodes are named "@" followed by the zone's name; intercepted library
** calls (capprof run) by their symbol. With E2E_KEY_SLACK=n
** in the environment, a key also names the function that starts at most n
** bytes before it (keys inside the function: gcc -pg -mfentry's __fentry__).
** Exits 0 when every line holds; otherwise prints each failure.
*/
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/cpd_reader.h"

struct sym { uint64_t addr; char name[64]; };
static struct sym syms[256];
static int nsyms;

static const struct cpd_dump *dump;

static const char *name_of(uint64_t key)
{
  static char zone[8][256];
  static int next;
  if (CPD_KEY_IS_ZONE(key) && dump && (key & 0xFFFFFFFFu) < dump->nstrings) {
    char *z = zone[next++ & 7];
    snprintf(z, sizeof zone[0], "@%s", dump->strings[key & 0xFFFFFFFFu]);
    return z;
  }
  if (CPD_KEY_IS_API(key) && dump && (key & 0xFFFFFFFFu) < dump->napis)
    return dump->apis[key & 0xFFFFFFFFu].symbol;       /* intercepted call */
  for (int i = 0; i < nsyms; i++)
    if (syms[i].addr == key) return syms[i].name;
  static long slack = -1;
  if (slack < 0) slack = getenv("E2E_KEY_SLACK") ? atol(getenv("E2E_KEY_SLACK")) : 0;
  int best = -1;
  for (int i = 0; i < nsyms; i++)
    if (syms[i].addr < key && key - syms[i].addr <= (uint64_t)slack &&
        (best < 0 || syms[i].addr > syms[best].addr))
      best = i;
  if (best >= 0) return syms[best].name;
  if (key == CPD_KEY_OVERFLOW) return "[overflow]";
  return "?";
}

/* Node index at path "a;b;c" below the root, or -1. */
static long find_path(const struct cpd_thread *t, char *path)
{
  long cur = 0;
  for (char *save, *part = strtok_r(path, ";", &save); part; part = strtok_r(NULL, ";", &save)) {
    long next = -1;
    for (uint32_t i = (uint32_t)cur + 1; i < t->node_count; i++)
      if (t->nodes[i].parent == (uint32_t)cur && !strcmp(name_of(t->nodes[i].key), part)) {
        next = i;
        break;
      }
    if (next < 0) return -1;
    cur = next;
  }
  return cur;
}

static int failures;

static void fail(int line, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "expect line %d: ", line);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  failures++;
}

int main(int argc, char **argv)
{
  if (argc != 4) {
    fprintf(stderr, "usage: check DUMP MAP EXPECT\n");
    return 2;
  }
  struct cpd_dump *d;
  char err[256];
  if (cpd_load(argv[1], &d, err, sizeof err)) {
    fprintf(stderr, "check: %s: %s\n", argv[1], err);
    return 1;
  }
  dump = d;
  FILE *m = fopen(argv[2], "r");
  if (!m) { perror(argv[2]); return 1; }
  char line[512];
  while (nsyms < 256 && fgets(line, sizeof line, m)) {
    void *p;
    if (sscanf(line, "%63s %p", syms[nsyms].name, &p) == 2)
      syms[nsyms++].addr = (uint64_t)(uintptr_t)p;
  }
  fclose(m);

  FILE *e = fopen(argv[3], "r");
  if (!e) { perror(argv[3]); return 1; }
  const struct cpd_thread *t = d->nthreads ? &d->threads[0] : NULL;
  int ln = 0;
  while (fgets(line, sizeof line, e)) {
    ln++;
    char op[32], arg[400];
    unsigned long long n = 0;
    int k = sscanf(line, "%31s %399s %llu", op, arg, &n);
    if (k < 1 || op[0] == '#') continue;
    if (!strcmp(op, "module")) {
      int found = 0;
      for (uint32_t i = 0; i < d->nmodules; i++)
        if (strstr(d->modules[i].path, arg)) found = 1;
      if (!found) fail(ln, "no module %s in the module map", arg);
    } else if (!strcmp(op, "threads")) {
      if (d->nthreads != strtoull(arg, NULL, 10)) fail(ln, "%u threads, expected %s", d->nthreads, arg);
    } else if (!strcmp(op, "total")) {
      uint64_t sum = 0;
      for (uint32_t th = 0; th < d->nthreads; th++)
        for (uint32_t i = 1; i < d->threads[th].node_count; i++)
          if (!strcmp(name_of(d->threads[th].nodes[i].key), arg)) sum += d->threads[th].nodes[i].calls;
      if (sum != n) fail(ln, "%s has %" PRIu64 " calls in all threads, expected %llu", arg, sum, n);
    } else if (!strcmp(op, "merged-at-least")) {
      if (d->ended_merged < strtoull(arg, NULL, 10) || !d->nmerges)
        fail(ln, "%" PRIu64 " ended threads merged into %u records", d->ended_merged, d->nmerges);
    } else if (!strcmp(op, "thread")) {
      t = NULL;
      for (uint32_t i = 0; i < d->nthreads; i++)
        if (!strcmp(d->threads[i].name, arg)) t = &d->threads[i];
      if (!t) { fail(ln, "no thread named %s", arg); break; }
    } else if (!t) {
      fail(ln, "no thread");
      break;
    } else if (!strcmp(op, "throttled") || !strcmp(op, "unthrottled") || !strcmp(op, "timed") ||
               !strcmp(op, "throttled-at")) {
      char copy[400];
      strcpy(copy, arg);
      long i = find_path(t, copy);
      uint32_t th = (uint32_t)(t - d->threads);
      if (i < 0) fail(ln, "no node at %s", arg);
      else if (!strcmp(op, "timed") && cpd_timed_calls(d, th, (uint32_t)i) != n)
        fail(ln, "%s: %" PRIu64 " timed calls, expected %llu", arg, cpd_timed_calls(d, th, (uint32_t)i), n);
      else if (!strcmp(op, "throttled-at") && cpd_throttled_at(d, th, (uint32_t)i) != n)
        fail(ln, "%s: throttled at its call %" PRIu64 ", expected %llu", arg,
             cpd_throttled_at(d, th, (uint32_t)i), n);
      else if (!strcmp(op, "throttled") && !(t->nodes[i].flags & CPD_NODE_THROTTLED))
        fail(ln, "%s is not flagged throttled", arg);
      else if (!strcmp(op, "unthrottled") && (t->nodes[i].flags & CPD_NODE_THROTTLED))
        fail(ln, "%s is flagged throttled", arg);
    } else if (!strcmp(op, "path") || !strcmp(op, "open")) {
      char copy[400];
      strcpy(copy, arg);
      long i = find_path(t, copy);
      if (i < 0) fail(ln, "no node at %s", arg);
      else if (!strcmp(op, "path") && t->nodes[i].calls != n)
        fail(ln, "%s has %" PRIu64 " calls, expected %llu", arg, t->nodes[i].calls, n);
      else if (!strcmp(op, "open") && !(t->nodes[i].flags & CPD_NODE_OPEN))
        fail(ln, "%s is not flagged open", arg);
    } else if (!strcmp(op, "none")) {
      if (find_path(t, arg) >= 0) fail(ln, "unexpected node at %s", arg);
    } else if (!strcmp(op, "chain")) {
      unsigned long long best = 0;
      for (uint32_t i = 1; i < t->node_count; i++) {
        if (strcmp(name_of(t->nodes[i].key), arg)) continue;
        uint32_t p = t->nodes[i].parent;
        if (p && !strcmp(name_of(t->nodes[p].key), arg)) continue;   /* not a chain head */
        unsigned long long len = 0;
        for (uint32_t j = i; j && !strcmp(name_of(t->nodes[j].key), arg);) {
          if (t->nodes[j].calls != 1) { fail(ln, "chain node %u has %" PRIu64 " calls", j, t->nodes[j].calls); break; }
          len++;
          uint32_t next = 0;
          if (j + 1 < t->node_count && t->nodes[j + 1].parent == j) next = j + 1;
          j = next;
        }
        if (len > best) best = len;
      }
      if (best != n) fail(ln, "longest %s chain is %llu levels, expected %llu", arg, best, n);
    } else if (!strcmp(op, "calls")) {
      uint64_t sum = 0;
      for (uint32_t th = 0; th < d->nthreads; th++)
        for (uint32_t i = 1; i < d->threads[th].node_count; i++)
          if (!strcmp(name_of(d->threads[th].nodes[i].key), arg)) sum += d->threads[th].nodes[i].calls;
      if (sum != n) fail(ln, "%s has %" PRIu64 " calls in all, expected %llu", arg, sum, n);
    } else if (!strcmp(op, "root-time-within-run")) {
      /* The calls below the root add up to no more than the run lasted. */
      uint64_t sum = 0;
      for (uint32_t i = 1; i < t->node_count; i++)
        if (t->nodes[i].parent == 0) sum += t->nodes[i].incl;
      double ns = cpd_ticks_to_ns(d, (double)sum), run = (double)(d->dump_ns - d->start_ns);
      if (ns > run * 1.01 + 1e6) fail(ln, "calls below the root last %.0f ns, the run %.0f ns", ns, run);
    } else if (!strcmp(op, "nodes-at-least")) {
      if (t->node_count < strtoull(arg, NULL, 10)) fail(ln, "%u nodes", t->node_count);
    } else if (!strcmp(op, "consistent")) {
      for (uint32_t th = 0; th < d->nthreads; th++) {
        const struct cpd_thread *tt = &d->threads[th];
        uint64_t *sum = calloc(tt->node_count, sizeof *sum);
        /* A throttled node's time, and so its parent's, is an estimate
        ** from sampled calls (format 1.3): left out. */
        for (uint32_t i = 1; i < tt->node_count; i++) sum[tt->nodes[i].parent] += tt->nodes[i].incl;
        for (uint32_t i = 1; i < tt->node_count; i++)
          if (tt->nodes[i].flags & CPD_NODE_THROTTLED) sum[i] = sum[tt->nodes[i].parent] = 0;
        for (uint32_t i = 1; i < tt->node_count; i++)
          if (sum[i] > tt->nodes[i].incl && tt->nodes[i].key != CPD_KEY_OVERFLOW)
            fail(ln, "thread %s node %u (%s): children %" PRIu64 " > inclusive %" PRIu64,
                 tt->name, i, name_of(tt->nodes[i].key), sum[i], tt->nodes[i].incl);
        free(sum);
      }
    } else if (!strcmp(op, "zone-issue")) {
      static const char *const kinds[CPD_ZI_KINDS] = { "no-begin", "out-of-order", "left-open",
                                                       "open-at-exit", "open-at-dump" };
      char kind[32];
      unsigned long long want = 0;
      if (sscanf(line, "%*s %399s %31s %llu", arg, kind, &want) != 3) {
        fail(ln, "zone-issue wants ZONE KIND N");
        continue;
      }
      if (!strcmp(arg, "-")) arg[0] = '\0';   /* an END() with nothing open */
      int k = 0;
      while (k < CPD_ZI_KINDS && strcmp(kinds[k], kind)) k++;
      if (k == CPD_ZI_KINDS) { fail(ln, "unknown zone issue kind %s", kind); continue; }
      uint64_t got = 0;
      for (uint32_t i = 0; i < d->nzone_issues; i++) {
        const struct cpd_zone_issue *z = &d->zone_issues[i];
        if (&d->threads[z->thread] == t && !strcmp(d->strings[z->zone], arg)) got += z->n[k];
      }
      if (got != want) fail(ln, "zone %s: %" PRIu64 " %s, expected %llu", arg, got, kind, want);
    } else {
      fail(ln, "unknown expectation '%s'", op);
    }
  }
  fclose(e);
  cpd_free(d);
  return failures ? 1 : 0;
}
