/* unhook_tail_caller.S -- void call_via(void (*fn)(unsigned *), unsigned *p):
 * an indirect call whose return address has 0xe8 five bytes before it
 * (mov $0xe8,%cl; mov %eax,%edx; call *%rax), for unhook_tail.c. */
        .text
        .globl  call_via
        .type   call_via, @function
call_via:
        push    %rbx
        mov     %rdi, %rax
        mov     %rsi, %rbx
        mov     %rbx, %rdi
        mov     $0xe8, %cl          /* b1 e8 */
        mov     %eax, %edx          /* 89 c2 */
        call    *%rax               /* ff d0 */
        pop     %rbx
        ret
        .size   call_via, .-call_via
        .section .note.GNU-stack,"",@progbits
