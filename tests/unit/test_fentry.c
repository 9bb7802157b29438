/*
** test_fentry.c -- GCC's after-inlining hooks (asm/fentry_x86_64.S) keep
** every call-clobbered general register, on each of their paths: the first
** call of a thread (the C workers), timed calls of the hot child and of a
** table slot (the assembly fast paths), and, run again with
** CAPPROF_THROTTLE=1000:1000ns, untimed calls (assembly) and sampled ones
** (the workers) of throttled functions. At __return__ that includes RAX and
** RDX (the return value) and the registers a sibling call's jump needs
** (R10 and R11 among them). Registers are set to distinct values by
** fentry_regs.S and stored after each hook. Also: the table-slot path
** leaves the calibrated lookup cost out (the thread's debt).
*/
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>

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
** path. Enough calls that, with CAPPROF_THROTTLE=1000:1000ns, both are
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

/* __fentry__'s table-slot path adds the calibrated lookup cost to the
** thread's debt, and nothing else does in this steady loop: with the cost
** set to 0 the debt does not move. Only where every call takes the fast
** path: not with throttling, sampling or unhooking asked for (their calls
** go through the workers' slow path, which adds its own time), not on the
** OS clock, and not when the two probes' nodes share a first table slot
** (their keys are return addresses: ASLR), which the loop with the cost at
** 0 shows as debt. */
static void test_lookup_cost_is_debt(void **state)
{
  (void)state;
  if (getenv("CAPPROF_THROTTLE") || getenv("CAPPROF_SAMPLE") || getenv("CAPPROF_UNHOOK") ||
      cp_g.use_tsc == CP_CLOCK_OS)
    skip();
  for (int i = 0; i < 100; i++) cp_test_call_probe(i & 1);   /* both nodes exist */
  struct cp_thread *t = os_get_thread();
  assert_non_null(t);
  uint32_t saved = cp_g.lookup_ticks[CP_PROBE_FENTRY];
  for (uint32_t l = 0; l <= 5; l += 5) {
    cp_g.lookup_ticks[CP_PROBE_FENTRY] = l;
    uint64_t d0 = t->debt;
    for (int i = 0; i < 100; i++) cp_test_call_probe(i & 1);
    if (l == 0 && t->debt != d0) {
      cp_g.lookup_ticks[CP_PROBE_FENTRY] = saved;
      skip();                                 /* a slow path: see above */
    }
    assert_int_equal(t->debt - d0, 100 * l);
  }
  cp_g.lookup_ticks[CP_PROBE_FENTRY] = saved;
}

int main(void)
{
  capprof_set_thread_name("main");
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_registers_kept),
    cmocka_unit_test(test_lookup_cost_is_debt),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
