/*
** test_dump.c -- dump write/read round trip through the public API and the
** reader library; no silent overwrite; output patterns; pause, resume and
** reset; and rejection of truncated, corrupted and hostile files.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "capprof/capprof.h"
#include "instrumented.h"
#include "internal.h"
#include "model/cpd_reader.h"

static char dir[256];

static int setup_dir(void **state)
{
  (void)state;
  snprintf(dir, sizeof dir, "/tmp/capprof-test-dump-%d", (int)getpid());
  mkdir(dir, 0755);
  return 0;
}

static int remove_dir(void **state)
{
  (void)state;
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  return system(cmd) == 0 ? 0 : -1;
}

/* Write a dump of what is recorded now and load it. */
static struct cpd_dump *dump_now(const char *name, char *path, size_t n)
{
  snprintf(path, n, "%s/%s", dir, name);
  unlink(path);
  assert_int_equal(capprof_dump(path, NULL, 0), 0);
  struct cpd_dump *d;
  char err[256];
  int rc = cpd_load(path, &d, err, sizeof err);
  if (rc) fail_msg("%s", err);
  return d;
}

/* Calls recorded for key at any path in the calling thread's tree. */
static uint64_t calls_of(const struct cpd_dump *d, void *fn, uint32_t *parent_key_ok)
{
  uint64_t sum = 0;
  for (uint32_t i = 0; i < d->nthreads; i++) {
    if (d->threads[i].tid != os_thread_id()) continue;
    const struct cpd_thread *t = &d->threads[i];
    for (uint32_t k = 1; k < t->node_count; k++)
      if (t->nodes[k].key == (uint64_t)(uintptr_t)fn) {
        sum += t->nodes[k].calls;
        if (parent_key_ok) *parent_key_ok = t->nodes[t->nodes[k].parent].key ==
                                            (uint64_t)(uintptr_t)probe_parent;
      }
  }
  return sum;
}

static void test_round_trip(void **state)
{
  (void)state;
  assert_int_equal(capprof_reset(), 0);
  assert_int_equal(capprof_set_thread_name("tester"), 0);
  probe_parent(10);
  probe_parent(5);
  char path[512];
  struct cpd_dump *d = dump_now("rt.capprof", path, sizeof path);
  uint32_t under_parent = 0;
  assert_int_equal(calls_of(d, probe_parent, NULL), 2);
  assert_int_equal(calls_of(d, probe_leaf, &under_parent), 15);
  assert_true(under_parent);
  assert_int_equal(d->pid, (uint64_t)getpid());
  assert_int_equal(d->version, CPD_VERSION);
  assert_int_equal(d->ptr_size, sizeof(void *));
  assert_true(d->calib_ticks > 0 && d->calib_ns > 0);
  assert_true(strstr(d->exe, "test_dump") != NULL);
  int found = 0;
  for (uint32_t i = 0; i < d->nthreads; i++)
    if (!strcmp(d->threads[i].name, "tester")) found = 1;
  assert_true(found);
  /* the test executable is in the module map with its build-id */
  int m = cpd_find_module(d, (uint64_t)(uintptr_t)probe_leaf);
  assert_true(m >= 0);
  assert_string_equal(d->modules[m].path, d->exe);
  assert_int_equal(d->modules[m].id_kind, CPD_MODID_GNU_BUILD_ID);
  assert_true(d->modules[m].id_len >= 8);
  cpd_free(d);
}

static void test_never_overwrites(void **state)
{
  (void)state;
  char path[512], out[512];
  snprintf(path, sizeof path, "%s/keep.capprof", dir);
  unlink(path);
  FILE *f = fopen(path, "w");
  fputs("precious", f);
  fclose(f);
  assert_int_equal(capprof_dump(path, out, sizeof out), CAPPROF_EEXIST);
  f = fopen(path, "r");
  char buf[32] = "";
  assert_non_null(fgets(buf, sizeof buf, f));
  fclose(f);
  assert_string_equal(buf, "precious");

  /* through a pattern, a numbered name is chosen instead */
  char pattern[512], first[512], second[512];
  snprintf(pattern, sizeof pattern, "%s/pat-%%p.capprof", dir);
  assert_int_equal(capprof_set_output(pattern), 0);
  assert_int_equal(capprof_dump(NULL, first, sizeof first), 0);
  assert_int_equal(capprof_dump(NULL, second, sizeof second), 0);
  char want[512];
  snprintf(want, sizeof want, "%s/pat-%d.capprof", dir, (int)getpid());
  assert_string_equal(first, want);
  snprintf(want, sizeof want, "%s/pat-%d.1.capprof", dir, (int)getpid());
  assert_string_equal(second, want);
  assert_int_equal(access(second, F_OK), 0);
  assert_int_equal(capprof_set_output(NULL), 0);
}

static void test_pattern_expansion(void **state)
{
  (void)state;
  char buf[1100], want[600];
  assert_int_equal(dump_expand_pattern("x-%p-%n-%%-%q.capprof", buf, sizeof buf), 0);
  snprintf(want, sizeof want, "x-%d-test_dump-%%-%%q.capprof", (int)getpid());
  assert_string_equal(buf, want);
  assert_int_equal(dump_expand_pattern(dir, buf, sizeof buf), 0);    /* a directory */
  snprintf(want, sizeof want, "%s/test_dump.%d.capprof", dir, (int)getpid());
  assert_string_equal(buf, want);
  assert_int_equal(dump_expand_pattern("%t", buf, sizeof buf), 0);
  assert_int_equal(strlen(buf), 15);                                  /* YYYYmmdd-HHMMSS */
  assert_int_equal(dump_expand_pattern("", buf, sizeof buf), CAPPROF_EINVAL);
  char small[8];
  assert_int_equal(dump_expand_pattern("%n%n%n", small, sizeof small), CAPPROF_EINVAL);
}

static void test_pause_resume_reset(void **state)
{
  (void)state;
  char path[512];
  assert_int_equal(capprof_reset(), 0);
  probe_leaf(1);
  assert_int_equal(capprof_pause(), 0);
  assert_false(capprof_is_active());
  probe_leaf(2);
  probe_parent(3);
  assert_int_equal(capprof_resume(), 0);
  assert_true(capprof_is_active());
  probe_leaf(3);
  struct cpd_dump *d = dump_now("pause.capprof", path, sizeof path);
  assert_int_equal(calls_of(d, probe_leaf, NULL), 2);
  assert_int_equal(calls_of(d, probe_parent, NULL), 0);
  cpd_free(d);

  assert_int_equal(capprof_reset(), 0);
  probe_leaf(4);
  d = dump_now("reset.capprof", path, sizeof path);
  assert_int_equal(calls_of(d, probe_leaf, NULL), 1);
  cpd_free(d);
}

static unsigned char *read_file(const char *path, size_t *n)
{
  FILE *f = fopen(path, "rb");
  assert_non_null(f);
  fseek(f, 0, SEEK_END);
  *n = (size_t)ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char *b = malloc(*n);
  assert_int_equal(fread(b, 1, *n, f), *n);
  fclose(f);
  return b;
}

static int parse(const unsigned char *b, size_t n)
{
  struct cpd_dump *d;
  int rc = cpd_parse(b, n, &d, NULL, 0);
  if (rc == 0) cpd_free(d);
  return rc;
}

static void test_rejects_truncated(void **state)
{
  (void)state;
  char path[512];
  probe_parent(4);
  cpd_free(dump_now("trunc.capprof", path, sizeof path));
  size_t n;
  unsigned char *b = read_file(path, &n);
  assert_int_equal(parse(b, n), 0);
  for (size_t len = 0; len < n; len++) {
    unsigned char *cut = malloc(len ? len : 1);   /* exact size: ASan sees overreads */
    memcpy(cut, b, len);
    int rc = parse(cut, len);
    assert_true(rc == CAPPROF_ETRUNC || (len < CPD_MAGIC_LEN && rc == CAPPROF_EFORMAT));
    free(cut);
  }
  free(b);
}

static void test_rejects_corrupt(void **state)
{
  (void)state;
  char path[512];
  probe_parent(4);
  cpd_free(dump_now("corrupt.capprof", path, sizeof path));
  size_t n;
  unsigned char *b = read_file(path, &n), *c = malloc(n + 16);

  memcpy(c, b, n); c[0] = 'X';
  assert_int_equal(parse(c, n), CAPPROF_EFORMAT);
  memcpy(c, b, n); cpd_put16(c + CPD_H_VERSION, 99);
  assert_int_equal(parse(c, n), CAPPROF_EVERSION);
  memcpy(c, b, n); memset(c + n, 0, 16);
  assert_int_equal(parse(c, n + 16), CAPPROF_ECORRUPT);               /* trailing bytes */
  memcpy(c, b, n); cpd_put32(c + CPD_H_FLAGS, 0);
  assert_int_equal(parse(c, n), CAPPROF_ETRUNC);                      /* not finished */
  memcpy(c, b, n); cpd_put32(c + CPD_H_NSECTIONS, 0xFFFFFFFFu);
  assert_int_equal(parse(c, n), CAPPROF_ECORRUPT);

  /* Every single-byte change anywhere: never a crash; errors are codes. */
  srand(12345);
  for (size_t i = 0; i < n; i++) {
    memcpy(c, b, n);
    c[i] ^= (unsigned char)(1u << (rand() % 8));
    int rc = parse(c, n);
    assert_true(rc <= 0 && rc > CAPPROF_ERR_LAST_);
  }
  /* Many random multi-byte changes, including huge counts. */
  for (int round = 0; round < 3000; round++) {
    memcpy(c, b, n);
    for (int k = 0; k < 4; k++) {
      size_t at = (size_t)rand() % (n - 4);
      cpd_put32(c + at, round % 3 ? (uint32_t)rand() : 0xFFFFFFF0u);
    }
    int rc = parse(c, n);
    assert_true(rc <= 0 && rc > CAPPROF_ERR_LAST_);
  }
  free(b);
  free(c);
}

/* UNHOOKED records (format 1.8) say per function whether every store into
** its code was followed by a core serialization (unhook.c): written as
** logged, read back with the flag known. Last: the records stay. */
static void test_unhooked_flags(void **state)
{
  (void)state;
  uint64_t a = (uint64_t)(uintptr_t)probe_leaf, b = (uint64_t)(uintptr_t)probe_parent;
  unhook_log(a, cp_now(), 0, 1);
  unhook_log(b, cp_now(), 0, 0);
  char path[512];
  struct cpd_dump *d = dump_now("unhooked.capprof", path, sizeof path);
  int seen = 0;
  for (uint32_t i = 0; i < d->nunhooked; i++) {
    const struct cpd_unhooked *r = &d->unhooked[i];
    if (r->key != a && r->key != b) continue;
    seen++;
    assert_int_equal(r->flags, r->key == a ? CPD_UNHOOKED_SYNCED : 0u);
    assert_true(r->calls == CPD_UNHOOKED_UNCOUNTED);
  }
  assert_int_equal(seen, 2);
  cpd_free(d);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_round_trip),
    cmocka_unit_test(test_never_overwrites),
    cmocka_unit_test(test_pattern_expansion),
    cmocka_unit_test(test_pause_resume_reset),
    cmocka_unit_test(test_rejects_truncated),
    cmocka_unit_test(test_rejects_corrupt),
    cmocka_unit_test(test_unhooked_flags),
  };
  return cmocka_run_group_tests_name("dump", tests, setup_dir, remove_dir);
}
