/*
** cmd_report.c -- 'capprof report DUMP...': the flat profile, one line per
** function summed over every call path, thread and dump. A recursive
** function's inclusive time counts its outermost activations only.
*/
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "cmd/display.h"
#include "model/filter.h"
#include "model/mismatches.h"
#include "model/profile.h"
#include "model/run_stats.h"
#include "model/tool.h"
#include "model/weight.h"
#include "sym/symbols.h"

static const char usage[] =
  "usage: capprof report [options] DUMP...\n"
  "\n"
  "The flat profile: per function (or zone), summed over call paths and\n"
  "threads. With several DUMPs, each is one run of the same program (they line\n"
  "up by function name) and the report shows, per function, the mean per run,\n"
  "the spread across runs (sample standard deviation, min and max) and the\n"
  "number of runs it appears in (--sort=avg: by mean call, max: by the worst\n"
  "run's self time); --sum adds the runs up instead.\n"
  "Zones begun and never ended, and other mismatches, are warned about.\n"
  "\n"
  "Every line is ranked, coloured and shared by one figure (--weight): in a\n"
  "sampled run (the default on Linux) cpu, the CPU time of the samples charged\n"
  "to the function's call paths (time spent blocked is left out); otherwise\n"
  "elapsed, the hooks' wall time, compensated for their own cost. The header\n"
  "(two lines, none with -q) says which and what it leaves out.\n"
  "\n"
  "Columns (docs/tool.md; --fields picks them, comma-separated, '-' for a\n"
  "space): cpu self%, cpu incl% (shares of all cpu), cpu self, cpu incl,\n"
  "calls (exact), calls%, timed (calls the elapsed figures cover), elapsed\n"
  "self%, elapsed incl%, elapsed self (exclusive), elapsed incl (inclusive;\n"
  "a recursion counts its outermost calls), self/call, incl/call, incl min,\n"
  "incl max (elapsed per call). By default as many as leave each name 40\n"
  "columns of the width: the terminal's, or 80 when not a terminal.\n"
  "\n"
  "With --samples: the flat profile of a sampled run (CAPPROF_SAMPLE, capprof\n"
  "run --sample), per function: samples where the program counter was (self)\n"
  "and with the function anywhere on the sampled stack (incl).\n"
  "\n"
  "  -s, --sort=KEY   self (default) or incl of the --weight figure, calls,\n"
  "                   avg (incl/call), max, cpu (cpu self), elapsed (elapsed\n"
  "                   self) or name\n"
  "  -F, --fields=LIST  the columns, e.g. -F cpu-self%,calls,elapsed-incl\n"
  "  -q, --quiet      no header above the column names\n"
  "  -n, --limit=N    show the first N functions\n"
  "  -r, --raw        uncompensated times\n"
  "      --sum        several DUMPs: one profile summing them, not statistics\n"
  "      --samples    the flat profile of the samples (program counters)\n"
  "      --api        intercepted library calls alone ('capprof run'), per\n"
  "                   library, summed over every DUMP given (a process tree)\n"
  "  -h, --help       this text\n";

/* One function of the notes after the table: "  NAME: details" when it
** fits the width, else NAME alone (cut to the width) and the details on
** the next line. details may hold "\n    " continuations. */
static void note_func(const char *name, const char *details)
{
  char buf[4096];
  const char *s = disp_short_name(name, buf, sizeof buf);
  size_t w = disp_width(), first = strcspn(details, "\n");
  if (!w || 2 + strlen(s) + 2 + first <= w) {
    printf("  %s: %s\n", s, details);
    return;
  }
  fputs("  ", stdout);
  disp_name(stdout, name, ":", 2);
  printf("\n    %s\n", details);
}

/* The functions whose hooks were patched out (unhooking, docs/runtime.md). */
static void report_unhooked(const struct profile *p, const uint32_t *order, uint32_t n,
                            uint32_t count)
{
  if (!count) return;
  printf("\n[unhooked]: %u function%s very frequent and short had their hooks patched\n"
         "out of the program (CAPPROF_UNHOOK, docs/runtime.md): their later calls are\n"
         "counted at their entry, not timed, their elapsed time is in their callers'\n"
         "self, and samples in their code are charged to them (cpu self). Where later\n"
         "calls were not counted, calls is a lower bound.\n",
         count, count == 1 ? "" : "s");
  uint32_t unsynced = 0, unknown = 0;
  for (uint32_t i = 0; i < n; i++) {
    const struct prof_func *f = &p->funcs[order[i]];
    if (!(f->unhooked_ns > 0)) continue;
    unsynced += f->unsynced != 0;
    unknown += f->sync_unknown && !f->unsynced;
  }
  if (unsynced)
    printf("%u of them were patched without serializing the other cores after each\n"
           "store (membarrier SYNC_CORE not available): single aligned stores only.\n", unsynced);
  else if (!unknown)
    printf("Each store into their code was followed by a serializing instruction on\n"
           "every core running the program (membarrier SYNC_CORE).\n");
  for (uint32_t i = 0; i < n; i++) {
    const struct prof_func *f = &p->funcs[order[i]];
    if (!(f->unhooked_ns > 0)) continue;
    char b[32], c[32], e[32], d[300];
    if (f->uncounted && p->ucalls_off)
      snprintf(d, sizeof d, "%s calls counted, unhooked %s after start; its later calls are counted\n"
               "    for the whole process only, left out with --thread, --focus, --time-filter",
               fmt_count(f->calls, b, sizeof b), fmt_ns(f->unhooked_ns, c, sizeof c));
    else if (f->uncounted)
      snprintf(d, sizeof d, "%s calls counted, unhooked %s after start, later calls%s not counted",
               fmt_count(prof_all_calls(f), b, sizeof b), fmt_ns(f->unhooked_ns, c, sizeof c),
               f->ucalls ? " partly" : "");
    else if (f->per_path > 0 && !f->ucalls)
      snprintf(d, sizeof d, "%s calls; those after it was unhooked %s after start\n"
               "    are counted on each call path", fmt_count(prof_all_calls(f), b, sizeof b),
               fmt_ns(f->unhooked_ns, c, sizeof c));
    else
      snprintf(d, sizeof d, "%s calls, %s of them after it was unhooked %s after start",
               fmt_count(prof_all_calls(f), b, sizeof b), fmt_count(f->ucalls, e, sizeof e),
               fmt_ns(f->unhooked_ns, c, sizeof c));
    note_func(f->name, d);
  }
}

/* The functions throttling stopped timing (docs/runtime.md), in the
** table's order, each with when and how many of its calls were timed. */
static void report_throttled(const struct profile *p, const uint32_t *order, uint32_t n)
{
  uint32_t count = 0, unhooked = 0;
  for (uint32_t i = 0; i < n; i++) {
    count += p->funcs[order[i]].throttled != 0 && !(p->funcs[order[i]].unhooked_ns > 0);
    unhooked += p->funcs[order[i]].unhooked_ns > 0;
  }
  report_unhooked(p, order, n, unhooked);
  if (!count) return;
  /* Since format 1.3 a throttled call path is timed one call in P (all
  ** dumps here the same P, else 0: then the older wording). */
  uint64_t period = p->ndumps ? p->dumps[0].period : 0;
  for (uint32_t k = 1; k < p->ndumps; k++)
    if (p->dumps[k].period != period) period = 0;
  if (period)
    printf("\n[throttled]: %u function%s very frequent and short (CAPPROF_THROTTLE,\n"
           "docs/runtime.md): every call counted, but after their first calls only 1 in\n"
           "%llu timed, at random, each standing for %llu: their elapsed times are\n"
           "estimates, their min and max those of the timed calls.\n", count,
           count == 1 ? "" : "s", (unsigned long long)period, (unsigned long long)period);
  else
    printf("\n[throttled]: %u function%s very frequent and short (CAPPROF_THROTTLE,\n"
           "docs/runtime.md) were timed only for their first calls, then counted only;\n"
           "their later time is in their callers' self. Their total, average, min and\n"
           "max cover the timed calls.\n", count, count == 1 ? "" : "s");
  for (uint32_t i = 0; i < n; i++) {
    const struct prof_func *f = &p->funcs[order[i]];
    if (!f->throttled || f->unhooked_ns > 0) continue;
    char a[32], b[32], c[32], d[300];
    if (period)
      snprintf(d, sizeof d, "%u path%s, %s calls, 1 in %llu timed from %s after start",
               f->throttled, f->throttled == 1 ? "" : "s", fmt_count(f->calls, b, sizeof b),
               (unsigned long long)period, fmt_ns(f->throttled_ns, c, sizeof c));
    else
      snprintf(d, sizeof d, "%u path%s, %s of %s calls timed, throttled from %s after start",
               f->throttled, f->throttled == 1 ? "" : "s", fmt_count(f->timed, a, sizeof a),
               fmt_count(f->calls, b, sizeof b), fmt_ns(f->throttled_ns, c, sizeof c));
    note_func(f->name, d);
  }
}

/* --sort names and the key each stands for ("total" is the old name of
** incl). self and incl are the ranking figure's (--weight); cpu is cpu self
** and elapsed elapsed self whatever ranks. */
enum { K_SELF, K_INCL, K_CALLS, K_AVG, K_MAX, K_NAME, K_CPU, K_ELAPSED };
static const struct { const char *name; int key; } sort_keys[] = {
  { "self", K_SELF }, { "incl", K_INCL }, { "total", K_INCL }, { "calls", K_CALLS },
  { "avg", K_AVG }, { "max", K_MAX }, { "name", K_NAME }, { "cpu", K_CPU },
  { "elapsed", K_ELAPSED }, { NULL, 0 },
};

static const struct profile *sort_prof;
static int sort_key, sort_raw;

/* Mean inclusive time of one call (every activation counts). */
static double avg(const struct prof_func *f, int raw)
{
  return prof_per_call(raw ? f->incl_all_raw : f->incl_all, f->timed);
}

static int cmp_funcs(const void *pa, const void *pb)
{
  const struct prof_func *a = &sort_prof->funcs[*(const uint32_t *)pa];
  const struct prof_func *b = &sort_prof->funcs[*(const uint32_t *)pb];
  double x = 0, y = 0;
  switch (sort_key) {
  case K_SELF:
    x = prof_func_self(sort_prof, a); y = prof_func_self(sort_prof, b);
    if (x == y) { x = prof_func_incl(sort_prof, a); y = prof_func_incl(sort_prof, b); }
    break;
  case K_INCL: x = prof_func_incl(sort_prof, a); y = prof_func_incl(sort_prof, b); break;
  case K_CALLS: x = (double)prof_all_calls(a); y = (double)prof_all_calls(b); break;
  case K_AVG: x = avg(a, sort_raw); y = avg(b, sort_raw); break;
  case K_MAX: x = sort_raw ? a->t.max_raw : a->t.max; y = sort_raw ? b->t.max_raw : b->t.max; break;
  case K_CPU: x = a->s.cpu_self; y = b->s.cpu_self; break;
  case K_ELAPSED:
    x = sort_raw ? a->t.excl_raw : a->t.excl; y = sort_raw ? b->t.excl_raw : b->t.excl; break;
  default: break;
  }
  if (x != y) return x < y ? 1 : -1;
  return strcmp(a->name, b->name);
}

/* ---- the flat profile's columns ---------------------------------------------- */

/* What a column needs to print one function: totals for its shares. */
struct col_ctx {
  const struct profile *p;
  double cpu_self;             /* the total the cpu shares divide (all functions) */
  double el_self;              /* the same for elapsed */
  double calls;
  int raw, *marks;
};

struct column {
  const char *name;            /* header, and the --fields word ('-' for ' ') */
  int width;                   /* at least strlen(name) */
  /* The figure of f into buf. */
  const char *(*fmt)(const struct col_ctx *c, const struct prof_func *f, char *buf, size_t n);
};

static double el_self(const struct col_ctx *c, const struct prof_func *f)
{
  return c->raw ? f->t.excl_raw : f->t.excl;
}

static double el_incl(const struct col_ctx *c, const struct prof_func *f)
{
  return c->raw ? f->t.incl_raw : f->t.incl;
}

static const char *c_cpu_self_pct(const struct col_ctx *c, const struct prof_func *f, char *b, size_t n)
{
  return fmt_pct(prof_share(prof_func_figure(c->p, f, PROF_W_CPU, 0), c->cpu_self), 1, b, n);
}
static const char *c_cpu_incl_pct(const struct col_ctx *c, const struct prof_func *f, char *b, size_t n)
{
  return fmt_pct(prof_share(prof_func_figure(c->p, f, PROF_W_CPU, 1), c->cpu_self), 1, b, n);
}
static const char *c_cpu_self(const struct col_ctx *c, const struct prof_func *f, char *b, size_t n)
{
  (void)c;
  return fmt_ns(f->s.cpu_self, b, n);
}
static const char *c_cpu_incl(const struct col_ctx *c, const struct prof_func *f, char *b, size_t n)
{
  (void)c;
  return fmt_ns(f->s.cpu_incl, b, n);
}
static const char *c_calls(const struct col_ctx *c, const struct prof_func *f, char *b, size_t n)
{
  (void)c;
  return fmt_count(prof_all_calls(f), b, n);
}
static const char *c_calls_pct(const struct col_ctx *c, const struct prof_func *f, char *b, size_t n)
{
  return fmt_pct(prof_share((double)prof_all_calls(f), c->calls), 1, b, n);
}
static const char *c_timed(const struct col_ctx *c, const struct prof_func *f, char *b, size_t n)
{
  (void)c;
  return fmt_count(f->timed, b, n);
}
static const char *c_el_self_pct(const struct col_ctx *c, const struct prof_func *f, char *b, size_t n)
{
  return fmt_pct(prof_share(el_self(c, f), c->el_self), 1, b, n);
}
static const char *c_el_incl_pct(const struct col_ctx *c, const struct prof_func *f, char *b, size_t n)
{
  return fmt_pct(prof_share(el_incl(c, f), c->el_self), 1, b, n);
}
static const char *c_el_self(const struct col_ctx *c, const struct prof_func *f, char *b, size_t n)
{
  return prof_fmt_ns_basis(f->t.excl, f->t.excl_raw, prof_excl_basis(&f->t), c->raw, c->marks, b, n);
}
static const char *c_el_incl(const struct col_ctx *c, const struct prof_func *f, char *b, size_t n)
{
  return prof_fmt_ns(f->t.incl, f->t.incl_raw, c->raw, c->marks, b, n);
}
static const char *c_self_call(const struct col_ctx *c, const struct prof_func *f, char *b, size_t n)
{
  return prof_fmt_ns_basis(prof_per_call(f->t.excl, f->timed), prof_per_call(f->t.excl_raw, f->timed),
                           prof_per_call(prof_excl_basis(&f->t), f->timed), c->raw, NULL, b, n);
}
static const char *c_incl_call(const struct col_ctx *c, const struct prof_func *f, char *b, size_t n)
{
  return prof_fmt_ns(avg(f, 0), avg(f, 1), c->raw, NULL, b, n);
}
static const char *c_incl_min(const struct col_ctx *c, const struct prof_func *f, char *b, size_t n)
{
  return fmt_ns(c->raw ? f->t.min_raw : f->t.min, b, n);
}
static const char *c_incl_max(const struct col_ctx *c, const struct prof_func *f, char *b, size_t n)
{
  return fmt_ns(c->raw ? f->t.max_raw : f->t.max, b, n);
}

/* Every column report can show; docs/tool.md names them the same. */
static const struct column columns[] = {
  { "cpu self%", 9, c_cpu_self_pct },
  { "cpu incl%", 9, c_cpu_incl_pct },
  { "cpu self", 9, c_cpu_self },
  { "cpu incl", 9, c_cpu_incl },
  { "calls%", 6, c_calls_pct },
  { "calls", 10, c_calls },
  { "timed", 9, c_timed },
  { "elapsed self%", 13, c_el_self_pct },
  { "elapsed incl%", 13, c_el_incl_pct },
  { "elapsed self", 12, c_el_self },
  { "elapsed incl", 12, c_el_incl },
  { "self/call", 9, c_self_call },
  { "incl/call", 9, c_incl_call },
  { "incl min", 9, c_incl_min },
  { "incl max", 9, c_incl_max },
  { NULL, 0, NULL },
};
#define MAXCOLS 16

static int col_find(const char *name, size_t len)
{
  for (int i = 0; columns[i].name; i++) {
    const char *c = columns[i].name;
    if (strlen(c) != len) continue;
    size_t k = 0;
    while (k < len && (c[k] == name[k] || (c[k] == ' ' && (name[k] == '-' || name[k] == '_')))) k++;
    if (k == len) return i;
  }
  return -1;
}

/* The default columns for the ranking figure, most wanted first: as many as
** leave the name 40 columns of the width (all of them with no width). */
static int default_cols(enum prof_weight w, int sampled, size_t width, int *out)
{
  static const char *const cpu[] = { "cpu self%", "cpu incl%", "calls", "elapsed incl",
                                     "cpu self", "cpu incl", "elapsed self", "timed", NULL };
  static const char *const el[] = { "elapsed self%", "elapsed incl", "calls", "elapsed self",
                                    "elapsed incl%", "self/call", "incl/call", "incl min",
                                    "incl max", "timed", NULL };
  static const char *const el_s[] = { "elapsed self%", "elapsed incl", "calls", "cpu self%",
                                      "elapsed self", "cpu self", "self/call", "incl/call",
                                      "timed", NULL };
  static const char *const ca[] = { "calls%", "calls", "elapsed incl", "elapsed self",
                                    "timed", NULL };
  static const char *const ca_s[] = { "calls%", "calls", "cpu self%", "elapsed incl",
                                      "cpu self", "timed", NULL };
  const char *const *list = w == PROF_W_CPU ? cpu
                            : w == PROF_W_CALLS ? (sampled ? ca_s : ca)
                            : sampled ? el_s : el;
  int n = 0;
  size_t used = 2;                       /* the two spaces before the name */
  for (int i = 0; list[i] && n < MAXCOLS; i++) {
    int c = col_find(list[i], strlen(list[i]));
    size_t need = (size_t)columns[c].width + (n ? 1 : 0);
    if (width && n >= 2 && used + need + 40 > width) break;
    used += need;
    out[n++] = c;
  }
  return n;
}

/* --fields: comma-separated column names ('-' or '_' for a space). Returns
** how many, or -1 after an error line. */
static int parse_fields(const char *arg, int *out)
{
  int n = 0;
  for (const char *s = arg; *s;) {
    const char *e = strchr(s, ',');
    size_t len = e ? (size_t)(e - s) : strlen(s);
    int c = col_find(s, len);
    if (c < 0 || n == MAXCOLS) {
      char names[400] = "";
      for (int i = 0; columns[i].name; i++) {
        size_t l = strlen(names);
        snprintf(names + l, sizeof names - l, "%s%s", i ? ", " : "", columns[i].name);
      }
      for (char *q = names; *q; q++) if (*q == ' ') *q = '-';
      tool_error("report: --fields: no column '%.*s' (columns: %s)", (int)len, s, names);
      return -1;
    }
    out[n++] = c;
    s += len + (e != NULL);
  }
  return n;
}

/* Warnings about mismatched zones, after the report (stderr). */
static void report_zone_warnings(const struct profile *p)
{
  struct cpd_dump **d = malloc((p->ndumps + 1) * sizeof *d);
  if (!d) return;
  for (uint32_t i = 0; i < p->ndumps; i++) d[i] = p->dumps[i].d;
  zone_warn(d, p->ndumps);
  free(d);
}

/* ---- samples ----------------------------------------------------------------- */

/* One line saying how a dump was sampled; returns its process session. */
const struct cpd_sample_session *samples_describe(FILE *f, const struct cpd_dump *d)
{
  const struct cpd_sample_session *s = cpd_process_sampling(d);
  if (!s) return NULL;
  char a[32];
  if (s->flags & CPD_SS_F_FAILED) {
    fprintf(f, "%s: sampling did not run: %s\n", d->path, s->note);
    return s;
  }
  fprintf(f, "%s: %s samples of %s every ", d->path, fmt_count(s->samples, a, sizeof a),
          cpd_source_name(s->source));
  if (s->unit == CPD_SS_UNIT_NS) fprintf(f, "%s of CPU time", fmt_ns((double)s->interval, a, sizeof a));
  else fprintf(f, "%s events", fmt_count(s->interval, a, sizeof a));
  fprintf(f, " (%s)\n", s->method_text);
  return s;
}

void samples_refused(FILE *f, const struct profile *p)
{
  for (uint32_t i = 0; i < p->ndumps; i++) {
    const struct cpd_sample_session *s = cpd_process_sampling(p->dumps[i].d);
    if (s && (s->flags & CPD_SS_F_FAILED)) samples_describe(f, p->dumps[i].d);
  }
}

static const struct profile *pc_prof;

static int by_pc_self(const void *pa, const void *pb)
{
  const struct prof_func *a = &pc_prof->funcs[*(const uint32_t *)pa];
  const struct prof_func *b = &pc_prof->funcs[*(const uint32_t *)pb];
  if (a->pc.self != b->pc.self) return a->pc.self < b->pc.self ? 1 : -1;
  if (a->pc.incl != b->pc.incl) return a->pc.incl < b->pc.incl ? 1 : -1;
  return strcmp(a->name, b->name);
}

static int report_samples(const struct profile *p, double limit)
{
  uint64_t walked = 0, samples = 0;
  int any = 0, failed = 0;
  for (uint32_t i = 0; i < p->ndumps; i++) {
    const struct cpd_sample_session *s = samples_describe(stdout, p->dumps[i].d);
    if (s) any = 1;
    if (s && (s->flags & CPD_SS_F_FAILED)) failed = 1;
    if (s) { walked += s->walked; samples += s->samples; }
  }
  if (!any)
    return tool_error("report: no samples in the dump%s (sample with CAPPROF_SAMPLE=time:1ms "
                      "or 'capprof run --sample')", p->ndumps > 1 ? "s" : "");
  if (!p->pc_samples)
    return failed ? 1 : tool_error("report: the sampling recorded no sample (did the program run "
                                   "long enough? the default interval is 1 ms of CPU time)");
  uint32_t *order = malloc((p->nfuncs + 1) * sizeof *order), n = 0;
  if (!order) return tool_error("out of memory");
  for (uint32_t f = 0; f < p->nfuncs; f++)
    if (p->funcs[f].pc.self || p->funcs[f].pc.incl)
      if (!p->funcs[f].synthetic) order[n++] = f;
  pc_prof = p;
  qsort(order, n, sizeof *order, by_pc_self);
  char a[32], b[32], c[32], d[32], e[32];
  printf("%s samples with a program counter, %s of CPU time; stack walks found callers for "
         "%s of them%s\n", fmt_count(p->pc_samples, a, sizeof a), fmt_ns(p->pc_cpu, b, sizeof b),
         fmt_pct((double)walked, (double)samples, c, sizeof c),
         samples && walked * 10 < samples ? " (no frame pointers: incl is self only)" : "");
  printf("self: samples with the program counter in the function; incl: samples with the\n"
         "function anywhere on the sampled stack; cpu = samples x interval.\n");
  printf("%6s %10s %10s %10s %10s  %s\n", "self%", "self", "cpu self", "incl", "cpu incl",
         "function");
  for (uint32_t i = 0; i < n && (limit < 0 || i < limit); i++) {
    const struct prof_func *f = &p->funcs[order[i]];
    printf("%6s %10s %10s %10s %10s  %s", fmt_pct((double)f->pc.self, (double)p->pc_samples, a, sizeof a),
           fmt_count(f->pc.self, b, sizeof b), fmt_ns(f->pc.cpu_self, c, sizeof c),
           fmt_count(f->pc.incl, d, sizeof d), fmt_ns(f->pc.cpu_incl, e, sizeof e), f->name);
    if (f->file) printf("  (%s:%u)", sym_base_name(f->file), f->line);
    else if (f->module[0]) printf("  (%s)", f->module);
    putchar('\n');
  }
  free(order);
  return 0;
}

/* ---- several runs ------------------------------------------------------------ */

static const struct run_table *sort_rt;
static const struct run_stat *sort_stats;   /* [func * 3 + column] */

static int cmp_runs(const void *pa, const void *pb)
{
  uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
  double x, y;
  switch (sort_key) {
  case 1: x = sort_stats[a * 3 + 1].mean; y = sort_stats[b * 3 + 1].mean; break;
  case 2: x = sort_stats[a * 3 + 2].mean; y = sort_stats[b * 3 + 2].mean; break;
  case 3:                                   /* average call: total / calls */
    x = sort_stats[a * 3 + 2].mean ? sort_stats[a * 3 + 1].mean / sort_stats[a * 3 + 2].mean : 0;
    y = sort_stats[b * 3 + 2].mean ? sort_stats[b * 3 + 1].mean / sort_stats[b * 3 + 2].mean : 0;
    break;
  case 4: x = sort_stats[a * 3].max; y = sort_stats[b * 3].max; break;    /* worst run */
  case 5: return strcmp(sort_prof->funcs[a].name, sort_prof->funcs[b].name);
  default: x = sort_stats[a * 3].mean; y = sort_stats[b * 3].mean; break;
  }
  if (x != y) return x < y ? 1 : -1;
  return strcmp(sort_prof->funcs[a].name, sort_prof->funcs[b].name);
}

/* One line per function: mean per run, spread across runs, runs present. */
static int report_runs(const struct profile *p, int key, int raw, double limit)
{
  struct run_table rt;
  if (runs_build(p, raw, &rt) != 0) return tool_error("out of memory");
  struct run_stat *st = malloc(((size_t)p->nfuncs * 3 + 1) * sizeof *st);
  uint32_t *order = malloc((p->nfuncs + 1) * sizeof *order), n = 0;
  double *tot = malloc(rt.nruns * sizeof *tot);
  if (!st || !order || !tot) {
    free(st); free(order); free(tot); runs_free(&rt);
    return tool_error("out of memory");
  }
  for (uint32_t r = 0; r < rt.nruns; r++) tot[r] = 0;
  for (uint32_t i = 0; i < p->nthreads; i++)
    if (p->threads[i].dump >= 0)
      tot[p->threads[i].dump] += rt.cpu ? prof_node_figure(p, &p->threads[i], 0, PROF_W_CPU, 1)
                                 : raw ? p->threads[i].nodes[0].t.incl_raw
                                       : p->threads[i].nodes[0].t.incl;
  struct run_stat all;
  runs_stat(tot, rt.nruns, &all);
  for (uint32_t k = 1; k < p->ndumps; k++)
    if (strcmp(sym_base_name(p->dumps[k].d->exe), sym_base_name(p->dumps[0].d->exe))) {
      tool_warn("the runs come from different programs (%s, %s): statistics across runs "
                "compare functions by name only", sym_base_name(p->dumps[0].d->exe),
                sym_base_name(p->dumps[k].d->exe));
      break;
    }
  for (uint32_t f = 0; f < p->nfuncs; f++) {
    runs_stat(runs_row(&rt, rt.self, f), rt.nruns, &st[f * 3]);
    runs_stat(runs_row(&rt, rt.total, f), rt.nruns, &st[f * 3 + 1]);
    runs_stat(runs_row(&rt, rt.calls, f), rt.nruns, &st[f * 3 + 2]);
    if (p->funcs[f].synthetic && (!rt.present[f] || !strcmp(p->funcs[f].name, "[root]")))
      continue;
    if (rt.present[f]) order[n++] = f;
  }
  sort_prof = p;
  sort_rt = &rt;
  sort_stats = st;
  sort_key = key;
  qsort(order, n, sizeof *order, cmp_runs);

  char a[32], b[32], c[32], d[32], e[32], g[32], h[32];
  const char *fig = rt.cpu ? "cpu" : "elapsed";
  printf("%u runs, %u threads; %s per run %s, spread %s (sd), %s to %s%s\n", rt.nruns,
         p->nthreads, fig, fmt_ns(all.mean, a, sizeof a), fmt_ns(all.sd, b, sizeof b),
         fmt_ns(all.min, c, sizeof c), fmt_ns(all.max, d, sizeof d),
         raw && !rt.cpu ? " (raw)" : "");
  printf("ranked by %s self: per function the mean per run, its sd and range; runs: how\n"
         "many runs it appears in%s\n", fig,
         rt.cpu ? " (every run sampled)" : p->node_samples ? " (not every run sampled)" : "");
  char hs[16], hi[16];
  snprintf(hs, sizeof hs, "%s self", rt.cpu ? "cpu" : "el.");
  snprintf(hi, sizeof hi, "%s incl", rt.cpu ? "cpu" : "el.");
  printf("%s%10s %9s %10s %10s %10s %9s %12s %5s  %s%s\n", disp_on(DISP_HEADER), hs, "sd",
         "min run", "max run", hi, "sd", "calls", "runs", "function", disp_off());
  for (uint32_t i = 0; i < n && (limit < 0 || i < limit); i++) {
    uint32_t f = order[i];
    const struct run_stat *s = &st[f * 3];
    int used = printf("%10s %9s %10s %10s %10s %9s %12s %2u/%-2u  ", fmt_ns(s[0].mean, a, sizeof a),
                      fmt_ns(s[0].sd, b, sizeof b), fmt_ns(s[0].min, c, sizeof c),
                      fmt_ns(s[0].max, d, sizeof d), fmt_ns(s[1].mean, e, sizeof e),
                      fmt_ns(s[1].sd, g, sizeof g), fmt_mean(s[2].mean, h, sizeof h),
                      rt.present[f], rt.nruns);
    disp_name(stdout, p->funcs[f].name, p->funcs[f].zone ? "  [zone]" : "", (size_t)used);
    putchar('\n');
  }
  free(st);
  free(order);
  free(tot);
  runs_free(&rt);
  return 0;
}

/* ---- API calls ('capprof run') ---------------------------------------------- */

static int cmp_api(const void *pa, const void *pb)
{
  const struct prof_func *a = &sort_prof->funcs[*(const uint32_t *)pa];
  const struct prof_func *b = &sort_prof->funcs[*(const uint32_t *)pb];
  int m = strcmp(a->module, b->module);
  if (m) return m;
  double x = 0, y = 0;
  switch (sort_key) {
  case 2: x = (double)a->calls; y = (double)b->calls; break;
  case 3: x = avg(a, sort_raw); y = avg(b, sort_raw); break;
  case 4: x = sort_raw ? a->t.max_raw : a->t.max; y = sort_raw ? b->t.max_raw : b->t.max; break;
  case 5: break;
  default: x = sort_raw ? a->t.incl_raw : a->t.incl; y = sort_raw ? b->t.incl_raw : b->t.incl;
  }
  if (x != y) return x < y ? 1 : -1;
  return strcmp(a->name, b->name);
}

/* WAP's table: per library, each intercepted function's calls, inclusive
** time, mean inclusive time per call, shortest and longest call, in the
** names every command uses (docs/tool.md). */
static int report_api(const struct profile *p, int key, int raw, double limit)
{
  uint32_t *order = malloc((p->nfuncs + 1) * sizeof *order), n = 0;
  if (!order) return tool_error("out of memory");
  uint64_t calls = 0;
  for (uint32_t f = 0; f < p->nfuncs; f++) {
    if (!p->funcs[f].api || !p->funcs[f].calls) continue;
    order[n++] = f;
    calls += p->funcs[f].calls;
  }
  sort_prof = p;
  sort_key = key;
  sort_raw = raw;
  qsort(order, n, sizeof *order, cmp_api);
  char a[32], b[32], d[32], e[32], g[32];
  uint32_t procs = 0;
  for (uint32_t i = 0; i < p->ndumps; i++)
    procs += p->dumps[i].d->intercept.present && p->dumps[i].d->intercept.status == CPD_IS_ACTIVE;
  printf("API calls: %u dump%s (%u with interception on), %u thread%s, %s intercepted calls%s\n",
         p->ndumps, p->ndumps == 1 ? "" : "s", procs, p->nthreads, p->nthreads == 1 ? "" : "s",
         fmt_count(calls, a, sizeof a), raw ? " (raw times)" : "");
  printf("Per library and function, over every thread and dump; incl is inclusive time "
         "(callbacks into the program included), %s.\n",
         raw ? "as measured" : "compensated for the probe's own cost");
  if (!n) {
    printf("(no intercepted calls: run the program with 'capprof run')\n");
    free(order);
    return 0;
  }
  const char *lib = NULL;
  uint32_t shown = 0;
  for (uint32_t i = 0; i < n; i++) {
    const struct prof_func *f = &p->funcs[order[i]];
    if (!lib || strcmp(lib, f->module)) {
      lib = f->module;
      uint64_t lc = 0;
      double lt = 0;
      for (uint32_t k = i; k < n && !strcmp(p->funcs[order[k]].module, lib); k++) {
        lc += p->funcs[order[k]].calls;
        lt += raw ? p->funcs[order[k]].t.incl_raw : p->funcs[order[k]].t.incl;
      }
      printf("\n%s: %s calls, %s incl\n", lib[0] ? lib : "(unknown library)",
             fmt_count(lc, a, sizeof a), fmt_ns(lt, b, sizeof b));
      printf("%s%12s %10s %10s %10s %10s  %s%s\n", disp_on(DISP_HEADER), "calls", "incl",
             "incl/call", "incl min", "incl max", "function", disp_off());
      shown = 0;
    }
    if (limit >= 0 && shown >= limit) continue;
    shown++;
    int used = printf("%12s %10s %10s %10s %10s  ", fmt_count(f->calls, a, sizeof a),
                      fmt_ns(raw ? f->t.incl_raw : f->t.incl, b, sizeof b),
                      fmt_ns(avg(f, raw), d, sizeof d),
                      fmt_ns(raw ? f->t.min_raw : f->t.min, e, sizeof e),
                      fmt_ns(raw ? f->t.max_raw : f->t.max, g, sizeof g));
    disp_name(stdout, f->name, "", (size_t)used);
    putchar('\n');
  }
  free(order);
  return 0;
}

int cmd_report(int argc, char **argv)
{
  static const struct option longopts[] = {
    { "sort", required_argument, NULL, 's' },
    { "limit", required_argument, NULL, 'n' },
    { "raw", no_argument, NULL, 'r' },
    { "sum", no_argument, NULL, 'S' },
    { "samples", no_argument, NULL, 'P' },
    { "api", no_argument, NULL, 'A' },
    { "fields", required_argument, NULL, 'F' },
    { "quiet", no_argument, NULL, 'q' },
    { "help", no_argument, NULL, 'h' },
    FILTER_LONGOPTS,
    { NULL, 0, NULL, 0 },
  };
  double limit = -1;
  int raw = 0, key = K_SELF, sum = 0, api = 0, sorted = 0, samples = 0, quiet = 0, c;
  int fields[MAXCOLS], nfields = 0;
  struct filter flt = { 0 };
  opterr = 0;
  while ((c = getopt_long(argc, argv, ":s:n:rhqt:F:", longopts, NULL)) != -1) {
    int fo = filter_option("report", c, optarg, &flt);
    if (fo < 0) return 2;
    if (fo) continue;
    switch (c) {
    case 's':
      for (key = 0; sort_keys[key].name && strcmp(sort_keys[key].name, optarg); key++) {}
      if (!sort_keys[key].name)
        return 1 + tool_error("report: --sort wants self, incl, calls, avg, max, cpu, elapsed "
                              "or name, not '%s'", optarg);
      key = sort_keys[key].key;
      sorted = 1;
      break;
    case 'n': if (tool_parse_num("report", "--limit", optarg, 1e9, &limit)) return 2; break;
    case 'r': raw = 1; break;
    case 'S': sum = 1; break;
    case 'P': samples = 1; break;
    case 'A': api = 1; break;
    case 'q': quiet = 1; break;
    case 'F':
      nfields = parse_fields(optarg, fields);
      if (nfields <= 0) return 2;
      break;
    case 'h': fputs(usage, stdout); fputs(filter_help, stdout); fputs(display_help, stdout); return 0;
    default: return tool_bad_option("report", argv, c);
    }
  }
  if (optind >= argc)
    return 1 + tool_error("report: no dump given (usage: capprof report DUMP...)");
  struct profile *p = prof_load_all(argc - optind, argv + optind);
  if (!p) return 1;
  flt.raw = raw;
  if (filter_apply(p, &flt) != 0) { prof_free(p); return 1; }
  /* The flat profile fits 80 columns into a pipe or file; the tables of
  ** several runs, samples and API calls are wider and keep whole names. */
  if (!samples && !api && !(p->ndumps > 1 && !sum)) display_default_width(80);
  display_start(1);
  if (samples) {
    int rc = report_samples(p, limit);
    prof_free(p);
    return rc;
  }
  if (api) {
    int rc = report_api(p, sorted ? key : 1, raw, limit);
    fflush(stdout);
    prof_free(p);
    return rc;
  }
  if (p->ndumps > 1 && !sum) {
    if (key == K_CPU) {
      prof_free(p);
      return 1 + tool_error("report: --sort=cpu needs one dump or --sum");
    }
    int rc = report_runs(p, key, raw, limit);
    fflush(stdout);
    report_zone_warnings(p);
    prof_free(p);
    return rc;
  }
  /* Every figure ranks by the profile's weight (model/weight.h): a sampled
  ** run's CPU time from the samples by default, which needs no probe
  ** compensation (docs/tool.md, "The profile model"). */
  enum prof_weight w = prof_weight_of(p);
  int sampled = p->node_samples > 0;
  int cols[MAXCOLS], ncols = nfields;
  if (nfields) memcpy(cols, fields, sizeof cols);
  else ncols = default_cols(w, sampled, disp_width(), cols);
  uint32_t *order = malloc((p->nfuncs + 1) * sizeof *order), n = 0;
  if (!order) { prof_free(p); return tool_error("out of memory"); }
  struct col_ctx cx = { p, 0, 0, 0, raw, NULL };
  uint64_t calls = 0;
  for (uint32_t f = 0; f < p->nfuncs; f++) {
    if (prof_all_calls(&p->funcs[f]) == 0 && !p->funcs[f].s.self) continue; /* placeholders */
    if (p->funcs[f].synthetic && !strcmp(p->funcs[f].name, "[root]")) continue;
    calls = cpd_sat_add(calls, prof_all_calls(&p->funcs[f]));
    order[n++] = f;
  }
  for (uint32_t i = 0; i < n; i++) {
    const struct prof_func *f = &p->funcs[order[i]];
    cx.cpu_self += prof_func_figure(p, f, PROF_W_CPU, 0);
    cx.el_self += raw ? f->t.excl_raw : f->t.excl;
  }
  cx.calls = (double)calls;
  double total = prof_weight_total(p);
  sort_prof = p;
  sort_key = key;
  sort_raw = raw;
  qsort(order, n, sizeof *order, cmp_funcs);

  char a[40], b[40], d[40], e[40];
  int marks = 0;
  if (!quiet) {
    double elapsed = 0;
    for (uint32_t i = 0; i < p->nthreads; i++)
      if (!p->threads[i].sampled)
        elapsed += raw ? p->threads[i].nodes[0].t.incl_raw : p->threads[i].nodes[0].t.incl;
    printf("%u dump%s, %u thread%s, %s calls; ", p->ndumps, p->ndumps == 1 ? "" : "s",
           p->nthreads, p->nthreads == 1 ? "" : "s", fmt_count(calls, a, sizeof a));
    if (sampled)
      printf("cpu %s (%s samples), ", fmt_ns(cx.cpu_self, b, sizeof b),
             fmt_count(p->node_samples, d, sizeof d));
    printf("elapsed %s", fmt_ns(elapsed, e, sizeof e));
    putchar('\n');
    char line[300];
    prof_weight_line(p, line, sizeof line);
    /* A run whose measured time was mostly (over half) the hooks' own: its
    ** elapsed times rest on the compensation's model as much as on the
    ** measurement (docs/tool.md, "Measuring the probe"). */
    double measured = 0, subtracted = 0;
    double share = raw || sampled ? 0 : prof_probe_share(p, &measured, &subtracted);
    if (share > 0.5) {
      char x[40], y[40];
      snprintf(line, sizeof line, "ranked by elapsed: %s of the %s measured was probe cost "
               "(subtracted)", fmt_pct(share, 1, x, sizeof x), fmt_ns(measured, y, sizeof y));
    }
    disp_line(stdout, line);
    for (uint32_t i = 0; !sampled && i < p->ndumps; i++) {
      const struct cpd_sample_session *ss = cpd_process_sampling(p->dumps[i].d);
      if (ss && (ss->flags & CPD_SS_F_FAILED)) {
        printf("sampling did not run: %s\n", ss->note);
        break;
      }
    }
  }
  fputs(disp_on(DISP_HEADER), stdout);
  for (int c = 0; c < ncols; c++)
    printf("%s%*s", c ? " " : "", columns[cols[c]].width, columns[cols[c]].name);
  printf("  function%s\n", disp_off());
  cx.marks = &marks;
  for (uint32_t i = 0; i < n && (limit < 0 || i < limit); i++) {
    const struct prof_func *f = &p->funcs[order[i]];
    int used = 0;
    for (int c = 0; c < ncols; c++) {
      char v[48];
      const char *txt = columns[cols[c]].fmt(&cx, f, v, sizeof v);
      int hot = c == 0 ? disp_pct_kind(prof_func_self(p, f), total) : -1;
      if (c) { putchar(' '); used++; }
      int wd = columns[cols[c]].width;
      printf("%s%*s%s", hot < 0 ? "" : disp_on(hot), wd, txt, hot < 0 ? "" : disp_off());
      used += (int)strlen(txt) > wd ? (int)strlen(txt) : wd;
    }
    fputs("  ", stdout);
    used += 2;
    char where[600] = "";
    if (f->zone) snprintf(where, sizeof where, "  [zone]");
    else if (f->file) snprintf(where, sizeof where, "  (%s:%u)", sym_base_name(f->file), f->line);
    else if (f->module[0] && !f->synthetic) snprintf(where, sizeof where, "  (%s)", f->module);
    if (f->throttled || f->unhooked_ns > 0) {
      size_t wl = strlen(where);
      snprintf(where + wl, sizeof where - wl, f->unhooked_ns > 0 ? "  [unhooked]" : "  [throttled]");
    }
    disp_name(stdout, f->name, where, (size_t)used);
    putchar('\n');
  }
  report_throttled(p, order, n);
  prof_legend(marks);
  free(order);
  fflush(stdout);
  report_zone_warnings(p);
  prof_free(p);
  return 0;
}
