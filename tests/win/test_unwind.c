/*
** test_unwind.c -- a C++ exception, an SEH exception (RaiseException caught
** by __except) and a longjmp leave instrumented frames without their _pexit;
** the runtime pops those frames by stack pointer and the tree stays exact:
** every call counted once, each later call under its real caller, nothing
** left open. Keys are GCC -mfentry's: function start + 5.
*/
#include <stdint.h>
#include <string.h>
#include <windows.h>

#include "capprof/capprof.h"
#include "model/cpd_reader.h"
#include "wintest.h"
#include "wtdump.h"

void after(void), cxx_thrower(int), seh_thrower(int), lj_thrower(int);
int cxx_catcher(void), cxx_catcher_noafter(void), seh_catcher(void), lj_catcher(void);

static const struct cpd_thread *T;

#define KEY(fn) ((uint64_t)(uintptr_t)(fn) + 5)

/* The child of node parent with key, or 0. */
static uint32_t child(uint32_t parent, uint64_t key)
{
  for (uint32_t i = 1; i < T->node_count; i++)
    if (T->nodes[i].parent == parent && T->nodes[i].key == key) return i;
  return 0;
}

static uint32_t children(uint32_t parent)
{
  uint32_t k = 0;
  for (uint32_t i = 1; i < T->node_count; i++)
    k += T->nodes[i].parent == parent && !CPD_KEY_IS_SPECIAL(T->nodes[i].key);
  return k;
}

/* catcher -> thrower x depth (1 call each), and `after` under the catcher
** when with_after. */
static void check_shape(uint64_t catcher, uint64_t thrower, int depth, int with_after)
{
  uint32_t c = child(0, catcher);
  WT_CHECK(c != 0);
  if (!c) return;
  WT_CHECK_EQ_U64(T->nodes[c].calls, 1);
  WT_CHECK_EQ_U64(children(c), with_after ? 2u : 1u);
  if (with_after) {
    uint32_t a = child(c, KEY(after));
    WT_CHECK(a != 0);
    if (a) WT_CHECK_EQ_U64(T->nodes[a].calls, 1);
  }
  uint32_t p = c;
  for (int d = 0; d < depth; d++) {
    uint32_t t = child(p, thrower);
    WT_CHECK(t != 0);
    if (!t) return;
    WT_CHECK_EQ_U64(T->nodes[t].calls, 1);
    WT_CHECK_EQ_U64(children(t), d + 1 < depth ? 1u : 0u);   /* no `after` below */
    p = t;
  }
}

static void test_unwinds(void)
{
  WT_CHECK_EQ_U64(cxx_catcher(), 1);
  WT_CHECK_EQ_U64(cxx_catcher_noafter(), 1);
  WT_CHECK_EQ_U64(seh_catcher(), 1);
  WT_CHECK_EQ_U64(lj_catcher(), 1);

  struct cpd_dump *d = wt_dump("test_unwind.tree");
  if (!d) return;
  for (uint32_t i = 0; i < d->nthreads; i++)
    if (d->threads[i].tid == GetCurrentThreadId()) T = &d->threads[i];
  WT_CHECK(T != NULL);
  if (T) {
    WT_CHECK_EQ_U64(T->open_calls, 0);
    check_shape(KEY(cxx_catcher), KEY(cxx_thrower), 4, 1);
    check_shape(KEY(cxx_catcher_noafter), KEY(cxx_thrower), 3, 0);
    check_shape(KEY(seh_catcher), KEY(seh_thrower), 4, 1);
    check_shape(KEY(lj_catcher), KEY(lj_thrower), 4, 1);
    WT_CHECK_EQ_U64(children(0), 4);
  }
  wt_dump_free(d);
}

int main(void)
{
  WT_RUN(test_unwinds);
  return wt_finish("test_unwind");
}
