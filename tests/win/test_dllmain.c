/*
** test_dllmain.c -- hooks fire inside DllMain, under the loader lock, and a
** thread's first hook may be there too (DLL_THREAD_ATTACH): nothing
** deadlocks, and the calls are in the tree with exact counts. The program is
** not instrumented; it uses capprof.dll's control API to dump.
*/
#include <stdint.h>
#include <windows.h>

#include "capprof/capprof.h"
#include "model/cpd_reader.h"
#include "wintest.h"
#include "wtdump.h"

typedef int (*work_fn)(int);
typedef void *(*addr_fn)(void);

static work_fn dll_work;
static uint64_t helper_key, main_key;
static DWORD thread_id;

static DWORD WINAPI worker(void *arg)
{
  (void)arg;
  return (DWORD)dll_work(3);
}

/* Calls of key under parent (any parent key when parent_key is 0) in t. */
static uint64_t calls_of(const struct cpd_thread *t, uint64_t key, uint64_t parent_key)
{
  uint64_t n = 0;
  for (uint32_t i = 1; i < t->node_count; i++) {
    const struct cpd_node *nd = &t->nodes[i];
    if (nd->key != key) continue;
    if (parent_key && t->nodes[nd->parent].key != parent_key) continue;
    n += nd->calls;
  }
  return n;
}

static void test_dllmain(void)
{
  HMODULE m = LoadLibraryA("dll_hooks.dll");      /* DLL_PROCESS_ATTACH hooks */
  WT_CHECK(m != NULL);
  if (!m) return;
  dll_work = (work_fn)(void (*)(void))GetProcAddress(m, "dll_work");
  addr_fn ha = (addr_fn)(void (*)(void))GetProcAddress(m, "dll_helper_address");
  addr_fn ma = (addr_fn)(void (*)(void))GetProcAddress(m, "dll_main_address");
  WT_CHECK(dll_work && ha && ma);
  if (!dll_work || !ha || !ma) return;
  helper_key = (uint64_t)(uintptr_t)ha() + 5;      /* GCC -mfentry: start + 5 */
  main_key = (uint64_t)(uintptr_t)ma() + 5;
  HANDLE h = CreateThread(NULL, 0, worker, NULL, 0, &thread_id);   /* THREAD_ATTACH/DETACH */
  WT_CHECK(h != NULL);
  WaitForSingleObject(h, INFINITE);
  CloseHandle(h);
  WT_CHECK_EQ_U64(dll_work(4), 6);
  FreeLibrary(m);                                   /* DLL_PROCESS_DETACH hooks */

  struct cpd_dump *d = wt_dump("test_dllmain");
  if (!d) return;
  const struct cpd_thread *self = NULL, *other = NULL;
  for (uint32_t i = 0; i < d->nthreads; i++) {
    if (d->threads[i].tid == GetCurrentThreadId()) self = &d->threads[i];
    if (d->threads[i].tid == thread_id) other = &d->threads[i];
  }
  WT_CHECK(self && other);
  if (self && other) {
    /* Main thread: DllMain at attach and detach, each calling dll_helper;
    ** dll_work(4) calling it 4 times. */
    WT_CHECK_EQ_U64(calls_of(self, main_key, 0), 2);
    WT_CHECK_EQ_U64(calls_of(self, helper_key, main_key), 2);
    WT_CHECK_EQ_U64(calls_of(self, helper_key, 0), 6);
    /* The thread: its first hooks ran in DllMain(DLL_THREAD_ATTACH) under
    ** the loader lock; then dll_work(3); then DLL_THREAD_DETACH. */
    WT_CHECK_EQ_U64(calls_of(other, main_key, 0), 2);
    WT_CHECK_EQ_U64(calls_of(other, helper_key, main_key), 2);
    WT_CHECK_EQ_U64(calls_of(other, helper_key, 0), 5);
    WT_CHECK(other->end_ns != 0);
  }
  wt_dump_free(d);
}

int main(void)
{
  WT_RUN(test_dllmain);
  return wt_finish("test_dllmain");
}
