/*
** patch_none.c (every target but x86-64 ELF) -- patching the hooks out of
** machine code (unhooking) exists for GCC's after-inlining hooks on x86-64
** Linux only (patch_x86_64.c); elsewhere nothing is ever patched.
*/
#include "../core/core.h"
#include "patch.h"

uint64_t patch_live_calls(uint32_t k)
{
  (void)k;
  return 0;
}

void patch_slots_clear(struct cp_thread *t) { (void)t; }

void patch_counts_fork(struct cp_thread *self) { (void)self; }

void unhook_fork_prepare(void) {}
void unhook_fork_parent(void) {}
void unhook_fork_child(void) {}
