/* test_settings.c -- the settings reader (src/core/settings.c): each type's
** parsing, defaults, ranges and bad values, a privileged process's defaults,
** the names, CAPPROF_HELP's lines and the unknown-name check. Values come
** from a fake environment handed to settings_load. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "internal.h"
#include "core/settings.h"

static const char *const *env_pairs;          /* name, value, ..., NULL */
static int asked[SET_COUNT];

static const char *fake_getenv(const char *name)
{
  for (int i = 0; i < SET_COUNT; i++)
    if (!strcmp(name, settings_name((enum cp_setting)i))) asked[i]++;
  for (const char *const *p = env_pairs; p && *p; p += 2)
    if (!strcmp(p[0], name)) return p[1];
  return NULL;
}

static void load(const char *const *pairs, int secure)
{
  env_pairs = pairs;
  memset(asked, 0, sizeof asked);
  settings_load(fake_getenv, secure);
}

static void defaults_when_unset(void **state)
{
  (void)state;
  load(NULL, 0);
  assert_int_equal(settings_bool(SET_DISABLE), 0);
  assert_int_equal(settings_bool(SET_HELP), 0);
  assert_int_equal(settings_u32(SET_MAX_NODES), 4194304);
  assert_int_equal(settings_u32(SET_KEEP_THREADS), 4096);
  assert_int_equal(settings_u32(SET_KEEP_THREADS), CP_ENDED_KEEP);  /* ended.c's own */
  assert_null(settings_str(SET_SAMPLE));
  assert_null(settings_str(SET_OUTPUT));
  /* Each variable the runtime reads is asked for once; the tool's never. */
  for (int i = 0; i < SET_COUNT; i++) {
    int tool = i == SET_PAGER || i == SET_PROGRESS || i == SET_LIBRARY || i == SET_DLL;
    assert_int_equal(asked[i], tool ? 0 : 1);
  }
}

static int bool_of(const char *v)
{
  const char *pairs[] = { "CAPPROF_DISABLE", v, NULL };
  load(pairs, 0);
  return settings_bool(SET_DISABLE);
}

static void booleans(void **state)
{
  (void)state;
  assert_int_equal(bool_of("1"), 1);
  assert_int_equal(bool_of("yes"), 1);           /* set, not empty, not 0 */
  assert_int_equal(bool_of("00"), 1);
  assert_int_equal(bool_of("0"), 0);
  assert_int_equal(bool_of(""), 0);
}

static uint32_t nodes_of(const char *v)
{
  const char *pairs[] = { "CAPPROF_MAX_NODES", v, NULL };
  load(pairs, 0);
  return settings_u32(SET_MAX_NODES);
}

static void numbers_and_ranges(void **state)
{
  (void)state;
  assert_int_equal(nodes_of("16"), 16);                  /* the bounds hold */
  assert_int_equal(nodes_of("1073741824"), 1073741824u);
  assert_int_equal(nodes_of("100000"), 100000);
  /* Out of range or not a number: the default. */
  assert_int_equal(nodes_of("15"), 4194304);
  assert_int_equal(nodes_of("1073741825"), 4194304);
  assert_int_equal(nodes_of("99999999999999999999999"), 4194304);
  assert_int_equal(nodes_of("-1"), 4194304);
  assert_int_equal(nodes_of("12x"), 4194304);
  assert_int_equal(nodes_of("1e6"), 4194304);
  assert_int_equal(nodes_of(""), 4194304);
  const char *zero[] = { "CAPPROF_KEEP_THREADS", "0", NULL };
  load(zero, 0);
  assert_int_equal(settings_u32(SET_KEEP_THREADS), 0);
  const char *over[] = { "CAPPROF_KEEP_THREADS", "1048577", NULL };
  load(over, 0);
  assert_int_equal(settings_u32(SET_KEEP_THREADS), 4096);
}

static void text_is_kept_as_given(void **state)
{
  (void)state;
  static char long_value[6000];
  memset(long_value, 'a', sizeof long_value - 1);
  const char *pairs[] = { "CAPPROF_SAMPLE", "time:250us", "CAPPROF_THROTTLE", "",
                          "CAPPROF_OUTPUT", long_value, NULL };
  load(pairs, 0);
  assert_string_equal(settings_str(SET_SAMPLE), "time:250us");
  assert_non_null(settings_str(SET_THROTTLE));            /* set but empty */
  assert_string_equal(settings_str(SET_THROTTLE), "");
  assert_int_equal(strlen(settings_str(SET_OUTPUT)), 4095);   /* cut, still too long */
  load(NULL, 0);                                          /* a new load replaces */
  assert_null(settings_str(SET_SAMPLE));
  assert_null(settings_str(SET_OUTPUT));
}

static void privileged_reads_nothing(void **state)
{
  (void)state;
  const char *pairs[] = { "CAPPROF_DISABLE", "1", "CAPPROF_MAX_NODES", "100",
                          "CAPPROF_RUN_LOG", "/etc/passwd", NULL };
  load(pairs, 1);
  for (int i = 0; i < SET_COUNT; i++) assert_int_equal(asked[i], 0);
  assert_int_equal(settings_bool(SET_DISABLE), 0);
  assert_int_equal(settings_u32(SET_MAX_NODES), 4194304);
  assert_null(settings_str(SET_RUN_LOG));
}

static void names(void **state)
{
  (void)state;
  assert_string_equal(settings_name(SET_SAMPLE), "CAPPROF_SAMPLE");
  assert_string_equal(settings_name(SET_SAMPLE_NO_PERF), "CAPPROF_SAMPLE_NO_PERF");
  for (int i = 0; i < SET_COUNT; i++) {
    const char *n = settings_name((enum cp_setting)i);
    assert_int_equal(strncmp(n, "CAPPROF_", 8), 0);
    assert_true(settings_known(n, strlen(n)));
    for (int j = 0; j < i; j++) assert_string_not_equal(n, settings_name((enum cp_setting)j));
  }
  assert_true(settings_known("CAPPROF_PAGER=less", 13));  /* a name, not NUL-ended */
  assert_false(settings_known("CAPPROF_SAMPL", 13));
  assert_false(settings_known("CAPPROF_SAMPLEX", 15));
  assert_false(settings_known("CAPPROF_", 8));
  char buf[64];
  assert_string_equal(settings_message(buf, sizeof buf, SET_DUMP_INTERVAL, ": not a number"),
                      "capprof: CAPPROF_DUMP_INTERVAL: not a number");
  assert_string_equal(settings_message(buf, 12, SET_DUMP_INTERVAL, ": x"), "capprof: CA");
}

static void help_lines(void **state)
{
  (void)state;
  char line[300];
  assert_int_equal(settings_help_line(0, line, sizeof line), 0);
  assert_non_null(strstr(line, "CAPPROF_HELP=1"));
  for (int i = 0; i < SET_COUNT; i++) {
    assert_int_equal(settings_help_line(i + 1, line, sizeof line), 0);
    const char *n = settings_name((enum cp_setting)i);
    assert_int_equal(strncmp(line + 2, n, strlen(n)), 0);
    assert_int_equal(line[2 + strlen(n)], ' ');
  }
  assert_int_equal(settings_help_line(1 + SET_MAX_NODES, line, sizeof line), 0);
  assert_non_null(strstr(line, " u32 "));
  assert_non_null(strstr(line, " 4194304 "));
  assert_non_null(strstr(line, "(16..1073741824)"));
  assert_int_equal(settings_help_line(SET_COUNT + 1, line, sizeof line), -1);
  assert_int_equal(settings_help_line(-1, line, sizeof line), -1);
  char small[10];
  memset(small, 'x', sizeof small);
  assert_int_equal(settings_help_line(1, small, sizeof small), 0);   /* cut, ended */
  assert_int_equal(strlen(small), sizeof small - 1);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(defaults_when_unset),
    cmocka_unit_test(booleans),
    cmocka_unit_test(numbers_and_ranges),
    cmocka_unit_test(text_is_kept_as_given),
    cmocka_unit_test(privileged_reads_nothing),
    cmocka_unit_test(names),
    cmocka_unit_test(help_lines),
  };
  int rc = cmocka_run_group_tests(tests, NULL, NULL);
  settings_load(os_getenv, cp_g.secure);        /* the process's own again */
  return rc;
}
