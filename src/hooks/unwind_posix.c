/*
** unwind.c (POSIX) -- keeps the shadow stack right when control leaves
** instrumented frames without their exit hooks: longjmp and C++ catch.
**
** On x86-64 glibc (the jmp_buf layout is known), longjmp, _longjmp,
** siglongjmp and __longjmp_chk are interposed (weak): the target's stack
** pointer is read from the jmp_buf, every frame below it is popped, and the
** real function is called, found with dlsym; in a fully static program,
** where the interposer may be the only longjmp linked, it is glibc's
** internal __libc_siglongjmp or, without it, the same register restore
** done here. The host program is never ended. A C++ catch
** calls __cxa_begin_catch from the catching function: frames below that call
** belong to functions the exception unwound (Clang does not run exit hooks
** on that path; GCC does, and then nothing is left to pop). The hooks' own
** stack-pointer rules stay as the fallback.
*/
#define _GNU_SOURCE
#include <dlfcn.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <unistd.h>

#include "../posix/posix.h"
#include "../intercept/intercept.h"

#define GATE_BUSY 0xFFFFFFFFu

/* Pop every frame of this thread whose stack pointer is below sp. */
CP_PROBE_CODE static CP_NOINSTR void pop_below(uintptr_t sp)
{
  struct cp_thread *t = posix_tls;
  if (!t || t->gate == GATE_BUSY || !t->frames) return;
  calltree_unwind(t, sp, cp_tnow(t));
}

/* The hooks record (stack pointer at the hook call) - 16: the hook's frame
** address. A function whose stack pointer is rsp records rsp - 16. */
#define HOOK_SP(rsp) ((rsp) - 16)

#if defined(__x86_64__) && defined(__GLIBC__)
/* glibc keeps rsp in jmp_buf slot 6, mangled: rol(rsp ^ guard, 17), the
** guard at %fs:0x30. unwind_check verifies this at start-up. */
static int jmpbuf_ok = -1;

static CP_NOINSTR uintptr_t demangle(long v)
{
  uintptr_t u = (uintptr_t)v, guard;
  __asm__("mov %%fs:0x30, %0" : "=r"(guard));
  u = (u >> 17) | (u << 47);
  return u ^ guard;
}

static CP_NOINSTR uintptr_t jmpbuf_sp(const struct __jmp_buf_tag *env)
{
  return demangle(env->__jmpbuf[6]);
}

static CP_NOINSTR CP_NOINLINE int check_layout(void)
{
  jmp_buf env;
  uintptr_t rsp;
  if (setjmp(env)) return 0;
  __asm__ volatile("mov %%rsp, %0" : "=r"(rsp));
  uintptr_t got = jmpbuf_sp(env);
  return got >= rsp && got - rsp < 512;
}

CP_PROBE_CODE static CP_NOINSTR void before_longjmp(const struct __jmp_buf_tag *env)
{
  if (jmpbuf_ok < 0) jmpbuf_ok = check_layout();
  if (jmpbuf_ok) pop_below(HOOK_SP(jmpbuf_sp(env)));
}

typedef void (*jump_fn)(struct __jmp_buf_tag *, int) __attribute__((noreturn));

/* glibc's own longjmp under its internal name: present in a static program
** only when something else linked it in (a weak reference pulls nothing). */
extern void __libc_siglongjmp(struct __jmp_buf_tag *, int)
    __attribute__((weak, noreturn));

/* regs: rbx, rbp, r12, r13, r14, r15, rsp, pc (plain values); every load
** happens before rsp changes. */
void capprof_jump_regs_(const uintptr_t *regs, int val) CP_HIDDEN __attribute__((noreturn));
__asm__(".text\n"
        ".p2align 4\n"
        ".globl capprof_jump_regs_\n"
        ".hidden capprof_jump_regs_\n"
        ".type capprof_jump_regs_, @function\n"
        "capprof_jump_regs_:\n"
        "  mov 0(%rdi), %rbx\n"
        "  mov 8(%rdi), %rbp\n"
        "  mov 16(%rdi), %r12\n"
        "  mov 24(%rdi), %r13\n"
        "  mov 32(%rdi), %r14\n"
        "  mov 40(%rdi), %r15\n"
        "  mov 56(%rdi), %rdx\n"
        "  mov 48(%rdi), %rsp\n"
        "  mov %esi, %eax\n"
        "  jmp *%rdx\n"
        ".size capprof_jump_regs_, .-capprof_jump_regs_\n");

/* What glibc's siglongjmp does on x86-64, for a static program in which
** this interposer became the only longjmp (dlsym finds no libc behind it):
** restore the signal mask if sigsetjmp saved it, then the registers setjmp
** saved (demangled). It does not run pthread_cleanup_push handlers that a
** jump out of such a region skips (glibc's _longjmp_unwind). */
static CP_NOINSTR __attribute__((noreturn)) void jump_direct(struct __jmp_buf_tag *env, int val)
{
  if (env->__mask_was_saved)
    sigprocmask(SIG_SETMASK, (const sigset_t *)&env->__saved_mask, NULL);
  uintptr_t regs[8];
  regs[0] = (uintptr_t)env->__jmpbuf[0];
  regs[1] = demangle(env->__jmpbuf[1]);
  for (int i = 2; i < 6; i++) regs[i] = (uintptr_t)env->__jmpbuf[i];
  regs[6] = demangle(env->__jmpbuf[6]);
  regs[7] = demangle(env->__jmpbuf[7]);
  capprof_jump_regs_(regs, val ? val : 1);
}

/* The function behind the interposer: libc's (dynamic programs), glibc's
** internal one (static programs that have it), or jump_direct. Never ends
** the program. */
static CP_NOINSTR jump_fn real_jump(const char *name)
{
  void *p = dlsym(RTLD_NEXT, name);
  if (p) return (jump_fn)p;
  if (__libc_siglongjmp) return __libc_siglongjmp;
  return jump_direct;
}

#define INTERPOSE_JUMP(name)                                              \
  __attribute__((weak, noreturn, visibility("default"))) CP_NOINSTR     \
  void name(struct __jmp_buf_tag env[1], int val)                       \
  {                                                                     \
    static jump_fn next;                                                \
    if (!next) next = real_jump(#name);                                 \
    before_longjmp(env);                                                \
    next(env, val);                                                     \
  }

/* Only where the jmp_buf layout is known: elsewhere the hooks' stack-pointer
** rules handle longjmp, and libc's functions are left alone. */
INTERPOSE_JUMP(longjmp)
INTERPOSE_JUMP(_longjmp)
INTERPOSE_JUMP(siglongjmp)
INTERPOSE_JUMP(__longjmp_chk)
#endif

/* The catching function calls this at the start of its handler. */
__attribute__((weak, visibility("default"))) CP_NOINSTR
void *__cxa_begin_catch(void *exception)
{
  static void *(*next)(void *);
  /* In a static C++ program libstdc++'s own definition (strong, linked with
  ** __cxa_end_catch) replaces this one, so dlsym cannot fail here: a catch
  ** needs libstdc++ behind it. */
  if (!next) next = (void *(*)(void *))dlsym(RTLD_NEXT, "__cxa_begin_catch");
  pop_below((uintptr_t)__builtin_frame_address(0));
  intercept_rehook((uintptr_t)__builtin_dwarf_cfa());   /* API calls still live */
  return next(exception);
}
