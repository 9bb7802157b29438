/*
** test_fentry.c -- GCC's after-inlining hooks (asm/fentry_x86_64.S) keep
** every call-clobbered general register, on each of their paths: the first
** call of a thread (the C workers), timed calls of the hot child and of a
** table slot (the assembly fast paths), and, run again with
** CAPPROF_THROTTLE=1000:20us, untimed calls (assembly) and sampled ones
** (the workers) of throttled functions. At __return__ that includes RAX and
** RDX (the return value) and the registers a sibling call's jump needs
** (R10 and R11 among them). Registers are set to distinct values by
** fentry_regs.S and stored after each hook. Also: what the assembly's
** throttled paths record, the untimed call and the timed sample (the next
** countdown drawn as throttle_next_countdown draws it, the time scaled by
** the period), against the C code's rules.
*/
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <capprof/capprof.h>

#include "internal.h"

void cp_test_call_probe(int which);
extern uint64_t cp_test_after_entry[9];
extern uint64_t cp_test_after_return[9];

static const char *const reg_names[9] = {"rax", "rcx", "rdx", "rsi", "rdi",
                                         "r8", "r9", "r10", "r11"};

static void check_regs(const uint64_t *got, uint64_t base, const char *where, long call)
{
  for (int i = 0; i < 9; i++) {
    if (got[i] != base + (uint64_t)i + 1)
      fail_msg("%s, call %ld: %s is %#llx, expected %#llx", where, call, reg_names[i],
               (unsigned long long)got[i], (unsigned long long)(base + (uint64_t)i + 1));
  }
}

/* Alternating the two probes makes each miss the hot child: the table-slot
** path. Enough calls that, with CAPPROF_THROTTLE=1000:20us, both are
** throttled and most later calls are untimed, some sampled. */
static void test_registers_kept(void **state)
{
  (void)state;
  for (long i = 0; i < 20000; i++) {
    int which = i < 3000 ? 0 : (int)(i & 1);
    cp_test_call_probe(which);
    check_regs(cp_test_after_entry, 0x1000, "after __fentry__", i);
    check_regs(cp_test_after_return, 0x2000, "after __return__", i);
  }
}

/* Probe a's node, throttled, then one untimed call and one timed sample of
** it through the assembly's own paths, checked field by field. */
static void test_throttled_paths(void **state)
{
  (void)state;
  for (int i = 0; i < 10; i++) cp_test_call_probe(0);
  struct cp_thread *t = os_get_thread();
  assert_non_null(t);
  uint32_t c = t->nodes[t->top->node].hot;   /* probe a: the last child entered */
  struct cp_node *n = &t->nodes[c];
  assert_true(c >= CP_FIRST_NODE);
  if (!(n->key & CP_KEY_THROTTLED)) assert_int_equal(throttle_node(t, c), 0);
  uint64_t period = cp_g.throttle_period;
  assert_true(period > 1);

  /* Untimed: counted, no time, the countdown one lower. */
  t->countdown = 5;
  uint64_t calls = n->calls, incl = n->incl;
  cp_test_call_probe(0);
  assert_int_equal(n->calls, calls + 1);
  assert_int_equal(n->incl, incl);
  assert_int_equal(t->countdown, 4);

  /* A sample is due: the next countdown as the C code draws it, and the
  ** call's ticks d counted period times (d is far below the cap), min and
  ** max the d measured. */
  for (int k = 0; k < 50; k++) {
    struct cp_thread next = *t;
    t->countdown = 1;
    next.countdown = 1;
    uint32_t want = throttle_next_countdown(&next);
    n->min = UINT64_MAX;
    n->max = 0;
    calls = n->calls;
    incl = n->incl;
    cp_test_call_probe(0);
    assert_int_equal(n->calls, calls + 1);
    assert_int_equal(t->rng, next.rng);
    assert_int_equal(t->countdown, want);
    uint64_t d = n->max;
    assert_int_equal(n->min, d);
    assert_true(d > 0 && d < cp_g.sample_cap);
    assert_int_equal(n->incl - incl, d * period);
  }
}

int main(void)
{
  capprof_set_thread_name("main");
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_registers_kept),
    cmocka_unit_test(test_throttled_paths),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
