; regs_x64.asm -- register-preservation test functions for _penter/_pexit,
; each calling the hooks exactly the way /Gh and /GH code does. test_regs.c
; calls them and compares what they captured with what they loaded.
;
; Calling convention: Microsoft x64. Each function takes nothing and keeps
; no argument: everything goes through the globals below, since a register
; or stack slot used for bookkeeping would be one less register tested.
;
; Before each hook call every volatile register holds a known value:
;   RAX RCX RDX R8 R9 R10 R11 = regs_in[0..6], XMM0-XMM5 = xmm_in[0..5],
;   RFLAGS = flags_in (test_regs.c cycles through patterns of CF PF AF ZF SF
;   OF; DF stays clear, as the ABI requires at a call). Right after the call they are stored to regs_enter/xmm_enter/
;   flags_enter (after _penter) or regs_exit/xmm_exit/flags_exit (_pexit).
;
; Stack alignment at hook entry (rsp mod 16) for each placement:
;   regs_pre   /Gh before the prologue (rsp = 0 mod 16 at _penter), /GH-as-GCC
;              right before ret, frame gone (0 mod 16 at _pexit)
;   regs_post  /Gh after `sub rsp, 28h` (8 mod 16), /GH with the frame still
;              up (8 mod 16), return value live in RAX and XMM0
;   regs_mixed /Gh before the prologue (0 mod 16), then a prologue, and /GH
;              with the frame up (8 mod 16)
; The hooks' keys are the return addresses of each `call _penter`, inside
; the functions; test_regs.c finds them as the one key within each function.

PUBLIC regs_in, xmm_in, flags_in, regs_enter, xmm_enter, flags_enter
PUBLIC regs_exit, xmm_exit, flags_exit
PUBLIC nest_inner, nest_leaf, tail_b, zone_leaker, abandon_small, big_frame

EXTERN _penter:PROC
EXTERN _pexit:PROC
EXTERN capprof_zone_begin:PROC

_DATA SEGMENT
ALIGN 16
regs_in     QWORD 7 DUP (0)
flags_in    QWORD 08D7h
ALIGN 16
xmm_in      QWORD 12 DUP (0)
ALIGN 16
regs_enter  QWORD 7 DUP (0)
ALIGN 16
xmm_enter   QWORD 12 DUP (0)
flags_enter QWORD 0
ALIGN 16
regs_exit   QWORD 7 DUP (0)
ALIGN 16
xmm_exit    QWORD 12 DUP (0)
flags_exit  QWORD 0
zone_name   BYTE "leaked zone", 0
_DATA ENDS

_TEXT SEGMENT

; Load the known state. Changes rsp only transiently (push/popfq).
LOAD_STATE MACRO
        movdqu  xmm0, xmmword ptr [xmm_in]
        movdqu  xmm1, xmmword ptr [xmm_in+16]
        movdqu  xmm2, xmmword ptr [xmm_in+32]
        movdqu  xmm3, xmmword ptr [xmm_in+48]
        movdqu  xmm4, xmmword ptr [xmm_in+64]
        movdqu  xmm5, xmmword ptr [xmm_in+80]
        mov     rax, [regs_in]
        mov     rcx, [regs_in+8]
        mov     rdx, [regs_in+16]
        mov     r8, [regs_in+24]
        mov     r9, [regs_in+32]
        mov     r10, [regs_in+40]
        mov     r11, [regs_in+48]
        push    qword ptr [flags_in]
        popfq
ENDM

; Store the state after a hook into regs_\where, xmm_\where, flags_\where.
SAVE_STATE MACRO r, x, f
        pushfq
        pop     qword ptr [f]
        mov     [r], rax
        mov     [r+8], rcx
        mov     [r+16], rdx
        mov     [r+24], r8
        mov     [r+32], r9
        mov     [r+40], r10
        mov     [r+48], r11
        movdqu  xmmword ptr [x], xmm0
        movdqu  xmmword ptr [x+16], xmm1
        movdqu  xmmword ptr [x+32], xmm2
        movdqu  xmmword ptr [x+48], xmm3
        movdqu  xmmword ptr [x+64], xmm4
        movdqu  xmmword ptr [x+80], xmm5
ENDM

regs_pre PROC FRAME
        .endprolog
        LOAD_STATE
        call    _penter
        SAVE_STATE regs_enter, xmm_enter, flags_enter
        LOAD_STATE
        call    _pexit
        SAVE_STATE regs_exit, xmm_exit, flags_exit
        ret
regs_pre ENDP

regs_post PROC FRAME
        sub     rsp, 28h
        .allocstack 28h
        .endprolog
        LOAD_STATE
        call    _penter
        SAVE_STATE regs_enter, xmm_enter, flags_enter
        LOAD_STATE
        call    _pexit
        SAVE_STATE regs_exit, xmm_exit, flags_exit
        add     rsp, 28h
        ret
regs_post ENDP

regs_mixed PROC FRAME
        .endprolog
        LOAD_STATE
        call    _penter
        SAVE_STATE regs_enter, xmm_enter, flags_enter
        sub     rsp, 28h
        LOAD_STATE
        call    _pexit
        SAVE_STATE regs_exit, xmm_exit, flags_exit
        add     rsp, 28h
        ret
regs_mixed ENDP

; ---- call trees as MSVC x64 code makes them ----------------------------------
; nest_outer(n): framed, /Gh after `sub rsp`, calls nest_inner n times, /GH
; with the frame up. nest_inner: /Gh before its prologue, calls nest_leaf
; twice, /GH with the frame up. nest_leaf: framed as nest_outer, no calls.
; The tree must be nest_outer (1) -> nest_inner (n) -> nest_leaf (2n).

nest_outer PROC FRAME
        push    rbx
        .pushreg rbx
        sub     rsp, 20h
        .allocstack 20h
        .endprolog
        call    _penter
        mov     ebx, ecx
outer_loop:
        test    ebx, ebx
        jz      outer_done
        call    nest_inner
        dec     ebx
        jmp     outer_loop
outer_done:
        call    _pexit
        add     rsp, 20h
        pop     rbx
        ret
nest_outer ENDP

nest_inner PROC FRAME
        .endprolog
        call    _penter
        sub     rsp, 28h
        call    nest_leaf
        call    nest_leaf
        call    _pexit
        add     rsp, 28h
        ret
nest_inner ENDP

nest_leaf PROC FRAME
        sub     rsp, 28h
        .allocstack 28h
        .endprolog
        call    _penter
        mov     eax, 42
        call    _pexit
        add     rsp, 28h
        ret
nest_leaf ENDP

; /Gh without /GH and a tail jump: tail_a never exits; tail_b's _penter sees
; the same stack pointer and pops it. Tree: tail_a (1) and tail_b (1), both
; children of the caller.
tail_a PROC FRAME
        .endprolog
        call    _penter
        jmp     tail_b
tail_a ENDP

tail_b PROC FRAME
        .endprolog
        call    _penter
        call    _pexit
        ret
tail_b ENDP

; abandon_small: /Gh after `sub rsp, 28h`, leaves without _pexit (as if
; longjmp or an exception had taken it); big_frame, called next from the same
; place, calls _penter after `sub rsp, 58h`: its stack pointer at the hook is
; lower than abandon_small's was, but the unwind data give both the same
; return-address slot, so abandon_small is popped and big_frame is its
; sibling, not its child.
abandon_small PROC FRAME
        sub     rsp, 28h
        .allocstack 28h
        .endprolog
        call    _penter
        add     rsp, 28h
        ret
abandon_small ENDP

big_frame PROC FRAME
        push    rbp
        .pushreg rbp
        sub     rsp, 50h
        .allocstack 50h
        lea     rbp, [rsp+20h]
        .setframe rbp, 20h
        .endprolog
        call    _penter
        call    _pexit
        lea     rsp, [rbp+30h]
        pop     rbp
        ret
big_frame ENDP

; zone_leaker: /Gh before the prologue, begins a zone it never ends, /GH
; with the frame up (its sp is then below the zone's, which the ordinary exit
; rule would not pop). Tree: zone_leaker (n) -> "leaked zone" (n), nothing open.
zone_leaker PROC FRAME
        .endprolog
        call    _penter
        sub     rsp, 28h
        lea     rcx, [zone_name]
        call    capprof_zone_begin
        call    _pexit
        add     rsp, 28h
        ret
zone_leaker ENDP

; The cheapest instrumented function, for the cost figure: /Gh and /GH around
; nothing, framed as MSVC frames it; and its uninstrumented twin.
empty_gh PROC FRAME
        sub     rsp, 28h
        .allocstack 28h
        .endprolog
        call    _penter
        call    _pexit
        add     rsp, 28h
        ret
empty_gh ENDP

empty_plain PROC FRAME
        sub     rsp, 28h
        .allocstack 28h
        .endprolog
        add     rsp, 28h
        ret
empty_plain ENDP

_TEXT ENDS
END
