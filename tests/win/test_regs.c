/*
** test_regs.c -- _penter/_pexit preserve every volatile register, the flags,
** GetLastError() and errno, at both x64 entry alignments and with the /GH
** placement (return value live, frame up); and the calls they time land in
** the tree with exact counts. The functions that call the hooks, exactly as
** /Gh and /GH code does, are in regs_x64.asm.
*/
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <windows.h>

#include "capprof/capprof.h"
#include "dumpread.h"
#include "wintest.h"

extern uint64_t regs_in[7], xmm_in[12], regs_enter[7], xmm_enter[12], flags_enter;
extern uint64_t regs_exit[7], xmm_exit[12], flags_exit;
void regs_pre(void), regs_post(void), regs_mixed(void);
extern char regs_pre_key[], regs_post_key[], regs_mixed_key[];

#define STATUS_FLAGS 0x8D5u      /* CF PF AF ZF SF OF */
#define CALLS 1000

struct scenario { const char *name; void (*fn)(void); const char *key; };
static const struct scenario scenarios[] = {
  { "pre-prologue entry, exit after epilogue", regs_pre, regs_pre_key },
  { "post-prologue entry, exit with frame up", regs_post, regs_post_key },
  { "pre-prologue entry, exit with frame up", regs_mixed, regs_mixed_key },
};

static void fill_inputs(unsigned seed)
{
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
  WT_CHECK_EQ_U64(flags_enter & STATUS_FLAGS, STATUS_FLAGS);
  WT_CHECK_EQ_U64(flags_exit & STATUS_FLAGS, STATUS_FLAGS);
}

static DWORD WINAPI first_hooks_of_thread(void *arg)
{
  /* The very first hook of a thread takes the slow path (allocation,
  ** TlsSetValue, FlsSetValue): the registers and errors must survive it. */
  run_once(&scenarios[(uintptr_t)arg], 1000u + (unsigned)(uintptr_t)arg);
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

/* Every call of the main thread is a child of the root, keyed by the return
** address of its `call _penter`, with the exact count. */
static void test_tree(void)
{
  char path[MAX_PATH];
  snprintf(path, sizeof path, "test_regs.%lu.tree.capprof", GetCurrentProcessId());
  DeleteFileA(path);
  WT_CHECK_EQ_U64(capprof_dump(path, NULL, 0), 0);
  struct cpd_dump *d = NULL;
  char err[256];
  int rc = cpd_load(path, &d, err, sizeof err);
  WT_CHECK_EQ_U64(rc, 0);
  if (rc) { fprintf(stderr, "%s\n", err); return; }
  const struct cpd_thread *main_t = NULL;
  for (uint32_t i = 0; i < d->nthreads; i++)
    if (d->threads[i].tid == GetCurrentThreadId()) main_t = &d->threads[i];
  WT_CHECK(main_t != NULL);
  for (int s = 0; main_t && s < 3; s++) {
    int found = 0;
    for (uint32_t n = 1; n < main_t->node_count; n++) {
      const struct cpd_node *nd = &main_t->nodes[n];
      if (nd->key != (uint64_t)(uintptr_t)scenarios[s].key) continue;
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
        if (t->nodes[n].key == (uint64_t)(uintptr_t)scenarios[s].key) {
          WT_CHECK_EQ_U64(t->nodes[n].calls, 1);
          WT_CHECK_EQ_U64(t->nodes[n].parent, 0);
          singles++;
        }
  }
  WT_CHECK_EQ_U64(singles, 3);
  cpd_free(d);
  DeleteFileA(path);
}

int main(void)
{
  WT_RUN(test_fresh_threads);
  WT_RUN(test_main_thread);
  WT_RUN(test_tree);
  return wt_finish("test_regs");
}
