/*
** win.h -- private to the Win32 backend: the thread state pointer the hooks
** read straight from the TEB's TLS slots (no API call, GetLastError intact),
** the workers the assembly hooks call, and the start-up attribute.
*/
#ifndef CAPPROF_WIN_H
#define CAPPROF_WIN_H

#ifndef WIN32_LEAN_AND_MEAN
#  define WIN32_LEAN_AND_MEAN
#endif
#include <windows.h>

#include "../core/core.h"

/* TLS index from TlsAlloc, WIN_TLS_NONE until the first hook of the process.
** Slots 0-63 live in the TEB (TlsSlots); higher ones in TlsExpansionSlots,
** an array the system allocates on the thread's first TlsSetValue there. */
#define WIN_TLS_NONE 0xFFFFFFFFu
extern volatile DWORD win_tls_index CP_HIDDEN;

#if CAPPROF_ARCH_X86_64
#  define WIN_TEB_TLS_SLOTS      0x1480u
#  define WIN_TEB_TLS_EXPANSION  0x1780u
#else
#  define WIN_TEB_TLS_SLOTS      0xE10u
#  define WIN_TEB_TLS_EXPANSION  0xF94u
#endif

/* One pointer-sized load from the TEB (gs: on x64, fs: on x86): MSVC's
** intrinsic, or the same instruction in GNU asm for GCC, clang and clang-cl
** (whose <intrin.h> clashes with MinGW's headers in the compile checks). */
#if defined(_MSC_VER) && !defined(__clang__)
#  include <intrin.h>
#  if CAPPROF_ARCH_X86_64
#    define WIN_TEB_READ(off) ((uintptr_t)__readgsqword(off))
#  else
#    define WIN_TEB_READ(off) ((uintptr_t)__readfsdword(off))
#  endif
#elif CAPPROF_ARCH_X86_64
CP_INLINE uintptr_t win_teb_read(uintptr_t off)
{
  uintptr_t v;
  __asm__("movq %%gs:(%1), %0" : "=r"(v) : "r"(off));
  return v;
}
#  define WIN_TEB_READ(off) win_teb_read(off)
#else
CP_INLINE uintptr_t win_teb_read(uintptr_t off)
{
  uintptr_t v;
  __asm__("movl %%fs:(%1), %0" : "=r"(v) : "r"(off));
  return v;
}
#  define WIN_TEB_READ(off) win_teb_read(off)
#endif

/* The calling thread's state or NULL. One global load, one compare and one
** segment-relative load for the first 64 TLS indexes (the usual case: the
** runtime allocates its index early). Never touches GetLastError. */
CP_INLINE struct cp_thread *win_tls_get(void)
{
  DWORD i = win_tls_index;
  if (CP_LIKELY(i < 64))
    return (struct cp_thread *)WIN_TEB_READ(WIN_TEB_TLS_SLOTS + i * sizeof(void *));
  if (i == WIN_TLS_NONE) return NULL;
  void **exp = (void **)WIN_TEB_READ(WIN_TEB_TLS_EXPANSION);
  return exp ? (struct cp_thread *)exp[i - 64] : NULL;
}

/* Workers of the hooks in asm/penter_x64.asm and src/hooks/hooks_win_x86.c, called
** with every volatile register already saved. key is the return address
** pushed by `call _penter` (inside the instrumented function); sp is the
** hook's stack pointer at entry plus one slot: the instrumented function's
** stack pointer at the call; fp is its frame pointer register (rbp/ebp). */
void win_hook_enter(uintptr_t key, uintptr_t sp, uintptr_t fp) CP_HIDDEN;
void win_hook_exit(uintptr_t sp) CP_HIDDEN;

/* The address of the instrumented function's return-address slot, given
** the key and sp of its _penter call: sp itself when _penter precedes the
** prologue (x86, GCC -pg), sp plus what the prologue pushed and allocated
** when MSVC x64 calls _penter after `sub rsp, N`. Every call from one place
** then records the same value, whatever its callee's frame size. x64 reads
** the function's unwind data once per key (frame_x64.c) and keeps the offset
** in a direct-mapped cache: one load and compare on the hot path. */
#if CAPPROF_ARCH_X86_64
#  define WIN_FRAME_CACHE    4096u                      /* entries, power of 2 */
#  define WIN_FRAME_KEY_BITS 47                         /* user-mode addresses */
#  define WIN_FRAME_KEY_MASK ((UINT64_C(1) << WIN_FRAME_KEY_BITS) - 1)
/* key | offset << 47; 0 is empty. Written and read as one 64-bit word. */
extern volatile uint64_t win_frame_cache[WIN_FRAME_CACHE] CP_HIDDEN;
uintptr_t win_frame_slot_slow(uintptr_t key, uintptr_t sp, uintptr_t fp) CP_HIDDEN;

CP_INLINE uintptr_t win_frame_slot(uintptr_t key, uintptr_t sp, uintptr_t fp)
{
  uint64_t e = win_frame_cache[(key ^ key >> 12) & (WIN_FRAME_CACHE - 1)];
  if (CP_LIKELY((e & WIN_FRAME_KEY_MASK) == key))
    return sp + (uintptr_t)(e >> WIN_FRAME_KEY_BITS);
  return win_frame_slot_slow(key, sp, fp);
}
#else
CP_INLINE uintptr_t win_frame_slot(uintptr_t key, uintptr_t sp, uintptr_t fp)
{
  (void)key;
  (void)fp;
  return sp;                   /* x86 /Gh calls _penter before the prologue */
}
#endif

/* Run fn once at start-up, from the C runtime's initialiser table, for the
** exe and for the DLL alike. */
#if defined(_MSC_VER)
#  pragma section(".CRT$XCU", read)
#  define WIN_STARTUP(fn)                                                   \
     static void __cdecl fn(void);                                          \
     __declspec(allocate(".CRT$XCU")) void (__cdecl *fn##_ptr_)(void) = fn; \
     static void __cdecl fn(void)
#else
#  define WIN_STARTUP(fn) \
     __attribute__((constructor)) CP_NOINSTR static void fn(void)
#endif

/* Have fn(module, reason, reserved) called as a TLS callback: the loader
** calls it with DLL_PROCESS_DETACH when the process ends, also through
** ExitProcess without exit(), for an exe as for a DLL. */
#if defined(_MSC_VER)
#  if CAPPROF_ARCH_X86_64
#    pragma comment(linker, "/INCLUDE:_tls_used")
#    pragma comment(linker, "/INCLUDE:win_tls_callback_ptr")
#  else
#    pragma comment(linker, "/INCLUDE:__tls_used")
#    pragma comment(linker, "/INCLUDE:_win_tls_callback_ptr")
#  endif
#  define WIN_TLS_CALLBACK(fn)                                              \
     static void NTAPI fn(PVOID, DWORD, PVOID);                             \
     __pragma(const_seg(".CRT$XLB"))                                        \
     extern const PIMAGE_TLS_CALLBACK win_tls_callback_ptr;                 \
     const PIMAGE_TLS_CALLBACK win_tls_callback_ptr = fn;                   \
     __pragma(const_seg())                                                  \
     static void NTAPI fn(PVOID module, DWORD reason, PVOID reserved)
#else
#  define WIN_TLS_CALLBACK(fn)                                              \
     static void NTAPI fn(PVOID, DWORD, PVOID);                             \
     __attribute__((section(".CRT$XLB"), used))                             \
     const PIMAGE_TLS_CALLBACK win_tls_callback_ptr = fn;                   \
     CP_NOINSTR static void NTAPI fn(PVOID module, DWORD reason, PVOID reserved)
#endif

/* A section named ".capprof" in every image that carries the runtime (the
** static library pulls it in with the hooks): `capprof run` reads the
** program's section table to tell a program that has the runtime already
** (tools/launch/launch_win.c) and does not load a second one. */
#if defined(_MSC_VER)
#  pragma section(".capprof", read)
#  define WIN_RUNTIME_MARKER                                                 \
     __pragma(comment(linker, "/INCLUDE:" WIN_SYM_PREFIX "capprof_runtime_marker")) \
     __declspec(allocate(".capprof")) extern const char capprof_runtime_marker[8]; \
     __declspec(allocate(".capprof")) const char capprof_runtime_marker[8] = "capprof"
#  if CAPPROF_ARCH_X86_64
#    define WIN_SYM_PREFIX ""
#  else
#    define WIN_SYM_PREFIX "_"
#  endif
#else
#  define WIN_RUNTIME_MARKER                                                 \
     __attribute__((section(".capprof"), used))                             \
     const char capprof_runtime_marker[8] = "capprof"
#endif

/* Set while the process is being torn down (ExitProcess): os_lock then
** waits a bounded time, since a thread killed while holding it never
** releases it. */
int win_shutting_down(void) CP_HIDDEN;

/* API interception (iat.c, x64 only; iat_none.c elsewhere): the trampoline
** (asm/intercept_x64.asm) calls the two workers around each API call;
** iat_thread_attach runs at DLL_THREAD_ATTACH (GDI batch limit), and
** iat_run_ready tells `capprof run` the runtime started. */
struct iat_stub;
void iat_thread_attach(void) CP_HIDDEN;
void iat_run_ready(void) CP_HIDDEN;
size_t iat_enter(struct iat_stub *s, uintptr_t slot) CP_HIDDEN;
void iat_exit(struct iat_stub *s, uintptr_t slot) CP_HIDDEN;

void win_resolve_apis(void) CP_HIDDEN;
void win_process_exit(void) CP_HIDDEN;

#endif /* CAPPROF_WIN_H */
