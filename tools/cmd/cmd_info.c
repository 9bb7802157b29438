/*
** cmd_info.c -- 'capprof info DUMP...': what a dump holds: process, clock
** and overhead calibration, modules, threads and node counts.
*/
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cmd/cmd.h"
#include "cmd/display.h"
#include "model/mismatches.h"
#include "model/profile.h"
#include "model/tool.h"
#include "sym/symbols.h"

static const char *clock_name(uint32_t c)
{
  switch (c) {
  case CPD_CLOCK_TSC: return "rdtsc (invariant TSC)";
  case CPD_CLOCK_MONOTONIC: return "clock_gettime(CLOCK_MONOTONIC)";
  case CPD_CLOCK_QPC: return "QueryPerformanceCounter";
  default: return "unknown";
  }
}

static const char *clock_reads(const struct cpd_dump *d)
{
  if (d->clock_source != CPD_CLOCK_TSC) return "";
  switch (d->clock_reads) {
  case CPD_READS_ORDERED: return ", rdtscp at entry and exit";
  case CPD_READS_MIXED: return ", rdtsc at entry, rdtscp at exit";
  case CPD_READS_FAST: return ", rdtsc at entry and exit";
  default: return "";
  }
}

static const char *os_name(uint32_t os)
{
  return os == CPD_OS_LINUX ? "Linux" : os == CPD_OS_WINDOWS ? "Windows" : "unknown";
}

static const char *arch_name(uint32_t a)
{
  return a == CPD_ARCH_X86_64 ? "x86-64" : a == CPD_ARCH_I386 ? "x86"
       : a == CPD_ARCH_AARCH64 ? "aarch64" : "other";
}

static void print_id(const struct cpd_module *m)
{
  if (m->id_kind == CPD_MODID_GNU_BUILD_ID) {
    printf("build-id ");
    for (uint32_t i = 0; i < m->id_len; i++) printf("%02x", m->id[i]);
  } else if (m->id_kind == CPD_MODID_PDB70 && m->id_len == 20) {
    printf("pdb ");
    for (int i = 0; i < 16; i++) printf("%02X", m->id[i]);
    printf(" age %u", cpd_get32(m->id + 16));
  } else {
    printf("no id");
  }
}

static void print_sampling(const struct cpd_dump *d);

/* API interception ('capprof run'): what was patched, the probe cost of an
** intercepted call, and what was left alone and why. */
static void print_intercept(const struct cpd_dump *d)
{
  const struct cpd_intercept *x = &d->intercept;
  if (!x->present) return;
  char a[32], b[32];
  printf("API interception: %s (libraries: %s), %" PRIu64 " import slots patched in %" PRIu64
         " modules, %u functions seen\n", cpd_intercept_status_text(x->status),
         x->spec && x->spec[0] ? x->spec : "-", x->slots, x->modules, d->napis);
  printf("  probe:     %s per intercepted call in its own time, %s in its caller's time\n",
         fmt_ns(cpd_ticks_to_ns(d, x->inner_mt / 1000.0), a, sizeof a),
         fmt_ns(cpd_ticks_to_ns(d, x->outer_mt / 1000.0), b, sizeof b));
  if (x->unrecorded)
    printf("  %" PRIu64 " intercepted calls passed through unrecorded (no room to record)\n",
           x->unrecorded);
  if (!d->nskips) return;
  printf("  left alone (import slots not patched, so these calls are not seen):\n");
  for (uint32_t i = 0; i < d->nskips; i++) {
    const struct cpd_skip *k = &d->skips[i];
    printf("    %-28s %-18s %4" PRIu64 " slot%s  %s\n", k->symbol, k->library, k->slots,
           k->slots == 1 ? " " : "s", cpd_skip_reason_text(k->reason));
  }
}

static void info_one(const struct cpd_dump *d)
{
  char a[64], b[64], c[64];
  printf("dump:        %s (format %u.%u)\n", d->path, d->version, d->minor);
  printf("process:     pid %" PRIu64 ", parent %" PRIu64 ", %s %s, %u-bit\n", d->pid, d->ppid,
         os_name(d->os), arch_name(d->arch), d->ptr_size * 8);
  printf("executable:  %s\n", d->exe);
  printf("command:    ");
  for (size_t i = 0, start = 1; i < d->cmdline_len; i++) {
    if (start) putchar(' ');
    start = d->cmdline[i] == '\0';
    if (!start) putchar(d->cmdline[i]);
  }
  putchar('\n');
  printf("duration:    %s%s\n", fmt_ns((double)(d->dump_ns - d->start_ns), a, sizeof a),
         d->flags & CPD_F_MERGED ? " (from the first run's start to the last run's dump)" : "");
  double ghz = (double)d->calib_ticks / (double)d->calib_ns;
  printf("clock:       %s%s, %.6f ticks/ns (measured over %s)\n", clock_name(d->clock_source),
         clock_reads(d), ghz, fmt_ns((double)d->calib_ns, a, sizeof a));
  printf("timer read:  %s (average of 2000 back-to-back reads)\n",
         fmt_ns(cpd_ticks_to_ns(d, (double)d->timer_overhead), a, sizeof a));
  struct prof_dump pd = { .d = (struct cpd_dump *)d };
  pd.cal_inner_ns = cpd_ticks_to_ns(d, d->probe_inner_mt / 1000.0);
  pd.cal_outer_ns = cpd_ticks_to_ns(d, d->probe_outer_mt / 1000.0);
  uint64_t leaf = 0;
  prof_probe_model(&pd, &leaf);
  printf("probe:       %s per call in its own time, %s in its caller's time\n"
         "             (calibrated: the median of a loop's rounds, each against the\n"
         "             same calls without hooks)\n",
         fmt_ns(pd.cal_inner_ns, a, sizeof a), fmt_ns(pd.cal_outer_ns, b, sizeof b));
  if (leaf) {
    struct symbolizer *ls = sym_open(d);
    struct sym_info si;
    if (ls) sym_lookup(ls, leaf, &si);
    printf("this run:    x%.2f: %s and %s, as the shortest leaf calls of this run\n"
           "             bound it (%s, %s a call; docs/tool.md)\n", pd.probe_scale,
           fmt_ns(pd.cal_inner_ns * pd.probe_scale, a, sizeof a),
           fmt_ns(pd.cal_outer_ns * pd.probe_scale, b, sizeof b), ls ? si.name : "?",
           fmt_ns(pd.scale_leaf_ns, c, sizeof c));
    sym_close(ls);
  } else {
    printf("this run:    as calibrated: no frequent leaf call was shorter than the\n"
           "             probe's calibrated own time (one would lower it; docs/tool.md)\n");
  }
  printf("             In words: the clock advances %.3f times per nanosecond; every\n"
         "             instrumented call adds %s to its own measured time and %s to\n"
         "             its caller's. Reports subtract both (per call and per call\n"
         "             below, clamped at zero) unless --raw is given.\n",
         ghz, fmt_ns(pd.cal_inner_ns * pd.probe_scale, a, sizeof a),
         fmt_ns(pd.cal_outer_ns * pd.probe_scale, b, sizeof b));
  if (d->throttle_period) {
    char e[32];
    printf("throttled:   1 call in %" PRIu64 " timed at random, x%" PRIu64 "; an untimed call costs its\n"
           "             caller %s, a timed one %s and %s (calibrated as above)\n",
           d->throttle_period, d->throttle_period,
           fmt_ns(cpd_ticks_to_ns(d, d->probe_untimed_mt / 1000.0) * pd.probe_scale, a, sizeof a),
           fmt_ns(cpd_ticks_to_ns(d, d->probe_sinner_mt / 1000.0) * pd.probe_scale, b, sizeof b),
           fmt_ns(cpd_ticks_to_ns(d, d->probe_souter_mt / 1000.0) * pd.probe_scale, e, sizeof e));
  }
  if (d->nunhooked) {
    double first = 0;
    uint32_t counted = 0, known = 0, synced = 0;
    for (uint32_t k = 0; k < d->nunhooked; k++) {
      double ns = cpd_ticks_to_ns(d, (double)d->unhooked[k].ticks);
      if (k == 0 || ns < first) first = ns;
      counted += d->unhooked[k].calls != CPD_UNHOOKED_UNCOUNTED;
      known += !(d->unhooked[k].flags & CPD_UNHOOKED_SYNC_UNKNOWN);
      synced += (d->unhooked[k].flags & CPD_UNHOOKED_SYNCED) != 0;
    }
    printf("unhooked:    %u function%s, their hook calls patched out of the code from %s\n"
           "             after start (CAPPROF_UNHOOK): later calls of %u counted at entry\n",
           d->nunhooked, d->nunhooked == 1 ? "" : "s", fmt_ns(first, a, sizeof a), counted);
    if (known && synced == known)
      printf("             every core serialized after each store (membarrier SYNC_CORE)\n");
    else if (known)
      printf("             %u patched without serializing the other cores (no membarrier)\n",
             known - synced);
  }
  if (d->flags & CPD_F_MERGED)
    printf("merged:      yes, written by 'capprof merge' (times in ns, names stored)\n");
  printf("modules:     %u\n", d->nmodules);
  struct symbolizer *sym = sym_open(d);
  for (uint32_t i = 0; i < d->nmodules; i++) {
    const struct cpd_module *m = &d->modules[i];
    char desc[1024];
    printf("  %#018" PRIx64 " %10" PRIu64 "  %s  ", m->base, m->size, m->path);
    print_id(m);
    printf("\n      %s\n", sym ? sym_module_desc(sym, (int)i, desc, sizeof desc) : "?");
  }
  uint64_t nodes = 0;
  for (uint32_t i = 0; i < d->nthreads; i++) nodes += d->threads[i].node_count;
  printf("threads:     %u, %" PRIu64 " nodes\n", d->nthreads, nodes);
  if (d->ended_merged || d->ended_dropped)
    printf("ended:       %s threads kept one by one, then %s merged into %u records"
           " (by thread name and start function)%s\n",
           fmt_count(d->ended_kept, a, sizeof a), fmt_count(d->ended_merged, b, sizeof b),
           d->nmerges, d->ended_dropped ? "," : "");
  if (d->ended_dropped)
    printf("             %" PRIu64 " ended threads dropped: no memory to merge them\n",
           d->ended_dropped);
  for (uint32_t i = 0; i < d->nthreads; i++) {
    const struct cpd_thread *t = &d->threads[i];
    uint64_t calls = 0;
    for (uint32_t k = 1; k < t->node_count; k++) calls += t->nodes[k].calls;
    printf("  tid %-8" PRIu64 " %-16s %8u nodes %14s %s  %s", t->tid,
           t->name[0] ? t->name : "-", t->node_count, fmt_count(calls, a, sizeof a),
           calls == 1 ? "call " : "calls",
           t->end_ns ? "ended" : "running at dump");
    if (t->open_calls) printf(", %u call%s open", t->open_calls, t->open_calls == 1 ? "" : "s");
    if (t->lost_calls)
      printf(", %" PRIu64 " call%s lost past the node cap", t->lost_calls,
             t->lost_calls == 1 ? "" : "s");
    const struct cpd_merge *m = cpd_thread_merge(d, i);
    if (m && m->kind == CPD_MERGE_OTHERS) {
      printf("\n      merged: %s ended threads (every other name and start function)",
             fmt_count(m->threads, a, sizeof a));
    } else if (m) {
      struct sym_info si = { "?", NULL, 0, "" };
      if (sym && m->start_key) sym_lookup(sym, m->start_key, &si);
      printf("\n      merged: %s ended threads named \"%s\" that started in %s",
             fmt_count(m->threads, a, sizeof a), t->name, m->start_key ? si.name : "-");
    }
    putchar('\n');
    if (t->slow_calls)
      printf("      slow path: %s calls, %s left out of every time (lookups, growth)\n",
             fmt_count(t->slow_calls, a, sizeof a),
             fmt_ns(cpd_ticks_to_ns(d, (double)t->hidden_ticks), b, sizeof b));
  }
  sym_close(sym);
  zone_print_info(stdout, d);
  print_intercept(d);
  print_sampling(d);
}

/* Sampling sessions: how each sampled, what it got, and for CAPPROF_SAMPLE
** whether stack walks worked (frame pointers). */
static void print_sampling(const struct cpd_dump *d)
{
  char a[64], b[64], c[64];
  for (uint32_t i = 0; i < d->nsessions; i++) {
    const struct cpd_sample_session *s = &d->sessions[i];
    int proc = s->kind == CPD_SK_PROCESS;
    printf("sampling:    %s \"%s\": %s every ", proc ? "process-wide" : "profile object",
           s->name, cpd_source_name(s->source));
    if (s->unit == CPD_SS_UNIT_NS) printf("%s of CPU time", fmt_ns((double)s->interval, a, sizeof a));
    else printf("%s events", fmt_count(s->interval, a, sizeof a));
    printf("%s\n", s->flags & CPD_SS_F_CLOSED ? " (closed)" : "");
    if (s->flags & CPD_SS_F_FAILED) {
      printf("             did not run: %s\n", s->note);
      continue;
    }
    printf("             method: %s\n", s->method_text[0] ? s->method_text : "never started");
    if (s->note[0]) printf("             %s\n", s->note);
    if (proc) {
      printf("             %s samples, %s recorded, %s lost (no room)\n",
             fmt_count(s->samples, a, sizeof a), fmt_count(s->hits, b, sizeof b),
             fmt_count(s->lost, c, sizeof c));
      uint64_t own = 0, probe = 0;
      for (uint32_t k = 0; k < d->nthreads; k++)
        for (uint32_t j = 0; j < d->threads[k].node_count; j++) {
          if (d->threads[k].samples) own += d->threads[k].samples[j];
          if (d->threads[k].probe_samples) probe += d->threads[k].probe_samples[j];
        }
      if (own + probe && d->minor < 4)      /* before format 1.4: not told apart */
        printf("             charged to call paths: %s (the program's code and capprof's\n"
               "             hooks together: this dump's runtime did not tell them apart)\n",
               fmt_count(own, a, sizeof a));
      else if (own + probe)
        printf("             charged to call paths: %s in the program's code, %s (%s) in\n"
               "             capprof's hooks (probe cost, left out of cpu self)\n",
               fmt_count(own, a, sizeof a), fmt_count(probe, b, sizeof b),
               fmt_pct((double)probe, (double)(own + probe), c, sizeof c));
      uint64_t bypc = 0;
      for (uint32_t k = 0; k < d->nthreads; k++)
        for (uint32_t j = 0; j < d->threads[k].npcs; j++) bypc += d->threads[k].pcs[j].count;
      if (own && bypc)                      /* format 1.5, not merged */
        printf("             program counters kept with the call path: %s of the program's\n"
               "             (a callee's code outside its hooks is charged to the callee)\n",
               fmt_pct((double)bypc, (double)own, a, sizeof a));
      if (s->samples && s->walked * 10 >= s->samples)
        printf("             stacks: frame-pointer walks found callers for %s of the samples\n",
               fmt_pct((double)s->walked, (double)s->samples, a, sizeof a));
      else if (s->samples)
        printf("             stacks: flat profile only: frame-pointer walks found callers for\n"
               "             %s of the samples (the program keeps no frame pointers; build it\n"
               "             with -fno-omit-frame-pointer for sampled call trees)\n",
               fmt_pct((double)s->walked, (double)s->samples, a, sizeof a));
    } else {
      printf("             range %#" PRIx64 "-%#" PRIx64 ", %u buckets of %llu bytes; "
             "%s samples, %s in the range\n", s->lo, s->hi, s->nbuckets,
             1ull << (s->shift & 63), fmt_count(s->samples, a, sizeof a),
             fmt_count(s->hits, b, sizeof b));
    }
  }
  uint64_t nodes = 0;
  for (uint32_t i = 0; i < d->nsample_threads; i++) nodes += d->sample_threads[i].nnodes;
  if (d->nsample_threads)
    printf("sampled:     %u threads, %" PRIu64 " stack nodes\n", d->nsample_threads, nodes);
}

int cmd_info(int argc, char **argv)
{
  static const struct option longopts[] = {
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
  };
  int c;
  opterr = 0;
  while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
    if (c != 'h') return tool_bad_option("info", argv, c);
    printf("usage: capprof info DUMP...\n\n"
           "What a dump holds: process, clock and probe calibration, modules and\n"
           "how each is symbolized, threads with their node and call counts.\n");
    return 0;
  }
  if (optind >= argc) return 1 + tool_error("info: no dump given (usage: capprof info DUMP...)");
  display_start(1);
  int status = 0;
  for (int i = optind; i < argc; i++) {
    struct cpd_dump *d = tool_load(argv[i]);
    if (!d) { status = 1; continue; }
    if (i > optind) putchar('\n');
    info_one(d);
    cpd_free(d);
  }
  return status;
}
