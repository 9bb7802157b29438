/*
** unwind.c (POSIX) -- keeps the shadow stack right when control leaves
** instrumented frames without their exit hooks: longjmp and C++ catch.
**
** longjmp, _longjmp, siglongjmp and __longjmp_chk are interposed (weak, so a
** program linked statically with its own libc keeps working, only without
** this help): the target's stack pointer is read from the jmp_buf, every
** frame below it is popped, and the real function is called. A C++ catch
** calls __cxa_begin_catch from the catching function: frames below that call
** belong to functions the exception unwound (Clang does not run exit hooks
** on that path; GCC does, and then nothing is left to pop). The hooks' own
** stack-pointer rules stay as the fallback.
*/
#define _GNU_SOURCE
#include <dlfcn.h>
#include <setjmp.h>
#include <stdint.h>
#include <unistd.h>

#include "posix.h"

#define GATE_BUSY 0xFFFFFFFFu

/* Pop every frame of this thread whose stack pointer is below sp. */
static CP_NOINSTR void pop_below(uintptr_t sp)
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

static CP_NOINSTR uintptr_t jmpbuf_sp(const struct __jmp_buf_tag *env)
{
  uintptr_t v = (uintptr_t)env->__jmpbuf[6], guard;
  __asm__("mov %%fs:0x30, %0" : "=r"(guard));
  v = (v >> 17) | (v << 47);
  return v ^ guard;
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

static CP_NOINSTR void before_longjmp(const struct __jmp_buf_tag *env)
{
  if (jmpbuf_ok < 0) jmpbuf_ok = check_layout();
  if (jmpbuf_ok) pop_below(HOOK_SP(jmpbuf_sp(env)));
}
#else
static CP_NOINSTR void before_longjmp(const struct __jmp_buf_tag *env) { (void)env; }
#endif

typedef void (*jump_fn)(struct __jmp_buf_tag *, int) __attribute__((noreturn));

static CP_NOINSTR void *real(const char *name)
{
  void *p = dlsym(RTLD_NEXT, name);
  if (!p) _exit(127);          /* no libc longjmp behind us: nothing can go on */
  return p;
}

#define INTERPOSE_JUMP(name)                                              \
  __attribute__((weak, noreturn, visibility("default"))) CP_NOINSTR     \
  void name(struct __jmp_buf_tag env[1], int val)                       \
  {                                                                     \
    static jump_fn next;                                                \
    if (!next) next = (jump_fn)real(#name);                             \
    before_longjmp(env);                                                \
    next(env, val);                                                     \
  }

INTERPOSE_JUMP(longjmp)
INTERPOSE_JUMP(_longjmp)
INTERPOSE_JUMP(siglongjmp)

__attribute__((weak, noreturn, visibility("default"))) CP_NOINSTR
void __longjmp_chk(struct __jmp_buf_tag env[1], int val)
{
  static jump_fn next;
  if (!next) next = (jump_fn)real("__longjmp_chk");
  before_longjmp(env);
  next(env, val);
}

/* The catching function calls this at the start of its handler. */
__attribute__((weak, visibility("default"))) CP_NOINSTR
void *__cxa_begin_catch(void *exception)
{
  static void *(*next)(void *);
  if (!next) next = (void *(*)(void *))real("__cxa_begin_catch");
  pop_below((uintptr_t)__builtin_frame_address(0));
  intercept_rehook((uintptr_t)__builtin_dwarf_cfa());   /* API calls still live */
  return next(exception);
}
