/*
 * fentry_x86_64.S -- the hooks of GCC's "after inlining" mode on x86-64
 * ELF (Linux): __fentry__ and __return__, for code built with
 *     gcc -pg -mfentry -minstrument-return=call
 * They save what the instrumented code may still need, then call the C
 * workers in src/hooks/fentry_x86_64.c. Same design as asm/penter_x64.asm's
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
 * The workers (src/hooks/fentry_x86_64.c) take (key, S) and (S); the fast ones
 * return 0 when done, else a code for the slow one. What the wrapper costs
 * per call: bench/hookcost.py (instructions) and bench/gcc_modes.sh (time).
 *
 * So the common cases never reach it: each hook first runs its fast path
 * here, the C fast worker's in assembly, with only the registers it uses
 * pushed. __fentry__ finds the callee as its caller's hot child or in its
 * first lookup-table slot (cp_hot_enter_try) and pushes a timed frame, or an
 * untimed one for a throttled callee (throttle.c) with no clock read, or,
 * when the countdown says so, a throttled call's timed sample;
 * __return__ charges and pops a timed top frame with its S, counts and pops
 * an untimed one, or charges a sample (its clock read first). Samples are
 * here rather than in the workers because a path taken once in P calls is
 * cold in a real program, and whatever runs between a sample's two clock
 * reads counts P times. Anything else (a miss, a zone, dead frames, the
 * throttling decision's call, a sample while unhooking learns return sites,
 * the first call of a thread, a pause, the OS clock) pops them again and
 * goes on to the wrapper and the workers. The offsets below are checked
 * against the C structures in src/hooks/fentry_x86_64.c.
 */

/* struct cp_thread */
#define T_TOP         0
#define T_COMMIT_END  8
#define T_NODES       16
#define T_GATE        24
#define T_TABLE       32
#define T_MASK        40
#define T_DEBT        48
#define T_COUNTDOWN   56
#define T_RNG         60
#define T_RING_HEAD   64
#define T_RING_SEEN   72
#define T_UNHOOK      240
#define T_UCOUNT      328
#define T_USLOT       8520
/* struct cp_unhook */
#define U_ACTIVE      0
#define UNHOOK_COUNTED 1024
#define COUNT_STUB_SIZE 128
/* struct cp_node (48 bytes) */
#define N_KEY         0
#define N_PARENT      8
#define N_HOT         12
#define N_CALLS       16
#define N_INCL        24
#define N_MIN         32
#define N_MAX         40
/* struct cp_frame (24 bytes) */
#define F_NODE        0
#define F_KIND        4
#define F_SP          8
#define F_TSTART      16
#define FRAME_TIMED   0
#define FRAME_UNTIMED 1
#define FRAME_SAMPLED 2
/* struct cp_global (cp_g) */
#define G_GATE        0
#define G_USE_TSC     4
#define G_THROTTLE_CALLS 24
#define G_THROTTLE_PERIOD 32
#define G_SAMPLE_CAP  176
#define CLOCK_OS      0
#define CLOCK_TSC_FAST 2
#define CLOCK_TSC_ORDERED 3

        .section capprof_probe,"ax",@progbits   /* the hooks' code (CP_PROBE_CODE) */

/* rax = &nodes[eax], nodes at \base. */
.macro NODE_ADDR base
        lea     (%rax,%rax,2), %rax
        shl     $4, %rax
        add     \base, %rax
.endm

.macro PUSHQ reg
        push    \reg
        .cfi_adjust_cfa_offset 8
.endm

.macro POPQ reg
        pop     \reg
        .cfi_adjust_cfa_offset -8
.endm

/* Make the frame at rsi (t->top + 1) the top, t in r11: node, kind, sp,
 * tstart. Written before and after it becomes the top: a signal handler's
 * hooks (zones) may use the slot in between. */
.macro PUSH_FRAME node, kind, sp, tstart
        mov     \node, F_NODE(%rsi)
        movl    \kind, F_KIND(%rsi)
        mov     \sp, F_SP(%rsi)
        mov     %rsi, T_TOP(%r11)
        mov     \node, F_NODE(%rsi)
        movl    \kind, F_KIND(%rsi)
        mov     \sp, F_SP(%rsi)
        movq    \tstart, F_TSTART(%rsi)
.endm

/* __fentry__, a clock read in edx:eax: node edi's frame of kind \kind on
 * top (t in r11), started then on the thread clock (less t->debt). */
.macro START_FRAME kind
        shl     $32, %rdx
        or      %rdx, %rax
        sub     T_DEBT(%r11), %rax
        mov     T_TOP(%r11), %rsi
        add     $24, %rsi                       /* f + 1 */
        lea     40(%rsp), %rdx
        PUSH_FRAME %edi, \kind, %rdx, %rax
.endm

/* The shortest and longest call of node rsi, given a call of rax ticks
 * (calltree_charge's min and max); rdx is clobbered. */
.macro MIN_MAX
        mov     N_MIN(%rsi), %rdx
        cmp     %rdx, %rax
        cmovb   %rax, %rdx
        mov     %rdx, N_MIN(%rsi)
        mov     N_MAX(%rsi), %rdx
        cmp     %rdx, %rax
        cmova   %rax, %rdx
        mov     %rdx, N_MAX(%rsi)
.endm

/* r11 = this thread's cp_thread, or jump to \out when there is none, it
 * is out of step with cp_g.gate (start-up, pause, reset), or its sampling
 * ring holds samples the hooks have not read (cp_ring_pending): the
 * workers. */
.macro THREAD_OR out
        movq    posix_tls@gottpoff(%rip), %r11
        movq    %fs:(%r11), %r11
        test    %r11, %r11
        jz      \out
        mov     cp_g+G_GATE(%rip), %eax
        cmp     %eax, T_GATE(%r11)
        jne     \out
        mov     T_RING_HEAD(%r11), %rax
        mov     (%rax), %rax
        cmp     T_RING_SEEN(%r11), %rax
        jne     \out
.endm

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
        /* Fast path. After the pushes the key is at 48(%rsp), S at 56(%rsp)
         * and the frame's sp (S - 16) is 40(%rsp). */
        PUSHQ   %rax
        PUSHQ   %rcx
        PUSHQ   %rdx
        PUSHQ   %rsi
        PUSHQ   %rdi
        PUSHQ   %r11
        THREAD_OR 8f
        mov     T_TOP(%r11), %rcx               /* f */
        lea     40(%rsp), %rax
        cmp     %rax, F_SP(%rcx)
        jbe     8f                              /* frames to pop first */
        lea     24(%rcx), %rax
        cmp     T_COMMIT_END(%r11), %rax
        jae     8f                              /* the stack must grow */
        mov     F_NODE(%rcx), %esi              /* the caller's node */
        mov     %esi, %eax
        NODE_ADDR T_NODES(%r11)
        mov     %rax, %rdi                      /* &nodes[caller] */
        mov     N_HOT(%rdi), %edx               /* c: its hot child */
        mov     %edx, %eax
        NODE_ADDR T_NODES(%r11)
        mov     N_KEY(%rax), %rax
        cmp     48(%rsp), %rax
        je      5f                              /* timed */
        btr     $62, %rax                       /* CP_KEY_THROTTLED */
        jnc     2f
        cmp     48(%rsp), %rax
        je      3f                              /* throttled */
2:      /* Not the hot child: the first table slot of (caller, key), as
         * calltree_slot computes it. */
        mov     48(%rsp), %rax
        bts     $62, %rax
        movabs  $0x9E3779B97F4A7C15, %rdx
        imul    %rdx, %rax
        lea     1(%rsi), %edx
        PUSHQ   %r8
        movabs  $0xC2B2AE3D27D4EB4F, %r8
        imul    %r8, %rdx
        POPQ    %r8
        xor     %rdx, %rax
        shr     $32, %rax
        and     T_MASK(%r11), %eax
        mov     T_TABLE(%r11), %rdx
        mov     (%rdx,%rax,4), %edx             /* c: the slot's node */
        test    %edx, %edx
        jz      8f
        mov     %edx, %eax
        NODE_ADDR T_NODES(%r11)
        cmp     N_PARENT(%rax), %esi
        jne     8f
        mov     N_KEY(%rax), %rax
        cmp     48(%rsp), %rax
        je      4f
        btr     $62, %rax
        jnc     8f
        cmp     48(%rsp), %rax
        jne     8f
        mov     %edx, N_HOT(%rdi)               /* the hot child now */
        jmp     3f
4:      mov     %edx, N_HOT(%rdi)
5:      /* Timed call of node edx: the clock, then the frame. */
        mov     %edx, %edi
        mov     cp_g+G_USE_TSC(%rip), %eax
        cmp     $CLOCK_OS, %eax
        je      8f
        cmp     $CLOCK_TSC_ORDERED, %eax
        je      6f
        rdtsc
7:      START_FRAME $FRAME_TIMED
        jmp     9f
6:      rdtscp
        jmp     7b
10:     /* A timed sample of throttled callee edx, as
         * calltree_push_throttled: the next countdown
         * (throttle_next_countdown), then an ordered read, then the frame;
         * here rather than through the workers, whose way back would count
         * in the call's time, P times over. */
        mov     cp_g+G_USE_TSC(%rip), %esi      /* the clock (esi is free now) */
        cmp     $CLOCK_OS, %esi
        je      8f
        mov     %edx, %edi                      /* c */
        mov     T_RNG(%r11), %eax               /* xorshift32 */
        test    %eax, %eax
        jnz     11f
        mov     $0x9E3779B9, %eax
11:     mov     %eax, %ecx
        shl     $13, %ecx
        xor     %ecx, %eax
        mov     %eax, %ecx
        shr     $17, %ecx
        xor     %ecx, %eax
        mov     %eax, %ecx
        shl     $5, %ecx
        xor     %ecx, %eax
        mov     %eax, T_RNG(%r11)
        mov     cp_g+G_THROTTLE_PERIOD(%rip), %ecx
        cmp     $1, %ecx
        jbe     12f
        lea     -1(%rcx,%rcx), %rcx             /* 2P - 1 */
        imul    %rcx, %rax
        shr     $32, %rax
        inc     %eax                            /* uniform on 1 .. 2P - 1 */
        jmp     13f
12:     mov     $1, %eax
13:     mov     %eax, T_COUNTDOWN(%r11)
        cmp     $CLOCK_TSC_FAST, %esi
        je      15f
        rdtscp
14:     START_FRAME $FRAME_SAMPLED
        jmp     9f
15:     rdtsc
        jmp     14b
3:      /* Throttled callee edx: untimed unless a sample is due. */
        mov     T_COUNTDOWN(%r11), %edi
        cmp     $1, %edi
        jbe     10b                             /* a sample */
        dec     %edi
        mov     %edi, T_COUNTDOWN(%r11)
        lea     24(%rcx), %rsi
        lea     40(%rsp), %rax
        PUSH_FRAME %edx, $FRAME_UNTIMED, %rax, $0
9:      POPQ    %r11
        POPQ    %rdi
        POPQ    %rsi
        POPQ    %rdx
        POPQ    %rcx
        POPQ    %rax
        ret
        .cfi_adjust_cfa_offset 48
8:      POPQ    %r11
        POPQ    %rdi
        POPQ    %rsi
        POPQ    %rdx
        POPQ    %rcx
        POPQ    %rax
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
        /* Fast path. After the pushes S is at 48(%rsp) and the frame's sp
         * (S - 16) is 32(%rsp). */
        PUSHQ   %rax
        PUSHQ   %rcx
        PUSHQ   %rdx
        PUSHQ   %rsi
        PUSHQ   %r11
        THREAD_OR 8f
        mov     T_TOP(%r11), %rcx               /* f */
        lea     32(%rsp), %rax
        cmp     %rax, F_SP(%rcx)
        ja      9f                              /* entry not recorded (unhooked): done */
        jne     8f                              /* not this call's frame */
        mov     F_NODE(%rcx), %eax
        NODE_ADDR T_NODES(%r11)
        mov     %rax, %rsi                      /* n */
        mov     N_KEY(%rsi), %rax
        shr     $48, %rax
        cmp     $0xFF10, %eax                   /* a zone left open (CPD_KEY_ZONE) */
        je      8f
        mov     F_KIND(%rcx), %eax
        cmp     $FRAME_UNTIMED, %eax
        je      3f
        cmp     $FRAME_TIMED, %eax
        jne     10f                             /* a sample */
        mov     N_CALLS(%rsi), %rax
        inc     %rax
        cmp     cp_g+G_THROTTLE_CALLS(%rip), %rax
        je      8f                              /* throttling's decision: the workers */
        test    $0x1FFFF, %eax                  /* decided again every 2^17 calls */
        jz      8f                              /* (CP_THROTTLE_AGAIN_MASK) */
        mov     cp_g+G_USE_TSC(%rip), %eax
        cmp     $CLOCK_OS, %eax
        je      8f
        cmp     $CLOCK_TSC_FAST, %eax
        je      6f
        rdtscp
7:      shl     $32, %rdx
        or      %rdx, %rax
        mov     T_TOP(%r11), %rcx               /* rdtscp wrote ecx */
        sub     T_DEBT(%r11), %rax
        sub     F_TSTART(%rcx), %rax            /* the call's ticks */
        incq    N_CALLS(%rsi)
        add     %rax, N_INCL(%rsi)
        MIN_MAX
        sub     $24, %rcx
        mov     %rcx, T_TOP(%r11)
        jmp     9f
6:      rdtsc
        jmp     7b
10:     /* A throttled call's timed sample. Charged here, its clock read
         * first: through the workers, a path taken once in P calls and cold
         * in a real program would count in the call's time, P times over
         * (calltree_charge_sampled does the same in C). While unhooking
         * learns return sites, the workers do it. */
        cmp     $FRAME_SAMPLED, %eax
        jne     8f
        mov     cp_g+G_USE_TSC(%rip), %eax
        cmp     $CLOCK_OS, %eax
        je      8f
        cmp     $CLOCK_TSC_FAST, %eax
        je      11f
        rdtscp
12:     shl     $32, %rdx
        or      %rdx, %rax
        mov     T_UNHOOK(%r11), %rcx
        test    %rcx, %rcx
        jz      13f
        cmpl    $0, U_ACTIVE(%rcx)
        jne     8f                              /* learning: the workers */
13:     mov     T_TOP(%r11), %rcx               /* rdtscp wrote ecx */
        sub     T_DEBT(%r11), %rax
        sub     F_TSTART(%rcx), %rax            /* d: the call's ticks */
        incq    N_CALLS(%rsi)
        MIN_MAX
        mov     cp_g+G_SAMPLE_CAP(%rip), %rdx
        cmp     %rdx, %rax
        cmovb   %rax, %rdx                      /* s = min(d, cap) */
        sub     %rdx, %rax                      /* d - s counts once */
        mov     cp_g+G_THROTTLE_PERIOD(%rip), %ecx
        imul    %rcx, %rdx                      /* s counts P times */
        add     %rdx, %rax
        add     %rax, N_INCL(%rsi)
        mov     T_TOP(%r11), %rcx
        sub     $24, %rcx
        mov     %rcx, T_TOP(%r11)
        jmp     9f
11:     rdtsc
        jmp     12b
3:      incq    N_CALLS(%rsi)                   /* untimed: counted */
        sub     $24, %rcx
        mov     %rcx, T_TOP(%r11)
9:      POPQ    %r11
        POPQ    %rsi
        POPQ    %rdx
        POPQ    %rcx
        POPQ    %rax
        ret
        .cfi_adjust_cfa_offset 40
8:      POPQ    %r11
        POPQ    %rsi
        POPQ    %rdx
        POPQ    %rcx
        POPQ    %rax
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
        mov     8(%rbp), %rdx           /* site: our return address */
        call    posix_fentry_exit_slow
        RESTORE_XMMS
        jmp     0b
        .cfi_endproc
        .size   __return__, .-__return__

/* long cp_calib_fentry(long a, long b): a + b as GCC builds it with
 * -pg -mfentry -minstrument-return=call, the twin of src/hooks/calib_probe.c's
 * cp_calib_instrumented, which src/core/clock.c calls to calibrate these hooks. */
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


/* The counting stubs of unhooked functions (src/patch/patch_x86_64.c): the k-th
 * function unhooked gets `call cp_count_stubs + COUNT_STUB_SIZE * k` at its
 * entry in place of its entry hook call, when the stub is within a rel32's
 * reach (the runtime linked into the program; else unhook.c writes the
 * same code near the program's). The stub counts the call per call path:
 * when the node on top of the thread's shadow stack (the nearest hooked
 * caller's path) is the one it saw last (uslot[k], node + 1), it adds one
 * to the calls of that node's child for the function (*ucount[k]); else
 * cp_stub_slot finds or makes that child (patch_stub_slot) and counts
 * there. The fast path costs, over a plain call and return, a TLS load,
 * two dependent loads (top frame, its node), a compare with a load, the
 * pointer's load, an add to memory, a test, and a push and pop of RAX
 * (bench/stubcost.c measures it against a per-function count). Every 64th
 * call counted into a node it also goes to cp_stub_check, which reads the
 * thread's sampling ring when samples wait there (the default sampling,
 * sample/sample_posix.c): a loop whose callees were all unhooked runs no
 * hook, and its ring would fill up. It runs at the function's first
 * instruction (fentry) or where the entry hook was called
 * (-finstrument-functions), so it may use only R11, which holds no
 * argument and no live value there (the static chain is R10), and the
 * flags; RAX is pushed and popped. A thread with no state of its own (one
 * whose only instrumented code is unhooked) counts into unhook_nostate,
 * with a locked add; the stand-in state of a thread starting or ending
 * has no slot, and its calls are not counted, as its hooks record nothing.
 * 79 bytes, padded to 128: test_unhook.c checks the layout.
 *
 * Stack at the stub (the function's first instruction, or its entry hook's
 * place): rsp -> return into the function, rsp+8 -> the function's return
 * address; below that the stub pushes RAX, then (slow path) k in its place. */
        .globl  cp_count_stubs
        .hidden cp_count_stubs
        .globl  cp_count_stubs_end
        .hidden cp_count_stubs_end
        .p2align 7
cp_count_stubs:
        .set    stub_k, 0
        .rept   UNHOOK_COUNTED
        movq    posix_tls@gottpoff(%rip), %r11
        movq    %fs:(%r11), %r11
        test    %r11, %r11
        jz      1f
        push    %rax
        movq    T_TOP(%r11), %rax
        movl    F_NODE(%rax), %eax
        incl    %eax
        cmpl    %eax, T_USLOT + 4 * stub_k(%r11)
        jne     2f
        movq    T_UCOUNT + 8 * stub_k(%r11), %rax
        incq    (%rax)
        testb   $63, (%rax)
        pop     %rax
        jz      cp_stub_check
        ret
2:      pop     %rax
        push    $stub_k
        jmp     cp_stub_slot
1:      lock incq unhook_nostate + 8 * stub_k(%rip)
        ret
        .p2align 7
        .set    stub_k, stub_k + 1
        .endr
cp_count_stubs_end:

/* R11 = the thread's state, at a counting stub's 64th call: when its ring
 * holds samples not read yet (cp_ring_pending), read them, everything the
 * function may still need saved as in the hooks' slow paths. */
        .globl  cp_stub_check
        .hidden cp_stub_check
        .type   cp_stub_check, @function
        .p2align 4
cp_stub_check:
        .cfi_startproc
        PUSHQ   %r11
        mov     T_RING_SEEN(%r11), %r11
        PUSHQ   %r11                            /* seen */
        mov     8(%rsp), %r11
        mov     T_RING_HEAD(%r11), %r11
        mov     (%r11), %r11                    /* the kernel's head */
        cmp     (%rsp), %r11
        lea     16(%rsp), %rsp                  /* (keeps the flags) */
        .cfi_adjust_cfa_offset -16
        jne     1f
        ret
1:      PUSHQ   %rbp
        .cfi_offset %rbp, -16
        mov     %rsp, %rbp
        .cfi_def_cfa_register %rbp
        SAVE_GPRS
        SAVE_XMMS
        call    posix_stub_drain
        RESTORE_XMMS
        RESTORE_GPRS_AND_RETURN
        .cfi_endproc
        .size   cp_stub_check, .-cp_stub_check

/* A counting stub's slow path: the node on top is not the one its slot
 * counts under. Stack: k (pushed by the stub), the return into the
 * function, the function's return address. Everything the function may
 * still need is saved as in the hooks' slow paths; patch_stub_slot(k)
 * retargets the slot and counts the call; k is dropped on return. */
        .globl  cp_stub_slot
        .hidden cp_stub_slot
        .type   cp_stub_slot, @function
        .p2align 4
cp_stub_slot:
        .cfi_startproc
        .cfi_def_cfa_offset 16
        PUSHQ   %rbp
        .cfi_offset %rbp, -24
        mov     %rsp, %rbp
        .cfi_def_cfa_register %rbp
        SAVE_GPRS
        SAVE_XMMS
        mov     8(%rbp), %rdi                   /* k */
        call    patch_stub_slot
        RESTORE_XMMS
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
        .cfi_def_cfa %rsp, 16
        lea     8(%rsp), %rsp                   /* k */
        .cfi_def_cfa_offset 8
        ret
        .cfi_endproc
        .size   cp_stub_slot, .-cp_stub_slot

        .section .note.GNU-stack,"",@progbits
