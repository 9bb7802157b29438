/*
** tramp_x86_64.c (POSIX, x86-64 System V) -- the machine code of API
** interception: the per-import stubs, the shared entry trampoline and the
** return trampoline that plt.c points GOT slots at, and their fast paths.
** The bookkeeping they fall back to (intercept_enter/exit_thread) is in
** src/intercept/intercept.c. CMake builds this file with -mgeneral-regs-only: the
** fast paths below touch no vector or x87 register, so the trampolines
** save those only when they call the full paths.
**
** The trampolines themselves, cp_plt_entry and cp_plt_return, with their
** calling convention and frames, are in asm/tramp_x86_64.S.
*/
#include <string.h>

#include "../posix/posix.h"
#include "../hooks/hotpath.h"
#include "intercept.h"

void cp_plt_entry(void) CP_HIDDEN;
void cp_plt_return(void) CP_HIDDEN;
void *tramp_enter_fast(struct cp_thread *t, const struct icpt_stub *s, uintptr_t *slot) CP_HIDDEN;
void *tramp_exit_fast(struct cp_thread *t, uintptr_t *after) CP_HIDDEN;

/* The common case of intercept_enter_thread: the thread records, its return
** stack exists and has room, no entry is dead, not a tail call, and the
** call path exists (cp_hot_enter_try). Returns the real function, or NULL
** having changed nothing. One clock read. */
void *tramp_enter_fast(struct cp_thread *t, const struct icpt_stub *s, uintptr_t *slot)
{
  if (CP_UNLIKELY(!t || t->gate != cp_g.gate || !t->rstack)) return NULL;
  struct cp_rstack *r = t->rstack;
  struct icpt_ret *e = r->top;
  uintptr_t orig = *slot, ret = (uintptr_t)cp_plt_return;
  if (CP_UNLIKELY((e->slot <= slot) | (e + 1 >= r->end) | (orig == ret))) return NULL;
  if (CP_UNLIKELY(!cp_hot_enter_try_read(t, CPD_KEY_API | s->id, (uintptr_t)slot - 16,
                                         intercept_read_mode())))
    return NULL;
  intercept_rpush(r, e, slot, orig, s->id);
  *slot = ret;
  return s->real;
}

/* The common case of intercept_exit_thread: the innermost entry is this
** return's and not a tail call's, and the innermost frame is its node
** (cp_hot_exit_try). Returns the caller's return address, or NULL having
** changed nothing. One clock read. */
void *tramp_exit_fast(struct cp_thread *t, uintptr_t *after)
{
  if (CP_UNLIKELY(t->gate != cp_g.gate)) return NULL;
  struct cp_rstack *r = t->rstack;
  struct icpt_ret *e = r->top;
  uintptr_t *slot = after - 1;
  uintptr_t orig = e->orig;
  if (CP_UNLIKELY((e->slot != slot) | (orig == (uintptr_t)cp_plt_return))) return NULL;
  /* cp_hot_exit_try, but with the plain clock read (see intercept_exit_thread). */
  uint32_t mode = intercept_read_mode();
  struct cp_frame *f = t->top;
  struct cp_node *n = &t->nodes[f->node];
  if (CP_UNLIKELY((n->key != (CPD_KEY_API | e->id)) | (CP_FAST_CLOCK && mode == CP_CLOCK_OS)))
    return NULL;
  uint64_t now = cp_fast_enter_clock(mode);
  calltree_charge(n, now - t->debt - f->tstart);    /* the thread clock */
  t->top = f - 1;
  r->top = e - 1;
  return (void *)orig;
}


#define STUB_BYTES 32u

int tramp_supported(void) { return 1; }

uintptr_t tramp_return_address(void) { return (uintptr_t)cp_plt_return; }

size_t tramp_stub_size(void) { return STUB_BYTES; }

void tramp_write_stub(unsigned char *code, const struct icpt_stub *data)
{
  uint64_t d = (uint64_t)(uintptr_t)data, entry = (uint64_t)(uintptr_t)cp_plt_entry;
  int64_t rel = (int64_t)(entry - ((uint64_t)(uintptr_t)code + 15));
  memset(code, 0xCC, STUB_BYTES);                                   /* int3 padding */
  code[0] = 0x49;                                                   /* movabs ..., %r11 */
  code[1] = 0xBB;
  memcpy(code + 2, &d, 8);
  if (rel == (int32_t)rel) {                                        /* jmp rel32 */
    int32_t r32 = (int32_t)rel;
    code[10] = 0xE9;
    memcpy(code + 11, &r32, 4);
  } else {                                                          /* jmp *0(%rip) */
    static const unsigned char jmp[6] = { 0xFF, 0x25, 0, 0, 0, 0 };
    memcpy(code + 10, jmp, 6);
    memcpy(code + 16, &entry, 8);
  }
}
