/*
** test_zones.c -- the zone API in a program without compiler hooks: tokens
** and return codes, pause, dynamic and long names, reset, zones open at a
** dump, the output directory, the name-table limit, and a random mix of
** right and wrong BEGIN/END that must leave a consistent tree. Each case
** runs in a forked child (zones left open must not leak between cases),
** which writes a dump the parent then checks.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "capprof/capprof.h"
#include "model/cpd_reader.h"

static char dir[256];

/* In a child: report a failed check and stop with a non-zero status. */
#define CHILD_CHECK(x) \
  do { if (!(x)) { fprintf(stderr, "child check failed line %d: %s\n", __LINE__, #x); \
                   fflush(stderr); _exit(1); } } while (0)

static void child_dump(const char *name)
{
  char path[512];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  unlink(path);
  CHILD_CHECK(capprof_dump(path, NULL, 0) == 0);
}

/* Run fn in a child that dumps to dir/name; return the loaded dump. */
static struct cpd_dump *in_child_n(void (*fn)(void), const char *name, uint32_t nthreads)
{
  fflush(NULL);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    fn();
    child_dump(name);
    _exit(0);
  }
  int status;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status));
  assert_int_equal(WEXITSTATUS(status), 0);
  char path[512], err[256];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  struct cpd_dump *d;
  if (cpd_load(path, &d, err, sizeof err)) fail_msg("%s: %s", path, err);
  assert_int_equal(d->nthreads, nthreads);
  return d;
}

static struct cpd_dump *in_child(void (*fn)(void), const char *name)
{
  return in_child_n(fn, name, 1);
}

/* Node of zone path "a;b;c" below the root, or -1. */
static long zpath(const struct cpd_dump *d, const char *path)
{
  const struct cpd_thread *t = &d->threads[0];
  char copy[4096], *save;
  snprintf(copy, sizeof copy, "%s", path);
  long cur = 0;
  for (char *part = strtok_r(copy, ";", &save); part; part = strtok_r(NULL, ";", &save)) {
    long next = -1;
    for (uint32_t i = (uint32_t)cur + 1; i < t->node_count && next < 0; i++) {
      uint64_t k = t->nodes[i].key;
      if (t->nodes[i].parent == (uint32_t)cur && CPD_KEY_IS_ZONE(k) &&
          !strcmp(d->strings[k & 0xFFFFFFFFu], part))
        next = i;
    }
    if (next < 0) return -1;
    cur = next;
  }
  return cur;
}

static uint64_t zcalls(const struct cpd_dump *d, const char *path)
{
  long i = zpath(d, path);
  if (i < 0) fail_msg("no zone path %s", path);
  return d->threads[0].nodes[i].calls;
}

static uint64_t issue(const struct cpd_dump *d, const char *zone, unsigned kind)
{
  for (uint32_t s = 0; s < d->nstrings; s++)
    if (!strcmp(d->strings[s], zone)) return cpd_zone_issue_total(d, s, kind);
  return 0;
}

/* ---- cases ------------------------------------------------------------- */

static void api_child(void)
{
  CHILD_CHECK(capprof_zone_end(NULL) == CAPPROF_EINVAL);          /* nothing open */
  uint64_t tok = capprof_zone_begin("a");
  CHILD_CHECK(tok != 0);
  CHILD_CHECK(capprof_zone_end("a") == 0);
  CHILD_CHECK(capprof_zone_end("a") == CAPPROF_EINVAL);
  capprof_zone_end_token(0);                                      /* no-op */
  capprof_zone_end_token(tok);                                    /* already closed */
  tok = capprof_zone_begin("b");
  capprof_zone_end_token(tok);
  capprof_zone_end_token(tok);                                    /* twice: no-op */
}

static void test_api(void **state)
{
  (void)state;
  struct cpd_dump *d = in_child(api_child, "api.capprof");
  assert_int_equal(zcalls(d, "a"), 1);
  assert_int_equal(zcalls(d, "b"), 1);
  assert_int_equal(issue(d, "", CPD_ZI_END_WITHOUT_BEGIN), 1);
  assert_int_equal(issue(d, "a", CPD_ZI_END_WITHOUT_BEGIN), 1);
  assert_int_equal(issue(d, "b", CPD_ZI_END_WITHOUT_BEGIN), 0);
  cpd_free(d);
}

static void pause_child(void)
{
  CHILD_CHECK(capprof_pause() == 0);
  CHILD_CHECK(capprof_zone_begin("paused") == 0);
  CHILD_CHECK(capprof_resume() == 0);
  uint64_t tok = capprof_zone_begin("closed-while-paused");
  CHILD_CHECK(tok != 0);
  CHILD_CHECK(capprof_pause() == 0);
  capprof_zone_end_token(tok);        /* the token names the frame: closes */
  CHILD_CHECK(capprof_resume() == 0);
}

static void test_pause(void **state)
{
  (void)state;
  struct cpd_dump *d = in_child(pause_child, "pause.capprof");
  assert_int_equal(zpath(d, "paused"), -1);
  assert_int_equal(zcalls(d, "closed-while-paused"), 1);
  long i = zpath(d, "closed-while-paused");
  assert_false(d->threads[0].nodes[i].flags & CPD_NODE_OPEN);
  cpd_free(d);
}

static void names_child(void)
{
  char buf[32];
  for (int i = 0; i < 9; i++) {        /* one buffer, three names */
    snprintf(buf, sizeof buf, "kind-%d", i % 3);
    CAPPROF_ZONE_BEGIN(buf);
    CAPPROF_ZONE_END();
  }
  snprintf(buf, sizeof buf, "copied");
  CAPPROF_ZONE_BEGIN(buf);
  strcpy(buf, "changed");              /* the name was copied at BEGIN */
  CAPPROF_ZONE_END("copied");
  char *big = malloc(3000);
  memset(big, 'x', 2999);
  big[2999] = '\0';
  CAPPROF_ZONE_BEGIN(big);
  CAPPROF_ZONE_END();
  free(big);
}

static void test_names(void **state)
{
  (void)state;
  struct cpd_dump *d = in_child(names_child, "names.capprof");
  assert_int_equal(zcalls(d, "kind-0"), 3);
  assert_int_equal(zcalls(d, "kind-1"), 3);
  assert_int_equal(zcalls(d, "kind-2"), 3);
  assert_int_equal(zcalls(d, "copied"), 1);
  assert_int_equal(zpath(d, "changed"), -1);
  assert_int_equal(issue(d, "copied", CPD_ZI_END_WITHOUT_BEGIN), 0);
  int found = 0;
  for (uint32_t s = 0; s < d->nstrings; s++)
    if (d->strings[s][0] == 'x') {
      assert_int_equal(strlen(d->strings[s]), 1023);
      found = 1;
    }
  assert_true(found);
  cpd_free(d);
}

static void reset_child(void)
{
  CAPPROF_ZONE_BEGIN("before");
  CAPPROF_ZONE_END();
  CAPPROF_ZONE_END("stray");           /* an issue, forgotten by the reset */
  CAPPROF_ZONE_BEGIN("outer");
  CHILD_CHECK(capprof_reset() == 0);
  CAPPROF_ZONE_BEGIN("inner");
  CAPPROF_ZONE_END("inner");
  CAPPROF_ZONE_END("outer");           /* in tail position: must stay a call */
}

static void test_reset(void **state)
{
  (void)state;
  struct cpd_dump *d = in_child(reset_child, "reset.capprof");
  assert_int_equal(zpath(d, "before"), -1);
  assert_int_equal(zcalls(d, "outer"), 1);
  assert_int_equal(zcalls(d, "outer;inner"), 1);
  assert_int_equal(issue(d, "stray", CPD_ZI_END_WITHOUT_BEGIN), 0);
  assert_int_equal(issue(d, "outer", CPD_ZI_END_WITHOUT_BEGIN), 0);
  cpd_free(d);
}

static void open_child(void)
{
  CAPPROF_ZONE_BEGIN("pending");
  CAPPROF_ZONE_BEGIN("inside");
  child_dump("open-mid.capprof");      /* both open at this dump */
  CAPPROF_ZONE_END("inside");
  CAPPROF_ZONE_END("pending");
}

static void test_open_at_dump(void **state)
{
  (void)state;
  struct cpd_dump *d = in_child(open_child, "open-end.capprof");
  assert_int_equal(issue(d, "pending", CPD_ZI_OPEN_AT_DUMP), 0);
  assert_int_equal(zcalls(d, "pending;inside"), 1);
  cpd_free(d);
  char path[512], err[256];
  snprintf(path, sizeof path, "%s/open-mid.capprof", dir);
  assert_int_equal(cpd_load(path, &d, err, sizeof err), 0);
  assert_int_equal(issue(d, "pending", CPD_ZI_OPEN_AT_DUMP), 1);
  assert_int_equal(issue(d, "inside", CPD_ZI_OPEN_AT_DUMP), 1);
  assert_int_equal(issue(d, "pending", CPD_ZI_OPEN_AT_EXIT), 0);
  long i = zpath(d, "pending;inside");
  assert_true(i > 0);
  assert_true(d->threads[0].nodes[i].flags & CPD_NODE_OPEN);
  cpd_free(d);
}

static void outdir_child(void)
{
  char sub[300], out[1200];
  CAPPROF_ZONE_BEGIN("outdir");
  CAPPROF_ZONE_END();
  snprintf(sub, sizeof sub, "%s/outdir", dir);
  mkdir(sub, 0755);
  CHILD_CHECK(capprof_set_output("%n.%p.zones") == 0);
  CHILD_CHECK(capprof_set_output_dir(sub) == 0);
  CHILD_CHECK(capprof_dump(NULL, out, sizeof out) == 0);
  CHILD_CHECK(strncmp(out, sub, strlen(sub)) == 0 && out[strlen(sub)] == '/');
  CHILD_CHECK(strstr(out, ".zones") != NULL);
  CHILD_CHECK(access(out, R_OK) == 0);
  char abs[400];                       /* an absolute pattern ignores the directory */
  snprintf(abs, sizeof abs, "%s/abs.%%p.capprof", dir);
  CHILD_CHECK(capprof_set_output(abs) == 0);
  CHILD_CHECK(capprof_dump(NULL, out, sizeof out) == 0);
  CHILD_CHECK(strncmp(out, sub, strlen(sub)) != 0);
  CHILD_CHECK(capprof_set_output_dir(NULL) == 0);
  CHILD_CHECK(capprof_set_output(NULL) == 0);
}

static void test_output_dir(void **state)
{
  (void)state;
  cpd_free(in_child(outdir_child, "outdir.capprof"));
}

static void many_child(void)
{
  char buf[32];
  for (int i = 0; i < 70000; i++) {
    snprintf(buf, sizeof buf, "n%d", i);
    uint64_t tok = capprof_zone_begin(buf);
    CHILD_CHECK(tok != 0);
    capprof_zone_end_token(tok);
  }
}

static void test_many_names(void **state)
{
  (void)state;
  struct cpd_dump *d = in_child(many_child, "many.capprof");
  assert_true(d->nstrings <= 65536);
  assert_true(zcalls(d, "(more zone names than capprof keeps)") >= 70000 - 65535);
  assert_int_equal(zcalls(d, "n0"), 1);
  cpd_free(d);
}

/* Random BEGIN/END, right and wrong, at random depths of recursion. */
static unsigned rnd_state = 12345;
static unsigned rnd(void) { return (rnd_state = rnd_state * 1103515245u + 12345u) >> 16; }
static const char *const fuzz_names[] = { "a", "b", "c", "d" };

static __attribute__((noinline)) void fuzz(int depth)
{
  for (int i = 0; i < 8; i++) {
    switch (rnd() % 7) {
    case 0: CAPPROF_ZONE_BEGIN(fuzz_names[rnd() % 4]); break;
    case 1: CAPPROF_ZONE_END(); break;
    case 2: capprof_zone_end(fuzz_names[rnd() % 4]); break;
    case 3: { CAPPROF_ZONE("scoped"); if (depth < 6) fuzz(depth + 1); } break;
    case 4: if (depth < 6) fuzz(depth + 1); break;
    case 5: if (rnd() % 50 == 0) capprof_reset(); break;
    default: CAPPROF_FUNCTION(); break;
    }
  }
}

static void fuzz_child(void)
{
  for (int i = 0; i < 200; i++) fuzz(0);
}

static void test_consistency(void **state)
{
  (void)state;
  struct cpd_dump *d = in_child(fuzz_child, "fuzz.capprof");
  const struct cpd_thread *t = &d->threads[0];
  uint64_t *sum = calloc(t->node_count, sizeof *sum);
  for (uint32_t i = 1; i < t->node_count; i++) sum[t->nodes[i].parent] += t->nodes[i].incl;
  for (uint32_t i = 1; i < t->node_count; i++) {
    assert_true(sum[i] <= t->nodes[i].incl);
    uint64_t k = t->nodes[i].key;
    assert_true(CPD_KEY_IS_ZONE(k) || k == CPD_KEY_OVERFLOW || k == CPD_KEY_SINK);
  }
  free(sum);
  cpd_free(d);
}

/* Eight threads interning the same 500 names at once, in different orders. */
static void *intern_worker(void *arg)
{
  long id = (long)arg;
  char buf[32];
  for (int i = 0; i < 2000; i++) {
    snprintf(buf, sizeof buf, "n%d", (int)((i * (id + 1) * 7) % 500));
    CAPPROF_ZONE_BEGIN(buf);
    CAPPROF_ZONE_END();
  }
  return NULL;
}

static void threads_child(void)
{
  pthread_t th[8];
  for (long i = 0; i < 8; i++) CHILD_CHECK(pthread_create(&th[i], NULL, intern_worker, (void *)i) == 0);
  for (int i = 0; i < 8; i++) pthread_join(th[i], NULL);
}

static void test_threads_intern(void **state)
{
  (void)state;
  struct cpd_dump *d = in_child_n(threads_child, "threads.capprof", 8);
  assert_int_equal(d->nstrings, 500);
  for (uint32_t s = 0; s < d->nstrings; s++)
    for (uint32_t j = s + 1; j < d->nstrings; j++) assert_string_not_equal(d->strings[s], d->strings[j]);
  for (uint32_t th = 0; th < d->nthreads; th++) {
    const struct cpd_thread *t = &d->threads[th];
    uint64_t calls = 0;
    for (uint32_t i = 1; i < t->node_count; i++) {
      if (!CPD_KEY_IS_ZONE(t->nodes[i].key)) continue;
      assert_int_equal(t->nodes[i].parent, 0);
      calls += t->nodes[i].calls;
    }
    assert_int_equal(calls, 2000);
  }
  assert_int_equal(d->nzone_issues, 0);
  cpd_free(d);
}

static int setup(void **state)
{
  (void)state;
  snprintf(dir, sizeof dir, "/tmp/capprof-test-zones-%d", (int)getpid());
  mkdir(dir, 0755);
  return 0;
}

static int teardown(void **state)
{
  (void)state;
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_api),
    cmocka_unit_test(test_pause),
    cmocka_unit_test(test_names),
    cmocka_unit_test(test_reset),
    cmocka_unit_test(test_open_at_dump),
    cmocka_unit_test(test_output_dir),
    cmocka_unit_test(test_many_names),
    cmocka_unit_test(test_consistency),
    cmocka_unit_test(test_threads_intern),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
