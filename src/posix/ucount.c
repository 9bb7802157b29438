/*
** ucount.c (x86-64 Linux) -- where the counting stubs of unhooked functions
** count (asm/fentry_x86_64.S, src/posix/unhook.c): a thread-local array, one
** counter per stub, which stub k increments with one instruction
** (`incq %fs:8k(%r11)`, r11 the array's offset from the thread pointer).
**
** Built twice. Into the static library with CP_UNHOOK_COUNTED counters: the
** program's static TLS then holds 8 KB more per thread. Into the shared
** library with none (cp_ucount_slots 0): a shared library is mapped out of a
** call's reach from the program's code, so its stubs would never be called,
** and initial-exec TLS of that size could make a later dlopen of it fail.
*/
#include "internal.h"

#ifdef CP_UCOUNT_SHARED
#  define SLOTS 0u
#else
#  define SLOTS CP_UNHOOK_COUNTED
#endif

__thread uint64_t cp_ucount[SLOTS ? SLOTS : 1] __attribute__((tls_model("initial-exec")));
const uint32_t cp_ucount_slots = SLOTS;
