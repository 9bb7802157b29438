/*
** tramp_x86_64.c (POSIX, x86-64 System V) -- the machine code of API
** interception: the per-import stubs, the shared entry trampoline and the
** return trampoline that plt.c points GOT slots at, and their fast paths.
** The bookkeeping they fall back to (intercept_enter/exit_thread) is in
** src/intercept.c. CMake builds this file with -mgeneral-regs-only: the
** fast paths below touch no vector or x87 register, so the trampolines
** save those only when they call the full paths.
**
** A stub is `movabs $stub_data, %r11; jmp cp_plt_entry` (a direct jump
** when the stub page is within 2 GiB of this code). %r11 is free at
** a call (a scratch register; the lazy-binding PLT clobbers it too).
**
** cp_plt_entry, entered as the callee would be: [rsp] = return address,
** rsp = 8 mod 16, arguments in rdi rsi rdx rcx r8 r9, xmm0-7, al = number
** of vector registers (variadic), r10 = static chain; stack arguments
** above the return address. Its frame (72 bytes, rsp = 0 mod 16; the full
** path adds 128 below it for xmm0-7):
**
**     rsp+72   return address slot  <- the entry may replace it
**     rsp+64   r11 (the stub)
**     rsp+0    rdi rsi rdx rcx r8 r9 rax r10
**
** It calls tramp_enter_fast(posix_tls, stub, &slot) and, when that declines
** (first call of a thread, new call path, paused...), saves xmm0-7 and calls
** intercept_enter_thread. It restores everything, pops its frame and jumps
** to the real function: the stack the callee sees is the caller's.
**
** cp_plt_return is where a hooked call returns (rsp = 0 mod 16). It saves
** rax and rdx (and xmm0, xmm1 before a full path; x87 st0 is never touched
** by the C code between), calls tramp_exit_fast(posix_tls, rsp at return),
** or intercept_exit_thread, and jumps to the caller's own return address
** that it returns. Vector registers' upper halves (ymm/zmm arguments) are
** not saved on the full paths: see docs/run.md.
*/
#include <string.h>

#include "../posix/posix.h"

__asm__(
  "  .text\n"
  "  .p2align 4\n"
  "  .globl cp_plt_entry\n"
  "  .hidden cp_plt_entry\n"
  "  .type cp_plt_entry,@function\n"
  "cp_plt_entry:\n"
  "  .cfi_startproc\n"
  "  subq $72, %rsp\n"
  "  .cfi_adjust_cfa_offset 72\n"
  "  movq %rdi, 0(%rsp)\n"
  "  movq %rsi, 8(%rsp)\n"
  "  movq %rdx, 16(%rsp)\n"
  "  movq %rcx, 24(%rsp)\n"
  "  movq %r8, 32(%rsp)\n"
  "  movq %r9, 40(%rsp)\n"
  "  movq %rax, 48(%rsp)\n"
  "  movq %r10, 56(%rsp)\n"
  "  movq %r11, 64(%rsp)\n"
  "  movq posix_tls@gottpoff(%rip), %rdi\n"      /* initial-exec TLS */
  "  movq %fs:(%rdi), %rdi\n"
  "  movq %r11, %rsi\n"
  "  leaq 72(%rsp), %rdx\n"
  "  call tramp_enter_fast\n"
  "  testq %rax, %rax\n"
  "  jnz 1f\n"
  "  subq $128, %rsp\n"                          /* full path: vectors too */
  "  .cfi_adjust_cfa_offset 128\n"
  "  movups %xmm0, 0(%rsp)\n"
  "  movups %xmm1, 16(%rsp)\n"
  "  movups %xmm2, 32(%rsp)\n"
  "  movups %xmm3, 48(%rsp)\n"
  "  movups %xmm4, 64(%rsp)\n"
  "  movups %xmm5, 80(%rsp)\n"
  "  movups %xmm6, 96(%rsp)\n"
  "  movups %xmm7, 112(%rsp)\n"
  "  movq posix_tls@gottpoff(%rip), %rdi\n"
  "  movq %fs:(%rdi), %rdi\n"
  "  movq 192(%rsp), %rsi\n"
  "  leaq 200(%rsp), %rdx\n"
  "  call intercept_enter_thread\n"
  "  movups 0(%rsp), %xmm0\n"
  "  movups 16(%rsp), %xmm1\n"
  "  movups 32(%rsp), %xmm2\n"
  "  movups 48(%rsp), %xmm3\n"
  "  movups 64(%rsp), %xmm4\n"
  "  movups 80(%rsp), %xmm5\n"
  "  movups 96(%rsp), %xmm6\n"
  "  movups 112(%rsp), %xmm7\n"
  "  addq $128, %rsp\n"
  "  .cfi_adjust_cfa_offset -128\n"
  "1:\n"
  "  movq %rax, %r11\n"
  "  movq 0(%rsp), %rdi\n"
  "  movq 8(%rsp), %rsi\n"
  "  movq 16(%rsp), %rdx\n"
  "  movq 24(%rsp), %rcx\n"
  "  movq 32(%rsp), %r8\n"
  "  movq 40(%rsp), %r9\n"
  "  movq 48(%rsp), %rax\n"
  "  movq 56(%rsp), %r10\n"
  "  addq $72, %rsp\n"
  "  .cfi_adjust_cfa_offset -72\n"
  "  jmpq *%r11\n"
  "  .cfi_endproc\n"
  "  .size cp_plt_entry, .-cp_plt_entry\n"
  "\n"
  "  .p2align 4\n"
  "  .globl cp_plt_return\n"
  "  .hidden cp_plt_return\n"
  "  .type cp_plt_return,@function\n"
  "  nop\n"                          /* return address - 1 lands in the function */
  "cp_plt_return:\n"
  "  subq $16, %rsp\n"
  "  movq %rax, 0(%rsp)\n"
  "  movq %rdx, 8(%rsp)\n"
  "  movq posix_tls@gottpoff(%rip), %rdi\n"
  "  movq %fs:(%rdi), %rdi\n"
  "  leaq 16(%rsp), %rsi\n"
  "  call tramp_exit_fast\n"
  "  testq %rax, %rax\n"
  "  jnz 2f\n"
  "  subq $32, %rsp\n"
  "  movups %xmm0, 0(%rsp)\n"
  "  movups %xmm1, 16(%rsp)\n"
  "  movq posix_tls@gottpoff(%rip), %rdi\n"
  "  movq %fs:(%rdi), %rdi\n"
  "  leaq 48(%rsp), %rsi\n"
  "  call intercept_exit_thread\n"
  "  movups 0(%rsp), %xmm0\n"
  "  movups 16(%rsp), %xmm1\n"
  "  addq $32, %rsp\n"
  "2:\n"
  "  movq %rax, %r11\n"
  "  movq 0(%rsp), %rax\n"
  "  movq 8(%rsp), %rdx\n"
  "  addq $16, %rsp\n"
  "  jmpq *%r11\n"
  "  .size cp_plt_return, .-cp_plt_return\n");

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
