/*
** test_profile.c -- CMocka suite for the tool's model: the compensation
** formula, exclusive times, recursion in the flat profile, merging trees by
** function, the dump writer/reader round trip and the reader's rejection of
** every truncation and of hostile counts.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "model/cpd_writer.h"
#include "model/filter.h"
#include "model/profile.h"

/* A dump with 1 tick = 1 ns, inner 10 ns and outer 20 ns per call, one module
** without a file (names are synth+0x...), and one thread holding nodes. */
struct fixture {
  struct cpd_dump d;
  struct cpd_module m;
  struct cpd_thread t;
  struct cpd_node nodes[16];
};

static void setup_dump(struct fixture *f, const struct cpd_node *nodes, uint32_t n)
{
  memset(f, 0, sizeof *f);
  f->m = (struct cpd_module){ 0x1000, 0x1000, CPD_MODID_NONE, 0, NULL, "synth", "" };
  f->d.exe = "synth";
  f->d.cmdline = "";
  f->d.calib_ticks = f->d.calib_ns = 1000;
  f->d.probe_inner_mt = 10000;
  f->d.probe_outer_mt = 20000;
  f->d.nmodules = 1;
  f->d.modules = &f->m;
  f->d.nthreads = 1;
  f->d.threads = &f->t;
  f->t.tid = 1;
  f->t.name = "main";
  f->t.node_count = n;
  f->t.nodes = f->nodes;
  memcpy(f->nodes, nodes, n * sizeof *nodes);
}

/* A copy the profile can own, through the writer and the reader. */
static struct cpd_dump *roundtrip(const struct cpd_dump *d)
{
  unsigned char *buf;
  size_t len;
  struct cpd_dump *out;
  char err[128];
  assert_int_equal(cpd_serialize(d, &buf, &len), 0);
  assert_int_equal(cpd_parse(buf, len, &out, err, sizeof err), 0);
  free(buf);
  return out;
}

#define ROOT { CPD_KEY_ROOT, CPD_NO_PARENT, 0, 0, 0, 0, 0 }
#define F(a) (0x1000 + (a))

/* main(1 call, 1000 ns) -> a(10 calls, 600 ns) -> b(20 calls, 200 ns) */
static const struct cpd_node chain[] = {
  ROOT,
  { F(0x10), 0, 0, 1, 1000, 1000, 1000 },
  { F(0x20), 1, 0, 10, 600, 40, 90 },
  { F(0x30), 2, 0, 20, 200, 5, 15 },
};

/* main -> four leaves of 2000 calls: 5, 6, 8 and 30 ns a call. The two
** shortest are skipped (calls cut short by longjmp look like that), so the
** third, 8 ns, bounds the probe: inner 10 -> 8, outer 20 -> 16. */
static const struct cpd_node leaves[] = {
  ROOT,
  { F(0x10), 0, 0, 1, 300000, 300000, 300000 },
  { F(0x20), 1, 0, 2000, 10000, 5, 5 },
  { F(0x30), 1, 0, 2000, 12000, 6, 6 },
  { F(0x40), 1, 0, 2000, 16000, 8, 8 },
  { F(0x50), 1, 0, 2000, 60000, 30, 30 },
};

static void probe_scaled_by_leaves(void **state)
{
  (void)state;
  struct fixture f;
  setup_dump(&f, leaves, 6);
  struct profile *p = prof_new();
  assert_int_equal(prof_add_dump(p, roundtrip(&f.d)), 0);
  const struct prof_dump *pd = &p->dumps[0];
  assert_true(pd->probe_scale > 0.799 && pd->probe_scale < 0.801);
  assert_true(pd->inner_ns > 7.99 && pd->inner_ns < 8.01);
  assert_true(pd->outer_ns > 15.99 && pd->outer_ns < 16.01);
  const struct prof_node *n = p->threads[0].nodes;
  assert_true(n[4].t.incl == 0);                       /* 16000 - 2000 * 8 */
  assert_true(n[5].t.incl == 44000);                   /* 60000 - 2000 * 8 */
  /* main: 300000 - 8 - 8000 * 16 = 171992 */
  assert_true(n[1].t.incl > 171991.9 && n[1].t.incl < 171992.1);
  prof_free(p);

  /* A third-shortest leaf at 12 ns, above the calibrated 10 ns, bounds
  ** nothing (its body is in it): the calibration stands, not scaled up. */
  f.nodes[4].incl = 24000;
  p = prof_new();
  assert_int_equal(prof_add_dump(p, roundtrip(&f.d)), 0);
  assert_true(p->dumps[0].probe_scale == 1.0 && p->dumps[0].inner_ns == 10.0);
  prof_free(p);

  /* A throttled leaf: its incl covers its 2000 timed calls, not all its
  ** 200000 calls; dividing by all gave a bound of 0.08 ns and a scale of
  ** 0.008 (Lua built in GCC's fentry mode showed x0.04). */
  setup_dump(&f, leaves, 6);
  f.nodes[4].calls = 200000;
  f.nodes[4].flags = CPD_NODE_THROTTLED;
  struct cpd_throttled thr = { 0, 4, 1000, 2000 };
  f.d.throttle_calls = 1000;
  f.d.throttle_ns = 20;
  f.d.nthrottled = 1;
  f.d.throttled = &thr;
  p = prof_new();
  assert_int_equal(prof_add_dump(p, roundtrip(&f.d)), 0);
  assert_true(p->dumps[0].probe_scale > 0.799 && p->dumps[0].probe_scale < 0.801);
  prof_free(p);

  /* Fewer than 1000 calls: no bound either. */
  setup_dump(&f, leaves, 6);
  for (int i = 2; i < 6; i++) f.nodes[i].calls = 999;
  p = prof_new();
  assert_int_equal(prof_add_dump(p, roundtrip(&f.d)), 0);
  assert_true(p->dumps[0].probe_scale == 1.0);
  prof_free(p);
}

/* A dump of tree (throttled_tree below) in which node 3 was throttled at its 2000th call, with
** format 1.3's costs: period 32, untimed 3 ns, sampled 12 and 24 ns. */
static void setup_throttled(struct fixture *f, const struct cpd_node *tree, uint32_t n,
                            struct cpd_throttled *thr)
{
  setup_dump(f, tree, n);
  *thr = (struct cpd_throttled){ 0, 3, 500, 2000 };
  f->d.throttle_calls = 2000;
  f->d.nthrottled = 1;
  f->d.throttled = thr;
  f->d.throttle_period = 32;
  f->d.probe_untimed_mt = 3000;          /* ns: 1 tick = 1 ns */
  f->d.probe_sinner_mt = 12000;
  f->d.probe_souter_mt = 24000;
}

/* main -> a -> b, b throttled at its 2000th of 20000 calls. In a dump of
** format 1.3 (a period P) b's later calls were timed one in 32 and scaled:
** its incl covers all of them, its own probe is 2000 timed inners and 18000
** sampled ones, and a pays 2000 outers, 18000/32 sampled outers and the
** rest untimed. Before 1.3 (no period) b's incl covers its first 2000
** calls and a pays their outers only. */
static const struct cpd_node throttled_tree[] = {
  ROOT,
  { F(0x10), 0, 0, 1, 2000000, 2000000, 2000000 },
  { F(0x20), 1, 0, 100, 1500000, 10000, 20000 },
  { F(0x30), 2, CPD_NODE_THROTTLED, 20000, 600000, 20, 90 },
};

static void sampled_throttling(void **state)
{
  (void)state;
  struct fixture f;
  struct cpd_throttled thr;
  setup_throttled(&f, throttled_tree, 4, &thr);
  struct profile *p = prof_new();
  assert_int_equal(prof_add_dump(p, roundtrip(&f.d)), 0);
  const struct prof_dump *pd = &p->dumps[0];
  assert_true(pd->period == 32 && pd->untimed_ns == 3.0 && pd->sinner_ns == 12.0 &&
              pd->souter_ns == 24.0);
  const struct prof_node *n = p->threads[0].nodes;
  assert_true(n[3].timed == 20000 && n[3].throttled_at == 2000);
  /* b: 600000 - (2000 * 10 + 18000 * 12) = 364000 */
  assert_true(n[3].t.incl > 363999.9 && n[3].t.incl < 364000.1);
  /* a: 1500000 - 100 * 10 - 2000 * 20 - 18000 * (24 / 32 + 31 / 32 * 3)
  **  = 1500000 - 1000 - 40000 - 65812.5 = 1393187.5 (an outer holds the
  ** callee's inner) */
  assert_true(n[2].t.incl > 1393187.4 && n[2].t.incl < 1393187.6);
  assert_true(n[2].probe_ns > 106812.4 && n[2].probe_ns < 106812.6);
  prof_free(p);

  f.d.throttle_period = 0;               /* a dump before format 1.3 */
  p = prof_new();
  assert_int_equal(prof_add_dump(p, roundtrip(&f.d)), 0);
  n = p->threads[0].nodes;
  assert_true(n[3].timed == 2000 && n[3].throttled_at == 2000);
  /* b: 600000 - 2000 * 10; a: 1500000 - 1000 - 2000 * 20 */
  assert_true(n[3].t.incl > 579999.9 && n[3].t.incl < 580000.1);
  assert_true(n[2].t.incl > 1458999.9 && n[2].t.incl < 1459000.1);
  prof_free(p);
}

/* A caller whose throttled callee's raw time (its scaled samples, each with
** a sampled inner in it) exceeds the caller's own raw inclusive time: its
** raw exclusive time is below 0 (0 shown raw) and compensation raises it to
** a small positive figure, made of the difference of two large estimates:
** marked as mostly probe cost, as a figure lowered as far would be. Lua's
** sort_comp showed 9% of the time, unmarked, where perf sees 0.5%. */
static void raised_self_marked(void **state)
{
  (void)state;
  struct fixture f;
  struct cpd_throttled thr;
  setup_throttled(&f, throttled_tree, 4, &thr);
  f.nodes[2].incl = 500000;
  f.nodes[2].min = 4000;
  f.nodes[2].max = 6000;
  struct profile *p = prof_new();
  assert_int_equal(prof_add_dump(p, roundtrip(&f.d)), 0);
  const struct prof_node *n = p->threads[0].nodes;
  /* a: incl 500000 - 1000 - 105812.5 = 393187.5, b: 364000; raw self
  ** 500000 - 600000 < 0 */
  assert_true(n[2].t.excl > 29187.4 && n[2].t.excl < 29187.6);
  assert_true(n[2].t.excl_raw == 0);
  assert_true(n[2].t.excl_adj > 129187.4 && n[2].t.excl_adj < 129187.6);
  assert_false(prof_unreliable(n[2].t.excl, n[2].t.excl_raw));   /* the old test */
  assert_true(prof_unreliable(n[2].t.excl, prof_excl_basis(&n[2].t)));
  prof_flat(p);
  const struct prof_func *fa = NULL;
  for (uint32_t i = 0; i < p->nfuncs; i++)
    if (p->funcs[i].calls == 100) fa = &p->funcs[i];
  assert_non_null(fa);
  assert_true(prof_unreliable(fa->t.excl, prof_excl_basis(&fa->t)));
  char buf[40];
  int marks = 0;
  assert_string_equal(prof_fmt_ns_basis(fa->t.excl, fa->t.excl_raw, prof_excl_basis(&fa->t), 0,
                                        &marks, buf, sizeof buf), "~29.2 us");
  assert_string_equal(prof_fmt_ns_basis(fa->t.excl, fa->t.excl_raw, prof_excl_basis(&fa->t), 1,
                                        &marks, buf, sizeof buf), "0 ns");
  assert_int_equal(marks, 1);
  /* b, a leaf, as before: 364000 left of 600000 raw, not marked */
  assert_false(prof_unreliable(n[3].t.excl, prof_excl_basis(&n[3].t)));
  prof_free(p);

  /* The same caller with 1000000 raw: raw self 400000, compensated
  ** 529187.5; moved by 129187.5, not marked. */
  setup_throttled(&f, throttled_tree, 4, &thr);
  f.nodes[2].incl = 1000000;
  p = prof_new();
  assert_int_equal(prof_add_dump(p, roundtrip(&f.d)), 0);
  n = p->threads[0].nodes;
  assert_true(n[2].t.excl > 529187.4 && n[2].t.excl < 529187.6);
  assert_false(prof_unreliable(n[2].t.excl, prof_excl_basis(&n[2].t)));
  prof_free(p);
}

static void unreliable_marks(void **state)
{
  (void)state;
  assert_true(prof_unreliable(10, 40));     /* 30 subtracted, 10 left */
  assert_false(prof_unreliable(10, 30));    /* 20 subtracted: twice what is left */
  assert_false(prof_unreliable(0, 0));
  assert_true(prof_unreliable(0, 5));       /* all of it was probe cost */
  char buf[40];
  int marks = 0;
  assert_string_equal(prof_fmt_ns(10, 40, 0, &marks, buf, sizeof buf), "~10 ns");
  assert_string_equal(prof_fmt_ns(10, 40, 1, &marks, buf, sizeof buf), "40 ns");
  assert_string_equal(prof_fmt_ns(10, 20, 0, &marks, buf, sizeof buf), "10 ns");
  assert_int_equal(marks, 1);
}

/* The CALIBRATION section's per-thread figures survive writer and reader;
** a dump without the section reads them as 0. */
static void calibration_section(void **state)
{
  (void)state;
  struct fixture f;
  setup_dump(&f, chain, 4);
  struct cpd_dump *d = roundtrip(&f.d);
  assert_true(d->threads[0].hidden_ticks == 0 && d->threads[0].slow_calls == 0);
  cpd_free(d);
  f.t.hidden_ticks = 123456;
  f.t.slow_calls = 789;
  d = roundtrip(&f.d);
  assert_true(d->threads[0].hidden_ticks == 123456 && d->threads[0].slow_calls == 789);
  cpd_free(d);
}

static void compensation(void **state)
{
  (void)state;
  struct fixture f;
  setup_dump(&f, chain, 4);
  struct profile *p = prof_new();
  assert_int_equal(prof_add_dump(p, roundtrip(&f.d)), 0);
  const struct prof_node *n = p->threads[0].nodes;
  /* b: 200 - 20*10 - 0*20 = 0 */
  assert_true(n[3].t.incl == 0);
  /* a: 600 - 10*10 - 20*20 = 100; excl = 100 - 0 */
  assert_true(n[2].t.incl == 100);
  assert_true(n[2].t.excl == 100);
  /* main: 1000 - 1*10 - 30*20 = 390; excl = 390 - 100 = 290 */
  assert_true(n[1].t.incl == 390);
  assert_true(n[1].t.excl == 290);
  /* raw exclusive = I - sum of children's I */
  assert_true(n[1].t.excl_raw == 400);
  assert_true(n[2].t.excl_raw == 400);
  /* min loses inner and is at most the average; max loses inner and an
  ** average call's descendants' probes, and is at least the average */
  /* b's 15 - 10 = 5 is more than all its calls' compensated 0 together */
  assert_true(n[3].t.min == 0 && n[3].t.max == 0);
  assert_true(n[2].t.min == 10 && n[2].t.max == 40);           /* avg 10; 90 - 10 - 2*20 */
  assert_true(n[2].t.max_raw == 90);
  assert_true(n[1].probe_ns == 610);                           /* 1*10 + 30*20 */
  assert_true(n[0].t.incl == 390);
  /* 610 of the 1000 ns measured were probe (report's note above 2/3) */
  double measured, subtracted, share = prof_probe_share(p, &measured, &subtracted);
  assert_true(share > 0.6099 && share < 0.6101);
  assert_true(measured == 1000 && subtracted == 610);
  prof_free(p);
  p = prof_new();
  assert_true(prof_probe_share(p, NULL, NULL) == 0);           /* nothing measured */
  prof_free(p);
}

/* main -> r -> r -> r (recursion), main -> r: r's flat inclusive counts the
** outermost activations only. */
static const struct cpd_node recursive[] = {
  ROOT,
  { F(0x10), 0, 0, 1, 10000, 0, 0 },
  { F(0x20), 1, 0, 1, 5000, 0, 0 },
  { F(0x20), 2, 0, 1, 3000, 0, 0 },
  { F(0x20), 3, 0, 1, 1000, 0, 0 },
  { F(0x20), 1, 0, 2, 2000, 0, 0 },
};

static void recursion(void **state)
{
  (void)state;
  struct fixture f;
  setup_dump(&f, recursive, 6);
  f.d.probe_inner_mt = f.d.probe_outer_mt = 0;
  struct profile *p = prof_new();
  assert_int_equal(prof_add_dump(p, roundtrip(&f.d)), 0);
  prof_flat(p);
  uint32_t r = prof_find_func(p, "synth+0x20");
  assert_int_not_equal(r, PROF_NONE);
  assert_int_equal(p->funcs[r].calls, 5);
  assert_true(p->funcs[r].t.incl == 7000);       /* 5000 + 2000, not 11000 */
  assert_true(p->funcs[r].t.excl == 7000);       /* 2000+2000+1000 + 2000 */
  uint32_t m = prof_find_func(p, "synth+0x10");
  assert_true(p->funcs[m].t.excl == 3000);
  prof_free(p);
}

/* main -> a (1,000 calls, one of them long) -> b (300,000 calls). The
** compensated longest call of a loses only an average call's share of b's
** probes (300 calls) while the long call made nearly all of them: before
** the clamp it came out at 7.99 ms in a thread of 3.98 ms. */
static const struct cpd_node long_call[] = {
  ROOT,
  { F(0x10), 0, 0, 1, 10000000, 10000000, 10000000 },
  { F(0x20), 1, 0, 1000, 9000000, 100, 8000000 },
  { F(0x30), 2, 0, 300000, 500000, 1, 100 },
};

static void max_within_thread(void **state)
{
  (void)state;
  struct fixture f;
  setup_dump(&f, long_call, 4);
  struct profile *p = prof_new();
  assert_int_equal(prof_add_dump(p, roundtrip(&f.d)), 0);
  prof_flat(p);
  const struct prof_thread *t = &p->threads[0];
  assert_true(t->nodes[0].t.incl == 3979990);   /* 10 ms - 10 ns - 301,000 * 20 ns */
  for (uint32_t i = 1; i < t->nnodes; i++) {
    const struct prof_node *n = &t->nodes[i];
    assert_true(n->t.max <= n->t.incl && n->t.max <= t->nodes[0].t.incl);
    assert_true(n->t.max_raw <= n->t.incl_raw);
    assert_true(n->t.min <= n->t.max);
    if (n->parent) assert_true(n->t.max <= t->nodes[n->parent].t.max);
  }
  assert_true(t->nodes[2].t.max == 2990000);    /* a's own inclusive time */
  uint32_t a = prof_find_func(p, "synth+0x20");
  assert_true(p->funcs[a].t.max <= t->nodes[0].t.incl);
  /* the mean inclusive call lies between the shortest and the longest */
  double avg = prof_per_call(p->funcs[a].incl_all, p->funcs[a].calls);
  assert_true(p->funcs[a].t.min <= avg && avg <= p->funcs[a].t.max);
  prof_free(p);
}

/* Two dumps whose module moved (ASLR): the same functions at other
** addresses merge into one path. */
static void merge_by_symbol(void **state)
{
  (void)state;
  struct fixture a, b;
  setup_dump(&a, chain, 4);
  setup_dump(&b, chain, 4);
  b.m.base = 0x9000;
  for (int i = 1; i < 4; i++) b.nodes[i].key += 0x8000;
  struct profile *p = prof_new();
  assert_int_equal(prof_add_dump(p, roundtrip(&a.d)), 0);
  assert_int_equal(prof_add_dump(p, roundtrip(&b.d)), 0);
  assert_int_equal(p->nfuncs, 4);                /* root + 3 */
  uint32_t both[2] = { 0, 1 };
  struct prof_thread t;
  assert_int_equal(prof_merge_threads(p, both, 2, &t), 0);
  assert_int_equal(t.nnodes, 4);
  assert_int_equal(t.nodes[3].calls, 40);
  assert_true(t.nodes[2].t.incl == 200);
  assert_true(t.nodes[1].t.incl_raw == 2000);
  assert_true(t.nodes[1].t.excl == 580);
  prof_thread_free(&t);
  prof_free(p);
}

static void writer_roundtrip(void **state)
{
  (void)state;
  struct fixture f;
  setup_dump(&f, chain, 4);
  struct cpd_dump *d = roundtrip(&f.d);
  assert_int_equal(d->nthreads, 1);
  assert_int_equal(d->threads[0].node_count, 4);
  assert_memory_equal(d->threads[0].nodes, chain, sizeof chain);
  assert_string_equal(d->modules[0].path, "synth");
  assert_int_equal(d->probe_outer_mt, 20000);
  cpd_free(d);
}

static void truncations_rejected(void **state)
{
  (void)state;
  struct fixture f;
  setup_dump(&f, chain, 4);
  unsigned char *buf;
  size_t len;
  struct cpd_dump *out;
  char err[128];
  assert_int_equal(cpd_serialize(&f.d, &buf, &len), 0);
  for (size_t k = 0; k < len; k++) {
    assert_true(cpd_parse(buf, k, &out, err, sizeof err) < 0);
    assert_null(out);
    assert_true(err[0] != '\0');
  }
  /* a thread claiming 2^32-1 nodes, and a parent pointing forward */
  unsigned char *copy = malloc(len);
  memcpy(copy, buf, len);
  size_t table = cpd_get64(copy + CPD_H_TABLE_OFF);
  for (uint32_t i = 0; i < cpd_get32(copy + CPD_H_NSECTIONS); i++) {
    unsigned char *e = copy + table + i * CPD_SECTION_SIZE;
    if (cpd_get32(e) == CPD_SEC_THREADS) cpd_put32(copy + cpd_get64(e + 8) + 4 + 40, 0xFFFFFFFF);
    if (cpd_get32(e) == CPD_SEC_NODES) {
      memcpy(buf, copy, len);
      cpd_put32(buf + cpd_get64(e + 8) + 2 * CPD_NODE_SIZE + 8, 3);
      assert_int_equal(cpd_parse(buf, len, &out, err, sizeof err), CAPPROF_ECORRUPT);
    }
  }
  assert_int_equal(cpd_parse(copy, len, &out, err, sizeof err), CAPPROF_ECORRUPT);
  free(copy);
  free(buf);
}

/* UNHOOKED's flags (format 1.8): whether each unhooked function's patch
** was followed by core serializations, through the writer and the reader,
** into the profile; not known in a 1.7 record (24 bytes) or where the
** writer did not know it (capprof merge of such a dump): never "not
** synced" for "not said". */
static void unhooked_sync_flags(void **state)
{
  (void)state;
  struct fixture f;
  setup_dump(&f, chain, 4);
  struct cpd_unhooked u = { F(0x20), 5, 100, CPD_UNHOOKED_SYNCED };
  f.d.nunhooked = 1;
  f.d.unhooked = &u;
  struct cpd_dump *d = roundtrip(&f.d);
  assert_true(d->unhooked[0].flags == CPD_UNHOOKED_SYNCED);
  struct profile *p = prof_new();
  assert_int_equal(prof_add_dump(p, d), 0);
  prof_flat(p);
  const struct prof_func *fn = &p->funcs[prof_find_func(p, "synth+0x20")];
  assert_true(fn->unhooked_ns > 0 && !fn->unsynced && !fn->sync_unknown);
  prof_free(p);

  u.flags = 0;                                     /* patched without */
  p = prof_new();
  assert_int_equal(prof_add_dump(p, roundtrip(&f.d)), 0);
  prof_flat(p);
  fn = &p->funcs[prof_find_func(p, "synth+0x20")];
  assert_true(fn->unsynced && !fn->sync_unknown);
  prof_free(p);

  u.flags = CPD_UNHOOKED_SYNC_UNKNOWN;             /* not known: stays so */
  d = roundtrip(&f.d);
  assert_true(d->unhooked[0].flags == CPD_UNHOOKED_SYNC_UNKNOWN);
  assert_int_equal(d->unhooked[0].calls, 100);
  p = prof_new();
  assert_int_equal(prof_add_dump(p, d), 0);
  prof_flat(p);
  fn = &p->funcs[prof_find_func(p, "synth+0x20")];
  assert_true(fn->sync_unknown && !fn->unsynced);
  prof_free(p);

  /* a 1.7 record: 24 bytes, no flags */
  u.flags = CPD_UNHOOKED_SYNCED;
  unsigned char *buf;
  size_t len;
  char err[128];
  assert_int_equal(cpd_serialize(&f.d, &buf, &len), 0);
  size_t table = cpd_get64(buf + CPD_H_TABLE_OFF);
  int found = 0;
  for (uint32_t i = 0; i < cpd_get32(buf + CPD_H_NSECTIONS); i++) {
    unsigned char *e = buf + table + i * CPD_SECTION_SIZE;
    if (cpd_get32(e) != CPD_SEC_UNHOOKED) continue;
    assert_int_equal(cpd_get32(buf + cpd_get64(e + 8) + 4), CPD_UNHOOKED_REC_SIZE);
    cpd_put32(buf + cpd_get64(e + 8) + 4, CPD_UNHOOKED_REC_SIZE_CALLS);
    found = 1;
  }
  assert_true(found);
  assert_int_equal(cpd_parse(buf, len, &d, err, sizeof err), 0);
  assert_true(d->unhooked[0].flags == CPD_UNHOOKED_SYNC_UNKNOWN);
  assert_int_equal(d->unhooked[0].calls, 100);
  cpd_free(d);
  free(buf);
}

/* What was unhooked is a fact of the process (issue 36): thread A called f
** before it was unhooked (a node of f under its caller), thread B only
** after, through f's counting stub in an older dump without per-path
** counts (no node of f). B's samples whose program counter is in f, on
** the caller's node, go to f under that caller in B too, not to the
** caller. */
static void unhooked_in_every_thread(void **state)
{
  (void)state;
  static const struct cpd_node a_nodes[] = {
    ROOT,
    { F(0x10), 0, 0, 1, 1000, 1000, 1000 },
    { F(0x30), 1, 0, 100, 100, 1, 1 },
  };
  static const struct cpd_node b_nodes[] = {
    ROOT,
    { F(0x10), 0, 0, 1, 1000, 1000, 1000 },
  };
  struct fixture f;
  setup_dump(&f, a_nodes, 3);
  struct cpd_thread th[2];
  th[0] = f.t;
  th[1] = f.t;
  th[1].tid = 2;
  th[1].name = "B";
  th[1].node_count = 2;
  th[1].nodes = (struct cpd_node *)b_nodes;
  f.d.nthreads = 2;
  f.d.threads = th;
  struct cpd_unhooked u = { F(0x30), 5, 0, CPD_UNHOOKED_SYNCED };
  f.d.nunhooked = 1;
  f.d.unhooked = &u;
  struct cpd_dump *d = roundtrip(&f.d);
  assert_int_equal(d->nthreads, 2);
  /* B's samples: 70 on its caller's node, 60 of them with the pc in f */
  d->threads[1].samples = calloc(2, sizeof *d->threads[1].samples);
  d->threads[1].pcs = calloc(1, sizeof *d->threads[1].pcs);
  assert_non_null(d->threads[1].samples);
  assert_non_null(d->threads[1].pcs);
  d->threads[1].samples[1] = 70;
  d->threads[1].pcs[0] = (struct cpd_node_pc){ 1, F(0x30), 60 };
  d->threads[1].npcs = 1;
  struct profile *p = prof_new();
  assert_int_equal(prof_add_dump(p, d), 0);
  const struct prof_thread *b = &p->threads[1];
  assert_int_equal(b->tid, 2);
  uint32_t fn = prof_find_func(p, "synth+0x30"), found = 0;
  assert_true(fn != PROF_NONE);
  for (uint32_t i = 1; i < b->nnodes; i++) {
    if (b->nodes[i].func != fn) continue;
    found = 1;
    assert_int_equal(b->nodes[i].parent, 1);
    assert_int_equal(b->nodes[i].s_self, 60);
  }
  assert_true(found);
  assert_int_equal(b->nodes[1].s_self, 10);
  prof_free(p);
}

/* Sampled stacks whose frame-pointer walk went astray (sample.unhook: a
** program without frame pointers, a "caller" at the executable's load
** address minus one, named by a bare address). A caller frame in no module
** is no return address minus one: it and the frames outer to it are
** dropped, the frames below it kept under the root. Addresses at both ends
** of the module [0x1000, 0x2000): 0xfff and 0x2000 are in none. A pc in no
** module is still a pc. */
static void astray_callers_dropped(void **state)
{
  (void)state;
  struct fixture f;
  setup_dump(&f, chain, 1);
  struct cpd_snode sn[] = {
    { 0, CPD_NO_PARENT, 0 },
    { 0x1300, 0, 0 },                           /* 1: outer to the astray frame */
    { 0xFFF, 1, 0 },                            /* 2: astray, one below the module */
    { 0x1100, 2, 5 },                           /* 3: pc under it */
    { 0x1200, 0, 0 },                           /* 4: a real caller */
    { 0x1100, 4, 2 },                           /* 5: pc under it */
    { 0x2000, 4, 0 },                           /* 6: astray, the module's end */
    { 0x1180, 6, 4 },                           /* 7: pc under it */
    { 0x2000, 0, 3 },                           /* 8: a pc in no module */
  };
  struct cpd_sample_thread st = { 7, CPD_NO_PARENT, 9, 14, 0, "sampled", sn };
  struct cpd_sample_session ss = { .kind = CPD_SK_PROCESS, .samples = 14, .hits = 14,
                                   .name = "", .method_text = "", .note = "" };
  f.d.nthreads = 0;
  f.d.nsessions = 1;
  f.d.sessions = &ss;
  f.d.nsample_threads = 1;
  f.d.sample_threads = &st;
  struct cpd_dump *d = roundtrip(&f.d);
  assert_int_equal(d->nsample_threads, 1);
  assert_int_equal(d->sample_threads[0].nnodes, 9);
  struct profile *p = prof_new();
  assert_int_equal(prof_add_dump(p, d), 0);
  assert_int_equal(prof_find_func(p, "0xfff"), PROF_NONE);
  assert_int_equal(prof_find_func(p, "synth+0x300"), PROF_NONE);
  uint32_t pc = prof_find_func(p, "synth+0x100"), pc2 = prof_find_func(p, "synth+0x180");
  uint32_t caller = prof_find_func(p, "synth+0x200"), none = prof_find_func(p, "0x2000");
  assert_true(pc != PROF_NONE && pc2 != PROF_NONE && caller != PROF_NONE && none != PROF_NONE);
  assert_int_equal(p->funcs[pc].pc.self, 7);
  assert_int_equal(p->funcs[pc].pc.incl, 7);
  assert_int_equal(p->funcs[pc2].pc.self, 4);
  assert_int_equal(p->funcs[caller].pc.incl, 2);  /* not the 4 read through 0x2000 */
  assert_int_equal(p->funcs[none].pc.self, 3);
  assert_int_equal(p->funcs[none].pc.incl, 3);
  /* the sampled tree: root -> 0x100 (5), root -> 0x200 -> 0x100 (2),
  ** root -> 0x180 (4), root -> 0x2000 (3) */
  assert_int_equal(p->nthreads, 1);
  const struct prof_thread *t = &p->threads[0];
  assert_true(t->sampled);
  assert_int_equal(t->nnodes, 6);
  uint32_t seen = 0;
  for (uint32_t i = 1; i < t->nnodes; i++) {
    const struct prof_node *n = &t->nodes[i];
    uint32_t under = n->parent == 0 ? PROF_NONE : t->nodes[n->parent].func;
    if (n->func == pc && under == PROF_NONE) { assert_int_equal(n->s_self, 5); seen |= 1; }
    if (n->func == pc && under == caller) { assert_int_equal(n->s_self, 2); seen |= 2; }
    if (n->func == pc2 || n->func == none) {
      assert_int_equal(n->parent, 0);
      assert_int_equal(n->s_self, n->func == pc2 ? 4 : 3);
      seen |= n->func == pc2 ? 4 : 8;
    }
    if (n->func == caller) { assert_int_equal(n->parent, 0); seen |= 16; }
  }
  assert_int_equal(seen, 31);
  prof_free(p);
}

/* --focus and --hide patterns: the qualified name matches without the
** return type of template functions and without the parameters. */
static void focus_qualified_names(void **state)
{
  (void)state;
  assert_true(filter_name_matches("fib", "fib(int)"));
  assert_true(filter_name_matches("fib", "fib"));
  assert_true(filter_name_matches("ns::f*", "int ns::f<int>(int)"));
  assert_true(filter_name_matches("ns::f<int>", "int ns::f<int>(int) const"));
  assert_true(filter_name_matches("ns::g*", "unsigned long ns::g<unsigned long>(unsigned long)"));
  assert_true(filter_name_matches("std::vector<*>::push_back",
                                  "std::vector<int, std::allocator<int> >::push_back(int const&)"));
  assert_true(filter_name_matches("(anonymous namespace)::helper",
                                  "(anonymous namespace)::helper(int)"));
  assert_true(filter_name_matches("ns::X::operator()", "void ns::X::operator()<int>(int)") ||
              filter_name_matches("ns::X::operator()*", "void ns::X::operator()<int>(int)"));
  assert_true(filter_name_matches("ns::operator<<", "ns::operator<<(std::ostream&, ns::X const&)"));
  assert_true(filter_name_matches("ns::X::operator int", "ns::X::operator int() const"));
  assert_true(filter_name_matches("operator new", "operator new(unsigned long)"));
  assert_false(filter_name_matches("ns::f*", "int other::f<int>(int)"));
  assert_false(filter_name_matches("int", "int ns::f<int>(int)"));
  assert_false(filter_name_matches("f", "int ns::f<int>(int)"));
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(compensation),
    cmocka_unit_test(sampled_throttling),
    cmocka_unit_test(probe_scaled_by_leaves),
    cmocka_unit_test(raised_self_marked),
    cmocka_unit_test(unreliable_marks),
    cmocka_unit_test(calibration_section),
    cmocka_unit_test(recursion),
    cmocka_unit_test(merge_by_symbol),
    cmocka_unit_test(max_within_thread),
    cmocka_unit_test(writer_roundtrip),
    cmocka_unit_test(truncations_rejected),
    cmocka_unit_test(unhooked_sync_flags),
    cmocka_unit_test(unhooked_in_every_thread),
    cmocka_unit_test(astray_callers_dropped),
    cmocka_unit_test(focus_qualified_names),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
