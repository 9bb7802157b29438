/*
** hooks_x86.c (Win32 x86, MSVC and clang-cl) -- MSVC's /Gh /GH hooks for
** 32-bit code as naked functions in inline assembly (x64 has no inline asm:
** see asm/penter_x64.asm, which also explains the sp ordering rules).
**
** Calling convention: /Gh emits `call _penter` (symbol __penter) before
** each function's prologue, with the arguments on the stack and ECX/EDX
** live for __fastcall/__thiscall, XMM0-XMM5 for __vectorcall; /GH emits
** `call _pexit` before the epilogue, with the return value live in EAX:EDX,
** ST(0) or XMM0. The hooks preserve EAX, ECX, EDX, XMM0-XMM5, the flags and
** TEB.LastErrorValue (fs:[34h]); the C workers use no x87 register, so a
** float result in ST(0) survives as well.
**
** Stack at hook entry:            after the prologue below:
**   esp+4  sp passed on             ebp+8   sp (= esp at entry + 4)
**   esp    return address (key)     ebp+4   key
**                                   ebp     saved ebp
**                                   ebp-4   EFLAGS
**                                   ebp-8   EAX, ebp-12 ECX, ebp-16 EDX
**                                   ebp-20  LastErrorValue
**                                   ...     padding to 16 bytes
**                                   esp+16  XMM0-XMM5 (96 bytes, aligned)
**                                   esp     3 argument slots, 4 bytes padding
*/
#include "../win/win.h"

#define HOOK_PROLOGUE                                                   \
  __asm push ebp                                                        \
  __asm mov ebp, esp                                                    \
  __asm pushfd                                                          \
  __asm push eax                                                        \
  __asm push ecx                                                        \
  __asm push edx                                                        \
  __asm mov eax, dword ptr fs:[34h]                                     \
  __asm push eax                                                        \
  __asm and esp, -16                                                    \
  __asm sub esp, 112                                                    \
  __asm movaps [esp+16], xmm0                                           \
  __asm movaps [esp+32], xmm1                                           \
  __asm movaps [esp+48], xmm2                                           \
  __asm movaps [esp+64], xmm3                                           \
  __asm movaps [esp+80], xmm4                                           \
  __asm movaps [esp+96], xmm5

#define HOOK_EPILOGUE                                                   \
  __asm movaps xmm0, [esp+16]                                           \
  __asm movaps xmm1, [esp+32]                                           \
  __asm movaps xmm2, [esp+48]                                           \
  __asm movaps xmm3, [esp+64]                                           \
  __asm movaps xmm4, [esp+80]                                           \
  __asm movaps xmm5, [esp+96]                                           \
  __asm lea esp, [ebp-20]                                               \
  __asm pop eax                                                         \
  __asm mov dword ptr fs:[34h], eax                                     \
  __asm pop edx                                                         \
  __asm pop ecx                                                         \
  __asm pop eax                                                         \
  __asm popfd                                                           \
  __asm pop ebp                                                         \
  __asm ret

CP_PROBE_CODE __declspec(naked) void __cdecl _penter(void)
{
  HOOK_PROLOGUE
  __asm {
    mov   eax, [ebp]
    mov   [esp+8], eax          ; fp: the function's ebp
    lea   eax, [ebp+8]
    mov   [esp+4], eax          ; sp
    mov   eax, [ebp+4]
    mov   [esp], eax            ; key
    call  win_hook_enter
  }
  HOOK_EPILOGUE
}

CP_PROBE_CODE __declspec(naked) void __cdecl _pexit(void)
{
  HOOK_PROLOGUE
  __asm {
    lea   eax, [ebp+8]
    mov   [esp], eax            ; sp
    call  win_hook_exit
  }
  HOOK_EPILOGUE
}
