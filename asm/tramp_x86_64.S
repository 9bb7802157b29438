/*
 * tramp_x86_64.S (POSIX, x86-64 System V) -- API interception's trampolines
 * (`capprof run`): cp_plt_entry, where every per-import stub jumps, and
 * cp_plt_return, where a hooked call returns. Their C fast paths and the
 * stubs are in src/intercept/tramp_x86_64.c, the bookkeeping they fall back
 * to in src/intercept/intercept.c.
 *
 * A stub is `movabs $stub_data, %r11; jmp cp_plt_entry` (a direct jump
 * when the stub page is within 2 GiB of this code). %r11 is free at
 * a call (a scratch register; the lazy-binding PLT clobbers it too).
 *
 * cp_plt_entry, entered as the callee would be: [rsp] = return address,
 * rsp = 8 mod 16, arguments in rdi rsi rdx rcx r8 r9, xmm0-7, al = number
 * of vector registers (variadic), r10 = static chain; stack arguments
 * above the return address. Its frame (72 bytes, rsp = 0 mod 16; the full
 * path adds 128 below it for xmm0-7):
 *
 *     rsp+72   return address slot  <- the entry may replace it
 *     rsp+64   r11 (the stub)
 *     rsp+0    rdi rsi rdx rcx r8 r9 rax r10
 *
 * It calls tramp_enter_fast(posix_tls, stub, &slot) and, when that declines
 * (first call of a thread, new call path, paused...), saves xmm0-7 and calls
 * intercept_enter_thread. It restores everything, pops its frame and jumps
 * to the real function: the stack the callee sees is the caller's.
 *
 * cp_plt_return is where a hooked call returns (rsp = 0 mod 16). It saves
 * rax and rdx (and xmm0, xmm1 before a full path; x87 st0 is never touched
 * by the C code between), calls tramp_exit_fast(posix_tls, rsp at return),
 * or intercept_exit_thread, and jumps to the caller's own return address
 * that it returns. Vector registers' upper halves (ymm/zmm arguments) are
 * not saved on the full paths: see docs/run.md.
 */
        .text
        .p2align 4
        .globl  cp_plt_entry
        .hidden cp_plt_entry
        .type   cp_plt_entry,@function
cp_plt_entry:
        .cfi_startproc
        subq    $72, %rsp
        .cfi_adjust_cfa_offset 72
        movq    %rdi, 0(%rsp)
        movq    %rsi, 8(%rsp)
        movq    %rdx, 16(%rsp)
        movq    %rcx, 24(%rsp)
        movq    %r8, 32(%rsp)
        movq    %r9, 40(%rsp)
        movq    %rax, 48(%rsp)
        movq    %r10, 56(%rsp)
        movq    %r11, 64(%rsp)
        movq    posix_tls@gottpoff(%rip), %rdi   /* initial-exec TLS */
        movq    %fs:(%rdi), %rdi
        movq    %r11, %rsi
        leaq    72(%rsp), %rdx
        call    tramp_enter_fast
        testq   %rax, %rax
        jnz     1f
        subq    $128, %rsp                       /* full path: vectors too */
        .cfi_adjust_cfa_offset 128
        movups  %xmm0, 0(%rsp)
        movups  %xmm1, 16(%rsp)
        movups  %xmm2, 32(%rsp)
        movups  %xmm3, 48(%rsp)
        movups  %xmm4, 64(%rsp)
        movups  %xmm5, 80(%rsp)
        movups  %xmm6, 96(%rsp)
        movups  %xmm7, 112(%rsp)
        movq    posix_tls@gottpoff(%rip), %rdi
        movq    %fs:(%rdi), %rdi
        movq    192(%rsp), %rsi
        leaq    200(%rsp), %rdx
        call    intercept_enter_thread
        movups  0(%rsp), %xmm0
        movups  16(%rsp), %xmm1
        movups  32(%rsp), %xmm2
        movups  48(%rsp), %xmm3
        movups  64(%rsp), %xmm4
        movups  80(%rsp), %xmm5
        movups  96(%rsp), %xmm6
        movups  112(%rsp), %xmm7
        addq    $128, %rsp
        .cfi_adjust_cfa_offset -128
1:
        movq    %rax, %r11
        movq    0(%rsp), %rdi
        movq    8(%rsp), %rsi
        movq    16(%rsp), %rdx
        movq    24(%rsp), %rcx
        movq    32(%rsp), %r8
        movq    40(%rsp), %r9
        movq    48(%rsp), %rax
        movq    56(%rsp), %r10
        addq    $72, %rsp
        .cfi_adjust_cfa_offset -72
        jmpq    *%r11
        .cfi_endproc
        .size   cp_plt_entry, .-cp_plt_entry

        .p2align 4
        .globl  cp_plt_return
        .hidden cp_plt_return
        .type   cp_plt_return,@function
        nop                                      /* return address - 1 lands in the function */
cp_plt_return:
        subq    $16, %rsp
        movq    %rax, 0(%rsp)
        movq    %rdx, 8(%rsp)
        movq    posix_tls@gottpoff(%rip), %rdi
        movq    %fs:(%rdi), %rdi
        leaq    16(%rsp), %rsi
        call    tramp_exit_fast
        testq   %rax, %rax
        jnz     2f
        subq    $32, %rsp
        movups  %xmm0, 0(%rsp)
        movups  %xmm1, 16(%rsp)
        movq    posix_tls@gottpoff(%rip), %rdi
        movq    %fs:(%rdi), %rdi
        leaq    48(%rsp), %rsi
        call    intercept_exit_thread
        movups  0(%rsp), %xmm0
        movups  16(%rsp), %xmm1
        addq    $32, %rsp
2:
        movq    %rax, %r11
        movq    0(%rsp), %rax
        movq    8(%rsp), %rdx
        addq    $16, %rsp
        jmpq    *%r11
        .size   cp_plt_return, .-cp_plt_return

        .section .note.GNU-stack,"",@progbits
