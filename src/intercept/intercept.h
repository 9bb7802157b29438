/*
** intercept.h -- API interception (`capprof run`): the portable part
** (intercept.c) and what each back end gives it (plt_posix.c with
** tramp_x86_64.c, iat_win.c; tramp_none.c, iat_none.c).
*/
#ifndef CAPPROF_INTERCEPT_H
#define CAPPROF_INTERCEPT_H

#include "../core/core.h"

/* ---- API interception (intercept.c) ------------------------------------
** The portable core shared by the back ends (src/intercept/plt_posix.c, src/intercept/iat_win.c).
** Contract for a back end:
**  - os_intercept_start() is called once from runtime_init when CAPPROF_API
**    is set; it patches the import slots of the modules loaded now (and of
**    later ones, from its LoadLibrary/dlopen hook) and returns CPD_IS_*.
**  - For each import slot of a module other than capprof's own that holds a
**    function of a library for which intercept_selects(base name) is true:
**    if intercept_unsafe(symbol) gives a reason, or the slot cannot be
**    patched, call intercept_skip(reason, library, symbol) and leave it;
**    else id = intercept_register(library, symbol) and point the slot at a
**    stub made for (id, real target). Then intercept_patched(modules, slots).
**  - A stub jumps to the shared entry trampoline with its struct icpt_stub;
**    the trampoline saves the argument registers, calls intercept_enter(stub,
**    address of the return-address slot), restores them and jumps to the
**    address returned, stack untouched. intercept_enter may have replaced the
**    return address by the one given to intercept_set_return_trampoline().
**  - The return trampoline saves the return registers, calls
**    intercept_exit(stack pointer after the return) and jumps to the address
**    returned (the caller's own return address), registers restored.
**  - Before an unwinder walks the stack (C++ throw, forced unwind), call
**    intercept_restore_returns(sp of the throwing frame); when a handler
**    catches, intercept_rehook(its frame's sp): the unwinder never sees a
**    return trampoline, and calls that stay live are hooked again.
** intercept_enter/exit run on any thread at any time, in signal handlers
** too: they never lock, allocate only a thread's first return stack, and
** preserve errno. Registration and skips take os_lock: never call them with
** os_lock held. */
struct icpt_stub {
  void *real;          /* the function the slot pointed to */
  uint32_t id;         /* intercept_register's id */
  uint32_t flags;      /* back end's use */
};
/* One hooked call: where its return address was, and what it was. */
struct icpt_ret {
  uintptr_t *slot;       /* the return address's place on the machine stack */
  uintptr_t orig;        /* the caller's return address */
  uint32_t id;           /* API id, for the exit's node key */
  uint32_t restored;     /* 1: orig was put back for an unwinder (exceptions) */
};

/* The per-thread return stack; base[0] is a sentinel that is never popped. */
struct cp_rstack {
  struct icpt_ret *top;
  struct icpt_ret *end;
  struct icpt_ret base[1];
};

/* Push the return-stack entry above e (the caller checked there is room).
** Written, published, written again, as calltree_push: a signal handler's
** intercepted calls between two statements use and restore the same entry.
** Shared by every back end. */
CP_INLINE void intercept_rpush(struct cp_rstack *r, struct icpt_ret *e,
                               uintptr_t *slot, uintptr_t orig, uint32_t id)
{
  e[1].slot = slot;
  e[1].orig = orig;
  e[1].id = id;
  e[1].restored = 0;
  CP_BARRIER();
  r->top = e + 1;
  CP_BARRIER();
  e[1].slot = slot;
  e[1].orig = orig;
  e[1].id = id;
  e[1].restored = 0;
}

struct intercept_summary {
  uint32_t status;     /* CPD_IS_* */
  uint64_t modules, slots, unrecorded, inner_mt, outer_mt;
  const char *spec;
};
void intercept_start(void) CP_HIDDEN;                 /* runtime_init */
int intercept_selects(const char *library) CP_HIDDEN; /* by CAPPROF_API */
void intercept_set_spec(const char *spec) CP_HIDDEN;  /* intercept_start, tests */
uint32_t intercept_unsafe(const char *symbol) CP_HIDDEN; /* CPD_SKIP_* or 0 */
/* The id of (library, symbol), added if new; UINT32_MAX when full. */
uint32_t intercept_register(const char *library, const char *symbol) CP_HIDDEN;
uint32_t intercept_count(void) CP_HIDDEN;             /* lock-free */
void intercept_name(uint32_t id, const char **library, const char **symbol) CP_HIDDEN;
void intercept_skip(uint32_t reason, const char *library, const char *symbol) CP_HIDDEN;
uint32_t intercept_skip_count(void) CP_HIDDEN;
void intercept_skip_get(uint32_t i, uint32_t *reason, uint64_t *slots,
                        const char **library, const char **symbol) CP_HIDDEN;
void intercept_patched(uint64_t modules, uint64_t slots) CP_HIDDEN;
void intercept_summary(struct intercept_summary *s) CP_HIDDEN;
void intercept_set_return_trampoline(uintptr_t addr) CP_HIDDEN;
/* Around the back end's own work on a thread (patching after dlopen): the
** runtime's calls into libc, when it is linked into the program and so goes
** through the program's patched slots, pass by unrecorded. */
uint32_t intercept_quiet_begin(void) CP_HIDDEN;
void intercept_quiet_end(uint32_t saved) CP_HIDDEN;
void *intercept_enter(const struct icpt_stub *s, uintptr_t *slot) CP_HIDDEN;
void *intercept_exit(uintptr_t *after) CP_HIDDEN;
/* The same with the calling thread's state already read (os_get_thread()),
** for trampolines that can read the thread pointer themselves. */
void *intercept_enter_thread(struct cp_thread *t, const struct icpt_stub *s,
                             uintptr_t *slot) CP_HIDDEN;
void *intercept_exit_thread(struct cp_thread *t, uintptr_t *after) CP_HIDDEN;
void intercept_restore_returns(uintptr_t sp) CP_HIDDEN;
void intercept_rehook(uintptr_t sp) CP_HIDDEN;
void intercept_thread_free(struct cp_thread *t) CP_HIDDEN;
uintptr_t intercept_return_trampoline(void) CP_HIDDEN;
/* Measure the probe cost of an intercepted call: through() calls plain()
** through a stub, plain() is an empty function. */
void intercept_calibrate(void (*through)(void), void (*plain)(void)) CP_HIDDEN;

/* POSIX: API interception's machine code (tramp_x86_64.c; tramp_none.c
** elsewhere):
** whether there is any, the return trampoline, and the stubs plt.c writes
** into pages it then makes executable. */
int tramp_supported(void) CP_HIDDEN;
uintptr_t tramp_return_address(void) CP_HIDDEN;
size_t tramp_stub_size(void) CP_HIDDEN;
void tramp_write_stub(unsigned char *code, const struct icpt_stub *data) CP_HIDDEN;

#endif /* CAPPROF_INTERCEPT_H */
