; penter_x64.asm -- MSVC /Gh and /GH hooks for Windows x64: _penter and
; _pexit save what the instrumented code may still need, then call the C
; workers win_hook_enter(key, sp, fp) and win_hook_exit(sp) in src/hooks/hooks_win.c.
; Assembled by ml64 (MSVC) and by llvm-ml -m64 (MinGW cross-build): the same
; source, plain MASM.
;
; Calling convention
;   /Gh  emits `call _penter` at the start of every function: before the
;        prologue, or (x64) after the prologue's `sub rsp, N`. Arguments are
;        live in RCX, RDX, R8, R9 and XMM0-XMM3 (XMM0-XMM5 for __vectorcall).
;   /GH  emits `call _pexit` before the function returns, with the return
;        value live in RAX or XMM0 and the function's frame still up.
;   GCC -pg -mfentry -mfentry-name=_penter -minstrument-return=call places
;        `call _penter` as the first instruction and `call __return__`
;        right before `ret` (after the epilogue); tests alias __return__ to
;        _pexit.
;   Neither hook may change any register but RSP/RIP, nor the flags, nor
;   GetLastError() (TEB.LastErrorValue, gs:[68h]); errno is only touched by
;   the runtime's slow paths, which save and restore it themselves.
;
; Stack at hook entry (rsp is 0 or 8 mod 16, depending on the placement):
;
;        |  ...                         |  instrumented function's frame, or
;        |  return address to caller    |  (before the prologue) its caller's
;   +8   |  first slot above the hook   |  <- sp passed to the worker
;   rsp  |  return address into the fn  |  <- key: start + prologue + 5
; Stack after our prologue (rbp frame, so the body may realign rsp freely;
; the unwind info below describes only push rbp / mov rbp, rsp):
;
;   rbp+16  sp                          (= rsp at entry + 8)
;   rbp+8   key (our return address)
;   rbp     saved rbp
;   rbp-8   saved RAX
;   rbp-16  saved flags: AH from lahf (SF ZF AF PF CF), AL = OF (seto)
;           padding to 16-byte alignment (and rsp, -16)
;   rsp+B0h saved TEB.LastErrorValue (dword)
;   rsp+80h saved RCX RDX R8 R9 R10 R11
;   rsp+20h saved XMM0-XMM5 (movaps: 16-byte aligned)
;   rsp     32-byte home space for the worker
;
; Flags: lahf/seto and `add al, 7Fh` (sets OF exactly when AL was 1) then
; sahf restore the six status flags without pushfq/popfq, whose popfq costs
; ~20 cycles. DF is clear at any call (ABI); no other flag is changed here.
; lahf/sahf in 64-bit mode need CPUID.80000001h:ECX.LAHF (every x64 CPU
; since 2005; Windows 8.1+ requires it).
;
; Why sp = entry rsp + 8: it is the instrumented function's rsp at the call
; of the hook; fp (its rbp) goes along. win_hook_enter turns sp into the
; address S of the function's return-address slot with the function's unwind
; data (src/hooks/frame_win_x64.c, cached per key): S itself when _penter precedes
; the prologue, sp + N when MSVC calls it after pushes and `sub rsp, N`.
; _pexit passes its rsp + 8 as is. The runtime's ordering rules need, for one
; activation, entry sp >= exit sp, and a child's entry sp strictly below its
; parent's exit sp:
;   - entry records S; /GH's _pexit (frame still up) sees S - N, GCC's
;     __return__ (after the epilogue) sees S. Both <= S.
;   - a child's S lies below the parent's rsp after its prologue (S - N),
;     hence below either exit sp.
; A function left by longjmp or an exception has an S below, or (a sibling
; called from the same place) equal to, that of whatever hook fires next in
; a live ancestor, so that hook pops it: win_hook_enter pops frames with
; sp <= its own (cp_hot_enter alone pops only sp < own, for the inlined
; hooks of -finstrument-functions), an exit pops sp < own, then the top
; frame. A tail jump (/Gh without /GH) is popped by its target's _penter,
; whose S equals the jumper's.

EXTERN win_hook_enter:PROC
EXTERN win_hook_exit:PROC

FRAME_SIZE EQU 0C0h

; .text$cpp_m: the runtime's hook code (CP_PROBE_CODE in src/platform.h), so
; that a sample in it counts as probe cost.
_TEXT$cpp_m SEGMENT

; Save the volatile state; expects rbp set up. Nothing before the lahf may
; change the flags (lea and mov do not).
SAVE_VOLATILES MACRO
        lea     rsp, [rbp-16]
        mov     [rbp-8], rax
        lahf
        seto    al
        mov     [rbp-16], rax
        and     rsp, -16
        sub     rsp, FRAME_SIZE
        mov     [rsp+80h], rcx
        mov     [rsp+88h], rdx
        mov     [rsp+90h], r8
        mov     [rsp+98h], r9
        mov     [rsp+0A0h], r10
        mov     [rsp+0A8h], r11
        movaps  [rsp+20h], xmm0
        movaps  [rsp+30h], xmm1
        movaps  [rsp+40h], xmm2
        movaps  [rsp+50h], xmm3
        movaps  [rsp+60h], xmm4
        movaps  [rsp+70h], xmm5
        mov     eax, dword ptr gs:[68h]
        mov     [rsp+0B0h], eax
ENDM

RESTORE_VOLATILES MACRO
        mov     eax, [rsp+0B0h]
        mov     dword ptr gs:[68h], eax
        movaps  xmm0, [rsp+20h]
        movaps  xmm1, [rsp+30h]
        movaps  xmm2, [rsp+40h]
        movaps  xmm3, [rsp+50h]
        movaps  xmm4, [rsp+60h]
        movaps  xmm5, [rsp+70h]
        mov     rcx, [rsp+80h]
        mov     rdx, [rsp+88h]
        mov     r8, [rsp+90h]
        mov     r9, [rsp+98h]
        mov     r10, [rsp+0A0h]
        mov     r11, [rsp+0A8h]
        mov     rax, [rbp-16]
        add     al, 7Fh                 ; OF := (AL == 1)
        sahf                            ; SF ZF AF PF CF := AH
        mov     rax, [rbp-8]
        mov     rsp, rbp
        pop     rbp
ENDM

_penter PROC FRAME
        push    rbp
        .pushreg rbp
        mov     rbp, rsp
        .setframe rbp, 0
        .endprolog
        SAVE_VOLATILES
        mov     rcx, [rbp+8]            ; key: return address inside the function
        lea     rdx, [rbp+16]           ; sp: the function's rsp at the call
        mov     r8, [rbp]               ; fp: the function's rbp
        call    win_hook_enter
        RESTORE_VOLATILES
        ret
_penter ENDP

_pexit PROC FRAME
        push    rbp
        .pushreg rbp
        mov     rbp, rsp
        .setframe rbp, 0
        .endprolog
        SAVE_VOLATILES
        lea     rcx, [rbp+16]           ; sp, measured as in _penter
        call    win_hook_exit
        RESTORE_VOLATILES
        ret
_pexit ENDP

_TEXT$cpp_m ENDS
END
