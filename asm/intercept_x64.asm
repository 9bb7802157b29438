; intercept_x64.asm -- the trampoline every intercepted Windows API call goes
; through (`capprof run`, src/intercept/iat_win.c): it times the call around a real
; call of the API, in a frame of its own that the x64 unwinder can walk.
; Assembled by ml64 (MSVC) and by llvm-ml -m64 (MinGW cross-build).
;
; How a call gets here
;   The program calls through its import address table: `call [IAT slot]`.
;   iat.c has replaced the slot with the address of a 24-byte stub of its
;   own, one per (API, target):
;        lea  r11, [rip-7]         ; r11 = the stub, whose record follows
;        jmp  [rip+0]              ; to iat_trampoline
;        dq   iat_trampoline
;   R11 is volatile and never carries an argument in the x64 convention
;   (nor in __vectorcall); it is the one register the stub may clobber.
;
; Why a real call, not a replaced return address
;   Exceptions (C++ throw, RaiseException) and longjmp (msvcrt calls
;   RtlUnwindEx) walk the stack by each frame's unwind data and its return
;   address. A return address replaced by the address of an exit stub would
;   send that walk into a frame it cannot unwind, and the process dies.
;   Here the API's return address is inside this procedure, which has unwind
;   data (PROC FRAME), so an unwind passes through the trampoline as through
;   any function; the frame it leaves without an exit is popped by the
;   runtime's stack-pointer rule (iat_enter). The price: the API's stack
;   arguments must be copied into the new frame. iat_enter says how many
;   bytes (the stub's record: 0x100 = home space + 28 stack arguments, more
;   for variadic functions), clamped to the thread's stack base.
;
; Preserved
;   RCX RDX R8 R9 (arguments), RAX R10, XMM0-XMM5 (__vectorcall arguments)
;   and TEB.LastErrorValue (gs:[68h]) into the API; RAX RDX XMM0 XMM1 and
;   the API's last error out of it. Status flags are neither an input nor an
;   output of a call in the x64 convention (unlike _penter, which runs in the
;   middle of a function), and DF is clear at both ends, so they are not
;   saved. Upper halves of YMM are not preserved (docs/windows.md).
;
; Stack (rbp is 16-byte aligned when the caller respected the ABI):
;
;   rbp+0E0h  caller's home space, then stack arguments  (S + 8)
;   rbp+0D8h  return address into the caller             (S: the API's slot)
;   rbp+0D0h  saved rbp
;   rbp+0C8h  saved rsi
;   rbp+0C0h  saved rdi
;   rbp+0B8h  saved TEB.LastErrorValue (dword)
;   rbp+0B0h  the stub (r11)
;   rbp+80h   saved RCX RDX R8 R9 R10 RAX
;   rbp+20h   saved XMM0-XMM5
;   rbp       home space of the C workers
;   rbp-n     copy of the caller's home space and stack arguments (n bytes,
;             from iat_enter), then the API's return address into here
;
; The workers: iat_enter(stub, S) returns n (a multiple of 16, at least 32)
; after pushing the call's frame; iat_exit(stub, S) pops it. Both save and
; restore errno and the last error around their slow paths themselves.

EXTERN iat_enter:PROC
EXTERN iat_exit:PROC

STUB_TARGET EQU 24              ; offsetof(struct iat_stub, target), iat.c
LOCALS      EQU 0C0h

_TEXT SEGMENT

iat_trampoline PROC FRAME
        push    rbp
        .pushreg rbp
        push    rsi
        .pushreg rsi
        push    rdi
        .pushreg rdi
        sub     rsp, LOCALS
        .allocstack LOCALS
        mov     rbp, rsp
        .setframe rbp, 0
        .endprolog
        movups  [rbp+20h], xmm0
        movups  [rbp+30h], xmm1
        movups  [rbp+40h], xmm2
        movups  [rbp+50h], xmm3
        movups  [rbp+60h], xmm4
        movups  [rbp+70h], xmm5
        mov     [rbp+80h], rcx
        mov     [rbp+88h], rdx
        mov     [rbp+90h], r8
        mov     [rbp+98h], r9
        mov     [rbp+0A0h], r10
        mov     [rbp+0A8h], rax
        mov     [rbp+0B0h], r11
        mov     eax, dword ptr gs:[68h]
        mov     [rbp+0B8h], eax

        mov     rcx, r11                ; stub
        lea     rdx, [rbp+0D8h]         ; S
        call    iat_enter               ; rax = bytes of arguments to copy

        sub     rsp, rax
        mov     rcx, rax
        shr     rcx, 3
        lea     rsi, [rbp+0E0h]
        mov     rdi, rsp
        rep movsq                       ; DF is clear (ABI)

        mov     eax, [rbp+0B8h]
        mov     dword ptr gs:[68h], eax
        movups  xmm0, [rbp+20h]
        movups  xmm1, [rbp+30h]
        movups  xmm2, [rbp+40h]
        movups  xmm3, [rbp+50h]
        movups  xmm4, [rbp+60h]
        movups  xmm5, [rbp+70h]
        mov     r11, [rbp+0B0h]
        mov     r11, [r11+STUB_TARGET]
        mov     rcx, [rbp+80h]
        mov     rdx, [rbp+88h]
        mov     r8, [rbp+90h]
        mov     r9, [rbp+98h]
        mov     r10, [rbp+0A0h]
        mov     rax, [rbp+0A8h]
        call    r11                     ; the API

        mov     rsp, rbp
        mov     [rbp+0A8h], rax
        mov     [rbp+88h], rdx
        movups  [rbp+20h], xmm0
        movups  [rbp+30h], xmm1
        mov     eax, dword ptr gs:[68h]
        mov     [rbp+0B8h], eax
        mov     rcx, [rbp+0B0h]         ; stub
        lea     rdx, [rbp+0D8h]         ; S
        call    iat_exit
        mov     eax, [rbp+0B8h]
        mov     dword ptr gs:[68h], eax
        movups  xmm0, [rbp+20h]
        movups  xmm1, [rbp+30h]
        mov     rdx, [rbp+88h]
        mov     rax, [rbp+0A8h]
        add     rsp, LOCALS
        pop     rdi
        pop     rsi
        pop     rbp
        ret
iat_trampoline ENDP

_TEXT ENDS
END
