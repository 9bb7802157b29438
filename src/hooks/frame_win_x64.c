/*
** frame_x64.c (Win32 x64) -- where an instrumented function's return address
** is, seen from its _penter call: MSVC may call _penter after the prologue's
** pushes and `sub rsp, N`, so the stack pointer there depends on the frame
** size. The function's unwind data (RtlLookupFunctionEntry, RtlVirtualUnwind,
** the tables exception dispatch uses; no lock the loader holds) give the
** offset once per call site; win_frame_slot (win.h) caches it.
*/
#include <string.h>

#include "../win/win.h"

volatile uint64_t win_frame_cache[WIN_FRAME_CACHE];

/* Offsets this large are not cached (they do not fit beside the key); such
** a function pays the unwind on every call. */
#define MAX_CACHED ((UINT64_C(1) << (64 - WIN_FRAME_KEY_BITS)) - 1)

/* The slot address for the call of _penter that returns to key, whose
** function's stack pointer at that call is sp and frame register fp. A
** function without unwind data is a leaf that pushed nothing: sp. */
CP_PROBE_CODE uintptr_t win_frame_slot_slow(uintptr_t key, uintptr_t sp, uintptr_t fp)
{
  DWORD64 image = 0;
  uintptr_t slot = sp;
  /* The call instruction itself: `call rel32` (E8, 5 bytes) as /Gh emits,
  ** or `call [rip+x]` (FF 15, 6 bytes) through an import. The unwinder looks
  ** at the bytes at Rip to tell an epilogue: Rip must be an instruction. */
  const unsigned char *k = (const unsigned char *)key;
  DWORD64 pc = k[-5] == 0xE8 ? key - 5 : (k[-6] == 0xFF && k[-5] == 0x15) ? key - 6 : key - 5;
  PRUNTIME_FUNCTION fe = RtlLookupFunctionEntry(pc, &image, NULL);
  if (fe) {
    CONTEXT ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.Rip = pc;
    ctx.Rsp = sp;
    ctx.Rbp = fp;
    void *handler_data = NULL;
    DWORD64 establisher = 0;
    RtlVirtualUnwind(UNW_FLAG_NHANDLER, image, pc, fe, &ctx, &handler_data,
                     &establisher, NULL);
    /* Unwinding pops the return address: the caller's rsp is slot + 8. */
    if (ctx.Rsp >= sp + 8 && ctx.Rsp - 8 - sp < (uint64_t)1 << 30) slot = (uintptr_t)ctx.Rsp - 8;
  }
  uint64_t off = slot - sp;
  if (off <= MAX_CACHED && key <= WIN_FRAME_KEY_MASK)
    win_frame_cache[(key ^ key >> 12) & (WIN_FRAME_CACHE - 1)] = key | off << WIN_FRAME_KEY_BITS;
  return slot;
}
