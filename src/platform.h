/*
** platform.h -- turns compiler and OS detection into CAPPROF_OS_* and
** CAPPROF_ARCH_* (always 0 or 1), and the few attributes the runtime needs.
** This is the only header that looks at predefined platform macros.
*/
#ifndef CAPPROF_PLATFORM_H
#define CAPPROF_PLATFORM_H

#if defined(_WIN32)
#  define CAPPROF_OS_WIN 1
#  define CAPPROF_OS_POSIX 0
#else
#  define CAPPROF_OS_WIN 0
#  define CAPPROF_OS_POSIX 1
#endif

#if defined(__x86_64__) || defined(_M_X64)
#  define CAPPROF_ARCH_X86_64 1
#else
#  define CAPPROF_ARCH_X86_64 0
#endif
#if defined(__i386__) || defined(_M_IX86)
#  define CAPPROF_ARCH_I386 1
#else
#  define CAPPROF_ARCH_I386 0
#endif
#define CAPPROF_ARCH_X86 (CAPPROF_ARCH_X86_64 || CAPPROF_ARCH_I386)
#if defined(__aarch64__) || defined(_M_ARM64)
#  define CAPPROF_ARCH_AARCH64 1
#else
#  define CAPPROF_ARCH_AARCH64 0
#endif

#if defined(__GNUC__) || defined(__clang__)
#  define CP_LIKELY(x)    __builtin_expect(!!(x), 1)
#  define CP_UNLIKELY(x)  __builtin_expect(!!(x), 0)
#  define CP_INLINE       static inline __attribute__((always_inline))
#  define CP_NOINLINE     __attribute__((noinline))
#  define CP_NOINSTR      __attribute__((no_instrument_function))
#  if CAPPROF_OS_WIN     /* PE: the DLL's export list decides (capprof.def) */
#    define CP_HIDDEN
#  else
#    define CP_HIDDEN     __attribute__((visibility("hidden")))
#  endif
#  define CP_ALIGNED(n)   __attribute__((aligned(n)))
#  define CP_BARRIER()    __asm__ __volatile__("" ::: "memory")
/* An address in the calling function's own frame, just below its caller's
** stack: what the POSIX hooks record as a frame's sp (their HOOK_SP), the
** CFA minus a return address and a saved frame pointer, on every target. */
#  define CP_FRAME_ADDRESS() ((uintptr_t)__builtin_dwarf_cfa() - 2 * sizeof(void *))
#else /* MSVC */
#  define CP_LIKELY(x)    (x)
#  define CP_UNLIKELY(x)  (x)
#  define CP_INLINE       static __forceinline
#  define CP_NOINLINE     __declspec(noinline)
#  define CP_NOINSTR
#  define CP_HIDDEN
#  define CP_ALIGNED(n)   __declspec(align(n))
#  define CP_BARRIER()    _ReadWriteBarrier()
#  define CP_FRAME_ADDRESS() ((uintptr_t)_AddressOfReturnAddress())
#endif

/* CP_PROBE_CODE puts a function of the hooks' paths where a sample's program
** counter can be told apart as probe cost, not the program's time (sample.c).
** ELF: the section capprof_probe, whose bounds the linker names
** __start_capprof_probe and __stop_capprof_probe (CP_HAVE_PROBE_SECTION 1).
** PE: .text$cpp_m, which the linker (link.exe and GNU ld alike) places in
** .text between sample.c's markers in .text$cpp_a and .text$cpp_z, sorted
** by the name after the '$' (CP_HAVE_PROBE_SECTION 2). */
#if defined(__ELF__) && (defined(__GNUC__) || defined(__clang__))
#  define CP_PROBE_CODE   __attribute__((section("capprof_probe")))
#  define CP_HAVE_PROBE_SECTION 1
#elif CAPPROF_OS_WIN && defined(_MSC_VER)   /* MSVC and clang-cl */
#  define CP_PROBE_CODE   __declspec(code_seg(".text$cpp_m"))
#  define CP_HAVE_PROBE_SECTION 2
#elif CAPPROF_OS_WIN && (defined(__GNUC__) || defined(__clang__))
#  define CP_PROBE_CODE   __attribute__((section(".text$cpp_m")))
#  define CP_HAVE_PROBE_SECTION 2
#else
#  define CP_PROBE_CODE
#  define CP_HAVE_PROBE_SECTION 0
#endif

#endif /* CAPPROF_PLATFORM_H */
