/*
** cmd_annotate.c -- 'capprof annotate FUNC DUMP...': where in its source a
** function's samples fell. Per source line, the samples whose program
** counter was on it and their share of the function's samples, beside the
** source text, as perf annotate shows them. Needs a sampled dump
** (CAPPROF_SAMPLE or 'capprof run --sample') and line information (-g).
*/
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "model/profile.h"
#include "model/tool.h"
#include "sym/symbols.h"

static const char usage[] =
  "usage: capprof annotate [options] FUNC DUMP...\n"
  "\n"
  "The source of FUNC with, beside each line, the samples whose program\n"
  "counter was on that line (self: in FUNC's own code, not in what it calls)\n"
  "and their share of FUNC's samples. FUNC is a name as 'capprof report\n"
  "--samples' prints it, or a part of one. Code inlined into FUNC from other\n"
  "files is listed after FUNC's own file.\n"
  "\n"
  "  -C, --context=N  only the sampled lines and N lines around each\n"
  "  -h, --help       this text\n";

struct line_count {
  char *file;              /* malloc'd */
  unsigned line;
  uint64_t samples;
};

struct counts {
  struct line_count *v;
  size_t n, cap;
  uint64_t total, no_line;
};

static int add_count(struct counts *c, char *file, unsigned line, uint64_t n)
{
  for (size_t i = 0; i < c->n; i++)
    if (c->v[i].line == line && !strcmp(c->v[i].file, file)) {
      c->v[i].samples += n;
      free(file);
      return 0;
    }
  if (c->n == c->cap) {
    size_t cap = c->cap ? c->cap * 2 : 64;
    struct line_count *nv = realloc(c->v, cap * sizeof *nv);
    if (!nv) { free(file); return -1; }
    c->v = nv;
    c->cap = cap;
  }
  c->v[c->n++] = (struct line_count){ file, line, n };
  return 0;
}

static const char *main_file;

/* The function's own file first, then by file name and line. */
static int by_file_line(const void *pa, const void *pb)
{
  const struct line_count *a = pa, *b = pb;
  int am = main_file && !strcmp(a->file, main_file), bm = main_file && !strcmp(b->file, main_file);
  if (am != bm) return am ? -1 : 1;
  int c = strcmp(a->file, b->file);
  if (c) return c;
  return a->line < b->line ? -1 : a->line > b->line;
}

/* The samples of every program counter in function f, by source line. */
static int collect(const struct profile *p, const struct prof_func *f, struct counts *c)
{
  for (uint32_t di = 0; di < p->ndumps; di++) {
    const struct cpd_dump *d = p->dumps[di].d;
    struct symbolizer *sym = sym_open(d);
    if (!sym) return -1;
    for (uint32_t t = 0; t < d->nsample_threads; t++) {
      const struct cpd_sample_thread *st = &d->sample_threads[t];
      for (uint32_t k = 1; k < st->nnodes; k++) {
        const struct cpd_snode *s = &st->nodes[k];
        if (!s->self) continue;
        struct sym_info si;
        sym_lookup(sym, s->addr, &si);
        if (strcmp(si.name, f->name) || strcmp(si.module, f->module)) continue;
        c->total += s->self;
        char *file = NULL;
        unsigned line = 0;
        if (sym_line(sym, s->addr, &file, &line) != 0 || !file) {
          c->no_line += s->self;
          continue;
        }
        if (add_count(c, file, line, s->self) != 0) {
          sym_close(sym);
          return -1;
        }
      }
    }
    sym_close(sym);
  }
  return 0;
}

/* The lines of a text file, or NULL when it cannot be read. */
static char **read_lines(const char *path, unsigned *n)
{
  FILE *f = fopen(path, "r");
  if (!f) return NULL;
  char **v = NULL, buf[4096];
  unsigned cap = 0;
  *n = 0;
  while (fgets(buf, sizeof buf, f)) {
    size_t len = strlen(buf);
    if (len && buf[len - 1] != '\n' && !feof(f)) {      /* a very long line: keep its start */
      int ch;
      while ((ch = fgetc(f)) != EOF && ch != '\n') {}
    }
    while (len && (buf[len - 1] == '\n' || buf[len - 1] == '\r')) buf[--len] = '\0';
    for (size_t i = 0; i < len; i++)
      if ((unsigned char)buf[i] < 0x20 && buf[i] != '\t') buf[i] = '?';
    if (*n == cap) {
      cap = cap ? cap * 2 : 256;
      char **nv = realloc(v, cap * sizeof *nv);
      if (!nv) break;
      v = nv;
    }
    if (!(v[*n] = strdup(buf))) break;
    (*n)++;
  }
  fclose(f);
  return v;
}

/* One file's part: its lines from first to last, or with --context only
** those near a sampled line. */
static void print_file(const struct line_count *v, size_t n, const struct prof_func *f,
                       uint64_t total, double context)
{
  const char *file = v[0].file;
  unsigned nlines = 0;
  char **text = read_lines(file, &nlines);
  unsigned first = v[0].line, last = v[n - 1].line;
  if (f->file && !strcmp(file, f->file) && f->line && f->line < first) first = f->line;
  printf("\n%10s %6s %6s  source: %s%s\n", "self", "self%", "line", file,
         text ? "" : " (not found: counts only)");
  size_t k = 0;
  unsigned prev = 0;
  for (unsigned ln = first ? first : 1; ln <= last; ln++) {
    while (k < n && v[k].line < ln) k++;
    uint64_t here = k < n && v[k].line == ln ? v[k].samples : 0;
    if (context >= 0) {
      int near = 0;
      for (size_t j = 0; j < n && !near; j++)
        near = (double)v[j].line + context >= ln && (double)ln + context >= v[j].line;
      if (!near) continue;
      if (prev && ln > prev + 1) printf("%10s %6s %6s\n", "", "", "...");
    }
    if (!text && !here) continue;
    prev = ln;
    char a[32], b[32];
    const char *src = text && ln <= nlines ? text[ln - 1] : "";
    if (here)
      printf("%10s %6s %6u  %s\n", fmt_count(here, a, sizeof a),
             fmt_pct((double)here, (double)total, b, sizeof b), ln, src);
    else
      printf("%10s %6s %6u  %s\n", "", "", ln, src);
  }
  for (unsigned i = 0; text && i < nlines; i++) free(text[i]);
  free(text);
}

int cmd_annotate(int argc, char **argv)
{
  static const struct option longopts[] = {
    { "context", required_argument, NULL, 'C' },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
  };
  double context = -1;
  int c;
  opterr = 0;
  while ((c = getopt_long(argc, argv, ":C:h", longopts, NULL)) != -1) {
    switch (c) {
    case 'C': if (tool_parse_num("annotate", "--context", optarg, 1e6, &context)) return 2; break;
    case 'h': fputs(usage, stdout); return 0;
    default: return tool_bad_option("annotate", argv, c);
    }
  }
  if (argc - optind < 2)
    return 1 + tool_error("annotate: a function and a dump are needed "
                          "(usage: capprof annotate FUNC DUMP...)");
  const char *name = argv[optind];
  struct profile *p = prof_load_all(argc - optind - 1, argv + optind + 1);
  if (!p) return 1;
  /* The function of that name (else containing it) with the most samples. */
  uint32_t best = PROF_NONE;
  for (int exact = 1; exact >= 0 && best == PROF_NONE; exact--)
    for (uint32_t i = 0; i < p->nfuncs; i++) {
      const struct prof_func *f = &p->funcs[i];
      if (f->synthetic || !(exact ? !strcmp(f->name, name) : strstr(f->name, name) != NULL))
        continue;
      if (best == PROF_NONE || f->pc.self > p->funcs[best].pc.self) best = i;
    }
  int status = 0;
  struct counts cnt = { 0 };
  if (!p->pc_samples) {
    status = tool_error("annotate: the dump has no sampled program counters (sample with "
                        "CAPPROF_SAMPLE=time:1ms or 'capprof run --sample')");
  } else if (best == PROF_NONE) {
    status = tool_error("annotate: no function '%s' in the dump", name);
  } else if (!p->funcs[best].pc.self) {
    status = tool_error("annotate: %s has no samples with the program counter in it",
                        p->funcs[best].name);
  } else if (collect(p, &p->funcs[best], &cnt) != 0) {
    status = tool_error("out of memory");
  } else {
    const struct prof_func *f = &p->funcs[best];
    char a[32], b[32], d[32];
    printf("%s", f->name);
    if (f->file) printf("  (%s:%u)", sym_base_name(f->file), f->line);
    printf(": %s samples with the program counter in it, %s of all %s\n",
           fmt_count(cnt.total, a, sizeof a), fmt_pct((double)cnt.total, (double)p->pc_samples, b,
           sizeof b), fmt_count(p->pc_samples, d, sizeof d));
    printf("self: samples with the program counter on the line; self%%: their share of the\n"
           "function's samples.\n");
    main_file = f->file;
    qsort(cnt.v, cnt.n, sizeof *cnt.v, by_file_line);
    for (size_t i = 0; i < cnt.n;) {
      size_t j = i;
      while (j < cnt.n && !strcmp(cnt.v[j].file, cnt.v[i].file)) j++;
      print_file(cnt.v + i, j - i, f, cnt.total, context);
      i = j;
    }
    if (cnt.no_line)
      printf("\n%10s %6s  samples at addresses without line information (build with -g)\n",
             fmt_count(cnt.no_line, a, sizeof a),
             fmt_pct((double)cnt.no_line, (double)cnt.total, b, sizeof b));
  }
  for (size_t i = 0; i < cnt.n; i++) free(cnt.v[i].file);
  free(cnt.v);
  prof_free(p);
  return status;
}
