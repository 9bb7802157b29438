/*
** gen_dump.c -- writes synthetic dumps for the tool's tests: small valid
** dumps for the fuzzer's seed corpus, and million-node trees (wide, deep,
** bushy) for the performance test. Keys are made-up code addresses inside
** one module with no file ("synthetic", like the vDSO), so names are
** synthetic+0xoffset and no symbol reader is involved.
**   gen_dump OUT small|zones|nasty|markup|probe|wide N|deep N|bushy N
** probe: a run whose measured time was mostly the hooks' own (report's note).
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/cpd_writer.h"

static struct cpd_module module = {
  0x400000, 0x100000, CPD_MODID_NONE, 0, NULL, "synthetic", ""
};

static void init(struct cpd_dump *d, struct cpd_thread *t, uint32_t n)
{
  static char exe[] = "/nonexistent/synthetic", cmd[] = "synthetic";
  memset(d, 0, sizeof *d);
  d->pid = 42;
  d->os = CPD_OS_LINUX;
  d->arch = CPD_ARCH_X86_64;
  d->ptr_size = 8;
  d->exe = exe;
  d->cmdline = cmd;
  d->cmdline_len = sizeof cmd - 1;
  d->clock_source = CPD_CLOCK_TSC;
  d->calib_ticks = 3000000000u;   /* 3 ticks per ns */
  d->calib_ns = 1000000000u;
  d->timer_overhead = 24;
  d->probe_inner_mt = 30000;      /* 10 ns */
  d->probe_outer_mt = 60000;      /* 20 ns */
  d->nmodules = 1;
  d->modules = &module;
  d->nthreads = 1;
  d->threads = t;
  memset(t, 0, sizeof *t);
  t->tid = 7;
  t->name = "main";
  t->node_count = n;
  t->nodes = calloc(n, sizeof *t->nodes);
  if (!t->nodes) exit(1);
  t->nodes[0].key = CPD_KEY_ROOT;
  t->nodes[0].parent = CPD_NO_PARENT;
}

/* Fill calls/incl bottom-up so every node's time covers its children. */
static void times(struct cpd_thread *t)
{
  for (uint32_t i = 1; i < t->node_count; i++) {
    t->nodes[i].calls = 1 + i % 3;
    t->nodes[i].incl = 300 * t->nodes[i].calls;
  }
  for (uint32_t i = t->node_count; i-- > 1;) {
    struct cpd_node *n = &t->nodes[i];
    n->min = n->incl / n->calls / 2;
    n->max = n->incl / n->calls * 2;
    if (n->parent) t->nodes[n->parent].incl += n->incl + 60 * n->calls;
  }
}

int main(int argc, char **argv)
{
  if (argc < 3) {
    fprintf(stderr, "usage: gen_dump OUT small|zones|nasty|markup|probe|wide N|deep N|bushy N\n");
    return 2;
  }
  const char *kind = argv[2];
  uint32_t n = argc > 3 ? (uint32_t)strtoul(argv[3], NULL, 10) : 8;
  if (n < 2) n = 2;
  struct cpd_dump d;
  struct cpd_thread t;
  char *strings[2] = { "zone one", "zone two" };
  /* names that break formats: quotes, commas, semicolons, newlines, escape
  ** sequences and bytes that are not UTF-8 */
  char *nasty[2] = { "a \"quoted\", b;c\nd\r\x1b[31m", "\xff\xfe bad utf-8 \xc3\x28 \\ end" };
  init(&d, &t, n);
  for (uint32_t i = 1; i < n; i++) {
    struct cpd_node *nd = &t.nodes[i];
    if (!strcmp(kind, "deep")) {             /* a chain; 16 functions recurring */
      nd->parent = i - 1;
      nd->key = 0x401000 + 16 * (i % 16);
    } else if (!strcmp(kind, "wide")) {      /* all under one node */
      nd->parent = i == 1 ? 0 : 1;
      nd->key = 0x401000 + 16 * (i % 4096);
    } else {                                 /* bushy: 4 children per node */
      nd->parent = (i - 1) / 4;
      nd->key = 0x401000 + 16 * (i % 1024);
    }
  }
  if (!strcmp(kind, "nasty")) {
    d.nstrings = 2;
    d.strings = nasty;
    t.nodes[1].key = CPD_KEY_ZONE | 0;
    if (n > 3) t.nodes[3].key = CPD_KEY_ZONE | 1;
  }
  /* names that would break out of an HTML page's script element */
  char *markup[2] = { "</script><script>console.error('escaped')</script>", "<!-- a & b -->" };
  if (!strcmp(kind, "markup")) {
    d.nstrings = 2;
    d.strings = markup;
    t.nodes[1].key = CPD_KEY_ZONE | 0;
    if (n > 3) t.nodes[3].key = CPD_KEY_ZONE | 1;
  }
  if (!strcmp(kind, "zones")) {
    d.nstrings = 2;
    d.strings = strings;
    t.nodes[1].key = CPD_KEY_ZONE | 0;
    if (n > 3) t.nodes[3].key = CPD_KEY_ZONE | 1;
  }
  times(&t);
  /* f makes 100,000 calls of g, 12 ns each as measured, with init's probe
  ** (10 ns in a call's own time, 20 in its caller's): of f's 2.6 ms, 2.0 ms
  ** are the hooks' (77 %). */
  if (!strcmp(kind, "probe")) {
    t.node_count = 3;
    t.nodes[0].incl = 7800000;
    t.nodes[1] = (struct cpd_node){ 0x401000, 0, 0, 1, 7800000, 7800000, 7800000 };
    t.nodes[2] = (struct cpd_node){ 0x401010, 1, 0, 100000, 3600000, 30, 60 };
  }
  char err[256];
  if (cpd_write(&d, argv[1], err, sizeof err) != 0) {
    fprintf(stderr, "gen_dump: %s: %s\n", argv[1], err);
    return 1;
  }
  free(t.nodes);
  return 0;
}
