/*
** test_intercept.c -- the portable core of API interception (src/intercept/intercept.c)
** without any trampoline: the library selection, the unsafe list, the
** registry, and the return-stack bookkeeping driven by hand on a fake
** machine stack (nesting, tail calls, calls abandoned by longjmp, and the
** put-back and re-hook around a C++ unwind), checked on the thread's tree.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "internal.h"

#define RT ((uintptr_t)0x5151)              /* the fake return trampoline */

static void test_selects(void **state)
{
  (void)state;
  intercept_set_spec("default");
  assert_true(intercept_selects("libc.so.6"));
  assert_true(intercept_selects("libm.so.6"));
  assert_true(intercept_selects("libstdc++.so.6"));
  assert_true(intercept_selects("KERNEL32.dll"));
  assert_false(intercept_selects("libcrypto.so.3"));
  assert_false(intercept_selects("libsqlite3.so.0"));
  intercept_set_spec("libc,libssl.so.3");
  assert_true(intercept_selects("libc.so.6"));
  assert_true(intercept_selects("libssl.so.3"));
  assert_false(intercept_selects("libcrypto.so.3"));
  assert_false(intercept_selects("libm.so.6"));
  intercept_set_spec("all");
  assert_true(intercept_selects("libz.so.1"));
  intercept_set_spec("");
  assert_false(intercept_selects("libc.so.6"));
}

static void test_unsafe(void **state)
{
  (void)state;
  assert_int_equal(intercept_unsafe("setjmp"), CPD_SKIP_RETURNS_TWICE);
  assert_int_equal(intercept_unsafe("vfork"), CPD_SKIP_RETURNS_TWICE);
  assert_int_equal(intercept_unsafe("siglongjmp"), CPD_SKIP_UNWINDS);
  assert_int_equal(intercept_unsafe("__cxa_throw"), CPD_SKIP_UNWINDS);
  assert_int_equal(intercept_unsafe("_Unwind_Resume"), CPD_SKIP_UNWINDS);
  assert_int_equal(intercept_unsafe("_ZSt20__throw_length_errorPKc"), CPD_SKIP_UNWINDS);
  assert_int_equal(intercept_unsafe("clone"), CPD_SKIP_SHARES_STACK);
  assert_int_equal(intercept_unsafe("__libc_start_main"), CPD_SKIP_START);
  assert_int_equal(intercept_unsafe("getpid"), 0);
  assert_int_equal(intercept_unsafe("exit"), 0);
}

static void test_registry(void **state)
{
  (void)state;
  uint32_t a = intercept_register("libc.so.6", "getpid");
  uint32_t b = intercept_register("libc.so.6", "getppid");
  uint32_t c = intercept_register("libm.so.6", "getpid");
  assert_int_equal(intercept_register("libc.so.6", "getpid"), a);
  assert_true(a != b && a != c && b != c);
  assert_true(intercept_count() >= 3);
  const char *lib, *sym;
  intercept_name(b, &lib, &sym);
  assert_string_equal(lib, "libc.so.6");
  assert_string_equal(sym, "getppid");
  intercept_skip(CPD_SKIP_UNWINDS, "libc.so.6", "longjmp");
  intercept_skip(CPD_SKIP_UNWINDS, "libc.so.6", "longjmp");
  uint32_t reason;
  uint64_t slots;
  int found = 0;
  for (uint32_t i = 0; i < intercept_skip_count(); i++) {
    intercept_skip_get(i, &reason, &slots, &lib, &sym);
    if (!strcmp(sym, "longjmp")) {
      found = 1;
      assert_int_equal(reason, CPD_SKIP_UNWINDS);
      assert_int_equal(slots, 2);
    }
  }
  assert_true(found);
}

/* ---- the return stack, on a fake machine stack ------------------------------ */

static uintptr_t stack[64];
static struct icpt_stub s1, s2;

static struct cp_thread *fresh_thread(void)
{
  struct cp_thread *t = os_get_thread();
  if (!t) t = runtime_thread_slow();
  assert_true(runtime_thread_real(t));
  capprof_reset();                      /* an empty tree */
  intercept_set_return_trampoline(RT);
  s1.real = (void *)0x1000;
  s1.id = intercept_register("libfake.so", "one");
  s2.real = (void *)0x2000;
  s2.id = intercept_register("libfake.so", "two");
  memset(stack, 0, sizeof stack);
  return t;
}

/* Calls of the API node at path one[;two] under the root. */
static uint64_t calls_at(struct cp_thread *t, const struct icpt_stub *a, const struct icpt_stub *b)
{
  uint32_t parent = CP_NODE_ROOT;
  for (int k = 0; k < (b ? 2 : 1); k++) {
    uint64_t key = CPD_KEY_API | (k ? b : a)->id;
    uint32_t found = UINT32_MAX;
    for (uint32_t i = CP_FIRST_NODE; i < t->nnodes; i++)
      if (t->nodes[i].key == key && t->nodes[i].parent == parent) found = i;
    if (found == UINT32_MAX) return 0;
    parent = found;
  }
  return t->nodes[parent].calls;
}

static void test_nested(void **state)
{
  (void)state;
  struct cp_thread *t = fresh_thread();
  stack[40] = 0xAAAA;
  assert_ptr_equal(intercept_enter_thread(t, &s1, &stack[40]), s1.real);
  assert_int_equal(stack[40], RT);
  stack[30] = 0xBBBB;                   /* a callback calls two */
  assert_ptr_equal(intercept_enter_thread(t, &s2, &stack[30]), s2.real);
  assert_int_equal(stack[30], RT);
  assert_int_equal((uintptr_t)intercept_exit_thread(t, &stack[31]), 0xBBBB);
  assert_int_equal((uintptr_t)intercept_exit_thread(t, &stack[41]), 0xAAAA);
  assert_int_equal(calls_at(t, &s1, NULL), 1);
  assert_int_equal(calls_at(t, &s1, &s2), 1);
  assert_ptr_equal(t->rstack->top, t->rstack->base);
}

static void test_tail_call(void **state)
{
  (void)state;
  struct cp_thread *t = fresh_thread();
  stack[40] = 0xAAAA;
  intercept_enter_thread(t, &s1, &stack[40]);
  /* one tail-calls two: two gets one's return address, the trampoline */
  assert_ptr_equal(intercept_enter_thread(t, &s2, &stack[40]), s2.real);
  assert_int_equal(stack[40], RT);
  assert_int_equal((uintptr_t)intercept_exit_thread(t, &stack[41]), 0xAAAA);
  assert_int_equal(calls_at(t, &s1, NULL), 1);
  assert_int_equal(calls_at(t, &s1, &s2), 1);
  assert_ptr_equal(t->rstack->top, t->rstack->base);
}

static void test_abandoned(void **state)
{
  (void)state;
  struct cp_thread *t = fresh_thread();
  stack[20] = 0xCCCC;                   /* deep call, left by a longjmp */
  intercept_enter_thread(t, &s1, &stack[20]);
  stack[40] = 0xAAAA;                   /* a later call from a shallower frame */
  intercept_enter_thread(t, &s2, &stack[40]);
  assert_ptr_equal(t->rstack->top, t->rstack->base + 1);    /* the dead entry is gone */
  assert_int_equal((uintptr_t)intercept_exit_thread(t, &stack[41]), 0xAAAA);
  assert_int_equal(calls_at(t, &s2, NULL), 1);
}

static void test_unwind(void **state)
{
  (void)state;
  struct cp_thread *t = fresh_thread();
  stack[40] = 0xAAAA;
  intercept_enter_thread(t, &s1, &stack[40]);
  stack[30] = 0xBBBB;
  intercept_enter_thread(t, &s2, &stack[30]);
  intercept_restore_returns((uintptr_t)&stack[10]);       /* a throw, deeper */
  assert_int_equal(stack[40], 0xAAAA);
  assert_int_equal(stack[30], 0xBBBB);
  intercept_rehook((uintptr_t)&stack[35]);                /* caught between them */
  assert_int_equal(stack[40], RT);                        /* one is live again */
  assert_ptr_equal(t->rstack->top, t->rstack->base + 1);  /* two was unwound */
  assert_int_equal((uintptr_t)intercept_exit_thread(t, &stack[41]), 0xAAAA);
  assert_ptr_equal(t->rstack->top, t->rstack->base);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_selects),
    cmocka_unit_test(test_unsafe),
    cmocka_unit_test(test_registry),
    cmocka_unit_test(test_nested),
    cmocka_unit_test(test_tail_call),
    cmocka_unit_test(test_abandoned),
    cmocka_unit_test(test_unwind),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
