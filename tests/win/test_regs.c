/*
** test_regs.c -- _penter/_pexit preserve every volatile register, the flags,
** GetLastError() and errno, at both x64 entry alignments and with the /GH
** placement (return value live, frame up); the calls they time land in
** the tree with exact counts; nested calls placed as MSVC x64 places the
** hooks, and a /Gh-only tail jump, give the exact tree; and the cost of a
** hooked call. The functions that call the hooks, exactly as
** /Gh and /GH code does, are in regs_x64.asm.
*/
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <windows.h>

#include "capprof/capprof.h"
#include "model/cpd_reader.h"
#include "wintest.h"
#include "wtdump.h"

extern uint64_t regs_in[7], xmm_in[12], flags_in, regs_enter[7], xmm_enter[12], flags_enter;
extern uint64_t regs_exit[7], xmm_exit[12], flags_exit;
void regs_pre(void), regs_post(void), regs_mixed(void);
void nest_outer(int n), nest_inner(void), nest_leaf(void), tail_a(void), tail_b(void);
void empty_gh(void), empty_plain(void), zone_leaker(void), abandon_small(void), big_frame(void);

/* A node's key is a return address inside the function: after its start,
** past what regs_x64.asm puts before `call _penter` (the regs_* functions
** load every register first: ~0x70 bytes; the others at most a prologue). */
#define KEY_IN(key, fn, span) \
  ((key) > (uint64_t)(uintptr_t)(fn) && (key) <= (uint64_t)(uintptr_t)(fn) + (span))
#define KEY_OF(key, fn) KEY_IN(key, fn, 0x100)

#define STATUS_FLAGS 0x8D5u      /* CF PF AF ZF SF OF */
#define CALLS 1000
#define NEST 7                   /* nest_outer's calls of nest_inner */

struct scenario { const char *name; void (*fn)(void); };
static const struct scenario scenarios[] = {
  { "pre-prologue entry, exit after epilogue", regs_pre },
  { "post-prologue entry, exit with frame up", regs_post },
  { "pre-prologue entry, exit with frame up", regs_mixed },
};

/* Status-flag patterns: all set, all clear, and mixtures (OF alone too). */
static const uint64_t flag_patterns[] = { 0x8D5, 0x000, 0x800, 0x0C1, 0x814, 0x045, 0x880 };

static void fill_inputs(unsigned seed)
{
  flags_in = 0x2 | flag_patterns[seed % (sizeof flag_patterns / sizeof flag_patterns[0])];
  for (int i = 0; i < 7; i++) regs_in[i] = 0x0123456789ABCDEFull * (i + 1) ^ seed;
  for (int i = 0; i < 12; i++) xmm_in[i] = 0xFEDCBA9876543210ull * (i + 3) ^ seed;
}

/* Run one scenario once and check everything it captured. */
static void run_once(const struct scenario *s, unsigned seed)
{
  fill_inputs(seed);
  memset(regs_enter, 0, sizeof regs_enter);
  memset(regs_exit, 0, sizeof regs_exit);
  memset(xmm_enter, 0, sizeof xmm_enter);
  memset(xmm_exit, 0, sizeof xmm_exit);
  flags_enter = flags_exit = 0;
  SetLastError(0xC0DE0000u + seed);
  errno = 40 + (int)(seed % 50);
  s->fn();
  DWORD le = GetLastError();
  int en = errno;
  WT_CHECK_EQ_U64(le, 0xC0DE0000u + seed);
  WT_CHECK_EQ_U64(en, 40 + (int)(seed % 50));
  for (int i = 0; i < 7; i++) {
    WT_CHECK_EQ_U64(regs_enter[i], regs_in[i]);
    WT_CHECK_EQ_U64(regs_exit[i], regs_in[i]);
  }
  WT_CHECK(memcmp(xmm_enter, xmm_in, sizeof xmm_in) == 0);
  WT_CHECK(memcmp(xmm_exit, xmm_in, sizeof xmm_in) == 0);
  WT_CHECK_EQ_U64(flags_enter & STATUS_FLAGS, flags_in & STATUS_FLAGS);
  WT_CHECK_EQ_U64(flags_exit & STATUS_FLAGS, flags_in & STATUS_FLAGS);
}

static DWORD WINAPI first_hooks_of_thread(void *arg)
{
  /* The very first hook of a thread takes the slow path (allocation,
  ** TlsSetValue, FlsSetValue): the registers and errors must survive it. */
  run_once(&scenarios[(uintptr_t)arg], 1000u + (unsigned)(uintptr_t)arg);
  return 0;
}

static DWORD WINAPI msvc_tree_thread(void *arg)
{
  (void)arg;
  nest_outer(NEST);
  tail_a();
  for (int i = 0; i < 3; i++) zone_leaker();
  abandon_small();
  big_frame();
  return 0;
}

static void test_fresh_threads(void)
{
  for (uintptr_t i = 0; i < 3; i++) {
    HANDLE h = CreateThread(NULL, 0, first_hooks_of_thread, (void *)i, 0, NULL);
    WT_CHECK(h != NULL);
    WaitForSingleObject(h, INFINITE);
    CloseHandle(h);
  }
}

static void test_main_thread(void)
{
  for (unsigned k = 0; k < CALLS; k++)
    for (int i = 0; i < 3; i++) run_once(&scenarios[i], k * 3 + (unsigned)i);
}

/* The child of node parent with key in thread t, or 0. */
static uint32_t child(const struct cpd_thread *t, uint32_t parent, void (*fn)(void))
{
  for (uint32_t i = 1; i < t->node_count; i++)
    if (t->nodes[i].parent == parent && KEY_IN(t->nodes[i].key, fn, 0x10)) return i;
  return 0;
}

static void test_msvc_trees(void)
{
  DWORD tid = 0;
  HANDLE h = CreateThread(NULL, 0, msvc_tree_thread, NULL, 0, &tid);
  WT_CHECK(h != NULL);
  WaitForSingleObject(h, INFINITE);
  CloseHandle(h);
  struct cpd_dump *d = wt_dump("test_regs.msvc");
  if (!d) return;
  const struct cpd_thread *t = NULL;
  for (uint32_t i = 0; i < d->nthreads; i++)
    if (d->threads[i].tid == tid) t = &d->threads[i];
  WT_CHECK(t != NULL);
  if (t) {
    WT_CHECK(t->end_ns != 0);                /* the FLS callback saw it end */
    WT_CHECK_EQ_U64(t->open_calls, 0);
    uint32_t o = child(t, 0, (void (*)(void))nest_outer);
    uint32_t i = o ? child(t, o, nest_inner) : 0;
    uint32_t l = i ? child(t, i, nest_leaf) : 0;
    WT_CHECK(o && i && l);
    if (o) WT_CHECK_EQ_U64(t->nodes[o].calls, 1);
    if (i) WT_CHECK_EQ_U64(t->nodes[i].calls, NEST);
    if (l) WT_CHECK_EQ_U64(t->nodes[l].calls, 2 * NEST);
    uint32_t a = child(t, 0, tail_a), b = child(t, 0, tail_b);
    WT_CHECK(a && b);
    if (a) WT_CHECK_EQ_U64(t->nodes[a].calls, 1);
    if (b) WT_CHECK_EQ_U64(t->nodes[b].calls, 1);
    /* An abandoned frame and a sibling with a larger frame (and a frame
    ** pointer): siblings, thanks to the unwind data. */
    uint32_t ab = child(t, 0, abandon_small), bf = child(t, 0, big_frame);
    WT_CHECK(ab && bf);
    if (ab) WT_CHECK_EQ_U64(t->nodes[ab].calls, 1);
    if (bf) WT_CHECK_EQ_U64(t->nodes[bf].calls, 1);
    /* A zone left open is popped at its function's _pexit. */
    uint32_t z = child(t, 0, zone_leaker), zc = 0, zn = 0;
    WT_CHECK(z != 0);
    if (z) WT_CHECK_EQ_U64(t->nodes[z].calls, 3);
    for (uint32_t k = 1; k < t->node_count; k++)
      if (CPD_KEY_IS_ZONE(t->nodes[k].key)) { zn++; zc = k; }
    WT_CHECK_EQ_U64(zn, 1);
    if (zc) {
      WT_CHECK_EQ_U64(t->nodes[zc].parent, z);
      WT_CHECK_EQ_U64(t->nodes[zc].calls, 3);
    }
  }
  wt_dump_free(d);
}

/* ns per call an instrumented empty function costs its caller, /Gh + /GH,
** with the calibrated clock; a figure, not a check. */
static void test_cost(void)
{
  LARGE_INTEGER f, a, b, c;
  QueryPerformanceFrequency(&f);
  enum { N = 2000000 };
  double best_gh = 1e30, best_plain = 1e30;
  for (int r = 0; r < 5; r++) {
    QueryPerformanceCounter(&a);
    for (int i = 0; i < N; i++) empty_gh();
    QueryPerformanceCounter(&b);
    for (int i = 0; i < N; i++) empty_plain();
    QueryPerformanceCounter(&c);
    double gh = (double)(b.QuadPart - a.QuadPart) * 1e9 / (double)f.QuadPart / N;
    double plain = (double)(c.QuadPart - b.QuadPart) * 1e9 / (double)f.QuadPart / N;
    if (gh < best_gh) best_gh = gh;
    if (plain < best_plain) best_plain = plain;
  }
  printf("cost: %.1f ns per /Gh+/GH call (empty function: %.1f ns uninstrumented)\n",
         best_gh - best_plain, best_plain);
  WT_CHECK(best_gh > best_plain);
}

/* Every call of the main thread is a child of the root, keyed by the return
** address of its `call _penter`, with the exact count. */
static void test_tree(void)
{
  struct cpd_dump *d = wt_dump("test_regs.tree");
  if (!d) return;
  const struct cpd_thread *main_t = NULL;
  for (uint32_t i = 0; i < d->nthreads; i++)
    if (d->threads[i].tid == GetCurrentThreadId()) main_t = &d->threads[i];
  WT_CHECK(main_t != NULL);
  for (int s = 0; main_t && s < 3; s++) {
    int found = 0;
    for (uint32_t n = 1; n < main_t->node_count; n++) {
      const struct cpd_node *nd = &main_t->nodes[n];
      if (!KEY_OF(nd->key, scenarios[s].fn)) continue;
      found++;
      WT_CHECK_EQ_U64(nd->parent, 0);
      WT_CHECK_EQ_U64(nd->calls, CALLS);
    }
    WT_CHECK_EQ_U64(found, 1);
  }
  /* The three other threads made one call each. */
  int singles = 0;
  for (uint32_t i = 0; i < d->nthreads; i++) {
    const struct cpd_thread *t = &d->threads[i];
    if (t == main_t) continue;
    for (uint32_t n = 1; n < t->node_count; n++)
      for (int s = 0; s < 3; s++)
        if (KEY_OF(t->nodes[n].key, scenarios[s].fn)) {
          WT_CHECK_EQ_U64(t->nodes[n].calls, 1);
          WT_CHECK_EQ_U64(t->nodes[n].parent, 0);
          singles++;
        }
  }
  WT_CHECK_EQ_U64(singles, 3);
  wt_dump_free(d);
}

int main(void)
{
  WT_RUN(test_fresh_threads);
  WT_RUN(test_main_thread);
  WT_RUN(test_tree);
  WT_RUN(test_msvc_trees);
  WT_RUN(test_cost);
  return wt_finish("test_regs");
}
