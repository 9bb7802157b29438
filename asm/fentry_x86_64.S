/*
 * fentry_x86_64.S -- the hooks of GCC's "after inlining" mode on x86-64
 * ELF (Linux): __fentry__ and __return__, for code built with
 *     gcc -pg -mfentry -minstrument-return=call
 * They save what the instrumented code may still need, then call the C
 * workers in src/posix/fentry.c. Same design as asm/penter_x64.asm's
 * _penter/_pexit (Windows): a frame of our own, registers saved, stack
 * realigned, a fast C worker, a slow one.
 *
 * Calling convention (System V AMD64)
 *   -mfentry puts `call __fentry__` as the function's very first
 *   instruction, before its prologue (`call *__fentry__@GOTPCREL(%rip)`
 *   under PIE, 6 bytes; a direct call, 5 bytes, otherwise; after an
 *   endbr64 with -fcf-protection). -minstrument-return=call puts
 *   `call __return__` after the epilogue, right before each `ret`, and
 *   before the `jmp` of a sibling (tail) call. Only functions that remain
 *   after inlining get them.
 *   Live at __fentry__: the arguments, RDI RSI RDX RCX R8 R9, RAX (vector
 *   count of a variadic call), R10 (static chain), XMM0-XMM7. Live at
 *   __return__: the return value, RAX RDX XMM0 XMM1 (ST0/ST1 for long
 *   double, which the workers never touch), and before a tail jump the
 *   arguments of the function jumped to. So both hooks keep every
 *   call-clobbered general register (RAX RCX RDX RSI RDI R8-R11). The
 *   fast workers are compiled general-regs-only: they cannot touch an
 *   XMM/YMM register, so XMM0-XMM7 are saved only around the slow workers
 *   (upper halves of YMM/ZMM are not: the slow paths are plain C that
 *   calls no vector routine). Flags are dead at a function's entry and at
 *   its return (not preserved across calls by the ABI) and DF is clear.
 *   GCC turns -fipa-ra off under -pg, so callers assume nothing more.
 *
 * Stack at hook entry (the call is the function's first instruction, so
 * RSP is 0 mod 16; realigned anyway):
 *
 *        |  ...                          |  caller's frame
 *   +8   |  return address to the caller |  <- S: the function's return-
 *        |                               |     address slot (rsp + 8)
 *   rsp  |  return address into the fn   |  <- key (__fentry__ only):
 *                                             start + 5 or 6 (+ 4 after
 *                                             endbr64)
 *
 * __return__ runs after the epilogue: RSP + 8 is S again, the same slot.
 * So S pairs an entry with its return, with no key needed at the return;
 * a callee's S is strictly below its caller's; a tail-called function gets
 * its jumper's S (the jumper's __return__ came first). Stack after our
 * prologue:
 *
 *   rbp+16  S
 *   rbp+8   key (our return address)
 *   rbp     saved rbp
 *           padding to 16-byte alignment (and rsp, -16)
 *   rsp+0   RAX RDI R9 R10 R8 RCX RDX RSI R11, 8 bytes each (80 reserved)
 *   below   128 bytes of XMM0-XMM7, on the slow path only
 *
 * The workers (src/posix/fentry.c) take (key, S) and (S); the fast ones
 * return 0 when done, else a code for the slow one. Cost of the wrapper:
 * 9 stores and 9 loads, 2 calls and returns, ~4 ns on top of the C fast
 * path (bench/gcc_modes.sh).
 */

        .text

/* Save the call-clobbered general registers; expects rbp set up. */
.macro SAVE_GPRS
        sub     $80, %rsp
        and     $-16, %rsp
        mov     %rax, 0(%rsp)
        mov     %rdi, 8(%rsp)
        mov     %r9, 16(%rsp)
        mov     %r10, 24(%rsp)
        mov     %r8, 32(%rsp)
        mov     %rcx, 40(%rsp)
        mov     %rdx, 48(%rsp)
        mov     %rsi, 56(%rsp)
        mov     %r11, 64(%rsp)
.endm

.macro RESTORE_GPRS_AND_RETURN
        mov     0(%rsp), %rax
        mov     8(%rsp), %rdi
        mov     16(%rsp), %r9
        mov     24(%rsp), %r10
        mov     32(%rsp), %r8
        mov     40(%rsp), %rcx
        mov     48(%rsp), %rdx
        mov     56(%rsp), %rsi
        mov     64(%rsp), %r11
        leave
        .cfi_def_cfa %rsp, 8
        ret
.endm

.macro SAVE_XMMS
        sub     $128, %rsp
        movaps  %xmm0, 0(%rsp)
        movaps  %xmm1, 16(%rsp)
        movaps  %xmm2, 32(%rsp)
        movaps  %xmm3, 48(%rsp)
        movaps  %xmm4, 64(%rsp)
        movaps  %xmm5, 80(%rsp)
        movaps  %xmm6, 96(%rsp)
        movaps  %xmm7, 112(%rsp)
.endm

.macro RESTORE_XMMS
        movaps  0(%rsp), %xmm0
        movaps  16(%rsp), %xmm1
        movaps  32(%rsp), %xmm2
        movaps  48(%rsp), %xmm3
        movaps  64(%rsp), %xmm4
        movaps  80(%rsp), %xmm5
        movaps  96(%rsp), %xmm6
        movaps  112(%rsp), %xmm7
        add     $128, %rsp
.endm

        .globl  __fentry__
        .type   __fentry__, @function
        .p2align 4
__fentry__:
        .cfi_startproc
        push    %rbp
        .cfi_def_cfa_offset 16
        .cfi_offset %rbp, -16
        mov     %rsp, %rbp
        .cfi_def_cfa_register %rbp
        SAVE_GPRS
        mov     8(%rbp), %rdi           /* key: return address inside the fn */
        lea     16(%rbp), %rsi          /* S */
        call    posix_fentry_enter
        test    %eax, %eax
        jnz     1f
0:      RESTORE_GPRS_AND_RETURN
1:      .cfi_def_cfa %rbp, 16
        SAVE_XMMS
        mov     %eax, %edx              /* the fast worker's code */
        mov     8(%rbp), %rdi
        lea     16(%rbp), %rsi
        call    posix_fentry_enter_slow
        RESTORE_XMMS
        jmp     0b
        .cfi_endproc
        .size   __fentry__, .-__fentry__

        .globl  __return__
        .type   __return__, @function
        .p2align 4
__return__:
        .cfi_startproc
        push    %rbp
        .cfi_def_cfa_offset 16
        .cfi_offset %rbp, -16
        mov     %rsp, %rbp
        .cfi_def_cfa_register %rbp
        SAVE_GPRS
        lea     16(%rbp), %rdi          /* S */
        call    posix_fentry_exit
        test    %eax, %eax
        jnz     1f
0:      RESTORE_GPRS_AND_RETURN
1:      .cfi_def_cfa %rbp, 16
        SAVE_XMMS
        mov     %eax, %esi              /* the fast worker's code */
        lea     16(%rbp), %rdi
        call    posix_fentry_exit_slow
        RESTORE_XMMS
        jmp     0b
        .cfi_endproc
        .size   __return__, .-__return__

/* long cp_calib_fentry(long a, long b): a + b as GCC builds it with
 * -pg -mfentry -minstrument-return=call, the twin of src/calib_probe.c's
 * cp_calib_instrumented, which src/clock.c calls to calibrate these hooks. */
        .globl  cp_calib_fentry
        .hidden cp_calib_fentry
        .type   cp_calib_fentry, @function
        .p2align 4
cp_calib_fentry:
        .cfi_startproc
        call    __fentry__
        lea     (%rdi,%rsi), %rax
        call    __return__
        ret
        .cfi_endproc
        .size   cp_calib_fentry, .-cp_calib_fentry

        .section .note.GNU-stack,"",@progbits
