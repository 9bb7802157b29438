/*
 * fentry_regs.S -- for test_fentry.c: two functions built as GCC's
 * -pg -mfentry -minstrument-return=call builds them (a call to __fentry__
 * first, a call to __return__ before the ret), called with a distinct value
 * in every call-clobbered general register; each stores the registers as it
 * finds them after each hook, for the test to compare.
 */
        .text

.macro SET_REGS base
        movabs  $\base + 1, %rax
        movabs  $\base + 2, %rcx
        movabs  $\base + 3, %rdx
        movabs  $\base + 4, %rsi
        movabs  $\base + 5, %rdi
        movabs  $\base + 6, %r8
        movabs  $\base + 7, %r9
        movabs  $\base + 8, %r10
        movabs  $\base + 9, %r11
.endm

.macro STORE_REGS buf
        mov     %rax, \buf + 0(%rip)
        mov     %rcx, \buf + 8(%rip)
        mov     %rdx, \buf + 16(%rip)
        mov     %rsi, \buf + 24(%rip)
        mov     %rdi, \buf + 32(%rip)
        mov     %r8, \buf + 40(%rip)
        mov     %r9, \buf + 48(%rip)
        mov     %r10, \buf + 56(%rip)
        mov     %r11, \buf + 64(%rip)
.endm

.macro PROBE name
        .type   \name, @function
        .p2align 4
\name:
        .cfi_startproc
        call    __fentry__
        STORE_REGS cp_test_after_entry
        SET_REGS 0x2000
        call    __return__
        STORE_REGS cp_test_after_return
        ret
        .cfi_endproc
        .size   \name, .-\name
.endm

        PROBE   cp_test_probe_a
        PROBE   cp_test_probe_b

/* void cp_test_call_probe(int which): probe a (0) or b (1), with the
 * registers set to 0x1000 + 1..9. */
        .globl  cp_test_call_probe
        .type   cp_test_call_probe, @function
        .p2align 4
cp_test_call_probe:
        .cfi_startproc
        push    %rbx
        .cfi_adjust_cfa_offset 8
        mov     %edi, %ebx
        SET_REGS 0x1000
        test    %ebx, %ebx
        jnz     1f
        call    cp_test_probe_a
        jmp     2f
1:      call    cp_test_probe_b
2:      pop     %rbx
        .cfi_adjust_cfa_offset -8
        ret
        .cfi_endproc
        .size   cp_test_call_probe, .-cp_test_call_probe

        .bss
        .p2align 4
        .globl  cp_test_after_entry
cp_test_after_entry:
        .zero   72
        .globl  cp_test_after_return
cp_test_after_return:
        .zero   72

        .section .note.GNU-stack,"",@progbits
