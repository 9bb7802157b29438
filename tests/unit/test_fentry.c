/*
** test_fentry.c -- GCC's after-inlining hooks (asm/fentry_x86_64.S) keep
** every call-clobbered general register, on each of their paths: the first
** call of a thread (the C workers), timed calls of the hot child and of a
** table slot (the assembly fast paths), and, run again with
** CAPPROF_THROTTLE=1000:1000ns, untimed calls (assembly) and sampled ones
** (the workers) of throttled functions. At __return__ that includes RAX and
** RDX (the return value) and the registers a sibling call's jump needs
** (R10 and R11 among them). Registers are set to distinct values by
** fentry_regs.S and stored after each hook.
*/
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <capprof/capprof.h>

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

int main(void)
{
  capprof_set_thread_name("main");
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_registers_kept),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
