/*
** test_sample.c -- the portable sampling code (sample.c) driven directly:
** interval parsing, the frame-pointer walk on real and on hostile frames
** (never a fault, never a frame outside the stack), stacks recorded per
** thread, samples charged to the shadow-stack top, profile-object buckets,
** and the public API's argument checks.
*/
#define _GNU_SOURCE
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "internal.h"
#include "sample/sample.h"

static void test_intervals(void **state)
{
  (void)state;
  uint64_t v;
  assert_int_equal(sample_parse_interval("1ms", 1, &v), 0);
  assert_int_equal(v, 1000000);
  assert_int_equal(sample_parse_interval("100us", 1, &v), 0);
  assert_int_equal(v, 100000);
  assert_int_equal(sample_parse_interval("2s", 1, &v), 0);
  assert_int_equal(v, 2000000000);
  assert_int_equal(sample_parse_interval("250000ns", 1, &v), 0);
  assert_int_equal(sample_parse_interval("1M", 0, &v), 0);
  assert_int_equal(v, 1000000);
  assert_int_equal(sample_parse_interval("10k", 0, &v), 0);
  assert_int_equal(v, 10000);
  /* a time needs its unit; too short; junk; events get no time unit */
  assert_int_equal(sample_parse_interval("1000", 1, &v), CAPPROF_EINVAL);
  assert_int_equal(sample_parse_interval("5us", 1, &v), CAPPROF_EINVAL);
  assert_int_equal(sample_parse_interval("ms", 1, &v), CAPPROF_EINVAL);
  assert_int_equal(sample_parse_interval("1ms", 0, &v), CAPPROF_EINVAL);
  assert_int_equal(sample_parse_interval("0", 0, &v), CAPPROF_EINVAL);
  assert_int_equal(sample_parse_interval("99999999999999999999999ms", 1, &v), CAPPROF_EINVAL);
  assert_int_equal(sample_parse_interval("", 1, &v), CAPPROF_EINVAL);
  assert_non_null(sample_find_source("time"));
  assert_non_null(sample_find_source("branch-misses"));
  assert_null(sample_find_source("cycle"));
}

static struct sample_session proc;
static struct sample_thread *st;

static void stack_bounds(struct sample_thread *t)
{
  pthread_attr_t attr;
  void *addr;
  size_t size;
  assert_int_equal(pthread_getattr_np(pthread_self(), &attr), 0);
  assert_int_equal(pthread_attr_getstack(&attr, &addr, &size), 0);
  t->stack_lo = (uintptr_t)addr;
  t->stack_hi = (uintptr_t)addr + size;
  pthread_attr_destroy(&attr);
}

static int setup(void **state)
{
  (void)state;
  memset(&proc, 0, sizeof proc);
  proc.used = proc.running = 1;
  proc.kind = CPD_SK_PROCESS;
  st = sample_thread_claim(1);
  if (!st) return -1;
  stack_bounds(st);
  return 0;
}

/* The self count of the node reached by the addresses (outermost first,
** ending in 0), or -1. */
static long node_self(uint64_t first, ...)
{
  va_list ap;
  va_start(ap, first);
  uint32_t cur = 0;
  for (uint64_t a = first; a; a = va_arg(ap, uint64_t)) {
    uint32_t found = 0;
    for (uint32_t i = 1; i < st->nnodes; i++)
      if (st->nodes[i].parent == cur && st->nodes[i].addr == a) { found = i; break; }
    if (!found) { va_end(ap); return -1; }
    cur = found;
  }
  va_end(ap);
  return st->nodes[cur].self;
}

/* A frame chain built on this stack: fp -> [next fp, return address]. */
static void test_walk_real_frames(void **state)
{
  (void)state;
  uintptr_t frames[3][2];
  frames[0][0] = (uintptr_t)frames[1]; frames[0][1] = 0x401001;
  frames[1][0] = (uintptr_t)frames[2]; frames[1][1] = 0x402001;
  frames[2][0] = 0;                    frames[2][1] = 0x403001;
  struct sample_regs r = { 0x400500, (uintptr_t)frames[0], (uintptr_t)frames[0] - 64 };
  for (int i = 0; i < 3; i++) sample_hit(&proc, st, NULL, &r);
  /* return addresses minus one, outermost first, the pc last */
  assert_int_equal(node_self(0x403000, 0x402000, 0x401000, 0x400500, 0), 3);
  assert_int_equal(proc.walked, 3);
  assert_int_equal(proc.hits, 3);
}

/* Garbage frame pointers end the walk at the pc, without a fault. */
static void test_walk_hostile_frames(void **state)
{
  (void)state;
  uintptr_t sp = (uintptr_t)__builtin_frame_address(0) - 1024;  /* below every local */
  uintptr_t loop[2];
  loop[0] = (uintptr_t)loop; loop[1] = 0x404001;             /* points at itself */
  uintptr_t down[2];
  down[0] = sp - 4096; down[1] = 0x405001;                   /* goes down the stack */
  const uintptr_t bad[] = {
    0, 1, 0xdeadbeef, UINTPTR_MAX - 7, st->stack_hi, st->stack_lo - 16, sp - 256,
    (uintptr_t)&loop + 1,
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    struct sample_regs r = { 0x400600, bad[i], sp };
    sample_hit(&proc, st, NULL, &r);
  }
  assert_int_equal(node_self(0x400600, 0), (long)(sizeof bad / sizeof bad[0]));
  struct sample_regs r1 = { 0x400700, (uintptr_t)loop, sp };
  sample_hit(&proc, st, NULL, &r1);
  assert_int_equal(node_self(0x404000, 0x400700, 0), 1);     /* one frame, then stop */
  struct sample_regs r2 = { 0x400800, (uintptr_t)down, sp };
  sample_hit(&proc, st, NULL, &r2);
  assert_int_equal(node_self(0x405000, 0x400800, 0), 1);
  /* unknown stack bounds: the pc only */
  struct sample_thread *other = sample_thread_claim(2);
  assert_non_null(other);
  uintptr_t frames[2] = { 0, 0x406001 };
  struct sample_regs r3 = { 0x400900, (uintptr_t)frames, sp };
  sample_hit(&proc, other, NULL, &r3);
  assert_int_equal(other->nnodes, 2);
  assert_int_equal(other->nodes[1].addr, 0x400900);
}

/* Each sample goes to the node on top of the shadow stack. */
static void test_charge_top_node(void **state)
{
  (void)state;
  struct cp_thread *t = calltree_new(1u << 16);
  assert_non_null(t);
  struct sample_regs r = { 0x400a00, 0, (uintptr_t)&r };
  cp_hot_enter(t, 0x1000, 1000, 0);
  cp_hot_enter(t, 0x2000, 900, 0);
  uint32_t inner = t->top->node;
  for (int i = 0; i < 5; i++) sample_hit(&proc, st, t, &r);
  cp_hot_exit(t, 0x2000, 900, 1);
  uint32_t outer = t->top->node;
  for (int i = 0; i < 2; i++) sample_hit(&proc, st, t, &r);
  cp_hot_exit(t, 0x1000, 1000, 1);
  sample_hit(&proc, st, t, &r);                              /* the root */
  assert_int_equal(st->node_samples[inner], 5);
  assert_int_equal(st->node_samples[outer], 2);
  assert_int_equal(st->node_samples[CP_NODE_ROOT], 1);
  /* a reset rebuilds the tree: the counts start again */
  t->generation++;
  sample_hit(&proc, st, t, &r);
  assert_int_equal(st->node_samples[inner], 0);
  assert_int_equal(st->node_samples[CP_NODE_ROOT], 1);
  /* as a retiring thread's: the exit's dump must not read the freed tree */
  sample_tree_retired(t, NULL);
  calltree_free(t);
}

/* A profile object counts only its range, in buckets of its size. */
static void test_object_buckets(void **state)
{
  (void)state;
  static uint32_t buckets[16];
  struct sample_session o;
  memset(&o, 0, sizeof o);
  memset(buckets, 0, sizeof buckets);
  o.used = o.running = 1;
  o.kind = CPD_SK_OBJECT;
  o.lo = 0x10000;
  o.hi = 0x10100;
  o.shift = 4;
  o.nbuckets = 16;
  o.buckets = buckets;
  const uintptr_t pcs[] = { 0x10000, 0x1000f, 0x10010, 0x100ff, 0x10100, 0xffff, 0x20000 };
  for (size_t i = 0; i < sizeof pcs / sizeof pcs[0]; i++) {
    struct sample_regs r = { pcs[i], 0, 0 };
    sample_hit(&o, NULL, NULL, &r);
  }
  assert_int_equal(o.samples, 7);
  assert_int_equal(o.hits, 4);
  assert_int_equal(buckets[0], 2);
  assert_int_equal(buckets[1], 1);
  assert_int_equal(buckets[15], 1);
  o.running = 0;                                              /* stopped: nothing counts */
  struct sample_regs r = { 0x10000, 0, 0 };
  sample_hit(&o, NULL, NULL, &r);
  assert_int_equal(o.samples, 7);
  assert_int_equal(buckets[0], 2);
}

static void test_api_arguments(void **state)
{
  (void)state;
  capprof_profile *p = NULL;
  struct capprof_profile_desc d;
  memset(&d, 0, sizeof d);
  d.range = CAPPROF_RANGE_ADDRESS;
  d.base = (const void *)test_api_arguments;
  d.size = 256;
  d.bucket_size = 24;                                         /* not a power of two */
  assert_int_equal(capprof_profile_create(&d, &p), CAPPROF_EINVAL);
  d.bucket_size = 16;
  d.interval = "5";                                           /* no unit */
  assert_int_equal(capprof_profile_create(&d, &p), CAPPROF_EINVAL);
  d.interval = NULL;
  d.source = "no-such-source";
  assert_int_equal(capprof_profile_create(&d, &p), CAPPROF_EINVAL);
  d.source = NULL;
  d.range = 7;
  assert_int_equal(capprof_profile_create(&d, &p), CAPPROF_EINVAL);
  d.range = CAPPROF_RANGE_MODULE;
  d.base = NULL;                                              /* the executable */
  assert_int_equal(capprof_profile_create(&d, &p), 0);
  struct capprof_profile_info info;
  assert_int_equal(capprof_profile_query(p, &info), 0);
  assert_true(info.base <= (uintptr_t)test_api_arguments && (uintptr_t)test_api_arguments < info.end);
  assert_int_equal(info.bucket_size, 16);
  assert_int_equal(info.interval, 1000000);
  assert_int_equal(capprof_profile_set_interval(p, "100us"), 0);
  assert_int_equal(capprof_profile_set_interval(p, "1"), CAPPROF_EINVAL);
  assert_int_equal(capprof_profile_close(p), 0);
  assert_int_equal(capprof_profile_close(p), CAPPROF_EINVAL);  /* closed: no longer valid */
  assert_int_equal(capprof_profile_start((capprof_profile *)(void *)&d), CAPPROF_EINVAL);
  assert_int_equal(capprof_profile_query(NULL, &info), CAPPROF_EINVAL);
  char buf[256], why[256];
  assert_int_equal(capprof_sample_sources(buf, sizeof buf, why, sizeof why), 0);
  assert_non_null(strstr(buf, "time"));
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_intervals),
    cmocka_unit_test_setup(test_walk_real_frames, setup),
    cmocka_unit_test_setup(test_walk_hostile_frames, setup),
    cmocka_unit_test_setup(test_charge_top_node, setup),
    cmocka_unit_test(test_object_buckets),
    cmocka_unit_test(test_api_arguments),
  };
  return cmocka_run_group_tests_name("sample", tests, NULL, NULL);
}
