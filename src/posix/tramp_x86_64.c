/*
** tramp_x86_64.c (POSIX, x86-64 System V) -- the machine code of API
** interception: the per-import stubs, the shared entry trampoline and the
** return trampoline that plt.c points GOT slots at. The bookkeeping they
** call (intercept_enter/exit) is in src/intercept.c.
**
** A stub is `movabs $stub_data, %r11; jmp *cp_plt_entry`. %r11 is free at
** a call (a scratch register; the lazy-binding PLT clobbers it too).
**
** cp_plt_entry, entered as the callee would be: [rsp] = return address,
** rsp = 8 mod 16, arguments in rdi rsi rdx rcx r8 r9, xmm0-7, al = number
** of vector registers (variadic), r10 = static chain; stack arguments
** above the return address. Its frame (200 bytes, rsp = 0 mod 16):
**
**     rsp+200  return address slot  <- intercept_enter may replace it
**     rsp+64   xmm0..xmm7 (16 bytes each)
**     rsp+0    rdi rsi rdx rcx r8 r9 rax r10
**
** It calls intercept_enter(stub, &slot), restores everything, pops its
** frame and jumps to the real function: the stack the callee sees is the
** caller's, untouched.
**
** cp_plt_return is where a hooked call returns (rsp = 0 mod 16). It saves
** the return registers rax rdx xmm0 xmm1 (x87 st0 is never touched by the
** C code between), calls intercept_exit(rsp at return) and jumps to the
** caller's own return address that it returns. Vector registers' upper
** halves (ymm/zmm arguments) are not saved: see docs/run.md.
*/
#include <string.h>
#include <sys/mman.h>

#include "posix.h"

__asm__(
  "  .text\n"
  "  .p2align 4\n"
  "  .globl cp_plt_entry\n"
  "  .hidden cp_plt_entry\n"
  "  .type cp_plt_entry,@function\n"
  "cp_plt_entry:\n"
  "  .cfi_startproc\n"
  "  subq $200, %rsp\n"
  "  .cfi_adjust_cfa_offset 200\n"
  "  movq %rdi, 0(%rsp)\n"
  "  movq %rsi, 8(%rsp)\n"
  "  movq %rdx, 16(%rsp)\n"
  "  movq %rcx, 24(%rsp)\n"
  "  movq %r8, 32(%rsp)\n"
  "  movq %r9, 40(%rsp)\n"
  "  movq %rax, 48(%rsp)\n"
  "  movq %r10, 56(%rsp)\n"
  "  movups %xmm0, 64(%rsp)\n"
  "  movups %xmm1, 80(%rsp)\n"
  "  movups %xmm2, 96(%rsp)\n"
  "  movups %xmm3, 112(%rsp)\n"
  "  movups %xmm4, 128(%rsp)\n"
  "  movups %xmm5, 144(%rsp)\n"
  "  movups %xmm6, 160(%rsp)\n"
  "  movups %xmm7, 176(%rsp)\n"
  "  movq %r11, %rdi\n"
  "  leaq 200(%rsp), %rsi\n"
  "  call intercept_enter\n"
  "  movq %rax, %r11\n"
  "  movq 0(%rsp), %rdi\n"
  "  movq 8(%rsp), %rsi\n"
  "  movq 16(%rsp), %rdx\n"
  "  movq 24(%rsp), %rcx\n"
  "  movq 32(%rsp), %r8\n"
  "  movq 40(%rsp), %r9\n"
  "  movq 48(%rsp), %rax\n"
  "  movq 56(%rsp), %r10\n"
  "  movups 64(%rsp), %xmm0\n"
  "  movups 80(%rsp), %xmm1\n"
  "  movups 96(%rsp), %xmm2\n"
  "  movups 112(%rsp), %xmm3\n"
  "  movups 128(%rsp), %xmm4\n"
  "  movups 144(%rsp), %xmm5\n"
  "  movups 160(%rsp), %xmm6\n"
  "  movups 176(%rsp), %xmm7\n"
  "  addq $200, %rsp\n"
  "  .cfi_adjust_cfa_offset -200\n"
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
  "  subq $64, %rsp\n"
  "  movq %rax, 0(%rsp)\n"
  "  movq %rdx, 8(%rsp)\n"
  "  movups %xmm0, 16(%rsp)\n"
  "  movups %xmm1, 32(%rsp)\n"
  "  leaq 64(%rsp), %rdi\n"
  "  call intercept_exit\n"
  "  movq %rax, %r11\n"
  "  movq 0(%rsp), %rax\n"
  "  movq 8(%rsp), %rdx\n"
  "  movups 16(%rsp), %xmm0\n"
  "  movups 32(%rsp), %xmm1\n"
  "  addq $64, %rsp\n"
  "  jmpq *%r11\n"
  "  .size cp_plt_return, .-cp_plt_return\n");

void cp_plt_entry(void) CP_HIDDEN;
void cp_plt_return(void) CP_HIDDEN;

#define STUB_BYTES 32u

int tramp_supported(void) { return 1; }

uintptr_t tramp_return_address(void) { return (uintptr_t)cp_plt_return; }

size_t tramp_stub_size(void) { return STUB_BYTES; }

void tramp_write_stub(unsigned char *code, const struct icpt_stub *data)
{
  uint64_t d = (uint64_t)(uintptr_t)data, entry = (uint64_t)(uintptr_t)cp_plt_entry;
  static const unsigned char jmp[6] = { 0xFF, 0x25, 0, 0, 0, 0 };   /* jmp *0(%rip) */
  code[0] = 0x49;                                                   /* movabs ..., %r11 */
  code[1] = 0xBB;
  memcpy(code + 2, &d, 8);
  memcpy(code + 10, jmp, 6);
  memcpy(code + 16, &entry, 8);
  memset(code + 24, 0xCC, STUB_BYTES - 24);                          /* int3 padding */
}
