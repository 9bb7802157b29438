/*
** test_calltree.c -- the per-thread call tree and shadow stack, driven
** directly through the hot path with chosen keys and stack pointers: nesting,
** recursion, frames skipped by longjmp/exceptions, exits without entries,
** the node cap, a million-level recursion, rebase, table growth, and the
** lookup table's promotion of frequent callees to their first slot.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "internal.h"

#define A 0x1000u
#define B 0x2000u
#define C 0x3000u
#define D 0x4000u

static struct cp_thread *t;

static int setup(void **state) { (void)state; t = calltree_new(1u << 21); return t ? 0 : -1; }
static int teardown(void **state) { (void)state; calltree_free(t); return 0; }

static void in(uint64_t key, uintptr_t sp) { cp_hot_enter(t, key, sp, 0); }
static void out(uint64_t key, uintptr_t sp) { cp_hot_exit(t, key, sp, 1); }

/* Node index reached from the root by a list of keys ending in 0, or 0. */
static uint32_t path(uint64_t first, ...)
{
  va_list ap;
  va_start(ap, first);
  uint32_t cur = CP_NODE_ROOT;
  for (uint64_t k = first; k; k = va_arg(ap, uint64_t)) {
    uint32_t found = 0;
    for (uint32_t i = CP_FIRST_NODE; i < t->nnodes; i++)
      if (t->nodes[i].parent == cur && t->nodes[i].key == k) { found = i; break; }
    if (!found) { va_end(ap); return 0; }
    cur = found;
  }
  va_end(ap);
  return cur;
}

static uint64_t calls(uint32_t n) { return n ? t->nodes[n].calls : UINT64_MAX; }

static void test_nesting(void **state)
{
  (void)state;
  in(A, 1000);
  for (int i = 0; i < 3; i++) { in(B, 900); in(C, 800); out(C, 800); out(B, 900); }
  in(C, 900); out(C, 900);
  out(A, 1000);
  assert_int_equal(calls(path(A, 0)), 1);
  assert_int_equal(calls(path(A, B, 0)), 3);
  assert_int_equal(calls(path(A, B, C, 0)), 3);
  assert_int_equal(calls(path(A, C, 0)), 1);
  assert_int_equal(t->nnodes, CP_FIRST_NODE + 4);
  assert_ptr_equal(t->top, t->frames);
  const struct cp_node *a = &t->nodes[path(A, 0)], *b = &t->nodes[path(A, B, 0)];
  assert_true(a->incl >= b->incl);
  assert_true(b->min <= b->max);
  assert_true(b->min * 3 <= b->incl && b->incl <= b->max * 3);
}

static void test_recursion_nests(void **state)
{
  (void)state;
  in(A, 1000); in(A, 900); in(A, 800);
  out(A, 800); out(A, 900); out(A, 1000);
  assert_int_equal(calls(path(A, A, A, 0)), 1);
  assert_int_equal(calls(path(A, A, 0)), 1);
  assert_int_equal(t->nnodes, CP_FIRST_NODE + 3);
}

/* longjmp from C back into A: B and C never exit; A's exit pops them. */
static void test_exit_pops_dead_frames(void **state)
{
  (void)state;
  in(A, 1000); in(B, 900); in(C, 800);
  out(A, 1000);
  assert_ptr_equal(t->top, t->frames);
  assert_int_equal(calls(path(A, 0)), 1);
  assert_int_equal(calls(path(A, B, 0)), 1);
  assert_int_equal(calls(path(A, B, C, 0)), 1);
}

/* An exception caught in A, which then calls D (whose frame is smaller than
** B's was): B and C are dead, and D is A's child. */
static void test_enter_pops_dead_frames(void **state)
{
  (void)state;
  in(A, 1000); in(B, 900); in(C, 800);
  in(D, 950);
  out(D, 950);
  out(A, 1000);
  assert_int_equal(calls(path(A, D, 0)), 1);
  assert_int_equal(path(A, B, D, 0), 0);
  assert_int_equal(path(A, B, C, D, 0), 0);
  assert_int_equal(calls(path(A, B, C, 0)), 1);
  assert_ptr_equal(t->top, t->frames);
}

/* GCC instruments inlined functions: their hooks see the host's frame. */
static void test_inlined_calls_nest(void **state)
{
  (void)state;
  in(A, 1000); in(B, 1000); in(C, 1000);
  out(C, 1000); out(B, 1000);
  in(D, 900); out(D, 900);
  out(A, 1000);
  assert_int_equal(calls(path(A, B, C, 0)), 1);
  assert_int_equal(calls(path(A, D, 0)), 1);
  assert_ptr_equal(t->top, t->frames);
}

static void test_exit_without_entry_is_ignored(void **state)
{
  (void)state;
  out(B, 500);                               /* nothing open */
  in(A, 1000);
  out(B, 1000);                              /* B never entered */
  assert_ptr_equal(t->top, t->frames + 1);
  out(A, 1000);
  assert_int_equal(calls(path(A, 0)), 1);
  assert_int_equal(path(B, 0), 0);
  assert_ptr_equal(t->top, t->frames);
}

/* A's stack pointer at its exit is below B's entry (alloca after B): the
** sp rule alone cannot see that B is dead; the key search finds A. */
static void test_exit_finds_its_frame_by_key(void **state)
{
  (void)state;
  in(A, 1000); in(B, 900);
  out(A, 850);
  assert_ptr_equal(t->top, t->frames);
  assert_int_equal(calls(path(A, 0)), 1);
  assert_int_equal(calls(path(A, B, 0)), 1);
}

static void test_node_cap_overflow(void **state)
{
  (void)state;
  struct cp_thread *saved = t;
  t = calltree_new(CP_FIRST_NODE + 2);       /* room for two real nodes */
  in(A, 1000); in(B, 900);                   /* fills the cap */
  in(C, 800); in(D, 700); out(D, 700); out(C, 800);
  in(D, 800); out(D, 800);
  out(B, 900); out(A, 1000);
  assert_ptr_equal(t->top, t->frames);
  /* Past the cap, new paths go to an overflow node under the path where the
  ** cap was hit (B), not beside main: its time stays inside B's. */
  assert_int_equal(t->nnodes, CP_FIRST_NODE + 3);
  uint32_t ov = path(A, B, CPD_KEY_OVERFLOW, 0);
  assert_int_equal(calls(ov), 2);                          /* C, and D under B */
  assert_int_equal(t->nodes[CP_NODE_OVERFLOW].calls, 0);
  assert_int_equal(t->nodes[CP_NODE_SINK].calls, 1);       /* D under C */
  assert_int_equal(calls(path(A, B, 0)), 1);
  assert_true(t->nodes[ov].incl <= t->nodes[path(A, B, 0)].incl);
  calltree_free(t);
  t = saved;
}

static void test_million_levels(void **state)
{
  (void)state;
  const uintptr_t top = (uintptr_t)1 << 40;
  const unsigned n = 1000000;
  for (unsigned i = 0; i < n; i++) in(A, top - 64u * i);
  assert_int_equal(t->top - t->frames, n);
  for (unsigned i = n; i-- > 0;) out(A, top - 64u * i);
  assert_ptr_equal(t->top, t->frames);
  assert_int_equal(t->nnodes, CP_FIRST_NODE + n);
  for (uint32_t i = CP_FIRST_NODE; i < t->nnodes; i++) {
    assert_int_equal(t->nodes[i].calls, 1);
    assert_int_equal(t->nodes[i].parent, i == CP_FIRST_NODE ? CP_NODE_ROOT : i - 1);
  }
  assert_int_equal(t->lost_frames, 0);
}

static void test_rebase_keeps_open_path(void **state)
{
  (void)state;
  in(A, 1000); in(B, 900); in(C, 800); out(C, 800);
  calltree_rebase(t, cp_now());
  assert_int_equal(t->nnodes, CP_FIRST_NODE + 2);
  assert_int_equal(calls(path(A, B, 0)), 0);
  out(B, 900); out(A, 1000);
  assert_int_equal(calls(path(A, B, 0)), 1);
  assert_int_equal(calls(path(A, 0)), 1);
  assert_int_equal(path(A, B, C, 0), 0);
}

/* A throttled node: its calls keep frames (callees nest below it), are all
** counted, and the ones timed as samples count period times, up to the
** cap; the countdown's runs average the period. */
static void test_throttled_calls(void **state)
{
  (void)state;
  uint32_t period = cp_g.throttle_period;
  uint64_t cap = cp_g.sample_cap;
  cp_g.throttle_period = 32;
  cp_g.sample_cap = 100;
  in(A, 1000);
  in(B, 900);
  out(B, 900);
  uint32_t a = path(A, 0), b = path(A, B, 0);
  t->nodes[b].key |= CP_KEY_THROTTLED;
  for (int i = 0; i < 1000; i++) {
    in(B, 900);
    if (i == 500) {                     /* a call made from a throttled call */
      in(C, 800);
      out(C, 800);
    }
    out(B, 900);
  }
  assert_int_equal(t->nodes[b].calls, 1001);
  uint32_t c = 0;                       /* path() compares plain keys */
  for (uint32_t i = CP_FIRST_NODE; i < t->nnodes; i++)
    if (t->nodes[i].key == C && t->nodes[i].parent == b) c = i;
  assert_true(c != 0);
  assert_int_equal(t->nodes[c].calls, 1);
  assert_true(t->top->node == a);
  struct cp_node n = { 0 };
  n.min = UINT64_MAX;
  calltree_charge_sampled(&n, 10);
  calltree_charge_sampled(&n, 1000);  /* stopped: 100 x 32, the rest once */
  assert_int_equal(n.incl, 320 + 3200 + 900);
  assert_int_equal(n.calls, 2);
  assert_true(n.min == 10 && n.max == 1000);
  uint64_t sum = 0, lo = UINT64_MAX, hi = 0;
  for (int i = 0; i < 100000; i++) {
    uint32_t c = throttle_next_countdown(t);
    sum += c;
    if (c < lo) lo = c;
    if (c > hi) hi = c;
  }
  assert_true(lo == 1 && hi == 63);
  assert_true(sum > 100000 * 31 && sum < 100000 * 33);
  out(A, 1000);
  cp_g.throttle_period = period;
  cp_g.sample_cap = cap;
}

static void test_wide_node_and_table_growth(void **state)
{
  (void)state;
  in(A, 1000);
  for (int pass = 0; pass < 2; pass++)
    for (uint64_t k = 1; k <= 20000; k++) { in(k << 4, 900); out(k << 4, 900); }
  out(A, 1000);
  assert_int_equal(t->nnodes, CP_FIRST_NODE + 1 + 20000);
  uint32_t a = path(A, 0);
  for (uint32_t i = CP_FIRST_NODE; i < t->nnodes; i++)
    if (i != a) {
      assert_int_equal(t->nodes[i].parent, a);
      assert_int_equal(t->nodes[i].calls, 2);
    }
}

/* A key, other than those before it in avoid[0..n), whose first lookup-table
** slot under parent is slot. */
static uint64_t key_at(uint32_t parent, uint32_t slot, const uint64_t *avoid, int n)
{
  for (uint64_t k = 0x100000u;; k += 16) {
    int used = 0;
    for (int i = 0; i < n; i++) used |= avoid[i] == k;
    if (!used && calltree_slot(t, parent, k) == slot) return k;
  }
}

/* The fast path probes a callee's first table slot only: a callee pushed
** past it by an earlier node is moved there by the slow path when the node
** there is not in its own first slot, or is much colder; both stay found. */
static void test_table_promotes_frequent_callees(void **state)
{
  (void)state;
  if (cp_g.use_tsc == CP_CLOCK_OS) skip();   /* no fast path on the OS clock */
  in(A, 1000);
  in(B, 900); out(B, 900);                   /* B: A's hot child from here */
  uint32_t a = path(A, 0), h = calltree_slot(t, a, A) ^ 5u;
  uint64_t k[3];
  k[0] = key_at(a, h, NULL, 0);              /* P: home h, gets h */
  k[1] = key_at(a, h, k, 1);                 /* Q: home h, pushed to h + 1 */
  k[2] = key_at(a, (h + 1) & t->mask, k, 2); /* X: home h + 1, pushed to h + 2 */
  for (int i = 0; i < 3; i++) { in(k[i], 900); out(k[i], 900); }
  uint32_t nodes = t->nnodes;
  /* X's first slot holds Q, which is not in its own: one slow lookup moves X. */
  in(B, 900); out(B, 900);
  assert_int_equal(cp_hot_enter_try(t, k[2], 900), 0);
  in(k[2], 900); out(k[2], 900);
  in(B, 900); out(B, 900);
  assert_int_equal(cp_hot_enter_try(t, k[2], 900), 1);
  out(k[2], 900);
  /* Q, now behind X, is frequent: past twice P's calls it takes P's slot. */
  int moved = -1;
  for (int i = 0; i < 200 && moved < 0; i++) {
    in(B, 900); out(B, 900);
    if (cp_hot_enter_try(t, k[1], 900)) { out(k[1], 900); moved = i; }
    else { in(k[1], 900); out(k[1], 900); }
  }
  assert_true(moved > 0);
  assert_true(t->nodes[path(A, k[1], 0)].calls > 2 * t->nodes[path(A, k[0], 0)].calls);
  /* Every node is still found where it is: no new node, counts exact. */
  for (int i = 0; i < 3; i++) { in(k[i], 900); out(k[i], 900); }
  assert_int_equal(t->nnodes, nodes);
  assert_int_equal(calls(path(A, k[0], 0)), 2);
  assert_int_equal(calls(path(A, k[1], 0)), 2 + (uint64_t)moved + 1);
  assert_int_equal(calls(path(A, k[2], 0)), 4);
  out(A, 1000);
  assert_ptr_equal(t->top, t->frames);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test_setup_teardown(test_nesting, setup, teardown),
    cmocka_unit_test_setup_teardown(test_recursion_nests, setup, teardown),
    cmocka_unit_test_setup_teardown(test_exit_pops_dead_frames, setup, teardown),
    cmocka_unit_test_setup_teardown(test_enter_pops_dead_frames, setup, teardown),
    cmocka_unit_test_setup_teardown(test_inlined_calls_nest, setup, teardown),
    cmocka_unit_test_setup_teardown(test_exit_without_entry_is_ignored, setup, teardown),
    cmocka_unit_test_setup_teardown(test_exit_finds_its_frame_by_key, setup, teardown),
    cmocka_unit_test_setup_teardown(test_node_cap_overflow, setup, teardown),
    cmocka_unit_test_setup_teardown(test_million_levels, setup, teardown),
    cmocka_unit_test_setup_teardown(test_rebase_keeps_open_path, setup, teardown),
    cmocka_unit_test_setup_teardown(test_wide_node_and_table_growth, setup, teardown),
    cmocka_unit_test_setup_teardown(test_throttled_calls, setup, teardown),
    cmocka_unit_test_setup_teardown(test_table_promotes_frequent_callees, setup, teardown),
  };
  return cmocka_run_group_tests_name("calltree", tests, NULL, NULL);
}
