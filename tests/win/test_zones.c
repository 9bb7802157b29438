/*
** test_zones.c -- zones under the Windows hooks: a zone sits between the
** /Gh-instrumented function that opens it and that function's callees; a
** zone its function leaves open is popped by _pexit (no key) and counted;
** zones in uninstrumented code (zones only) nest by themselves.
*/
#include <stdint.h>
#include <string.h>
#include <windows.h>

#define CAPPROF_ENABLED 1
#include "capprof/capprof.h"
#include "model/cpd_reader.h"
#include "wintest.h"
#include "wtdump.h"

void zinner(int), zouter(int), zforget(void), zcaller(void);

#define KEY(fn) ((uint64_t)(uintptr_t)(fn) + 5)

static const struct cpd_dump *D;
static const struct cpd_thread *T;

static int is_zone(uint32_t i, const char *name)
{
  uint64_t k = T->nodes[i].key;
  return CPD_KEY_IS_ZONE(k) && !strcmp(D->strings[k & 0xFFFFFFFFu], name);
}

static uint32_t child_key(uint32_t parent, uint64_t key)
{
  for (uint32_t i = 1; i < T->node_count; i++)
    if (T->nodes[i].parent == parent && T->nodes[i].key == key) return i;
  return 0;
}

static uint32_t child_zone(uint32_t parent, const char *name)
{
  for (uint32_t i = 1; i < T->node_count; i++)
    if (T->nodes[i].parent == parent && is_zone(i, name)) return i;
  return 0;
}

static uint64_t issues(const char *name, unsigned kind)
{
  for (uint32_t s = 0; s < D->nstrings; s++)
    if (!strcmp(D->strings[s], name)) return cpd_zone_issue_total(D, s, kind);
  return 0;
}

static void test_zones(void)
{
  zouter(3);
  zcaller();
  CAPPROF_ZONE_BEGIN("plain");
  CAPPROF_ZONE_BEGIN("plain-inner");
  CAPPROF_ZONE_END();
  CAPPROF_ZONE_END("plain");

  struct cpd_dump *d = wt_dump("test_zones");
  if (!d) return;
  D = d;
  for (uint32_t i = 0; i < d->nthreads; i++)
    if (d->threads[i].tid == GetCurrentThreadId()) T = &d->threads[i];
  WT_CHECK(T != NULL);
  if (!T) { cpd_free(d); return; }

  uint32_t o = child_key(0, KEY(zouter));
  WT_CHECK(o != 0);
  uint32_t ph = o ? child_zone(o, "phase") : 0;
  WT_CHECK(ph != 0);
  uint32_t in = ph ? child_key(ph, KEY(zinner)) : 0;
  WT_CHECK(in != 0);
  if (in) WT_CHECK_EQ_U64(T->nodes[in].calls, 3);
  uint32_t after = o ? child_key(o, KEY(zinner)) : 0;    /* zinner(-1), after END */
  WT_CHECK(after != 0);
  if (after) WT_CHECK_EQ_U64(T->nodes[after].calls, 1);

  uint32_t c = child_key(0, KEY(zcaller));
  WT_CHECK(c != 0);
  uint32_t f = c ? child_key(c, KEY(zforget)) : 0;
  WT_CHECK(f != 0);
  uint32_t fz = f ? child_zone(f, "forgotten") : 0;
  WT_CHECK(fz != 0);
  uint32_t ci = c ? child_key(c, KEY(zinner)) : 0;
  WT_CHECK(ci != 0);
  if (ci) WT_CHECK_EQ_U64(T->nodes[ci].calls, 1);
  WT_CHECK_EQ_U64(issues("forgotten", CPD_ZI_LEFT_OPEN), 1);
  WT_CHECK_EQ_U64(issues("phase", CPD_ZI_LEFT_OPEN), 0);

  uint32_t p = child_zone(0, "plain");
  WT_CHECK(p != 0);
  WT_CHECK(p && child_zone(p, "plain-inner") != 0);
  WT_CHECK_EQ_U64(issues("plain", CPD_ZI_END_WITHOUT_BEGIN), 0);
  cpd_free(d);
}

int main(void)
{
  WT_RUN(test_zones);
  return wt_finish("test_zones");
}
